// A valid matmul: the garbage schedules, models and libraries run on it.
func.func @main(%A: tensor<32x64xf32>, %B: tensor<64x48xf32>) -> tensor<32x48xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x48xf32>
  %C = linalg.fill ins(%cst : f32) outs(%e : tensor<32x48xf32>) -> tensor<32x48xf32>
  %r = linalg.matmul ins(%A, %B : tensor<32x64xf32>, tensor<64x48xf32>) outs(%C : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %r : tensor<32x48xf32>
}
