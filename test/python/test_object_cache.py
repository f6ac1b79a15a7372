"""compile_function's object cache: the machine code written once, loaded by
a later compile (no lowering, no code generation) with equal outputs; a file
that does not load is compiled again and rewritten."""
import numpy as np

from mlir_rl import _core
from mlir_rl.passes import run_pass

MATMUL = """func.func @main(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%z : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
"""


def _run(fn, inputs):
    out = np.empty((64, 128), np.float32)
    fn(inputs, [out])
    return out


def test_the_machine_code_is_written_once_and_loaded_after(tmp_path):
    ir = run_pass(MATMUL, name="mm").ir
    obj = tmp_path / f"mm-{_core.jit_target_tag()}.o"
    first = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert not first.from_object and obj.stat().st_size > 0
    inputs = first.random_inputs(3)
    expected = _run(first, inputs)
    assert np.allclose(expected, inputs[0] @ inputs[1], rtol=1e-4, atol=1e-4)
    written = obj.read_bytes()
    second = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert second.from_object
    assert np.array_equal(_run(second, inputs), expected)
    assert obj.read_bytes() == written
    # Not an object (truncated, another tool's): compiled again, rewritten.
    obj.write_bytes(written[:100])
    third = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert not third.from_object and obj.read_bytes() == written
    assert np.array_equal(_run(third, inputs), expected)


def test_the_target_tag_is_a_stable_short_hash():
    tag = _core.jit_target_tag()
    assert tag == _core.jit_target_tag() and len(tag) == 16
    int(tag, 16)
