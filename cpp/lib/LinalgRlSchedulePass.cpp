//===- LinalgRlSchedulePass.cpp - The linalg-rl-schedule pass -------------===//
//
// Selection and application are kept apart: the schedule (for now an explicit
// one, given as a pass option) is parsed and checked against the action masks
// op by op; each legal action is then applied by the Scheduler through the
// transform interpreter.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Features.h"
#include "mlir-rl/OnnxPolicy.h"
#include "mlir-rl/Passes.h"
#include "mlir-rl/Scheduler.h"

#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "linalg-rl-schedule"

namespace mlir::rl {
#define GEN_PASS_DEF_LINALGRLSCHEDULE
#include "mlir-rl/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;
using namespace mlir::rl;

namespace {

/// Prints one op's observation and masks as sparse index:value lists.
void printFeatures(llvm::raw_ostream &os, Scheduler &scheduler, int64_t id) {
  const OpRecord *rec = scheduler.getRecord(id);
  os << "// mlir-rl features op=" << id << " name=" << rec->name
     << " kind=" << getOpKindName(rec->kind) << " producer=" << rec->producerId
     << " loops=[";
  for (size_t i = 0; i < rec->loopBounds.size(); ++i)
    os << (i ? "," : "") << rec->loopBounds[i];
  os << "] iterators=[";
  for (size_t i = 0; i < rec->iterators.size(); ++i)
    os << (i ? "," : "") << rec->iterators[i];
  os << "]\n";
  std::vector<float> obs = scheduler.getObservation(id);
  os << "// mlir-rl observation op=" << id << " size=" << obs.size() << ":";
  for (size_t i = 0; i < obs.size(); ++i)
    if (obs[i] != 0.0f)
      os << " " << i << ":" << obs[i];
  os << "\n";
  std::vector<uint8_t> mask = scheduler.getMasks(id).flatten();
  os << "// mlir-rl mask op=" << id << " size=" << mask.size() << ":";
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i])
      os << " " << i;
  os << "\n";
}

struct LinalgRlSchedulePass
    : public mlir::rl::impl::LinalgRlScheduleBase<LinalgRlSchedulePass> {
  using LinalgRlScheduleBase::LinalgRlScheduleBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    LinalgRlScheduleBase::getDependentDialects(registry);
    linalg::registerTransformDialectExtension(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const FeatureLayout &layout = FeatureLayout::getDefault();

    // Selection: parse the schedule before touching the IR.
    std::string error;
    std::optional<ExplicitSchedule> explicitSchedule =
        parseSchedule(schedule, error);
    if (!explicitSchedule) {
      module.emitError() << "linalg-rl-schedule: malformed schedule '"
                         << schedule << "': " << error;
      return signalPassFailure();
    }

    Scheduler scheduler(module, layout);
    scheduler.initialize();
    for (const OpRecord &rec : scheduler.getOps())
      if (!rec.supported)
        emitRemark(rec.loc) << "linalg-rl-schedule: op " << rec.id << " ("
                            << rec.name << ") skipped: " << rec.reason;

    if (dumpFeatures)
      for (int64_t id : scheduler.getTraversalOrder())
        printFeatures(llvm::outs(), scheduler, id);

    if (schedule.empty()) {
      if (usePolicy && failed(scheduleWithPolicy(module, scheduler, layout)))
        return signalPassFailure();
      finish(module, scheduler);
      return;
    }

    // Application, consumers before producers.
    std::string message;
    int64_t culprit = -1;
    ApplyStatus status =
        scheduler.applySchedule(*explicitSchedule, message, &culprit);
    if (status == ApplyStatus::Illegal) {
      // Point at the op the action was meant for, where there is one.
      const OpRecord *rec = scheduler.getRecord(culprit);
      Location loc = rec ? Location(rec->loc) : module.getLoc();
      emitError(loc) << "linalg-rl-schedule: " << message;
      scheduler.removeTags();
      return signalPassFailure();
    }
    if (status == ApplyStatus::Failed)
      module.emitWarning() << "linalg-rl-schedule: " << message;
    finish(module, scheduler);
  }

  /// Schedules every op with the ONNX policy (loaded once per pass instance).
  LogicalResult scheduleWithPolicy(ModuleOp module, Scheduler &scheduler,
                                   const FeatureLayout &layout) {
    if (!policy) {
      std::string error;
      policy = OnnxPolicy::load(modelPath, ortLib, layout, error);
      if (!policy) {
        module.emitError() << "linalg-rl-schedule: " << error;
        scheduler.removeTags();
        return failure();
      }
    }
    PolicyRunOptions options;
    options.sample = sample;
    options.seed = seed;
    PolicyStats stats;
    std::string error;
    auto runPolicy = [&](ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                         PolicyLogits &logits, std::string &err) {
      return policy->run(obs, mask, logits, err);
    };
    if (failed(scheduler.scheduleWithPolicy(runPolicy, options, stats,
                                            error))) {
      module.emitError() << "linalg-rl-schedule: " << error;
      scheduler.removeTags();
      return failure();
    }
    for (const std::string &w : stats.warnings)
      module.emitWarning() << "linalg-rl-schedule: " << w;
    LLVM_DEBUG(llvm::dbgs() << "policy: " << stats.ops << " ops, "
                            << stats.inferences << " inferences in "
                            << stats.inferenceSeconds << " s, "
                            << stats.applications << " applications in "
                            << stats.applySeconds << " s\n");
    return success();
  }

  /// Writes the dump-schedule file and removes the op-id tags.
  void finish(ModuleOp module, Scheduler &scheduler) {
    if (!dumpSchedule.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(dumpSchedule, ec, llvm::sys::fs::OF_Text);
      if (ec) {
        module.emitError() << "linalg-rl-schedule: cannot write dump-schedule "
                              "file '"
                           << dumpSchedule << "': " << ec.message();
        scheduler.removeTags();
        return signalPassFailure();
      }
      os << "// Schedule: " << scheduler.getScheduleText() << "\n"
         << scheduler.getTransformScript();
    }
    scheduler.removeTags();
  }

  std::shared_ptr<OnnxPolicy> policy;
};

} // namespace
