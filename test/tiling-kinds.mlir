// Tiling (T) on convolutions, pooling, add and a relu generic.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(1,8,4,8,4,1,1); 3: T(1,4,8,16,1,1,8); 5: T(1,4,4,8,1,1); 6: T(8,64); 7: T(4,0,32)"})' | FileCheck %s

// CHECK-LABEL: func.func @conv_nchw
// CHECK-COUNT-7: scf.for
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins({{.*}} : tensor<1x4x4x8xf32>, tensor<8x4x1x1xf32>) {{.*}} -> tensor<1x8x4x8xf32>
func.func @conv_nchw(%I: tensor<1x16x18x18xf32>, %K: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%I, %K : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%O : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @conv_nhwc
// CHECK-COUNT-7: scf.for
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<1x4x8x16xf32>
func.func @conv_nhwc(%I: tensor<1x18x18x16xf32>, %K: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%I, %K : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%O : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: func.func @pool
// CHECK-COUNT-6: scf.for
// CHECK: linalg.pooling_nchw_max {{.*}} -> tensor<1x4x4x8xf32>
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
// CHECK: scf.for {{.*}} step %c8
// CHECK:   scf.for {{.*}} step %c64
// CHECK:     linalg.add {{.*}} -> tensor<8x64xf32>
func.func @add(%X: tensor<64x256xf32>, %Y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%X, %Y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK: scf.for {{.*}} step %c4
// CHECK:   scf.for {{.*}} step %c32
// CHECK:     linalg.generic {{.*}} ins({{.*}} : tensor<4x16x32xf32>)
// CHECK:       arith.maximumf
func.func @relu(%X: tensor<32x16x64xf32>) -> tensor<32x16x64xf32> {
  %e = tensor.empty() : tensor<32x16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%X : tensor<32x16x64xf32>) outs(%e : tensor<32x16x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<32x16x64xf32>
  return %r : tensor<32x16x64xf32>
}
