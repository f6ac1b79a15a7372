// The decision sources of linalg-rl-schedule (decisions=): the heuristic's
// documented decisions (Policy/DecisionSource.h) on a matmul and its fill,
// the rules after the decisions off so that the decisions show as made.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{decisions=heuristic pack-rhs=false register-tiles=false copies-by-rule=false dump-schedule=-})' \
// RUN:   -o /dev/null | FileCheck %s --check-prefix=HEURISTIC
// HEURISTIC: // Schedule: 1: TP(32,0,0) T(8,32,8) V; 0: TP(32,0) T(8,64) V
// The heuristic loads no policy: a model that does not exist is not read.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{decisions=heuristic model=%t.missing.onnx})' \
// RUN:   | FileCheck %s --check-prefix=RULES
// With the rules (the default), the same decisions and what the rules add:
// the fill fused into the matmul's tiles, vectorized.
// RULES-LABEL: func.func @main
// RULES: scf.forall
// RULES: vector.
// Random decisions are mask-legal and drawn from the seed: the same seed,
// the same IR.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{decisions=random seed=3})' -o %t.random1
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{decisions=random seed=3})' -o %t.random2
// RUN: diff %t.random1 %t.random2
// RUN: not %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{decisions=learned})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: linalg-rl-schedule: unknown decisions 'learned' (valid: policy, heuristic, random)
// RUN: not %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{decisions=random search=2})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SEARCH
// SEARCH: error: linalg-rl-schedule: sample=true and decisions=random do not go with search or tuning-db

func.func @main(%A: tensor<384x768xf32>, %B: tensor<768x768xf32>) -> tensor<384x768xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<384x768xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<384x768xf32>) -> tensor<384x768xf32>
  %r = linalg.matmul ins(%A, %B : tensor<384x768xf32>, tensor<768x768xf32>) outs(%C : tensor<384x768xf32>) -> tensor<384x768xf32>
  return %r : tensor<384x768xf32>
}
