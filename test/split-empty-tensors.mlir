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
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-split-empty-tensors,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize)' \
// RUN:   | FileCheck %s --check-prefix=BUF

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

// Slices of one empty tensor filled and inserted back (an im2col buffer)
// keep sharing it: a second tensor.empty would be a second buffer.
// SPLIT-LABEL: func.func @slices
// SPLIT-COUNT-1: tensor.empty
// SPLIT-NOT: tensor.empty
func.func @slices(%a: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %s0 = tensor.extract_slice %e[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> to tensor<4x8xf32>
  %c0 = linalg.copy ins(%a : tensor<4x8xf32>) outs(%s0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %i0 = tensor.insert_slice %c0 into %e[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  %s1 = tensor.extract_slice %i0[1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> to tensor<4x8xf32>
  %c1 = linalg.exp ins(%a : tensor<4x8xf32>) outs(%s1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %i1 = tensor.insert_slice %c1 into %i0[1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  return %i1 : tensor<2x4x8xf32>
}

// A write-only value (zeros) that CSE made the destination of two
// insertions, each computed in a slice of it at the place it is inserted
// (two convolutions' padded inputs of one shape): each insertion gets a
// fill of its own, and its slice moves with it. Bufferized, each result is
// computed in its padded buffer: no copy of the whole buffer, none of the
// slice. (MobileNetV2's scheduled IR: 120 copies before, 34 after.)
// SPLIT-LABEL: func.func @shared_padded_input
// SPLIT-COUNT-2: linalg.fill
// SPLIT-NOT: linalg.fill
// BUF-LABEL: func.func @shared_padded_input
// BUF-COUNT-2: linalg.fill
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_padded_input(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>)
    -> (tensor<10x18xf32>, tensor<10x18xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<10x18xf32>
  %p = linalg.fill ins(%z : f32) outs(%e0 : tensor<10x18xf32>) -> tensor<10x18xf32>
  %s = tensor.extract_slice %p[1, 1] [8, 16] [1, 1] : tensor<10x18xf32> to tensor<8x16xf32>
  %x = linalg.exp ins(%a : tensor<8x16xf32>) outs(%s : tensor<8x16xf32>) -> tensor<8x16xf32>
  %i = tensor.insert_slice %x into %p[1, 1] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<10x18xf32>
  %y = linalg.negf ins(%b : tensor<8x16xf32>) outs(%s : tensor<8x16xf32>) -> tensor<8x16xf32>
  %j = tensor.insert_slice %y into %p[1, 1] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<10x18xf32>
  return %i, %j : tensor<10x18xf32>, tensor<10x18xf32>
}

// One accumulator (zeros, through a reshape, as conv-to-matmul leaves it)
// shared by two matmuls: each gets its own, not a copy of the first.
// SPLIT-LABEL: func.func @shared_accumulator
// SPLIT-COUNT-2: linalg.fill
// SPLIT-NOT: linalg.fill
// BUF-LABEL: func.func @shared_accumulator
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_accumulator(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<4x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e0 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %acc = tensor.collapse_shape %f [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %m0 = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = linalg.matmul ins(%a, %c : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m0, %m1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// A value read after its insertion into a padded tensor (a depthwise
// convolution's centre tap, which canonicalization folds from a slice of
// the insertion back to the value) is read through the insertion: computed
// in place in the padded tensor, it would otherwise be read after the
// insertion wrote that buffer, and bufferization would compute it out of
// place and copy it. (MobileNetV2: 34 copies -> 8.)
// SPLIT-LABEL: func.func @read_after_insert
// SPLIT: %[[I:.+]] = tensor.insert_slice
// SPLIT: %[[S:.+]] = tensor.extract_slice %[[I]][1, 1] [8, 16] [1, 1]
// SPLIT: scf.forall
// SPLIT: tensor.extract_slice %[[S]][%
// BUF-LABEL: func.func @read_after_insert
// BUF-NOT: memref.copy
// BUF: return
func.func @read_after_insert(%a: tensor<8x16xf32>) -> (tensor<10x18xf32>, tensor<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<10x18xf32>
  %p = linalg.fill ins(%z : f32) outs(%e0 : tensor<10x18xf32>) -> tensor<10x18xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %x = scf.forall (%r) in (8) shared_outs(%o = %e) -> (tensor<8x16xf32>) {
    %row = tensor.extract_slice %a[%r, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %out = tensor.extract_slice %o[%r, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = linalg.exp ins(%row : tensor<1x16xf32>) outs(%out : tensor<1x16xf32>) -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%r, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    }
  }
  %i = tensor.insert_slice %x into %p[1, 1] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<10x18xf32>
  %t = tensor.extract_slice %i[0, 0] [8, 16] [1, 1] : tensor<10x18xf32> to tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %y = scf.forall (%r) in (8) shared_outs(%o = %e2) -> (tensor<8x16xf32>) {
    %xa = tensor.extract_slice %x[%r, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %ta = tensor.extract_slice %t[%r, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %out = tensor.extract_slice %o[%r, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = linalg.add ins(%xa, %ta : tensor<1x16xf32>, tensor<1x16xf32>) outs(%out : tensor<1x16xf32>) -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%r, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    }
  }
  return %i, %y : tensor<10x18xf32>, tensor<8x16xf32>
}

// A slice of a zero tensor seen through a reshape (an im2col tensor's flat
// pixel rows as [OH, OW]), written by one copy per convolution of one shape
// (CSE merged their zero tensors, slices and views): each insertion gets
// its own zero tensor, with the slice and the view it was computed in.
// Shared, the second copy would write the first's buffer and bufferize out
// of place (ResNet-18: 8 whole-tensor copies).
// SPLIT-LABEL: func.func @shared_view_of_rows
// SPLIT-COUNT-2: linalg.fill
// SPLIT:         %[[S0:.+]] = tensor.extract_slice %[[F0:.+]][0, 0] [12, 4]
// SPLIT:         %[[V0:.+]] = tensor.expand_shape %[[S0]]
// SPLIT:         %[[S1:.+]] = tensor.extract_slice %[[F1:.+]][0, 0] [12, 4]
// SPLIT:         %[[V1:.+]] = tensor.expand_shape %[[S1]]
// SPLIT:         linalg.copy ins(%arg0 : tensor<3x4x4xf32>) outs(%[[V1]] : tensor<3x4x4xf32>)
// SPLIT:         tensor.insert_slice %{{.+}} into %[[F1]][0, 0] [12, 4]
// SPLIT:         linalg.copy ins(%arg1 : tensor<3x4x4xf32>) outs(%[[V0]] : tensor<3x4x4xf32>)
// SPLIT:         tensor.insert_slice %{{.+}} into %[[F0]][0, 0] [12, 4]
// BUF-LABEL: func.func @shared_view_of_rows
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_view_of_rows(%a: tensor<3x4x4xf32>, %b: tensor<3x4x4xf32>)
    -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %s = tensor.extract_slice %f[0, 0] [12, 4] [1, 1] : tensor<16x4xf32> to tensor<12x4xf32>
  %v = tensor.expand_shape %s [[0, 1], [2]] output_shape [3, 4, 4] : tensor<12x4xf32> into tensor<3x4x4xf32>
  %c0 = linalg.copy ins(%a : tensor<3x4x4xf32>) outs(%v : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %k0 = tensor.collapse_shape %c0 [[0, 1], [2]] : tensor<3x4x4xf32> into tensor<12x4xf32>
  %r0 = tensor.insert_slice %k0 into %f[0, 0] [12, 4] [1, 1] : tensor<12x4xf32> into tensor<16x4xf32>
  %c1 = linalg.copy ins(%b : tensor<3x4x4xf32>) outs(%v : tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %k1 = tensor.collapse_shape %c1 [[0, 1], [2]] : tensor<3x4x4xf32> into tensor<12x4xf32>
  %r1 = tensor.insert_slice %k1 into %f[0, 0] [12, 4] [1, 1] : tensor<12x4xf32> into tensor<16x4xf32>
  return %r0, %r1 : tensor<16x4xf32>, tensor<16x4xf32>
}
