"""Every action kind on every op kind gives the unscheduled program's outputs."""
import numpy as np
import pytest

import mlir_rl
from cases import CASES, KERNELS

K_ = mlir_rl.ActionKind
T, TP, TF, I, V, NT = (K_.TILING, K_.TILED_PARALLELIZATION, K_.TILED_FUSION, K_.INTERCHANGE,
                       K_.VECTORIZATION, K_.NO_TRANSFORMATION)


@pytest.mark.parametrize("name,kind,schedule", CASES,
                         ids=[f"{n}-{k}" for n, k, _ in CASES])
def test_schedule_preserves_outputs(name, kind, schedule):
    text, _, _ = KERNELS[name]
    baseline = mlir_rl.Module.parse(text, name)
    scheduled = baseline.fresh()
    assert scheduled.apply_schedule(schedule) == mlir_rl.ApplyStatus.APPLIED, \
        scheduled.last_message
    # The applied schedule reads back as given (canonical spacing).
    assert scheduled.schedule == schedule
    ref = baseline.time(runs=1, warmup=0, threads=2, seed=7)
    got = scheduled.time(runs=1, warmup=0, threads=2, seed=7)
    ok, err = mlir_rl.outputs_match(got.outputs, ref.outputs)
    assert ok, f"{name} {schedule}: max abs error {err}"
    # And the outputs are not trivial: something was computed.
    assert np.abs(ref.outputs[0]).max() > 0


def test_matmul_matches_numpy():
    text, _, scheds = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    m.apply_schedule(scheds["V"])
    t = m.time(runs=1, warmup=0, threads=2, seed=3)
    a, b = t.inputs
    np.testing.assert_allclose(t.outputs[0], a @ b, rtol=1e-4, atol=1e-4)


def test_vectorized_ops_leave_no_linalg():
    text, _, scheds = KERNELS["conv2d_nhwc"]
    m = mlir_rl.Module.parse(text)
    m.apply_schedule(scheds["V"])
    ir = m.ir()
    assert "linalg.conv_2d" not in ir and "vector.contract" in ir
    assert "mlir_rl.op_id" not in ir


def test_interchange_by_level_pointers():
    text, op, _ = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    masks = m.masks(op)
    assert masks.allowed(I) and masks.pointer[:3].all() and not masks.pointer[3:].any()
    m.apply_pointer(op, 2)
    masks = m.masks(op)
    # While the permutation is incomplete only interchange is allowed, and
    # the chosen loop is masked.
    assert masks.allowed_kinds() == [I]
    assert masks.phase == mlir_rl.DecisionPhase.INTERCHANGE_POINTER
    assert list(masks.pointer[:3]) == [True, True, False]
    with pytest.raises(mlir_rl.IllegalActionError):
        m.apply_pointer(op, 2)
    with pytest.raises(mlir_rl.IllegalActionError):
        m.apply(op, "T(8,8,8)")
    m.apply_pointer(op, 0)
    assert m.apply_pointer(op, 1) == mlir_rl.ApplyStatus.APPLIED
    assert m.schedule == f"{op}: I(2,0,1)"
    assert "linalg.generic" in m.ir() and "linalg.matmul" not in m.ir()


def test_masks_follow_the_rules():
    lay = mlir_rl.layout()
    text, op, _ = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    masks = m.masks(op)
    cands = lay.tile_candidates
    # TP and TF tile parallel loops only: the reduction loop (k) admits only 0.
    for t in (1, 2):
        assert masks.tile[t, 2, 0] and not masks.tile[t, 2, 1:].any()
        assert masks.tile[t, 0].all()  # 64 fits every candidate
    # Sizes that exceed the loop are masked: loop k has extent 96, all fit;
    # nothing beyond the op's 3 loops.
    assert not masks.tile[:, 3:, 1:].any()
    # V is masked until the op is small enough.
    assert not masks.allowed(V)
    m.apply(op, "TP(16,32,0)")
    masks = m.masks(op)
    assert not masks.allowed(TP) and not masks.allowed(TF), "no repeated parallelization"
    m.apply(op, "T(8,32,1)")
    assert m.masks(op).allowed(V)
    m.apply(op, "V")
    masks = m.masks(op)
    assert masks.allowed_kinds() == [NT] and masks.phase == mlir_rl.DecisionPhase.DONE
    with pytest.raises(mlir_rl.IllegalActionError, match="complete"):
        m.apply(op, "T(1,1,1)")
    assert cands[0] == 0


