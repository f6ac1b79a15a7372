// Input that carries its own transform script next to the payload.
module attributes {transform.with_named_sequence} {
  func.func @main(%A: tensor<16x16xf32>, %B: tensor<16x16xf32>) -> tensor<16x16xf32> {
    %e = tensor.empty() : tensor<16x16xf32>
    %r = linalg.add ins(%A, %B : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    return %r : tensor<16x16xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
