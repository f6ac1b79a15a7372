// The scheduled IR lowers with the mlir-rl-lower pipeline to LLVM + OpenMP:
// scf.forall becomes an omp.parallel region, in a function of its own that
// the function calls, and vector code stays vector code.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V"},mlir-rl-lower)' | FileCheck %s
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V"},mlir-rl-lower)' | FileCheck %s

// CHECK: llvm.func @matmul(
// CHECK-NOT: omp.parallel
// CHECK: llvm.call @matmul_parallel(
// CHECK: llvm.func @_mlir_ciface_matmul
// CHECK: llvm.func @matmul_parallel({{.*}}passthrough = ["noinline"]
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: vector<32xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> attributes {llvm.emit_c_interface} {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
