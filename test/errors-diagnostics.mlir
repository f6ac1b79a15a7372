// Illegal actions are reported at the op they were meant for.
// RUN: %mlir_opt %s -split-input-file -verify-diagnostics --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(8,8,8)"})'

func.func @reduction_dim(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>, %C: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  // expected-error @below {{linalg-rl-schedule: op 1 (linalg.matmul): tiled_parallelization TP(8,8,8): loop 2 is a reduction loop; TP tiles parallel loops only (use 0)}}
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

func.func @unsupported(%A: tensor<?x96xf32>, %B: tensor<96x128xf32>, %C: tensor<?x128xf32>) -> tensor<?x128xf32> {
  // expected-remark @below {{linalg-rl-schedule: op 0 (linalg.matmul) skipped: operand #0 has a dynamic shape}}
  %r = linalg.matmul ins(%A, %B : tensor<?x96xf32>, tensor<96x128xf32>) outs(%C : tensor<?x128xf32>) -> tensor<?x128xf32>
  %e = tensor.empty() : tensor<128x96xf32>
  // expected-error @below {{linalg-rl-schedule: op 1 (linalg.transpose): tiled_parallelization TP(8,8,8) gives 3 tile sizes, the op has 2 loops}}
  %t = linalg.transpose ins(%B : tensor<96x128xf32>) outs(%e : tensor<128x96xf32>) permutation = [1, 0]
  return %r : tensor<?x128xf32>
}
