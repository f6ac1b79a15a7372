// A vector read of a slice with a small innermost stride (a pooling or a
// convolution of stride 2, window by window) becomes a contiguous read of the
// span it covers and a shuffle per row; upstream would load element by
// element. A tile of a strided slice is merged into one slice first.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-lower-vectors))' | FileCheck %s

// CHECK-LABEL: func.func @stride2
// CHECK: %[[SPAN:.*]] = tensor.extract_slice %arg0[0, 3] [4, 15] [2, 1] : tensor<16x64xf32> to tensor<4x15xf32>
// CHECK: %[[WIDE:.*]] = vector.transfer_read %[[SPAN]][%c0, %c0], %{{.*}} {in_bounds = [true, true]} : tensor<4x15xf32>, vector<4x15xf32>
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<15xf32>, vector<15xf32>
func.func @stride2(%src: tensor<16x64xf32>) -> vector<4x8xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %s = tensor.extract_slice %src[0, 1] [8, 16] [2, 2] : tensor<16x64xf32> to tensor<8x16xf32>
  %t = tensor.extract_slice %s[0, 1] [4, 8] [1, 1] : tensor<8x16xf32> to tensor<4x8xf32>
  %v = vector.transfer_read %t[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<4x8xf32>, vector<4x8xf32>
  return %v : vector<4x8xf32>
}

// An innermost dimension that may be out of bounds keeps its read.
// CHECK-LABEL: func.func @maybe_out_of_bounds
// CHECK-NOT: vector.shuffle
// CHECK: vector.transfer_read %{{.*}} : tensor<8x16xf32>, vector<4x8xf32>
func.func @maybe_out_of_bounds(%src: tensor<16x64xf32>, %i: index) -> vector<4x8xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %s = tensor.extract_slice %src[0, 1] [8, 16] [2, 2] : tensor<16x64xf32> to tensor<8x16xf32>
  %v = vector.transfer_read %s[%c0, %i], %pad {in_bounds = [true, false]} : tensor<8x16xf32>, vector<4x8xf32>
  return %v : vector<4x8xf32>
}
