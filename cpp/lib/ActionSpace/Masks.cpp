//===- Masks.cpp - Which actions are legal now ----------------------------===//
#include "mlir-rl/ActionSpace/Masks.h"
#include "mlir-rl/Analysis/OpAnalysis.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

namespace mlir::rl {

ActionMasks ActionMasks::onlyNoTransformation(const FeatureLayout &layout) {
  ActionMasks m;
  m.phase = DecisionPhase::Done;
  m.maxLoops = layout.maxLoops;
  m.numTileSizes = layout.numTileSizes;
  m.kind.assign(kNumActionKinds, 0);
  m.kind[(int)ActionKind::NoTransformation] = 1;
  m.tile.assign(layout.getTileMaskSize(), 0);
  m.pointer.assign(layout.maxLoops, 0);
  m.unsplit.assign(layout.getTileMaskSize(), 1);
  return m;
}

std::vector<uint8_t> ActionMasks::flatten() const {
  std::vector<uint8_t> out(kind);
  out.insert(out.end(), tile.begin(), tile.end());
  out.insert(out.end(), pointer.begin(), pointer.end());
  return out;
}

static bool hasTiledHistory(const OpScheduleState &state) {
  return llvm::any_of(state.history, [](const Action &a) {
    return a.isTiled() && llvm::any_of(a.sizes, [](int64_t s) { return s; });
  });
}

/// Legality v4: the op's next action is its last (historyLength-th), which
/// must end it (V or NT).
static bool isLastSlot(const OpScheduleState &state,
                       const FeatureLayout &layout) {
  return (int)state.history.size() + 1 >= layout.historyLength;
}

bool isParallelized(linalg::LinalgOp op, const OpScheduleState &state) {
  return state.parallelized || op->getParentOfType<scf::ForallOp>();
}

ActionMasks computeActionMasks(linalg::LinalgOp op,
                               const OpScheduleState &state, bool hasProducer,
                               const ActionSpaceConfig &config) {
  const FeatureLayout &layout = config.layout;
  const int N = layout.maxLoops, M = layout.numTileSizes;
  ActionMasks m;
  m.phase = state.getPhase();
  m.maxLoops = N;
  m.numTileSizes = M;
  m.kind.assign(kNumActionKinds, 0);
  m.tile.assign(layout.getTileMaskSize(), 0);
  m.pointer.assign(N, 0);
  m.unsplit.assign(layout.getTileMaskSize(), 1);
  auto setKind = [&](ActionKind k) { m.kind[(int)k] = 1; };
  auto tileAt = [&](int which, int loop, int c) -> uint8_t & {
    return m.tile[(which * N + loop) * M + c];
  };
  // A 0 tile size is always a legal choice, so every categorical has one.
  for (int which = 0; which < kNumTiledKinds; ++which)
    for (int l = 0; l < N; ++l)
      tileAt(which, l, 0) = 1;

  SmallVector<int64_t> bounds = getLoopBounds(op);
  int numLoops = std::min<int>(bounds.size(), N);

  if (state.done) {
    setKind(ActionKind::NoTransformation);
    return m;
  }
  if (state.inInterchange()) {
    setKind(ActionKind::Interchange);
    for (int l = 0; l < numLoops; ++l)
      m.pointer[l] = !llvm::is_contained(state.pendingPointers, l);
    return m;
  }

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool anyParallel = false;
  for (int l = 0; l < numLoops; ++l) {
    bool parallel = iterators[l] == utils::IteratorType::parallel;
    anyParallel |= parallel && bounds[l] >= 2;
    for (int c = 1; c < M; ++c) {
      int64_t size = layout.tileCandidates[c];
      bool fits = !ShapedType::isDynamic(bounds[l]) && size <= bounds[l] &&
                  (!config.legality.dividingTiles || bounds[l] % size == 0);
      for (int which = 0; which < kNumTiledKinds; ++which) {
        tileAt(which, l, c) =
            fits && (parallel || !kActionKinds[which].has(kParallelOnly));
        m.unsplit[(which * N + l) * M + c] = !fits || size == bounds[l];
      }
    }
  }

  bool parallelized = isParallelized(op, state);
  // The last action of an op ends it (legality v4): an op given
  // historyLength transformations and no V runs as scalar loops, which
  // schedules of four tilings and a fifth did (a depthwise convolution 2.4x
  // slower than unscheduled).
  bool lastSlot = isLastSlot(state, layout);
  for (const ActionKindInfo &info : kActionKinds) {
    bool allowed = false;
    if (lastSlot && !info.has(kTerminal))
      continue;
    switch (info.kind) {
    case ActionKind::Tiling:
      allowed = numLoops >= 1;
      break;
    case ActionKind::TiledParallelization:
      allowed = !parallelized && anyParallel;
      break;
    case ActionKind::TiledFusion:
      allowed = !parallelized && anyParallel && hasProducer &&
                !hasTiledHistory(state);
      break;
    case ActionKind::Interchange:
      allowed = numLoops >= 2;
      break;
    case ActionKind::Vectorization:
      allowed = succeeded(vectorizationPrecondition(op, config.legality));
      break;
    case ActionKind::NoTransformation:
      allowed = true;
      break;
    }
    if (allowed)
      setKind(info.kind);
  }
  if (m.isKindAllowed(ActionKind::Interchange))
    for (int l = 0; l < numLoops; ++l)
      m.pointer[l] = 1;
  return m;
}

LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const ActionSpaceConfig &config,
                           std::string &reason) {
  return verifyAction(op, state, hasProducer, action,
                      computeActionMasks(op, state, hasProducer, config),
                      config, reason);
}

LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const ActionMasks &m,
                           const ActionSpaceConfig &config,
                           std::string &reason) {
  const FeatureLayout &layout = config.layout;
  SmallVector<int64_t> bounds = getLoopBounds(op);
  int numLoops = bounds.size();
  const ActionKindInfo &info = action.info();
  std::string what = std::string(info.name) + " " + action.str();
  if (!m.isKindAllowed(action.kind)) {
    if (state.done)
      reason = what + " is not allowed: the op's schedule is complete "
                      "(vectorized, NT taken, or " +
               std::to_string(layout.historyLength) + " actions applied)";
    else if (state.inInterchange())
      reason = what + " is not allowed: an interchange is being chosen";
    else if (!info.has(kTerminal) && isLastSlot(state, layout))
      reason = what + " is not allowed: the op's last (" +
               std::to_string(layout.historyLength) +
               "th) action must end it (V or NT)";
    else if (action.kind == ActionKind::Vectorization) {
      std::string why;
      (void)vectorizationPrecondition(op, config.legality, &why);
      reason = what + " is not allowed: " + why;
    } else if (info.has(kFusesProducer) && !hasProducer)
      reason = what + " is not allowed: the op has no linalg producer to fuse";
    else if (info.has(kFusesProducer) && hasTiledHistory(state))
      reason = what + " is not allowed: the op is already tiled";
    else if (info.has(kParallelizes) && isParallelized(op, state))
      reason = what + " is not allowed: the op is already parallelized";
    else if (info.params == ActionParams::Permutation)
      reason = what + " is not allowed: the op has fewer than 2 loops";
    else
      reason = what + " is not allowed here";
    return failure();
  }
  if (info.isTiled()) {
    if ((int)action.sizes.size() != numLoops) {
      reason = what + " gives " + std::to_string(action.sizes.size()) +
               " tile sizes, the op has " + std::to_string(numLoops) +
               " loops";
      return failure();
    }
    bool anySplit = false;
    for (int l = 0; l < numLoops; ++l) {
      int64_t size = action.sizes[l];
      anySplit |= size != 0 && size < bounds[l];
      int c = layout.getTileIndex(size);
      if (c < 0) {
        std::string cands;
        for (int64_t t : layout.tileCandidates)
          cands += (cands.empty() ? "" : ", ") + std::to_string(t);
        reason = what + ": tile size " + std::to_string(size) + " of loop " +
                 std::to_string(l) + " is not a candidate (" + cands + ")";
        return failure();
      }
      if (m.isTileAllowed(action.kind, l, c))
        continue;
      if (info.has(kParallelOnly) &&
          op.getIteratorTypesArray()[l] != utils::IteratorType::parallel)
        reason = what + ": loop " + std::to_string(l) +
                 " is a reduction loop; " + info.mnemonic +
                 " tiles parallel loops only (use 0)";
      else if (ShapedType::isDynamic(bounds[l]))
        reason = what + ": loop " + std::to_string(l) +
                 " has a dynamic extent (an earlier tile size does not "
                 "divide it): only 0 is allowed";
      else if (size > bounds[l])
        reason = what + ": tile size " + std::to_string(size) +
                 " exceeds the extent " + std::to_string(bounds[l]) +
                 " of loop " + std::to_string(l);
      else
        reason = what + ": tile size " + std::to_string(size) +
                 " does not divide the extent " + std::to_string(bounds[l]) +
                 " of loop " + std::to_string(l) +
                 " (the op could then not be vectorized)";
      return failure();
    }
    if (!anySplit && info.has(kNeedsSplit)) {
      reason = what + " splits no loop: it needs a tile size above 0 and "
                      "below its loop's extent on at least one loop";
      return failure();
    }
  }
  if (info.params == ActionParams::Permutation) {
    SmallVector<int64_t> sorted(action.sizes.begin(), action.sizes.end());
    llvm::sort(sorted);
    SmallVector<int64_t> iota(numLoops);
    std::iota(iota.begin(), iota.end(), 0);
    if (sorted != iota) {
      reason = what + " is not a permutation of the op's " +
               std::to_string(numLoops) + " loops";
      return failure();
    }
  }
  return success();
}

} // namespace mlir::rl
