// Bad schedules are clear errors and leave the IR as it was.
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(8,8"})' 2>&1 | FileCheck %s --check-prefix=PAREN
// PAREN: error: linalg-rl-schedule: malformed schedule '1: TP(8,8': unbalanced '(' in 'TP(8,8'

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: X(8)"})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: linalg-rl-schedule: malformed schedule '1: X(8)': unknown action 'X(8)' (expected T(..), TP(..), TF(..), I(..), V or NT)

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="7: T(8,8,8)"})' 2>&1 | FileCheck %s --check-prefix=ID
// ID: error: linalg-rl-schedule: unknown op id 7 (the module has 2 linalg ops, numbered from 0; `mlir-rl ops FILE` lists them)

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(8,8,8)"})' 2>&1 | FileCheck %s --check-prefix=REDUCTION
// REDUCTION: error: linalg-rl-schedule: op 1 (linalg.matmul): tiled_parallelization TP(8,8,8): loop 2 is a reduction loop; TP tiles parallel loops only (use 0)

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,8)"})' 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: linalg-rl-schedule: op 1 (linalg.matmul): tiling T(8,8) gives 2 tile sizes, the op has 3 loops

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,12,1)"})' 2>&1 | FileCheck %s --check-prefix=CAND
// CAND: error: linalg-rl-schedule: op 1 (linalg.matmul): tiling T(8,12,1): tile size 12 of loop 1 is not a candidate (0, 1, 2, 4, 8, 16, 32, 64)

// K = 96: a tile of 64 does not divide it (legality v3).
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,8,64)"})' 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: linalg-rl-schedule: op 1 (linalg.matmul): tiling T(8,8,64): tile size 64 does not divide the extent 96 of loop 2 (the op could then not be vectorized)

// The fifth (last) action of an op must end it (legality v4).
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(64,64,32) T(32,32,16) T(16,16,8) T(8,8,4) T(4,4,2)"})' 2>&1 | FileCheck %s --check-prefix=LAST
// LAST: error: linalg-rl-schedule: op 1 (linalg.matmul): tiling T(4,4,2) is not allowed: the op's last (5th) action must end it (V or NT)

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: V"})' 2>&1 | FileCheck %s --check-prefix=VEC
// VEC: error: linalg-rl-schedule: op 1 (linalg.matmul): vectorization V is not allowed: iteration space of 786432 points exceeds 4096 (tile first)

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,16,0) TP(8,8,0)"})' 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: linalg-rl-schedule: op 1 (linalg.matmul): tiled_parallelization TP(8,8,0) is not allowed: the op is already parallelized

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="0: TF(8,8)"})' 2>&1 | FileCheck %s --check-prefix=NOPRODUCER
// NOPRODUCER: error: linalg-rl-schedule: op 0 (linalg.fill): tiled_fusion TF(8,8) is not allowed: the op has no linalg producer to fuse

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: I(0,0,1)"})' 2>&1 | FileCheck %s --check-prefix=PERM
// PERM: error: linalg-rl-schedule: op 1 (linalg.matmul): interchange I(0,0,1) is not a permutation of the op's 3 loops

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: T(128,8,8)"})' 2>&1 | FileCheck %s --check-prefix=CAND2
// CAND2: tile size 128 of loop 0 is not a candidate

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{schedule="1: V T(8,8,8)"})' 2>&1 | FileCheck %s --check-prefix=VEC
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
