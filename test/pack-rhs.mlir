// mlir-rl-pack-rhs: a matmul reads its B as panels Bp[N/NB, K, NB]
// (Bp[j, k, i] = B[k, j*NB + i]) and writes C through an expand_shape to
// [M, N/NB, NB]. A constant B is packed at compile time; another by a copy
// when the matmul has at least 128 rows. Matmuls with fewer rows and an
// argument B, or whose N the panel width does not divide, stay.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-pack-rhs{panel-width=2})' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-pack-rhs{panel-width=2 constants-only=true})' \
// RUN:   | FileCheck %s --check-prefix=CONST

// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[KJI:.+]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CONST-LABEL: func.func @packed
// CONST:         arith.constant {{.+}} : tensor<2x2x2xf32>
// CHECK-LABEL: func.func @packed
// CHECK-SAME:    (%[[X:.+]]: tensor<3x2xf32>)
// CHECK-NOT:     tensor<2x4xf32>
// CHECK:         %[[F:.+]] = linalg.fill
// CHECK:         %[[P:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[\[}}3.000000e+00, 4.000000e+00], [7.000000e+00, 8.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[F]] {{\[\[}}0], [1, 2]] output_shape [3, 2, 2] : tensor<3x4xf32> into tensor<3x2x2xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]], %[[P]] : tensor<3x2xf32>, tensor<2x2x2xf32>) outs(%[[E]] : tensor<3x2x2xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2]] : tensor<3x2x2xf32> into tensor<3x4xf32>
// CHECK:         return %[[R]]
func.func @packed(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x4xf32>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @argument
// CHECK:         linalg.matmul
func.func @argument(%x: tensor<3x2xf32>, %w: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x4xf32>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @odd_columns
// CHECK:         linalg.matmul
func.func @odd_columns(%x: tensor<3x2xf32>) -> tensor<3x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]]> : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<3x3xf32>) -> tensor<3x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x3xf32>) outs(%f : tensor<3x3xf32>) -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @copied
// CHECK-SAME:    (%[[X:.+]]: tensor<128x2xf32>, %[[W:.+]]: tensor<2x4xf32>)
// CHECK:         %[[S:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [2, 2, 2] : tensor<2x4xf32> into tensor<2x2x2xf32>
// CHECK:         %[[PE:.+]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK:         %[[P:.+]] = linalg.generic {indexing_maps = [#[[KJI]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[S]] : tensor<2x2x2xf32>) outs(%[[PE]] : tensor<2x2x2xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]]
// CHECK-SAME:      ins(%[[X]], %[[P]] : tensor<128x2xf32>, tensor<2x2x2xf32>)
// CONST-LABEL: func.func @copied
// CONST:         linalg.matmul
func.func @copied(%x: tensor<128x2xf32>, %w: tensor<2x4xf32>) -> tensor<128x4xf32> {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<128x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<128x4xf32>) -> tensor<128x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<128x2xf32>, tensor<2x4xf32>) outs(%f : tensor<128x4xf32>) -> tensor<128x4xf32>
  return %y : tensor<128x4xf32>
}
