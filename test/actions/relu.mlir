// Every action kind (T, TP, I, V, NT) on a 3-D relu linalg.generic; TF is rejected (no linalg producer).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: T(4,0,32)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(8,16,0)"})' | FileCheck %s --check-prefix=TP
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: TF(8,16,0)"})' 2>&1 | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: I(2,0,1)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(8,0,0) T(1,8,64) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: NT"})' | FileCheck %s --check-prefix=NT

// T(4,0,32): scf.for over loops 0 and 2 only (loop 1 untiled), the relu on 4x16x32 tiles.
// T-LABEL: func.func @relu
// T: scf.for %{{.*}} = %c0{{.*}} to %c32{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c32{{(_[0-9]+)?}} iter_args
// T-NOT: scf.for
// T: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16x32xf32>) outs(%{{.*}} : tensor<4x16x32xf32>)
// T-NEXT: ^bb0
// T: arith.maximumf
// T-NEXT: linalg.yield
// T-NEXT: } -> tensor<4x16x32xf32>
// T-NOT: scf.forall

// TP(8,16,0): a 4x1 scf.forall over loops 0 and 1.
// TP-LABEL: func.func @relu
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}, %{{.*}}) in (4, 1) shared_outs
// TP: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16x64xf32>) outs(%{{.*}} : tensor<8x16x64xf32>)
// TP: arith.maximumf
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<8x16x64xf32> into tensor<32x16x64xf32>
// TP-NOT: scf.for

// TF(8,16,0): the input is a function argument, so there is nothing to fuse.
// TF: error: linalg-rl-schedule: op 0 (linalg.generic): tiled_fusion TF(8,16,0) is not allowed: the op has no linalg producer to fuse
// TF-NOT: scf.forall

// I(2,0,1): the innermost loop moved outermost, every operand indexed (d1, d2, d0).
// I: #[[PERM:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// I-LABEL: func.func @relu
// I: linalg.generic {indexing_maps = [#[[PERM]], #[[PERM]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<32x16x64xf32>) outs(%{{.*}} : tensor<32x16x64xf32>)
// I-NEXT: ^bb0
// I: arith.maximumf
// I-NOT: scf.for

// V (after TP and T to 1x8x64 tiles): a vector maximumf, no linalg.generic left.
// V-LABEL: func.func @relu
// V-NOT: linalg.generic
// V: scf.forall (%{{.*}}) in (4)
// V: scf.for %{{.*}} = %c0{{.*}} to %c8{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// V-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// V-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c64{{(_[0-9]+)?}} iter_args
// V: vector.transfer_read {{.*}} : tensor<1x8x64xf32>, vector<1x8x64xf32>
// V: arith.maximumf {{.*}} : vector<1x8x64xf32>
// V: vector.transfer_write {{.*}} : vector<1x8x64xf32>, tensor<1x8x64xf32>
// V-NOT: linalg.generic

// NT leaves the function as it was.
// NT-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// NT-LABEL: func.func @relu(%{{.*}}: tensor<32x16x64xf32>) -> tensor<32x16x64xf32>
// NT-NEXT: tensor.empty() : tensor<32x16x64xf32>
// NT-NEXT: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<32x16x64xf32>) outs(%{{.*}} : tensor<32x16x64xf32>)
// NT-NEXT: ^bb0
// NT-NEXT: arith.constant 0.000000e+00 : f32
// NT-NEXT: arith.maximumf
// NT-NEXT: linalg.yield
// NT-NEXT: } -> tensor<32x16x64xf32>
// NT-NEXT: return %{{.*}} : tensor<32x16x64xf32>
// NT-NOT: scf.
func.func @relu(%x: tensor<32x16x64xf32>) -> tensor<32x16x64xf32> {
  %e = tensor.empty() : tensor<32x16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<32x16x64xf32>) outs(%e : tensor<32x16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<32x16x64xf32>
  return %r : tensor<32x16x64xf32>
}
