// Interchange (I): generalized to linalg.generic with permuted loops.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: I(2,0,1); 2: I(1,0)"})' | FileCheck %s

// matmul (i, j, k) with k moved outermost: A is indexed (d1, d0), B (d0, d2).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @interchange
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[T]], #[[T]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.add
func.func @interchange(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>, %D: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %s = linalg.add ins(%r, %D : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %s : tensor<64x128xf32>
}
