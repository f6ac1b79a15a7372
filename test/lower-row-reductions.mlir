// Multi-reductions along a long innermost run (a softmax's row max and row
// sum) lower to one vector.reduction per row; others (a short run, an outer
// reduced dimension) are transposed into elementwise ops across rows.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-vectors))' | FileCheck %s

// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: vector.transpose
// CHECK-COUNT-4: vector.reduction <add>, %{{.*}}, %{{.*}} : vector<384xf32> into f32
// CHECK-NOT: vector.multi_reduction
func.func @row_sum(%v: vector<4x384xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %r = vector.multi_reduction <add>, %v, %acc [1] : vector<4x384xf32> to vector<4xf32>
  return %r : vector<4xf32>
}

// CHECK-LABEL: func.func @row_max_short
// CHECK-NOT: vector.reduction
// CHECK-COUNT-16: arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @row_max_short(%v: vector<8x16xf32>, %acc: vector<8xf32>) -> vector<8xf32> {
  %r = vector.multi_reduction <maximumf>, %v, %acc [1] : vector<8x16xf32> to vector<8xf32>
  return %r : vector<8xf32>
}

// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: vector.reduction
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<384xf32>
func.func @column_sum(%v: vector<64x384xf32>, %acc: vector<384xf32>) -> vector<384xf32> {
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<64x384xf32> to vector<384xf32>
  return %r : vector<384xf32>
}
