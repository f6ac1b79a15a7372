// mlir-rl-pad-to-tiles: odd extents of contractions and reductions padded
// to full tiles, the result sliced back; what it leaves alone.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-pad-to-tiles))' | FileCheck %s
// The pass's front end pads before the policy schedules, and dump-schedule
// replays it.
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
// KEEP-NOT: apply_registered_pass "mlir-rl-pad-to-tiles"

// M = 50 -> 64 (64 costs 14/50 more), K = 38 -> 40 (a contraction: zeros
// add nothing), N = 64 stays. The fill is made at the padded size.
// CHECK-LABEL: func.func @matmul
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<64x64xf32>
// CHECK:         %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<64x64xf32>)
// CHECK-DAG:     %[[A:.+]] = tensor.pad %{{.+}} low[0, 0] high[14, 2]
// CHECK-DAG:     %[[B:.+]] = tensor.pad %{{.+}} low[0, 0] high[2, 0]
// CHECK:         %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<64x40xf32>, tensor<40x64xf32>) outs(%[[F]] : tensor<64x64xf32>)
// CHECK:         %[[S:.+]] = tensor.extract_slice %[[M]][0, 0] [50, 64] [1, 1] : tensor<64x64xf32> to tensor<50x64xf32>
// CHECK:         return %[[S]]
func.func @matmul(%a: tensor<50x38xf32>, %b: tensor<38x64xf32>) -> tensor<50x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<50x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<50x64xf32>) -> tensor<50x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x38xf32>, tensor<38x64xf32>) outs(%f : tensor<50x64xf32>) -> tensor<50x64xf32>
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
func.func @fill_of_a_reshape(%a: tensor<50x38xf32>, %b: tensor<38x64xf32>) -> tensor<50x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x50x64xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<1x50x64xf32> into tensor<50x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%c : tensor<50x64xf32>) -> tensor<50x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<50x38xf32>, tensor<38x64xf32>) outs(%f : tensor<50x64xf32>) -> tensor<50x64xf32>
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
func.func @bmm_into_argument(%a: tensor<2x50x38xf32>, %b: tensor<2x38x64xf32>, %c: tensor<2x50x64xf32>) -> tensor<2x50x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x50x38xf32>, tensor<2x38x64xf32>) outs(%c : tensor<2x50x64xf32>) -> tensor<2x50x64xf32>
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
// Nor is it split, rows of 197 or not.
// CHECK-LABEL: func.func @zero_batch_odd_rows
// CHECK-NEXT:    linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<0x197x48xf32>, tensor<0x48x64xf32>) outs(%{{.+}} : tensor<0x197x64xf32>)
// CHECK-NEXT:    return
func.func @zero_batch_odd_rows(%a: tensor<0x197x48xf32>, %b: tensor<0x48x64xf32>, %c: tensor<0x197x64xf32>) -> tensor<0x197x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<0x197x48xf32>, tensor<0x48x64xf32>) outs(%c : tensor<0x197x64xf32>) -> tensor<0x197x64xf32>
  return %r : tensor<0x197x64xf32>
}

