//===- Scheduler.h - Schedule state of a whole module -----------*- C++ -*-===//
//
// Numbers the linalg ops of a module (op ids, pre-order, module-wide), keeps
// each op's schedule state, and applies decisions one at a time, consumer
// before producer. The pass, the policy decoding and the Python environment
// all drive the same Scheduler, so what the agent sees in training is what
// the pass sees.
//
// Applying an action: its precondition (the masks) is checked first; its
// transform ops are built with builders and applied to the op (and, for a
// fusion, its producer) directly. What the action can change is the op
// itself (cloned beforehand: one op, not the function), which it replaces in
// its block, and the uses of its results and of the fused producer's; if
// the transformation fails or what it produced does not verify, exactly
// that is put back.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_SCHEDULER_H
#define MLIR_RL_TRANSFORMS_SCHEDULER_H

#include "mlir-rl/ActionSpace/Decoding.h"
#include "mlir-rl/ActionSpace/Masks.h"
#include "mlir-rl/ActionSpace/ScheduleText.h"
#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Transforms/ScheduleBuilder.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace mlir::rl {

/// What the scheduler knows of one linalg op.
struct OpRecord {
  int64_t id = -1;
  std::string name;         // e.g. "linalg.matmul"
  OpKind kind = OpKind::Unknown;
  std::string function;     // enclosing function's symbol name
  bool supported = false;
  std::string reason;       // why not supported
  int64_t producerId = -1;  // last linalg producer (operand order), or -1
  std::vector<int64_t> consumerIds;
  std::vector<int64_t> loopBounds;
  std::vector<std::string> iterators; // "parallel" / "reduction"
  LocationAttr loc;         // location of the op when numbered
  OpScheduleState state;
  /// Where each action of state.history came from (Scheduler::setSource).
  std::vector<std::string> sources;
  /// The rules' choices a decision source made for the op (setChoices).
  RuleChoices choices;
};

enum class ApplyStatus { Applied, Illegal, Failed };

/// `schedule` without its entries' rule choices (and the entries that had
/// nothing else).
ExplicitSchedule withoutChoices(ExplicitSchedule schedule);

/// A policy: observation and flat masks in, logits of every head out.
using PolicyFn = llvm::function_ref<LogicalResult(
    ArrayRef<float> observation, ArrayRef<uint8_t> mask, PolicyLogits &logits,
    std::string &error)>;

struct PolicyRunOptions {
  bool sample = false; // sample from the softmax instead of argmax
  uint64_t seed = 0;
  /// Called with each decoded step before it is applied (a fuzzer's trace:
  /// what was about to happen when a process died).
  std::function<void(int64_t id, const Step &step)> onStep;
};

/// What scheduling with a policy cost and did.
struct PolicyStats {
  int64_t ops = 0;
  int64_t inferences = 0;
  double inferenceSeconds = 0;
  int64_t applications = 0; // transformations applied (or attempted)
  double applySeconds = 0;
  std::vector<std::string> warnings; // actions that failed to apply
};

/// How much of the IR is verified after each action.
enum class VerifyScope {
  /// What the action replaced or modified, and the users of its results
  /// (cost independent of the module's size).
  Touched,
  /// The whole enclosing function (slow; the pass's second attempt when the
  /// module does not verify at the end).
  Function,
};

class Scheduler {
public:
  Scheduler(ModuleOp module, const ActionSpaceConfig &config,
            VerifyScope verifyScope = VerifyScope::Touched);

  /// Tests only: treat the `n`-th transformation from now (0 = the next
  /// one) as failed after it applied, so that the restore path runs on
  /// fully transformed IR; -1 (the default) never.
  void setFailureInjection(int64_t n) { injectFailureAt = n; }

  /// Tags every linalg op with its id and records it. Call once.
  void initialize();

  const std::vector<OpRecord> &getOps() const { return ops; }
  const OpRecord *getRecord(int64_t id) const;
  /// Supported ops, consumers before producers (reverse program order within
  /// each function, functions in order).
  std::vector<int64_t> getTraversalOrder() const;
  /// The first op of the traversal order whose schedule is not complete, or
  /// -1 when every op is done.
  int64_t getNextOp() const;
  /// Decisions an episode over this module may take at most.
  int64_t getStepBudget() const;

  /// The op carrying `id` now (the first in pre-order if a fused clone
  /// exists), or null.
  linalg::LinalgOp lookup(int64_t id);
  /// Whether tiled fusion has a producer to fuse into `id`.
  bool hasFusableProducer(int64_t id);

  ActionMasks getMasks(int64_t id);
  /// Features of the op, then of its last producer (zeros if none).
  std::vector<float> getObservation(int64_t id);
  std::vector<float> getOpFeatures(int64_t id);

  /// Verifies and applies one action. Illegal: nothing changed, `message`
  /// says why. Failed: the transformation did not apply or did not verify,
  /// the IR was restored and `message` holds the reason; the op's state
  /// records nothing.
  ApplyStatus apply(int64_t id, const Action &action, std::string &message);
  /// One interchange level-pointer sub-step; applies the interchange when the
  /// permutation is complete.
  ApplyStatus applyPointer(int64_t id, int64_t loop, std::string &message);
  /// Applies a decoded step (an action or an interchange level pointer).
  ApplyStatus applyStep(int64_t id, const Step &step, std::string &message);
  /// Applies an explicit schedule; stops at the first illegal action. When
  /// given, `opId` receives the op an illegal action was meant for (-1 when
  /// the schedule itself is at fault).
  ApplyStatus applySchedule(const ExplicitSchedule &schedule,
                            std::string &message, int64_t *opId = nullptr);

