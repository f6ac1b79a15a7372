// The function sits in a nested module: scheduled; the JIT's entry point is
// a function of the top-level module, so timing it is a clean error.
module {
  module @inner {
    func.func @main(%A: tensor<16x16xf32>, %B: tensor<16x16xf32>) -> tensor<16x16xf32> {
      %e = tensor.empty() : tensor<16x16xf32>
      %r = linalg.add ins(%A, %B : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
      return %r : tensor<16x16xf32>
    }
  }
}
