// mlir-rl-lower-math: math ops the LLVM conversion does not take. Integer
// abs on a 2-D vector (what vectorizing an i32 elementwise op gives) becomes
// one op per 1-D row; f64 erf, which has no LLVM intrinsic, a libm call; f64
// tanh, which has one, stays for the LLVM conversion; f32 erf, tanh and exp
// (networks' GELU, softmax) become polynomials that stay vectorized.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-lower-math)' | FileCheck %s
// And the whole lowering runs it: the result executes.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext -p 'builtin.module(mlir-rl-lower)' -o %t.llvm.mlir
// RUN: %mlir_runner %t.llvm.mlir -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @rows
// CHECK-NOT: math.absi {{.*}} : vector<2x4xi32>
// CHECK-COUNT-2: math.absi {{.*}} : vector<4xi32>
func.func @rows(%v: vector<2x4xi32>) -> vector<2x4xi32> {
  %r = math.absi %v : vector<2x4xi32>
  return %r : vector<2x4xi32>
}

// CHECK-LABEL: func.func @calls
// CHECK: call @erf(
// CHECK: math.tanh
func.func @calls(%x: f64) -> f64 {
  %e = math.erf %x : f64
  %t = math.tanh %e : f64
  return %t : f64
}

// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: call
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: return
func.func @approximated(%x: vector<2x8xf32>) -> vector<2x8xf32> {
  %e = math.erf %x : vector<2x8xf32>
  %t = math.tanh %e : vector<2x8xf32>
  %x2 = math.exp %t : vector<2x8xf32>
  return %x2 : vector<2x8xf32>
}

// x^3 with a constant exponent (GELU's tanh form) becomes multiplications;
// a variable exponent powf; integer powers (no LLVM lowering) a function
// that convert-math-to-funcs outlines, after bufferization.
// CHECK-LABEL: func.func @powers
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: math.powf
// CHECK: math.ipowi
func.func @powers(%x: vector<8xf32>, %n: vector<8xi64>, %a: vector<4xi32>, %b: vector<4xi32>) -> (vector<8xf32>, vector<8xf32>, vector<4xi32>) {
  %c3 = arith.constant dense<3> : vector<8xi64>
  %y = math.fpowi %x, %c3 : vector<8xf32>, vector<8xi64>
  %z = math.fpowi %x, %n : vector<8xf32>, vector<8xi64>
  %i = math.ipowi %a, %b : vector<4xi32>
  return %y, %z, %i : vector<8xf32>, vector<8xf32>, vector<4xi32>
}

func.func private @printI64(i64)
func.func private @printF32(f32)
func.func private @printF64(f64)
func.func private @printNewline()

// OUT: 3
// OUT: 0.842
// OUT: 1.98
// OUT: -8
// OUT: 16
// OUT: 81
func.func @main() {
  %v = arith.constant dense<[[-1, 2, -3, 4], [5, -6, 7, -8]]> : vector<2x4xi32>
  %a = call @rows(%v) : (vector<2x4xi32>) -> vector<2x4xi32>
  %x = vector.extract %a[0, 2] : i32 from vector<2x4xi32>
  %x64 = arith.extsi %x : i32 to i64
  call @printI64(%x64) : (i64) -> ()
  call @printNewline() : () -> ()
  %one = arith.constant 1.0 : f64
  %e = math.erf %one : f64
  call @printF64(%e) : (f64) -> ()
  call @printNewline() : () -> ()
  // exp(tanh(erf(1))) = exp(tanh(0.84270)) = exp(0.68708) = 1.98798
  %xs = arith.constant dense<1.0> : vector<2x8xf32>
  %ys = call @approximated(%xs) : (vector<2x8xf32>) -> vector<2x8xf32>
  %y = vector.extract %ys[1, 7] : f32 from vector<2x8xf32>
  call @printF32(%y) : (f32) -> ()
  call @printNewline() : () -> ()
  // (-2)^3 = -8, (-2)^4 = 16, 3^4 = 81
  %m2 = arith.constant dense<-2.0> : vector<8xf32>
  %four = arith.constant dense<4> : vector<8xi64>
  %three = arith.constant dense<3> : vector<4xi32>
  %fours = arith.constant dense<4> : vector<4xi32>
  %p:3 = call @powers(%m2, %four, %three, %fours) : (vector<8xf32>, vector<8xi64>, vector<4xi32>, vector<4xi32>) -> (vector<8xf32>, vector<8xf32>, vector<4xi32>)
  %p0 = vector.extract %p#0[5] : f32 from vector<8xf32>
  call @printF32(%p0) : (f32) -> ()
  call @printNewline() : () -> ()
  %p1 = vector.extract %p#1[2] : f32 from vector<8xf32>
  call @printF32(%p1) : (f32) -> ()
  call @printNewline() : () -> ()
  %p2 = vector.extract %p#2[1] : i32 from vector<4xi32>
  %p2l = arith.extsi %p2 : i32 to i64
  call @printI64(%p2l) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
