// mlir-rl-prepare and nn.Linear as torch-mlir imports it (a transpose of the
// [N, K] weight, then a matmul). With at most 16 rows (thin-matmul-rows, a
// batch-1 layer) a matmul whose weight is transposed at run time reads it in
// place, [N, K]. A constant weight is read [N, K] (transposed at compile
// time) only by a matrix-vector product (thin-constant-rows=1) and only up
// to thin-constant-bytes; otherwise it is transposed at compile time to
// [K, N], which the rules pack, and the matmul stays named.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-prepare)' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-fuse-elementwise{thin-matmul-rows=0})' \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-fuse-elementwise{thin-constant-bytes=16})' \
// RUN:   | FileCheck %s --check-prefix=BYTES

// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @batch1
// CHECK-SAME:    (%[[X:.+]]: tensor<1x64xf32>, %[[WT:.+]]: tensor<32x64xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]], %[[WT]] : tensor<1x64xf32>, tensor<32x64xf32>)
// OFF-LABEL:   func.func @batch1
// OFF:           linalg.generic
// OFF:           linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x64xf32>, tensor<64x32xf32>)
func.func @batch1(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>) -> tensor<1x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x32xf32>) -> tensor<1x32xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<1x64xf32>, tensor<64x32xf32>) outs(%f : tensor<1x32xf32>) -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// CHECK-LABEL: func.func @rows17
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[CST:.+]] = arith.constant dense<{{.+}}> : tensor<2x3xf32>
// CHECK:         linalg.matmul ins(%{{.+}}, %[[CST]] : tensor<17x2xf32>, tensor<2x3xf32>)
func.func @rows17(%x: tensor<17x2xf32>) -> tensor<17x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<17x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<17x3xf32>) -> tensor<17x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<17x2xf32>, tensor<2x3xf32>) outs(%f : tensor<17x3xf32>) -> tensor<17x3xf32>
  return %y : tensor<17x3xf32>
}

// CHECK-LABEL: func.func @kn_constant
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[CST:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%{{.+}}, %[[CST]] : tensor<1x3xf32>, tensor<2x3xf32>)
// OFF-LABEL:   func.func @kn_constant
// OFF:           linalg.matmul
// Over thin-constant-bytes, 2 columns (no whole vector of 16): still [N, K].
// BYTES-LABEL: func.func @kn_constant
// BYTES:         linalg.generic
func.func @kn_constant(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x3xf32>, tensor<3x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// Two rows over a constant weight (a GRU cell's 16 rows): the weight is
// transposed at compile time to [K, N] and the matmul stays named, for the
// rules to pack.
// CHECK-LABEL: func.func @rows2_constant
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[CST:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK:         linalg.matmul ins(%{{.+}}, %[[CST]] : tensor<2x2xf32>, tensor<2x3xf32>)
func.func @rows2_constant(%x: tensor<2x2xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<2x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<2x2xf32>, tensor<2x3xf32>) outs(%f : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// A matrix-vector product over a constant weight of 16 columns larger than
// thin-constant-bytes (here 16 bytes): transposed at compile time to
// [K, N] and packed by the rules, not read [N, K].
// CHECK-LABEL: func.func @wide_constant
// CHECK:         linalg.generic
// BYTES-LABEL: func.func @wide_constant
// BYTES-NOT:     linalg.transpose
// BYTES:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x2xf32>, tensor<2x16xf32>)
func.func @wide_constant(%x: tensor<1x2xf32>) -> tensor<1x16xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0], [24.0, 25.0], [26.0, 27.0], [28.0, 29.0], [30.0, 31.0]]> : tensor<16x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x2xf32>) outs(%e : tensor<2x16xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x16xf32>) -> tensor<1x16xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<1x2xf32>, tensor<2x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
