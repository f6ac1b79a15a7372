// dump-features prints each op's observation (consumer, then last producer)
// and masks as sparse lists, before scheduling it.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{dump-features policy=false})' -o /dev/null | FileCheck %s

// Offsets (FeatureLayout, N=12 M=8 D=12 L=14 tau=5): kind 0, bounds 9,
// iterators 21, vectorizable 33, access 34 (+ (operand*12 + dim)*13 + loop),
// arith 2218, producer features from 3454.
// CHECK: // mlir-rl features op=1 name=linalg.matmul kind=matmul producer=0 loops=[64,128,96] iterators=[parallel,parallel,reduction]
// kind=matmul, log2(1+64), log2(1+128), log2(1+96), iterators p p r,
// A[d0][d2], B[d2][d1], C[d0][d1], one addf and one mulf; then the fill.
// CHECK-SAME: {{$}}
// CHECK-NEXT: // mlir-rl observation op=1 size=6908: 0:1.000000e+00 9:6.022368e+00 10:7.011227e+00 11:6.599913e+00 21:1.000000e+00 22:1.000000e+00 23:-1.000000e+00 34:1.000000e+00 49:1.000000e+00 192:1.000000e+00 204:1.000000e+00 346:1.000000e+00 360:1.000000e+00 2218:1.000000e+00 2219:1.000000e+00 3460:1.000000e+00
// The matmul is too large to vectorize untiled: kinds T TP TF I NT (not V = 4).
// CHECK-NEXT: // mlir-rl mask op=1 size=306: 0 1 2 3 5 6
// CHECK: // mlir-rl features op=0 name=linalg.fill kind=fill producer=-1 loops=[64,128] iterators=[parallel,parallel]
// The fill (8192 points) is too large to vectorize untiled (no 33, no V = 4)
// and has no producer: no TF (2).
// CHECK-NEXT: // mlir-rl observation op=0 size=6908: 6:1.000000e+00 9:6.022368e+00 10:7.011227e+00 21:1.000000e+00 22:1.000000e+00 190:1.000000e+00 204:1.000000e+00{{$}}
// CHECK-NEXT: // mlir-rl mask op=0 size=306: 0 1 3 5 6
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
