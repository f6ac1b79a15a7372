// V keeps a contraction's accumulator within the vector register file
// (legality v6): on a 16 x 256-bit file (AVX2; 12 registers for the
// accumulator) an 8x32 f32 tile (32 registers) is tiled to 4x16 (8) first,
// the most output elements that fit, then the fewest operand vectors per
// reduction step (rows + vectors per row: 4+2 before 8+1), then the most rows.
// On 32 x 512 bits (AVX-512) it fits as it is; with the file unknown (0x0)
// nothing is tiled. The replay script carries the same tiling.
// RUN: env MLIR_RL_VECTOR_REGISTERS=16x256 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V; 3: TP(2,8,32,0) T(2,4,32,1) V; 5: TP(8,16,0) T(4,16,1) V; 7: TP(16,32,0) T(8,32,1) V; 8: TP(16,32) T(8,32) V; 10: TP(16,32,0) T(2,16,1) V" dump-schedule=%t.transform.mlir})' | FileCheck %s --check-prefix=AVX2
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.transform.mlir
// RUN: env MLIR_RL_VECTOR_REGISTERS=16x256 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V; 3: TP(2,8,32,0) T(2,4,32,1) V; 5: TP(8,16,0) T(4,16,1) V; 7: TP(16,32,0) T(8,32,1) V; 8: TP(16,32) T(8,32) V; 10: TP(16,32,0) T(2,16,1) V"})' -o %t.scheduled.mlir
// RUN: %mlir_opt %s -p 'builtin.module(transform-preload-library{transform-library-paths=%t.transform.mlir},transform-interpreter)' | sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' > %t.replayed.mlir
// RUN: diff %t.scheduled.mlir %t.replayed.mlir
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V; 3: TP(2,8,32,0) T(2,4,32,1) V; 5: TP(8,16,0) T(4,16,1) V"})' | FileCheck %s --check-prefix=AVX512
// RUN: env MLIR_RL_VECTOR_REGISTERS=0x0 %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V"})' | FileCheck %s --check-prefix=OFF
// RUN: env MLIR_RL_VECTOR_REGISTERS=16x256 %PYTHON -c "import mlir_rl; print(mlir_rl.legality()['description'])" | FileCheck %s --check-prefix=DESC

// DESC: mlir-rl-legality-v8;{{.*}};vregs=16x256

// AVX2-LABEL: func.func @matmul
// AVX2: scf.forall
// AVX2: scf.for {{.*}} step %c4
// AVX2: scf.for {{.*}} step %c16
// AVX2: vector.transfer_read {{.*}} vector<4x16x1xf32>
// AVX2-NOT: vector<8x32x1xf32>
// AVX2-NOT: linalg.matmul
// AVX512-LABEL: func.func @matmul
// AVX512: vector.transfer_read {{.*}} vector<8x32x1xf32>
// OFF-LABEL: func.func @matmul
// OFF-NOT: vector<4x16x1xf32>
// OFF: vector.transfer_read {{.*}} vector<8x32x1xf32>
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// Outer output dimensions (the batch) are tiled to 1 (2x4x32: 32 ymm
// registers; 16 zmm, which fit).
// AVX2-LABEL: func.func @batch_matmul
// AVX2: vector.transfer_read {{.*}} vector<1x4x16x1xf32>
// AVX2-NOT: linalg.batch_matmul
// AVX512-LABEL: func.func @batch_matmul
// AVX512: vector.transfer_read {{.*}} vector<2x4x32x1xf32>
func.func @batch_matmul(%A: tensor<4x32x64xf32>, %B: tensor<4x64x64xf32>) -> tensor<4x32x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x64xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %r = linalg.batch_matmul ins(%A, %B : tensor<4x32x64xf32>, tensor<4x64x64xf32>) outs(%C : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  return %r : tensor<4x32x64xf32>
}

// f64: 4 lanes a register; 4x16 takes 16, 4x8 (8) fits.
// AVX2-LABEL: func.func @matmul_f64
// AVX2: vector.transfer_read {{.*}} vector<4x8x1xf64>
// AVX512-LABEL: func.func @matmul_f64
// AVX512: vector.transfer_read {{.*}} vector<4x16x1xf64>
func.func @matmul_f64(%A: tensor<32x32xf64>, %B: tensor<32x64xf64>) -> tensor<32x64xf64> {
  %cst = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<32x64xf64>
  %C = linalg.fill ins(%cst : f64) outs(%e : tensor<32x64xf64>) -> tensor<32x64xf64>
  %r = linalg.matmul ins(%A, %B : tensor<32x32xf64>, tensor<32x64xf64>) outs(%C : tensor<32x64xf64>) -> tensor<32x64xf64>
  return %r : tensor<32x64xf64>
}

// A x B^T: the output's innermost dimension is no input's innermost (dot
// products, not outer products): left as it is.
// AVX2-LABEL: func.func @matmul_transpose_b
// AVX2: vector.transfer_read {{.*}} vector<8x32x1xf32>
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (n, k)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_transpose_b(%A: tensor<64x96xf32>, %B: tensor<128x96xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%A, %B : tensor<64x96xf32>, tensor<128x96xf32>) outs(%C : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// No reduction loop (an elementwise op): nothing is live across a loop.
// AVX2-LABEL: func.func @add
// AVX2: vector.transfer_read {{.*}} vector<8x32xf32>
func.func @add(%A: tensor<64x128xf32>, %B: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.add ins(%A, %B : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// A tile that fits (2x16: 4 registers) is left as it is.
// AVX2-LABEL: func.func @small_tile
// AVX2-NOT: scf.for {{.*}} step %c1$
// AVX2: vector.transfer_read {{.*}} vector<2x16x1xf32>
func.func @small_tile(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// SCRIPT: // 1: V
// SCRIPT: %[[T:.*]], %{{.*}}:2 = transform.structured.tile_using_for %{{.*}} tile_sizes [4, 16, 0]
// SCRIPT-NEXT: transform.structured.vectorize %[[T]]