// A contraction's rows of 64 or more that 32 does not divide are split, not
// padded: 192 + 5 of ViT's 197 tokens, each part on slices of the inputs
// (nothing copied), with its own fill (the schedule fuses it; bufferized in
// the result's buffer), inserted in turn. K = 196 (4 divides it) and
// N = 128 stay; the part of 5 rows is not padded.
// CHECK-LABEL: func.func @split_rows
// CHECK-NOT:     tensor.pad
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<12x197x128xf32>
// CHECK:         %[[A1:.+]] = tensor.extract_slice %arg0[0, 0, 0] [12, 192, 196] [1, 1, 1]
// CHECK:         %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<12x192x128xf32>)
// CHECK:         %[[M1:.+]] = linalg.batch_matmul ins(%[[A1]], %arg1 : tensor<12x192x196xf32>, tensor<12x196x128xf32>) outs(%[[F1]] : tensor<12x192x128xf32>)
// CHECK:         %[[I1:.+]] = tensor.insert_slice %[[M1]] into %[[E]][0, 0, 0] [12, 192, 128] [1, 1, 1]
// CHECK:         %[[A2:.+]] = tensor.extract_slice %arg0[0, 192, 0] [12, 5, 196] [1, 1, 1]
// CHECK:         %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<12x5x128xf32>)
// CHECK:         %[[M2:.+]] = linalg.batch_matmul ins(%[[A2]], %arg1 : tensor<12x5x196xf32>, tensor<12x196x128xf32>) outs(%[[F2]] : tensor<12x5x128xf32>)
// CHECK:         %[[I2:.+]] = tensor.insert_slice %[[M2]] into %[[I1]][0, 192, 0] [12, 5, 128] [1, 1, 1]
// CHECK:         return %[[I2]]
func.func @split_rows(%a: tensor<12x197x196xf32>, %b: tensor<12x196x128xf32>) -> tensor<12x197x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x197x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x197x128xf32>) -> tensor<12x197x128xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x197x196xf32>, tensor<12x196x128xf32>) outs(%f : tensor<12x197x128xf32>) -> tensor<12x197x128xf32>
  return %r : tensor<12x197x128xf32>
}

// Split rows into an accumulator that is read (an argument): the parts
// accumulate into slices of it, the second into the first's insertion. The
// 96-row part's columns, which would be padded (100 -> 128), are split too
// (96 + 4); the 4-row part's are neither (its B would be copied for 4 rows).
// CHECK-LABEL: func.func @split_rows_into_argument
// CHECK-NOT:     tensor.pad
// CHECK:         %[[C1:.+]] = tensor.extract_slice %arg2[0, 0] [96, 100] [1, 1]
// CHECK:         %[[C11:.+]] = tensor.extract_slice %[[C1]][0, 0] [96, 96] [1, 1]
// CHECK:         %[[M11:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<96x64xf32>, tensor<64x96xf32>) outs(%[[C11]] : tensor<96x96xf32>)
// CHECK:         %[[I11:.+]] = tensor.insert_slice %[[M11]] into %[[C1]][0, 0] [96, 96] [1, 1]
// CHECK:         %[[C12:.+]] = tensor.extract_slice %[[I11]][0, 96] [96, 4] [1, 1]
// CHECK:         %[[M12:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<96x64xf32>, tensor<64x4xf32>) outs(%[[C12]] : tensor<96x4xf32>)
// CHECK:         %[[I12:.+]] = tensor.insert_slice %[[M12]] into %[[I11]][0, 96] [96, 4] [1, 1]
// CHECK:         %[[I1:.+]] = tensor.insert_slice %[[I12]] into %arg2[0, 0] [96, 100] [1, 1]
// CHECK:         %[[C2:.+]] = tensor.extract_slice %[[I1]][96, 0] [4, 100] [1, 1]
// CHECK:         linalg.matmul ins(%{{.+}}, %arg1 : tensor<4x64xf32>, tensor<64x100xf32>) outs(%[[C2]] : tensor<4x100xf32>)
// CHECK:         tensor.insert_slice %{{.+}} into %[[I1]][96, 0] [4, 100] [1, 1]
func.func @split_rows_into_argument(%a: tensor<100x64xf32>, %b: tensor<64x100xf32>, %c: tensor<100x100xf32>) -> tensor<100x100xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<100x64xf32>, tensor<64x100xf32>) outs(%c : tensor<100x100xf32>) -> tensor<100x100xf32>
  return %r : tensor<100x100xf32>
}