  /// Decodes logits for op `id` in its current state (decodeStep).
  /// Fails when the op cannot take a step (unknown, unsupported, done).
  FailureOr<Step> decode(int64_t id, const PolicyLogits &logits,
                         std::mt19937_64 *rng, std::string &message);
  /// Schedules every supported op, consumer before producer, with `policy`
  /// and masked decoding, until each op is complete. An action that fails to
  /// apply ends that op's schedule (recorded in `stats.warnings`).
  LogicalResult scheduleWithPolicy(PolicyFn policy,
                                   const PolicyRunOptions &options,
                                   PolicyStats &stats, std::string &error);
  /// The same for op `id` alone (nothing when it is unsupported or done);
  /// `rng` draws sampled decisions.
  LogicalResult scheduleOpWithPolicy(int64_t id, PolicyFn policy,
                                     const PolicyRunOptions &options,
                                     std::mt19937_64 &rng, PolicyStats &stats,
                                     std::string &error);

  /// Records choices for the rules (stage 3 of SchedulePipeline) for op
  /// `id`; the set ones replace earlier ones. Illegal (nothing recorded,
  /// `message` says why) when a value is not in the op's mask (the
  /// setChoiceMask callback's; none set: nothing is offered). Changes no IR.
  ApplyStatus setChoices(int64_t id, const RuleChoices &choices,
                         std::string &message);
  /// The values each rule choice may take for op `id` (the pipeline sets
  /// this: the rules and the module before the decisions decide it).
  void setChoiceMask(std::function<RuleChoiceMask(int64_t)> mask) {
    choiceMask = std::move(mask);
  }
  RuleChoiceMask getChoiceMask(int64_t id) const {
    return choiceMask ? choiceMask(id) : RuleChoiceMask();
  }

  /// Everything applied so far, each op's actions in the traversal order,
  /// after the prelude's passes but its first `skipPreludeSteps`.
  ExplicitSchedule getSchedule(size_t skipPreludeSteps = 0) const;
  /// The textual schedule of everything applied so far ("1: TP(..) V; ..."),
  /// with each op's rule choices: the decisions, as the rules take them.
  std::string getScheduleText() const;
  /// The trace: the schedule after the passes that ran before it (the
  /// prelude), "[passes] 1: TP(..) V; ..."; without a prelude, the
  /// schedule; without rule choices (they act through the rules, which a
  /// trace records as what they did). Replayed on the module before the prelude (applyTrace),
  /// it gives the same IR.
  std::string getTrace() const;
  /// A transform script that replays the applied schedule on the original
  /// module with `--transform-interpreter`.
  std::string getTransformScript() const;
  /// Passes run on the module before initialize() (rewrite-windows), which
  /// the transform script replays first.
  void setPrelude(std::vector<PassStep> steps) { prelude = std::move(steps); }
  const std::vector<PassStep> &getPrelude() const { return prelude; }
  /// Whether the last step of the prelude is the mlir-rl-untie-empties this
  /// scheduler ran before its first transformation (tiled fusion needs each
  /// init its own tensor.empty; Passes.h): the rules, which start again
  /// from the module before it, leave it out of the prelude they copy.
  bool untiedEmpties() const { return untied; }
  /// Where the actions applied from now on come from (provenance:
  /// "policy", "heuristic", "random", "explicit", "rule", "search", ...);
  /// recorded with each action and shown by dump-schedule.
  void setSource(std::string name) { source = std::move(name); }
  const std::string &getSource() const { return source; }
  /// Whether any action has been applied.
  bool hasApplied() const { return !applied.empty(); }
  /// Removes the op-id tags (the pass does this at the end).
  void removeTags();

  const ActionSpaceConfig &getConfig() const { return config; }
  const FeatureLayout &getLayout() const { return config.layout; }

private:
  std::string getUnknownOpMessage(int64_t id) const;
  void recordApplied(OpRecord &rec, const Action &action);
  /// Applies the transform IR of `applied` to `op` (and the producer) with
  /// the restore-on-failure protocol described above.
  LogicalResult transform(linalg::LinalgOp op, const AppliedAction &applied,
                          std::string &error);
  /// The second step of tiled fusion: the producer into the forall.
  LogicalResult fuse(Operation *root, Operation *producer,
                     scf::ForallOp forall, int64_t producerId,
                     std::string &error);
  void rebuildOpMap();

  ModuleOp module;
  ActionSpaceConfig config;
  VerifyScope verifyScope;
  std::vector<OpRecord> ops;
  std::vector<AppliedAction> applied;
  std::vector<PassStep> prelude;
  bool untied = false;
  std::string source = "explicit";
  std::function<RuleChoiceMask(int64_t)> choiceMask;
  /// id -> the op carrying it. Updated from the ops an action produced;
  /// rebuilt by one walk after a fusion (dead ops erased) or a restore.
  llvm::DenseMap<int64_t, Operation *> opById;
  bool opByIdValid = false;
  int64_t injectFailureAt = -1;
};

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_SCHEDULER_H
