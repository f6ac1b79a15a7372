// mlir-rl-fuse-elementwise fuses a cast into each consumer that reads each
// of its elements once, whatever else reads it (torch-mlir's layer norm
// widens its whole input to f64 for the mean and the variance): no widened
// copy is left, each reduction casts as it reads. A cast read through a
// broadcast stays apart.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-fuse-elementwise)' | FileCheck %s
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @variance
// CHECK-NOT:     tensor<32x256xf64>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.extf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.extf
// CHECK-NOT:     tensor<32x256xf64>
func.func @variance(%x: tensor<32x256xf32>, %m: tensor<32x1xf64>) -> (tensor<32x1xf64>, tensor<32x1xf64>) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<32x256xf64>
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<32x256xf32>) outs(%e : tensor<32x256xf64>) {
  ^bb0(%in: f32, %out: f64):
    %c = arith.extf %in : f32 to f64
    linalg.yield %c : f64
  } -> tensor<32x256xf64>
  %e1 = tensor.empty() : tensor<32x1xf64>
  %f = linalg.fill ins(%z : f64) outs(%e1 : tensor<32x1xf64>) -> tensor<32x1xf64>
  %s = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]}
       ins(%w : tensor<32x256xf64>) outs(%f : tensor<32x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %a = arith.addf %in, %out : f64
    linalg.yield %a : f64
  } -> tensor<32x1xf64>
  %v = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]}
       ins(%w, %m : tensor<32x256xf64>, tensor<32x1xf64>) outs(%f : tensor<32x1xf64>) {
  ^bb0(%in: f64, %mean: f64, %out: f64):
    %d = arith.subf %in, %mean : f64
    %q = arith.mulf %d, %d : f64
    %a = arith.addf %q, %out : f64
    linalg.yield %a : f64
  } -> tensor<32x1xf64>
  return %s, %v : tensor<32x1xf64>, tensor<32x1xf64>
}

// CHECK-LABEL: func.func @broadcast
// CHECK:         %[[W:.+]] = linalg.generic
// CHECK:           arith.extf
// CHECK:         linalg.generic {{.*}}ins(%{{.+}}, %[[W]] :
func.func @broadcast(%x: tensor<256xf32>, %y: tensor<32x256xf64>) -> tensor<32x256xf64> {
  %e = tensor.empty() : tensor<256xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
       ins(%x : tensor<256xf32>) outs(%e : tensor<256xf64>) {
  ^bb0(%in: f32, %out: f64):
    %c = arith.extf %in : f32 to f64
    linalg.yield %c : f64
  } -> tensor<256xf64>
  %e2 = tensor.empty() : tensor<32x256xf64>
  %r = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
       ins(%y, %w : tensor<32x256xf64>, tensor<256xf64>) outs(%e2 : tensor<32x256xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<32x256xf64>
  return %r : tensor<32x256xf64>
}
