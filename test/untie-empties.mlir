// mlir-rl-untie-empties gives each linalg op whose init is a tensor.empty
// used elsewhere too one of its own (cse ties equal ones): tiled fusion into
// a forall whose shared output is that tensor would write the producer's
// tiles into the forall's output. A use that is not a linalg init (the
// return) keeps the original; without one, the last linalg user would.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-untie-empties)' | FileCheck %s
//
// linalg-rl-schedule runs it before the first decision whatever its front
// end, and names it in the schedule's prelude, so that the dumped transform
// script and a trace handed back to schedule= replay it.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{fuse-elementwise=false rewrite-windows=false pad-to-tiles=false flatten-elementwise=false schedule="1: TP(8,0) V; 0: V" dump-schedule=-})' -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=PRELUDE

// CHECK-LABEL: func.func @tied
// CHECK:      %[[E0:.+]] = tensor.empty() : tensor<16x32xf32>
// CHECK-NEXT: %[[E1:.+]] = tensor.empty() : tensor<16x32xf32>
// CHECK-NEXT: %[[T:.+]] = linalg.transpose ins(%{{.+}} : tensor<32x16xf32>) outs(%[[E1]] : tensor<16x32xf32>)
// CHECK-NEXT: %[[E2:.+]] = tensor.empty() : tensor<16x32xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[T]] : tensor<16x32xf32>) outs(%[[E2]] : tensor<16x32xf32>)
// CHECK:      return {{.*}}, %[[E0]]
// PRELUDE: // Schedule: [mlir-rl-untie-empties] 1: TP(8,0) V; 0: V
func.func @tied(%a: tensor<32x16xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %e = tensor.empty() : tensor<16x32xf32>
  %t = linalg.transpose ins(%a : tensor<32x16xf32>) outs(%e : tensor<16x32xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<16x32xf32>
  return %r, %e : tensor<16x32xf32>, tensor<16x32xf32>
}
