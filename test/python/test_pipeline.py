"""The schedule pipeline (SchedulePipeline.h): one front end, decisions, the
rules; what the pass ships is what the environment and the measurer produce,
and what the pass and the API print replays to the same IR."""
import re
from pathlib import Path

import numpy as np
import pytest

import mlir_rl
from mlir_rl.core import Module, pipeline_settings
from mlir_rl.data import kernels as K
from mlir_rl.fuzz import parity
from mlir_rl.passes import run_pass

ROOT = Path(__file__).resolve().parents[2]


def test_parity_and_replay_on_a_sample():
    """The environment's step-by-step decisions plus the rules give the
    pass's IR byte for byte, and the API's trace replays, for the suites'
    first kernels and fuzzed programs, random and policy decisions."""
    progs = parity.programs(24, seed=3)
    results = parity.check(progs, sources=("random", "policy"), seed=5)
    bad = [r for r in results if r.status != "ok"]
    assert not bad, bad[:5]
    assert len(results) == 4 * len(progs)


def test_op_units_are_programs_of_their_own_and_keep_parity():
    """Module.op_unit cuts an op out as tuning measures it (the op, the
    producer fused into it, their fills; other values become arguments):
    each unit parses, and parity and replay hold on the units of a module,
    as `python -m mlir_rl.fuzz.parity` runs them over the imported models'
    ops."""
    m = Module.parse(K.matmul_bias_relu(64, 96, 48), "mbr")
    units = {op.id: m.op_unit(op.id) for op in m.ops()}
    matmul = next(op.id for op in m.ops() if op.name == "linalg.matmul")
    assert "@mlir_rl_unit(" in units[matmul]
    assert "linalg.matmul" in units[matmul] and "linalg.fill" in units[matmul]
    for text in units.values():
        assert Module.parse(text).verify()[0]
    progs = [(f"unit/{i}", t) for i, t in units.items()]
    results = parity.check(progs, sources=("random", "policy"), seed=4)
    bad = [r for r in results if r.status != "ok"]
    assert not bad, bad[:5]
    with pytest.raises(IndexError, match="no op 99"):
        m.op_unit(99)


@pytest.mark.slow
def test_parity_and_replay_over_300_programs():
    progs = parity.programs(300, seed=11)
    results = parity.check(progs, sources=("random", "policy", "heuristic"), seed=2)
    bad = [r for r in results if r.status != "ok"]
    assert not bad, bad[:5]


def test_the_pass_replays_its_printed_trace():
    """The dump-schedule header (a trace: the front end's and the rules'
    passes, then the schedule) handed back as schedule= gives the same IR,
    here with the right-hand side packed (mlir-rl-pack-rhs in the trace)."""
    text = K.matmul_bias_relu(256, 512, 384)
    first = run_pass(text, name="mm")
    assert first.schedule.startswith("["), first.schedule
    assert "mlir-rl-pack-rhs" in first.schedule or "register-tiled" in first.stderr
    again = run_pass(text, name="mm", schedule=first.schedule)
    assert again.ir == first.ir
    assert again.schedule == first.schedule


def test_both_pass_drivers_give_the_same_ir(monkeypatch):
    """Stock mlir-opt-22 with the plugin and the package's mlir-rl-opt (what
    a wheel runs where LLVM 22 is missing) schedule alike; a bad choice of
    driver is an error that names it."""
    from mlir_rl.paths import pass_driver
    text = K.matmul_bias_relu(128, 256, 192)
    runs = {}
    for driver in ("mlir-opt", "mlir-rl-opt"):
        monkeypatch.setenv("MLIR_RL_PASS_DRIVER", driver)
        assert Path(pass_driver()[0]).name.startswith(driver)
        runs[driver] = run_pass(text, name="mm", prepare=True)
    assert runs["mlir-opt"].ir == runs["mlir-rl-opt"].ir
    assert runs["mlir-opt"].schedule == runs["mlir-rl-opt"].schedule
    monkeypatch.setenv("MLIR_RL_PASS_DRIVER", "clang")
    with pytest.raises(RuntimeError, match="MLIR_RL_PASS_DRIVER='clang'"):
        pass_driver()


