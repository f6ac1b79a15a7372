// Two lowering defects that cost whole models time:
// - a matmul tiled along its reduction bufferized with a copy of each
//   output tile onto itself at every reduction step (memref.copy of two
//   identical subviews, a call to the runtime's generic memrefCopy);
// - a per-channel operand read by the vectorizer as `(0, d0, 0, 0)`
//   became a loop inserting the element lane by lane.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(32,64,0) T(8,32,8) V"},mlir-rl-lower)' | FileCheck %s --check-prefixes=MM,NOCOPY
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="2: TP(0,1,1,0) V"},mlir-rl-lower-vectors)' | FileCheck %s --check-prefix=BCAST

// MM: llvm.func @matmul
// MM: omp.parallel
// NOCOPY-NOT: memrefCopy
// NOCOPY-NOT: llvm.intr.memcpy
func.func @matmul(%A: tensor<64x192xf32>, %B: tensor<192x256xf32>) -> tensor<64x256xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x192xf32>, tensor<192x256xf32>) outs(%C : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

// BCAST-LABEL: func.func @scale
// BCAST: scf.forall
// BCAST: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x1x1xf32>
// BCAST: vector.broadcast %{{.*}} : f32 to vector<1x1x1x56xf32>
// BCAST-NOT: permutation_map
// BCAST: vector.transfer_write
func.func @scale(%x: tensor<1x16x56x56xf32>, %s: tensor<16x1x1xf32>) -> tensor<1x16x56x56xf32> {
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x16x56x56xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x56x56xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x16x56x56xf32>
  return %r : tensor<1x16x56x56xf32>
}
