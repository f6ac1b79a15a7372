// mlir-rl-prepare, the front end for imported IR: a torch-mlir-style block
// (two convolutions sharing one CSE'd fill, batch norm as one-op generics,
// relu, a named linalg.add and linalg.negf, a pad before the next
// convolution) becomes: each convolution an im2col copy and a matmul with
// its own fill, the whole elementwise
// chain in one generic (the per-channel rsqrt, which the chain broadcasts,
// stays apart: fused it would be recomputed per pixel), the pad folded into
// the chain's output (a filled tensor, the chain written into its interior).
// With NCHW convolutions kept NCHW (the steps of mlir-rl-prepare, spelled
// out with nchw-pixel-rows=false):
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-conv-to-matmul{nchw-pixel-rows=false},mlir-rl-unroll-windows,canonicalize,cse,mlir-rl-untie-inits,mlir-rl-pad-to-tiles)' | FileCheck %s
// By default the convolutions (8 and 16 channels) become pixel rows:
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-prepare)' | FileCheck %s --check-prefix=PIXEL
// The untie step alone clones the shared fill, and nothing else:
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-untie-inits)' | FileCheck %s --check-prefix=UNTIE
// Prepared and scheduled by the policy in one mlir-opt: the result verifies.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-prepare,linalg-rl-schedule,mlir-rl-lower)' -o /dev/null

// CHECK-LABEL: func.func @block
// The convolutions become im2col copies and matmuls (mlir-rl-conv-to-matmul);
// the first two read the same input, so CSE leaves them one copy (nine
// copies, one per filter tap).
// CHECK-COUNT-9: linalg.generic {{.*}} outs(%{{.+}} : tensor<8x1x1x8x8xf32>)
// CHECK-NOT:   linalg.generic {{.*}} outs(%{{.+}} : tensor<8x1x1x8x8xf32>)
// CHECK:       %[[COLC:.+]] = tensor.collapse_shape %{{.+}} : tensor<8x3x3x8x8xf32> into tensor<72x64xf32>
// CHECK:       %[[F1:.+]] = linalg.fill {{.*}} -> tensor<16x64xf32>
// CHECK:       %[[F2:.+]] = linalg.fill {{.*}} -> tensor<16x64xf32>
// CHECK:       %[[M1:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[COLC]] : tensor<16x72xf32>, tensor<72x64xf32>) outs(%[[F2]] :
// CHECK:       %[[C1:.+]] = tensor.expand_shape %[[M1]]
// CHECK:       %[[F3:.+]] = linalg.fill {{.*}} -> tensor<16x64xf32>
// CHECK:       %[[M2:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[COLC]] : tensor<16x72xf32>, tensor<72x64xf32>) outs(%[[F3]] :
// CHECK:       %[[C2:.+]] = tensor.expand_shape %[[M2]]
// CHECK:       %[[RS:.+]] = linalg.generic
// CHECK:         math.rsqrt
// CHECK:       %[[PADF:.+]] = linalg.fill {{.*}} -> tensor<1x16x10x10xf32>
// CHECK:       %[[CHAIN:.+]] = linalg.generic {{.*}} ins(%[[C1]], %{{.*}}, %[[RS]], %[[C2]] :
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    arith.subf
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    arith.cmpf
// CHECK-NEXT:    arith.select
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    arith.negf
// CHECK-NEXT:    linalg.yield
// CHECK:       %[[PADDED:.+]] = tensor.insert_slice %[[CHAIN]] into %[[PADF]][0, 0, 1, 1]
// CHECK:       %[[PC:.+]] = tensor.collapse_shape %[[PADDED]]
// CHECK:       %[[TAP:.+]] = tensor.extract_slice %[[PC]][0, 0, 0] [16, 8, 8] [1, 1, 1] : tensor<16x10x10xf32> to tensor<16x8x8xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[TAP]] : tensor<16x8x8xf32>)
// CHECK-COUNT-8: linalg.generic {{.*}} outs(%{{.+}} : tensor<16x1x1x8x8xf32>)
// CHECK:       %[[COL3C:.+]] = tensor.collapse_shape %{{.+}} : tensor<16x3x3x8x8xf32> into tensor<144x64xf32>
// CHECK:       %[[M3:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[COL3C]] : tensor<16x144xf32>, tensor<144x64xf32>) outs(%[[F1]] :
// CHECK-NOT:   linalg.generic
// CHECK:       return

