//===- Proposals.h - The policy's most likely schedules ---------*- C++ -*-===//
//
// Compile-time tuning measures what the policy proposes: for the root op of
// a unit, a beam over decodeStep's ranked alternatives (rankSteps) yields
// its most likely schedules; the greedy schedule always comes first (then
// its rule-choice variants and the heuristic's decisions for the root,
// DecisionSource.h) and NT last. Each proposal is completed the way the pass would go on: the unit's
// other ops (the producer, the fills) scheduled greedily by the policy.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_PROPOSALS_H
#define MLIR_RL_TUNING_PROPOSALS_H

#include "mlir-rl/Transforms/Scheduler.h"

#include "mlir-rl/Transforms/Packing.h"

#include <string>
#include <vector>

namespace mlir::rl {

struct Proposal {
  /// The root op's actions ("TP(32,64,0) T(8,32,8) V"): what is applied to
  /// the op in the module.
  std::string rootActions;
  /// The whole unit's trace (what is measured): its decisions through
  /// the pipeline's post-decision rules, as the pass ships them.
  std::string unitSchedule;
  double logProb = 0;
};

/// Up to `k` schedules of op `rootId` of `unit` (greedy first, then by
/// probability), plus NT. Each unit is scheduled on a copy (a
/// SchedulePipeline without front end: the unit is cut from the module
/// after it), then through `rules`; `unit` is not changed.
FailureOr<std::vector<Proposal>>
proposeSchedules(ModuleOp unit, int64_t rootId, PolicyFn policy,
                 const ActionSpaceConfig &config, int k,
                 const Rescheduling &rules, std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_PROPOSALS_H
