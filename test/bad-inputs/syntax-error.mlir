// Not MLIR: an unbalanced brace and a missing type.
func.func @main(%A: tensor<4xf32> -> tensor<4xf32> {
  %r = linalg.add ins(%A, %A) outs(%A : tensor<4xf32>)
