// Ops the layout cannot describe are left as they are, with a remark; the
// rest of the module is still scheduled.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -verify-diagnostics \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="2: TP(8,0)"})' | FileCheck %s

// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x96xf32>, tensor<96x128xf32>)
func.func @dynamic(%A: tensor<?x96xf32>, %B: tensor<96x128xf32>, %C: tensor<?x128xf32>) -> tensor<?x128xf32> {
  // expected-remark @below {{linalg-rl-schedule: op 0 (linalg.matmul) skipped: operand #0 has a dynamic shape}}
  %r = linalg.matmul ins(%A, %B : tensor<?x96xf32>, tensor<96x128xf32>) outs(%C : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %r : tensor<?x128xf32>
}

// CHECK-LABEL: func.func @buffers
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<64x96xf32>, memref<96x128xf32>) outs(%{{.*}} : memref<64x128xf32>)
func.func @buffers(%A: memref<64x96xf32>, %B: memref<96x128xf32>, %C: memref<64x128xf32>) {
  // expected-remark @below {{linalg-rl-schedule: op 1 (linalg.matmul) skipped: operands are not all tensors (memref semantics)}}
  linalg.matmul ins(%A, %B : memref<64x96xf32>, memref<96x128xf32>) outs(%C : memref<64x128xf32>)
  return
}

// Linalg ops without a loop nest of their own (LinalgOp interface) are left
// as they are, with a remark too.
// CHECK-LABEL: func.func @relayout
// CHECK: linalg.unpack
func.func @relayout(%p: tensor<?x?x8x4xf32>, %d: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-remark @below {{linalg-rl-schedule: linalg.unpack skipped: not a structured linalg op}}
  %u = linalg.unpack %p inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %d : tensor<?x?x8x4xf32> -> tensor<?x?xf32>
  return %u : tensor<?x?xf32>
}

// The supported op next to them is scheduled.
// CHECK-LABEL: func.func @supported
// CHECK: scf.forall
// CHECK:   linalg.add {{.*}} -> tensor<8x256xf32>
func.func @supported(%X: tensor<64x256xf32>, %Y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%X, %Y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
