"""Matmuls have their B packed into panels (a constant at compile time, a
linear layer's weight; another by a copy when the matmul has at least 128
rows) and are scheduled by the policy's decision on their plain form
(Packing.h): in the pass and in-process alike, with outputs equal to the
unscheduled program."""
import re
import subprocess

import numpy as np
import pytest

import mlir_rl
from mlir_rl.bench.timing import time_compiled
from mlir_rl.core import Module, prepare
from mlir_rl.data import kernels
from mlir_rl.passes import run_pass
from mlir_rl.paths import opt_path

# Panels of 16 f32 (two 256-bit registers), whatever the host.
AVX2 = {"MLIR_RL_VECTOR_REGISTERS": "16x256"}


def _linear(m: int, k: int, n: int, seed: int = 0) -> str:
    """nn.Linear with its weight in the program, through mlir-rl-prepare (which
    folds the weight's transpose into a [K, N] constant), as models arrive."""
    return prepare(kernels.linear_torch(m, n, k, seed=seed), "linear")


def _pass_with_this_process_registers(monkeypatch) -> None:
    """The pass (a subprocess) reads MLIR_RL_VECTOR_REGISTERS now; this process
    read its register file once, when it first needed it (an earlier test may
    have set AVX2's): in-process and pass schedules compare on the same one."""
    legality = mlir_rl.legality()
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS",
                       f"{legality['vector_registers']}x{legality['vector_register_bits']}")


def _outputs_equal(text_a: str, text_b: str) -> tuple[bool, str]:
    a, b = Module.parse(text_a, "a").compile(2), Module.parse(text_b, "b").compile(2)
    ta, tb = time_compiled([a, b], rounds=1, runs=1)
    return mlir_rl.outputs_match(tb.outputs, ta.outputs)


@pytest.mark.parametrize("mkn", [(64, 128, 256), (128, 96, 64), (17, 64, 32)])
def test_pass_packs_a_linear_layer_and_computes_the_same(mkn, monkeypatch):
    m, k, n = mkn
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = _linear(m, k, n, seed=1)
    result = run_pass(text, name="linear")
    assert "the right-hand sides of 1 matmuls packed into panels" in result.stderr
    assert f"tensor<{n // 16}x{k}x16xf32>" in result.ir
    assert "linalg.matmul" not in result.ir
    # op 1 (the matmul) got a schedule of the packed op's four loops.
    op1 = re.search(r"\b1: ([^;]*)", result.schedule).group(1)
    assert all(len(s.split(",")) == 4 for s in re.findall(r"\(([^)]*)\)", op1)), op1
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


@pytest.mark.parametrize("mkn", [(512, 512, 512), (196, 256, 1024)])
def test_packed_register_tile_runs_the_rows_inside_the_panel_loop(mkn, monkeypatch):
    """Where a sequential tile of the packed op holds several panels, its
    register tile takes one panel (a T of the panel loop alone) and then its
    rows: each panel of B serves every row block of the tile while it is in
    cache, instead of all panels being fetched again for each row block."""
    m, k, n = mkn
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = _linear(m, k, n, seed=2)
    result = run_pass(text, name="linear")
    op1 = re.search(r"\b1: ([^;]*)", result.schedule).group(1)
    steps = re.findall(r"(TP|T|V)(?:\(([^)]*)\))?", op1)
    tilings = [(kind, [int(x) for x in sizes.split(",")]) for kind, sizes in steps if sizes]
    assert steps[-1][0] == "V", op1
    # No sequential tiling takes rows of one panel out of several panels.
    for kind, sizes in tilings:
        assert not (kind == "T" and sizes[0] != 0 and sizes[1] == 1), op1
    # The register tile (the last T) tiles rows, not panels, after a T(0,1,0,0).
    assert tilings[-1][0] == "T" and tilings[-1][1][1] == 0, op1
    assert tilings[-2] == ("T", [0, 1, 0, 0]), op1
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


