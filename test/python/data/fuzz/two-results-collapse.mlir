func.func @main(%arg0: tensor<13x12xf32>) -> (tensor<156xf32>, tensor<156xf32>, tensor<156xf32>, tensor<156xf32>, tensor<156xf32>) {
  %n0 = tensor.collapse_shape %arg0 [[0, 1]] : tensor<13x12xf32> into tensor<156xf32>
  %n1_e = tensor.empty() : tensor<156xf32>
  %n1 = linalg.copy ins(%n0 : tensor<156xf32>) outs(%n1_e : tensor<156xf32>) -> tensor<156xf32>
  %n2_e = tensor.empty() : tensor<156xf32>
  %n2 = linalg.sub ins(%n1, %n1 : tensor<156xf32>, tensor<156xf32>) outs(%n2_e : tensor<156xf32>) -> tensor<156xf32>
  %n3_e = tensor.empty() : tensor<156xf32>
  %n3_f = tensor.empty() : tensor<156xf32>
  %n3:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%n2, %n0 : tensor<156xf32>, tensor<156xf32>) outs(%n3_e, %n3_f : tensor<156xf32>, tensor<156xf32>) {
  ^bb0(%n3_i0: f32, %n3_i1: f32, %n3_o0: f32, %n3_o1: f32):
    %n3_s = arith.addf %n3_i0, %n3_i1 : f32
    %n3_m = arith.mulf %n3_i0, %n3_i1 : f32
    linalg.yield %n3_s, %n3_m : f32, f32
  } -> (tensor<156xf32>, tensor<156xf32>)
  %n4_e = tensor.empty() : tensor<156xf32>
  %n4 = linalg.add ins(%n3#0, %n3#1 : tensor<156xf32>, tensor<156xf32>) outs(%n4_e : tensor<156xf32>) -> tensor<156xf32>
  %n5_e = tensor.empty() : tensor<156xf32>
  %n5 = linalg.copy ins(%n4 : tensor<156xf32>) outs(%n5_e : tensor<156xf32>) -> tensor<156xf32>
  return %n3#1, %n4, %n0, %n5, %n1 : tensor<156xf32>, tensor<156xf32>, tensor<156xf32>, tensor<156xf32>, tensor<156xf32>
}
