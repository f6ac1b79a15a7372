// mlir-rl-bf16-dot: a matmul or batch matmul of extended bf16 values
// becomes a micro-kernel of x86vector.avx512.dot: a constant B (or its
// transpose, a linear layer's weight) packed in VNNI panels at compile
// time, another B read two rows at a time and interleaved, A read as
// pairs, tiles of 8 rows (and one of the rest) by 32 or 16 columns in an
// scf.forall; the extensions, the transpose and the fill go; columns past
// the last panel stay an f32 matmul of their own. Left alone: A not from
// bf16, N below 16, K = 1, f16; an odd K's last step is an f32 matmul.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-bf16-dot))' | FileCheck %s
#id = affine_map<(i, j) -> (i, j)>

// B [K, N] = [2, 16] holding 0..31: the panel is B's columns in pairs
// (B[0][i], B[1][i]): 0, 16, 1, 17, ...
// CHECK-LABEL: func.func @plain_constant
// CHECK-NOT:     linalg.
// CHECK:         arith.constant dense<{{\[\[\[}}0.000000e+00, 1.600000e+01, 1.000000e+00, 1.700000e+01, 2.000000e+00,{{.*}}> : tensor<1x1x32xbf16>
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [3, 1, 2] : tensor<3x2xbf16> into tensor<3x1x2xbf16>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK-COUNT-3:   x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT:       x86vector.avx512.dot
// CHECK:           tensor.parallel_insert_slice %{{.*}} [3, 16] [1, 1]
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @plain_constant(%a: tensor<3x2xbf16>) -> tensor<3x16xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<2x16xbf16>
  %e_b = tensor.empty() : tensor<2x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<2x16xbf16>) outs(%e_b : tensor<2x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<2x16xf32>
  %e_af = tensor.empty() : tensor<3x2xf32>
  %af = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x2xbf16>) outs(%e_af : tensor<3x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<3x2xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x16xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3x16xf32>) -> tensor<3x16xf32>
  %m = linalg.matmul ins(%af, %b : tensor<3x2xf32>, tensor<2x16xf32>) outs(%f : tensor<3x16xf32>) -> tensor<3x16xf32>
  return %m : tensor<3x16xf32>
}

// A weight W [N, K] = [32, 2] transposed: with K = 2 its VNNI panel is W's
// own order. 20 rows: two tiles of 8, then one of 4; 32 columns, two
// vectors per row; the accumulators start from the init (not a fill).
// CHECK-LABEL: func.func @transposed_weight_init
// CHECK-NOT:     linalg.
// CHECK:         arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00,{{.*}}> : tensor<1x1x64xbf16>
// CHECK:         %[[MAIN:.*]] = scf.forall (%{{.*}}, %{{.*}}) in (1, 2) shared_outs(%[[O:.*]] = %arg1)
// CHECK-COUNT-16:  vector.transfer_read %{{.*}} : tensor<8x32xf32>, vector<16xf32>
// CHECK:           scf.for
// CHECK-COUNT-2:     vector.transfer_read %{{.*}} : tensor<1x1x64xbf16>, vector<32xbf16>
// CHECK-COUNT-16:    x86vector.avx512.dot
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1) shared_outs(%{{.*}} = %[[MAIN]])
// CHECK-COUNT-8:     x86vector.avx512.dot
// CHECK:           tensor.parallel_insert_slice %{{.*}} [4, 32] [1, 1]
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @transposed_weight_init(%a: tensor<20x2xbf16>, %c: tensor<20x32xf32>) -> tensor<20x32xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0], [18.0, 19.0], [20.0, 21.0], [22.0, 23.0], [24.0, 25.0], [26.0, 27.0], [28.0, 29.0], [30.0, 31.0], [32.0, 33.0], [34.0, 35.0], [36.0, 37.0], [38.0, 39.0], [40.0, 41.0], [42.0, 43.0], [44.0, 45.0], [46.0, 47.0], [48.0, 49.0], [50.0, 51.0], [52.0, 53.0], [54.0, 55.0], [56.0, 57.0], [58.0, 59.0], [60.0, 61.0], [62.0, 63.0]]> : tensor<32x2xbf16>
  %e0 = tensor.empty() : tensor<2x32xbf16>
  %t = linalg.transpose ins(%w : tensor<32x2xbf16>) outs(%e0 : tensor<2x32xbf16>) permutation = [1, 0]
  %e_b = tensor.empty() : tensor<2x32xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x32xbf16>) outs(%e_b : tensor<2x32xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<2x32xf32>
  %e_af = tensor.empty() : tensor<20x2xf32>
  %af = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<20x2xbf16>) outs(%e_af : tensor<20x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<20x2xf32>
  %m = linalg.matmul ins(%af, %b : tensor<20x2xf32>, tensor<2x32xf32>) outs(%c : tensor<20x32xf32>) -> tensor<20x32xf32>
  return %m : tensor<20x32xf32>
}

