// mlir-rl-lower runs IR that did not come from the pass, as upstream's Linalg
// CPU integration tests are written: a file that carries its own transform
// script, linalg.pack/linalg.unpack on tensors (LLVM 22 cannot bufferize
// them), and memref code that frees its own buffers.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o %t.llvm.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.llvm.mlir
// RUN: %mlir_runner %t.llvm.mlir -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s
// The driver has the same pipeline.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-lower)' | FileCheck %s --check-prefix=LOWERED

// LOWERED-NOT: transform.
// LOWERED-NOT: linalg.
// LOWERED: llvm.func @main

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %p = linalg.pack %c inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %e : tensor<2x4xf32> -> tensor<1x2x2x2xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %u = linalg.unpack %p inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %e2 : tensor<1x2x2x2xf32> -> tensor<2x4xf32>
  // A buffer the program allocates and frees itself.
  %buf = memref.alloc() : memref<2x4xf32>
  %m = bufferization.to_buffer %u : tensor<2x4xf32> to memref<2x4xf32>
  linalg.copy ins(%m : memref<2x4xf32>) outs(%buf : memref<2x4xf32>)
  %t = bufferization.to_tensor %buf restrict : memref<2x4xf32> to tensor<2x4xf32>
  %cast = tensor.cast %t : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%cast) : (tensor<*xf32>) -> ()
  memref.dealloc %buf : memref<2x4xf32>
  return
}
// CHECK: [1,   2,   3,   4]
// CHECK-NEXT: [5,   6,   7,   8]

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %m = transform.structured.match ops{["linalg.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
