"""The JIT'd code's malloc and free go to the buffer pool (BufferPool.h): a
program's temporaries are reused from call to call instead of being faulted
in again whenever glibc hands large blocks back to the system."""
import numpy as np

import mlir_rl
from mlir_rl import _core


# A matmul whose rows (197) pad-to-tiles pads and whose right-hand side
# pack-rhs packs: the scheduled program allocates both (and its result),
# each over the pool's 64 KiB threshold.
PADDED = """func.func @main(%A: tensor<197x256xf32>, %B: tensor<256x512xf32>) -> tensor<197x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<197x512xf32>
  %C = linalg.fill ins(%z : f32) outs(%e : tensor<197x512xf32>) -> tensor<197x512xf32>
  %r = linalg.matmul ins(%A, %B : tensor<197x256xf32>, tensor<256x512xf32>) outs(%C : tensor<197x512xf32>) -> tensor<197x512xf32>
  return %r : tensor<197x512xf32>
}
"""


def test_temporaries_are_reused_from_the_pool_and_outputs_stay_equal():
    scheduled = mlir_rl.Module.parse(PADDED)
    scheduled.apply_rules()
    assert "@malloc" in scheduled.lowered()
    fn = scheduled.compile(threads=2)
    a, b = fn.random_inputs(7)
    out = np.empty((197, 512), np.float32)
    before = _core.buffer_pool_cached_bytes()
    fn.time([a, b], [out], 1, warmup=0)
    cached = _core.buffer_pool_cached_bytes()
    # The call freed its temporaries and its result into the pool.
    assert cached > before
    fn.time([a, b], [out], 3, warmup=0)
    # Later calls take the same blocks again: the pool does not grow.
    assert _core.buffer_pool_cached_bytes() == cached
    assert np.allclose(out, a @ b, rtol=1e-4, atol=1e-4)
