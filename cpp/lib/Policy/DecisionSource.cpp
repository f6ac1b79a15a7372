//===- DecisionSource.cpp - The heuristic and random decision sources -----===//
#include "mlir-rl/Policy/DecisionSource.h"
#include "mlir-rl/Policy/OnnxPolicy.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

namespace mlir::rl {

std::optional<DecisionSource> parseDecisionSource(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DecisionSource>>(name)
      .Case("policy", DecisionSource::Policy)
      .Case("heuristic", DecisionSource::Heuristic)
      .Case("random", DecisionSource::Random)
      .Default(std::nullopt);
}

llvm::StringRef getDecisionSourceName(DecisionSource source) {
  switch (source) {
  case DecisionSource::Policy:
    return "policy";
  case DecisionSource::Heuristic:
    return "heuristic";
  case DecisionSource::Random:
    return "random";
  }
  return "policy";
}

std::string getDecisionSourceNames() { return "policy, heuristic, random"; }

namespace {
/// Below every preference: a choice the heuristic never wants (NT, always
/// allowed, ranks above it).
constexpr float kNever = -100.0f;

/// What the heuristic reads of one op: its loops and what it has done.
struct OpView {
  std::vector<int64_t> extents;
  std::vector<bool> parallel;
  int steps = 0; // actions applied so far
  std::optional<ActionKind> last;
};

OpView readOp(const FeatureLayout &layout, ArrayRef<float> observation) {
  OpView v;
  for (int l = 0; l < layout.maxLoops; ++l) {
    float iterator = observation[layout.getIteratorsOffset() + l];
    if (iterator == 0.0f)
      break;
    // The features hold log2(1 + extent); 0 for a dynamic extent.
    double bits = observation[layout.getLoopBoundsOffset() + l];
    v.extents.push_back(std::llround(std::exp2(bits) - 1.0));
    v.parallel.push_back(iterator > 0.0f);
  }
  for (int t = 0; t < layout.historyLength; ++t)
    for (int k = 0; k < kNumActionKinds; ++k)
      if (observation[layout.getActionHistoryOffset() + t * kNumActionKinds +
                      k] != 0.0f) {
        v.steps = t + 1;
        v.last = static_cast<ActionKind>(k);
      }
  return v;
}

/// The non-zero tile candidates, largest first.
std::vector<int64_t> getSizesLargestFirst(const FeatureLayout &layout) {
  std::vector<int64_t> sizes;
  for (int64_t c : layout.tileCandidates)
    if (c > 0)
      sizes.push_back(c);
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes;
}

/// Step 1: TP sizes (0 = the loop stays whole).
std::vector<int64_t> getParallelTiles(const FeatureLayout &layout,
                                      const OpView &v) {
  int n = v.extents.size();
  std::vector<int64_t> sizes(n, 0);
  std::vector<int> loops;
  for (int l = 0; l < n; ++l)
    if (v.parallel[l])
      loops.push_back(l);
  // The innermost loop is left whole for the vectors, unless it is all
  // there is to split.
  if (loops.size() > 1 && loops.back() == n - 1)
    loops.pop_back();
  int64_t need = kMinParallelTiles;
  for (int l : loops) {
    int64_t e = v.extents[l];
    if (need <= 1)
      break;
    int64_t chosen = 0;
    for (int64_t s : getSizesLargestFirst(layout)) {
      if (s >= e || e % s != 0)
        continue;
      chosen = s; // ends as the smallest that splits, if none gives enough
      if (e / s >= need)
        break;
    }
    if (chosen == 0)
      continue;
    sizes[l] = chosen;
    int64_t tiles = e / chosen;
    need = (need + tiles - 1) / tiles;
  }
  return sizes;
}

/// The largest candidate up to `limit` that divides `e`; 0 (whole) when `e`
/// is not longer than `limit`.
int64_t getTileUpTo(const FeatureLayout &layout, int64_t e, int64_t limit) {
  if (e <= limit)
    return 0;
  for (int64_t s : getSizesLargestFirst(layout))
    if (s <= limit && e % s == 0)
      return s;
  return 1;
}

/// Step 2: T sizes inside the parallel tiles.
std::vector<int64_t> getInnerTiles(const FeatureLayout &layout,
                                   const OpView &v) {
  int n = v.extents.size();
  std::vector<int64_t> sizes(n, 1);
  if (n == 0)
    return sizes;
  if (!v.parallel[n - 1]) {
    // A contraction's reduction innermost: a tile of rows x columns of
    // accumulators over a few steps of the reduction.
    sizes[n - 1] = getTileUpTo(layout, v.extents[n - 1], kReductionTile);
    int64_t limits[] = {kColumnTile, kRowTile};
    int next = 0;
    for (int l = n - 2; l >= 0 && next < 2; --l)
      if (v.parallel[l]) {
        sizes[l] = getTileUpTo(layout, v.extents[l], limits[next]);
        ++next;
      }
    return sizes;
  }
  sizes[n - 1] = getTileUpTo(layout, v.extents[n - 1], kInnerTile);
  for (int l = n - 2; l >= 0; --l)
    if (v.parallel[l]) {
      sizes[l] = getTileUpTo(layout, v.extents[l], kRowTile);
      break;
    }
  return sizes;
}

/// Tile logits of `kind` that prefer `sizes[l]` on loop l, then the sizes
/// nearest to it in powers of two; for 0 (whole), 0 then the largest.
void preferSizes(const FeatureLayout &layout, ActionKind kind,
                 ArrayRef<int64_t> sizes, PolicyLogits &logits) {
  int N = layout.maxLoops, M = layout.numTileSizes;
  for (int l = 0; l < (int)sizes.size() && l < N; ++l)
    for (int m = 0; m < M; ++m) {
      int64_t c = layout.tileCandidates[m];
      float score;
      if (sizes[l] == 0)
        score = c == 0 ? 0.0f : -8.0f + (float)std::log2((double)c) / 8.0f;
      else if (c == 0)
        score = -16.0f;
      else
        score = -(float)std::fabs(std::log2((double)c) -
                                  std::log2((double)sizes[l]));
      logits.tile[((int)kind * N + l) * M + m] = score;
    }
}
} // namespace

void computeUniformLogits(const FeatureLayout &layout, PolicyLogits &logits) {
  logits.kind.assign(layout.getKindMaskSize(), 0.0f);
  logits.tile.assign(layout.getTileMaskSize(), 0.0f);
  logits.pointer.assign(layout.getPointerMaskSize(), 0.0f);
}

LogicalResult computeHeuristicLogits(const FeatureLayout &layout,
                                     ArrayRef<float> observation,
                                     PolicyLogits &logits, std::string &error) {
  if ((int)observation.size() != layout.getObservationSize()) {
    error = "the heuristic got an observation of " +
            std::to_string(observation.size()) + " values, not " +
            std::to_string(layout.getObservationSize());
    return failure();
  }
  OpView v = readOp(layout, observation);
  logits.kind.assign(layout.getKindMaskSize(), kNever);
  logits.tile.assign(layout.getTileMaskSize(), 0.0f);
  logits.pointer.assign(layout.getPointerMaskSize(), 0.0f);
  auto prefer = [&](ActionKind kind, float score) {
    logits.kind[(int)kind] = score;
  };
  prefer(ActionKind::NoTransformation, 0.0f);
  bool parallelized = v.last && (*v.last == ActionKind::TiledParallelization ||
                                 *v.last == ActionKind::TiledFusion);
  if (v.steps == 0) {
    prefer(ActionKind::TiledParallelization, 3.0f);
    prefer(ActionKind::Tiling, 2.0f);
    prefer(ActionKind::Vectorization, 1.0f);
  } else if (parallelized) {
    prefer(ActionKind::Tiling, 3.0f);
    prefer(ActionKind::Vectorization, 2.0f);
  } else if (v.last == ActionKind::Tiling) {
    prefer(ActionKind::Vectorization, 3.0f);
  }
  preferSizes(layout, ActionKind::TiledParallelization,
              getParallelTiles(layout, v), logits);
  preferSizes(layout, ActionKind::Tiling, getInnerTiles(layout, v), logits);
  return success();
}

bool isKnownPrior(llvm::StringRef name) { return name == "heuristic"; }

std::string getPriorNames() { return "heuristic"; }

LogicalResult computePriorLogits(llvm::StringRef name,
                                 const FeatureLayout &layout,
                                 ArrayRef<float> observation,
                                 PolicyLogits &logits, std::string &error) {
  if (!isKnownPrior(name)) {
    error = "unknown prior '" + name.str() + "' (known: " + getPriorNames() +
            ")";
    return failure();
  }
  if (failed(computeHeuristicLogits(layout, observation, logits, error)))
    return failure();
  for (auto *part : {&logits.kind, &logits.tile, &logits.pointer})
    for (float &v : *part)
      v = std::max(v, kPriorFloor);
  return success();
}

LogicalResult computeDecisionLogits(DecisionSource source,
                                    const FeatureLayout &layout,
                                    OnnxPolicy *policy,
                                    ArrayRef<float> observation,
                                    ArrayRef<uint8_t> mask,
                                    PolicyLogits &logits, std::string &error) {
  switch (source) {
  case DecisionSource::Heuristic:
    return computeHeuristicLogits(layout, observation, logits, error);
  case DecisionSource::Random:
    computeUniformLogits(layout, logits);
    return success();
  case DecisionSource::Policy:
    break;
  }
  if (!policy) {
    error = "no policy loaded for decisions=policy";
    return failure();
  }
  return policy->run(observation, mask, logits, error);
}

} // namespace mlir::rl