// Split rows whose fill writes into a reshaped empty tensor (a pointwise NCHW
// convolution's 144 filters from conv-to-matmul): each part gets a fill of
// its own empty tensor (fusable), not a slice of the whole fill; 144 -> 128 + 16.
// CHECK-LABEL: func.func @split_rows_fill_of_a_reshape
// CHECK-NOT:     tensor.collapse_shape %{{.+}} : tensor<1x144x56x56xf32>
// CHECK:         %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<128x3136xf32>)
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<128x24xf32>, tensor<24x3136xf32>) outs(%[[F1]] : tensor<128x3136xf32>)
// CHECK:         %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16x3136xf32>)
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<16x24xf32>, tensor<24x3136xf32>) outs(%[[F2]] : tensor<16x3136xf32>)
func.func @split_rows_fill_of_a_reshape(%w: tensor<144x24xf32>, %x: tensor<24x3136xf32>) -> tensor<144x3136xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x144x56x56xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2, 3]] : tensor<1x144x56x56xf32> into tensor<144x3136xf32>
  %f = linalg.fill ins(%z : f32) outs(%c : tensor<144x3136xf32>) -> tensor<144x3136xf32>
  %r = linalg.matmul ins(%w, %x : tensor<144x24xf32>, tensor<24x3136xf32>) outs(%f : tensor<144x3136xf32>) -> tensor<144x3136xf32>
  return %r : tensor<144x3136xf32>
}

// Columns that would be padded are split as rows are (1000 -> 992 + 8, the
// first part in whole packed panels; padded to 1024, the 1000 columns of the
// result were copied out of the padded one), each part with its own fill.
// CHECK-LABEL: func.func @split_columns
// CHECK-NOT:     tensor.pad
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<192x1000xf32>
// CHECK:         %[[B1:.+]] = tensor.extract_slice %arg1[0, 0] [128, 992] [1, 1]
// CHECK:         %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<192x992xf32>)
// CHECK:         %[[M1:.+]] = linalg.matmul ins(%arg0, %[[B1]] : tensor<192x128xf32>, tensor<128x992xf32>) outs(%[[F1]] : tensor<192x992xf32>)
// CHECK:         %[[I1:.+]] = tensor.insert_slice %[[M1]] into %[[E]][0, 0] [192, 992] [1, 1]
// CHECK:         %[[B2:.+]] = tensor.extract_slice %arg1[0, 992] [128, 8] [1, 1]
// CHECK:         %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<192x8xf32>)
// CHECK:         %[[M2:.+]] = linalg.matmul ins(%arg0, %[[B2]] : tensor<192x128xf32>, tensor<128x8xf32>) outs(%[[F2]] : tensor<192x8xf32>)
// CHECK:         %[[I2:.+]] = tensor.insert_slice %[[M2]] into %[[I1]][0, 992] [192, 8] [1, 1]
// CHECK:         return %[[I2]]
func.func @split_columns(%a: tensor<192x128xf32>, %b: tensor<128x1000xf32>) -> tensor<192x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<192x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x1000xf32>) -> tensor<192x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<192x128xf32>, tensor<128x1000xf32>) outs(%f : tensor<192x1000xf32>) -> tensor<192x1000xf32>
  return %r : tensor<192x1000xf32>
}

// ViT's attention scores (a batch matmul with B transposed, 197 tokens both
// ways): rows 192 + 5, then the 192-row part's columns 192 + 5 (padded to
// 256 they were 30% more work); the 5-row part's columns stay 197.
// CHECK-LABEL: func.func @split_scores
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.batch_matmul indexing_maps = {{.+}} ins(%{{.+}}, %{{.+}} : tensor<12x192x64xf32>, tensor<12x192x64xf32>) outs(%{{.+}} : tensor<12x192x192xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = {{.+}} ins(%{{.+}}, %{{.+}} : tensor<12x192x64xf32>, tensor<12x5x64xf32>) outs(%{{.+}} : tensor<12x192x5xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = {{.+}} ins(%{{.+}}, %arg1 : tensor<12x5x64xf32>, tensor<12x197x64xf32>) outs(%{{.+}} : tensor<12x5x197xf32>)
func.func @split_scores(%q: tensor<12x197x64xf32>, %k: tensor<12x197x64xf32>) -> tensor<12x197x197xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x197x197xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x197x197xf32>) -> tensor<12x197x197xf32>
  %r = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%q, %k : tensor<12x197x64xf32>, tensor<12x197x64xf32>) outs(%f : tensor<12x197x197xf32>) -> tensor<12x197x197xf32>
  return %r : tensor<12x197x197xf32>
}