def test_history_limit_completes_the_op():
    """Legality v4: the last of an op's history_length actions must end it
    (V or NT); after it, only NT."""
    lay = mlir_rl.layout()
    text, op, _ = KERNELS["add"]
    m = mlir_rl.Module.parse(text)
    for _ in range(lay.history_length - 1):
        m.apply(op, "I(1,0)")
    assert not m.ops()[op].done
    assert set(m.masks(op).allowed_kinds()) <= {V, NT}
    with pytest.raises(mlir_rl.IllegalActionError, match="must end it"):
        m.apply(op, "I(1,0)")
    m.apply(op, "NT")
    assert m.ops()[op].done
    assert m.masks(op).allowed_kinds() == [NT]


def test_illegal_actions_change_nothing():
    text, op, _ = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    before = m.ir()
    with pytest.raises(mlir_rl.IllegalActionError, match="reduction loop"):
        m.apply(op, "TP(8,8,8)")
    with pytest.raises(mlir_rl.IllegalActionError, match="unknown op id 9"):
        m.apply_schedule("9: V")
    with pytest.raises(mlir_rl.IllegalActionError, match="malformed"):
        m.apply_schedule("1: T(8,8")
    assert m.ir() == before and m.schedule == ""


def test_unsupported_ops_are_listed_and_skipped():
    text = """
    func.func @main(%A: tensor<?x8xf32>, %B: tensor<8x8xf32>, %C: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %r = linalg.matmul ins(%A, %B : tensor<?x8xf32>, tensor<8x8xf32>) outs(%C : tensor<?x8xf32>) -> tensor<?x8xf32>
      return %r : tensor<?x8xf32>
    }"""
    m = mlir_rl.Module.parse(text)
    (op,) = m.ops()
    assert not op.supported and "dynamic shape" in op.reason
    assert m.traversal_order() == []
    with pytest.raises(mlir_rl.IllegalActionError, match="not supported"):
        m.apply(0, "T(1,1,1)")


@pytest.mark.slow
def test_vectorization_bounds_rows_read_through_strided_views():
    """A pooling rewritten as an elementwise op over strided window views
    (the pass's front end) reads each vector row through a wide load and a
    shuffle per view; x86 instruction selection is superlinear in them, and
    a whole 1x32x8x8 max pooling of stride 2 (256 rows x 4 views) took 70 s
    to compile. V waits until a tile brings the row reads to 256."""
    from mlir_rl.data import kernels as K
    m = mlir_rl.Module.parse(mlir_rl.front_end(K.maxpool_nchw(1, 32, 16, 16, 2, 2)))
    op = m.traversal_order()[0]
    assert m.op(op).loop_bounds == [1, 32, 8, 8]
    assert not m.masks(op).allowed(V)
    with pytest.raises(mlir_rl.IllegalActionError, match="4 strided views"):
        m.apply(op, "V")
    m.apply(op, "T(1,8,0,0)")  # 64 rows x 4 views
    assert m.masks(op).allowed(V)
    m.apply(op, "V")
    t = m.time(runs=1, warmup=0)
    ref = mlir_rl.Module.parse(mlir_rl.front_end(K.maxpool_nchw(1, 32, 16, 16, 2, 2))).time(
        runs=1, warmup=0)
    assert mlir_rl.outputs_match(t.outputs, ref.outputs)[0]


def test_parse_errors_name_the_file():
    with pytest.raises(mlir_rl.ScheduleError, match="broken.mlir"):
        mlir_rl.Module.parse("func.func @f( {", "broken.mlir")


def test_vectorization_bounds_vector_rows():
    """n-D vectors are unrolled row by row into LLVM: an untiled elementwise op
    of 1x160x4x4 (640 rows of 4) is not vectorized until tiled (MobileNetV2's
    lowering once ran out of memory on thousands of those)."""
    from mlir_rl.data import kernels as K
    m = mlir_rl.Module.parse(K.add([1, 160, 4, 4]))
    op = m.traversal_order()[0]
    assert not m.masks(op).allowed(V)
    with pytest.raises(mlir_rl.IllegalActionError, match="640 vector rows"):
        m.apply(op, "V")
    m.apply(op, "T(1,16,0,0)")  # 16 x 4 = 64 rows
    m.apply(op, "V")
    assert m.ops()[op].done


