"""Regression tests of what random testing found (issue 10), one per finding,
and of the differential fuzzer itself (programs, shrinking, the report)."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlir_rl
from mlir_rl import ActionKind as A
from mlir_rl.fuzz.programs import DTYPES, FuzzProgram, GenConfig, program_for

DATA = Path(__file__).parent / "data"

RELU_ADD = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %z = arith.constant 0.0 : f32
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  %c = linalg.add ins(%p, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p, %c : tensor<8x8xf32>, tensor<8x8xf32>
}
"""

BIAS_BROADCAST = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<4x16x32xf32>) {
  %e = tensor.empty() : tensor<16x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<4x16x32xf32>
  %z = linalg.broadcast ins(%y : tensor<16x32xf32>) outs(%e2 : tensor<4x16x32xf32>) dimensions = [0]
  return %y, %z : tensor<16x32xf32>, tensor<4x16x32xf32>
}
"""


def _reference(text: str):
    return mlir_rl.Module.parse(text).time(runs=1, warmup=0).outputs


def _matches(m: mlir_rl.Module, reference) -> bool:
    return mlir_rl.outputs_match(m.time(runs=1, warmup=0).outputs, reference)[0]


# -- Findings ----------------------------------------------------------------------

def test_tiled_fusion_that_splits_no_loop_is_illegal():
    """TF(8,8) on 8x8 (one iteration, the fused producer also returned) was
    miscompiled by upstream canonicalization (llvm-project#222143)."""
    m = mlir_rl.Module.parse(RELU_ADD)
    for sizes in ("TF(8,8)", "TF(8,0)", "TF(0,0)", "TP(8,8)"):
        with pytest.raises(mlir_rl.IllegalActionError, match="splits no loop"):
            m.apply(1, sizes)
    masks = m.masks(1)
    tf = 2  # row of TF in the tile mask
    assert masks.unsplit[tf, 0, mlir_rl.layout().tile_candidates.index(8)]
    assert not masks.unsplit[tf, 0, mlir_rl.layout().tile_candidates.index(4)]
    ref = _reference(RELU_ADD)
    for schedule in ("1: TF(4,8)", "1: TF(8,4) V", "1: TF(1,8)"):
        m = mlir_rl.Module.parse(RELU_ADD)
        m.apply_schedule(schedule)
        assert _matches(m, ref), schedule


@pytest.mark.slow
def test_sampled_shipped_policy_keeps_outputs_on_returned_producers():
    """The shipped policy, sampled, reached the same bug on a bias-add whose
    result is returned and broadcast (seeds 156698 and 700222 among them)."""
    for text in (BIAS_BROADCAST, RELU_ADD):
        ref = _reference(text)
        for seed in [156698, 700222] + list(range(40)):
            m = mlir_rl.Module.parse(text)
            m.schedule_with_policy(sample=True, seed=seed)
            assert m.verify()[0]
            assert _matches(m, ref), (seed, m.schedule)


REDUCE_BROADCAST = """
func.func @main(%x: tensor<1x29x16xi32>) -> (tensor<1x16xi32>, tensor<8x1x16xi32>) {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x16xi32>
  %acc = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x16xi32>) -> tensor<1x16xi32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d2)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<1x29x16xi32>) outs(%acc : tensor<1x16xi32>) {
  ^bb0(%v: i32, %o: i32):
    %q = arith.muli %v, %v : i32
    %a = arith.addi %q, %o : i32
    linalg.yield %a : i32
  } -> tensor<1x16xi32>
  %e2 = tensor.empty() : tensor<8x1x16xi32>
  %b = linalg.broadcast ins(%s : tensor<1x16xi32>) outs(%e2 : tensor<8x1x16xi32>) dimensions = [0]
  return %s, %b : tensor<1x16xi32>, tensor<8x1x16xi32>
}
"""


@pytest.mark.parametrize("schedule", ["2: TF(4,0,0)", "2: TF(1,0,0)", "2: TF(2,1,8)",
                                      "2: TF(0,0,8)"])
def test_a_fused_producer_returned_too_is_not_accumulated_per_iteration(schedule):
    """Found by the long fuzz run (program 2026/868): a reduction fused into
    a broadcast tiled along the broadcast dimension, its result also
    returned. Every iteration computed the same tile and wrote it to one
    shared output, each starting from what the others wrote: the sum came
    out once per iteration. Such tiles now stay unshared (the producer is
    kept for the later use); disjoint tiles (TF(0,0,8)) still share."""
    ref = _reference(REDUCE_BROADCAST)
    m = mlir_rl.Module.parse(REDUCE_BROADCAST)
    assert m.apply_schedule(schedule) == mlir_rl.ApplyStatus.APPLIED
    assert _matches(m, ref), m.ir()


ZERO = """
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x16xf32>) -> tensor<{m}x16xf32> {{
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<{m}x16xf32>) -> tensor<{m}x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x16xf32>) outs(%f : tensor<{m}x16xf32>) -> tensor<{m}x16xf32>
  return %r : tensor<{m}x16xf32>
}}
"""


@pytest.mark.parametrize("m_size,k_size", [(0, 8), (8, 0)])
def test_zero_extent_loops_are_not_scheduled(m_size, k_size, mlir_opt, plugin):
    """M = 0 crashed in upstream tiling (SIGSEGV), K = 0 divided by zero in
    the vectorization precondition (SIGFPE), also for features and masks."""
    text = ZERO.format(m=m_size, k=k_size)
    m = mlir_rl.Module.parse(text)
    info = m.op(1)
    assert not info.supported and "extent 0" in info.reason
    assert m.traversal_order() == ([0] if m_size else [])
    assert m.masks(1).allowed(A.NO_TRANSFORMATION) and not m.masks(1).allowed(A.TILING)
    with pytest.raises(mlir_rl.IllegalActionError, match="not supported"):
        m.apply(1, "TP(1,1,0)")
    for options in ("dump-features policy=false", "", 'schedule="1: T(1,1,0)"'):
        r = subprocess.run([mlir_opt, f"--load-pass-plugin={plugin}", "-p",
                            f"builtin.module(linalg-rl-schedule{{{options}}})", "-"],
                           input=text, capture_output=True, text=True)
        assert r.returncode >= 0, r.stderr
        assert "extent 0" in r.stderr
    m = mlir_rl.Module.parse(text)
    m.schedule_with_policy()
    assert _matches(m, _reference(text))


def test_a_tile_that_does_not_divide_is_named_not_printed_as_a_number():
    """After a TP that did not divide a loop, a later T said 'exceeds the
    extent -9223372036854775808'. Such a TP is now illegal (legality v3), and
    says why."""
    from mlir_rl.data import kernels as K
    m = mlir_rl.Module.parse(K.matmul(48, 40, 24))
    with pytest.raises(mlir_rl.IllegalActionError) as e:
        m.apply(1, "TP(32,0,0)")
    assert "does not divide the extent 48" in str(e.value)
    assert "-9223372036854775808" not in str(e.value)
    m.apply(1, "TP(16,8,0)")
    m.apply(1, "T(8,0,0)")


def test_a_schedule_without_entries_is_an_error(mlir_opt, plugin):
    with pytest.raises(mlir_rl.ScheduleError, match="no entries"):
        mlir_rl.parse_schedule(";;;")
    m = mlir_rl.Module.parse(RELU_ADD)
    with pytest.raises(mlir_rl.ScheduleError, match="no entries"):
        m.apply_schedule(" ; ;")
    assert mlir_rl.parse_schedule("") == []  # nothing at all is no schedule


def test_bench_runs_the_top_level_function(mlir_rl_cli, tmp_path):
    """On a nested module bench picked the inner function and could not find
    its symbol; now only the module's own functions are entry points."""
    body = RELU_ADD.split("\n", 2)[2]  # without the #map alias
    body = body.replace("#map", "affine_map<(d0, d1) -> (d0, d1)>")
    inner = body.replace("func.func @main", "func.func @inner_main")
    f = tmp_path / "nested.mlir"
    f.write_text("module {\n module @inner {\n" + inner + "\n }\n" + body + "}\n")
    r = subprocess.run([mlir_rl_cli, "bench", str(f), "--schedule", "3: TF(4,8)", "--runs", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "outputs:    equal" in r.stdout, r.stderr
    only_inner = tmp_path / "only-inner.mlir"
    only_inner.write_text("module {\n module @inner {\n" + inner + "\n }\n}\n")
    r = subprocess.run([mlir_rl_cli, "bench", str(only_inner), "--runs", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no public function with a body at its top level" in r.stderr


def test_a_result_returned_twice_is_freed_once():
    """The JIT freed each output's buffer: a value returned twice was freed
    twice (found by the fuzzer: 'double free detected')."""
    text = """
    func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
      %cst = arith.constant dense<1.0> : tensor<4x4xf32>
      %e = tensor.empty() : tensor<4x4xf32>
      %c = linalg.add ins(%a, %cst : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
      return %c, %c, %cst : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    }"""
    t = mlir_rl.Module.parse(text).time(runs=3, warmup=1)
    a = t.inputs[0]
    np.testing.assert_allclose(t.outputs[0], a + 1)
    np.testing.assert_allclose(t.outputs[1], a + 1)
    np.testing.assert_allclose(t.outputs[2], np.ones((4, 4)))


VEC_MATH = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<4x8xi32>, %x: tensor<4x8xf32>) -> (tensor<4x8xi32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xi32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xi32>) outs(%e : tensor<4x8xi32>) {
  ^bb0(%v: i32, %o: i32):
    %y = math.absi %v : i32
    linalg.yield %y : i32
  } -> tensor<4x8xi32>
  %f = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.erf %v : f32
    %z = math.cbrt %y : f32
    linalg.yield %z : f32
  } -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xi32>, tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("schedule", ["", "0: V; 1: V", "0: TP(2,0) V; 1: T(0,4) V"])
def test_math_without_an_llvm_lowering_runs_vectorized_or_not(schedule):
    """Vectorized integer abs (a 2-D vector) failed the LLVM conversion
    ('unrealized_conversion_cast'), found by the fuzzer; erf and cbrt have
    no LLVM intrinsic at all. mlir-rl-lower-math unrolls and calls libm."""
    import math
    m = mlir_rl.Module.parse(VEC_MATH)
    if schedule:
        m.apply_schedule(schedule)
    t = m.time(runs=1, warmup=0)
    a, x = t.inputs
    np.testing.assert_array_equal(t.outputs[0], np.abs(a))
    want = np.vectorize(lambda v: math.copysign(abs(math.erf(v)) ** (1 / 3), math.erf(v)))(x)
    np.testing.assert_allclose(t.outputs[1], want, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_the_pool_depthwise_chain_survives_sampled_policies(plugin, mlir_opt):
    """A SIGSEGV in getLoopBounds <- computeOpFeatures midway through a
    sampled schedule (seed 43578) of this chain, with the old Scheduler's
    whole-function clone and restore. Each run is a process of its own."""
    text = (DATA / "pool-depthwise-chain.mlir").read_text()
    ref = _reference(text)
    script = ("import sys, mlir_rl\n"
              "m = mlir_rl.Module.parse(sys.stdin.read())\n"
              "for seed in map(int, sys.argv[1:]):\n"
              "    m = m.fresh(); m.schedule_with_policy(sample=True, seed=seed)\n"
              "    assert m.verify()[0]\n"
              "print(m.schedule)\n")
    seeds = [43578] + list(range(1, 60))
    r = subprocess.run([sys.executable, "-c", script] + [str(s) for s in seeds], input=text,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    for seed in seeds[:6]:
        m = mlir_rl.Module.parse(text)
        m.schedule_with_policy(sample=True, seed=seed)
        assert _matches(m, ref), seed


# -- The fuzzer ----------------------------------------------------------------------

@pytest.mark.slow
def test_generated_programs_are_valid_and_cover_the_space():
    kinds, dtypes, zero, multi, twice, split, wide = set(), set(), 0, 0, 0, 0, 0
    for i in range(250):
        p = program_for(11, i, GenConfig(bf16=True))
        m = mlir_rl.Module.parse(p.text())
        # A matmul of rows the front end splits (64 or more, not a multiple of 32).
        split += bool(re.search(r"linalg\.matmul .*-> tensor<(67|100|197)x", p.text()))
        # Rows wider than one vector tile, not whole registers (split too).
        wide += bool(re.search(r"x(515|777|1021)xf", p.text()))
        assert len(m.ops()) == p.num_linalg_ops, p.describe()
        kinds |= {n.kind for n in p.nodes}
        dtypes.add(p.dtype)
        zero += p.zero_size
        multi += len(p.returns) > 1
        used = [r for n in p.nodes for r in n.inputs] + list(p.returns)
        twice += any(used.count(r) > 1 for r in used if r[0] == "node")
    assert kinds >= {"matmul", "batch_matmul", "matvec", "conv", "depthwise", "pool", "binary",
                     "map", "unary", "bias", "two_results", "broadcast", "transpose", "copy",
                     "reduce", "reduce_generic", "softmax", "collapse", "expand", "slice", "pad"}
    assert dtypes == set(DTYPES) | {"bf16"}
    assert zero > 0 and multi > 50 and twice > 50 and split > 0 and wide > 0


def test_programs_are_reproducible_and_round_trip_as_json():
    p = program_for(3, 17)
    assert p.text() == program_for(3, 17).text()
    assert FuzzProgram.from_json(json.loads(json.dumps(p.to_json()))).text() == p.text()


@pytest.mark.slow
def test_removing_a_node_renumbers_the_op_ids():
    for i in range(60):
        p = program_for(5, i)
        for j in range(len(p.nodes)):
            cut = p.without_node(j)
            if cut is None:
                continue
            q, ids = cut
            m = mlir_rl.Module.parse(q.text())  # still valid
            assert len(m.ops()) == p.num_linalg_ops - p.nodes[j].linalg_ops
            names_before = [o.name for o in mlir_rl.Module.parse(p.text()).ops()]
            names_after = [o.name for o in m.ops()]
            for old, new in ids.items():
                assert names_before[old] == names_after[new]


@pytest.mark.slow
def test_random_schedules_are_mask_legal_and_correct():
    """The fuzzer's worker: random mask-legal schedules never hit an
    illegal action, and their outputs match."""
    from mlir_rl.fuzz.worker import Spec, Worker, WorkerConfig
    w = Worker(120)
    try:
        statuses = []
        for i in range(4):
            p = program_for(21, i)
            out = w.run(p.text(), [Spec("random", s) for s in range(4)] + [Spec("greedy")],
                        WorkerConfig(threads=1))
            assert out.program["status"] in ("ok", "unlowerable"), out.program
            statuses += [r["status"] for r in out.results.values()]
        assert set(statuses) <= {"ok", "duplicate"}, statuses
        assert statuses.count("ok") >= 10
    finally:
        w.close()


def test_the_worker_charges_a_crash_and_goes_on():
    """A worker process that dies is charged to the schedule under way (the
    first without a result), and the job goes on in a new process with the
    schedules after it."""
    import time
    from multiprocessing.connection import wait

    from mlir_rl.fuzz.worker import Spec, Worker, WorkerConfig
    w = Worker(60)
    try:
        specs = [Spec("random", s) for s in range(4)]
        w.submit(RELU_ADD, specs, WorkerConfig(threads=1))
        deadline = time.monotonic() + 120
        while not w.outcome.program and time.monotonic() < deadline:
            wait([w.conn], timeout=0.5)
            w.pump()
        assert w.outcome.program["status"] == "ok"
        w.proc.kill()  # while it schedules, verifies or runs
        while not w.pump() and time.monotonic() < deadline:
            wait([w.conn], timeout=0.5)
        statuses = [w.outcome.results[i]["status"] for i in range(len(specs))]
        crashed = statuses.index("crash")
        assert statuses.count("crash") == 1 and w.restarts == 1
        assert all(st in ("ok", "duplicate") for st in statuses[crashed + 1:]), statuses
    finally:
        w.close()


def test_the_shrinker_reduces_a_failure(tmp_path):
    """An illegal explicit step on one op of a many-node program shrinks to
    that op's node (and what it needs) and that step alone."""
    from mlir_rl.fuzz.runner import Failure, FuzzConfig, shrink_failures
    from mlir_rl.fuzz.worker import Spec, WorkerConfig
    for i in range(200):
        p = program_for(8, i)
        if len(p.nodes) >= 4 and p.dtype == "f32":
            break
    m = mlir_rl.Module.parse(p.text())
    order = m.traversal_order()
    target = order[-1]
    sizes = ",".join(["64"] * len(m.op(target).loop_bounds))
    schedule = "; ".join([f"{i}: NT" for i in order[:-1]] + [f"{target}: T({sizes}) NT"])
    # T(64,...) exceeds some extent or not: make it surely illegal.
    schedule = schedule.replace(f"{target}: T({sizes}) NT", f"{target}: V V")
    f = Failure("illegal", "", p, Spec("explicit", schedule=schedule), schedule)
    cfg = FuzzConfig(shrink_seconds=120)
    shrink_failures([f], cfg, WorkerConfig(threads=1), tmp_path, lambda s: None)
    assert f.shrunk and f.shrunk["reproduces"], f.shrunk
    before, after = f.shrunk["nodes"]
    assert after < before
    assert len(mlir_rl.parse_schedule(f.shrunk["schedule"])) == 1
    text = Path(f.reproducer).read_text()
    assert "mlir-rl bench" in text and "linalg-rl-schedule" in text
    assert mlir_rl.Module.parse(text)  # the reproducer is a valid program


def test_a_trace_shrinks_with_its_prelude(tmp_path):
    """A failing trace (the front end's passes in brackets, op ids of the
    rewritten module) shrinks by its entries and actions and keeps its
    prelude, so the reproducer's schedule replays on the program as given."""
    from mlir_rl.fuzz.runner import Failure, FuzzConfig, shrink_failures
    from mlir_rl.fuzz.worker import Spec, WorkerConfig
    for i in range(200):
        p = program_for(8, i)
        m = mlir_rl.Module.parse(p.text())
        m.run_front_end()
        if len(p.nodes) >= 3 and p.dtype == "f32" and m.schedule.startswith("["):
            break
    prelude = mlir_rl.core.schedule_prelude(m.schedule)
    order = m.traversal_order()
    entries = [f"{i}: NT" for i in order[:-1]] + [f"{order[-1]}: V V"]
    trace = f"[{prelude}] " + "; ".join(entries)
    f = Failure("illegal", "", p, Spec("explicit", schedule=trace), trace)
    shrink_failures([f], FuzzConfig(shrink_seconds=120), WorkerConfig(threads=1), tmp_path,
                    lambda s: None)
    assert f.shrunk and f.shrunk["reproduces"], f.shrunk
    shrunk = f.shrunk["schedule"]
    assert mlir_rl.core.schedule_prelude(shrunk) == prelude
    assert len(mlir_rl.parse_schedule(shrunk)) == 1
    assert f"schedule: {shrunk}" in Path(f.reproducer).read_text()


def test_a_prepared_failure_shrinks_by_nodes(tmp_path):
    """Failures of the prepared schedule (the greedy policy after
    mlir-rl-prepare, whose op ids are not the program's) shrink by removing
    nodes and rerunning that schedule. Here the 'failure' is status ok,
    which every smaller program keeps: it shrinks to one node."""
    from mlir_rl.fuzz.runner import Failure, FuzzConfig, shrink_failures
    from mlir_rl.fuzz.worker import Spec, WorkerConfig
    p = next(q for q in (program_for(9, i) for i in range(200))
             if len(q.nodes) >= 3 and q.dtype == "f32" and not q.zero_size)
    f = Failure("ok", "", p, Spec("prepared"), "")
    shrink_failures([f], FuzzConfig(shrink_seconds=120), WorkerConfig(threads=1), tmp_path,
                    lambda s: None)
    assert f.shrunk and f.shrunk["reproduces"], f.shrunk
    assert f.shrunk["nodes"] == [len(p.nodes), 1]
    text = Path(f.reproducer).read_text()
    assert "--prepare" in text and "mlir-rl-prepare,linalg-rl-schedule" in text
    assert mlir_rl.Module.parse(text)


@pytest.mark.slow
def test_fuzz_command_writes_a_report(mlir_rl_cli, tmp_path):
    r = subprocess.run([mlir_rl_cli, "fuzz", "--programs", "3", "--seed", "2", "--jobs", "1",
                        "--random-schedules", "2", "--sampled-schedules", "1",
                        "--out", str(tmp_path), "--quiet"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["programs"] == 3 and report["failures"] == 0
    assert report["pairs"] >= 3
    assert set(report["by_source"]) <= {"random", "sampled", "greedy", "heuristic", "uniform",
                                        "prepared"}
    for source in ("prepared", "heuristic", "uniform"):  # the pass's decision sources too
        assert report["by_source"].get(source, 0) >= 1, source
    assert report["command"].startswith("mlir-rl fuzz --programs 3")
    assert report["layout_hash"] == mlir_rl.layout().hash


@pytest.mark.parametrize("name, trace", [
    # The front end's cse tied the transpose's init to its producer's:
    # upstream's fusion wrote the producer's tiles into the forall's output
    # (wrong output).
    # (Its max over rows, a linalg.reduce, is a generic since the front end
    # generalizes reduces: the reshape after it folds in, three loops.)
    ("tied-empty-transpose",
     "[mlir-rl-fuse-elementwise,canonicalize,cse] 3: TF(1,2) T(1,2) V; 2: TP(2,1) I(0,1) V; "
     "1: TF(1,0,0) V; 0: V"),
    # A producer used outside the forall before it: its copy for that use was
    # put before the forall, after the use (IR that does not verify).
    ("producer-used-before-forall",
     "[mlir-rl-fuse-elementwise,canonicalize,cse] 3: TF(2) NT; 2: NT; 1: V; 0: V"),
    ("two-results-collapse",
     "[mlir-rl-fuse-elementwise,canonicalize,cse] 1: TF(0,4) I(1,0) T(4,1) V; 0: V"),
])
def test_fusion_into_a_forall_with_tied_inits_and_early_uses(name, trace):
    """Found by a 30-minute fuzz run (2026-11-28, seed 4242): tiled fusion
    after the front end's cse gave wrong output or IR that does not verify."""
    text = (DATA / "fuzz" / f"{name}.mlir").read_text()
    m = mlir_rl.Module.parse(text)
    m.apply_schedule(trace)
    ok, messages = m.verify()
    assert ok, messages
    reference = mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=2).outputs
    got = mlir_rl.Module.parse(m.ir()).time(runs=1, warmup=0, threads=2).outputs
    ok, err = mlir_rl.outputs_match(got, reference)
    assert ok, err
