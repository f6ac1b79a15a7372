//===- SchedulePipeline.h - Front end, decisions, rules: one pipeline -*- C++ -*-===//
//
// The only way any tool schedules a module: the pass, the Python bindings
// (and through them the environment, evaluate, search, the fuzzer and the
// fixtures), the tuner's candidates and the measuring helper.
//
//   1. the front end (FrontEnd.h): rewrites before any decision;
//   2. the decisions, taken on the front end's module by a decision source
//      (the policy, the heuristic, random, a tuning database, an explicit
//      schedule or an environment's steps) through the Scheduler;
//   3. the post-decision rules (Packing.h's Rescheduling): right-hand sides
//      of matmuls packed into panels, register tiles, copies and fills by
//      rule -- the module is scheduled again from its state before the
//      decisions, each op by its decision translated.
//
// Each stage is named and switchable (PipelineOptions; its defaults are the
// pass's). What ran is recorded: the trace (Scheduler::getTrace) names the
// passes of stages 1 and 3 and the schedule applied after them, and
// replaying it on the same input (applyTrace) gives the same IR.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_PIPELINE_SCHEDULEPIPELINE_H
#define MLIR_RL_PIPELINE_SCHEDULEPIPELINE_H

#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Scheduler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::rl {

/// The pipeline's stages and their settings. The defaults are what
/// `linalg-rl-schedule` ships; every tool starts from them.
struct PipelineOptions {
  FrontEndOptions frontEnd;
  Rescheduling rules;

  /// The front end and the rules off: decisions on the module as given.
  static PipelineOptions none();
  /// Whether any rule is on.
  bool hasRules() const {
    return rules.pack || rules.registerTiles || rules.copies;
  }
};

/// What the rules stage did.
struct RulesOutcome {
  /// The module was scheduled again (else it stays as decided).
  bool applied = false;
  int64_t packed = 0;
  int64_t registerTiled = 0;
  int64_t copiesByRule = 0;
  /// Why not, when there were candidates and it was not applied.
  std::string why;
  /// Ops scheduled as decided because their rules' schedule did not apply
  /// (the rest was rescheduled): "op <id>: <why>" each.
  std::vector<std::string> dropped;
};

class SchedulePipeline {
public:
  /// A pipeline on `module` (not owned; it ends holding the result, see
  /// commit()).
  explicit SchedulePipeline(ModuleOp module,
                            VerifyScope verifyScope = VerifyScope::Touched);
  ~SchedulePipeline();

  /// Stage 1: the front end's stages `options` enables, before any
  /// decision (fails once one was applied; the op ids change). `run`: a pass's
  /// runPipeline, or getPassManagerRunner's.
  LogicalResult runFrontEnd(const FrontEndOptions &options, PipelineRunner run,
                            std::string &error);
  /// Instead of the front end: the passes of a trace's prelude, as given.
  LogicalResult runPrelude(ArrayRef<PassStep> steps, PipelineRunner run,
                           std::string &error);

  /// Records `steps` as passes that already ran on the module (a copy of
  /// a module after its front end): the trace names them, nothing runs.
  void notePrelude(ArrayRef<PassStep> steps);

  /// Stage 2: the scheduler the decisions go through (on the module after
  /// the front end; created, tagged and numbered on the first call).
  Scheduler &getScheduler();
  /// The module as it stands (the input, or the rules' module after
  /// applyRules).
  ModuleOp getModule() const { return current; }
  /// Every op decided by `policy` (Scheduler::scheduleWithPolicy).
  LogicalResult decide(PolicyFn policy, const PolicyRunOptions &options,
                       PolicyStats &stats, std::string &error);

  /// The rules stage 3 will apply, for the rule choices' masks (default:
  /// the shipped rules). applyRules takes its rules again.
  void setRules(const Rescheduling &r) { rules = r; }
  /// The values each rule choice may take for op `id` (getRuleChoiceMask
  /// on the module before the decisions, under setRules's rules); none
  /// where no rule could apply to the module.
  RuleChoiceMask getRuleChoiceMask(int64_t id);
  /// Draws every op's rule choices uniformly from its mask (the random
  /// decision source; `seed` decides).
  void drawRuleChoices(uint64_t seed);

  /// Stage 3: the rules `rules` enables, from the module before the
  /// decisions, each op by its decision translated; the copies of
  /// right-hand sides with no rule by `policy`. Once, after the decisions.
  /// Not applied (the module stays as decided) when nothing changes or
  /// the translation fails (`why`).
  RulesOutcome applyRules(const Rescheduling &rules, PolicyFn policy);
  bool hasAppliedRules() const { return rulesApplied; }

  /// The passes that ran before the decisions (stage 1's, and stage 3's
  /// packing).
  const std::vector<PassStep> &getPrelude() const;
  /// How many of them are the front end's (or a trace's), not the rules'.
  size_t getFrontEndSize() const { return frontEndSteps; }
  /// The trace (Scheduler::getTrace); `fromFrontEnd`: relative to the
  /// module after the front end (its passes left out, as a unit cut from
  /// that module is measured).
  std::string getTrace(bool fromFrontEnd = false) const;

  /// Removes the op-id tags and, when the rules rescheduled a copy, moves
  /// the result into the module the pipeline was made on. Call last.
  void commit();

private:
  /// Drops a scheduler that decided nothing yet (its numbering changes).
  LogicalResult restart(std::string &error);

  ModuleOp input;
  ModuleOp current;
  OwningOpRef<ModuleOp> rescheduled;
  /// The module after the front end, before the decisions (the rules'
  /// starting point; taken where rules could apply).
  OwningOpRef<ModuleOp> beforeDecisions;
  std::unique_ptr<Scheduler> scheduler;
  std::vector<PassStep> prelude;
  size_t frontEndSteps = 0;
  VerifyScope verifyScope;
  bool rulesApplied = false;
  Rescheduling rules;
  /// beforeDecisions's linalg ops by id (pre-order), once asked for.
  std::vector<Operation *> opsBeforeDecisions;
};

/// Applies `schedule` (a schedule, or a trace: its passes first) to
/// `pipeline`'s module, whose scheduler must not exist yet, or have applied
/// nothing and ran exactly the trace's passes. Statuses as
/// Scheduler::applySchedule; `culprit` as its `opId`.
ApplyStatus applyTrace(SchedulePipeline &pipeline,
                       const ExplicitSchedule &schedule, PipelineRunner run,
                       std::string &message, int64_t *culprit = nullptr);

} // namespace mlir::rl

#endif // MLIR_RL_PIPELINE_SCHEDULEPIPELINE_H
