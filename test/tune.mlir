// Compile-time tuning (search=K, tuning-db=FILE): the policy's proposals
// measured per op by the helper, the winner applied and remembered; a
// second compile takes the winners from the database, measures nothing and
// gives the same IR; a crashing candidate costs that candidate only.
// RUN: rm -f %t.db %t.db-wal %t.db-shm
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 tuning-db=%t.db threads=1})' \
// RUN:   -o %t.first 2>&1 | FileCheck %s --check-prefix=SEARCH
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 tuning-db=%t.db threads=1})' \
// RUN:   -o %t.second 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: diff %t.first %t.second
// The scheduled IR lowers.
// RUN: %mlir_opt %t.first --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// The database alone (no search): winners applied, the rest by the policy.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{tuning-db=%t.db threads=1})' -o %t.third 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WARM
// RUN: diff %t.first %t.third
// Another thread count is another key: measured again.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{tuning-db=%t.db threads=2})' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OTHER-KEY
// A candidate that crashes the helper (test hook) is recorded as such, the
// others are measured by a new helper, and the pass succeeds.
// RUN: env MLIR_RL_MEASURE_CRASH_AT=1 %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 threads=1})' -o %t.crash 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CRASH
// RUN: %mlir_opt %t.crash --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(mlir-rl-lower)' -o /dev/null
// The module check: every op's greedy candidate crashes (so the tuned
// schedule differs from the greedy one), then the whole function is
// measured both ways. When its tuned candidate crashes (test hook), the
// greedy schedule stays: the IR is what the pass without search gives.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule)' -o %t.greedy
// RUN: env MLIR_RL_MEASURE_CRASH_AT=0 MLIR_RL_MODULE_CHECK_CRASH_AT=1 %mlir_opt %s \
// RUN:   --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 threads=1})' -o %t.revert 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REVERT
// RUN: diff %t.greedy %t.revert
// When the greedy candidate crashes instead, the tuned schedule stays; the
// decision is recorded, and a second compile measures nothing. (With the
// greedy candidate crashed, the matmul's winner is T or TF by a few
// microseconds; after TF the fill is searched too: 2 or 3 ops searched.)
// RUN: rm -f %t.check.db
// RUN: env MLIR_RL_MEASURE_CRASH_AT=0 MLIR_RL_MODULE_CHECK_CRASH_AT=0 %mlir_opt %s \
// RUN:   --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 threads=1 tuning-db=%t.check.db})' \
// RUN:   -o %t.keep 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: not diff -q %t.greedy %t.keep
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 threads=1 tuning-db=%t.check.db})' \
// RUN:   -o %t.keep2 2>&1 | FileCheck %s --check-prefix=KEEP-WARM
// RUN: diff %t.keep %t.keep2
// Without the helper, ops are scheduled by the policy, with a remark.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=3 measure-tool=%t.missing})' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-HELPER
// Bad option values are errors.
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=-1})' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NEGATIVE
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{search=2 sample=true})' -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SAMPLE

// SEARCH: remark: linalg-rl-schedule: tuning 3 ops (search=3, tuning-db=
// SEARCH: remark: linalg-rl-schedule: op 2 (linalg.generic): tuned {{[34]}} candidates ({{[^)]*}}) in
// SEARCH-SAME: ; unscheduled
// SEARCH: remark: linalg-rl-schedule: op 1 (linalg.matmul): tuned {{[34]}} candidates
// The matmul's winner is a timing: apart from the fill (TP, the fill then
// computes a constant and is left to the policy) or fusing it (TF, the fill
// then reads the tile and is searched too). NO-HELPER checks the constant
// case deterministically (the greedy schedule keeps the fill apart).
// SEARCH: remark: linalg-rl-schedule: op 0 (linalg.fill): {{not tuned: it computes a constant; scheduled by the policy|tuned [0-9]+ candidates}}
// SEARCH: remark: linalg-rl-schedule: tuned 3 ops: {{[23]}} searched ({{[0-9]+}} candidates measured in {{[23]}} helper processes), 0 from the tuning database, {{[01]}} by the policy alone

// WARM: op 2 (linalg.generic): from the tuning database:
// WARM: op 1 (linalg.matmul): from the tuning database:
// WARM: tuned 3 ops: 0 searched (0 candidates measured in 0 helper processes), {{[23]}} from the tuning database, {{[01]}} by the policy alone

// OTHER-KEY: tuned 3 ops: 0 searched (0 candidates measured in 0 helper processes), 0 from the tuning database, 3 by the policy alone

// CRASH: op 2 (linalg.generic): tuned {{[34]}} candidates ({{.*}}1 crashed{{.*}})
// CRASH: op 1 (linalg.matmul): tuned {{[34]}} candidates ({{.*}}1 crashed{{.*}})
// (3 searched when the matmul's winner fuses the fill, TF, which then reads
// the tile and is searched too: the winner is a timing.)
// CRASH: tuned 3 ops: {{[23]}} searched ({{[0-9]+}} candidates measured in {{[0-9]+}} helper processes)

// REVERT: tuned 3 ops: {{[23]}} searched
// REVERT: remark: linalg-rl-schedule: module check: tuned crashed ({{.*}}), greedy {{[0-9.e-]+}} ms, unscheduled {{[0-9.e-]+}} ms: the greedy schedule stays ({{[0-9]+}} helper process{{(es)?}})

// KEEP: remark: linalg-rl-schedule: module check: tuned {{[0-9.e-]+}} ms, greedy crashed ({{.*}}), unscheduled {{[0-9.e-]+}} ms: the tuned schedule stays ({{[0-9]+}} helper process{{(es)?}})
// KEEP-WARM: tuned 3 ops: 0 searched (0 candidates measured in 0 helper processes), {{[23]}} from the tuning database
// KEEP-WARM: remark: linalg-rl-schedule: module check from the tuning database: the tuned schedule

// NO-HELPER: op 2 (linalg.generic): not tuned: the measurement helper mlir-rl-measure was not found at '{{.*}}missing'; measure-tool= names it; scheduled by the policy
// NO-HELPER: op 0 (linalg.fill): not tuned: it computes a constant; scheduled by the policy

// NEGATIVE: error: linalg-rl-schedule: search, budget-ms, candidate-timeout-s and threads must not be negative
// SAMPLE: error: linalg-rl-schedule: sample=true and decisions=random do not go with search or tuning-db

func.func @mm_relu(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = tensor.empty() : tensor<64x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x64xf32>) outs(%o : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  return %g : tensor<64x64xf32>
}
