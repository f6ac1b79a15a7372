// A 384x768x768 f32 matmul (BERT-base sized); op 0 is the fill, op 1 the matmul.
func.func @main(%A: tensor<384x768xf32>, %B: tensor<768x768xf32>) -> tensor<384x768xf32> {
  %cst_C = arith.constant 0.0 : f32
  %e_C = tensor.empty() : tensor<384x768xf32>
  %C = linalg.fill ins(%cst_C : f32) outs(%e_C : tensor<384x768xf32>) -> tensor<384x768xf32>
  %r = linalg.matmul ins(%A, %B : tensor<384x768xf32>, tensor<768x768xf32>) outs(%C : tensor<384x768xf32>) -> tensor<384x768xf32>
  return %r : tensor<384x768xf32>
}