// B an argument: rows 2k and 2k+1 read and interleaved (as i16) per step.
// CHECK-LABEL: func.func @argument_rhs
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:           scf.for
// CHECK-COUNT-2:     vector.transfer_read %{{.*}} : tensor<4x32xbf16>, vector<32xbf16>
// CHECK:             vector.interleave %{{.*}}, %{{.*}} : vector<32xi16> -> vector<64xi16>
// CHECK-COUNT-2:     vector.extract_strided_slice
// CHECK-COUNT-8:     x86vector.avx512.dot
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @argument_rhs(%a: tensor<4x4xbf16>, %bb: tensor<4x32xbf16>) -> tensor<4x32xf32> {
  %e_bv = tensor.empty() : tensor<4x32xf32>
  %bv = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%bb : tensor<4x32xbf16>) outs(%e_bv : tensor<4x32xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x32xf32>
  %e_af = tensor.empty() : tensor<4x4xf32>
  %af = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xbf16>) outs(%e_af : tensor<4x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%af, %bv : tensor<4x4xf32>, tensor<4x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}

// A batch matmul (attention's scores): the forall's first dimension is the
// batch, every index and the tile carry it.
// CHECK-LABEL: func.func @batch
// CHECK-NOT:     linalg.
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [3, 8, 2, 2] : tensor<3x8x4xbf16> into tensor<3x8x2x2xbf16>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 1, 1)
// CHECK:           tensor.extract_slice %{{.*}} [1, 8, 16] [1, 1, 1] : tensor<3x8x16xf32> to tensor<1x8x16xf32>
// CHECK:           vector.interleave %{{.*}}, %{{.*}} : vector<16xi16> -> vector<32xi16>
// CHECK-COUNT-8:     x86vector.avx512.dot
// CHECK:           tensor.parallel_insert_slice %{{.*}} [1, 8, 16] [1, 1, 1]
// CHECK-NOT:     linalg.
// CHECK:         return
#id3 = affine_map<(b, i, j) -> (b, i, j)>
func.func @batch(%a: tensor<3x8x4xbf16>, %bb: tensor<3x4x16xbf16>) -> tensor<3x8x16xf32> {
  %e_bv = tensor.empty() : tensor<3x4x16xf32>
  %bv = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bb : tensor<3x4x16xbf16>) outs(%e_bv : tensor<3x4x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<3x4x16xf32>
  %e_af = tensor.empty() : tensor<3x8x4xf32>
  %af = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<3x8x4xbf16>) outs(%e_af : tensor<3x8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<3x8x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x16xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  %m = linalg.batch_matmul ins(%af, %bv : tensor<3x8x4xf32>, tensor<3x4x16xf32>) outs(%f : tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  return %m : tensor<3x8x16xf32>
}

// The extensions above reshapes (mlir-rl-compute-in-f32 moves them there):
// the reshapes are rebuilt on the bf16 tensors, the f32 ones go.
// CHECK-LABEL: func.func @through_reshapes
// CHECK-NOT:     linalg.
// CHECK-DAG:     tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<1x3x8x4xbf16> into tensor<3x8x4xbf16>
// CHECK-DAG:     tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<1x3x4x16xbf16> into tensor<3x4x16xbf16>
// CHECK-NOT:     xf32> into
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 1, 1)
// CHECK-NOT:     linalg.
// CHECK:         return
#id4 = affine_map<(a, b, i, j) -> (a, b, i, j)>
func.func @through_reshapes(%a: tensor<1x3x8x4xbf16>, %bb: tensor<1x3x4x16xbf16>) -> tensor<3x8x16xf32> {
  %e_bv = tensor.empty() : tensor<1x3x4x16xf32>
  %bv = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bb : tensor<1x3x4x16xbf16>) outs(%e_bv : tensor<1x3x4x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<1x3x4x16xf32>
  %e_af = tensor.empty() : tensor<1x3x8x4xf32>
  %af = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x3x8x4xbf16>) outs(%e_af : tensor<1x3x8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<1x3x8x4xf32>
  %ca = tensor.collapse_shape %af [[0, 1], [2], [3]] : tensor<1x3x8x4xf32> into tensor<3x8x4xf32>
  %cb = tensor.collapse_shape %bv [[0, 1], [2], [3]] : tensor<1x3x4x16xf32> into tensor<3x4x16xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x16xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  %m = linalg.batch_matmul ins(%ca, %cb : tensor<3x8x4xf32>, tensor<3x4x16xf32>) outs(%f : tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  return %m : tensor<3x8x16xf32>
}

// N = 40: one panel of 32 from the weight's first 32 rows (a run of its
// elements), the last 8 columns an f32 matmul on slices, inserted after.
// CHECK-LABEL: func.func @columns_past_panels
// CHECK:         arith.constant dense<{{.*}}> : tensor<1x1x64xbf16>
// CHECK:         %[[K:.*]] = scf.forall (%{{.*}}, %{{.*}}) in (1, 1)
// CHECK:           x86vector.avx512.dot
// CHECK-DAG:     %[[B:.*]] = tensor.extract_slice %{{.*}}[0, 32] [2, 8] [1, 1] : tensor<2x40xf32> to tensor<2x8xf32>
// CHECK-DAG:     %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK:         %[[T:.*]] = linalg.matmul ins(%{{.*}}, %[[B]] : tensor<8x2xf32>, tensor<2x8xf32>) outs(%[[F]] : tensor<8x8xf32>)
// CHECK:         tensor.insert_slice %[[T]] into %[[K]][0, 32] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x40xf32>
func.func @columns_past_panels(%a: tensor<8x2xbf16>) -> tensor<8x40xf32> {
  %w = arith.constant dense<0.5> : tensor<40x2xbf16>
  %e0 = tensor.empty() : tensor<2x40xbf16>
  %t = linalg.transpose ins(%w : tensor<40x2xbf16>) outs(%e0 : tensor<2x40xbf16>) permutation = [1, 0]
  %e_b = tensor.empty() : tensor<2x40xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x40xbf16>) outs(%e_b : tensor<2x40xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<2x40xf32>
  %e_af = tensor.empty() : tensor<8x2xf32>
  %af = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x2xbf16>) outs(%e_af : tensor<8x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<8x2xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x40xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x40xf32>) -> tensor<8x40xf32>
  %m = linalg.matmul ins(%af, %b : tensor<8x2xf32>, tensor<2x40xf32>) outs(%f : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %m : tensor<8x40xf32>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     x86vector
// CHECK:         return
func.func @left_alone(%a: tensor<4x2xbf16>, %af32: tensor<4x2xf32>, %a3: tensor<4x1xbf16>, %h: tensor<4x2xf16>)
    -> (tensor<4x16xf32>, tensor<4x12xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x16xbf16>
  %w24 = arith.constant dense<1.0> : tensor<2x12xbf16>
  %w3 = arith.constant dense<1.0> : tensor<1x16xbf16>
  %wh = arith.constant dense<1.0> : tensor<2x16xf16>
  %e_b = tensor.empty() : tensor<2x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<2x16xbf16>) outs(%e_b : tensor<2x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<2x16xf32>
  %e_b24 = tensor.empty() : tensor<2x12xf32>
  %b24 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w24 : tensor<2x12xbf16>) outs(%e_b24 : tensor<2x12xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<2x12xf32>
  %e_b3 = tensor.empty() : tensor<1x16xf32>
  %b3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w3 : tensor<1x16xbf16>) outs(%e_b3 : tensor<1x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<1x16xf32>
  %e_bh = tensor.empty() : tensor<2x16xf32>
  %bh = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wh : tensor<2x16xf16>) outs(%e_bh : tensor<2x16xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<2x16xf32>
  %e_af = tensor.empty() : tensor<4x2xf32>
  %af = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x2xbf16>) outs(%e_af : tensor<4x2xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x2xf32>
  %e_af3 = tensor.empty() : tensor<4x1xf32>
  %af3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a3 : tensor<4x1xbf16>) outs(%e_af3 : tensor<4x1xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x1xf32>
  %e_ah = tensor.empty() : tensor<4x2xf32>
  %ah = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<4x2xf16>) outs(%e_ah : tensor<4x2xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<4x2xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e24 = tensor.empty() : tensor<4x12xf32>
  %f24 = linalg.fill ins(%c0 : f32) outs(%e24 : tensor<4x12xf32>) -> tensor<4x12xf32>
  // A not an extension of bf16.
  %m0 = linalg.matmul ins(%af32, %b : tensor<4x2xf32>, tensor<2x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  // N = 12.
  %m1 = linalg.matmul ins(%af, %b24 : tensor<4x2xf32>, tensor<2x12xf32>) outs(%f24 : tensor<4x12xf32>) -> tensor<4x12xf32>
  // K = 1.
  %m2 = linalg.matmul ins(%af3, %b3 : tensor<4x1xf32>, tensor<1x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  // f16.
  %m3 = linalg.matmul ins(%ah, %bh : tensor<4x2xf32>, tensor<2x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m0, %m1, %m2, %m3 : tensor<4x16xf32>, tensor<4x12xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
