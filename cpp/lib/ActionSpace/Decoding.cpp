//===- Decoding.cpp - Logits and indices to steps -------------------------===//
#include "mlir-rl/ActionSpace/Decoding.h"

#include <cmath>

namespace mlir::rl {

/// Picks one of `allowed` choices by `logits`: argmax (ties to the lowest
/// index), or a softmax sample.
static int choose(ArrayRef<float> logits, ArrayRef<uint8_t> allowed,
                  std::mt19937_64 *rng) {
  int best = -1;
  for (int i = 0; i < (int)allowed.size(); ++i)
    if (allowed[i] && (best < 0 || logits[i] > logits[best]))
      best = i;
  if (!rng || best < 0)
    return best;
  std::vector<double> weights(allowed.size(), 0.0);
  for (int i = 0; i < (int)allowed.size(); ++i)
    if (allowed[i])
      weights[i] = std::exp((double)logits[i] - (double)logits[best]);
  std::discrete_distribution<int> dist(weights.begin(), weights.end());
  return dist(*rng);
}

Step decodeStep(linalg::LinalgOp op, const OpScheduleState &state,
                bool hasProducer, const ActionMasks &masks,
                const PolicyLogits &logits, const ActionSpaceConfig &config,
                std::mt19937_64 *rng) {
  const FeatureLayout &layout = config.layout;
  const int N = layout.maxLoops, M = layout.numTileSizes;
  Step step;
  if (state.inInterchange()) {
    step.isPointer = true;
    step.pointer = choose(logits.pointer, masks.pointer, rng);
    return step;
  }
  int numLoops = std::min<int>(op.getNumLoops(), N);
  std::vector<uint8_t> kinds(masks.kind);
  for (int attempt = 0; attempt < kNumActionKinds; ++attempt) {
    int k = choose(logits.kind, kinds, rng);
    if (k < 0)
      break;
    kinds[k] = 0; // not again, whatever happens below
    Action action;
    action.kind = (ActionKind)k;
    const ActionKindInfo &info = action.info();
    if (info.isTiled()) {
      for (int l = 0; l < numLoops; ++l) {
        ArrayRef<float> row(logits.tile.data() + (k * N + l) * M, M);
        ArrayRef<uint8_t> allowed(masks.tileRow(action.kind, l), M);
        int c = choose(row, allowed, rng);
        action.sizes.push_back(layout.tileCandidates[std::max(c, 0)]);
      }
    } else if (info.params == ActionParams::Permutation) {
      // The permutation is chosen one level pointer at a time.
      step.isPointer = true;
      step.pointer = choose(logits.pointer, masks.pointer, rng);
      if (step.pointer >= 0)
        return step;
      step.isPointer = false;
      continue;
    }
    std::string reason;
    if (succeeded(verifyAction(op, state, hasProducer, action, masks, config,
                               reason))) {
      step.action = action;
      return step;
    }
  }
  step.action.kind = ActionKind::NoTransformation;
  return step;
}

StepIndices encodeStep(const Step &step, const FeatureLayout &layout) {
  StepIndices out;
  out.tiles.assign(layout.maxLoops, 0);
  if (step.isPointer) {
    out.kind = (int)ActionKind::Interchange;
    out.pointer = (int)step.pointer;
    return out;
  }
  out.kind = (int)step.action.kind;
  if (step.action.isTiled())
    for (size_t l = 0; l < step.action.sizes.size() && (int)l < layout.maxLoops;
         ++l)
      out.tiles[l] = std::max(0, layout.getTileIndex(step.action.sizes[l]));
  return out;
}

PolicyLogits getIndicatorLogits(const StepIndices &indices,
                                const FeatureLayout &layout) {
  const int N = layout.maxLoops, M = layout.numTileSizes;
  PolicyLogits logits;
  logits.kind.assign(kNumActionKinds, 0.0f);
  logits.tile.assign(layout.getTileMaskSize(), 0.0f);
  logits.pointer.assign(N, 0.0f);
  if (indices.kind >= 0 && indices.kind < kNumActionKinds)
    logits.kind[indices.kind] = 1.0f;
  for (int which = 0; which < kNumTiledKinds; ++which)
    for (int l = 0; l < N && l < (int)indices.tiles.size(); ++l)
      if (indices.tiles[l] >= 0 && indices.tiles[l] < M)
        logits.tile[(which * N + l) * M + indices.tiles[l]] = 1.0f;
  if (indices.pointer >= 0 && indices.pointer < N)
    logits.pointer[indices.pointer] = 1.0f;
  return logits;
}

LogicalResult checkIndicesShape(const StepIndices &indices,
                                const FeatureLayout &layout,
                                std::string &error) {
  if ((int)indices.tiles.size() != layout.maxLoops) {
    error = "a step has " + std::to_string(layout.maxLoops + 2) +
            " indices: [kind, one tile candidate per loop (" +
            std::to_string(layout.maxLoops) + "), pointer]; got " +
            std::to_string(indices.tiles.size() + 2);
    return failure();
  }
  return success();
}

} // namespace mlir::rl
