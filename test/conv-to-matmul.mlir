// mlir-rl-conv-to-matmul (a step of mlir-rl-prepare): a 2-D convolution
// becomes an im2col copy (one identity copy per filter tap from a strided
// view of the input, or with max-tap-copies=0 one generic with affine window
// accesses), collapsed, and a matmul-like generic whose result is expanded
// back; a 1x1 stride-1 convolution needs no copy; min-macs and mixed element
// types leave convolutions alone.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{pad-multiple=1 max-tap-copies=0})' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{pad-multiple=1})' | FileCheck %s --check-prefix=TAPS
// With the default padding to multiples of 8:
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul)' | FileCheck %s --check-prefix=PAD
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{min-macs=1000000000})' | FileCheck %s --check-prefix=BIG
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{max-pad-multiple=64 min-reduction-pad-multiple=8})' | FileCheck %s --check-prefix=PAD64
// A padding multiple that is not a power of two is refused (the multiples are
// halved from it, and the policy's power-of-two tiles would not divide them):
// RUN: not %mlir_rl_opt %s -p 'builtin.module(mlir-rl-conv-to-matmul{max-pad-multiple=48})' 2>&1 | FileCheck %s --check-prefix=NOTPOW2
// NOTPOW2: error: mlir-rl-conv-to-matmul: max-pad-multiple=48 is not a power of two (1 for no padding)
// Prepared, scheduled by the policy and lowered: the result verifies.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-prepare,linalg-rl-schedule,mlir-rl-lower)' -o /dev/null

// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3 * 2 + d1 * 3, d4 * 2 + d2 * 3)>
// CHECK-DAG: #[[ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// TAPS-DAG: #[[TAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// TAPS-DAG: #[[ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// TAPS-LABEL: func.func @nchw
// Tap (kh, kw) reads the input from (3*kh, 3*kw) (dilation 3) with stride 2
// into col[:, kh, kw, :, :]; nine copies, each vectorizable.
// TAPS:         %[[XC:.+]] = tensor.collapse_shape
// TAPS:         %[[E:.+]] = tensor.empty() : tensor<4x3x3x4x4xf32>
// TAPS:         %[[IN0:.+]] = tensor.extract_slice %[[XC]][0, 0, 0] [4, 4, 4] [1, 2, 2] : tensor<4x13x13xf32> to tensor<4x4x4xf32>
// TAPS:         %[[OUT0:.+]] = tensor.extract_slice %[[E]][0, 0, 0, 0, 0] [4, 1, 1, 4, 4] [1, 1, 1, 1, 1]
// TAPS:         %[[C0:.+]] = linalg.generic {indexing_maps = [#[[TAP]], #[[ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[IN0]] : tensor<4x4x4xf32>) outs(%[[OUT0]] : tensor<4x1x1x4x4xf32>)
// TAPS:         tensor.insert_slice %[[C0]] into %[[E]][0, 0, 0, 0, 0] [4, 1, 1, 4, 4] [1, 1, 1, 1, 1]
// TAPS-COUNT-7: tensor.insert_slice
// TAPS:         tensor.extract_slice %[[XC]][0, 6, 6] [4, 4, 4] [1, 2, 2]
// TAPS:         %[[C8:.+]] = linalg.generic
// TAPS:         %[[LAST:.+]] = tensor.insert_slice %[[C8]] into %{{.+}}[0, 2, 2, 0, 0] [4, 1, 1, 4, 4]
// TAPS:         tensor.collapse_shape %[[LAST]] {{\[}}[0, 1, 2], [3, 4]] : tensor<4x3x3x4x4xf32> into tensor<36x16xf32>
// TAPS-LABEL: func.func @nhwc_hwcf_batch
// TAPS-COUNT-9: linalg.generic {{.*}} outs(%{{.+}} : tensor<2x8x8x1x1x3xf32>)

