//===- Decoding.h - Logits and indices to steps -----------------*- C++ -*-===//
//
// The one decoder of the action space, used by the pass (policy in the
// compiler), the Python environment (index-based steps) and training
// (sampled rollouts, demonstrations).
//
// A decision is encoded as StepIndices = [kind, tile candidate per loop,
// interchange level pointer]: the policy's multi-discrete action. Decoding
// logits (greedy, or sampled) yields a legal Step; an index-based step is
// decodeStep() on indicator logits (the chosen indices 1, the rest 0), so an
// index action means exactly what decoding would make of it: a legal choice
// stays as it is, an illegal one falls back as decoding does.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ACTIONSPACE_DECODING_H
#define MLIR_RL_ACTIONSPACE_DECODING_H

#include "mlir-rl/ActionSpace/Masks.h"

#include <random>
#include <vector>

namespace mlir::rl {

/// Logits of the policy heads for one op (masked or not: masked choices are
/// never picked).
struct PolicyLogits {
  std::vector<float> kind;    // [A]
  std::vector<float> tile;    // [kNumTiledKinds][N][M]
  std::vector<float> pointer; // [N]
};

/// Masked decoding of logits into a legal step. Greedy (argmax, ties to the
/// lowest index) when `rng` is null, else sampled from the softmax of the
/// allowed choices. Transformations are drawn from the most to the least
/// likely (sampled: without replacement); one whose decoded parameters are
/// illegal (a kind that needs a non-zero tile size, all sizes 0) is skipped,
/// so NT, always legal, ends the search. While an interchange is being
/// chosen, the step is the next level pointer.
Step decodeStep(linalg::LinalgOp op, const OpScheduleState &state,
                bool hasProducer, const ActionMasks &masks,
                const PolicyLogits &logits, const ActionSpaceConfig &config,
                std::mt19937_64 *rng = nullptr);

/// A legal step and its log-probability under the policy's heads (masked
/// log-softmax of each head used, summed).
struct RankedStep {
  Step step;
  double logProb = 0;
};

/// The legal steps for `op` in `state`, most likely first, at most `limit`:
/// each allowed kind with its most likely parameters (what decodeStep would
/// pick for that kind), and for tiled kinds also the variants that take one
/// loop's second most likely size; while an interchange is being chosen,
/// the allowed level pointers. The alternatives a search over the policy's
/// proposals (a beam) expands.
std::vector<RankedStep> rankSteps(linalg::LinalgOp op,
                                  const OpScheduleState &state,
                                  bool hasProducer, const ActionMasks &masks,
                                  const PolicyLogits &logits,
                                  const ActionSpaceConfig &config, int limit);

/// A decision as the policy's multi-discrete action.
struct StepIndices {
  int kind = 0;
  std::vector<int> tiles; // [N] tile-candidate indices (0 = not tiled)
  int pointer = 0;
};

/// The indices of `step` (decoded for an op in `phase`).
StepIndices encodeStep(const Step &step, const FeatureLayout &layout);

/// Logits that are 1 at `indices` and 0 elsewhere: decodeStep() of them is
/// the index-based step.
PolicyLogits getIndicatorLogits(const StepIndices &indices,
                                const FeatureLayout &layout);

/// Checks that `indices` has the layout's shape (values are not checked:
/// out-of-range ones fall back as decoding does).
LogicalResult checkIndicesShape(const StepIndices &indices,
                                const FeatureLayout &layout,
                                std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_ACTIONSPACE_DECODING_H
