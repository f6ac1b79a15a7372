// Opt-in (MLIR_RL_CACHE_BLOCK_BYTES): T on a contraction blocks its reduction loop for the cache first
// (legality v6, `kblock`): when the op's sweep of that loop reads an input
// by rows on more than 64 pages of 4 KiB, the loop is tiled by the largest
// multiple (at least twice) of T's reduction size that divides it and whose
// input slices (other loops whole) take at most MLIR_RL_CACHE_BLOCK_BYTES
// (opt-in; off by default); then T's own loops. Here a
// 32x64 tile reads 32x32 of A and 32x64 of B per block of 32 (12 KiB; 48
// would take 18 KiB). The op the policy sees next is the same 8x32x8 tile.
// RUN: env MLIR_RL_CACHE_BLOCK_BYTES=16384 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(32,64,0) T(8,32,8); 3: TP(32,64,0) T(8,32,8); 5: TP(32,64,0) T(8,32,0) T(0,0,8)" dump-schedule=%t.transform.mlir})' -o %t.scheduled.mlir
// RUN: FileCheck %s --check-prefix=BLOCK < %t.scheduled.mlir
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.transform.mlir
// RUN: %mlir_opt %s -p 'builtin.module(transform-preload-library{transform-library-paths=%t.transform.mlir},transform-interpreter)' | sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' > %t.replayed.mlir
// RUN: diff %t.scheduled.mlir %t.replayed.mlir
// RUN: env MLIR_RL_CACHE_BLOCK_BYTES=0 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(32,64,0) T(8,32,8)"})' | FileCheck %s --check-prefix=OFF

// BLOCK-LABEL: func.func @wide_b
// BLOCK: scf.forall
// BLOCK-NEXT: affine.apply
// BLOCK: scf.for %{{.*}} = %c0 to %c768 step %c32
// BLOCK: scf.for %{{.*}} to %c32{{.*}} step %c8
// BLOCK: scf.for %{{.*}} to %c64 step %c32
// BLOCK: scf.for %{{.*}} to %c32{{.*}} step %c8
// BLOCK: linalg.matmul {{.*}} -> tensor<8x32xf32>
// OFF-LABEL: func.func @wide_b
// OFF-NOT: to %c768 step %c32
// OFF: scf.for %{{.*}} to %c768 step %c8
// OFF: linalg.matmul {{.*}} -> tensor<8x32xf32>
func.func @wide_b(%A: tensor<64x768xf32>, %B: tensor<768x3072xf32>) -> tensor<64x3072xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x3072xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x768xf32>, tensor<768x3072xf32>) outs(%C : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  return %r : tensor<64x3072xf32>
}

// B's rows are 256 B apart: 576 rows on 36 pages; not blocked.
// BLOCK-LABEL: func.func @narrow_b
// BLOCK-NOT: to %c576 step %c32
// BLOCK: scf.for %{{.*}} to %c576 step %c8
// BLOCK: linalg.matmul {{.*}} -> tensor<8x32xf32>
func.func @narrow_b(%A: tensor<64x576xf32>, %B: tensor<576x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x576xf32>, tensor<576x64xf32>) outs(%C : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// A T that does not tile the reduction loop with a parallel one is applied
// as it is (the second T tiles K alone: nothing to reuse across).
// BLOCK-LABEL: func.func @k_alone
// BLOCK-NOT: to %c768 step %c32
// BLOCK: scf.for %{{.*}} to %c768 step %c8
// BLOCK: linalg.matmul {{.*}} -> tensor<8x32x{{.*}}
func.func @k_alone(%A: tensor<64x768xf32>, %B: tensor<768x3072xf32>) -> tensor<64x3072xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x3072xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x768xf32>, tensor<768x3072xf32>) outs(%C : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  return %r : tensor<64x3072xf32>
}

// SCRIPT: // 1: T(8,32,8)
// SCRIPT: %[[B:.*]], %{{.*}} = transform.structured.tile_using_for %{{.*}} tile_sizes [0, 0, 32]
// SCRIPT-NEXT: transform.structured.tile_using_for %[[B]] tile_sizes [8, 32, 8]

// Off by default.
// RUN: env -u MLIR_RL_CACHE_BLOCK_BYTES %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(32,64,0) T(8,32,8)"})' | FileCheck %s --check-prefix=OFF
