// mlir-rl-split-empty-tensors: a tensor.empty that CSE made the destination
// of two ops becomes one per use, here (as in a convolution's im2col matmul
// and its epilogue) one op reading the other's result while writing into the
// same empty tensor. On MobileNetV2's scheduled IR eliminate-empty-tensors
// rewrote none of the 69 shared empty tensors; after the split, epilogues
// whose result is inserted into a padded tensor (the next convolution's
// input) write into that tensor's slice instead of a buffer of their own
// that is then copied. mlir-rl-lower runs both before bufferization;
// lowered programs are checked numerically by the fuzz tests and every
// benchmark.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-split-empty-tensors)' | FileCheck %s --check-prefix=SPLIT
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-split-empty-tensors,eliminate-empty-tensors)' \
// RUN:   | FileCheck %s --check-prefix=ELIM
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-lower)' -o /dev/null

// SPLIT-LABEL: func.func @pad_input
// SPLIT-COUNT-2: tensor.empty() : tensor<8x16xf32>
// SPLIT-NOT: tensor.empty() : tensor<8x16xf32>

// ELIM-LABEL: func.func @pad_input
// ELIM: %[[P:.+]] = linalg.fill
// ELIM: %[[S:.+]] = tensor.extract_slice %[[P]][1, 1] [8, 16] [1, 1]
// ELIM: linalg.exp {{.*}} outs(%[[S]] :
func.func @pad_input(%a: tensor<8x16xf32>) -> tensor<10x18xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %e0 = tensor.empty() : tensor<10x18xf32>
  %p = linalg.fill ins(%z : f32) outs(%e0 : tensor<10x18xf32>) -> tensor<10x18xf32>
  %n = linalg.negf ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %x = linalg.exp ins(%n : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %ins = tensor.insert_slice %x into %p[1, 1] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<10x18xf32>
  return %ins : tensor<10x18xf32>
}
