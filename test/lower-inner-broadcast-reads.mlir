// A per-channel parameter [C, 1, 1] (batch norm's scale, as torch-mlir
// broadcasts it over NCHW) read by a tile of several channels: the
// vectorizer reads it as vector<C x H x W> with the map (d0, 0, 0), which
// the LLVM lowering made one loop of scalar loads per row (128 loops in a
// 64x2x4 tile; most of ResNet-18's LLVM time). mlir-rl-lower-vectors reads
// the C values once from the tensor without its unit dimensions and
// broadcasts them.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(0,0,8,0) T(0,0,2,4) V"},func.func(mlir-rl-lower-vectors))' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(0,0,8,0) T(0,0,2,4) V"},mlir-rl-lower)' | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @scale
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<16x1x1xf32> into tensor<16xf32>
// CHECK: vector.transfer_read %{{.*}} : tensor<16xf32>, vector<16xf32>
// CHECK: vector.shape_cast %{{.*}} : vector<16xf32> to vector<16x1x1xf32>
// CHECK: vector.broadcast %{{.*}} : vector<16x1x1xf32> to vector<1x16x2x4xf32>
// CHECK-NOT: permutation_map
// CHECK: arith.mulf
// LLVM: llvm.func @scale
// LLVM: llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
func.func @scale(%x: tensor<1x16x56x56xf32>, %s: tensor<16x1x1xf32>) -> tensor<1x16x56x56xf32> {
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x16x56x56xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x56x56xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x16x56x56xf32>
  return %r : tensor<1x16x56x56xf32>
}
