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
// Rows are counted per operand too, along the operand's own innermost
// dimension: an interchange that vectorizes across memory order makes a
// transposed transfer of as many rows as the operand has elements here
// (2,280 rows of one f64, read through a stride-2 view: 21 s to lower and
// minutes to compile, a fuzzer's hang, seed 5151 program 1426).
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="2: I(5,4,0,2,3,1) V"})' 2>&1 | FileCheck %s --check-prefix=ACROSS
// ACROSS: error: linalg-rl-schedule: op 2 (linalg.generic): vectorization V is not allowed: 2280 vector rows in operand 0 (vectorized across its innermost dimension) exceed 256 (tile first)
// A transpose of whole rows stays legal (32 rows of 32 each way).
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="3: V"})' | FileCheck %s --check-prefix=TRANSPOSE
// TRANSPOSE: vector.transfer_read {{.*}} {permutation_map = {{.*}}} : tensor<32x32xf32>, vector<32x32xf32>
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
func.func @across(%a: tensor<24x19x19x2xf64>) -> tensor<24x19x1x1x5x1xf64> {
  %s = tensor.extract_slice %a[0, 0, 0, 0] [24, 19, 5, 1] [1, 1, 3, 2] : tensor<24x19x19x2xf64> to tensor<24x19x5x1xf64>
  %e = tensor.empty() : tensor<24x19x1x1x5x1xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<24x19x5x1xf64>) outs(%e : tensor<24x19x1x1x5x1xf64>) {
  ^bb0(%x: f64, %o: f64):
    linalg.yield %x : f64
  } -> tensor<24x19x1x1x5x1xf64>
  return %r : tensor<24x19x1x1x5x1xf64>
}
func.func @transpose(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %e = tensor.empty() : tensor<32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
