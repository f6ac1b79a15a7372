//===- Decoding.cpp - Logits and indices to steps -------------------------===//
#include "mlir-rl/ActionSpace/Decoding.h"

#include <algorithm>
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

/// Log-softmax of `logits` over the allowed choices (-inf elsewhere).
static std::vector<double> maskedLogSoftmax(ArrayRef<float> logits,
                                            ArrayRef<uint8_t> allowed) {
  double top = -INFINITY;
  for (size_t i = 0; i < allowed.size(); ++i)
    if (allowed[i])
      top = std::max(top, (double)logits[i]);
  double sum = 0;
  for (size_t i = 0; i < allowed.size(); ++i)
    if (allowed[i])
      sum += std::exp((double)logits[i] - top);
  std::vector<double> out(allowed.size(), -INFINITY);
  for (size_t i = 0; i < allowed.size(); ++i)
    if (allowed[i])
      out[i] = (double)logits[i] - top - std::log(sum);
  return out;
}

/// Indices of the finite entries of `logProbs`, most likely first (ties to
/// the lowest index, as decoding breaks them).
static std::vector<int> rankIndices(ArrayRef<double> logProbs) {
  std::vector<int> order;
  for (int i = 0; i < (int)logProbs.size(); ++i)
    if (std::isfinite(logProbs[i]))
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return logProbs[a] > logProbs[b];
  });
  return order;
}

std::vector<RankedStep> rankSteps(linalg::LinalgOp op,
                                  const OpScheduleState &state,
                                  bool hasProducer, const ActionMasks &masks,
                                  const PolicyLogits &logits,
                                  const ActionSpaceConfig &config, int limit) {
  const FeatureLayout &layout = config.layout;
  const int N = layout.maxLoops, M = layout.numTileSizes;
  std::vector<RankedStep> out;
  std::vector<double> pointerLp =
      maskedLogSoftmax(logits.pointer, masks.pointer);
  auto addPointers = [&](double base) {
    for (int p : rankIndices(pointerLp)) {
      RankedStep r;
      r.step.isPointer = true;
      r.step.pointer = p;
      r.logProb = base + pointerLp[p];
      out.push_back(r);
    }
  };
  if (state.inInterchange()) {
    addPointers(0);
  } else {
    int numLoops = std::min<int>(op.getNumLoops(), N);
    std::vector<double> kindLp = maskedLogSoftmax(logits.kind, masks.kind);
    auto addIfLegal = [&](const Action &action, double logProb) {
      std::string reason;
      if (failed(verifyAction(op, state, hasProducer, action, masks, config,
                              reason)))
        return;
      for (const RankedStep &r : out)
        if (!r.step.isPointer && r.step.action == action)
          return;
      RankedStep r;
      r.step.action = action;
      r.logProb = logProb;
      out.push_back(r);
    };
    for (int k : rankIndices(kindLp)) {
      Action action;
      action.kind = (ActionKind)k;
      const ActionKindInfo &info = action.info();
      if (info.params == ActionParams::Permutation) {
        addPointers(kindLp[k]);
        continue;
      }
      if (!info.isTiled()) {
        addIfLegal(action, kindLp[k]);
        continue;
      }
      // Most likely sizes, then each loop's second most likely instead.
      std::vector<std::vector<double>> loopLp;
      std::vector<std::vector<int>> loopRank;
      double base = kindLp[k];
      for (int l = 0; l < numLoops; ++l) {
        ArrayRef<float> row(logits.tile.data() + (k * N + l) * M, M);
        ArrayRef<uint8_t> allowed(masks.tileRow(action.kind, l), M);
        loopLp.push_back(maskedLogSoftmax(row, allowed));
        loopRank.push_back(rankIndices(loopLp.back()));
        int c = loopRank.back().empty() ? 0 : loopRank.back()[0];
        action.sizes.push_back(layout.tileCandidates[c]);
        if (!loopRank.back().empty())
          base += loopLp.back()[c];
      }
      addIfLegal(action, base);
      for (int l = 0; l < numLoops; ++l) {
        if (loopRank[l].size() < 2)
          continue;
        Action variant = action;
        int best = loopRank[l][0], second = loopRank[l][1];
        variant.sizes[l] = layout.tileCandidates[second];
        addIfLegal(variant, base - loopLp[l][best] + loopLp[l][second]);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RankedStep &a, const RankedStep &b) {
                     return a.logProb > b.logProb;
                   });
  if (limit >= 0 && (int)out.size() > limit)
    out.resize(limit);
  return out;
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
