// Contractions that reduce the innermost dimension of both operands (A x B^T,
// a batch-1 linear layer reading its [N, K] weight by row) lower to one
// vector.reduction per output element when the tile has one row or reduces
// at least 64 elements; others (several rows and a short reduction, or B
// read as [K, N]) to outer products.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-vectors))' | FileCheck %s

#abt = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
#ab = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
#its = ["parallel", "parallel", "reduction"]

// CHECK-LABEL: func.func @one_row
// CHECK-NOT: vector.fma
// CHECK-COUNT-8: vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK-NOT: vector.fma
// CHECK: return
func.func @one_row(%a: vector<1x16xf32>, %b: vector<8x16xf32>, %c: vector<1x8xf32>) -> vector<1x8xf32> {
  %r = vector.contract {indexing_maps = #abt, iterator_types = #its, kind = #vector.kind<add>}
       %a, %b, %c : vector<1x16xf32>, vector<8x16xf32> into vector<1x8xf32>
  return %r : vector<1x8xf32>
}

// CHECK-LABEL: func.func @long_reduction
// CHECK-COUNT-8: vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK-NOT: vector.fma
// CHECK: return
func.func @long_reduction(%a: vector<2x64xf32>, %b: vector<4x64xf32>, %c: vector<2x4xf32>) -> vector<2x4xf32> {
  %r = vector.contract {indexing_maps = #abt, iterator_types = #its, kind = #vector.kind<add>}
       %a, %b, %c : vector<2x64xf32>, vector<4x64xf32> into vector<2x4xf32>
  return %r : vector<2x4xf32>
}

// CHECK-LABEL: func.func @rows_short_reduction
// CHECK-NOT: vector.reduction
// CHECK: vector.fma
// CHECK: return
func.func @rows_short_reduction(%a: vector<8x8xf32>, %b: vector<32x8xf32>, %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %r = vector.contract {indexing_maps = #abt, iterator_types = #its, kind = #vector.kind<add>}
       %a, %b, %c : vector<8x8xf32>, vector<32x8xf32> into vector<8x32xf32>
  return %r : vector<8x32xf32>
}

// CHECK-LABEL: func.func @b_by_column
// CHECK-NOT: vector.reduction
// CHECK: vector.fma
// CHECK: return
func.func @b_by_column(%a: vector<1x64xf32>, %b: vector<64x8xf32>, %c: vector<1x8xf32>) -> vector<1x8xf32> {
  %r = vector.contract {indexing_maps = #ab, iterator_types = #its, kind = #vector.kind<add>}
       %a, %b, %c : vector<1x64xf32>, vector<64x8xf32> into vector<1x8xf32>
  return %r : vector<1x8xf32>
}
