// With the policy, linalg-rl-schedule first puts windowed ops into the forms
// the policy schedules well (rewrite-windows): a 2-D convolution becomes an
// im2col copy and a matmul, a pooling and an NCHW depthwise convolution
// elementwise ops over strided views; an NHWC depthwise convolution stays
// (upstream vectorizes it).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s < %t.out
// The dumped script replays the rewrite (apply_registered_pass) and the
// schedule on the original input, to the same IR.
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.schedule
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay
// RUN: diff %t.out %t.replay
// rewrite-windows=false schedules the 8 ops as given (ids 0-7), no rewrite.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{rewrite-windows=false dump-schedule=%t.keep})' -o /dev/null
// RUN: FileCheck %s --check-prefix=NOREWRITE < %t.keep
// Without mlir-rl's passes the script stays replayable by any transform
// interpreter, and leaves the tags.
// NOREWRITE-NOT: apply_registered_pass
// NOREWRITE: transform.split_handle %{{.+}} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
// An explicit schedule names the ops of the input as given: no rewrite.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="0: NT"})' | FileCheck %s --check-prefix=KEEP
// The scheduled module lowers.
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-lower)' -o /dev/null

// SCRIPT: transform.apply_registered_pass "mlir-rl-conv-to-matmul"
// SCRIPT: transform.apply_registered_pass "mlir-rl-unroll-windows" with options = {"nhwc-depthwise" = false}
// SCRIPT: transform.apply_registered_pass "mlir-rl-untie-inits"
// SCRIPT: transform.structured.match interface{LinalgOp}
// The script ends by removing the tags, as the pass does (diff above).
// SCRIPT: // Remove the tags and the front end's mark, as the pass does.
// SCRIPT: transform.apply_registered_pass "mlir-rl-strip-op-ids"
// SCRIPT-NEXT: transform.yield

// CHECK-LABEL: func.func @conv
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         scf.forall
// CHECK:         vector.multi_reduction
// KEEP-LABEL:  func.func @conv
// KEEP:          linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<1x16x18x18xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @maxpool
// CHECK-NOT:     linalg.pooling_nchw_max
// KEEP-LABEL:  func.func @maxpool
// KEEP:          linalg.pooling_nchw_max
func.func @maxpool(%x: tensor<1x8x17x17xf32>) -> tensor<1x8x8x8xf32> {
  %m = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
       ins(%x, %k : tensor<1x8x17x17xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @depthwise_nchw
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
// KEEP-LABEL:  func.func @depthwise_nchw
// KEEP:          linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise_nchw(%x: tensor<1x16x17x17xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
       ins(%x, %w : tensor<1x16x17x17xf32>, tensor<16x3x3xf32>) outs(%f : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %r : tensor<1x16x8x8xf32>
}

// Not unrolled: no per-tap column of the filter (tensor<32xf32>).
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK-NOT:     to tensor<32xf32>
// CHECK:         return
// KEEP-LABEL:  func.func @depthwise_nhwc
// KEEP:          linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_nhwc(%x: tensor<1x18x18x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x16x16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x18x18x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}
