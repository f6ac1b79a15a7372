// matmul -> bias -> relu; ops: 0 fill, 1 matmul, 2 bias add, 3 relu.
func.func @main(%A: tensor<256x512xf32>, %B: tensor<512x512xf32>, %bias: tensor<512xf32>) -> tensor<256x512xf32> {
  %cst_C = arith.constant 0.0 : f32
  %e_C = tensor.empty() : tensor<256x512xf32>
  %C = linalg.fill ins(%cst_C : f32) outs(%e_C : tensor<256x512xf32>) -> tensor<256x512xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<256x512xf32>, tensor<512x512xf32>) outs(%C : tensor<256x512xf32>) -> tensor<256x512xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<256x512xf32>, tensor<512xf32>) outs(%e1 : tensor<256x512xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<256x512xf32>
  %e2 = tensor.empty() : tensor<256x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<256x512xf32>) outs(%e2 : tensor<256x512xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %mx = arith.maximumf %x, %z : f32
    linalg.yield %mx : f32
  } -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}
