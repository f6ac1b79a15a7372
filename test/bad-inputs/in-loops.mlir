// Linalg ops inside an scf.for and an scf.if, and a linalg op on the
// loop-carried value.
func.func @main(%A: tensor<16x16xf32>, %flag: i1) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %A) -> (tensor<16x16xf32>) {
    %e = tensor.empty() : tensor<16x16xf32>
    %s = linalg.add ins(%acc, %A : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %t = scf.if %flag -> tensor<16x16xf32> {
    %e = tensor.empty() : tensor<16x16xf32>
    %m = linalg.mul ins(%r, %r : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    scf.yield %m : tensor<16x16xf32>
  } else {
    scf.yield %r : tensor<16x16xf32>
  }
  return %t : tensor<16x16xf32>
}
