func.func @main(%arg0: tensor<4x32xi32>, %arg1: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>) {
  %n0_cacc = arith.constant -2147483648 : i32
  %n0_eacc = tensor.empty() : tensor<4xi32>
  %n0_acc = linalg.fill ins(%n0_cacc : i32) outs(%n0_eacc : tensor<4xi32>) -> tensor<4xi32>
  %n0 = linalg.reduce ins(%arg0 : tensor<4x32xi32>) outs(%n0_acc : tensor<4xi32>) dimensions = [1]
    (%n0_x: i32, %n0_y: i32) {
      %n0_r = arith.maxsi %n0_x, %n0_y : i32
      linalg.yield %n0_r : i32
    }
  %n1 = tensor.expand_shape %n0 [[0, 1]] output_shape [2, 2] : tensor<4xi32> into tensor<2x2xi32>
  %n2_e = tensor.empty() : tensor<2x2xi32>
  %n2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n1 : tensor<2x2xi32>) outs(%n2_e : tensor<2x2xi32>) {
  ^bb0(%n2_i0: i32, %n2_o0: i32):
    %n2b_z = arith.constant 0 : i32
    %n2b_y = arith.subi %n2b_z, %n2_i0 : i32
    linalg.yield %n2b_y : i32
  } -> tensor<2x2xi32>
  %n3_e = tensor.empty() : tensor<2x2xi32>
  %n3_f = tensor.empty() : tensor<2x2xi32>
  %n3:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n2, %arg1 : tensor<2x2xi32>, tensor<2x2xi32>) outs(%n3_e, %n3_f : tensor<2x2xi32>, tensor<2x2xi32>) {
  ^bb0(%n3_i0: i32, %n3_i1: i32, %n3_o0: i32, %n3_o1: i32):
    %n3_s = arith.addi %n3_i0, %n3_i1 : i32
    %n3_m = arith.muli %n3_i0, %n3_i1 : i32
    linalg.yield %n3_s, %n3_m : i32, i32
  } -> (tensor<2x2xi32>, tensor<2x2xi32>)
  %n4_e = tensor.empty() : tensor<2x2xi32>
  %n4 = linalg.transpose ins(%n3#0 : tensor<2x2xi32>) outs(%n4_e : tensor<2x2xi32>) permutation = [1, 0]
  return %n4, %n1, %n3#1 : tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>
}
