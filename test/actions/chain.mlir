// Every action kind (T, TP, TF, I, V, NT) on a fill -> matmul -> bias generic -> relu generic chain (op ids 0..3).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="3: T(8,32); 2: T(16,16); 1: T(8,8,8)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="3: TP(32,0); 1: TP(16,0,0)"})' | FileCheck %s --check-prefix=TP
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="3: TF(16,64); 1: TF(32,32,0)"})' | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="3: I(1,0); 1: I(2,0,1)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="3: TF(16,64) V; 2: V; 1: TF(32,32,0) T(8,32,1) V; 0: NT"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="3: NT; 2: NT; 1: NT; 0: NT"})' | FileCheck %s --check-prefix=NT

// T on matmul, bias and relu: one loop nest each, each reading the previous nest's result.
// T-LABEL: func.func @chain
// T: linalg.fill {{.*}} -> tensor<64x128xf32>
// T: [[MM:%[0-9]+]] = scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c128{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c96{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) -> tensor<8x8xf32>
// T: [[BIAS:%[0-9]+]] = scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c16{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c128{{(_[0-9]+)?}} step %c16{{(_[0-9]+)?}} iter_args
// T-NEXT: tensor.extract_slice [[MM]]
// T: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<16x16xf32>)
// T: arith.addf
// T: scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c128{{(_[0-9]+)?}} step %c32{{(_[0-9]+)?}} iter_args
// T-NEXT: tensor.extract_slice [[BIAS]]
// T: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// T: arith.maximumf
// T-NOT: scf.forall

// TP on relu (2 row blocks) and matmul (4 row blocks); the bias generic is left whole.
// TP-LABEL: func.func @chain
// TP: linalg.fill {{.*}} -> tensor<64x128xf32>
// TP-NEXT: scf.forall (%{{.*}}) in (4) shared_outs
// TP: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x96xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<16x128xf32>) -> tensor<16x128xf32>
// TP: scf.forall.in_parallel
// TP: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// TP: arith.addf
// TP: scf.forall (%{{.*}}) in (2) shared_outs
// TP: linalg.generic {{.*}} ins(%{{.*}} : tensor<32x128xf32>) outs(%{{.*}} : tensor<32x128xf32>)
// TP: arith.maximumf
// TP: scf.forall.in_parallel
// TP-NOT: scf.for

// TF on relu fuses the bias generic (its last producer) into relu's forall;
// TF on matmul fuses the fill into the matmul's forall.
// TF-LABEL: func.func @chain
// TF-NOT: linalg.
// TF: [[MM:%[0-9]+]] = scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs
// TF: [[FILL:%[0-9]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x32xf32>) -> tensor<32x32xf32>
// TF-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x96xf32>, tensor<96x32xf32>) outs([[FILL]] : tensor<32x32xf32>) -> tensor<32x32xf32>
// TF: scf.forall.in_parallel
// TF-NOT: linalg.
// TF: scf.forall (%{{.*}}, %{{.*}}) in (4, 2) shared_outs
// TF: tensor.extract_slice [[MM]]
// TF: [[BIAS:%[0-9]+]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// TF: arith.addf
// TF: linalg.generic {{.*}} ins([[BIAS]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// TF: arith.maximumf
// TF: scf.forall.in_parallel
// TF-NOT: linalg.

// I(2,0,1) on matmul moves k outermost; I(1,0) on relu swaps its loops; the bias generic is unchanged.
// I-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// I-DAG: #[[B:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// I-DAG: #[[C:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// I-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// I-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// I-DAG: #[[SWAP:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// I-LABEL: func.func @chain
// I: linalg.fill
// I-NEXT: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<64x96xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// I: arith.mulf
// I-NEXT: arith.addf
// I: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// I: arith.addf
// I: linalg.generic {indexing_maps = [#[[SWAP]], #[[SWAP]]], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<64x128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// I: arith.maximumf
// I-NOT: linalg.matmul
// I-NOT: scf.for

// V after TF (and T for the matmul): the matmul, bias and relu all become vector code.
// V-LABEL: func.func @chain
// V-NOT: linalg.generic
// V-NOT: linalg.matmul
// V: scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs
// V: linalg.fill {{.*}} -> tensor<32x32xf32>
// V: vector.transfer_read {{.*}} : tensor<8x1xf32>, vector<8x32x1xf32>
// V: arith.mulf {{.*}} : vector<8x32x1xf32>
// V-NEXT: vector.multi_reduction <add>, {{.*}} [2] : vector<8x32x1xf32> to vector<8x32xf32>
// V: scf.forall (%{{.*}}, %{{.*}}) in (4, 2) shared_outs
// V: vector.transfer_read {{.*}} : tensor<64xf32>, vector<16x64xf32>
// V-NEXT: arith.addf {{.*}} : vector<16x64xf32>
// V: arith.maximumf {{.*}} : vector<16x64xf32>
// V: vector.transfer_write {{.*}} : vector<16x64xf32>, tensor<16x64xf32>
// V-NOT: linalg.generic
// V-NOT: linalg.matmul

// NT on every op leaves the function as it was.
// NT-LABEL: func.func @chain(%{{.*}}: tensor<64x96xf32>, %{{.*}}: tensor<96x128xf32>, %{{.*}}: tensor<128xf32>) -> tensor<64x128xf32>
// NT-NEXT: arith.constant 0.000000e+00 : f32
// NT-NEXT: tensor.empty() : tensor<64x128xf32>
// NT-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x128xf32>) -> tensor<64x128xf32>
// NT-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x96xf32>, tensor<96x128xf32>) outs(%{{.*}} : tensor<64x128xf32>) -> tensor<64x128xf32>
// NT-NEXT: tensor.empty() : tensor<64x128xf32>
// NT-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// NT-NEXT: ^bb0
// NT-NEXT: arith.addf
// NT-NEXT: linalg.yield
// NT-NEXT: } -> tensor<64x128xf32>
// NT-NEXT: tensor.empty() : tensor<64x128xf32>
// NT-NEXT: linalg.generic {{.*}} ins(%{{.*}} : tensor<64x128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// NT-NEXT: ^bb0
// NT-NEXT: arith.constant
// NT-NEXT: arith.maximumf
// NT-NEXT: linalg.yield
// NT-NEXT: } -> tensor<64x128xf32>
// NT-NEXT: return %{{.*}} : tensor<64x128xf32>
// NT-NOT: scf.
func.func @chain(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x128xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                            iterator_types = ["parallel", "parallel"]}
       ins(%mm, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e1 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
       ins(%biased : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
