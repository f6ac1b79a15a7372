// An op of a dialect mlir-rl does not load.
func.func @main(%A: tensor<4xf32>) -> tensor<4xf32> {
  %r = "foo.bar"(%A) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
