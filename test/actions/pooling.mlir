// Every action kind (T, TP, TF, I, V, NT) on a 2x2 stride-2 linalg.pooling_nchw_max with a fill-initialized output.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: T(1,4,4,8,1,1)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,8,4,0,0,0)"})' | FileCheck %s --check-prefix=TP
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: TF(1,8,0,0,0,0)"})' | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="1: I(0,2,3,1,4,5)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: TP(1,8,1,0,0,0) T(0,0,0,0,1,0) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="1: NT"})' | FileCheck %s --check-prefix=NT

// Loops: n, c, oh, ow (parallel), kh, kw (reduction).
// T(1,4,4,8,1,1): six nested scf.for, the pooling on 1x4x7x15 input and 1x1 window tiles.
// T-LABEL: func.func @maxpool_nchw
// T: scf.for %{{.*}} = %c0{{.*}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// T: linalg.pooling_nchw_max {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x7x15xf32>, tensor<1x1xf32>) outs(%{{.*}} : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// T-NOT: scf.forall

// TP(1,8,4,0,0,0): a 1x2x4 scf.forall over n, c, oh; the windows inside.
// TP-LABEL: func.func @maxpool_nchw
// TP: linalg.fill {{.*}} -> tensor<1x16x16x16xf32>
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 4) shared_outs
// TP: linalg.pooling_nchw_max {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x32xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32>
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<1x8x4x16xf32> into tensor<1x16x16x16xf32>
// TP-NOT: scf.for

// TF(1,8,0,0,0,0): a 1x2 scf.forall over n and c with the (-inf) fill fused inside.
// TF-LABEL: func.func @maxpool_nchw
// TF-NOT: linalg.fill
// TF: scf.forall (%{{.*}}, %{{.*}}) in (1, 2) shared_outs
// TF: [[FILL:%[0-9]+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// TF-NEXT: linalg.pooling_nchw_max {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x32x32xf32>, tensor<2x2xf32>) outs([[FILL]] : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// TF: scf.forall.in_parallel
// TF-NOT: linalg.fill

// I(0,2,3,1,4,5): a linalg.generic over (n, oh, ow, c, kh, kw).
// I-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
// I-DAG: #[[WIN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// I-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1, d2)>
// I-LABEL: func.func @maxpool_nchw
// I: linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x16x32x32xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x16x16x16xf32>)
// I-NEXT: ^bb0
// I-NEXT: arith.maximumf
// I-NOT: linalg.pooling
// I-NOT: scf.for

// V (OH and KH tiled to 1): decomposed to 1-D and vectorized to vector maximumf ops, no pooling left.
// V-LABEL: func.func @maxpool_nchw
// V-NOT: linalg.pooling
// V: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 2, 16)
// V: scf.for %{{.*}} = %c0{{.*}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// V: vector.transfer_read {{.*}} : tensor<1x8x32xf32>, vector<1x8x32xf32>
// V-COUNT-32: arith.maximumf {{.*}} : vector<1x1x8xf32>
// V: vector.transfer_write {{.*}} : vector<1x8x16xf32>, tensor<1x8x16xf32>
// V-NOT: linalg.pooling

// NT leaves the function as it was.
// NT-LABEL: func.func @maxpool_nchw(%{{.*}}: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
// NT-NEXT: arith.constant -3.40282347E+38 : f32
// NT-NEXT: tensor.empty() : tensor<1x16x16x16xf32>
// NT-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
// NT-NEXT: tensor.empty() : tensor<2x2xf32>
// NT-NEXT: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x16x32x32xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
// NT-NEXT: return %{{.*}} : tensor<1x16x16x16xf32>
// NT-NOT: scf.
func.func @maxpool_nchw(%input: tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> {
  %cst = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %out = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%input, %win : tensor<1x16x32x32xf32>, tensor<2x2xf32>) outs(%out : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}
