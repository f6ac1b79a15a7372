// mlir-rl-conv-to-matmul lifts 1-D convolutions to the 2-D op of their
// layout with a unit height (min-macs=1000000000 stops there: the 2-D ops are
// then too small to rewrite further), then rewrites them as 2-D ones; a 1-D
// convolution of dynamic shape is left alone.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{min-macs=1000000000})' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul,canonicalize)' | FileCheck %s --check-prefix=MATMUL
// Prepared, scheduled by the policy and lowered: the result verifies.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-prepare,linalg-rl-schedule,mlir-rl-lower)' -o /dev/null

// CHECK-LABEL: func.func @ncw
// CHECK:         %[[X:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 1, 67] : tensor<1x16x67xf32> into tensor<1x16x1x67xf32>
// CHECK:         %[[W:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [24, 16, 1, 3] : tensor<24x16x3xf32> into tensor<24x16x1x3xf32>
// CHECK:         %[[O:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 24, 1, 32] : tensor<1x24x32xf32> into tensor<1x24x1x32xf32>
// CHECK:         %[[C:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>} ins(%[[X]], %[[W]] : tensor<1x16x1x67xf32>, tensor<24x16x1x3xf32>) outs(%[[O]] : tensor<1x24x1x32xf32>)
// CHECK:         tensor.collapse_shape %[[C]] {{\[}}[0], [1], [2, 3]] : tensor<1x24x1x32xf32> into tensor<1x24x32xf32>
// MATMUL-LABEL: func.func @ncw
// MATMUL-NOT:   linalg.conv
// The accumulator, a fill of the lifted (reshaped) empty tensor, is a fill of
// the transposed shape, not a transposing copy of the fill.
// MATMUL:       %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<32x24xf32>)
// MATMUL:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<32x24xf32>)
// MATMUL-NOT:   linalg.conv
// MATMUL:       return
func.func @ncw(%x: tensor<1x16x67xf32>, %w: tensor<24x16x3xf32>) -> tensor<1x24x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x24x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x24x32xf32>) -> tensor<1x24x32xf32>
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<2> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
         ins(%x, %w : tensor<1x16x67xf32>, tensor<24x16x3xf32>) outs(%f : tensor<1x24x32xf32>) -> tensor<1x24x32xf32>
  return %r : tensor<1x24x32xf32>
}

// CHECK-LABEL: func.func @nwc
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3]] output_shape [2, 1, 50, 12] : tensor<2x50x12xf32> into tensor<2x1x50x12xf32>
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3]] output_shape [1, 5, 12, 16] : tensor<5x12x16xf32> into tensor<1x5x12x16xf32>
// CHECK:         linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3]] : tensor<2x1x46x16xf32> into tensor<2x46x16xf32>
// MATMUL-LABEL: func.func @nwc
// MATMUL-NOT:   linalg.conv
// MATMUL:       return
func.func @nwc(%x: tensor<2x50x12xf32>, %w: tensor<5x12x16xf32>, %o: tensor<2x46x16xf32>) -> tensor<2x46x16xf32> {
  %r = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
         ins(%x, %w : tensor<2x50x12xf32>, tensor<5x12x16xf32>) outs(%o : tensor<2x46x16xf32>) -> tensor<2x46x16xf32>
  return %r : tensor<2x46x16xf32>
}

// CHECK-LABEL: func.func @depthwise_ncw
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [16, 1, 7] : tensor<16x7xf32> into tensor<16x1x7xf32>
// CHECK:         linalg.depthwise_conv_2d_nchw_chw
// MATMUL-LABEL: func.func @depthwise_ncw
// MATMUL:       linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise_ncw(%x: tensor<1x16x64xf32>, %w: tensor<16x7xf32>, %o: tensor<1x16x58xf32>) -> tensor<1x16x58xf32> {
  %r = linalg.depthwise_conv_1d_ncw_cw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
         ins(%x, %w : tensor<1x16x64xf32>, tensor<16x7xf32>) outs(%o : tensor<1x16x58xf32>) -> tensor<1x16x58xf32>
  return %r : tensor<1x16x58xf32>
}

