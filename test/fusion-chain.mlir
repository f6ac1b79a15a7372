// Tiled fusion along a matmul -> bias -> relu chain, through mlir-rl-opt.
// RUN: %mlir_rl_opt %s \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="3: TF(16,64); 2: T(8,0); 1: TF(16,32,0)"})' | FileCheck %s --check-prefix=CHAIN

// matmul -> bias -> relu: the bias (op 2) is fused into relu's forall and then
// tiled there; the matmul gets its own forall with its fill fused.
// CHAIN-LABEL: func.func @chain
// CHAIN: scf.forall
// CHAIN:   linalg.fill {{.*}} -> tensor<16x32xf32>
// CHAIN:   linalg.matmul {{.*}} -> tensor<16x32xf32>
// CHAIN: scf.forall
// CHAIN:   scf.for
// CHAIN:     linalg.generic
// CHAIN:       arith.addf
// CHAIN:   linalg.generic
// CHAIN:     arith.maximumf
// CHAIN:   scf.forall.in_parallel
func.func @chain(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x128xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                            iterator_types = ["parallel", "parallel"]}
       ins(%mm, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e1 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
       ins(%biased : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
