// mlir-rl-conv-to-matmul: a stride-1 NHWC convolution whose im2col matrix
// would exceed shifted-min-bytes (here 0: any) is one matmul per filter tap
// over shifted rows of its input, [H*W, C], computed at the input's width
// (72 = 8 rows of 9 columns, one dropped), with no im2col copy. Tap (kh, kw)
// reads from row kh*W + kw: 0, 1, 9, 10; the rows past the input's 81 are
// zeros. A constant filter gives one [C, F] constant per tap.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{shifted-min-bytes=0},canonicalize,cse)' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul,canonicalize,cse)' | FileCheck %s --check-prefix=DEFAULT

// CHECK-LABEL: func.func @nhwc
// CHECK-SAME:    (%[[X:.+]]: tensor<1x9x9x8xf32>, %[[W:.+]]: tensor<2x2x8x4xf32>)
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]] : tensor<1x9x9x8xf32> into tensor<81x8xf32>
// CHECK:         %[[ROWS:.+]] = tensor.pad %[[FLAT]] low[0, 0] high[1, 0]
// CHECK:         %[[ACC:.+]] = linalg.fill {{.*}} -> tensor<72x4xf32>
// CHECK:         %[[A0:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [72, 8] [1, 1]
// CHECK:         %[[M0:.+]] = linalg.matmul ins(%[[A0]], %{{.+}} : tensor<72x8xf32>, tensor<8x4xf32>) outs(%[[ACC]] : tensor<72x4xf32>)
// CHECK:         %[[A1:.+]] = tensor.extract_slice %[[ROWS]][1, 0] [72, 8] [1, 1]
// CHECK:         %[[M1:.+]] = linalg.matmul ins(%[[A1]], %{{.+}} : {{.*}}) outs(%[[M0]] : tensor<72x4xf32>)
// CHECK:         %[[A9:.+]] = tensor.extract_slice %[[ROWS]][9, 0] [72, 8] [1, 1]
// CHECK:         %[[M9:.+]] = linalg.matmul ins(%[[A9]], %{{.+}} : {{.*}}) outs(%[[M1]] : tensor<72x4xf32>)
// CHECK:         %[[A10:.+]] = tensor.extract_slice %[[ROWS]][10, 0] [72, 8] [1, 1]
// CHECK:         %[[M10:.+]] = linalg.matmul ins(%[[A10]], %{{.+}} : {{.*}}) outs(%[[M9]] : tensor<72x4xf32>)
// CHECK:         %[[WIDE:.+]] = tensor.expand_shape %[[M10]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 8, 9, 4]
// CHECK:         %[[OUT:.+]] = tensor.extract_slice %[[WIDE]][0, 0, 0, 0] [1, 8, 8, 4] [1, 1, 1, 1] : tensor<1x8x9x4xf32> to tensor<1x8x8x4xf32>
// CHECK:         return %[[OUT]]
// DEFAULT-LABEL: func.func @nhwc
// DEFAULT-NOT:     linalg.matmul
func.func @nhwc(%x: tensor<1x9x9x8xf32>, %w: tensor<2x2x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x9x9x8xf32>, tensor<2x2x8x4xf32>) outs(%f : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %r : tensor<1x8x8x4xf32>
}

// CHECK-LABEL: func.func @constant_filter
// CHECK-COUNT-4: arith.constant dense<{{.+}}> : tensor<8x4xf32>
// CHECK-NOT:     arith.constant dense<{{.+}}> : tensor<2x2x8x4xf32>
// CHECK-COUNT-4: linalg.matmul
func.func @constant_filter(%x: tensor<1x9x9x8xf32>) -> tensor<1x8x8x4xf32> {
  %w0 = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0]> : tensor<128xf32>
  %w = tensor.expand_shape %w0 [[0, 1, 2, 3]] output_shape [2, 2, 8, 4] : tensor<128xf32> into tensor<2x2x8x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x9x9x8xf32>, tensor<2x2x8x4xf32>) outs(%f : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %r : tensor<1x8x8x4xf32>
}
