// mlir-rl-pad-to-tiles: odd extents of contractions and reductions padded
// to full tiles, the result sliced back; what it leaves alone.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-pad-to-tiles))' | FileCheck %s
// The pass's front end pads before the policy schedules, and dump-schedule
// replays it (the op ids do not change).
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.schedule
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay
// RUN: diff %t.out %t.replay
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// pad-to-tiles=false keeps the shapes.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{pad-to-tiles=false dump-schedule=%t.keep})' -o /dev/null
// RUN: FileCheck %s --check-prefix=KEEP < %t.keep

// SCRIPT: transform.apply_registered_pass "mlir-rl-pad-to-tiles"
// KEEP-NOT: apply_registered_pass

// M = 50 -> 64 (64 costs 14/50 more), K = 36 -> 40 (a contraction: zeros
// add nothing), N = 64 stays. The fill is made at the padded size.
// CHECK-LABEL: func.func @matmul
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<64x64xf32>
// CHECK:         %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<64x64xf32>)
// CHECK-DAG:     %[[A:.+]] = tensor.pad %{{.+}} low[0, 0] high[14, 4]
// CHECK-DAG:     %[[B:.+]] = tensor.pad %{{.+}} low[0, 0] high[4, 0]
// CHECK:         %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<64x40xf32>, tensor<40x64xf32>) outs(%[[F]] : tensor<64x64xf32>)
// CHECK:         %[[S:.+]] = tensor.extract_slice %[[M]][0, 0] [50, 64] [1, 1] : tensor<64x64xf32> to tensor<50x64xf32>
// CHECK:         return %[[S]]
func.func @matmul(%a: tensor<50x36xf32>, %b: tensor<36x64xf32>) -> tensor<50x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<50x64xf32>) -> tensor<50x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x36xf32>, tensor<36x64xf32>) outs(%f : tensor<50x64xf32>) -> tensor<50x64xf32>
  return %r : tensor<50x64xf32>
}

// The fill writes into a reshaped empty tensor (as conv-to-matmul leaves a
// pointwise convolution's accumulator): the padded fill writes into an empty
// tensor of the padded size, not into a pad of the reshape (a fill of all of
// it and a copy at run time).
// CHECK-LABEL: func.func @fill_of_a_reshape
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<64x64xf32>
// CHECK:         %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<64x64xf32>)
// CHECK-NOT:     tensor.pad %{{.*}} high[14, 0]
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<64x40xf32>, tensor<40x64xf32>) outs(%[[F]] : tensor<64x64xf32>)
func.func @fill_of_a_reshape(%a: tensor<50x36xf32>, %b: tensor<36x64xf32>) -> tensor<50x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x50x64xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<1x50x64xf32> into tensor<50x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%c : tensor<50x64xf32>) -> tensor<50x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x36xf32>, tensor<36x64xf32>) outs(%f : tensor<50x64xf32>) -> tensor<50x64xf32>
  return %r : tensor<50x64xf32>
}

// A broadcast bias as the accumulator is re-created at the padded size; an
// accumulator that is an argument is padded.
// CHECK-LABEL: func.func @bias
// CHECK:         %[[BB:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK:         linalg.matmul ins({{.+}}) outs(%[[BB]] : tensor<64x64xf32>)
// CHECK:         tensor.extract_slice
// CHECK-LABEL: func.func @bmm_into_argument
// CHECK:         %[[C:.+]] = tensor.pad %{{.+}} low[0, 0, 0] high[0, 14, 0]
// CHECK:         linalg.batch_matmul ins({{.+}} : tensor<2x64x40xf32>, tensor<2x40x64xf32>) outs(%[[C]] : tensor<2x64x64xf32>)
#bcast = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @bias(%a: tensor<50x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<50x64xf32> {
  %e = tensor.empty() : tensor<50x64xf32>
  %bb = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
        ins(%bias : tensor<64xf32>) outs(%e : tensor<50x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<50x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x64xf32>, tensor<64x64xf32>) outs(%bb : tensor<50x64xf32>) -> tensor<50x64xf32>
  return %r : tensor<50x64xf32>
}
func.func @bmm_into_argument(%a: tensor<2x50x36xf32>, %b: tensor<2x36x64xf32>, %c: tensor<2x50x64xf32>) -> tensor<2x50x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x50x36xf32>, tensor<2x36x64xf32>) outs(%c : tensor<2x50x64xf32>) -> tensor<2x50x64xf32>
  return %r : tensor<2x50x64xf32>
}

// Left alone: a matrix-vector product and a row reduction (each input
// element used once: padding would copy the input for nothing), a body that
// reads linalg.index, extents 32 divides.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     tensor.pad
// CHECK-NOT:     tensor.extract_slice
// CHECK:         return
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%a: tensor<50x36xf32>, %x: tensor<36xf32>, %y: tensor<50xf32>,
                      %b: tensor<64x40xf32>, %c: tensor<40x96xf32>, %d: tensor<64x96xf32>,
                      %p: tensor<36x50xf32>, %q: tensor<50x50xf32>)
    -> (tensor<50xf32>, tensor<50xf32>, tensor<50x50xf32>, tensor<64x96xf32>) {
  %mv = linalg.matvec ins(%a, %x : tensor<50x36xf32>, tensor<36xf32>) outs(%y : tensor<50xf32>) -> tensor<50xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
         ins(%a : tensor<50x36xf32>) outs(%y : tensor<50xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  } -> tensor<50xf32>
  %ix = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %p : tensor<50x36xf32>, tensor<36x50xf32>) outs(%q : tensor<50x50xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %m, %fi : f32
    %t = arith.addf %s, %o : f32
    linalg.yield %t : f32
  } -> tensor<50x50xf32>
  %mm = linalg.matmul ins(%b, %c : tensor<64x40xf32>, tensor<40x96xf32>) outs(%d : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %mv, %sum, %ix, %mm : tensor<50xf32>, tensor<50xf32>, tensor<50x50xf32>, tensor<64x96xf32>
}

// A reduction that is not a contraction (max-plus): its parallel loops are
// padded, its reduction is not (zeros are not neutral for max).
// CHECK-LABEL: func.func @max_plus
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<64x36xf32>, tensor<36x64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK:         tensor.extract_slice %{{.+}}[0, 0] [50, 50] [1, 1]
func.func @max_plus(%x: tensor<50x36xf32>, %y: tensor<36x50xf32>, %o: tensor<50x50xf32>) -> tensor<50x50xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%x, %y : tensor<50x36xf32>, tensor<36x50xf32>) outs(%o : tensor<50x50xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %s = arith.addf %p, %q : f32
    %m = arith.maximumf %s, %acc : f32
    linalg.yield %m : f32
  } -> tensor<50x50xf32>
  return %r : tensor<50x50xf32>
}

// An empty iteration space stays as it is: it computes nothing, and a
// zero-size tensor has no slice to take back (the pass made invalid IR; found
// by python -m mlir_rl.fuzz.parity, program fuzz/8/172).
// CHECK-LABEL: func.func @zero_batch
// CHECK-NEXT:    linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<0x31x48xf32>, tensor<0x48x5xf32>) outs(%{{.+}} : tensor<0x31x5xf32>)
// CHECK-NEXT:    return
func.func @zero_batch(%a: tensor<0x31x48xf32>, %b: tensor<0x48x5xf32>, %c: tensor<0x31x5xf32>) -> tensor<0x31x5xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<0x31x48xf32>, tensor<0x48x5xf32>) outs(%c : tensor<0x31x5xf32>) -> tensor<0x31x5xf32>
  return %r : tensor<0x31x5xf32>
}