// Rows too wide for one vector tile (over 512) that no vector register
// divides (wav2vec2's 1x512x3199 group norm scaling and GELU): split into
// 3168 = 99 x 32 columns and a 31-wide tail, each on slices of the rows and
// the per-row operands as they are; rows of whole registers, or narrow
// enough for one tile, linalg.index bodies and empty ones stay.
// CHECK-LABEL: func.func @split_wide_rows
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<1x16x3199xf32>
// CHECK:         %[[X0:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [1, 16, 3168] [1, 1, 1]
// CHECK:         %[[A:.+]] = linalg.generic {{.*}} ins(%[[X0]], %{{.+}} : tensor<1x16x3168xf32>, tensor<1x16x1xf32>)
// CHECK:         %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0] [1, 16, 3168] [1, 1, 1]
// CHECK:         %[[X1:.+]] = tensor.extract_slice %{{.+}}[0, 0, 3168] [1, 16, 31] [1, 1, 1]
// CHECK:         %[[B:.+]] = linalg.generic {{.*}} ins(%[[X1]], %{{.+}} : tensor<1x16x31xf32>, tensor<1x16x1xf32>)
// CHECK:         tensor.insert_slice %[[B]] into %[[I0]][0, 0, 3168] [1, 16, 31] [1, 1, 1]
// CHECK-LABEL: func.func @wide_rows_kept
// CHECK-NOT:     tensor.extract_slice
// CHECK:         return
#rows = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#per_row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @split_wide_rows(%x: tensor<1x16x3199xf32>, %s: tensor<1x16x1xf32>) -> tensor<1x16x3199xf32> {
  %e = tensor.empty() : tensor<1x16x3199xf32>
  %r = linalg.generic {indexing_maps = [#rows, #per_row, #rows], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x16x3199xf32>, tensor<1x16x1xf32>) outs(%e : tensor<1x16x3199xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %g = math.erf %m : f32
    linalg.yield %g : f32
  } -> tensor<1x16x3199xf32>
  return %r : tensor<1x16x3199xf32>
}
func.func @wide_rows_kept(%x: tensor<4x3200xf32>, %y: tensor<4x511xf32>, %z: tensor<4x3199xf32>,
                          %w: tensor<0x1021xf32>)
    -> (tensor<4x3200xf32>, tensor<4x511xf32>, tensor<4x3199xf32>, tensor<0x1021xf32>) {
  %e = tensor.empty() : tensor<4x3200xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3200xf32>) outs(%e : tensor<4x3200xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x3200xf32>
  %e2 = tensor.empty() : tensor<4x511xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x511xf32>) outs(%e2 : tensor<4x511xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x511xf32>
  %e3 = tensor.empty() : tensor<4x3199xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x3199xf32>) outs(%e3 : tensor<4x3199xf32>) {
  ^bb0(%i: f32, %o: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %j : index to i32
    %f = arith.sitofp %k : i32 to f32
    %n = arith.addf %i, %f : f32
    linalg.yield %n : f32
  } -> tensor<4x3199xf32>
  %e4 = tensor.empty() : tensor<0x1021xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<0x1021xf32>) outs(%e4 : tensor<0x1021xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<0x1021xf32>
  return %a, %b, %c, %d : tensor<4x3200xf32>, tensor<4x511xf32>, tensor<4x3199xf32>, tensor<0x1021xf32>
}
