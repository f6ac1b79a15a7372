// Every action kind (T, TP, I, V, NT) on an elementwise linalg.add; TF is rejected (no linalg producer).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: T(8,64)"})' | FileCheck %s --check-prefix=T
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(16,0)"})' | FileCheck %s --check-prefix=TP
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: TF(16,0)"})' 2>&1 | FileCheck %s --check-prefix=TF
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(linalg-rl-schedule{schedule="0: I(1,0)"})' | FileCheck %s --check-prefix=I
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: TP(16,0) T(4,64) V"})' | FileCheck %s --check-prefix=V
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{schedule="0: NT"})' | FileCheck %s --check-prefix=NT

// T(8,64): two nested scf.for, the add on 8x64 tiles.
// T-LABEL: func.func @add
// T: scf.for %{{.*}} = %c0{{.*}} to %c64{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// T-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c256{{(_[0-9]+)?}} step %c64{{(_[0-9]+)?}} iter_args
// T: linalg.add ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>) -> tensor<8x64xf32>
// T-NOT: scf.forall

// TP(16,0): a 4-way scf.forall over the rows, whole rows inside.
// TP-LABEL: func.func @add
// TP-NOT: scf.for
// TP: scf.forall (%{{.*}}) in (4) shared_outs
// TP: linalg.add ins(%{{.*}}, %{{.*}} : tensor<16x256xf32>, tensor<16x256xf32>) outs(%{{.*}} : tensor<16x256xf32>) -> tensor<16x256xf32>
// TP: scf.forall.in_parallel
// TP-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<16x256xf32> into tensor<64x256xf32>
// TP-NOT: scf.for

// TF(16,0): the inputs are function arguments, so there is nothing to fuse.
// TF: error: linalg-rl-schedule: op 0 (linalg.add): tiled_fusion TF(16,0) is not allowed: the op has no linalg producer to fuse
// TF-NOT: scf.forall

// I(1,0): a linalg.generic over (j, i): every operand indexed (d1, d0).
// I: #[[PERM:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// I-LABEL: func.func @add
// I: linalg.generic {indexing_maps = [#[[PERM]], #[[PERM]], #[[PERM]]], iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<64x256xf32>, tensor<64x256xf32>) outs(%{{.*}} : tensor<64x256xf32>)
// I-NEXT: ^bb0
// I-NEXT: arith.addf
// I-NOT: linalg.add
// I-NOT: scf.for

// V (after TP and T to 4x64 tiles): a vector addf, no linalg.add left.
// V-LABEL: func.func @add
// V-NOT: linalg.add
// V: scf.forall (%{{.*}}) in (4)
// V: scf.for %{{.*}} = %c0{{.*}} to %c16{{(_[0-9]+)?}} step %c4{{(_[0-9]+)?}} iter_args
// V-NEXT: scf.for %{{.*}} = %c0{{.*}} to %c256{{(_[0-9]+)?}} step %c64{{(_[0-9]+)?}} iter_args
// V: vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<4x64xf32>
// V: vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<4x64xf32>
// V: arith.addf {{.*}} : vector<4x64xf32>
// V: vector.transfer_write {{.*}} : vector<4x64xf32>, tensor<4x64xf32>
// V-NOT: linalg.add

// NT leaves the function as it was.
// NT-LABEL: func.func @add(%{{.*}}: tensor<64x256xf32>, %{{.*}}: tensor<64x256xf32>) -> tensor<64x256xf32>
// NT-NEXT: tensor.empty() : tensor<64x256xf32>
// NT-NEXT: linalg.add ins(%{{.*}}, %{{.*}} : tensor<64x256xf32>, tensor<64x256xf32>) outs(%{{.*}} : tensor<64x256xf32>) -> tensor<64x256xf32>
// NT-NEXT: return %{{.*}} : tensor<64x256xf32>
// NT-NOT: scf.
func.func @add(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%x, %y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
