// With no schedule the pass asks the ONNX policy, in-process. A seeded test
// actor (heads scaled so its choices vary) is generated and exported first.
// RUN: %PYTHON -m mlir_rl.cli init-policy --seed 1 --head-scale 1000 -o %t.pt
// RUN: %PYTHON -m mlir_rl.cli export %t.pt -o %t.onnx
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{model=%t.onnx dump-schedule=%t.schedule})' | FileCheck %s
// RUN: FileCheck %s --check-prefix=SCHEDULE < %t.schedule
// The driver, the same model: the same schedule.
// RUN: %mlir_rl_opt %s -p 'builtin.module(linalg-rl-schedule{model=%t.onnx dump-schedule=%t.driver.schedule})' -o /dev/null
// RUN: diff %t.schedule %t.driver.schedule
// The front end fuses the bias and the ReLU into one generic (op 2). The
// shipped default model (models/policy.onnx) schedules every op; the
// accumulator's fill (op 0) by rule: fused into the matmul's tiles (its TP
// a TF) and vectorized there.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{dump-schedule=-})' -o /dev/null | FileCheck %s --check-prefix=DEFAULT

// CHECK-LABEL: func.func @chain
// CHECK: scf.forall
// CHECK-NOT: mlir_rl.op_id
// The front end's cse ties the two tensor.empty ops; each init gets its own
// again before the decisions (mlir-rl-untie-empties, named in the prelude).
// SCHEDULE: // Schedule: [mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-untie-empties] 2: {{.*}}; 1: {{.*}}; 0: {{.*}}
// DEFAULT: // Schedule: [mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-untie-empties] 2: {{.*}}; 1: TF({{[^;]*}}; 0: V{{$}}
func.func @chain(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x128xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                            iterator_types = ["parallel", "parallel"]}
       ins(%mm, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e1 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
       ins(%biased : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
