// A matmul tiled along K reads its accumulator tile at every K step and
// writes it back; mlir-rl-lower-vectors carries it through the K loop as a
// vector instead (read before the loop, written after it).
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(32,64,0) T(8,32,16) V"},mlir-rl-strip-transform-ir,func.func(canonicalize,mlir-rl-lower-vectors,canonicalize))' | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: %[[LOOP:.*]] = scf.for %{{.*}} = %c0 to %c192 step %c16 iter_args(%[[V:.*]] = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-NOT: tensor<8x32xf32>, vector<8x32xf32>
// CHECK: vector.fma
// CHECK: scf.yield %{{.*}} : vector<8x32xf32>
// CHECK: vector.transfer_write %[[LOOP]]
func.func @matmul(%A: tensor<64x192xf32>, %B: tensor<192x256xf32>) -> tensor<64x256xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x192xf32>, tensor<192x256xf32>) outs(%C : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
