// Every action kind (T, TP, TF, I, V, NT) on a linalg.matmul with a fill-initialized accumulator.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: T(8,32,16)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0)"})' | FileCheck %s --check-prefix=TP
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(16,32,0)"})' | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: I(1,0,2)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(16,32,0) T(8,32,1) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: NT"})' | FileCheck %s --check-prefix=NT

// T(8,32,16): one scf.for per loop (i, j, k), the matmul on 8x16 * 16x32 tiles.
// T-LABEL: func.func @matmul
// T: linalg.fill {{.*}} -> tensor<64x128xf32>
// T: scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c128{{(_[0-9]+)?}} step %c32{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c96{{(_[0-9]+)?}} step %c16{{(_[0-9]+)?}} iter_args
// T: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>) outs(%{{.*}} : tensor<8x32xf32>) -> tensor<8x32xf32>
// T-NOT: scf.forall

// TP(16,32,0): a 4x4 scf.forall over i and j, k left whole.
// TP-LABEL: func.func @matmul
// TP: linalg.fill {{.*}} -> tensor<64x128xf32>
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}, %{{.*}}) in (4, 4) shared_outs
// TP: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x96xf32>, tensor<96x32xf32>) outs(%{{.*}} : tensor<16x32xf32>) -> tensor<16x32xf32>
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<16x32xf32> into tensor<64x128xf32>
// TP-NOT: scf.for

// TF(16,32,0): as TP, with the fill (the matmul's producer) moved into the forall.
// TF-LABEL: func.func @matmul
// TF-NOT: linalg.fill
// TF: scf.forall (%{{.*}}, %{{.*}}) in (4, 4) shared_outs
// TF: [[FILL:%[0-9]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x32xf32>) -> tensor<16x32xf32>
// TF-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x96xf32>, tensor<96x32xf32>) outs([[FILL]] : tensor<16x32xf32>) -> tensor<16x32xf32>
// TF: scf.forall.in_parallel
// TF-NOT: linalg.fill

// I(1,0,2): a linalg.generic over (j, i, k): A[i][k] = (d1, d2), B[k][j] = (d2, d0), C[i][j] = (d1, d0).
// I-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// I-DAG: #[[B:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// I-DAG: #[[C:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// I-LABEL: func.func @matmul
// I: linalg.fill
// I-NEXT: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<64x96xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// I: arith.mulf
// I-NEXT: arith.addf
// I-NOT: linalg.matmul
// I-NOT: scf.for

// V (after TP and T to 8x32x1 tiles): vector reads, a mulf and a multi_reduction over k, no matmul left.
// V-LABEL: func.func @matmul
// V-NOT: linalg.matmul
// V: scf.forall (%{{.*}}, %{{.*}}) in (4, 4)
// V: scf.for
// V: vector.transfer_read {{.*}} : tensor<8x1xf32>, vector<8x32x1xf32>
// V: vector.transfer_read {{.*}} : tensor<1x32xf32>, vector<8x32x1xf32>
// V: arith.mulf {{.*}} : vector<8x32x1xf32>
// V-NEXT: vector.multi_reduction <add>, {{.*}} [2] : vector<8x32x1xf32> to vector<8x32xf32>
// V-NEXT: arith.constant
// V-NEXT: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// V-NOT: linalg.matmul

// NT leaves the function as it was.
// NT-LABEL: func.func @matmul(%{{.*}}: tensor<64x96xf32>, %{{.*}}: tensor<96x128xf32>) -> tensor<64x128xf32>
// NT-NEXT: arith.constant 0.000000e+00 : f32
// NT-NEXT: tensor.empty() : tensor<64x128xf32>
// NT-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x128xf32>) -> tensor<64x128xf32>
// NT-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x96xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<64x128xf32>) -> tensor<64x128xf32>
// NT-NEXT: return %{{.*}} : tensor<64x128xf32>
// NT-NOT: scf.
func.func @matmul(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
