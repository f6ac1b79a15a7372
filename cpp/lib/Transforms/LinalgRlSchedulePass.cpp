//===- LinalgRlSchedulePass.cpp - The linalg-rl-schedule pass -------------===//
//
// Selection and application are kept apart: the schedule (explicit, or
// decoded from the policy's logits) is checked against the action masks op
// by op; each legal action is then applied by the Scheduler.
//
// The pass hands on only IR that verifies: each action's result is verified
// where it changed the IR, and the whole module once at the end. Should that
// fail, the module is put back as it came and scheduled once more, this time
// verifying the whole function after every action (an action whose result
// does not verify is undone); if even that does not verify, the pass fails.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Analysis/OpAnalysis.h"
#include "mlir-rl/Policy/DecisionSource.h"
#include "mlir-rl/Policy/OnnxPolicy.h"
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Passes.h"
#include "mlir-rl/Transforms/Scheduler.h"
#include "mlir-rl/Tuning/ModuleCheck.h"
#include "mlir-rl/Tuning/Tuner.h"

#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "linalg-rl-schedule"

namespace mlir::rl {
#define GEN_PASS_DEF_LINALGRLSCHEDULE
#define GEN_PASS_DEF_STRIPOPIDS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;
using namespace mlir::rl;

namespace {

struct StripOpIdsPass : public mlir::rl::impl::StripOpIdsBase<StripOpIdsPass> {
  void runOnOperation() override {
    removeOpIdTags(getOperation());
  }
};

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
    for (ArrayRef<PassStep> steps :
         {ArrayRef<PassStep>(getPolicyWindowSteps()),
          ArrayRef<PassStep>(getPadToTilesSteps()),
          ArrayRef<PassStep>(getFlattenElementwiseSteps())}) {
      OpPassManager pm(ModuleOp::getOperationName());
      if (succeeded(buildPolicyStepsPipeline(pm, steps)))
        pm.getDependentDialects(registry);
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<DecisionSource> parsedSource = parseDecisionSource(decisions);
    if (!parsedSource) {
      module.emitError() << "linalg-rl-schedule: unknown decisions '"
                         << decisions << "' (valid: "
                         << getDecisionSourceNames() << ")";
      return signalPassFailure();
    }
    source = *parsedSource;
    // Selection: parse the schedule before touching the IR.
    std::string error;
    std::optional<ExplicitSchedule> explicitSchedule =
        parseSchedule(schedule, error);
    if (!explicitSchedule) {
      module.emitError() << "linalg-rl-schedule: malformed schedule '"
                         << schedule << "': " << error;
      return signalPassFailure();
    }
    // Linalg ops without a loop nest the action space describes.
    module.walk([](Operation *op) {
      if (isa<linalg::LinalgDialect>(op->getDialect()) &&
          !isa<linalg::LinalgOp>(op) && op->getParentOp() &&
          !isa<linalg::LinalgOp>(op->getParentOp()))
        emitRemark(op->getLoc())
            << "linalg-rl-schedule: " << op->getName()
            << " skipped: not a structured linalg op (only ops with the "
               "LinalgOp interface are scheduled)";
    });

    // With the policy: windowed ops into the forms it schedules well, odd
    // extents padded to full tiles.
    frontEndSteps.clear();
    if (schedule.empty() && usePolicy) {
      PolicyFrontEndOptions options;
      options.rewriteWindows = rewriteWindows;
      options.padToTiles = padToTiles;
      // Flattened ops are scheduled by the copies' rule.
      options.flattenElementwise = copiesByRule && search == 0 &&
                                   tuningDb.empty();
      std::string frontEndError;
      if (failed(applyPolicyFrontEnd(
              module, options,
              [&](OpPassManager &pm) { return runPipeline(pm, module); },
              frontEndSteps, frontEndError))) {
        module.emitError() << "linalg-rl-schedule: " << frontEndError
                           << " (rewrite-windows=false and pad-to-tiles=false "
                              "skip the front end)";
        return signalPassFailure();
      }
    }

    OwningOpRef<ModuleOp> original(cast<ModuleOp>(module->clone()));
    if (failed(scheduleModule(module, *explicitSchedule, VerifyScope::Touched,
                              /*report=*/true)))
      return signalPassFailure();
    if (succeeded(verify(module)))
      return;
    // Not expected: an action produced IR that does not verify outside what
    // the per-action verification looks at. Start over, verifying more.
    module.emitWarning()
        << "linalg-rl-schedule: the scheduled module does not verify; "
           "scheduling it again, verifying each action's whole function";
    module.getBodyRegion().takeBody(original->getBodyRegion());
    if (failed(scheduleModule(module, *explicitSchedule, VerifyScope::Function,
                              /*report=*/false)))
      return signalPassFailure();
    if (failed(verify(module))) {
      module.emitError() << "linalg-rl-schedule: internal error: the "
                            "scheduled module does not verify";
      return signalPassFailure();
    }
  }

