// mlir-rl-compute-in-f32: a bf16 reduction accumulates in f32 and is rounded
// once afterwards (a named matmul stays a named matmul on its inputs
// extended to f32, its fill becomes an f32 fill); a convolution that reads
// bf16 into an f32 accumulator (torch-mlir's form) reads its inputs
// extended; an elementwise body computes in f32 between one extension per
// input and one rounding at its yield; a scalar from outside the body is
// extended too; ops that only move data and f32 ops are left alone.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-compute-in-f32))' | FileCheck %s
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#red = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @matmul_bias_tanh
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<64x256xbf16>) outs(%{{.*}} : tensor<64x256xf32>)
// CHECK:           arith.extf
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<256x128xbf16>) outs(%{{.*}} : tensor<256x128xf32>)
// CHECK:           arith.extf
// CHECK:         %[[Z:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<64x128xf32>)
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<64x256xf32>, tensor<256x128xf32>) outs(%[[F]] : tensor<64x128xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<64x128xf32>) outs(%{{.*}} : tensor<64x128xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[T]] : bf16
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<64x128xbf16>, tensor<128xbf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG:       %[[EA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-DAG:       %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-DAG:       %[[EPS:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[S:.*]] = arith.addf %[[EA]], %[[EB]] : f32
// CHECK:           %[[S2:.*]] = arith.mulf %[[S]], %[[EPS]] : f32
// CHECK:           %[[H:.*]] = math.tanh %[[S2]] : f32
// CHECK:           %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:           %[[Q:.*]] = arith.mulf %[[H]], %[[C]] : f32
// CHECK:           %[[O:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[O]] : bf16
func.func @matmul_bias_tanh(%a: tensor<64x256xbf16>, %b: tensor<256x128xbf16>,
                            %bias: tensor<128xbf16>, %scale: bf16) -> tensor<64x128xbf16> {
  %c0 = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %f = linalg.fill ins(%c0 : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %m = linalg.matmul ins(%a, %b : tensor<64x256xbf16>, tensor<256x128xbf16>)
                     outs(%f : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%m, %bias : tensor<64x128xbf16>, tensor<128xbf16>) outs(%e : tensor<64x128xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %s = arith.addf %x, %y : bf16
    %s2 = arith.mulf %s, %scale : bf16
    %t = math.tanh %s2 : bf16
    %h = arith.constant 0.5 : bf16
    %q = arith.mulf %t, %h : bf16
    linalg.yield %q : bf16
  } -> tensor<64x128xbf16>
  return %r : tensor<64x128xbf16>
}

// A row sum of exp over f16 data: the generic's accumulator is an f32
// tensor (the init is not a fill: its elements are extended), its body
// extends the input once, and the result is rounded to f16 afterwards.
// CHECK-LABEL: func.func @row_sum_exp
// CHECK:         %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf16>) outs(%{{.*}} : tensor<32xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<32x64xf16>) outs(%[[X]] : tensor<32xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = math.exp %[[E]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<32xf32>) outs(%{{.*}} : tensor<32xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @row_sum_exp(%x: tensor<32x64xf16>, %init: tensor<32xf16>) -> tensor<32xf16> {
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<32x64xf16>) outs(%init : tensor<32xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %p = math.exp %in : f16
    %q = arith.addf %p, %acc : f16
    linalg.yield %q : f16
  } -> tensor<32xf16>
  return %s : tensor<32xf16>
}

// Ops that only move bf16 data stay as they are.
// CHECK-LABEL: func.func @moves
// CHECK-NOT:     f32
// CHECK:         linalg.transpose
// CHECK-NOT:     f32
// CHECK:         return
func.func @moves(%x: tensor<32x64xbf16>) -> tensor<64x32xbf16> {
  %e = tensor.empty() : tensor<64x32xbf16>
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, 0]
  return %t : tensor<64x32xbf16>
}

// f32 code is not touched.
// CHECK-LABEL: func.func @f32_matmul
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK-NEXT:    return
func.func @f32_matmul(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @mixed_conv
// CHECK:         %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x10x10xbf16>) outs(%{{.*}} : tensor<1x4x10x10xf32>)
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4x3x3xbf16>) outs(%{{.*}} : tensor<8x4x3x3xf32>)
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[W]] : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%{{.*}} : tensor<1x8x8x8xf32>)
func.func @mixed_conv(%x: tensor<1x4x10x10xbf16>, %w: tensor<8x4x3x3xbf16>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x4x10x10xbf16>, tensor<8x4x3x3xbf16>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c : tensor<1x8x8x8xf32>
}

// A body op with an operand of another type (fpowi's i64 exponent) is
// computed in f32; a value from outside the body yielded as it is stays.
// CHECK-LABEL: func.func @pow_and_outside
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      %[[E:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      %[[P:.*]] = math.fpowi %[[E]], %{{.*}} : f32, i64
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[T]], %[[C:.*]] : bf16, bf16
func.func @pow_and_outside(%x: tensor<8x16xbf16>, %c: bf16) -> (tensor<8x16xbf16>, tensor<8x16xbf16>) {
  %two = arith.constant 2 : i64
  %e = tensor.empty() : tensor<8x16xbf16>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<8x16xbf16>) outs(%e, %e : tensor<8x16xbf16>, tensor<8x16xbf16>) {
  ^bb0(%in: bf16, %o: bf16, %o2: bf16):
    %p = math.fpowi %in, %two : bf16, i64
    linalg.yield %p, %c : bf16, bf16
  } -> (tensor<8x16xbf16>, tensor<8x16xbf16>)
  return %r#0, %r#1 : tensor<8x16xbf16>, tensor<8x16xbf16>
}
