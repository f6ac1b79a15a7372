// Every action kind (T, TP, TF, I, V, NT) on a linalg.conv_2d_nchw_fchw with a fill-initialized output.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: T(1,8,4,8,4,1,1)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,8,4,0,0,0,0)"})' | FileCheck %s --check-prefix=TP
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(0,16,8,0,0,0,0)"})' | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: I(0,1,4,2,3,5,6)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,8,1,0,0,0,0) T(0,0,0,8,0,1,0) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: NT"})' | FileCheck %s --check-prefix=NT

// Loops: n, f, oh, ow (parallel), c, kh, kw (reduction).
// T(1,8,4,8,4,1,1): seven nested scf.for, the conv on 1x4x4x8 input and 8x4x1x1 filter tiles.
// T-LABEL: func.func @conv2d_nchw
// T: scf.for %{{.*}} = %c0{{.*}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c32{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x4x8xf32>, tensor<8x4x1x1xf32>) outs(%{{.*}} : tensor<1x8x4x8xf32>) -> tensor<1x8x4x8xf32>
// T-NOT: scf.forall

// TP(1,8,4,0,0,0,0): a 1x4x4 scf.forall over n, f, oh; the rest of the conv inside.
// TP-LABEL: func.func @conv2d_nchw
// TP: linalg.fill {{.*}} -> tensor<1x32x16x16xf32>
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4) shared_outs
// TP: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x6x18xf32>, tensor<8x16x3x3xf32>) outs(%{{.*}} : tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32>
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<1x8x4x16xf32> into tensor<1x32x16x16xf32>
// TP-NOT: scf.for

// TF(0,16,8,0,0,0,0): a 2x2 scf.forall over f and oh with the fill fused inside.
// TF-LABEL: func.func @conv2d_nchw
// TF-NOT: linalg.fill
// TF: scf.forall (%{{.*}}, %{{.*}}) in (2, 2) shared_outs
// TF: [[FILL:%[0-9]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x16x8x16xf32>) -> tensor<1x16x8x16xf32>
// TF-NEXT: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x10x18xf32>, tensor<16x16x3x3xf32>) outs([[FILL]] : tensor<1x16x8x16xf32>) -> tensor<1x16x8x16xf32>
// TF: scf.forall.in_parallel
// TF-NOT: linalg.fill

// I(0,1,4,2,3,5,6): a linalg.generic with the input channel c moved to loop 2.
// I-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3 + d5, d4 + d6)>
// I-DAG: #[[FIL:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>
// I-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d4)>
// I-LABEL: func.func @conv2d_nchw
// I: linalg.fill
// I-NEXT: linalg.generic {indexing_maps = [#[[IN]], #[[FIL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<1x32x16x16xf32>)
// I: arith.mulf
// I-NEXT: arith.addf
// I-NOT: linalg.conv_2d
// I-NOT: scf.for

// V (OH and KH tiled to 1): decomposed to a 1-D conv and vectorized into vector.contract, no conv left.
// V-LABEL: func.func @conv2d_nchw
// V-NOT: linalg.conv
// V: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 16)
// V: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// V-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// V: vector.transfer_read {{.*}} : tensor<1x16x10xf32>, vector<1x16x10xf32>
// V: vector.transfer_read {{.*}} : tensor<8x16x3xf32>, vector<8x16x3xf32>
// V-COUNT-3: vector.contract {{.*}} : vector<1x8x16xf32>, vector<16x8xf32> into vector<1x8x8xf32>
// V: vector.transfer_write {{.*}} : vector<1x8x8xf32>, tensor<1x8x8xf32>
// V-NOT: linalg.conv

// NT leaves the function as it was.
// NT-LABEL: func.func @conv2d_nchw(%{{.*}}: tensor<1x16x18x18xf32>, %{{.*}}: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32>
// NT-NEXT: arith.constant 0.000000e+00 : f32
// NT-NEXT: tensor.empty() : tensor<1x32x16x16xf32>
// NT-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
// NT-NEXT: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
// NT-NEXT: return %{{.*}} : tensor<1x32x16x16xf32>
// NT-NOT: scf.
func.func @conv2d_nchw(%input: tensor<1x16x18x18xf32>, %filter: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %O = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%input, %filter : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%O : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}
