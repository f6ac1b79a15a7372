// Vectorization (V): after tiling to small static shapes, the ops become vector code.
// 2-D convolutions and pooling are decomposed to 1-D first (their OH and KH tiled to 1).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V; 3: TP(1,8,1,0,0,0,0) T(0,0,0,8,0,1,0) V; 5: TP(1,1,8,0,0,0,0) T(0,0,0,8,1,0,0) V; 7: TP(1,8,1,0,0,0) T(0,0,0,0,1,0) V; 8: TP(16,0) T(4,64) V"})' | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall
// CHECK: vector.transfer_read {{.*}} vector<8x32x1xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [2] : vector<8x32x1xf32> to vector<8x32xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// CHECK-LABEL: func.func @conv_nchw
// CHECK: scf.forall
// CHECK: vector.contract
// CHECK-NOT: linalg.conv_
func.func @conv_nchw(%I: tensor<1x16x18x18xf32>, %K: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%I, %K : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%O : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @conv_nhwc
// CHECK: scf.forall
// CHECK: vector.contract
// CHECK-NOT: linalg.conv_
func.func @conv_nhwc(%I: tensor<1x18x18x16xf32>, %K: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%I, %K : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%O : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: func.func @pool
// CHECK: scf.forall
// CHECK: arith.maximumf {{.*}} : vector<
// CHECK-NOT: linalg.pooling
func.func @pool(%I: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  %cst = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%I, %w : tensor<1x16x32x32xf32>, tensor<2x2xf32>) outs(%O : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @add
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     arith.addf {{.*}} : vector<4x64xf32>
// CHECK-NOT: linalg.add
func.func @add(%X: tensor<64x256xf32>, %Y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%X, %Y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
