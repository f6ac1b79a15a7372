// Bufferization's copies become loops: parallel over the outer dimensions
// when large and not already inside a parallel loop, serial inside one;
// small contiguous copies stay memcpy-able memref.copy.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-copies))' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-copies),mlir-rl-lower)' | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @pad_interior
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %c64, %c56)
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %c56
// CHECK: %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]], %[[K]], %[[L]]]
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]], %[[K]], %[[L]]]
// CHECK-NOT: memref.copy
// LLVM-NOT: memrefCopy
// LLVM: omp.parallel
func.func @pad_interior(%src: memref<1x64x56x56xf32>, %dst: memref<1x64x58x58xf32>) {
  %sub = memref.subview %dst[0, 0, 1, 1] [1, 64, 56, 56] [1, 1, 1, 1] : memref<1x64x58x58xf32> to memref<1x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  memref.copy %src, %sub : memref<1x64x56x56xf32> to memref<1x64x56x56xf32, strided<[215296, 3364, 58, 1], offset: 59>>
  return
}

// CHECK-LABEL: func.func @small_contiguous
// CHECK: memref.copy
func.func @small_contiguous(%src: memref<8x32xf32>, %dst: memref<8x32xf32>) {
  memref.copy %src, %dst : memref<8x32xf32> to memref<8x32xf32>
  return
}

// CHECK-LABEL: func.func @in_parallel_loop
// CHECK: scf.forall
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: memref.copy
func.func @in_parallel_loop(%src: memref<4x256x256xf32>, %dst: memref<4x256x512xf32>) {
  scf.forall (%i) in (4) {
    %s = memref.subview %src[%i, 0, 0] [1, 256, 256] [1, 1, 1] : memref<4x256x256xf32> to memref<256x256xf32, strided<[256, 1], offset: ?>>
    %d = memref.subview %dst[%i, 0, 0] [1, 256, 256] [1, 1, 1] : memref<4x256x512xf32> to memref<256x256xf32, strided<[512, 1], offset: ?>>
    memref.copy %s, %d : memref<256x256xf32, strided<[256, 1], offset: ?>> to memref<256x256xf32, strided<[512, 1], offset: ?>>
  }
  return
}
