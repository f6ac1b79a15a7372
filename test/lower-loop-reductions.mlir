// A reduction tiled along its reduced dimension: the loop carries a
// tile-shaped accumulator combined elementwise, and the tile is reduced once
// after the loop (not a transpose and a chain of dependent ops per step).
// Sums are reassociated; a tile over 512 elements keeps the per-step form.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-vectors))' | FileCheck %s

// CHECK-LABEL: func.func @row_max_tiled
// CHECK: %[[ID:.*]] = arith.constant dense<0xFF800000> : vector<8x16xf32>
// CHECK: %[[L:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[ID]]) -> (vector<8x16xf32>)
// CHECK-NOT: vector.transpose
// CHECK:   arith.maximumf %{{.*}}, %[[A]] : vector<8x16xf32>
// CHECK: }
// CHECK: vector.transpose %[[L]]
func.func @row_max_tiled(%t: tensor<8x384xf32>, %init: vector<8xf32>) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c384 = arith.constant 384 : index
  %p = ub.poison : f32
  %r = scf.for %k = %c0 to %c384 step %c16 iter_args(%acc = %init) -> (vector<8xf32>) {
    %v = vector.transfer_read %t[%c0, %k], %p {in_bounds = [true, true]} : tensor<8x384xf32>, vector<8x16xf32>
    %m = vector.multi_reduction <maximumf>, %v, %acc [1] : vector<8x16xf32> to vector<8xf32>
    scf.yield %m : vector<8xf32>
  }
  return %r : vector<8xf32>
}

// CHECK-LABEL: func.func @row_sum_tiled
// CHECK: arith.constant dense<-0.000000e+00> : vector<4x32xf32>
// CHECK: scf.for {{.*}} -> (vector<4x32xf32>)
// CHECK:   arith.addf %{{.*}} : vector<4x32xf32>
func.func @row_sum_tiled(%t: tensor<4x256xf32>, %init: vector<4xf32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %p = ub.poison : f32
  %r = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %init) -> (vector<4xf32>) {
    %v = vector.transfer_read %t[%c0, %k], %p {in_bounds = [true, true]} : tensor<4x256xf32>, vector<4x32xf32>
    %m = vector.multi_reduction <add>, %v, %acc [1] : vector<4x32xf32> to vector<4xf32>
    scf.yield %m : vector<4xf32>
  }
  return %r : vector<4xf32>
}

// CHECK-LABEL: func.func @too_large
// CHECK: scf.for {{.*}} -> (vector<16xf32>)
func.func @too_large(%t: tensor<16x512xf32>, %init: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %p = ub.poison : f32
  %r = scf.for %k = %c0 to %c512 step %c64 iter_args(%acc = %init) -> (vector<16xf32>) {
    %v = vector.transfer_read %t[%c0, %k], %p {in_bounds = [true, true]} : tensor<16x512xf32>, vector<16x64xf32>
    %m = vector.multi_reduction <add>, %v, %acc [1] : vector<16x64xf32> to vector<16xf32>
    scf.yield %m : vector<16xf32>
  }
  return %r : vector<16xf32>
}
