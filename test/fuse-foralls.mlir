// A forall that reads an earlier forall's result only at the tile that forall
// inserted in the same iteration joins it; any other read keeps them apart.
// RUN: %mlir_rl_opt %s -allow-unregistered-dialect -p 'builtin.module(func.func(mlir-rl-fuse-foralls))' | FileCheck %s

#rows = affine_map<(d0) -> (d0 * 8)>
#rows2 = affine_map<(d0) -> (d0 * 8 + 8)>

// The exp's tile feeds the sum's and the division's: one forall, the exp's
// and the sum's full results gone (nothing else reads them).
// CHECK-LABEL: func.func @chain
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(%{{[^,]*}}) -> (tensor<64x256xf32>)
// CHECK-NOT: scf.forall (
// CHECK: linalg.exp
// CHECK: linalg.reduce
// CHECK-NOT: tensor.extract_slice %{{[0-9]+}}
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice
// CHECK-NEXT: }
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @chain(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e0 = tensor.empty() : tensor<64x256xf32>
  %e = scf.forall (%i) in (8) shared_outs(%o = %e0) -> (tensor<64x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<64x256xf32>
    }
  }
  %s0 = tensor.empty() : tensor<64xf32>
  %s = scf.forall (%i) in (8) shared_outs(%o = %s0) -> (tensor<64xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r] [8] [1] : tensor<64xf32> to tensor<8xf32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%os : tensor<8xf32>) -> tensor<8xf32>
    %t = linalg.reduce { arith.addf } ins(%es : tensor<8x256xf32>) outs(%f : tensor<8xf32>) dimensions = [1]
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r] [8] [1] : tensor<8xf32> into tensor<64xf32>
    }
  }
  %d0 = tensor.empty() : tensor<64x256xf32>
  %d = scf.forall (%i) in (8) shared_outs(%o = %d0) -> (tensor<64x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %ss = tensor.extract_slice %s[%r] [8] [1] : tensor<64xf32> to tensor<8xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%es, %ss : tensor<8x256xf32>, tensor<8xf32>) outs(%os : tensor<8x256xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<64x256xf32>
    }
  }
  return %d : tensor<64x256xf32>
}

// The producer's result is returned too: it stays a shared output and a
// result of the joined forall.
// CHECK-LABEL: func.func @kept
// CHECK: %[[F:.*]]:2 = scf.forall
// CHECK-NOT: scf.forall (
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @kept(%x: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>) {
  %e0 = tensor.empty() : tensor<64x256xf32>
  %e = scf.forall (%i) in (8) shared_outs(%o = %e0) -> (tensor<64x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<64x256xf32>
    }
  }
  %n0 = tensor.empty() : tensor<64x256xf32>
  %n = scf.forall (%i) in (8) shared_outs(%o = %n0) -> (tensor<64x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<64x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<64x256xf32>
    }
  }
  return %e, %n : tensor<64x256xf32>, tensor<64x256xf32>
}

// Another thread's rows, any other read of the producer's result, another
// iteration space, a use between the two: apart.

// Rows of the next iteration's tile (another thread's).
// CHECK-LABEL: func.func @next_rows
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @next_rows(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) in (8) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %r2 = affine.apply #rows2(%i)
    %es = tensor.extract_slice %e[%r2, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c : tensor<72x256xf32>
}

// The first tile in every iteration.
// CHECK-LABEL: func.func @first_rows
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @first_rows(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) in (9) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[0, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c : tensor<72x256xf32>
}

// Another iteration space (the first 64 rows).
// CHECK-LABEL: func.func @other_space
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @other_space(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) in (8) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c : tensor<72x256xf32>
}

// The same tile but with the iteration space of another step.
// CHECK-LABEL: func.func @other_step
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @other_step(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) = (0) to (18) step (2) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
    %h = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
    %rh = affine.apply #rows(%h)
    %es = tensor.extract_slice %e[%rh, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c : tensor<72x256xf32>
}

// A use of the producer's result between the two.
// CHECK-LABEL: func.func @use_between
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @use_between(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>, tensor<8x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %between = tensor.extract_slice %e[0, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) in (9) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c, %between : tensor<72x256xf32>, tensor<8x256xf32>
}

// The whole result, besides the tile.
// CHECK-LABEL: func.func @whole_result
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @whole_result(%x: tensor<72x256xf32>) -> (tensor<72x256xf32>) {
  %e0 = tensor.empty() : tensor<72x256xf32>
  %e = scf.forall (%i) in (9) shared_outs(%o = %e0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %xs = tensor.extract_slice %x[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.exp ins(%xs : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  %c0 = tensor.empty() : tensor<72x256xf32>
  %c = scf.forall (%i) in (9) shared_outs(%o = %c0) -> (tensor<72x256xf32>) {
    %r = affine.apply #rows(%i)
    %es = tensor.extract_slice %e[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %all = tensor.extract_slice %e[0, 0] [72, 256] [1, 1] : tensor<72x256xf32> to tensor<72x256xf32>
    "test.use"(%all) : (tensor<72x256xf32>) -> ()
    %os = tensor.extract_slice %o[%r, 0] [8, 256] [1, 1] : tensor<72x256xf32> to tensor<8x256xf32>
    %t = linalg.negf ins(%es : tensor<8x256xf32>) outs(%os : tensor<8x256xf32>) -> tensor<8x256xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%r, 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<72x256xf32>
    }
  }
  return %c : tensor<72x256xf32>
}
