// mlir-rl-outline-parallel-loops: each outermost scf.parallel moves into a
// private noinline function of its own, called in its place; what it uses
// from above becomes arguments, except constants and globals' addresses,
// which are cloned in; a loop nested in another moves with it; a loop's
// results are the function's.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-outline-parallel-loops)' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-outline-parallel-loops,convert-scf-to-openmp)' -o /dev/null

memref.global "private" constant @bias : memref<16xf32> = dense<1.0>

// CHECK-LABEL: func.func @two(
// CHECK-SAME: %[[A:.*]]: memref<16x16xf32>, %[[N:.*]]: index
// CHECK-NOT: scf.parallel
// CHECK: call @two_parallel(%[[A]])
// CHECK: %[[SUM:.*]] = call @two_parallel_0(%[[N]], %[[A]]) : (index, memref<16x16xf32>) -> f32
// CHECK: return %[[SUM]]
func.func @two(%A: memref<16x16xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.get_global @bias : memref<16xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
      %x = memref.load %A[%i, %j] : memref<16x16xf32>
      %y = memref.load %b[%j] : memref<16xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %A[%i, %j] : memref<16x16xf32>
      scf.reduce
    }
    scf.reduce
  }
  %s = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %A[%i, %c0] : memref<16x16xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  return %s : f32
}

// CHECK-LABEL: func.func private @two_parallel(
// CHECK-SAME: %[[A1:.*]]: memref<16x16xf32>) attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 16 : index
// CHECK-DAG: memref.get_global @bias
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func private @two_parallel_0(
// CHECK-SAME: %[[N1:.*]]: index, %{{.*}}: memref<16x16xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N1]])
// CHECK: return %[[R]] : f32
