//===- Masks.h - Which actions are legal now --------------------*- C++ -*-===//
//
// `computeActionMasks` is the one function that says which actions are
// legal for an op in its current state; explicit schedules, policy
// decoding, the Python environment and searches all go through it.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ACTIONSPACE_MASKS_H
#define MLIR_RL_ACTIONSPACE_MASKS_H

#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Support/Action.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <string>
#include <vector>

namespace mlir::rl {

/// What the action space needs to know: the sizes (layout) and the limits
/// (legality).
struct ActionSpaceConfig {
  const FeatureLayout &layout;
  const LegalityConfig &legality;

  static ActionSpaceConfig getDefault() {
    return {FeatureLayout::getDefault(), LegalityConfig::getDefault()};
  }
};

/// Whether `op` is parallel already: TP or TF applied to it, or it sits in
/// a forall (a consumer fused it into its tiles). TP and TF are then
/// illegal.
bool isParallelized(linalg::LinalgOp op, const OpScheduleState &state);

/// Legal choices now (1 = allowed), in named parts.
struct ActionMasks {
  DecisionPhase phase = DecisionPhase::Transformation;
  std::vector<uint8_t> kind;    // [kNumActionKinds]
  std::vector<uint8_t> tile;    // [kNumTiledKinds][N][M]
  std::vector<uint8_t> pointer; // [N]: the next interchange level pointer
  /// [kNumTiledKinds][N][M]: 1 where the choice splits no loop (size 0, or
  /// the loop's whole extent); a kind with kNeedsSplit is illegal when every
  /// loop's choice is one of these. Not a policy input: what decoding's
  /// skipping of such a kind is computed from (its probability in training).
  std::vector<uint8_t> unsplit;
  int maxLoops = 0, numTileSizes = 0;

  /// Only NT (an op that cannot take a step).
  static ActionMasks onlyNoTransformation(const FeatureLayout &layout);

  bool isKindAllowed(ActionKind k) const { return kind[(int)k]; }
  /// Row of the tile mask of tiled kind `k`, loop `loop`.
  const uint8_t *tileRow(ActionKind k, int loop) const {
    return tile.data() + ((int)k * maxLoops + loop) * numTileSizes;
  }
  bool isTileAllowed(ActionKind k, int loop, int candidate) const {
    return tileRow(k, loop)[candidate];
  }
  /// Flattened [kind, tile, pointer] (FeatureLayout::getMaskSize()): the
  /// policy's input.
  std::vector<uint8_t> flatten() const;
};

/// Computes the legal actions for `op` given its state. `hasProducer` says
/// whether a linalg producer exists for tiled fusion.
ActionMasks computeActionMasks(linalg::LinalgOp op,
                               const OpScheduleState &state, bool hasProducer,
                               const ActionSpaceConfig &config);

/// Checks `action` against the masks and its parameters; on failure
/// `reason` says why in words.
LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const ActionSpaceConfig &config,
                           std::string &reason);
/// The same, against masks already computed for `op` and `state`.
LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const ActionMasks &masks,
                           const ActionSpaceConfig &config,
                           std::string &reason);

} // namespace mlir::rl

#endif // MLIR_RL_ACTIONSPACE_MASKS_H
