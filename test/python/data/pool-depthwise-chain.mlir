// The 8-op chain of the stale-op crash report (issue 10): reduce-max,
// sigmoid, broadcast, pooling_nchw_max (strides 3,1, dilations 2,1),
// depthwise_conv_2d_nhwc_hwc (strides 3,2, dilations 2,1).
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%A: tensor<6x20x31x5xf32>, %K: tensor<2x2x30xf32>) -> tensor<2x2x3x30xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<6x20x31xf32>
  %f0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<6x20x31xf32>) -> tensor<6x20x31xf32>
  %r = linalg.reduce ins(%A : tensor<6x20x31x5xf32>) outs(%f0 : tensor<6x20x31xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<6x20x31xf32>) outs(%e0 : tensor<6x20x31xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %q = arith.divf %one, %d : f32
    linalg.yield %q : f32
  } -> tensor<6x20x31xf32>
  %e1 = tensor.empty() : tensor<2x6x20x31xf32>
  %b = linalg.broadcast ins(%s : tensor<6x20x31xf32>) outs(%e1 : tensor<2x6x20x31xf32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<2x6x6x30xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x6x6x30xf32>) -> tensor<2x6x6x30xf32>
  %win = tensor.empty() : tensor<3x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[3, 1]> : tensor<2xi64>} ins(%b, %win : tensor<2x6x20x31xf32>, tensor<3x2xf32>) outs(%f2 : tensor<2x6x6x30xf32>) -> tensor<2x6x6x30xf32>
  %e3 = tensor.empty() : tensor<2x2x3x30xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2x3x30xf32>) -> tensor<2x2x3x30xf32>
  %dw = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[3, 2]> : tensor<2xi64>} ins(%p, %K : tensor<2x6x6x30xf32>, tensor<2x2x30xf32>) outs(%f3 : tensor<2x2x3x30xf32>) -> tensor<2x2x3x30xf32>
  return %dw : tensor<2x2x3x30xf32>
}
