// linalg.softmax (no lowering of its own in LLVM 22) as its max, exp, sum and
// division, on tensors; in the front end too, so that the pass schedules them.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-decompose-aggregates))' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-prepare)' | FileCheck %s --check-prefix=FRONT

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.divf
// FRONT-LABEL: func.func @softmax
// FRONT-NOT: linalg.softmax
// FRONT: math.exp
func.func @softmax(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
