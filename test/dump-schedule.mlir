// dump-schedule writes a transform script that replays the schedule on the
// original input with the upstream transform interpreter, giving the same IR.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="3: TF(16,64) V; 2: V; 1: TF(16,32,0) T(8,32,1) V" dump-schedule=%t.transform.mlir})' -o %t.scheduled.mlir
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.transform.mlir
// RUN: %mlir_opt %s -p 'builtin.module(transform-preload-library{transform-library-paths=%t.transform.mlir},transform-interpreter)' -o %t.replayed-tagged.mlir
// RUN: sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' %t.replayed-tagged.mlir > %t.replayed.mlir
// RUN: diff %t.scheduled.mlir %t.replayed.mlir

// SCRIPT: // Schedule: 3: TF(16,64) V; 2: V; 1: TF(16,32,0) T(8,32,1) V
// SCRIPT: transform.named_sequence @__transform_main
// SCRIPT: // Number the linalg ops in pre-order, as the pass does.
// SCRIPT: transform.split_handle
// SCRIPT: // 3: TF(16,64)
// SCRIPT: %[[C3:[0-9]+]]:2 = transform.split_handle
// SCRIPT: %[[P3:[0-9]+]] = transform.get_producer_of_operand %[[C3]]#0[0]
// SCRIPT: %{{.*}}, %[[F3:.*]] = transform.structured.tile_using_forall %[[C3]]#0 tile_sizes [16, 64]
// SCRIPT: transform.structured.fuse_into_containing_op %[[P3]] into %[[F3]]
// SCRIPT: transform.apply_dce
// SCRIPT: // 3: V
// SCRIPT: transform.structured.vectorize
// SCRIPT: // 2: V
// SCRIPT: // 1: TF(16,32,0)
// SCRIPT: // 1: T(8,32,1)
// SCRIPT: transform.structured.tile_using_for %{{.*}} tile_sizes [8, 32, 1]
// SCRIPT: // 1: V
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
