//===- Scheduler.h - Schedule state of a whole module -----------*- C++ -*-===//
//
// Numbers the linalg ops of a module (op ids, pre-order, module-wide), keeps
// each op's schedule state, and applies actions one at a time, consumer before
// producer. The pass, the policy decoding and the Python environment all drive
// the same Scheduler, so what the agent sees in training is what the pass sees.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_SCHEDULER_H
#define MLIR_RL_SCHEDULER_H

#include "mlir-rl/ActionSpace.h"
#include "mlir-rl/FeatureLayout.h"
#include "mlir-rl/ScheduleBuilder.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

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
};

enum class ApplyStatus { Applied, Illegal, Failed };

/// A policy: observation and flat masks in, logits of every head out.
using PolicyFn = llvm::function_ref<LogicalResult(
    ArrayRef<float> observation, ArrayRef<uint8_t> mask, PolicyLogits &logits,
    std::string &error)>;

struct PolicyRunOptions {
  bool sample = false; // sample from the softmax instead of argmax
  uint64_t seed = 0;
};

/// What scheduling with a policy cost and did.
struct PolicyStats {
  int64_t ops = 0;
  int64_t inferences = 0;
  double inferenceSeconds = 0;
  int64_t applications = 0; // transform-interpreter applications
  double applySeconds = 0;
  std::vector<std::string> warnings; // actions that failed to apply
};

class Scheduler {
public:
  Scheduler(ModuleOp module, const FeatureLayout &layout);

  /// Tags every linalg op with its id and records it. Call once.
  void initialize();

  const std::vector<OpRecord> &getOps() const { return ops; }
  const OpRecord *getRecord(int64_t id) const;
  /// Supported ops, consumers before producers (reverse program order within
  /// each function, functions in order).
  std::vector<int64_t> getTraversalOrder() const;

  /// The op carrying `id` now (the first if a fused clone exists), or null.
  linalg::LinalgOp lookup(int64_t id);
  /// Whether tiled fusion has a producer to fuse into `id`.
  bool hasFusableProducer(int64_t id);

  ActionMasks getMasks(int64_t id);
  /// Features of the op, then of its last producer (zeros if none).
  std::vector<float> getObservation(int64_t id);
  std::vector<float> getOpFeatures(int64_t id);

  /// Verifies and applies one action. Illegal: nothing changed, `message`
  /// says why. Failed: the transformation did not apply, the IR was restored
  /// and `message` holds the reason; the op's state records nothing.
  ApplyStatus apply(int64_t id, const Action &action, std::string &message);
  /// One interchange level-pointer sub-step; applies the interchange when the
  /// permutation is complete.
  ApplyStatus applyPointer(int64_t id, int64_t loop, std::string &message);
  /// Applies an explicit schedule; stops at the first illegal action. When
  /// given, `opId` receives the op an illegal action was meant for (-1 when
  /// the schedule itself is at fault).
  ApplyStatus applySchedule(const ExplicitSchedule &schedule,
                            std::string &message, int64_t *opId = nullptr);

  /// Applies a decoded step (an action or an interchange level pointer).
  ApplyStatus applyStep(int64_t id, const DecodedStep &step,
                        std::string &message);
  /// Schedules every supported op, consumer before producer, with `policy`
  /// and masked decoding, until each op is complete. An action that fails to
  /// apply ends that op's schedule (recorded in `stats.warnings`).
  LogicalResult scheduleWithPolicy(PolicyFn policy,
                                   const PolicyRunOptions &options,
                                   PolicyStats &stats, std::string &error);

  /// The textual schedule of everything applied so far ("1: TP(..) V; ...").
  std::string getScheduleText() const;
  /// A transform script that replays the applied schedule on the original
  /// module with `--transform-interpreter`.
  std::string getTransformScript() const;
  /// Removes the op-id tags (the pass does this at the end).
  void removeTags();

  const FeatureLayout &getLayout() const { return layout; }

private:
  std::string getUnknownOpMessage(int64_t id) const;
  LogicalResult verifyTouched(Operation *payload, int64_t id,
                              const ActionScriptOptions &options);

  ModuleOp module;
  const FeatureLayout &layout;
  std::vector<OpRecord> ops;
  std::vector<std::string> appliedScripts;
  unsigned scriptCounter = 0;
  /// id -> the op carrying it, rebuilt by one walk after the IR changed
  /// (every lookup used to walk the module: quadratic on large models).
  llvm::DenseMap<int64_t, Operation *> opById;
  bool opByIdValid = false;
};

} // namespace mlir::rl

#endif // MLIR_RL_SCHEDULER_H
