"""An action that fails (or whose result does not verify) is undone exactly,
without cloning the function: only the op's top-level ancestor is backed up,
and the uses of its results and of a fused producer's are put back."""
import pytest

import mlir_rl
from cases import KERNELS
from mlir_rl.data import kernels as K

RESIDUAL = """
func.func @main(%x: tensor<16x32xf32>, %y: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %e = tensor.empty() : tensor<16x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<16x32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  return %c, %p : tensor<16x32xf32>, tensor<16x32xf32>
}"""

# (module, actions applied first, the action made to fail)
CASES = {
    "tp": (KERNELS["matmul"][0], [], (1, "TP(16,32,0)")),
    "t-in-forall": (KERNELS["matmul"][0], [(1, "TP(16,32,0)")], (1, "T(8,32,1)")),
    "v-in-loops": (KERNELS["matmul"][0], [(1, "TP(16,32,0)"), (1, "T(8,32,1)")], (1, "V")),
    "interchange": (KERNELS["matmul"][0], [], (1, "I(1,0,2)")),
    "decompose-v": (KERNELS["conv2d_nhwc"][0], [(1, "TP(1,1,8,0,0,0,0)"), (1, "T(0,0,0,8,1,0,0)")],
                    (1, "V")),
    "tf-shared-output": (KERNELS["matmul"][0], [], (1, "TF(16,32,0)")),
    "tf-slice-of-result": (KERNELS["chain"][0], [], (3, "TF(16,64)")),
    "tf-result-used-later": (RESIDUAL, [], (1, "TF(4,8)")),
    "tf-fill-of-chain": (KERNELS["chain"][0], [(3, "TF(16,64)"), (3, "V"), (2, "V")],
                         (1, "TF(32,32,0)")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_failed_action_leaves_the_ir_as_it_was(name):
    text, before, (op, action) = CASES[name]
    m = mlir_rl.Module.parse(text)
    for o, a in before:
        assert m.apply(o, a) == mlir_rl.ApplyStatus.APPLIED, m.last_message
    ir, tagged, schedule = m.ir(), m.ir(with_tags=True), m.schedule
    m._program._inject_failure(0)
    assert m.apply(op, action) == mlir_rl.ApplyStatus.FAILED
    assert "injected failure" in m.last_message and "the IR is unchanged" in m.last_message
    assert m.ir(with_tags=True) == tagged and m.schedule == schedule
    assert m.verify()[0]
    # Nothing of the attempt is left: the action now applies as on a module
    # that never saw it.
    assert m.apply(op, action) == mlir_rl.ApplyStatus.APPLIED, m.last_message
    fresh = mlir_rl.Module.parse(text)
    for o, a in before + [(op, action)]:
        fresh.apply(o, a)
    assert m.ir() == fresh.ir()


def test_restored_module_computes_the_same():
    text, before, (op, action) = CASES["tf-result-used-later"]
    m = mlir_rl.Module.parse(text)
    m._program._inject_failure(0)
    assert m.apply(op, action) == mlir_rl.ApplyStatus.FAILED
    ref = mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=2)
    got = m.time(runs=1, warmup=0, threads=2)
    assert mlir_rl.outputs_match(got.outputs, ref.outputs)[0]


def test_the_pass_ends_an_op_whose_action_fails(varied_model):
    """The pass (and the environment) give an op whose action failed NT."""
    m = mlir_rl.Module.parse(K.matmul(64, 128, 96))
    m._program._inject_failure(0)
    stats = m.schedule_with_policy(varied_model)
    assert len(stats["warnings"]) == 1 and "injected failure" in stats["warnings"][0]
    assert m.verify()[0]
