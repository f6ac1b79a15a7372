// mlir-rl-fuse-elementwise extends at compile time a bf16 or f16 constant
// that an elementwise op only extends to f32 (torch-mlir widens every
// low-precision linear weight so at run time): dense, splat and
// dense_resource constants, exactly; an extension of a value that is not a
// constant stays.
// RUN: %mlir_rl_opt %s -p 'builtin.module(func.func(mlir-rl-fuse-elementwise))' | FileCheck %s
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @dense
// CHECK:         %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.500000e+00, -3.000000e+00, 5.000000e-01]> : tensor<4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[C]]
func.func @dense() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.5, -3.0, 0.5]> : tensor<4xbf16>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%c : tensor<4xbf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @half_splat
// CHECK:         %[[C:.*]] = arith.constant dense<1.500000e+00> : tensor<8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[C]]
func.func @half_splat() -> tensor<8xf32> {
  %c = arith.constant dense<1.5> : tensor<8xf16>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%c : tensor<8xf16>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f16, %o: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// bf16 1.0 and -2.0 (0x3F80, 0xC000) become f32 1.0 and -2.0.
// CHECK-LABEL: func.func @resource
// CHECK:         arith.constant dense_resource<weight_f32> : tensor<2xf32>
// CHECK-NOT:     linalg.generic
func.func @resource() -> tensor<2xf32> {
  %c = arith.constant dense_resource<weight> : tensor<2xbf16>
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%c : tensor<2xbf16>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// CHECK-LABEL: func.func @argument
// CHECK:         linalg.generic
// CHECK:           arith.extf
func.func @argument(%a: tensor<4xbf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%a : tensor<4xbf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK: weight_f32: "0x040000000000803F000000C0"
{-#
  dialect_resources: {
    builtin: {
      weight: "0x02000000803F00C0"
    }
  }
#-}
