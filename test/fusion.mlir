// Tiled fusion (TF): the consumer tiled with scf.forall, its last producer fused inside.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(16,32,0)"})' | FileCheck %s --check-prefix=MATMUL

// The fill (op 0) producing the accumulator moves into the forall.
// MATMUL-LABEL: func.func @matmul
// MATMUL-NOT: linalg.fill
// MATMUL: scf.forall
// MATMUL:   linalg.fill {{.*}} -> tensor<16x32xf32>
// MATMUL:   linalg.matmul {{.*}} -> tensor<16x32xf32>
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
