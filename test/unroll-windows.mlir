// mlir-rl-unroll-windows (a step of mlir-rl-prepare): depthwise convolutions
// and poolings become elementwise generics over strided views of the input,
// one per window tap, with the named op's body once per tap; a window with
// more taps than one op may take operands becomes a chain.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-unroll-windows{nhwc-depthwise=true})' | FileCheck %s
// By default NHWC depthwise convolutions stay (upstream vectorizes them).
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-unroll-windows)' | FileCheck %s --check-prefix=KEEP
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-unroll-windows{max-taps=4})' | FileCheck %s --check-prefix=SMALL
// Prepared, scheduled by the policy and lowered: the result verifies.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-prepare,linalg-rl-schedule,mlir-rl-lower)' -o /dev/null

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>

// A 3x3 depthwise convolution, stride 2, dilation 2: 9 taps, 6 in the first
// generic (6 views, 6 filter columns, the init) and 3 in the second.
// SMALL-LABEL: func.func @depthwise_nchw
// SMALL: linalg.depthwise_conv_2d_nchw_chw
// CHECK-LABEL: func.func @depthwise_nchw
// CHECK-SAME:    %[[X:.+]]: tensor<1x8x13x13xf32>, %[[W:.+]]: tensor<8x3x3xf32>, %[[O:.+]]: tensor<1x8x5x5xf32>
// CHECK:         %[[V0:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 8, 5, 5] [1, 1, 2, 2]
// CHECK:         %[[W0:.+]] = tensor.extract_slice %[[W]][0, 0, 0] [8, 1, 1] [1, 1, 1] : tensor<8x3x3xf32> to tensor<8xf32>
// CHECK:         %[[V1:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 2] [1, 8, 5, 5] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[W]][0, 0, 1] [8, 1, 1]
// CHECK:         tensor.extract_slice %[[X]][0, 0, 4, 4] [1, 8, 5, 5] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[W]][0, 2, 2] [8, 1, 1]
// CHECK:         %[[G1:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V0]], %[[V1]], {{.*}}) outs(%[[O]] : tensor<1x8x5x5xf32>)
// CHECK-NEXT:    ^bb0(%[[A0:[^:]+]]: f32, {{.*}}, %[[B0:[^:]+]]: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %[[OUT:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[A0]], %[[B0]]
// CHECK-NEXT:      arith.addf %[[OUT]], %[[M]]
// CHECK-COUNT-5:   arith.mulf
// CHECK:         %[[G2:.+]] = linalg.generic {{.*}} outs(%[[G1]] : tensor<1x8x5x5xf32>)
// CHECK-COUNT-3:   arith.mulf
// CHECK-NOT:       arith.mulf
// CHECK:         return %[[G2]]
func.func @depthwise_nchw(%x: tensor<1x8x13x13xf32>, %w: tensor<8x3x3xf32>, %o: tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : tensor<1x8x13x13xf32>, tensor<8x3x3xf32>) outs(%o : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  return %r : tensor<1x8x5x5xf32>
}

// NHWC: the channel is the last dimension; the filter is [KH, KW, C].
// CHECK-LABEL: func.func @depthwise_nhwc
// KEEP-LABEL: func.func @depthwise_nhwc
// KEEP: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK:         tensor.extract_slice %{{.+}}[1, 1, 0] [1, 1, 16] [1, 1, 1] : tensor<2x2x16xf32> to tensor<16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]], #{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #[[ID]]]
// CHECK-NOT:     linalg.depthwise
func.func @depthwise_nhwc(%x: tensor<1x9x9x16xf32>, %w: tensor<2x2x16xf32>, %o: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %w : tensor<1x9x9x16xf32>, tensor<2x2x16xf32>) outs(%o : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// Max pooling keeps its combiner (maximumf); the window tensor is dropped.
// CHECK-LABEL: func.func @maxpool
// CHECK:         linalg.generic {{.*}} ins(%{{[^:]+}} : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) outs(
// CHECK-COUNT-4:   arith.maximumf
// CHECK-NEXT:      linalg.yield
// SMALL-LABEL: func.func @maxpool
// SMALL-NOT: linalg.pooling
func.func @maxpool(%x: tensor<1x4x6x6xf32>, %o: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %k = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %k : tensor<1x4x6x6xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %r : tensor<1x4x3x3xf32>
}

// Integer sum pooling in NHWC.
// CHECK-LABEL: func.func @sumpool_nhwc
// CHECK-COUNT-9:   arith.addi
// CHECK-NOT:     linalg.pooling
// SMALL-LABEL: func.func @sumpool_nhwc
// SMALL: linalg.pooling_nhwc_sum
func.func @sumpool_nhwc(%x: tensor<1x5x5x3xi32>, %o: tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32> {
  %k = tensor.empty() : tensor<3x3xi32>
  %r = linalg.pooling_nhwc_sum ins(%x, %k : tensor<1x5x5x3xi32>, tensor<3x3xi32>) outs(%o : tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
  return %r : tensor<1x3x3x3xi32>
}