// BIG-LABEL: func.func @nchw
// BIG: linalg.conv_2d_nchw_fchw
// PAD-LABEL: func.func @nchw
// K = 4*3*3 = 36 is padded to 4*3*4 = 48: the copy writes the real taps into
// a zero-filled tensor, the filter is padded with zeros.
// PAD:         %[[Z:.+]] = linalg.fill {{.*}} -> tensor<4x3x4x4x4xf32>
// PAD:         %[[S:.+]] = tensor.extract_slice %[[Z]][0, 0, 0, 0, 0] [4, 1, 1, 4, 4] [1, 1, 1, 1, 1]
// PAD:         %[[C:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x1x1x4x4xf32>)
// PAD:         tensor.insert_slice %[[C]] into %[[Z]]
// PAD:         %[[I:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 2, 2, 0, 0] [4, 1, 1, 4, 4]
// PAD:         tensor.collapse_shape %[[I]] {{\[}}[0, 1, 2], [3, 4]] : tensor<4x3x4x4x4xf32> into tensor<48x16xf32>
// PAD:         tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 0, 1]
// PAD:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8x48xf32>, tensor<48x16xf32>) outs(%{{.+}} : tensor<8x16xf32>)
// A 3-channel 3x3 filter: K = 27 is padded to 3x4x3 = 36 (a multiple of 4
// for 1/3 more work); to a multiple of 8 (min-reduction-pad-multiple=8) it
// was 3x8x3 = 72.
// PAD-LABEL: func.func @nhwc_hwcf_batch
// PAD:         tensor.collapse_shape %{{.+}} : tensor<2x8x8x3x4x3xf32> into tensor<2x64x36xf32>
// PAD:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x64x36xf32>, tensor<36x16xf32>)
// PAD64-LABEL: func.func @nhwc_hwcf_batch
// PAD64:         tensor.collapse_shape %{{.+}} : tensor<2x8x8x3x8x3xf32> into tensor<2x64x72xf32>
// PAD-LABEL: func.func @pointwise
// 7x7 pixels are padded to 8x8 (a multiple of 64 for 1/3 more work): the
// output is computed padded and sliced.
// PAD:         tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// PAD:         linalg.generic {{.*}} outs(%{{.+}} : tensor<16x64xi32>)
// PAD:         %[[E:.+]] = tensor.expand_shape %{{.+}} : tensor<16x64xi32> into tensor<1x16x8x8xi32>
// PAD:         %[[R:.+]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 16, 7, 7] [1, 1, 1, 1]
// PAD:         return %[[R]]
// CHECK-LABEL: func.func @nchw
// CHECK-SAME:    %[[X:.+]]: tensor<1x4x13x13xf32>, %[[W:.+]]: tensor<8x4x3x3xf32>
// CHECK:         %[[XC:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2], [3]] : tensor<1x4x13x13xf32> into tensor<4x13x13xf32>
// CHECK:         %[[COL:.+]] = linalg.generic {indexing_maps = [#[[WIN]], #[[ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[XC]] : tensor<4x13x13xf32>) outs(%{{.+}} : tensor<4x3x3x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]]
// CHECK:         %[[COL2:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0, 1, 2], [3, 4]] : tensor<4x3x3x4x4xf32> into tensor<36x16xf32>
// CHECK:         %[[WC:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<8x4x3x3xf32> into tensor<8x36xf32>
// CHECK:         %[[MM:.+]] = linalg.generic {indexing_maps = [#[[MK]], #[[KN]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[WC]], %[[COL2]] : tensor<8x36xf32>, tensor<36x16xf32>) outs(%{{.+}} : tensor<8x16xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32):
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[C]], %[[P]]
// CHECK-NEXT:      linalg.yield %[[S]]
// CHECK:         %[[R:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
// CHECK:         return %[[R]]
func.func @nchw(%x: tensor<1x4x13x13xf32>, %w: tensor<8x4x3x3xf32>, %o: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<3> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : tensor<1x4x13x13xf32>, tensor<8x4x3x3xf32>) outs(%o : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// Batch 2, NHWC input with an HWCF filter: [N, P, K] x [K, F], batched.
// CHECK-LABEL: func.func @nhwc_hwcf_batch
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : tensor<2x10x10x3xf32>) outs(%{{.+}} : tensor<2x8x8x3x3x3xf32>)
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3, 4, 5]] : tensor<2x8x8x3x3x3xf32> into tensor<2x64x27xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<2x64x27xf32>, tensor<27x16xf32>) outs(%{{.+}} : tensor<2x64x16xf32>)
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3]] output_shape [2, 8, 8, 16] : tensor<2x64x16xf32> into tensor<2x8x8x16xf32>
// CHECK-NOT:     linalg.conv
func.func @nhwc_hwcf_batch(%x: tensor<2x10x10x3xf32>, %w: tensor<3x3x3x16xf32>, %o: tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32> {
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<2x10x10x3xf32>, tensor<3x3x3x16xf32>) outs(%o : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %r : tensor<2x8x8x16xf32>
}

// A 1x1 stride-1 convolution: the input is only collapsed, no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT:     linalg.yield %{{.+}} : i32
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2, 3]] : tensor<1x8x7x7xi32> into tensor<8x49xi32>
// CHECK:         linalg.generic
// CHECK:           arith.muli
// CHECK-NEXT:      arith.addi
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @pointwise(%x: tensor<1x8x7x7xi32>, %w: tensor<16x8x1x1xi32>, %o: tensor<1x16x7x7xi32>) -> tensor<1x16x7x7xi32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x8x7x7xi32>, tensor<16x8x1x1xi32>) outs(%o : tensor<1x16x7x7xi32>) -> tensor<1x16x7x7xi32>
  return %r : tensor<1x16x7x7xi32>
}

