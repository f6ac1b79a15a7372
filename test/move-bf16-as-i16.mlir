// mlir-rl-move-bf16-as-i16: LLVM 22 cannot select moves of 8k + 1 bf16
// (llc aborts: "Do not know how to soft promote this operator's operand!"
// on AVX-512 BF16 targets); the values only moved become i16, a bitcast
// converts where an op computes on them (fpext), and vectors of other
// lengths stay bf16.
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-move-bf16-as-i16)' | FileCheck %s
// RUN: %mlir_rl_opt %s -p 'builtin.module(mlir-rl-move-bf16-as-i16)' | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -o /dev/null

// CHECK-LABEL: llvm.func @transpose_row
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<17xi16>
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<17xi16>
// CHECK:         %[[X:.*]] = llvm.extractelement %[[A]][%{{.*}} : i64] : vector<17xi16>
// CHECK:         %[[Y:.*]] = llvm.insertelement %[[X]], %[[B]][%{{.*}} : i64] : vector<17xi16>
// CHECK:         llvm.store %[[Y]], %{{.*}} {alignment = 2 : i64} : vector<17xi16>, !llvm.ptr
// CHECK:         %[[C:.*]] = llvm.bitcast %[[A]] : vector<17xi16> to vector<17xbf16>
// CHECK:         llvm.fpext %[[C]] : vector<17xbf16> to vector<17xf32>
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> vector<16xbf16>
llvm.func @transpose_row(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) -> vector<17xf32> {
  %i = llvm.mlir.constant(3 : i64) : i64
  %j = llvm.mlir.constant(5 : i64) : i64
  %a = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<17xbf16>
  %b = llvm.load %q {alignment = 2 : i64} : !llvm.ptr -> vector<17xbf16>
  %x = llvm.extractelement %a[%i : i64] : vector<17xbf16>
  %y = llvm.insertelement %x, %b[%j : i64] : vector<17xbf16>
  llvm.store %y, %q {alignment = 2 : i64} : vector<17xbf16>, !llvm.ptr
  %f = llvm.fpext %a : vector<17xbf16> to vector<17xf32>
  %c = llvm.load %r {alignment = 2 : i64} : !llvm.ptr -> vector<16xbf16>
  llvm.store %c, %q {alignment = 2 : i64} : vector<16xbf16>, !llvm.ptr
  llvm.return %f : vector<17xf32>
}

// Through a branch's block argument, from an argument of the function.
// CHECK-LABEL: llvm.func @through_a_branch
// CHECK:         %[[V:.*]] = llvm.bitcast %arg1 : vector<9xbf16> to vector<9xi16>
// CHECK:         llvm.br ^bb1(%[[V]] : vector<9xi16>)
// CHECK:       ^bb1(%[[W:.*]]: vector<9xi16>):
// CHECK:         llvm.store %[[W]], %arg0 {alignment = 2 : i64} : vector<9xi16>, !llvm.ptr
llvm.func @through_a_branch(%q: !llvm.ptr, %v: vector<9xbf16>) {
  llvm.br ^bb1(%v : vector<9xbf16>)
^bb1(%w: vector<9xbf16>):
  llvm.store %w, %q {alignment = 2 : i64} : vector<9xbf16>, !llvm.ptr
  llvm.return
}

// A masked load (a partial vector's transfer) and its pass-through.
// CHECK-LABEL: llvm.func @masked
// CHECK:         %[[P:.*]] = llvm.bitcast %arg2 : vector<17xbf16> to vector<17xi16>
// CHECK:         %[[L:.*]] = llvm.intr.masked.load %arg0, %arg1, %[[P]] {alignment = 2 : i32} : (!llvm.ptr, vector<17xi1>, vector<17xi16>) -> vector<17xi16>
// CHECK:         llvm.intr.masked.store %[[L]], %arg3, %arg1 {alignment = 2 : i32} : vector<17xi16>, vector<17xi1> into !llvm.ptr
llvm.func @masked(%p: !llvm.ptr, %m: vector<17xi1>, %pass: vector<17xbf16>, %q: !llvm.ptr) {
  %a = llvm.intr.masked.load %p, %m, %pass {alignment = 2 : i32} : (!llvm.ptr, vector<17xi1>, vector<17xbf16>) -> vector<17xbf16>
  llvm.intr.masked.store %a, %q, %m {alignment = 2 : i32} : vector<17xbf16>, vector<17xi1> into !llvm.ptr
  llvm.return
}