  /// Schedules `module` (explicit schedule or policy), writes dump-schedule
  /// and removes the op-id tags. Fails after emitting an error.
  LogicalResult scheduleModule(ModuleOp module,
                               const ExplicitSchedule &explicitSchedule,
                               VerifyScope verifyScope, bool report) {
    Scheduler scheduler(module, ActionSpaceConfig::getDefault(), verifyScope);
    scheduler.setPrelude(frontEndSteps);
    scheduler.initialize();
    if (report) {
      for (const OpRecord &rec : scheduler.getOps())
        if (!rec.supported)
          emitRemark(rec.loc) << "linalg-rl-schedule: op " << rec.id << " ("
                              << rec.name << ") skipped: " << rec.reason;
      if (dumpFeatures)
        for (int64_t id : scheduler.getTraversalOrder())
          printFeatures(llvm::outs(), scheduler, id);
    }

    if (schedule.empty()) {
      OwningOpRef<ModuleOp> revertTo;
      // The policy decides on plain matmuls; the module is then scheduled
      // again with their B packed (Packing.h), from the module as it is now.
      OwningOpRef<ModuleOp> unscheduled;
      if (usePolicy && search == 0 && tuningDb.empty())
        unscheduled = cloneForRescheduling(module);
      if (usePolicy &&
          failed(scheduleWithPolicy(module, scheduler, verifyScope, revertTo)))
        return failure();
      if (unscheduled && !revertTo &&
          succeeded(reschedule(module, scheduler, *unscheduled, verifyScope,
                               report)))
        return success();
      if (revertTo) {
        // The module check chose the greedy schedule: schedule the module
        // as it was before tuning again, greedily.
        module.getBodyRegion().takeBody(revertTo->getBodyRegion());
        Scheduler greedy(module, ActionSpaceConfig::getDefault(), verifyScope);
        greedy.setPrelude(frontEndSteps);
        greedy.initialize();
        // As without search: the matmuls rescheduled after the decisions.
        OwningOpRef<ModuleOp> again = cloneForRescheduling(module);
        PolicyStats stats;
        std::string error;
        auto runPolicy = makePolicyFn();
        if (failed(greedy.scheduleWithPolicy(runPolicy, PolicyRunOptions(),
                                             stats, error))) {
          module.emitError() << "linalg-rl-schedule: " << error;
          greedy.removeTags();
          return failure();
        }
        if (again &&
            succeeded(reschedule(module, greedy, *again, verifyScope, report)))
          return success();
        return finish(module, greedy);
      }
      return finish(module, scheduler);
    }

    // Application, consumers before producers.
    std::string message;
    int64_t culprit = -1;
    ApplyStatus status =
        scheduler.applySchedule(explicitSchedule, message, &culprit);
    if (status == ApplyStatus::Illegal) {
      // Point at the op the action was meant for, where there is one.
      const OpRecord *rec = scheduler.getRecord(culprit);
      Location loc = rec ? Location(rec->loc) : module.getLoc();
      emitError(loc) << "linalg-rl-schedule: " << message;
      scheduler.removeTags();
      return failure();
    }
    if (status == ApplyStatus::Failed)
      module.emitWarning() << "linalg-rl-schedule: " << message;
    return finish(module, scheduler);
  }

  Rescheduling getRescheduling() const {
    Rescheduling opts;
    opts.pack = packRhs;
    opts.minRowsToCopy = packConstantsOnly ? 0 : std::max<int64_t>(0, minRowsToCopy);
    opts.registerTiles = registerTiles;
    opts.copies = copiesByRule;
    return opts;
  }