// PIXEL-LABEL: func.func @block
// The third convolution's constant filter, transposed to HWCF and collapsed
// to [K, F] at compile time:
// PIXEL:       arith.constant dense<1.000000e+00> : tensor<144x16xf32>
// The input transposed to NHWC, one copy per tap into [OH, OW, KH, KW, C]:
// PIXEL-COUNT-9: linalg.generic {{.*}} outs(%{{.+}} : tensor<8x8x1x1x8xf32>)
// PIXEL-NOT:   linalg.generic {{.*}} outs(%{{.+}} : tensor<8x8x1x1x8xf32>)
// PIXEL:       %[[COL:.+]] = tensor.collapse_shape %{{.+}} : tensor<8x8x3x3x8xf32> into tensor<64x72xf32>
// A row per pixel, the filter as B:
// PIXEL:       linalg.generic {{.*}} ins(%[[COL]], %{{.+}} : tensor<64x72xf32>, tensor<72x16xf32>)
// PIXEL:       linalg.generic {{.*}} ins(%[[COL]], %{{.+}} : tensor<64x72xf32>, tensor<72x16xf32>)
// The chain reads both results through the transposes back to NCHW:
// PIXEL:       %[[CHAIN:.+]]:2 = linalg.generic
// PIXEL:       tensor.insert_slice %[[CHAIN]]#1
// PIXEL-COUNT-9: linalg.generic {{.*}} outs(%{{.+}} : tensor<8x8x1x1x16xf32>)
// PIXEL:       linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x144xf32>, tensor<144x16xf32>)
// PIXEL:       return

// UNTIE-LABEL: func.func @block
// UNTIE:       %[[F:.+]] = linalg.fill
// UNTIE:       %[[G:.+]] = linalg.fill
// UNTIE-NEXT:  linalg.conv_2d_nchw_fchw {{.*}} outs(%[[G]] :
// UNTIE-NEXT:  linalg.conv_2d_nchw_fchw {{.*}} outs(%[[F]] :
// UNTIE-COUNT-3: linalg.generic
// UNTIE:       linalg.add
// UNTIE:       linalg.negf

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#v = affine_map<(d0) -> (d0)>
func.func @block(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %w2: tensor<16x8x3x3xf32>, %mean: tensor<16xf32>, %var: tensor<16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<1x16x8x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w2 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%var : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %m3 = tensor.expand_shape %mean [[0, 1, 2]] output_shape [16, 1, 1] : tensor<16xf32> into tensor<16x1x1xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [16, 1, 1] : tensor<16xf32> into tensor<16x1x1xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %m3 : tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %a = arith.subf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<1x16x8x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %s3 : tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %a = arith.mulf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<1x16x8x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x16x8x8xf32>) outs(%e : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %p = arith.cmpf ugt, %in, %cst : f32
    %r = arith.select %p, %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<1x16x8x8xf32>
  %4 = linalg.add ins(%3, %c2 : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %5 = linalg.negf ins(%4 : tensor<1x16x8x8xf32>) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %padded = tensor.pad %5 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a0: index, %a1: index, %a2: index, %a3: index):
    tensor.yield %cst : f32
  } : tensor<1x16x8x8xf32> to tensor<1x16x10x10xf32>
  %e2 = tensor.empty() : tensor<1x16x8x8xf32>
  %f2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %wd = arith.constant dense<1.0> : tensor<16x16x3x3xf32>
  %6 = linalg.conv_2d_nchw_fchw ins(%padded, %wd : tensor<1x16x10x10xf32>, tensor<16x16x3x3xf32>) outs(%f2 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %6, %c2 : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}
