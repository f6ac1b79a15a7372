//===- FeatureLayout.h - Limits and layout of the observation ---*- C++ -*-===//
//
// The single definition of the observation and action-space sizes. Python reads
// these through `mlir_rl._core.layout()`; nothing is restated elsewhere. The
// layout hash is stored in exported policies so that a model trained for another
// layout is refused by the pass.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_FEATURELAYOUT_H
#define MLIR_RL_FEATURELAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::rl {

/// Kind of a linalg op, one-hot encoded in the features.
enum class OpKind {
  Matmul,
  BatchMatmul,
  Conv2D,
  DepthwiseConv2D,
  Pooling,
  Add,
  Fill,
  Generic,
  Unknown,
};
constexpr int kNumOpKinds = 9;
const char *getOpKindName(OpKind kind);

/// The transformations of the multi-discrete action space (paper IV-A).
enum class ActionKind {
  Tiling,
  TiledParallelization,
  TiledFusion,
  Interchange,
  Vectorization,
  NoTransformation,
};
constexpr int kNumActionKinds = 6;
/// Short name used in textual schedules: T, TP, TF, I, V, NT.
const char *getActionMnemonic(ActionKind kind);
/// Long name, e.g. "tiled_parallelization".
const char *getActionName(ActionKind kind);

/// Arithmetic op classes counted in the body of a linalg op.
constexpr int kNumArithCounts = 6; // add/sub, mul, div/rem, math fn, max/min/cmp/select, other

/// Sizes of the observation. All limits are compile-time defaults that a
/// caller may change; the hash identifies the exact layout.
struct FeatureLayout {
  int maxLoops = 12;      // N
  int numTileSizes = 8;   // M, including 0 (= loop not tiled)
  int maxRank = 12;       // D
  int maxOperands = 14;   // L
  int historyLength = 5;  // tau: at most this many actions per op
  /// Tile-size candidates; index 0 must be 0 (not tiled).
  std::vector<int64_t> tileCandidates = {0, 1, 2, 4, 8, 16, 32, 64};
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

  static const FeatureLayout &getDefault();

  // Offsets of each group inside one op's feature vector, in order.
  int getOpKindOffset() const { return 0; }
  int getLoopBoundsOffset() const { return getOpKindOffset() + kNumOpKinds; }
  int getIteratorsOffset() const { return getLoopBoundsOffset() + maxLoops; }
  int getVectorizableOffset() const { return getIteratorsOffset() + maxLoops; }
  int getAccessOffset() const { return getVectorizableOffset() + 1; }
  int getAccessSize() const { return maxOperands * maxRank * (maxLoops + 1); }
  int getArithOffset() const { return getAccessOffset() + getAccessSize(); }
  int getTileHistoryOffset() const { return getArithOffset() + kNumArithCounts; }
  int getTileHistorySize() const {
    return historyLength * maxLoops * numTileSizes;
  }
  int getInterchangeHistoryOffset() const {
    return getTileHistoryOffset() + getTileHistorySize();
  }
  int getInterchangeHistorySize() const {
    return historyLength * maxLoops * maxLoops;
  }
  int getActionHistoryOffset() const {
    return getInterchangeHistoryOffset() + getInterchangeHistorySize();
  }
  int getActionHistorySize() const { return historyLength * kNumActionKinds; }
  /// Size of the features of one op.
  int getOpFeatureSize() const {
    return getActionHistoryOffset() + getActionHistorySize();
  }
  /// Observation = consumer features followed by its last producer's.
  int getObservationSize() const { return 2 * getOpFeatureSize(); }

  /// Mask sizes: kind [A], per tiled action [N x M] for T, TP, TF, pointer [N].
  int getKindMaskSize() const { return kNumActionKinds; }
  int getTileMaskSize() const { return 3 * maxLoops * numTileSizes; }
  int getPointerMaskSize() const { return maxLoops; }
  int getMaskSize() const {
    return getKindMaskSize() + getTileMaskSize() + getPointerMaskSize();
  }

  /// Index of `size` among the tile candidates, or -1.
  int getTileIndex(int64_t size) const;

  /// Stable hash (FNV-1a over a canonical description), as 16 hex digits.
  std::string getHash() const;
  /// Canonical description the hash is computed from.
  std::string getDescription() const;
};

} // namespace mlir::rl

#endif // MLIR_RL_FEATURELAYOUT_H
