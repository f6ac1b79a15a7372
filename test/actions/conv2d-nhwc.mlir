// Every action kind (T, TP, TF, I, V, NT) on a linalg.conv_2d_nhwc_hwcf with a fill-initialized output.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: T(1,4,8,16,1,1,8)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,4,8,0,0,0,0)"})' | FileCheck %s --check-prefix=TP
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(1,8,0,16,0,0,0)"})' | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: I(0,1,2,6,4,5,3)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,1,8,0,0,0,0) T(0,0,0,8,1,0,0) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: NT"})' | FileCheck %s --check-prefix=NT

// Loops: n, oh, ow, f (parallel), kh, kw, c (reduction).
// T(1,4,8,16,1,1,8): seven nested scf.for, the conv on 1x4x8x8 input and 1x1x8x16 filter tiles.
// T-LABEL: func.func @conv2d_nhwc
// T: scf.for %{{.*}} = %c0{{.*}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c32{{(_[0-9]+)?}} step %c16{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x8x8xf32>, tensor<1x1x8x16xf32>) outs(%{{.*}} : tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
// T-NOT: scf.forall

// TP(1,4,8,0,0,0,0): a 1x4x2 scf.forall over n, oh, ow; the rest of the conv inside.
// TP-LABEL: func.func @conv2d_nhwc
// TP: linalg.fill {{.*}} -> tensor<1x16x16x32xf32>
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 2) shared_outs
// TP: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x6x10x16xf32>, tensor<3x3x16x32xf32>) outs(%{{.*}} : tensor<1x4x8x32xf32>) -> tensor<1x4x8x32xf32>
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<1x4x8x32xf32> into tensor<1x16x16x32xf32>
// TP-NOT: scf.for

// TF(1,8,0,16,0,0,0): a 1x2x2 scf.forall over n, oh and f with the fill fused inside.
// TF-LABEL: func.func @conv2d_nhwc
// TF-NOT: linalg.fill
// TF: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 2) shared_outs
// TF: [[FILL:%[0-9]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// TF-NEXT: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x10x18x16xf32>, tensor<3x3x16x16xf32>) outs([[FILL]] : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// TF: scf.forall.in_parallel
// TF-NOT: linalg.fill

// I(0,1,2,6,4,5,3): a linalg.generic with the output channel f moved innermost.
// I-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3)>
// I-DAG: #[[FIL:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d3, d6)>
// I-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
// I-LABEL: func.func @conv2d_nhwc
// I: linalg.fill
// I-NEXT: linalg.generic {indexing_maps = [#[[IN]], #[[FIL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%{{.*}} : tensor<1x16x16x32xf32>)
// I: arith.mulf
// I-NEXT: arith.addf
// I-NOT: linalg.conv_2d
// I-NOT: scf.for

// V (OH and KH tiled to 1): decomposed to a 1-D conv and vectorized into vector.contract, no conv left.
// V-LABEL: func.func @conv2d_nhwc
// V-NOT: linalg.conv
// V: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 16, 2)
// V: scf.for %{{.*}} = %c0{{.*}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// V: vector.transfer_read {{.*}} : tensor<1x10x16xf32>, vector<1x10x16xf32>
// V: vector.transfer_read {{.*}} : tensor<3x16x8xf32>, vector<3x16x8xf32>
// V-COUNT-3: vector.contract {{.*}} : vector<1x8x16xf32>, vector<16x8xf32> into vector<1x8x8xf32>
// V: vector.transfer_write {{.*}} : vector<1x8x8xf32>, tensor<1x8x8xf32>
// V-NOT: linalg.conv

// NT leaves the function as it was.
// NT-LABEL: func.func @conv2d_nhwc(%{{.*}}: tensor<1x18x18x16xf32>, %{{.*}}: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32>
// NT-NEXT: arith.constant 0.000000e+00 : f32
// NT-NEXT: tensor.empty() : tensor<1x16x16x32xf32>
// NT-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
// NT-NEXT: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%{{.*}} : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
// NT-NEXT: return %{{.*}} : tensor<1x16x16x32xf32>
// NT-NOT: scf.
func.func @conv2d_nhwc(%input: tensor<1x18x18x16xf32>, %filter: tensor<3x3x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %out = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%input, %filter : tensor<1x18x18x16xf32>, tensor<3x3x16x32xf32>) outs(%out : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}