// 14x14 pixels are padded to 14x16 (a multiple of 32, 1/7 more work); up to
// multiples of 64 (max-pad-multiple=64) they were 16x16 (30 % more).
// PAD-LABEL: func.func @pointwise_14
// PAD:         linalg.generic {{.*}} outs(%{{.+}} : tensor<16x224xf32>)
// PAD:         tensor.expand_shape %{{.+}} : tensor<16x224xf32> into tensor<1x16x14x16xf32>
// PAD64-LABEL: func.func @pointwise_14
// PAD64:         linalg.generic {{.*}} outs(%{{.+}} : tensor<16x256xf32>)
// PAD64:         tensor.expand_shape %{{.+}} : tensor<16x256xf32> into tensor<1x16x16x16xf32>
func.func @pointwise_14(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x1x1xf32>, %o: tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x8x14x14xf32>, tensor<16x8x1x1xf32>) outs(%o : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %r : tensor<1x16x14x14xf32>
}

// NHWC with an FHWC filter: the filter is read transposed, not copied.
// CHECK-LABEL: func.func @nhwc_fhwc
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<36x36xf64>, tensor<8x36xf64>) outs(%{{.+}} : tensor<36x8xf64>)
func.func @nhwc_fhwc(%x: tensor<1x8x8x4xf64>, %w: tensor<8x3x3x4xf64>, %o: tensor<1x6x6x8xf64>) -> tensor<1x6x6x8xf64> {
  %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<1x8x8x4xf64>, tensor<8x3x3x4xf64>) outs(%o : tensor<1x6x6x8xf64>) -> tensor<1x6x6x8xf64>
  return %r : tensor<1x6x6x8xf64>
}

// Mixed element types are left alone.
// CHECK-LABEL: func.func @mixed
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @mixed(%x: tensor<1x4x6x6xf16>, %w: tensor<8x4x3x3xf16>, %o: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x4x6x6xf16>, tensor<8x4x3x3xf16>) outs(%o : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// NHWC 28x28 pixels are padded as one dimension, at its end: 784 -> 800 (a
// multiple of 32, 2 % more work), where 28x32 would be 896 (14 %). Each tap
// copy writes the first 784 rows of the [800, KH, KW, C] tensor seen as
// [28, 28, ...], whose last 16 rows alone are filled with zeros (not all of
// it: a memset of the whole im2col tensor); the output is the first 784 rows
// of the matmul's.
// PAD-LABEL: func.func @nhwc_28
// PAD:         %[[E:.+]] = tensor.empty() : tensor<800x3x3x8xf32>
// PAD:         %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16x3x3x8xf32>)
// PAD:         %[[F:.+]] = tensor.insert_slice %[[Z]] into %[[E]][784, 0, 0, 0] [16, 3, 3, 8] [1, 1, 1, 1]
// PAD:         %[[R:.+]] = tensor.extract_slice %[[F]][0, 0, 0, 0] [784, 1, 1, 8] [1, 1, 1, 1]
// PAD:         tensor.expand_shape %[[R]] {{\[}}[0, 1], [2], [3], [4]] output_shape [28, 28, 1, 1, 8]
// PAD:         tensor.insert_slice %{{.+}} into %[[F]][0, 0, 0, 0] [784, 1, 1, 8] [1, 1, 1, 1]
// PAD:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : tensor<800x3x3x8xf32> into tensor<800x72xf32>
// PAD:         %[[M:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<800x16xf32>)
// PAD:         %[[S:.+]] = tensor.extract_slice %[[M]][0, 0] [784, 16] [1, 1]
// PAD:         tensor.expand_shape %[[S]] {{\[}}[0, 1, 2], [3]] output_shape [1, 28, 28, 16] : tensor<784x16xf32> into tensor<1x28x28x16xf32>
// PAD64-LABEL: func.func @nhwc_28
// PAD64:         linalg.generic {{.*}} outs(%{{.+}} : tensor<832x16xf32>)
func.func @nhwc_28(%x: tensor<1x30x30x8xf32>, %w: tensor<3x3x8x16xf32>, %o: tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32> {
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x30x30x8xf32>, tensor<3x3x8x16xf32>) outs(%o : tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32>
  return %r : tensor<1x28x28x16xf32>
}