  /// `module` as it is before the policy's decisions, kept to schedule
  /// again (reschedule); null when it has nothing to reschedule.
  OwningOpRef<ModuleOp> cloneForRescheduling(ModuleOp module) const {
    if (!hasOpsToReschedule(module, getRescheduling()))
      return nullptr;
    return cast<ModuleOp>(module->clone());
  }

  /// Schedules `unscheduled` (the module before `plain` scheduled it)
  /// again with its matmuls packed or register-tiled and its copies by rule
  /// (mlir::rl::reschedule) and, on success, moves it into `module` and
  /// finishes. Fails, leaving `module` as `plain` scheduled it, when that
  /// does not apply.
  LogicalResult reschedule(ModuleOp module, Scheduler &plain,
                           ModuleOp unscheduled, VerifyScope verifyScope,
                           bool report) {
    int64_t packed = 0, tiled = 0, copied = 0;
    std::string why;
    auto runPolicy = makePolicyFn();
    std::unique_ptr<Scheduler> scheduler = mlir::rl::reschedule(
        plain, unscheduled, runPolicy, getRescheduling(), verifyScope, packed,
        tiled, copied, why);
    if (!scheduler) {
      if (report)
        emitRemark(module.getLoc())
            << "linalg-rl-schedule: matmuls and copies as decided (not "
               "packed, register-tiled or by rule): "
            << why;
      return failure();
    }
    if (report) {
      InFlightDiagnostic d = emitRemark(module.getLoc());
      d << "linalg-rl-schedule:";
      if (packed)
        d << " the right-hand sides of " << packed
          << " matmuls packed into panels" << (tiled || copied ? ";" : "");
      if (tiled)
        d << " " << tiled << " plain matmuls register-tiled"
          << (copied ? ";" : "");
      if (copied)
        d << " " << copied << " copies and fills scheduled by rule";
    }
    if (failed(finish(unscheduled, *scheduler)))
      return failure();
    plain.removeTags();
    module.getBodyRegion().takeBody(unscheduled.getBodyRegion());
    return success();
  }

  /// The decision source as a callable (PolicyFn refers to it: keep it
  /// alive): the loaded policy, the heuristic or uniform logits.
  std::function<LogicalResult(ArrayRef<float>, ArrayRef<uint8_t>,
                              PolicyLogits &, std::string &)>
  makePolicyFn() {
    const FeatureLayout &layout = ActionSpaceConfig::getDefault().layout;
    return [this, &layout](ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                           PolicyLogits &logits, std::string &err) {
      return computeDecisionLogits(source, layout, policy.get(), obs, mask,
                                   logits, err);
    };
  }

