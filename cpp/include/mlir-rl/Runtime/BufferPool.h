//===- BufferPool.h - The JIT'd code's malloc and free ----------*- C++ -*-===//
//
// The lowered code allocates its temporaries and results with malloc and
// frees them before it returns (a padded or packed operand, an im2col
// matrix, the result the caller copies out): the same sizes on every call.
// glibc serves blocks over its mmap threshold (dynamic, from 128 KiB) with
// fresh pages, or returns the heap's top to the system on free, so that
// every call faults its temporaries in again once the process's heap has
// moved (after a second module was compiled, a 197x1000x128 matmul's calls
// went from 0.5 to 1.8 ms). The JIT resolves the lowered code's malloc and
// free to this pool instead: blocks of 64 KiB and more are kept, by size
// class, for the next call (at most kMaxCachedBytes in all); smaller ones go
// to malloc. Thread-safe (the lowered code allocates inside parallel loops).
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_RUNTIME_BUFFERPOOL_H
#define MLIR_RL_RUNTIME_BUFFERPOOL_H

#include <cstddef>

namespace mlir::rl {

/// malloc for the JIT'd code: 16-byte aligned, as malloc's.
void *poolMalloc(size_t bytes);
/// free for what poolMalloc returned (null is ignored).
void poolFree(void *ptr);
/// Bytes the pool holds for reuse now (for tests).
size_t getPoolCachedBytes();

} // namespace mlir::rl

#endif // MLIR_RL_RUNTIME_BUFFERPOOL_H
