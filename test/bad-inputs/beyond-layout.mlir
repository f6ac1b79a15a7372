// Beyond what the feature layout describes: 13 loops (max 12), a
// non-linear indexing map. Skipped with a remark.
#id13 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12) -> (d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12)>
#half = affine_map<(d0) -> (d0 floordiv 2)>
#id1 = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>, %b: tensor<4xf32>) -> (tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>
  %r = linalg.generic {indexing_maps = [#id13, #id13], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>) outs(%e : tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#half, #id1], iterator_types = ["parallel"]} ins(%b : tensor<4xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<8xf32>
  return %r, %s : tensor<1x1x1x1x1x1x1x1x1x1x1x1x2xf32>, tensor<8xf32>
}
