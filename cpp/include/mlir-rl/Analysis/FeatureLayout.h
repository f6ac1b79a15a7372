//===- FeatureLayout.h - Limits and layout of the observation ---*- C++ -*-===//
//
// The single definition of the observation and of the policy's head sizes.
// Python reads it through the bindings (`mlir_rl.layout()`); nothing is
// restated elsewhere. Its hash is stored in exported policies, and the pass
// refuses a model whose hash differs.
//
// The layout describes what the policy *sees*. What is *legal* (the
// vectorization limits) lives in LegalityConfig (Preconditions.h), versioned
// on its own, so that tuning a limit does not invalidate a trained policy.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ANALYSIS_FEATURELAYOUT_H
#define MLIR_RL_ANALYSIS_FEATURELAYOUT_H

#include "mlir-rl/Support/Action.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::rl {

/// Kind of a linalg op, one-hot encoded in the features. Recognised through
/// the linalg interfaces (contraction and convolution inference, elementwise
/// ops), see classifyOp in OpAnalysis.h.
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

  /// Masks (and policy heads): kind [A], per tiled kind [N x M], the
  /// interchange level pointer [N]; flattened in that order.
  int getKindMaskSize() const { return kNumActionKinds; }
  int getTileMaskSize() const {
    return kNumTiledKinds * maxLoops * numTileSizes;
  }
  int getPointerMaskSize() const { return maxLoops; }
  int getMaskSize() const {
    return getKindMaskSize() + getTileMaskSize() + getPointerMaskSize();
  }

  /// Decisions one op can take at most: tau actions, an interchange being
  /// one decision per loop. The budget of an episode is this times the ops.
  int getMaxStepsPerOp() const { return historyLength * (maxLoops + 1); }

  /// Index of `size` among the tile candidates, or -1.
  int getTileIndex(int64_t size) const;

  /// Stable hash (FNV-1a over a canonical description), as 16 hex digits.
  std::string getHash() const;
  /// Canonical description the hash is computed from.
  std::string getDescription() const;
};

/// FNV-1a of `text` as 16 hex digits (layout and legality hashes).
std::string getStableHash(const std::string &text);

} // namespace mlir::rl

#endif // MLIR_RL_ANALYSIS_FEATURELAYOUT_H
