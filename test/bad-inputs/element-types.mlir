// Element types the JIT does not take (f16, bf16, i1, complex): the pass
// schedules or skips them; timing them is a clean error.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<8x8xf16>, %b: tensor<8x8xbf16>, %c: tensor<8x8xi1>, %d: tensor<8x8xcomplex<f32>>) -> (tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xi1>, tensor<8x8xcomplex<f32>>) {
  %e0 = tensor.empty() : tensor<8x8xf16>
  %r0 = linalg.add ins(%a, %a : tensor<8x8xf16>, tensor<8x8xf16>) outs(%e0 : tensor<8x8xf16>) -> tensor<8x8xf16>
  %e1 = tensor.empty() : tensor<8x8xbf16>
  %r1 = linalg.mul ins(%b, %b : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%e1 : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %e2 = tensor.empty() : tensor<8x8xi1>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x8xi1>) outs(%e2 : tensor<8x8xi1>) {
  ^bb0(%x: i1, %o: i1):
    %n = arith.xori %x, %x : i1
    linalg.yield %n : i1
  } -> tensor<8x8xi1>
  %e3 = tensor.empty() : tensor<8x8xcomplex<f32>>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<8x8xcomplex<f32>>) outs(%e3 : tensor<8x8xcomplex<f32>>) {
  ^bb0(%x: complex<f32>, %o: complex<f32>):
    %n = complex.add %x, %x : complex<f32>
    linalg.yield %n : complex<f32>
  } -> tensor<8x8xcomplex<f32>>
  return %r0, %r1, %r2, %r3 : tensor<8x8xf16>, tensor<8x8xbf16>, tensor<8x8xi1>, tensor<8x8xcomplex<f32>>
}
