// Tiled parallelization (TP): an scf.forall over the parallel loops, the tiled op inside.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0); 3: TP(1,8,4,0,0,0,0); 5: TP(1,4,0,8,0,0); 6: TP(16,0)"})' | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 4)
// CHECK:   linalg.matmul {{.*}} -> tensor<16x32xf32>
// CHECK: scf.forall.in_parallel
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// CHECK-LABEL: func.func @conv_nchw
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4)
// CHECK:   linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x8x4x16xf32>
func.func @conv_nchw(%I: tensor<1x16x18x18xf32>, %K: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%I, %K : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%O : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @pool_nhwc
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 2)
// CHECK:   linalg.pooling_nhwc_max {{.*}} -> tensor<1x4x16x8xf32>
func.func @pool_nhwc(%I: tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32> {
  %cst = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%I, %w : tensor<1x32x32x16xf32>, tensor<2x2xf32>) outs(%O : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}

// CHECK-LABEL: func.func @add
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK:   linalg.add {{.*}} -> tensor<16x256xf32>
func.func @add(%X: tensor<64x256xf32>, %Y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%X, %Y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