def test_pass_option_off_keeps_the_matmul_plain(monkeypatch):
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = _linear(64, 128, 256)
    plain = run_pass(text, name="linear", extra=["pack-rhs=false"])
    assert "packed into panels" not in plain.stderr
    assert "tensor<16x128x16xf32>" not in plain.ir and "tensor<128x256xf32>" in plain.ir
    # An argument B of a matmul with fewer than 128 rows is not packed.
    assert "packed into panels" not in run_pass(kernels.matmul(64, 256, 128)).stderr


def test_pass_packs_an_argument_by_a_copy(monkeypatch):
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = kernels.matmul(128, 256, 64)
    result = run_pass(text, name="matmul")
    assert "the right-hand sides of 1 matmuls packed into panels" in result.stderr
    # The copy is an op of its own (op 1, before the matmul, now op 2),
    # scheduled by rule: of [256/16 panels, 128 rows of k, 16 columns], the
    # panels in 8 iterations of 2, vectors of 8 rows of 16; so is the fill
    # of the accumulator (op 0).
    assert "2 copies and fills scheduled by rule" in result.stderr, result.stderr
    assert re.search(r"\b1: TP\(2,0,0\) T\(1,8,0\) V\b", result.schedule), result.schedule
    by_policy = run_pass(text, name="matmul", extra=["copies-by-rule=false"])
    assert "by rule" not in by_policy.stderr
    assert re.search(r"\b1: ", by_policy.schedule), by_policy.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err
    only = run_pass(text, name="matmul", extra=["pack-constants-only=true"])
    assert "packed into panels" not in only.stderr
    assert "packed into panels" not in run_pass(text, extra=["min-rows-to-copy=0"]).stderr


def test_the_rows_a_copy_needs_is_a_pass_option(monkeypatch, tmp_path):
    """min-rows-to-copy=64 packs a 64-row matmul's argument B by a copy (the
    default, 128, does not); the dumped replay script carries the threshold
    and replays to the same program."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = kernels.matmul(64, 256, 64)
    assert "packed into panels" not in run_pass(text).stderr
    result = run_pass(text, name="matmul", extra=["min-rows-to-copy=64"])
    assert "the right-hand sides of 1 matmuls packed into panels" in result.stderr
    assert '"min-rows-to-copy" = 64' in result.script
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err
    dump = tmp_path / "schedule.mlir"
    dump.write_text(result.script)
    replayed = subprocess.run(
        [str(opt_path()), "-p", "builtin.module(transform-preload-library{transform-library-paths="
         f"{dump}}},transform-interpreter)"], input=text, capture_output=True, text=True)
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert "tensor<16x64x16xf32>" in replayed.stdout
    ok, err = _outputs_equal(text, replayed.stdout)
    assert ok, err


def test_in_process_scheduling_packs_as_the_pass_does(monkeypatch):
    """With the host's register file (read once per process)."""
    _pass_with_this_process_registers(monkeypatch)
    text = _linear(64, 128, 256, seed=2)
    panels = re.compile(r"tensor<\d+x128x\d+xf32>")
    m = Module.parse(text, "linear")
    info = m.schedule_with_policy()
    assert info["packed"] == 1, info["not_rescheduled"]
    assert m.schedule == run_pass(text, name="linear").schedule
    assert panels.search(m.ir())
    ok, err = _outputs_equal(text, m.ir())
    assert ok, err
    plain = Module.parse(text, "linear")
    info = plain.schedule_with_policy(pack_rhs=False)
    assert info["packed"] == 0
    assert not panels.search(plain.ir())


def _vectorized_extents(schedule: str, op: int, extents) -> list[int]:
    """The extents op's V vectorizes: each tiling's nonzero sizes, in turn
    (a 0: the tile before it whole)."""
    extents = list(extents)
    actions = re.search(rf"\b{op}: ([^;]*)", schedule).group(1)
    for sizes in re.findall(r"T[PF]?\(([^)]*)\)", actions):
        extents = [int(t) or e for t, e in zip(sizes.split(","), extents)]
    return extents


