// V bounds the partial vector pieces: rows of 15 floats in 16 lanes split
// into 8 + 4 + 2 + 1, a load or store each in LLVM, and 228 such rows (912
// pieces) took 6 s to compile (sixteen of them, the im2col copies of one
// convolution, over two minutes). Tiled to 4 rows (16 pieces) it is legal.
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="0: V"})' 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: error: linalg-rl-schedule: op 0 (linalg.generic): vectorization V is not allowed: 228 vector rows of 15 elements (912 partial vector pieces) exceed 256 (tile first)
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="0: T(4,0) V"})' | FileCheck %s --check-prefix=TILED
// TILED: vector.transfer_read {{.*}} : tensor<4x15xf32>, vector<4x15xf32>
// Rows of whole registers are bounded by the element count alone.
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: V"})' | FileCheck %s --check-prefix=WIDE
// WIDE: vector.transfer_read {{.*}} : tensor<128x16xf32>, vector<128x16xf32>
func.func @copy15(%a: tensor<228x15xf32>) -> tensor<228x15xf32> {
  %e = tensor.empty() : tensor<228x15xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<228x15xf32>) outs(%e : tensor<228x15xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<228x15xf32>
  return %r : tensor<228x15xf32>
}
func.func @copy16(%a: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %e = tensor.empty() : tensor<128x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<128x16xf32>) outs(%e : tensor<128x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<128x16xf32>
  return %r : tensor<128x16xf32>
}
