// No linalg op at all, a private declaration, and two functions.
func.func private @ext(f32) -> f32
func.func @main(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
