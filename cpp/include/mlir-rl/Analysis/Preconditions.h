//===- Preconditions.h - When a transformation is legal ---------*- C++ -*-===//
//
// Preconditions written once and used twice: for the masks of the action
// space and as the guard before a transformation is applied. Their limits
// form the LegalityConfig, versioned apart from the observation layout: a
// policy trained under one legality config runs under another (it only sees
// different masks), so tuning a limit does not re-export the policy.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ANALYSIS_PRECONDITIONS_H
#define MLIR_RL_ANALYSIS_PRECONDITIONS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <cstdint>
#include <string>
#include <utility>

namespace mlir::rl {

/// Limits that bound what the action space allows; they keep generated code
/// small enough to lower and compile in seconds.
struct LegalityConfig {
  /// Largest innermost extent that vectorization accepts.
  int64_t maxVectorInnermost = 512;
  /// Largest iteration space (product of loop extents) that vectorization
  /// accepts; beyond it the vector code would take minutes to compile.
  int64_t maxVectorElements = int64_t(1) << 12;
  /// Largest number of innermost rows (iteration space / innermost extent):
  /// n-D vectors are unrolled row by row into LLVM, and 7,700 elementwise ops
  /// on vector<160x4x4xf32> (640 rows each) ran MobileNetV2's lowering out of
  /// 24 GiB of memory. Not applied to convolutions and pooling (vectorized
  /// after decomposition, in shapes of their own).
  int64_t maxVectorRows = 256;
  /// Largest number of rows read through strided views (vector rows times
  /// the operands whose innermost stride is not 1, as the window rewrite
  /// makes for poolings and depthwise convolutions). Each such row becomes
  /// a wide load and a shuffle, and LLVM's x86 instruction selection is
  /// superlinear in them within one block: a 1x32x8x8 max pooling of four
  /// stride-2 views (1,024 row reads) took 70 s to compile, 512 took 9 s,
  /// 256 half a second.
  int64_t maxStridedRowReads = 256;
  /// Largest number of partial vector pieces (vector rows times the pieces
  /// of a power of two a row's remainder past whole registers splits into:
  /// 4 for a row of 15 floats in 16 lanes, 8 + 4 + 2 + 1). Each piece is a
  /// load or store of its own in LLVM: one copy of 228 rows of 15 floats
  /// (912 pieces) took 6 s to compile, and sixteen of them, the im2col
  /// copies of one convolution, over two minutes (a fuzzer's hang). Rows of
  /// whole registers are bounded by maxVectorElements alone.
  int64_t maxPartialVectorPieces = 256;
  /// Tile sizes (T, TP, TF) must divide their loop's extent: a size that
  /// does not leaves dynamic extents, which neither later tiles nor
  /// vectorization can take (the op then ends in scalar loops).
  bool dividingTiles = true;
  /// The vector register file of the target (count of registers, bits in
  /// each; 0 = unknown, no register tiling). V keeps the accumulator of a
  /// contraction within it (getRegisterTile): an 8x32 f32 tile holds 32 ymm
  /// registers live across its reduction loop, twice what AVX2 has, and
  /// spilled every FMA (3x slower than a 4x16 tile there); AVX-512's 32 zmm
  /// of 16 floats hold it. The default is the host's
  /// (`getHostVectorRegisters`), or MLIR_RL_VECTOR_REGISTERS=<count>x<bits>
  /// (e.g. 16x256; 0x0 turns it off) for another target or a reproducible
  /// test.
  int64_t vectorRegisters = 0;
  int64_t vectorRegisterBits = 0;

  /// The default limits with the host's register file (read once).
  static const LegalityConfig &getDefault();
  /// Canonical description, with a version that changes with the meaning of
  /// any rule; and its hash.
  std::string getDescription() const;
  std::string getHash() const;
};

/// Whether `op` (in its current form) can be vectorized: static shapes, the
/// config's size limits, the window of a 2-D conv/pool tiled to 1 (it is
/// decomposed first), and the linalg vectorizer's own precondition.
LogicalResult vectorizationPrecondition(linalg::LinalgOp op,
                                        const LegalityConfig &config,
                                        std::string *reason = nullptr);

/// Whether `V` on `op` decomposes a 2-D conv/pool to 1-D first.
bool needsDecomposition(linalg::LinalgOp op);

/// The host's vector register file as {count, bits}: from LLVM's host CPU
/// features (avx512f: 32x512, avx: 16x256, sse2: 16x128, neon: 32x128), or
/// MLIR_RL_VECTOR_REGISTERS=<count>x<bits>; {0, 0} when unknown.
std::pair<int64_t, int64_t> getHostVectorRegisters();

/// Vector registers a contraction's accumulator may hold: the file's less
/// 4 (the operand vectors of one reduction step); 0 when the file is
/// unknown.
int64_t getAccumulatorRegisterBudget(const LegalityConfig &config);

/// For `V` on `op`: tile sizes (one per loop, 0 = not tiled) that V applies
/// first so that the accumulator of a contraction fits the register budget,
/// or an empty vector when it fits already or `op` is not such a
/// contraction. A contraction here: a static tensor op that is matmul-like
/// (linalg::isaContractionOpInterface: a multiply-accumulate; not a row
/// reduction), one init, not decomposed first (convs/pools), whose output's
/// innermost dimension is also an input's innermost (vectors along it: the
/// outer-product form, as in A x B; A x B^T is lowered as dot products).
/// The accumulator takes (output elements / innermost extent) x
/// ceil(innermost extent / lanes) registers; the tile keeps the most output
/// elements within the budget, then the fewest operand vectors per
/// reduction step (rows + vectors per row), then the most rows; the
/// registers it may take are the file's less 4 (the operand vectors of one
/// step).
SmallVector<int64_t> getRegisterTile(linalg::LinalgOp op,
                                     const LegalityConfig &config);

} // namespace mlir::rl

#endif // MLIR_RL_ANALYSIS_PRECONDITIONS_H
