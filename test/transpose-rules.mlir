// Transposes by rule (copies-by-rule): an NCHW activation read as NHWC gets
// its outer loops in parallel and blocks of 8 input rows by one vector
// register of the result (8 floats on AVX2, 16 on AVX-512), transposed in
// registers; copies-by-rule=false keeps the decisions (the heuristic's).
// The dumped script replays the same IR, which lowers.
// RUN: env MLIR_RL_VECTOR_REGISTERS=16x256 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s < %t.schedule
// CHECK: // Schedule: 0: TP(0,2,0,0) T(0,1,8,8) V
// RUN: env MLIR_RL_VECTOR_REGISTERS=32x512 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic dump-schedule=-})' -o /dev/null | FileCheck %s --check-prefix=AVX512
// AVX512: // Schedule: 0: TP(0,2,0,0) T(0,1,8,16) V
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay-tagged
// RUN: sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' %t.replay-tagged > %t.replay
// RUN: diff %t.out %t.replay
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic copies-by-rule=false dump-schedule=-})' \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=DECIDED
// DECIDED: // Schedule:
// DECIDED-NOT: T(0,1,8,
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x64x16x24xf32>) -> tensor<1x16x24x64xf32> {
  %e = tensor.empty() : tensor<1x16x24x64xf32>
  %a = linalg.generic {indexing_maps = [#nchw, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x64x16x24xf32>) outs(%e : tensor<1x16x24x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x16x24x64xf32>
  return %a : tensor<1x16x24x64xf32>
}
