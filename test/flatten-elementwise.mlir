// mlir-rl-flatten-elementwise: elementwise ops whose innermost extent is not
// whole vector registers computed in rows of 4 registers (64 floats on
// AVX-512, 32 on AVX2), the result reshaped back; what it leaves alone.
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_rl_opt %s -p 'builtin.module(mlir-rl-flatten-elementwise)' | FileCheck %s
// RUN: env MLIR_RL_VECTOR_REGISTERS=16x256 %mlir_rl_opt %s -p 'builtin.module(mlir-rl-flatten-elementwise)' | FileCheck %s --check-prefix=AVX2
// The pipeline's front end flattens before the policy, the copies' rule
// schedules the flattened op, and dump-schedule replays it.
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s --check-prefix=SCRIPT < %t.schedule
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay
// RUN: diff %t.out %t.replay
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// flatten-elementwise=false leaves the ops unflattened.
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{flatten-elementwise=false dump-schedule=%t.keep})' -o /dev/null
// RUN: FileCheck %s --check-prefix=KEEP < %t.keep

// SCRIPT: transform.apply_registered_pass "mlir-rl-flatten-elementwise"
// KEEP-NOT: mlir-rl-flatten-elementwise

// 1x512x14x14 = 100352 elements: 1568 rows of 64 (3136 of 32 on AVX2); the
// empty init is made in the new shape, the named op becomes a generic.
// CHECK-LABEL: func.func @add
// CHECK-DAG:     %[[A:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : tensor<1x512x14x14xf32> into tensor<100352xf32>
// CHECK-DAG:     %[[A2:.+]] = tensor.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [1568, 64]
// CHECK-DAG:     %[[E:.+]] = tensor.empty() : tensor<1568x64xf32>
// CHECK:         %[[G:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%[[E]] : tensor<1568x64xf32>)
// CHECK:           arith.addf
// CHECK:         %[[F:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<1568x64xf32> into tensor<100352xf32>
// CHECK:         %[[R:.+]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2, 3]] output_shape [1, 512, 14, 14]
// CHECK:         return %[[R]]
// AVX2-LABEL: func.func @add
// AVX2:         tensor.empty() : tensor<3136x32xf32>
func.func @add(%x: tensor<1x512x14x14xf32>, %y: tensor<1x512x14x14xf32>) -> tensor<1x512x14x14xf32> {
  %e = tensor.empty() : tensor<1x512x14x14xf32>
  %r = linalg.add ins(%x, %y : tensor<1x512x14x14xf32>, tensor<1x512x14x14xf32>) outs(%e : tensor<1x512x14x14xf32>) -> tensor<1x512x14x14xf32>
  return %r : tensor<1x512x14x14xf32>
}

// A generic whose init is not empty is reshaped like its inputs; its body
// is kept.
// CHECK-LABEL: func.func @relu_into
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : tensor<3136x64xf32>) outs(%{{.+}} : tensor<3136x64xf32>)
// CHECK:           arith.maximumf
func.func @relu_into(%x: tensor<1x256x28x28xf32>, %o: tensor<1x256x28x28xf32>) -> tensor<1x256x28x28xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x256x28x28xf32>) outs(%o : tensor<1x256x28x28xf32>) {
  ^bb0(%v: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x256x28x28xf32>
  return %r : tensor<1x256x28x28xf32>
}

// Left alone: rows already whole registers (1x64x112x112), a broadcast
// operand, a reduction, fewer than 16384 elements, a strided view's input
// (a rewritten pooling's: collapsing it would copy it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return
func.func @left_alone(%x: tensor<1x64x112x112xf32>, %b: tensor<64xf32>, %s: tensor<1x64x14x14xf32>, %t: tensor<1x8x14x14xf32>)
    -> (tensor<1x64x112x112xf32>, tensor<1x64x14x14xf32>, tensor<1x64x14xf32>, tensor<1x8x14x14xf32>, tensor<1x64x56x56xf32>) {
  %e = tensor.empty() : tensor<1x64x112x112xf32>
  %r = linalg.add ins(%x, %x : tensor<1x64x112x112xf32>, tensor<1x64x112x112xf32>) outs(%e : tensor<1x64x112x112xf32>) -> tensor<1x64x112x112xf32>
  %e2 = tensor.empty() : tensor<1x64x14x14xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %b : tensor<1x64x14x14xf32>, tensor<64xf32>) outs(%e2 : tensor<1x64x14x14xf32>) {
  ^bb0(%v: f32, %w: f32, %out: f32):
    %a = arith.addf %v, %w : f32
    linalg.yield %a : f32
  } -> tensor<1x64x14x14xf32>
  %e3 = tensor.empty() : tensor<1x64x14xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<1x64x14x14xf32>) outs(%e3 : tensor<1x64x14xf32>) {
  ^bb0(%v: f32, %out: f32):
    %a = arith.addf %v, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x64x14xf32>
  %e4 = tensor.empty() : tensor<1x8x14x14xf32>
  %small = linalg.add ins(%t, %t : tensor<1x8x14x14xf32>, tensor<1x8x14x14xf32>) outs(%e4 : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  %v = tensor.extract_slice %x[0, 0, 0, 0] [1, 64, 56, 56] [1, 1, 2, 2] : tensor<1x64x112x112xf32> to tensor<1x64x56x56xf32>
  %e5 = tensor.empty() : tensor<1x64x56x56xf32>
  %strided = linalg.add ins(%v, %v : tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) outs(%e5 : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %r, %bias, %sum, %small, %strided : tensor<1x64x112x112xf32>, tensor<1x64x14x14xf32>, tensor<1x64x14xf32>, tensor<1x8x14x14xf32>, tensor<1x64x56x56xf32>
}
