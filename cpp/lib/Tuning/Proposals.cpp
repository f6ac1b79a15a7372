//===- Proposals.cpp - The policy's most likely schedules -----------------===//
#include "mlir-rl/Tuning/Proposals.h"
#include "mlir-rl/Pipeline/SchedulePipeline.h"
#include "mlir-rl/Policy/DecisionSource.h"

#include <algorithm>
#include <set>

namespace mlir::rl {

namespace {
/// A copy of the unit with the pipeline on it (no front end: the unit is
/// cut from the module after it).
struct Replay {
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<SchedulePipeline> pipeline;
  Scheduler *scheduler = nullptr;
};

/// A copy of `unit` with `steps` applied to `rootId`; null when one of
/// them does not apply.
std::unique_ptr<Replay> replay(ModuleOp unit, int64_t rootId,
                               const ActionSpaceConfig &config,
                               const Rescheduling &rules,
                               ArrayRef<Step> steps) {
  auto r = std::make_unique<Replay>();
  r->module = cast<ModuleOp>(unit->clone());
  r->pipeline = std::make_unique<SchedulePipeline>(*r->module);
  r->pipeline->setRules(rules);
  r->scheduler = &r->pipeline->getScheduler();
  for (const Step &s : steps) {
    std::string message;
    if (r->scheduler->applyStep(rootId, s, message) != ApplyStatus::Applied)
      return nullptr;
  }
  return r;
}

/// Keeps `k` partial schedules with diversity: the most likely of each
/// first action kind (TP, TF, T, V, I, NT) first, then the rest by
/// probability. A confident policy's
/// next-best schedules otherwise differ in one tile size only, while the
/// schedules that win where the policy is wrong differ in kind (fusing
/// instead of parallelizing, vectorizing at once).
template <typename Partial>
void keepDiverse(std::vector<Partial> &partials, int k) {
  std::stable_sort(partials.begin(), partials.end(),
                   [](const Partial &a, const Partial &b) {
                     return a.logProb > b.logProb;
                   });
  auto kindOf = [](const Partial &p) {
    if (p.steps.empty())
      return -1;
    const Step &s = p.steps.front();
    return s.isPointer ? (int)ActionKind::Interchange : (int)s.action.kind;
  };
  std::vector<Partial> kept;
  std::vector<bool> taken(partials.size(), false);
  std::set<int> kinds;
  for (size_t i = 0; i < partials.size() && (int)kept.size() < k; ++i)
    if (kinds.insert(kindOf(partials[i])).second) {
      kept.push_back(partials[i]);
      taken[i] = true;
    }
  for (size_t i = 0; i < partials.size() && (int)kept.size() < k; ++i)
    if (!taken[i])
      kept.push_back(partials[i]);
  partials = std::move(kept);
}

/// The root's actions as text (its recorded history and rule choices).
std::string rootText(Scheduler &s, int64_t rootId) {
  ExplicitSchedule one;
  one.entries.push_back({std::nullopt, s.getRecord(rootId)->state.history});
  one.entries.back().choices = s.getRecord(rootId)->choices;
  return formatSchedule(one);
}

/// The root's rule choices other than the defaults worth a measurement:
/// each choice's other values (the register tile's rows: none, and half
/// and a quarter of the default), one choice changed at a time, at most
/// `limit`.
std::vector<RuleChoices> getChoiceVariants(const RuleChoiceMask &mask,
                                           int limit) {
  std::vector<RuleChoices> out;
  for (int c = 0; c < kNumRuleChoices && (int)out.size() < limit; ++c) {
    const std::vector<int64_t> &values = mask[c];
    if (values.size() < 2)
      continue;
    std::vector<int64_t> tried;
    if (static_cast<RuleChoice>(c) == RuleChoice::RegisterRows) {
      int64_t top = values.back();
      for (int64_t v : {int64_t(0), top / 2, top / 4})
        if (llvm::is_contained(values, v) && v != top &&
            !llvm::is_contained(tried, v))
          tried.push_back(v);
    } else {
      tried.assign(values.begin(), values.end() - 1);
    }
    for (int64_t v : tried) {
      if ((int)out.size() >= limit)
        break;
      RuleChoices one;
      one.values[c] = v;
      out.push_back(one);
    }
  }
  return out;
}
} // namespace

FailureOr<std::vector<Proposal>>
proposeSchedules(ModuleOp unit, int64_t rootId, PolicyFn policy,
                 const ActionSpaceConfig &config, int k,
                 const Rescheduling &rules, std::string &error) {
  std::vector<Proposal> out;
  PolicyRunOptions greedy;
  // Completes a replay: the unit's other ops by the policy, greedily.
  // `choices`: the root's rule choices (a variant of the greedy schedule's).
  auto complete = [&](Replay &r, double logProb,
                      const RuleChoices &choices = {}) -> LogicalResult {
    PolicyStats stats;
    std::mt19937_64 rng(0);
    for (int64_t id : r.scheduler->getTraversalOrder())
      if (failed(r.scheduler->scheduleOpWithPolicy(id, policy, greedy, rng,
                                                   stats, error)))
        return failure();
    std::string refused;
    if (!choices.empty() && r.scheduler->setChoices(rootId, choices, refused) !=
                                ApplyStatus::Applied)
      return success(); // not offered after all: no candidate
    Proposal p;
    p.rootActions = rootText(*r.scheduler, rootId);
    // Measured as it ships: through the rules.
    (void)r.pipeline->applyRules(rules, policy);
    p.unitSchedule = r.pipeline->getTrace();
    p.logProb = logProb;
    for (const Proposal &q : out)
      // A choice that changes nothing is not measured again.
      if (q.rootActions == p.rootActions ||
          (!choices.empty() && q.unitSchedule == p.unitSchedule))
        return success();
    out.push_back(std::move(p));
    return success();
  };

  // The greedy schedule, as the pass without search would apply it.
  {
    std::unique_ptr<Replay> r = replay(unit, rootId, config, rules, {});
    if (!r || !r->scheduler->getRecord(rootId)) {
      error = "the unit has no op " + std::to_string(rootId);
      return failure();
    }
    RuleChoiceMask mask = r->pipeline->getRuleChoiceMask(rootId);
    if (failed(complete(*r, 0)))
      return failure();
    // The greedy decisions under the rules' other choices (up to half the
    // budget): what the policy does not decide, the search does.
    for (const RuleChoices &variant : getChoiceVariants(mask, k / 2)) {
      std::unique_ptr<Replay> v = replay(unit, rootId, config, rules, {});
      if (v && failed(complete(*v, 0, variant)))
        return failure();
    }
  }

  // The heuristic's decisions for the root (DecisionSource.h), the unit's
  // other ops by the policy: the non-learned default is always measured,
  // so that search keeps the better of the two where the policy is wrong.
  if ((int)out.size() < k) {
    std::unique_ptr<Replay> r = replay(unit, rootId, config, rules, {});
    if (r) {
      auto heuristic = [&](ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                           PolicyLogits &logits,
                           std::string &why) -> LogicalResult {
        return computeDecisionLogits(DecisionSource::Heuristic, config.layout,
                                     /*policy=*/nullptr, obs, mask, logits,
                                     why);
      };
      PolicyStats stats;
      std::mt19937_64 rng(0);
      if (failed(r->scheduler->scheduleOpWithPolicy(rootId, heuristic, greedy,
                                                    rng, stats, error)) ||
          failed(complete(*r, 0)))
        return failure();
    }
  }

  // The beam: partial schedules of the root, most likely first.
  struct Partial {
    std::vector<Step> steps;
    double logProb = 0;
  };
  std::vector<Partial> beam = {Partial{}};
  std::vector<Partial> finished;
  const int maxSteps = config.layout.getMaxStepsPerOp();
  for (int depth = 0; depth < maxSteps && !beam.empty(); ++depth) {
    std::vector<Partial> next;
    for (const Partial &p : beam) {
      std::unique_ptr<Replay> r = replay(unit, rootId, config, rules, p.steps);
      if (!r)
        continue;
      Scheduler &s = *r->scheduler;
      const OpRecord *rec = s.getRecord(rootId);
      if (rec->state.done) {
        finished.push_back(p);
        continue;
      }
      linalg::LinalgOp op = s.lookup(rootId);
      if (!op)
        continue;
      std::vector<float> obs = s.getObservation(rootId);
      bool hasProducer = s.hasFusableProducer(rootId);
      ActionMasks masks =
          computeActionMasks(op, rec->state, hasProducer, config);
      PolicyLogits logits;
      if (failed(policy(obs, masks.flatten(), logits, error)))
        return failure();
      // Every kind's most likely step at the first decision (diversity).
      int limit = depth == 0 ? -1 : k;
      for (const RankedStep &alt : rankSteps(op, rec->state, hasProducer,
                                             masks, logits, config, limit)) {
        Partial q = p;
        q.steps.push_back(alt.step);
        q.logProb += alt.logProb;
        next.push_back(std::move(q));
      }
    }
    keepDiverse(next, k);
    beam = std::move(next);
  }
  // Ops still open at the step limit end with NT (as the pass ends them).
  for (const Partial &p : beam)
    finished.push_back(p);
  keepDiverse(finished, (int)finished.size());
  for (const Partial &p : finished) {
    if ((int)out.size() >= k)
      break;
    std::unique_ptr<Replay> r = replay(unit, rootId, config, rules, p.steps);
    if (!r)
      continue;
    std::string ignored;
    if (!r->scheduler->getRecord(rootId)->state.done)
      (void)r->scheduler->apply(
          rootId, Action{ActionKind::NoTransformation, {}}, ignored);
    if (failed(complete(*r, p.logProb)))
      return failure();
  }
  // NT for the root; the unit's other ops as the policy schedules them.
  std::unique_ptr<Replay> nt = replay(
      unit, rootId, config, rules,
      {Step{false, -1, Action{ActionKind::NoTransformation, {}}}});
  if (nt && failed(complete(*nt, -INFINITY)))
    return failure();
  return out;
}

} // namespace mlir::rl
