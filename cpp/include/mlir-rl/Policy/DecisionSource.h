//===- DecisionSource.h - Where the decisions of a schedule come from -----===//
//
// Without an explicit schedule, linalg-rl-schedule decides each op's actions
// with a decision source. Every source has the policy's shape -- an op's
// observation and masks in, the logits of the heads out -- and its logits
// go through the one decoder (decodeStep) under the same masks, in the same
// scheduling loop and the same rules after the decisions, so the sources
// differ in nothing but the decisions:
//
//   policy     the ONNX actor (OnnxPolicy.h), greedy or sampled (the default)
//   heuristic  a documented, non-learned default, greedy (below): the
//              baseline a learned result is compared with
//   random     uniform logits, sampled with the seed: mask-legal random
//              decisions
//
// The heuristic, per op (from the op's own features: loop extents and
// iterator kinds, and its action history):
//   1. TP: the parallel loops, outermost first, are split into at least
//      kMinParallelTiles tiles in all, each loop by the largest candidate
//      size that gives the tiles still needed (else the smallest that
//      splits it); the innermost loop stays whole unless it is the only
//      parallel loop;
//   2. T: inside, the innermost loop is tiled to the largest candidate up to
//      kInnerTile that divides it (whole when it is not longer), the
//      innermost parallel loop before it to kRowTile (whole when it is not
//      longer), every other loop to 1; where the innermost loop is a
//      reduction (a contraction), it is tiled to up to kReductionTile and
//      the two innermost parallel loops to up to kColumnTile and kRowTile
//      (a register tile of accumulators);
//   3. V.
// A step the masks do not allow falls back as decoding does (the next
// kind, the nearest allowed size); NT ends the op when nothing else is
// allowed. It never fuses or interchanges.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_POLICY_DECISIONSOURCE_H
#define MLIR_RL_POLICY_DECISIONSOURCE_H

#include "mlir-rl/ActionSpace/Decoding.h"
#include "mlir-rl/Analysis/FeatureLayout.h"

#include <optional>
#include <string>

namespace mlir::rl {

enum class DecisionSource { Policy, Heuristic, Random };

/// The source named `name` ("policy", "heuristic", "random"), if any.
std::optional<DecisionSource> parseDecisionSource(llvm::StringRef name);
llvm::StringRef getDecisionSourceName(DecisionSource source);
/// "policy, heuristic, random": for messages.
std::string getDecisionSourceNames();

/// The heuristic's constants (see the file comment).
inline constexpr int64_t kMinParallelTiles = 8;
inline constexpr int64_t kInnerTile = 64;
inline constexpr int64_t kRowTile = 8;
inline constexpr int64_t kColumnTile = 32;
inline constexpr int64_t kReductionTile = 8;

/// The heuristic's logits for the op whose observation is `observation`
/// (decoded greedily). Fails when the observation does not have `layout`'s
/// size.
LogicalResult computeHeuristicLogits(const FeatureLayout &layout,
                                     ArrayRef<float> observation,
                                     PolicyLogits &logits, std::string &error);

/// Logits that make every allowed choice equally likely (decoded with
/// sampling: the random source).
void computeUniformLogits(const FeatureLayout &layout, PolicyLogits &logits);

/// A policy's prior: logits of a non-learned source that the exported
/// network's own logits are added to (the network learns a residual, so a
/// network that outputs zeros decides as the prior does). The pass adds it
/// where the model's metadata names it (OnnxPolicy), and training adds the
/// same values (the bindings' prior_logits), so both see one distribution.
///
///   heuristic  the heuristic's logits, each at least kPriorFloor (the
///              heuristic ranks what it never wants at kNever = -100; a
///              residual must be able to reach those choices). The floor
///              keeps the heuristic's order, so with zero residuals the
///              greedy decisions are the heuristic's.
inline constexpr float kPriorFloor = -10.0f;

/// Whether `name` is a prior this build knows ("heuristic").
bool isKnownPrior(llvm::StringRef name);
/// "heuristic": for messages.
std::string getPriorNames();

/// The prior `name`'s logits for `observation`. Fails for an unknown prior
/// or an observation of another size.
LogicalResult computePriorLogits(llvm::StringRef name,
                                 const FeatureLayout &layout,
                                 ArrayRef<float> observation,
                                 PolicyLogits &logits, std::string &error);

class OnnxPolicy;

/// `source`'s logits for one op: the loaded `policy`'s (which
/// DecisionSource::Policy needs; the others ignore it), the heuristic's or
/// uniform ones. What every caller that schedules with a source runs.
LogicalResult computeDecisionLogits(DecisionSource source,
                                    const FeatureLayout &layout,
                                    OnnxPolicy *policy,
                                    ArrayRef<float> observation,
                                    ArrayRef<uint8_t> mask,
                                    PolicyLogits &logits, std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_POLICY_DECISIONSOURCE_H
