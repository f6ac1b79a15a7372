// Row ops by rule (copies-by-rule): softmax as torch-mlir imports it (after
// the front end, a max and a sum that reduce rows into [64, 1], an exp and a
// division with per-row values) gets rows in parallel and two-row vector
// pieces of 64, each reduction's fill in its tiles (TF), whatever the
// decisions were (the heuristic's here); copies-by-rule=false keeps them. The
// dumped script replays the same IR, which lowers.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s < %t.schedule
// CHECK: // Schedule: [mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-untie-empties] 5: TP(8,0) T(2,64) V; 4: TF(8,0) T(2,64) V; 3: V; 2: TP(8,0) T(2,64) V; 1: TF(8,0,0) T(2,0,64) V; 0: V
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay-tagged
// RUN: sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' %t.replay-tagged > %t.replay
// RUN: diff %t.out %t.replay
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic copies-by-rule=false dump-schedule=-})' \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=DECIDED
// DECIDED: // Schedule:
// DECIDED-NOT: T(2,64) V
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @main(%arg0: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<64xi64>) -> tensor<64xi64>
  %2 = tensor.empty() : tensor<64xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<64xf32>) -> tensor<64xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x256xf32>) outs(%3, %1 : tensor<64xf32>, tensor<64xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %12 = linalg.index 1 : index
    %13 = arith.index_cast %12 : index to i64
    %14 = arith.maximumf %in, %out : f32
    %15 = arith.cmpf ogt, %in, %out : f32
    %16 = arith.select %15, %13, %out_1 : i64
    linalg.yield %14, %16 : f32, i64
  } -> (tensor<64xf32>, tensor<64xi64>)
  %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
  %5 = tensor.empty() : tensor<64x256xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<64x256xf32>, tensor<64x1xf32>) outs(%5 : tensor<64x256xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.subf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<64x256xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<64x256xf32>) outs(%5 : tensor<64x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = math.exp %in : f32
    linalg.yield %12 : f32
  } -> tensor<64x256xf32>
  %8 = tensor.empty() : tensor<64x1xf32>
  %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<64x1xf32>) -> tensor<64x1xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<64x256xf32>) outs(%9 : tensor<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %in, %out : f32
    linalg.yield %12 : f32
  } -> tensor<64x1xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %10 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%5 : tensor<64x256xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.divf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<64x256xf32>
  return %11 : tensor<64x256xf32>
}