def test_a_matmul_without_a_packed_form_keeps_the_other_rules():
    """A decision with no packed equivalent (a fusion of the fill) leaves
    that matmul plain; the other matmul of the module is still packed, and
    the trace says which one was skipped."""
    text = """
func.func @two(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>, %c: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e2 = tensor.empty() : tensor<256x256xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %n = linalg.matmul ins(%m, %c : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f2 : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %n : tensor<256x256xf32>
}
"""
    m = Module.parse(text, front_end=True)
    matmuls = [o.id for o in m.ops() if o.kind == "matmul"]
    assert len(matmuls) == 2
    first, second = matmuls
    # The first matmul fuses its fill (no packed form); the second is tiled.
    m.apply_schedule(f"{second}: TP(32,64,0) T(8,32,8) V; {first}: TF(32,64,0) T(8,32,8) V")
    m.run_front_end()
    info = m.apply_rules(decisions="heuristic")
    assert info["packed"] == 1, info
    assert f"skip-ops={first}" in m.schedule, m.schedule
    again = Module.parse(text)
    again.apply_schedule(m.schedule)
    assert again.ir() == m.ir()
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2).outputs,
                                    Module.parse(text).time(runs=1, warmup=0, threads=2).outputs)
    assert ok, err


def test_prepare_marks_the_module_and_the_pass_alone_gives_the_same_ir():
    """mlir-rl-prepare is the pipeline's front end alone: the pass on its
    output (front end not run again) gives the IR of the pass alone."""
    text = K.conv2d_nchw(1, 32, 18, 18, 32, 3, 3)
    prepared = mlir_rl.prepare(text)
    assert "mlir_rl.front_end" in prepared
    assert mlir_rl.prepare(prepared) == prepared
    alone = run_pass(text, name="conv")
    after = run_pass(prepared, name="conv")
    assert alone.ir == after.ir
    assert "mlir_rl.front_end" not in alone.ir
    # The front end did not run again: only the rules' packing precedes it.
    assert "mlir-rl-conv-to-matmul" in alone.schedule
    assert "mlir-rl-conv-to-matmul" not in after.schedule


def test_settings_have_one_source_of_defaults():
    """Python's settings are C++'s defaults; a stage that does not exist is
    refused."""
    s = pipeline_settings()
    assert all(getattr(s, n) for n in mlir_rl.core.PIPELINE_STAGES if n != "min_rows_to_copy")
    none = pipeline_settings("none")
    assert not any(getattr(none, n) for n in mlir_rl.core.PIPELINE_STAGES
                   if n != "min_rows_to_copy")
    assert pipeline_settings(pack_rhs=False).pack_rhs is False
    with pytest.raises(TypeError):
        pipeline_settings(pack_rhz=False)


def test_a_trace_names_only_the_pipelines_passes():
    m = Module.parse(K.matmul(64, 64, 64))
    with pytest.raises(mlir_rl.ScheduleError, match="not a pass of the front end"):
        m.apply_schedule("[inline] 1: V")


# Where a Scheduler may be made: the pipeline, and its rules stage (which
# schedules the module again). Anything else schedules outside the pipeline.
_SCHEDULER_OWNERS = {"cpp/lib/Pipeline/SchedulePipeline.cpp", "cpp/lib/Transforms/Rescheduling.cpp"}


def test_no_tool_schedules_outside_the_pipeline():
    made = re.compile(r"make_unique<Scheduler>|\bScheduler\s+\w+\s*\(|\bnew Scheduler\b")
    offenders = []
    for path in (ROOT / "cpp").rglob("*.cpp"):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in _SCHEDULER_OWNERS and made.search(path.read_text()):
            offenders.append(rel)
    assert not offenders, f"Schedulers made outside SchedulePipeline: {offenders}"
    # Python reaches C++ scheduling through Module only.
    direct = [p.relative_to(ROOT).as_posix() for p in (ROOT / "python").rglob("*.py")
              if "_core.Program" in p.read_text() and p.name != "core.py"]
    assert not direct, direct


def test_every_action_records_where_it_came_from():
    """Provenance: the decisions' source, the rules', the environment's; the
    pass's dump-schedule shows the same in its comments."""
    text = K.matmul_bias_relu(256, 512, 384)
    m = Module.parse(text)
    m.schedule_with_policy(decisions="heuristic")
    sources = {s for _, _, s in m.provenance}
    assert "heuristic" in sources or "heuristic, translated by the rules" in sources, sources
    assert any(s.startswith("rule") for s in sources), sources
    assert len(m.provenance) == sum(len(a) for _, a in mlir_rl.parse_schedule(m.schedule))
    script = run_pass(text, name="mm", extra=["decisions=heuristic"]).script
    assert "(heuristic" in script and "(rule" in script, script[:2000]
    e = Module.parse(text, front_end=True)
    op = e.next_op()
    e.step(op, e.encode(e.decode(op, (np.zeros(e.masks(op).kind.shape),
                                      np.zeros(e.masks(op).tile.size),
                                      np.zeros(e.masks(op).pointer.shape)))))
    assert {s for _, _, s in e.provenance} == {"environment"}
