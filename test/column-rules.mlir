// Column reductions by rule (copies-by-rule): a sum over axis 0 of 1024x256
// (rows of 1 KiB) gets its columns in parallel pieces of 64, vector tiles of
// 8 rows by 32 columns and its fill in its tiles (TF), whatever the
// decisions were (the heuristic's here); copies-by-rule=false keeps them.
// The dumped script replays the same IR, which lowers.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic dump-schedule=%t.schedule})' -o %t.out
// RUN: FileCheck %s < %t.schedule
// CHECK: // Schedule: 1: TF(0,64) T(8,32) V; 0: V
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(transform-preload-library{transform-library-paths=%t.schedule},transform-interpreter)' -o %t.replay-tagged
// RUN: sed -e 's/ {mlir_rl.op_id = [0-9]* : i64}//' %t.replay-tagged > %t.replay
// RUN: diff %t.out %t.replay
// RUN: %mlir_opt %t.out --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic copies-by-rule=false dump-schedule=-})' \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=DECIDED
// DECIDED: // Schedule:
// DECIDED-NOT: T(8,32) V
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<1024x256xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<1024x256xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  return %s : tensor<256xf32>
}
