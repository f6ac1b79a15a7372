// Tiled fusion of a producer that is also returned, into a consumer that
// reads only part of it (every other column) or overlapping windows of it:
// the tiles computed inside the forall do not make up the producer's result,
// so the returned value comes from the producer itself, computed once more
// outside (random testing found the forall's partial tiles returned, with
// elements never written).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(2,0); 3: TF(2,0,0)"})' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %mlir_opt %t.mlir --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o /dev/null

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @strided
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: %[[F:.*]] = scf.forall {{.*}} -> (tensor<8x4xf32>)
// CHECK: return %[[P]], %[[F]] : tensor<8x8xf32>, tensor<8x4xf32>
func.func @strided(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x4xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 * 2)>, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<8x8xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  return %p, %c : tensor<8x8xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func @windows
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: %[[F:.*]] = scf.forall {{.*}} -> (tensor<6x8x3xf32>)
// CHECK: return %[[P]], %[[F]] : tensor<8x8xf32>, tensor<6x8x3xf32>
func.func @windows(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<6x8x3xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<6x8x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 + d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<8x8xf32>) outs(%e2 : tensor<6x8x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<6x8x3xf32>
  return %p, %c : tensor<8x8xf32>, tensor<6x8x3xf32>
}