  /// Schedules every op with the ONNX policy (loaded once per pass instance).
  /// With tuning, `revertTo` receives the module as it was before, when
  /// the module check finds the greedy schedule faster.
  LogicalResult scheduleWithPolicy(ModuleOp module, Scheduler &scheduler,
                                   VerifyScope verifyScope,
                                   OwningOpRef<ModuleOp> &revertTo) {
    if (!policy && source == DecisionSource::Policy) {
      std::string error;
      policy = OnnxPolicy::load(modelPath, ortLib, scheduler.getLayout(),
                                error);
      if (!policy) {
        module.emitError() << "linalg-rl-schedule: " << error;
        scheduler.removeTags();
        return failure();
      }
    }
    PolicyRunOptions options;
    // Random decisions are uniform logits, sampled.
    options.sample = sample || source == DecisionSource::Random;
    options.seed = seed;
    PolicyStats stats;
    std::string error;
    auto runPolicy = makePolicyFn();
    if (search < 0 || budgetMs < 0 || threads < 0 || candidateTimeoutS < 0) {
      module.emitError() << "linalg-rl-schedule: search, budget-ms, "
                            "candidate-timeout-s and threads must not be "
                            "negative";
      scheduler.removeTags();
      return failure();
    }
    if ((search > 0 || !tuningDb.empty()) && options.sample) {
      module.emitError() << "linalg-rl-schedule: sample=true and "
                            "decisions=random do not go with search or "
                            "tuning-db (they apply measured schedules)";
      scheduler.removeTags();
      return failure();
    }
    if (search > 0 || !tuningDb.empty()) {
      TuningOptions tuning;
      tuning.search = search;
      tuning.dbPath = tuningDb;
      tuning.budgetMs = budgetMs;
      tuning.threads = threads;
      tuning.measure.tool = measureTool;
      tuning.measure.candidateTimeoutSeconds = candidateTimeoutS;
      TuningStats tuningStats;
      emitRemark(module.getLoc())
          << "linalg-rl-schedule: tuning "
          << scheduler.getTraversalOrder().size() << " ops (search="
          << (int)search
          << (tuningDb.empty() ? "" : ", tuning-db=" + std::string(tuningDb))
          << ")";
      auto report = [&](int64_t id, const std::string &line) {
        const OpRecord *rec = scheduler.getRecord(id);
        emitRemark(rec ? Location(rec->loc) : module.getLoc())
            << "linalg-rl-schedule: " << line;
      };
      OwningOpRef<ModuleOp> before;
      if (moduleCheck)
        before = cast<ModuleOp>(module->clone());
      if (failed(tuneWithPolicy(scheduler, runPolicy, tuning, tuningStats,
                                stats, report, error))) {
        module.emitError() << "linalg-rl-schedule: " << error;
        scheduler.removeTags();
        return failure();
      }
      emitRemark(module.getLoc())
          << "linalg-rl-schedule: tuned " << tuningStats.ops << " ops: "
          << tuningStats.searched << " searched ("
          << tuningStats.measurements << " candidates measured in "
          << tuningStats.processes << " helper processes), "
          << tuningStats.fromDb << " from the tuning database, "
          << tuningStats.policyOnly << " by the policy alone";
      if (before && failed(checkModule(module, before, scheduler, runPolicy,
                                       tuning, verifyScope, revertTo)))
        return failure();
    } else if (failed(scheduler.scheduleWithPolicy(runPolicy, options, stats,
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

  /// The module check (Tuning/ModuleCheck.h): moves `before` (the module
  /// as tuning took it) into `revertTo` when the greedy schedule is to be
  /// applied instead of the tuned one. A check that cannot run leaves the
  /// tuned schedule, with a remark.
  LogicalResult checkModule(ModuleOp module, OwningOpRef<ModuleOp> &before,
                            Scheduler &tuned, PolicyFn runPolicy,
                            const TuningOptions &tuning,
                            VerifyScope verifyScope,
                            OwningOpRef<ModuleOp> &revertTo) {
    std::string tunedText = tuned.getScheduleText();
    std::string greedyText;
    {
      OwningOpRef<ModuleOp> copy(cast<ModuleOp>(before->clone()));
      Scheduler greedy(*copy, ActionSpaceConfig::getDefault(), verifyScope);
      greedy.initialize();
      PolicyStats ignored;
      std::string error;
      if (failed(greedy.scheduleWithPolicy(runPolicy, PolicyRunOptions(),
                                           ignored, error))) {
        module.emitError() << "linalg-rl-schedule: " << error;
        tuned.removeTags();
        return failure();
      }
      greedyText = greedy.getScheduleText();
    }
    if (greedyText == tunedText)
      return success();
    std::string why;
    FailureOr<ModuleCheckResult> result =
        checkTunedModule(*before, greedyText, tunedText, tuning, why);
    if (failed(result)) {
      emitRemark(module.getLoc())
          << "linalg-rl-schedule: module check not done (" << why
          << "); the tuned schedule stays";
      return success();
    }
    emitRemark(module.getLoc()) << "linalg-rl-schedule: " << result->line;
    if (!result->keepTuned)
      revertTo = std::move(before);
    return success();
  }

  /// Writes the dump-schedule file and removes the op-id tags.
  LogicalResult finish(ModuleOp module, Scheduler &scheduler) {
    if (!dumpSchedule.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(dumpSchedule, ec, llvm::sys::fs::OF_Text);
      if (ec) {
        module.emitError() << "linalg-rl-schedule: cannot write dump-schedule "
                              "file '"
                           << dumpSchedule << "': " << ec.message();
        scheduler.removeTags();
        return failure();
      }
      os << formatScheduleHeader(scheduler.getScheduleText())
         << scheduler.getTransformScript();
    }
    scheduler.removeTags();
    return success();
  }

  std::shared_ptr<OnnxPolicy> policy;
  DecisionSource source = DecisionSource::Policy;
  /// The front end's passes that ran (dump-schedule's prelude).
  std::vector<PassStep> frontEndSteps;
};

} // namespace
