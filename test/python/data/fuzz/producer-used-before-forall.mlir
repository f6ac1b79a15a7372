func.func @main(%arg0: tensor<4x29xf32>, %arg1: tensor<4xf32>) -> (tensor<4x6xf32>, tensor<4xf32>) {
  %n0_cacc = arith.constant 0.0 : f32
  %n0_eacc = tensor.empty() : tensor<4xf32>
  %n0_acc = linalg.fill ins(%n0_cacc : f32) outs(%n0_eacc : tensor<4xf32>) -> tensor<4xf32>
  %n0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x29xf32>) outs(%n0_acc : tensor<4xf32>) {
  ^bb0(%n0_i0: f32, %n0_o0: f32):
    %n0_q = arith.mulf %n0_i0, %n0_i0 : f32
    %n0_s = arith.addf %n0_q, %n0_o0 : f32
    linalg.yield %n0_s : f32
  } -> tensor<4xf32>
  %n1_e = tensor.empty() : tensor<4x6xf32>
  %n1 = linalg.broadcast ins(%n0 : tensor<4xf32>) outs(%n1_e : tensor<4x6xf32>) dimensions = [1]
  %n2_cacc = arith.constant 0.0 : f32
  %n2_eacc = tensor.empty() : tensor<4xf32>
  %n2_acc = linalg.fill ins(%n2_cacc : f32) outs(%n2_eacc : tensor<4xf32>) -> tensor<4xf32>
  %n2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x29xf32>) outs(%n2_acc : tensor<4xf32>) {
  ^bb0(%n2_i0: f32, %n2_o0: f32):
    %n2_q = arith.mulf %n2_i0, %n2_i0 : f32
    %n2_s = arith.addf %n2_q, %n2_o0 : f32
    linalg.yield %n2_s : f32
  } -> tensor<4xf32>
  %n3_e = tensor.empty() : tensor<4xf32>
  %n3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%n2, %n0 : tensor<4xf32>, tensor<4xf32>) outs(%n3_e : tensor<4xf32>) {
  ^bb0(%n3_i0: f32, %n3_i1: f32, %n3_o0: f32):
    %n3_s = arith.addf %n3_i0, %n3_i1 : f32
    linalg.yield %n3_s : f32
  } -> tensor<4xf32>
  %n4_e = tensor.empty() : tensor<4xf32>
  %n4 = linalg.sub ins(%n3, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%n4_e : tensor<4xf32>) -> tensor<4xf32>
  return %n1, %n4 : tensor<4x6xf32>, tensor<4xf32>
}
