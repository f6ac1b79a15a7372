// Extents far beyond memory: scheduling is IR only and must not allocate.
func.func @main(%A: tensor<1000000000x1000000xf32>, %B: tensor<1000000x3000000000xf32>, %C: tensor<1000000000x3000000000xf32>) -> tensor<1000000000x3000000000xf32> {
  %r = linalg.matmul ins(%A, %B : tensor<1000000000x1000000xf32>, tensor<1000000x3000000000xf32>) outs(%C : tensor<1000000000x3000000000xf32>) -> tensor<1000000000x3000000000xf32>
  return %r : tensor<1000000000x3000000000xf32>
}