// CHECK-LABEL: func.func @depthwise_nwc
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [1, 3, 24] : tensor<3x24xf32> into tensor<1x3x24xf32>
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<[1, 2]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>}
func.func @depthwise_nwc(%x: tensor<2x31x24xf32>, %w: tensor<3x24xf32>, %o: tensor<2x14x24xf32>) -> tensor<2x14x24xf32> {
  %r = linalg.depthwise_conv_1d_nwc_wc {dilations = dense<2> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
         ins(%x, %w : tensor<2x31x24xf32>, tensor<3x24xf32>) outs(%o : tensor<2x14x24xf32>) -> tensor<2x14x24xf32>
  return %r : tensor<2x14x24xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         linalg.conv_1d_ncw_fcw
// MATMUL-LABEL: func.func @dynamic
// MATMUL:       linalg.conv_1d_ncw_fcw
func.func @dynamic(%x: tensor<?x8x20xf32>, %w: tensor<8x8x3xf32>, %o: tensor<?x8x18xf32>) -> tensor<?x8x18xf32> {
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
         ins(%x, %w : tensor<?x8x20xf32>, tensor<8x8x3xf32>) outs(%o : tensor<?x8x18xf32>) -> tensor<?x8x18xf32>
  return %r : tensor<?x8x18xf32>
}

// An output width the pixel tiles do not divide (99 -> 128): the im2col
// tensor's 29 padded columns alone are filled with zeros, not all of it.
// MATMUL-LABEL: func.func @ncw_odd_width
// MATMUL:       %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x29x1x3x16xf32>)
// MATMUL:       tensor.insert_slice %[[Z]] into %{{.+}}[0, 99, 0, 0, 0] [1, 29, 1, 3, 16]
// MATMUL-NOT:   linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x128x1x3x16xf32>)
// MATMUL:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
func.func @ncw_odd_width(%x: tensor<1x16x101xf32>, %w: tensor<24x16x3xf32>) -> tensor<1x24x99xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x24x99xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x24x99xf32>) -> tensor<1x24x99xf32>
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>}
         ins(%x, %w : tensor<1x16x101xf32>, tensor<24x16x3xf32>) outs(%f : tensor<1x24x99xf32>) -> tensor<1x24x99xf32>
  return %r : tensor<1x24x99xf32>
}

// Two 1-D convolutions with an activation between them (a wav2vec2 layer
// pair) and a constant filter: the activation, lifted with them (no reshape
// between it and either convolution), ends up computed in NHWC between the
// two matmuls, and the filter is transposed at compile time.
// CHECK-LABEL: func.func @ncw_chain
// CHECK:         %[[C1:.+]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x49xf32>
// CHECK:         %[[R:.+]] = linalg.generic {{.*}} ins(%[[C1]] : tensor<1x16x1x49xf32>)
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[R]], %{{.+}} : tensor<1x16x1x49xf32>, tensor<16x16x1x3xf32>)
// MATMUL-LABEL: func.func @ncw_chain
// MATMUL-NOT:   linalg.conv
// MATMUL:       arith.constant dense<{{.+}}> : tensor<48x16xf32>
// MATMUL:       linalg.generic {{.*}} ins(%{{.+}} : tensor<1x1x49x16xf32>) outs(%{{.+}} : tensor<1x1x49x16xf32>)
// MATMUL-NEXT:    ^bb0
// MATMUL-NEXT:    arith.maximumf
// MATMUL:       return
func.func @ncw_chain(%x: tensor<1x16x101xf32>) -> tensor<1x16x24xf32> {
  %w = arith.constant dense<[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0]> : tensor<768xf32>
  %w3 = tensor.expand_shape %w [[0, 1, 2]] output_shape [16, 16, 3] : tensor<768xf32> into tensor<16x16x3xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x49xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x49xf32>) -> tensor<1x16x49xf32>
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%x, %w3 : tensor<1x16x101xf32>, tensor<16x16x3xf32>) outs(%f : tensor<1x16x49xf32>) -> tensor<1x16x49xf32>
  %e2 = tensor.empty() : tensor<1x16x49xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<1x16x49xf32>) outs(%e2 : tensor<1x16x49xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x16x49xf32>
  %e3 = tensor.empty() : tensor<1x16x24xf32>
  %f3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<1x16x24xf32>) -> tensor<1x16x24xf32>
  %c3 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%r, %w3 : tensor<1x16x49xf32>, tensor<16x16x3xf32>) outs(%f3 : tensor<1x16x24xf32>) -> tensor<1x16x24xf32>
  return %c3 : tensor<1x16x24xf32>
}
