// mlir-rl-unit-slice-strides: a stride on a dimension of size 1 becomes 1
// (it selects nothing); other strides stay.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(func.func(mlir-rl-unit-slice-strides))' | FileCheck %s
// CHECK-LABEL: func.func @strided_row
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 1, 1, 8] [1, 1, 1, 2]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0] [2, 1, 8] [1, 1, 1]
func.func @strided_row(%a: tensor<2x3x3x16xf32>, %b: tensor<2x4x8xf32>) -> (tensor<2x1x1x8xf32>, tensor<2x4x8xf32>) {
  %s = tensor.extract_slice %a[0, 0, 0, 0] [2, 1, 1, 8] [1, 3, 2, 2] : tensor<2x3x3x16xf32> to tensor<2x1x1x8xf32>
  %r = tensor.extract_slice %s[0, 0, 0, 0] [2, 1, 1, 8] [1, 1, 1, 1] : tensor<2x1x1x8xf32> to tensor<2x1x8xf32>
  %i = tensor.insert_slice %r into %b[0, 0, 0] [2, 1, 8] [1, 3, 1] : tensor<2x1x8xf32> into tensor<2x4x8xf32>
  return %s, %i : tensor<2x1x1x8xf32>, tensor<2x4x8xf32>
}
