// Tiling (T) on each op kind: one scf.for per non-zero tile size, the tiled op inside.
// RUN: %mlir_opt %s -split-input-file --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,32,16)"})' | FileCheck %s --check-prefix=MATMUL
// RUN: %mlir_rl_opt %s -split-input-file \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,32,16)"})' | FileCheck %s --check-prefix=MATMUL

// MATMUL-LABEL: func.func @matmul
// MATMUL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// MATMUL:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// MATMUL:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// MATMUL:       linalg.matmul {{.*}} -> tensor<8x32xf32>
// MATMUL-NOT: mlir_rl.op_id
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
