// Parses, but does not verify: the matmul's shapes disagree.
func.func @main(%A: tensor<4x5xf32>, %B: tensor<6x7xf32>, %C: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %r = linalg.matmul ins(%A, %B : tensor<4x5xf32>, tensor<6x7xf32>) outs(%C : tensor<4x7xf32>) -> tensor<4x7xf32>
  return %r : tensor<4x7xf32>
}