def _matmul_b_by_row(m: int, n: int, k: int, batch: int = 0) -> str:
    """A x B^T with B stored [N, K] (a linear layer reading its weight by row)."""
    b = [batch] if batch else []
    shape = lambda *d: "tensor<" + "x".join(map(str, b + list(d))) + "xf32>"  # noqa: E731
    dims = "b, m, n, k" if batch else "m, n, k"
    pre = "b, " if batch else ""
    its = ", ".join(['"parallel"'] * (3 if batch else 2) + ['"reduction"'])
    a_t, b_t, c_t = shape(m, k), shape(n, k), shape(m, n)
    return f"""func.func @f(%a: {a_t}, %b: {b_t}) -> {c_t} {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : {c_t}
  %c = linalg.fill ins(%z : f32) outs(%e : {c_t}) -> {c_t}
  %r = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({pre}m, k)>,
      affine_map<({dims}) -> ({pre}n, k)>, affine_map<({dims}) -> ({pre}m, n)>],
      iterator_types = [{its}]}} ins(%a, %b : {a_t}, {b_t}) outs(%c : {c_t}) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }} -> {c_t}
  return %r : {c_t}
}}"""


@pytest.mark.parametrize("shape,schedule", [
    ((1, 96, 256), "1: TP(0,32,0) T(0,8,16) V"),     # one row: dot products
    ((1, 96, 256), "1: TP(0,32,0) T(0,32,64) V"),
    ((4, 96, 256), "1: TP(0,32,0) T(4,8,64) V"),     # a long reduction: dot products
    ((4, 96, 256), "1: TP(0,32,0) T(2,8,16) V"),     # rows, short: outer products
    ((8, 64, 32, 3), "1: TP(1,0,32,0) T(1,8,8,32) V"),
    ((1, 64, 128, 3), "1: TP(1,0,32,0) T(1,1,8,64) V"),
])
def test_matmul_reading_b_by_row_matches_numpy(shape, schedule):
    """Contractions that reduce the innermost dimension of both operands
    lower to dot products or outer products (mlir-rl-lower-vectors); both
    compute A x B^T."""
    m = mlir_rl.Module.parse(_matmul_b_by_row(*shape), "abt")
    m.apply_schedule(schedule)
    t = m.time(runs=1, warmup=0, threads=2, seed=5)
    a, b = t.inputs
    np.testing.assert_allclose(t.outputs[0], a @ np.swapaxes(b, -1, -2), rtol=1e-4, atol=1e-4)


_REGISTER_TILE_CHECK = r"""
import sys, numpy as np, mlir_rl
assert mlir_rl.legality()["vector_registers"] == 16, mlir_rl.legality()
cases = [
    ("func.func @f(%a: tensor<64x96xf32>, %b: tensor<96x128xf32>) -> tensor<64x128xf32> {"
     " %z = arith.constant 0.0 : f32 %e = tensor.empty() : tensor<64x128xf32>"
     " %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>"
     " %r = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>"
     " return %r : tensor<64x128xf32> }",
     "1: TP(16,32,0) T(8,32,4) V; 0: TP(16,32) T(8,32) V", "vector<4x16x4xf32>", lambda a, b: a @ b),
    ("func.func @f(%a: tensor<4x32x64xf32>, %b: tensor<4x64x64xf32>) -> tensor<4x32x64xf32> {"
     " %z = arith.constant 0.0 : f32 %e = tensor.empty() : tensor<4x32x64xf32>"
     " %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>"
     " %r = linalg.batch_matmul ins(%a, %b : tensor<4x32x64xf32>, tensor<4x64x64xf32>) outs(%c : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>"
     " return %r : tensor<4x32x64xf32> }",
     "1: TP(2,8,32,0) T(2,4,32,2) V", "vector<1x4x16x2xf32>", lambda a, b: a @ b),
]
for text, schedule, vec, ref in cases:
    m = mlir_rl.Module.parse(text)
    m.apply_schedule(schedule)
    assert vec in m.ir(), (schedule, m.ir())
    t = m.time(runs=1, warmup=0, threads=2, seed=11)
    a, b = t.inputs
    np.testing.assert_allclose(t.outputs[0], ref(a, b), rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_register_tiling_matches_numpy():
    """On a 16 x 256-bit register file (AVX2), V tiles a contraction whose
    accumulator does not fit first (legality v6); what it computes is the
    product. A process of its own: the register file is read once."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, MLIR_RL_VECTOR_REGISTERS="16x256")
    out = subprocess.run([sys.executable, "-c", _REGISTER_TILE_CHECK], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
