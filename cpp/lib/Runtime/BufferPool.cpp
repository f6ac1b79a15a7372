//===- BufferPool.cpp - The JIT'd code's malloc and free ------------------===//
//
// See BufferPool.h. Every block carries a 16-byte header before the pointer
// it hands out: its size class (0: a small block straight from malloc).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Runtime/BufferPool.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace mlir::rl {

namespace {

constexpr size_t kHeader = 16;
/// Blocks below this go to malloc (glibc keeps them in its bins anyway).
constexpr size_t kMinPooled = 64 << 10;
/// Cached blocks in all, beyond which freed blocks go back to the system.
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

struct Header {
  size_t classBytes; // the block's usable bytes; 0: not pooled
  size_t magic;
};
static_assert(sizeof(Header) == kHeader);
constexpr size_t kMagic = 0x6d6c69722d726cull; // "mlir-rl"

/// Size classes: multiples of 1/8 of the size's power of two (at most 12.5%
/// over the request), so that a call's same sizes meet the same class.
size_t getClassBytes(size_t bytes) {
  size_t p = 1;
  while (p < bytes)
    p <<= 1;
  size_t step = std::max<size_t>(p / 8, 4096);
  return (bytes + step - 1) / step * step;
}

struct Pool {
  std::mutex mutex;
  std::map<size_t, std::vector<void *>> free; // class -> blocks (raw)
  size_t cached = 0;
};

Pool &getPool() {
  // Never destroyed: the JIT'd code of a static object may free at exit.
  static Pool *pool = new Pool();
  return *pool;
}

void *finish(void *raw, size_t classBytes) {
  auto *h = static_cast<Header *>(raw);
  h->classBytes = classBytes;
  h->magic = kMagic;
  return static_cast<char *>(raw) + kHeader;
}

} // namespace

void *poolMalloc(size_t bytes) {
  if (bytes < kMinPooled) {
    void *raw = std::malloc(bytes + kHeader);
    return raw ? finish(raw, 0) : nullptr;
  }
  size_t classBytes = getClassBytes(bytes);
  Pool &pool = getPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.free.find(classBytes);
    if (it != pool.free.end() && !it->second.empty()) {
      void *raw = it->second.back();
      it->second.pop_back();
      pool.cached -= classBytes;
      return finish(raw, classBytes);
    }
  }
  void *raw = std::malloc(classBytes + kHeader);
  return raw ? finish(raw, classBytes) : nullptr;
}

void poolFree(void *ptr) {
  if (!ptr)
    return;
  void *raw = static_cast<char *>(ptr) - kHeader;
  auto *h = static_cast<Header *>(raw);
  if (h->magic != kMagic) {
    // Not ours (cannot happen for the JIT'd code's own blocks): leave it,
    // as freeing a foreign pointer through the wrong allocator would crash.
    return;
  }
  size_t classBytes = h->classBytes;
  h->magic = 0;
  if (classBytes == 0) {
    std::free(raw);
    return;
  }
  Pool &pool = getPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (pool.cached + classBytes <= kMaxCachedBytes) {
      pool.free[classBytes].push_back(raw);
      pool.cached += classBytes;
      return;
    }
  }
  std::free(raw);
}

size_t getPoolCachedBytes() {
  Pool &pool = getPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  return pool.cached;
}

} // namespace mlir::rl
