// Tiled fusion of a producer whose result is also returned: the forall gets
// the producer's tiles as a second result, the function returns it, and what
// the pass hands on verifies and lowers (random testing once found a version
// of this that left func.return with swapped operand types).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(0,1) V; 0: V"})' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %mlir_opt %t.mlir --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o /dev/null

// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]]:2 = scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<8x16xf32>, tensor<16xf32>)
// CHECK: return %[[R]]#1, %[[R]]#0 : tensor<16xf32>, tensor<8x16xf32>
func.func @main(%x: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %bc = linalg.broadcast ins(%r : tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) dimensions = [0]
  return %r, %bc : tensor<16xf32>, tensor<8x16xf32>
}
