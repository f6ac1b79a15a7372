//===- LinalgRlSchedulePass.cpp - The linalg-rl-schedule pass -------------===//
//
// The pass is the SchedulePipeline with options: the front end, the
// decisions (an explicit schedule or trace, the policy, the heuristic,
// random, or the tuner), the post-decision rules. Selection and
// application are kept apart: each decision is checked against the action
// masks before the Scheduler applies it.
//
// The pass hands on only IR that verifies: each action's result is verified
// where it changed the IR, and the whole module once at the end. Should that
// fail, the module is put back as it came and scheduled once more, this time
// verifying the whole function after every action (an action whose result
// does not verify is undone); if even that does not verify, the pass fails.
//
// This file (the pass and mlir-rl-strip-op-ids) is in MlirRLPasses, the top
// library: the pass runs the SchedulePipeline (MlirRLPipeline) and the tuner
// (MlirRLTuning).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Analysis/OpAnalysis.h"
#include "mlir-rl/Pipeline/SchedulePipeline.h"
#include "mlir-rl/Policy/DecisionSource.h"
#include "mlir-rl/Policy/OnnxPolicy.h"
#include "mlir-rl/Transforms/FrontEnd.h"
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
    // And the front end's mark, as the schedule pass removes it.
    if (auto module = dyn_cast<ModuleOp>(getOperation()))
      module->removeAttr(kFrontEndAttrName);
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
    std::vector<PassStep> steps = getFrontEndSteps(FrontEndOptions());
    steps.push_back(getPackRhsStep(kDefaultMinRowsToCopy));
    OpPassManager pm(ModuleOp::getOperationName());
    if (succeeded(buildPassStepsPipeline(pm, steps)))
      pm.getDependentDialects(registry);
  }

  /// The pipeline's settings from the pass's options (PipelineOptions'
  /// defaults are the options' defaults).
  PipelineOptions getPipelineOptions() const {
    PipelineOptions options;
    options.frontEnd.computeInF32 = computeInF32;
    options.frontEnd.bf16Dot = bf16Dot;
    options.frontEnd.fuseElementwise = fuseElementwise;
    options.frontEnd.rewriteWindows = rewriteWindows;
    options.frontEnd.padToTiles = padToTiles;
    options.frontEnd.flattenElementwise = flattenElementwise;
    options.rules.pack = packRhs;
    options.rules.minRowsToCopy =
        packConstantsOnly ? 0 : std::max<int64_t>(0, minRowsToCopy);
    options.rules.registerTiles = registerTiles;
    options.rules.copies = copiesByRule;
    return options;
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
    if (search < 0 || budgetMs < 0 || threads < 0 || candidateTimeoutS < 0) {
      module.emitError() << "linalg-rl-schedule: search, budget-ms, "
                            "candidate-timeout-s and threads must not be "
                            "negative";
      return signalPassFailure();
    }
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

  /// Runs the pipeline on `module`, writes dump-schedule and removes the
  /// op-id tags. Fails after emitting an error.
  LogicalResult scheduleModule(ModuleOp module,
                               const ExplicitSchedule &explicitSchedule,
                               VerifyScope verifyScope, bool report) {
    SchedulePipeline pipeline(module, verifyScope);
    auto run = [&](OpPassManager &pm) { return runPipeline(pm, module); };
    PipelineOptions options = getPipelineOptions();
    pipeline.setRules(options.rules);
    if (schedule.empty() && usePolicy) {
      std::string error;
      if (failed(pipeline.runFrontEnd(options.frontEnd, run, error))) {
        module.emitError() << "linalg-rl-schedule: " << error
                           << " (fuse-elementwise, rewrite-windows, "
                              "pad-to-tiles and flatten-elementwise=false "
                              "skip the front end's stages)";
        return failure();
      }
    }
    if (!schedule.empty()) {
      // An explicit schedule, or a trace (its passes first).
      std::string message;
      int64_t culprit = -1;
      ApplyStatus status =
          applyTrace(pipeline, explicitSchedule, run, message, &culprit);
      // (The scheduler's default source is "explicit".)
      if (report)
        reportUnsupported(pipeline.getScheduler());
      if (status == ApplyStatus::Illegal) {
        // Point at the op the action was meant for, where there is one.
        const OpRecord *rec = pipeline.getScheduler().getRecord(culprit);
        Location loc = rec ? Location(rec->loc) : module.getLoc();
        emitError(loc) << "linalg-rl-schedule: " << message;
        pipeline.commit();
        return failure();
      }
      if (status == ApplyStatus::Failed)
        module.emitWarning() << "linalg-rl-schedule: " << message;
      return finish(module, pipeline);
    }

    Scheduler &scheduler = pipeline.getScheduler();
    if (report) {
      reportUnsupported(scheduler);
      if (dumpFeatures)
        for (int64_t id : scheduler.getTraversalOrder())
          printFeatures(llvm::outs(), scheduler, id);
    }
    if (!usePolicy)
      return finish(module, pipeline);
    if (failed(loadPolicy(module))) {
      pipeline.commit();
      return failure();
    }
    auto runPolicy = makePolicyFn();
    if (search > 0 || !tuningDb.empty())
      return tuneModule(module, pipeline, options, verifyScope, report);

    PolicyRunOptions runOptions;
    // Random decisions are uniform logits, sampled.
    runOptions.sample = sample || source == DecisionSource::Random;
    runOptions.seed = seed;
    PolicyStats stats;
    std::string error;
    scheduler.setSource(getSourceName());
    if (failed(pipeline.decide(runPolicy, runOptions, stats, error))) {
      module.emitError() << "linalg-rl-schedule: " << error;
      pipeline.commit();
      return failure();
    }
    reportPolicyStats(module, stats);
    // Random decisions draw the rules' choices too.
    if (source == DecisionSource::Random)
      pipeline.drawRuleChoices(seed);
    applyRules(module, pipeline, options, report);
    return finish(module, pipeline);
  }

  void reportUnsupported(Scheduler &scheduler) {
    for (const OpRecord &rec : scheduler.getOps())
      if (!rec.supported)
        emitRemark(rec.loc) << "linalg-rl-schedule: op " << rec.id << " ("
                            << rec.name << ") skipped: " << rec.reason;
  }

  void reportPolicyStats(ModuleOp module, const PolicyStats &stats) {
    for (const std::string &w : stats.warnings)
      module.emitWarning() << "linalg-rl-schedule: " << w;
    LLVM_DEBUG(llvm::dbgs() << "policy: " << stats.ops << " ops, "
                            << stats.inferences << " inferences in "
                            << stats.inferenceSeconds << " s, "
                            << stats.applications << " applications in "
                            << stats.applySeconds << " s\n");
  }

  /// Stage 3, with a remark saying what the rules did (or why not).
  void applyRules(ModuleOp module, SchedulePipeline &pipeline,
                  const PipelineOptions &options, bool report) {
    auto runPolicy = makePolicyFn();
    RulesOutcome rules = pipeline.applyRules(options.rules, runPolicy);
    if (!report)
      return;
    if (!rules.applied) {
      if (!rules.why.empty())
        emitRemark(module.getLoc())
            << "linalg-rl-schedule: matmuls and copies as decided (not "
               "packed, register-tiled or by rule): "
            << rules.why;
      return;
    }
    InFlightDiagnostic d = emitRemark(module.getLoc());
    d << "linalg-rl-schedule:";
    if (rules.packed)
      d << " the right-hand sides of " << rules.packed
        << " matmuls packed into panels"
        << (rules.registerTiled || rules.copiesByRule ? ";" : "");
    if (rules.registerTiled)
      d << " " << rules.registerTiled << " plain matmuls register-tiled"
        << (rules.copiesByRule ? ";" : "");
    if (rules.copiesByRule)
      d << " " << rules.copiesByRule << " copies and fills scheduled by rule";
    // A rule's schedule that did not apply is a bug of the rules: said,
    // with the op it cost (scheduled as decided).
    for (const std::string &op : rules.dropped)
      module.emitWarning() << "linalg-rl-schedule: the rules' schedule of "
                           << op << "; that op is scheduled as decided";
  }

  /// The decisions' provenance: "policy", "policy, sampled", "heuristic",
  /// "random".
  std::string getSourceName() const {
    std::string name = decisions;
    if (sample && source == DecisionSource::Policy)
      name += ", sampled";
    return name;
  }

  LogicalResult loadPolicy(ModuleOp module) {
    if (policy || source != DecisionSource::Policy)
      return success();
    std::string error;
    policy = OnnxPolicy::load(modelPath, ortLib,
                              ActionSpaceConfig::getDefault().layout, error);
    if (!policy) {
      module.emitError() << "linalg-rl-schedule: " << error;
      return failure();
    }
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

  /// Decisions by the tuner (search=K, tuning-db), its candidates measured
  /// through the rules; then the rules; then, where the tuned schedule
  /// differs from the greedy one, the module check between the two as
  /// they ship.
  LogicalResult tuneModule(ModuleOp module, SchedulePipeline &pipeline,
                           const PipelineOptions &options,
                           VerifyScope verifyScope, bool report) {
    if (sample || source == DecisionSource::Random) {
      module.emitError() << "linalg-rl-schedule: sample=true and "
                            "decisions=random do not go with search or "
                            "tuning-db (they apply measured schedules)";
      pipeline.commit();
      return failure();
    }
    Scheduler &scheduler = pipeline.getScheduler();
    scheduler.setSource(getSourceName());
    TuningOptions tuning;
    tuning.search = search;
    tuning.dbPath = tuningDb;
    tuning.budgetMs = budgetMs;
    tuning.threads = threads;
    tuning.rules = options.rules;
    tuning.measure.tool = measureTool;
    tuning.measure.candidateTimeoutSeconds = candidateTimeoutS;
    TuningStats tuningStats;
    PolicyStats stats;
    std::string error;
    emitRemark(module.getLoc())
        << "linalg-rl-schedule: tuning "
        << scheduler.getTraversalOrder().size() << " ops (search="
        << (int)search
        << (tuningDb.empty() ? "" : ", tuning-db=" + std::string(tuningDb))
        << ")";
    auto reportLine = [&](int64_t id, const std::string &line) {
      const OpRecord *rec = scheduler.getRecord(id);
      emitRemark(rec ? Location(rec->loc) : module.getLoc())
          << "linalg-rl-schedule: " << line;
    };
    // The module after the front end, before the decisions (tagged).
    OwningOpRef<ModuleOp> before;
    if (moduleCheck)
      before = cast<ModuleOp>(pipeline.getModule()->clone());
    auto runPolicy = makePolicyFn();
    if (failed(tuneWithPolicy(scheduler, runPolicy, tuning, tuningStats,
                              stats, reportLine, error))) {
      module.emitError() << "linalg-rl-schedule: " << error;
      pipeline.commit();
      return failure();
    }
    emitRemark(module.getLoc())
        << "linalg-rl-schedule: tuned " << tuningStats.ops << " ops: "
        << tuningStats.searched << " searched (" << tuningStats.measurements
        << " candidates measured in " << tuningStats.processes
        << " helper processes), " << tuningStats.fromDb
        << " from the tuning database, " << tuningStats.policyOnly
        << " by the policy alone";
    reportPolicyStats(module, stats);
    applyRules(module, pipeline, options, report);
    if (!before)
      return finish(module, pipeline);

    // The greedy schedule as it ships, on a copy of the module as tuning
    // took it.
    std::string tunedTrace = pipeline.getTrace(/*fromFrontEnd=*/true);
    OwningOpRef<ModuleOp> greedyModule(cast<ModuleOp>(before->clone()));
    SchedulePipeline greedy(*greedyModule, verifyScope);
    greedy.setRules(options.rules);
    greedy.notePrelude(std::vector<PassStep>(
        pipeline.getPrelude().begin(),
        pipeline.getPrelude().begin() + pipeline.getFrontEndSize()));
    greedy.getScheduler().setSource(getSourceName() +
                                    ", the module check's choice");
    if (failed(greedy.decide(runPolicy, PolicyRunOptions(), stats, error))) {
      module.emitError() << "linalg-rl-schedule: " << error;
      pipeline.commit();
      return failure();
    }
    (void)greedy.applyRules(options.rules, runPolicy);
    std::string greedyTrace = greedy.getTrace(/*fromFrontEnd=*/true);
    if (greedyTrace == tunedTrace)
      return finish(module, pipeline);
    std::string why;
    removeOpIdTags(*before);
    FailureOr<ModuleCheckResult> result =
        checkTunedModule(*before, greedyTrace, tunedTrace, tuning, why);
    if (failed(result)) {
      emitRemark(module.getLoc())
          << "linalg-rl-schedule: module check not done (" << why
          << "); the tuned schedule stays";
      return finish(module, pipeline);
    }
    emitRemark(module.getLoc()) << "linalg-rl-schedule: " << result->line;
    if (result->keepTuned)
      return finish(module, pipeline);
    // The greedy schedule ships: it replaces the module's body.
    std::string trace = greedy.getTrace();
    std::string script = greedy.getScheduler().getTransformScript();
    greedy.commit();
    module.getBodyRegion().takeBody(greedyModule->getBodyRegion());
    module->removeAttr(kFrontEndAttrName);
    return writeDump(module, trace, script);
  }

  /// Writes the dump-schedule file and removes the op-id tags.
  LogicalResult finish(ModuleOp module, SchedulePipeline &pipeline) {
    std::string trace = pipeline.getTrace();
    std::string script = pipeline.getScheduler().getTransformScript();
    pipeline.commit();
    return writeDump(module, trace, script);
  }

  LogicalResult writeDump(ModuleOp module, const std::string &trace,
                          const std::string &script) {
    if (dumpSchedule.empty())
      return success();
    std::error_code ec;
    llvm::raw_fd_ostream os(dumpSchedule, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      module.emitError() << "linalg-rl-schedule: cannot write dump-schedule "
                            "file '"
                         << dumpSchedule << "': " << ec.message();
      return failure();
    }
    os << formatScheduleHeader(trace) << script;
    return success();
  }

  std::shared_ptr<OnnxPolicy> policy;
  DecisionSource source = DecisionSource::Policy;
};

} // namespace
