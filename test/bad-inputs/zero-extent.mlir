// Empty iteration spaces (M = 0, K = 0): skipped with a remark, never tiled.
func.func @main(%A: tensor<0x8xf32>, %B: tensor<8x16xf32>, %X: tensor<8x0xf32>, %Y: tensor<0x16xf32>) -> (tensor<0x16xf32>, tensor<8x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<0x16xf32>
  %f0 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<0x16xf32>) -> tensor<0x16xf32>
  %m0 = linalg.matmul ins(%A, %B : tensor<0x8xf32>, tensor<8x16xf32>) outs(%f0 : tensor<0x16xf32>) -> tensor<0x16xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %f1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = linalg.matmul ins(%X, %Y : tensor<8x0xf32>, tensor<0x16xf32>) outs(%f1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m0, %m1 : tensor<0x16xf32>, tensor<8x16xf32>
}