@pytest.mark.parametrize("mnk,parts", [
    ((64, 256, 128), {1: (64, 256, 128)}),
    ((32, 72, 48), {1: (32, 64, 48), 3: (32, 8, 48)}),
])
def test_pass_register_tiles_a_matmul_that_stays_plain(mnk, parts, monkeypatch):
    """An argument B of a matmul with fewer than 128 rows is not packed; the
    matmul gets a register tile under its decided tiling instead: rows of one
    or two vectors within the accumulator budget, the reduction split inside
    it (72 columns are split into 64 + 8 first: two matmuls, op ids 1 and 3
    after their fills)."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = kernels.matmul(*mnk)
    decided = run_pass(text, name="matmul", extra=["register-tiles=false"])
    assert "register-tiled" not in decided.stderr
    result = run_pass(text, name="matmul")
    assert f"{len(parts)} plain matmuls register-tiled" in result.stderr, result.stderr
    assert "packed into panels" not in result.stderr
    for op, extents in parts.items():
        r, c, kr = _vectorized_extents(result.schedule, op, extents)
        assert c in (8, 16) and 1 <= r <= 8 and 1 <= kr <= 8, (op, result.schedule)
    assert result.schedule != decided.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


def _accumulate_into_argument(text: str) -> str:
    """The kernel with its accumulator an argument instead of a fill."""
    text = re.sub(r"  %cst_C = .*\n  %e_C = .*\n  %C = linalg.fill.*\n", "", text)
    c = re.search(r"outs\(%C : (tensor<[^>]*>)\)", text).group(1)
    return text.replace("%B: ", f"%C: {c}, %B: ", 1)


@pytest.mark.parametrize("registers,lanes,budget", [("16x256", 8, 12), ("32x512", 16, 28)])
@pytest.mark.parametrize("fill", [True, False])
@pytest.mark.parametrize("shape", [(12, 256, 256, 64), (4, 64, 48, 32)])
def test_pass_register_tiles_a_batch_matmul(registers, lanes, budget, fill, shape,
                                            monkeypatch):
    """A batch matmul that stays plain gets the register tile of a matmul, one
    batch at a time: T(1 or 0, r, c, kr) right before V, c a multiple of the
    host's lanes, r rows of c / lanes accumulators within the budget (the
    register file less 4). The policy's own T(1,8,8,32) left half of each
    512-bit vector empty (2026-11-27: 1.18 ms against 0.57 with the tile)."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", registers)
    text = kernels.batch_matmul(*shape)
    if not fill:
        text = _accumulate_into_argument(text)
    assert ("linalg.fill" in text) == fill
    result = run_pass(text, name="bmm")
    assert "1 plain matmuls register-tiled" in result.stderr, result.stderr
    b, rows, cols, kr = _vectorized_extents(result.schedule, 1 if fill else 0, shape)
    assert b == 1 and cols % lanes == 0, result.schedule
    assert rows * (cols // lanes) <= budget, result.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


def test_nchw_convolution_matmul_is_register_tiled(monkeypatch):
    """An NCHW convolution with 64 filters and 4 channels (too few for pixel
    rows): im2col gives a matmul of 64 rows whose B (the windows) is not
    worth a packing copy."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = kernels.conv2d_nchw(1, 4, 18, 18, 64, 3, 3)
    result = run_pass(text, name="conv")
    assert "1 plain matmuls register-tiled" in result.stderr, result.stderr
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


@pytest.mark.slow
def test_nchw_convolution_as_pixel_rows_packs_its_filter(monkeypatch):
    """With 64 channels the front end computes it as pixel rows: a matmul of
    256 rows whose B is the filter [576, 64], packed into panels."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = kernels.conv2d_nchw(1, 64, 18, 18, 64, 3, 3)
    result = run_pass(text, name="conv")
    assert "the right-hand sides of 1 matmuls packed into panels" in result.stderr, result.stderr
    assert "4x576x16xf32" in result.ir
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


def test_in_process_scheduling_register_tiles_as_the_pass_does(monkeypatch):
    _pass_with_this_process_registers(monkeypatch)
    text = kernels.matmul(64, 256, 128)
    m = Module.parse(text, "matmul")
    info = m.schedule_with_policy()
    assert info["register_tiled"] == 1 and info["packed"] == 0, info["not_rescheduled"]
    assert m.schedule == run_pass(text, name="matmul").schedule
    plain = Module.parse(text, "matmul")
    info = plain.schedule_with_policy(register_tiles=False)
    assert info["register_tiled"] == 0
    assert plain.schedule == run_pass(text, name="matmul", extra=["register-tiles=false"]).schedule


def _copy_schedule(schedule: str, op: int) -> str:
    return re.search(rf"\b{op}: ([^;]*)", schedule).group(1).strip()


def _tap_copies(text: str) -> list[int]:
    """The im2col copies of a prepared convolution (one per filter tap)."""
    return [o.id for o in Module.parse(text, "conv").ops()
            if o.kind == "generic" and len(o.loop_bounds) == 5]


@pytest.mark.slow
@pytest.mark.parametrize("conv", [
    # NHWC 3x3 stride 1: nine im2col copies of 56x56x1x1x64.
    ((1, 58, 58, 64, 3, 3, 64), 1, "TP(4,0,0,0,0) T(1,2,0,0,0) V"),
    # NHWC 3x3 stride 2, 7x7 pixels of 512 channels (ResNet's last stage).
    ((1, 16, 16, 512, 3, 3, 64), 2, "TP(1,1,0,0,0) V"),
])
def test_pass_schedules_im2col_copies_by_rule(conv, monkeypatch):
    """The im2col copies of a convolution (contiguous rows of channels on
    both sides) get a schedule by rule, not their decision: parallel over
    the outer pixel loops into at least 8 iterations, vectors of whole rows
    up to about 128 elements. The outputs stay equal; copies-by-rule=false
    keeps the policy's decisions."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    shape, stride, expected = conv
    text = prepare(kernels.conv2d_nhwc(*shape, stride=stride), "conv")
    taps = _tap_copies(text)
    assert len(taps) == 9, taps
    result = run_pass(text, name="conv")
    assert "copies and fills scheduled by rule" in result.stderr, result.stderr
    assert [_copy_schedule(result.schedule, i) for i in taps] == [expected] * 9, result.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err
    decided = run_pass(text, name="conv", extra=["copies-by-rule=false"])
    assert "by rule" not in decided.stderr
    assert decided.schedule != result.schedule
    ok, err = _outputs_equal(text, decided.ir)
    assert ok, err


@pytest.mark.slow
def test_transposes_and_narrow_copies_keep_their_decisions(monkeypatch):
    """A copy whose innermost loop is not innermost in its input (the
    transposes around a pixel-row convolution) or has fewer elements than a
    vector (an RGB image's 3 channels) is not scheduled by rule."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = prepare(kernels.conv2d_nchw(1, 64, 18, 18, 64, 3, 3), "conv")
    by_rule = run_pass(text, name="conv")
    decided = run_pass(text, name="conv", extra=["copies-by-rule=false"])
    # The input to NHWC, the filter to HWCF, the result back to NCHW.
    transposes = [o.id for o in Module.parse(text, "conv").ops()
                  if o.kind == "generic" and len(o.loop_bounds) == 4]
    assert len(transposes) == 3, transposes
    # (The ids are the prepared module's; in the scheduled one an id may
    # name the packed matmul, whose accumulator's fill the rules fuse: TP
    # becomes TF.)
    for i in transposes:
        assert (_copy_schedule(by_rule.schedule, i).replace("TF(", "TP(")
                == _copy_schedule(decided.schedule, i))
    assert all(_copy_schedule(by_rule.schedule, i) != _copy_schedule(decided.schedule, i)
               for i in _tap_copies(text))
    ok, err = _outputs_equal(text, by_rule.ir)
    assert ok, err
    rgb = prepare(kernels.conv2d_nhwc(1, 34, 34, 3, 3, 3, 64), "conv")
    by_rule = run_pass(rgb, name="conv")
    decided = run_pass(rgb, name="conv", extra=["copies-by-rule=false"])
    taps = _tap_copies(rgb)
    assert len(taps) == 9, taps
    for i in taps:
        assert _copy_schedule(by_rule.schedule, i) == _copy_schedule(decided.schedule, i)


_PADDED_RELU = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x32x56x56xf32>) -> tensor<1x32x58x58xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x56x56xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x32x56x56xf32>) outs(%e : tensor<1x32x56x56xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x32x56x56xf32>
  %pe = tensor.empty() : tensor<1x32x58x58xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x32x58x58xf32>) -> tensor<1x32x58x58xf32>
  %p = tensor.insert_slice %r into %pf[0, 0, 1, 1] [1, 32, 56, 56] [1, 1, 1, 1]
      : tensor<1x32x56x56xf32> into tensor<1x32x58x58xf32>
  return %p : tensor<1x32x58x58xf32>
}
"""


def test_pass_schedules_fills_by_rule(monkeypatch):
    """A fill that is not an accumulator (a padded tensor's zeros, the
    destination of an insert_slice, as torch-mlir pads) gets the copies'
    rule: parallel over its outer loops, vectors along the rows. An
    accumulator's fill (a depthwise convolution's) goes into its consumer's
    tiles instead (the consumer's TP a TF, the fill vectorized there). Outputs
    stay equal; copies-by-rule=false keeps the decisions."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    (fill,) = [o.id for o in Module.parse(_PADDED_RELU, "pad").ops() if o.kind == "fill"]
    result = run_pass(_PADDED_RELU, name="pad")
    assert "copies and fills scheduled by rule" in result.stderr, result.stderr
    rule = _copy_schedule(result.schedule, fill)
    assert rule.startswith("TP(") and rule.endswith(" V"), result.schedule
    assert "TF(" not in result.schedule, result.schedule
    decided = run_pass(_PADDED_RELU, name="pad", extra=["copies-by-rule=false"])
    assert "by rule" not in decided.stderr
    assert re.search(rf"\b{fill}: ", decided.schedule), decided.schedule
    ok, err = _outputs_equal(_PADDED_RELU, result.ir)
    assert ok, err

    text = prepare(kernels.depthwise_conv2d_nchw(1, 48, 30, 30, 3, 3), "dw")
    ops = Module.parse(text, "dw").ops()
    fills = [o.id for o in ops if o.kind == "fill"]
    assert fills, text
    result = run_pass(text, name="dw")
    assert f"{len(fills)} copies and fills scheduled by rule" in result.stderr, result.stderr
    decided = run_pass(text, name="dw", extra=["copies-by-rule=false"])
    for i in fills:
        (consumer,) = [o.id for o in ops if o.producer == i]
        assert "TP(" not in _copy_schedule(result.schedule, i), result.schedule
        assert _first_action(result.schedule, consumer).startswith("TF("), result.schedule
        assert (_first_action(decided.schedule, consumer)
                == "TP(" + _first_action(result.schedule, consumer)[3:]), decided.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


def test_in_process_scheduling_schedules_copies_as_the_pass_does(monkeypatch):
    """Nine tap copies, the copy of the filter (an argument, packed at run
    time for 256 rows) and the accumulator's fill."""
    _pass_with_this_process_registers(monkeypatch)
    text = prepare(kernels.conv2d_nhwc(1, 18, 18, 64, 3, 3, 64), "conv")
    m = Module.parse(text, "conv")
    info = m.schedule_with_policy()
    assert info["copies_by_rule"] == 11, info  # and the accumulator's fill
    assert m.schedule == run_pass(text, name="conv").schedule
    plain = Module.parse(text, "conv")
    info = plain.schedule_with_policy(copies_by_rule=False)
    assert info["copies_by_rule"] == 0
    assert plain.schedule == run_pass(text, name="conv", extra=["copies-by-rule=false"]).schedule


def _first_action(schedule: str, op: int) -> str:
    return _copy_schedule(schedule, op).split(" ")[0]


@pytest.mark.slow
@pytest.mark.parametrize("mnk", [(256, 1024, 512), (64, 256, 128), (3136, 64, 64)])
def test_accumulator_fill_goes_into_its_consumers_tiles(mnk, monkeypatch):
    """A fill that only initialises a matmul's accumulator is fused into the
    matmul's forall by rule: the decided TP becomes a TF of the same tile
    sizes and the fill is no parallel op of its own, so each tile is filled
    right before it is accumulated instead of the whole result being
    written once more beforehand. Packed (B copied into panels for 256 rows,
    the fill made in the panels' shape) or plain with a register tile (64
    rows) alike; the fill is then vectorized in the tile. Outputs equal;
    copies-by-rule=false keeps the decisions."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    m, n, k = mnk
    text = kernels.matmul(m, n, k)
    ops = Module.parse(text, "matmul").ops()
    (fill,) = [o.id for o in ops if o.kind == "fill"]
    (mm,) = [o.id for o in ops if o.kind == "matmul"]
    decided = run_pass(text, name="matmul", extra=["copies-by-rule=false"])
    result = run_pass(text, name="matmul")
    # The shipped policy parallelizes these matmuls first (what the rule needs).
    consumer = [i for i in range(len(ops) + 1)
                if re.search(rf"\b{i}: TF\(", result.schedule)]
    assert len(consumer) == 1, result.schedule
    sizes = _first_action(result.schedule, consumer[0])[2:]
    assert _first_action(decided.schedule, consumer[0]) == "TP" + sizes, decided.schedule
    # The fused fill is vectorized in the tile (the copies' rule, made
    # sequential, where the tile exceeds the vector limit).
    fused = _copy_schedule(result.schedule, fill)
    assert fused.endswith("V") and "TP(" not in fused, result.schedule
    assert _copy_schedule(decided.schedule, fill).startswith("TP("), decided.schedule
    assert "linalg.fill" not in result.ir, result.ir
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err
    ok, err = _outputs_equal(text, decided.ir)
    assert ok, err


def test_accumulator_fill_of_a_reshaped_empty_goes_into_the_tiles(monkeypatch):
    """An NCHW pointwise convolution at 28x28 reaches its matmul with the
    accumulator a fill of an empty tensor seen through a collapse_shape
    (pad-to-tiles widens the rows from 28 to 32): the fill is fused all the
    same, and vectorized in the tile."""
    monkeypatch.setenv("MLIR_RL_VECTOR_REGISTERS", AVX2["MLIR_RL_VECTOR_REGISTERS"])
    text = prepare(kernels.conv2d_nchw(1, 32, 28, 28, 192, 1, 1), "conv")
    result = run_pass(text, name="conv")
    assert len(re.findall(r"\b\d+: TF\(", result.schedule)) == 1, result.schedule
    assert "linalg.fill" not in result.ir, result.ir
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err


@pytest.mark.parametrize("text", [
    kernels.add([1, 512, 14, 14]),
    kernels.relu([1, 256, 28, 28]),
    kernels.add([1, 64, 14, 14]),       # 12544 elements: left alone
])
def test_elementwise_ops_are_flattened_into_whole_register_rows(text, monkeypatch):
    """An elementwise op whose rows are not whole vector registers (14, 28)
    is computed as [T / W, W] (mlir-rl-flatten-elementwise, in the front end)
    and scheduled by the copies' rule; outputs equal, in-process scheduling
    as the pass's; flatten-elementwise=false keeps the op and the policy's
    decision. An op under 16384 elements stays."""
    _pass_with_this_process_registers(monkeypatch)
    lanes = mlir_rl.legality()["vector_register_bits"] // 32
    result = run_pass(text, name="ew")
    big = "1x64x14x14" not in text
    if not big:
        assert "flatten" not in result.stderr and "collapse_shape" not in result.ir
        return
    assert "1 copies and fills scheduled by rule" in result.stderr, result.stderr
    assert "collapse_shape" in result.ir
    width = re.search(r"tensor<(\d+)x(\d+)xf32>", result.ir)
    assert width and int(width.group(2)) == 4 * lanes, result.ir
    rule = _copy_schedule(result.schedule, 0)
    assert rule.startswith("TP(") and rule.endswith(" V"), result.schedule
    ok, err = _outputs_equal(text, result.ir)
    assert ok, err
    m = Module.parse(text, "ew")
    info = m.schedule_with_policy()
    assert info["copies_by_rule"] == 1, info
    assert m.schedule == result.schedule
    decided = run_pass(text, name="ew", extra=["flatten-elementwise=false",
                                               "copies-by-rule=false"])
    assert "collapse_shape" not in decided.ir and "by rule" not in decided.stderr
