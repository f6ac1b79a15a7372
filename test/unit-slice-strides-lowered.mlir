// A sum pooling over a 1x1 window with stride 3 (a strided view of one
// row) before a depthwise convolution, whose decomposition drops the row:
// the stride reached a rank-reducing subview that expand-strided-metadata
// lowered wrongly ("expected result type with stride = 24 instead of 8").
// Found by `mlir-rl fuzz --seed 6262` (program 786); without the pass
// this trace fails to lower. It lowers now.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="[mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-conv-to-matmul,mlir-rl-unroll-windows{nhwc-depthwise=false},canonicalize,cse,mlir-rl-untie-inits,mlir-rl-untie-empties] 3: V; 2: V; 1: T(0,1,1,8) V; 0: T(0,1,1,8) V"},mlir-rl-lower)' \
// RUN:   | FileCheck %s --check-prefix=LOWERED
// LOWERED: llvm.func @pool_then_depthwise
func.func @pool_then_depthwise(%arg0: tensor<2x1x1x8xi32>, %arg1: tensor<1x1x8xi32>) -> (tensor<2x1x1x8xi32>) {
  %c0 = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<2x1x1x8xi32>
  %acc0 = linalg.fill ins(%c0 : i32) outs(%e0 : tensor<2x1x1x8xi32>) -> tensor<2x1x1x8xi32>
  %win = tensor.empty() : tensor<1x1xi32>
  %p = linalg.pooling_nchw_sum {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[3, 1]> : tensor<2xi64>} ins(%arg0, %win : tensor<2x1x1x8xi32>, tensor<1x1xi32>) outs(%acc0 : tensor<2x1x1x8xi32>) -> tensor<2x1x1x8xi32>
  %e1 = tensor.empty() : tensor<2x1x1x8xi32>
  %acc1 = linalg.fill ins(%c0 : i32) outs(%e1 : tensor<2x1x1x8xi32>) -> tensor<2x1x1x8xi32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[3, 1]> : tensor<2xi64>} ins(%p, %arg1 : tensor<2x1x1x8xi32>, tensor<1x1x8xi32>) outs(%acc1 : tensor<2x1x1x8xi32>) -> tensor<2x1x1x8xi32>
  return %d : tensor<2x1x1x8xi32>
}
