//===- SchedulePipeline.cpp - Front end, decisions, rules: one pipeline ---===//
#include "mlir-rl/Pipeline/SchedulePipeline.h"

#include "mlir/IR/Verifier.h"

namespace mlir::rl {

PipelineOptions PipelineOptions::none() {
  PipelineOptions options;
  options.frontEnd = FrontEndOptions::none();
  options.rules.pack = false;
  options.rules.registerTiles = false;
  options.rules.copies = false;
  return options;
}

SchedulePipeline::SchedulePipeline(ModuleOp module, VerifyScope verifyScope)
    : input(module), current(module), verifyScope(verifyScope) {}

SchedulePipeline::~SchedulePipeline() = default;

LogicalResult SchedulePipeline::restart(std::string &error) {
  if (!scheduler)
    return success();
  if (scheduler->hasApplied() || rulesApplied) {
    error = "the front end and a trace's passes run before the first "
            "decision";
    return failure();
  }
  scheduler->removeTags();
  scheduler.reset();
  beforeDecisions = nullptr;
  opsBeforeDecisions.clear();
  return success();
}

LogicalResult SchedulePipeline::runFrontEnd(const FrontEndOptions &options,
                                            PipelineRunner run,
                                            std::string &error) {
  if (failed(restart(error)))
    return failure();
  std::vector<PassStep> ran;
  if (failed(applyFrontEnd(current, options, run, ran, error)))
    return failure();
  prelude.insert(prelude.end(), ran.begin(), ran.end());
  frontEndSteps = prelude.size();
  return success();
}

LogicalResult SchedulePipeline::runPrelude(ArrayRef<PassStep> steps,
                                           PipelineRunner run,
                                           std::string &error) {
  if (failed(restart(error)))
    return failure();
  if (failed(runPassSteps(current, steps, run, error)))
    return failure();
  prelude.insert(prelude.end(), steps.begin(), steps.end());
  frontEndSteps = prelude.size();
  return success();
}

void SchedulePipeline::notePrelude(ArrayRef<PassStep> steps) {
  prelude.assign(steps.begin(), steps.end());
  frontEndSteps = prelude.size();
}

Scheduler &SchedulePipeline::getScheduler() {
  if (!scheduler) {
    scheduler = std::make_unique<Scheduler>(
        current, ActionSpaceConfig::getDefault(), verifyScope);
    scheduler->setPrelude(prelude);
    scheduler->initialize();
    // The rules start again from here (tagged: their translation goes by
    // these op ids). Only where a rule could apply: a clone costs.
    Rescheduling any;
    if (hasOpsToReschedule(current, any))
      beforeDecisions = cast<ModuleOp>(current->clone());
    scheduler->setChoiceMask(
        [this](int64_t id) { return getRuleChoiceMask(id); });
  }
  return *scheduler;
}

RuleChoiceMask SchedulePipeline::getRuleChoiceMask(int64_t id) {
  getScheduler();
  if (!beforeDecisions || rulesApplied)
    return {};
  if (opsBeforeDecisions.empty())
    beforeDecisions->walk<WalkOrder::PreOrder>(
        [&](linalg::LinalgOp op) { opsBeforeDecisions.push_back(op); });
  if (id < 0 || id >= (int64_t)opsBeforeDecisions.size())
    return {};
  const ActionSpaceConfig &config = scheduler->getConfig();
  return mlir::rl::getRuleChoiceMask(
      cast<linalg::LinalgOp>(opsBeforeDecisions[id]), rules, config.legality,
      config.layout);
}

void SchedulePipeline::drawRuleChoices(uint64_t seed) {
  Scheduler &s = getScheduler();
  std::mt19937_64 rng(seed ^ 0x5bd1e995c0ffeeULL);
  for (int64_t id : s.getTraversalOrder()) {
    RuleChoiceMask mask = getRuleChoiceMask(id);
    RuleChoices drawn;
    for (int c = 0; c < kNumRuleChoices; ++c)
      if (!mask[c].empty())
        drawn.values[c] = mask[c][rng() % mask[c].size()];
    std::string ignored;
    if (!drawn.empty())
      (void)s.setChoices(id, drawn, ignored);
  }
}

LogicalResult SchedulePipeline::decide(PolicyFn policy,
                                       const PolicyRunOptions &options,
                                       PolicyStats &stats,
                                       std::string &error) {
  return getScheduler().scheduleWithPolicy(policy, options, stats, error);
}

RulesOutcome SchedulePipeline::applyRules(const Rescheduling &rules,
                                          PolicyFn policy) {
  RulesOutcome out;
  Scheduler &plain = getScheduler();
  if (rulesApplied) {
    out.why = "the rules have been applied";
    return out;
  }
  if (!beforeDecisions || !(rules.pack || rules.registerTiles || rules.copies))
    return out;
  if (!hasOpsToReschedule(*beforeDecisions, rules))
    return out;
  // reschedule() leaves its module unspecified when it fails: a copy.
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(beforeDecisions->clone()));
  std::unique_ptr<Scheduler> result =
      reschedule(plain, *module, policy, rules, verifyScope, out.packed,
                 out.registerTiled, out.copiesByRule, out.why, &out.dropped);
  if (!result)
    return out;
  plain.removeTags();
  scheduler = std::move(result);
  rescheduled = std::move(module);
  current = *rescheduled;
  rulesApplied = true;
  out.applied = true;
  out.why.clear();
  return out;
}

const std::vector<PassStep> &SchedulePipeline::getPrelude() const {
  return scheduler ? scheduler->getPrelude() : prelude;
}

std::string SchedulePipeline::getTrace(bool fromFrontEnd) const {
  if (!scheduler) {
    ExplicitSchedule empty;
    empty.prelude = formatPassSteps(fromFrontEnd ? ArrayRef<PassStep>()
                                                 : ArrayRef<PassStep>(prelude));
    empty.hasPrelude = !empty.prelude.empty();
    return formatSchedule(empty);
  }
  return formatSchedule(withoutChoices(
      scheduler->getSchedule(fromFrontEnd ? frontEndSteps : 0)));
}

void SchedulePipeline::commit() {
  if (scheduler)
    scheduler->removeTags();
  else
    removeOpIdTags(current);
  current->removeAttr(kFrontEndAttrName);
  input->removeAttr(kFrontEndAttrName);
  if (current != input) {
    input.getBodyRegion().takeBody(current.getBodyRegion());
    current = input;
  }
}

ApplyStatus applyTrace(SchedulePipeline &pipeline,
                       const ExplicitSchedule &schedule, PipelineRunner run,
                       std::string &message, int64_t *culprit) {
  if (culprit)
    *culprit = -1;
  std::vector<PassStep> steps;
  if (schedule.hasPrelude &&
      failed(parsePassSteps(schedule.prelude, steps, message))) {
    message = "the trace's passes [" + schedule.prelude +
              "] are not valid: " + message;
    return ApplyStatus::Illegal;
  }
  // A pipeline whose passes ran already (the module's front end) applies
  // a trace of exactly those passes; else they run now.
  if (!steps.empty() && pipeline.getPrelude() != steps) {
    if (!pipeline.getPrelude().empty() ||
        failed(pipeline.runPrelude(steps, run, message))) {
      if (!pipeline.getPrelude().empty())
        message = "the trace's passes [" + schedule.prelude +
                  "] are not those that ran on this module [" +
                  formatPassSteps(pipeline.getPrelude()) + "]";
      return ApplyStatus::Illegal;
    }
  }
  return pipeline.getScheduler().applySchedule(schedule, message, culprit);
}

} // namespace mlir::rl
