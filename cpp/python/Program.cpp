//===- Program.cpp - The bindings facade: a module under scheduling -------===//
#include "Program.h"
#include "llvm/Support/FileSystem.h"

#include "mlir-rl/ActionSpace/Decoding.h"
#include "mlir-rl/Analysis/Features.h"
#include "mlir-rl/ActionSpace/ScheduleText.h"
#include "mlir-rl/Pipeline/Registration.h"
#include "mlir-rl/Pipeline/SchedulePipeline.h"
#include "mlir-rl/Policy/DecisionSource.h"
#include "mlir-rl/Policy/OnnxPolicy.h"
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Scheduler.h"
#include "mlir-rl/Tuning/OpUnit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <random>

namespace mlir::rl {

namespace {
/// Policies are loaded once per process and shared by all Programs (an
/// environment creates many), as the pass keeps one per pass instance.
std::mutex &getPoliciesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::pair<std::string, std::string>, std::unique_ptr<OnnxPolicy>> &
getPolicies() {
  static std::map<std::pair<std::string, std::string>,
                  std::unique_ptr<OnnxPolicy>>
      policies;
  return policies;
}

OnnxPolicy *getSharedPolicy(const std::string &model, const std::string &ortLib,
                            std::string &error) {
  std::lock_guard<std::mutex> lock(getPoliciesMutex());
  auto &policies = getPolicies();
  auto key = std::make_pair(model, ortLib);
  auto it = policies.find(key);
  if (it != policies.end())
    return it->second.get();
  std::unique_ptr<OnnxPolicy> p =
      OnnxPolicy::load(model, ortLib, FeatureLayout::getDefault(), error);
  if (!p)
    return nullptr;
  return (policies[key] = std::move(p)).get();
}

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  auto ctx = std::make_unique<MLIRContext>(registry,
                                           MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

/// Collects error diagnostics as "loc: message" lines.
class DiagnosticCollector {
public:
  DiagnosticCollector(MLIRContext *ctx, std::string &out)
      : os(out), handler(ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            os << d.getLocation() << ": " << d.str() << "\n";
          return success();
        }) {}

private:
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

std::vector<int> flattenIndices(const StepIndices &s) {
  std::vector<int> out{s.kind};
  out.insert(out.end(), s.tiles.begin(), s.tiles.end());
  out.push_back(s.pointer);
  return out;
}

StepIndices unflattenIndices(const std::vector<int> &flat) {
  StepIndices s;
  if (flat.size() < 2)
    return s;
  s.kind = flat.front();
  s.tiles.assign(flat.begin() + 1, flat.end() - 1);
  s.pointer = flat.back();
  return s;
}

/// (key, value) pairs as RuleChoices; the grammar's own parser checks keys
/// and values. None set for no pairs; nothing, with `error`, when malformed.
std::optional<RuleChoices>
toRuleChoices(const std::vector<std::pair<std::string, int64_t>> &pairs,
              std::string &error) {
  std::string text;
  for (const auto &[key, value] : pairs)
    text += (text.empty() ? "{" : ",") + key + "=" + std::to_string(value);
  if (text.empty())
    return RuleChoices();
  return parseRuleChoices(text + "}", error);
}

OwningOpRef<ModuleOp> cloneWithoutTags(ModuleOp module) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  copy->walk([](Operation *op) { op->removeAttr(kOpIdAttrName); });
  (*copy)->removeAttr(kFrontEndAttrName);
  return copy;
}
} // namespace

struct Program::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  /// The pipeline on `module` (SchedulePipeline.h): front end, decisions,
  /// rules, as the pass runs them.
  std::unique_ptr<SchedulePipeline> pipeline;
  bool frontEndRan = false;
  int64_t injectFailureAt = -1;

  Scheduler &sched() { return pipeline->getScheduler(); }
  const Scheduler &sched() const { return pipeline->getScheduler(); }
  ModuleOp mod() const { return pipeline->getModule(); }

  /// Stage 1 (before the first decision; once): the front end's stages
  /// `settings` enables (op ids renumbered).
  bool runFrontEnd(const PipelineSettings &settings, std::string &error) {
    if (frontEndRan || sched().hasApplied())
      return true;
    frontEndRan = true;
    DiagnosticCollector collect(context.get(), error);
    PipelineOptions options = toOptions(settings);
    pipeline->setRules(options.rules);
    if (failed(pipeline->runFrontEnd(options.frontEnd,
                                     getPassManagerRunner(mod(), error),
                                     error)))
      return false;
    // The scheduler is new: a test's failure injection carries over.
    if (injectFailureAt >= 0)
      sched().setFailureInjection(injectFailureAt);
    return true;
  }

  ApplyStatus run(const PolicyFn &policy, bool sample, uint64_t seed,
                  PolicyRunInfo &info, std::string &error,
                  const StepObserver &onStep) {
    PolicyRunOptions options;
    options.sample = sample;
    options.seed = seed;
    options.onStep = onStep;
    PolicyStats stats;
    DiagnosticCollector collect(context.get(), error);
    if (failed(pipeline->decide(policy, options, stats, error)))
      return ApplyStatus::Illegal;
    info.ops = stats.ops;
    info.inferences = stats.inferences;
    info.inferenceSeconds = stats.inferenceSeconds;
    info.applications = stats.applications;
    info.applySeconds = stats.applySeconds;
    info.warnings = stats.warnings;
    return ApplyStatus::Applied;
  }

  /// Stage 3: the rules `settings` enables; the copies of right-hand
  /// sides with no rule by `policy`.
  void applyRules(const PipelineSettings &settings, PolicyFn policy,
                  PolicyRunInfo &info) {
    pipeline->setRules(toOptions(settings).rules);
    RulesOutcome rules =
        pipeline->applyRules(toOptions(settings).rules, policy);
    info.packed = rules.packed;
    info.registerTiled = rules.registerTiled;
    info.copiesByRule = rules.copiesByRule;
    info.notRescheduled = rules.why;
    if (rules.applied)
      // The copies of B are ops too.
      info.ops = sched().getTraversalOrder().size();
  }

  static PipelineOptions toOptions(const PipelineSettings &s) {
    PipelineOptions o;
    o.frontEnd.computeInF32 = s.computeInF32;
    o.frontEnd.bf16Dot = s.bf16Dot;
    o.frontEnd.fuseElementwise = s.fuseElementwise;
    o.frontEnd.rewriteWindows = s.rewriteWindows;
    o.frontEnd.padToTiles = s.padToTiles;
    o.frontEnd.flattenElementwise = s.flattenElementwise;
    o.rules.pack = s.packRhs;
    o.rules.minRowsToCopy = s.minRowsToCopy;
    o.rules.registerTiles = s.registerTiles;
    o.rules.copies = s.copiesByRule;
    return o;
  }
};

PipelineSettings getDefaultPipelineSettings() {
  PipelineOptions o;
  PipelineSettings s;
  s.computeInF32 = o.frontEnd.computeInF32;
  s.bf16Dot = o.frontEnd.bf16Dot;
  s.fuseElementwise = o.frontEnd.fuseElementwise;
  s.rewriteWindows = o.frontEnd.rewriteWindows;
  s.padToTiles = o.frontEnd.padToTiles;
  s.flattenElementwise = o.frontEnd.flattenElementwise;
  s.packRhs = o.rules.pack;
  s.minRowsToCopy = o.rules.minRowsToCopy;
  s.registerTiles = o.rules.registerTiles;
  s.copiesByRule = o.rules.copies;
  return s;
}

PipelineSettings getNoPipelineSettings() {
  PipelineSettings s = getDefaultPipelineSettings();
  s.computeInF32 = s.bf16Dot = s.fuseElementwise = s.rewriteWindows = false;
  s.padToTiles = false;
  s.flattenElementwise = s.packRhs = s.registerTiles = s.copiesByRule = false;
  return s;
}

/// `text` parsed as a module that verifies (null: `error` has the
/// diagnostics).
static OwningOpRef<ModuleOp> parseVerified(MLIRContext *ctx,
                                           llvm::StringRef text,
                                           const std::string &bufferName,
                                           std::string &error) {
  DiagnosticCollector collect(ctx, error);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(ctx), bufferName);
  if (!module || failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

Program::Program(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::parse(const std::string &text,
                                        const std::string &bufferName,
                                        std::string &error) {
  registerAllPassesOnce();
  auto impl = std::make_unique<Impl>();
  impl->context = createContext();
  impl->module = parseVerified(impl->context.get(), text, bufferName, error);
  if (!impl->module)
    return nullptr;
  impl->pipeline = std::make_unique<SchedulePipeline>(*impl->module);
  impl->sched();
  return std::unique_ptr<Program>(new Program(std::move(impl)));
}

std::vector<OpInfo> Program::getOps() const {
  std::vector<OpInfo> out;
  for (const OpRecord &r : impl->sched().getOps()) {
    out.push_back(OpInfo{r.id, r.name, getOpKindName(r.kind), r.function,
                         r.supported, r.reason, r.producerId, r.consumerIds,
                         r.loopBounds, r.iterators, r.state.history,
                         r.supported ? r.state.getPhase()
                                     : DecisionPhase::Done,
                         {}, {}});
    if (linalg::LinalgOp op = impl->sched().lookup(r.id)) {
      int64_t iterations = 1;
      for (int64_t b : op.getStaticLoopRanges())
        iterations = ShapedType::isDynamic(b) ? 0 : iterations * b;
      out.back().flops = iterations * countArithmeticPerIteration(op);
      for (AffineMap m : op.getIndexingMapsArray()) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "affine_map<" << m << ">";
        out.back().indexingMaps.push_back(text);
      }
      for (Value v : op->getOperands()) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << v.getType();
        out.back().operandTypes.push_back(text);
      }
    }
  }
  return out;
}

std::vector<int64_t> Program::getTraversalOrder() const {
  return impl->sched().getTraversalOrder();
}

int64_t Program::getNextOp() const { return impl->sched().getNextOp(); }

int64_t Program::getStepBudget() const {
  return impl->sched().getStepBudget();
}

bool Program::hasOp(int64_t id) const {
  return impl->sched().getRecord(id) != nullptr;
}

std::vector<float> Program::getObservation(int64_t id) {
  return impl->sched().getObservation(id);
}

std::vector<float> Program::getOpFeatures(int64_t id) {
  return impl->sched().getOpFeatures(id);
}

bool Program::getOpUnit(int64_t id, std::string &out, std::string &error) {
  DiagnosticCollector collect(impl->context.get(), error);
  FailureOr<OpUnit> unit = extractOpUnit(impl->sched(), id, error);
  if (failed(unit))
    return false;
  out = unit->text;
  return true;
}

MaskInfo Program::getMasks(int64_t id) {
  ActionMasks m = impl->sched().getMasks(id);
  return MaskInfo{m.phase, m.kind, m.tile, m.pointer, m.unsplit};
}

StepStatus Program::apply(int64_t id, const Action &action,
                          std::string &message) {
  DiagnosticCollector collect(impl->context.get(), message);
  impl->sched().setSource("explicit");
  return (StepStatus)impl->sched().apply(id, action, message);
}

StepStatus Program::applyPointer(int64_t id, int64_t loop,
                                 std::string &message) {
  DiagnosticCollector collect(impl->context.get(), message);
  impl->sched().setSource("explicit");
  return (StepStatus)impl->sched().applyPointer(id, loop, message);
}

StepStatus Program::applySchedule(const std::string &text,
                                  std::string &message) {
  std::optional<ExplicitSchedule> schedule = parseSchedule(text, message);
  if (!schedule) {
    message = "malformed schedule '" + text + "': " + message;
    return StepStatus::Illegal;
  }
  DiagnosticCollector collect(impl->context.get(), message);
  // A trace's passes run first (unless they ran already).
  return (StepStatus)applyTrace(*impl->pipeline, *schedule,
                                getPassManagerRunner(impl->mod(), message),
                                message);
}

StepOutcome Program::step(int64_t id, const std::vector<int> &indices) {
  const FeatureLayout &layout = impl->sched().getLayout();
  StepOutcome out{StepStatus::Illegal, Step{}, {}, false, ""};
  StepIndices chosen = unflattenIndices(indices);
  if (failed(checkIndicesShape(chosen, layout, out.message)))
    return out;
  FailureOr<Step> decoded = impl->sched().decode(
      id, getIndicatorLogits(chosen, layout), nullptr, out.message);
  if (failed(decoded))
    return out;
  out.step = *decoded;
  StepIndices executed = encodeStep(*decoded, layout);
  out.indices = flattenIndices(executed);
  // Did the chosen indices stand as given? Only what the step reads counts.
  const OpRecord *rec = impl->sched().getRecord(id);
  if (decoded->isPointer) {
    out.fallback = executed.pointer != chosen.pointer ||
                   (!rec->state.inInterchange() && chosen.kind != executed.kind);
  } else {
    out.fallback = executed.kind != chosen.kind;
    if (!out.fallback && decoded->action.isTiled())
      for (size_t l = 0; l < decoded->action.sizes.size(); ++l)
        out.fallback |= executed.tiles[l] != chosen.tiles[l];
  }
  DiagnosticCollector collect(impl->context.get(), out.message);
  impl->sched().setSource("environment");
  out.status = (StepStatus)impl->sched().applyStep(id, *decoded,
                                                     out.message);
  return out;
}

bool Program::decode(int64_t id, const std::vector<float> &kind,
                     const std::vector<float> &tile,
                     const std::vector<float> &pointer, bool sample,
                     uint64_t seed, Step &step, std::string &error) {
  std::mt19937_64 rng(seed);
  FailureOr<Step> decoded = impl->sched().decode(
      id, PolicyLogits{kind, tile, pointer}, sample ? &rng : nullptr, error);
  if (failed(decoded))
    return false;
  step = *decoded;
  return true;
}

std::vector<int> Program::encode(const Step &step) const {
  return flattenIndices(encodeStep(step, impl->sched().getLayout()));
}

bool Program::demonstrate(const std::string &text,
                          std::vector<DemonstrationStep> &steps,
                          std::string &error) {
  std::optional<ExplicitSchedule> schedule = parseSchedule(text, error);
  if (!schedule) {
    error = "malformed schedule '" + text + "': " + error;
    return false;
  }
  if (schedule->hasPrelude &&
      schedule->prelude != formatPassSteps(impl->pipeline->getPrelude())) {
    error = "a demonstration is of decisions: the trace's passes [" +
            schedule->prelude + "] are not those that ran on this module [" +
            formatPassSteps(impl->pipeline->getPrelude()) + "]";
    return false;
  }
  Scheduler &s = impl->sched();
  std::vector<int64_t> order = s.getTraversalOrder();
  std::map<int64_t, std::vector<Action>> perOp;
  for (const ExplicitSchedule::Entry &e : schedule->entries) {
    if (!e.opId && order.empty())
      continue;
    int64_t id = e.opId ? *e.opId : order.front();
    auto &list = perOp[id];
    list.insert(list.end(), e.actions.begin(), e.actions.end());
  }
  DiagnosticCollector collect(impl->context.get(), error);
  auto record = [&](int64_t id, const Step &step) {
    ActionMasks masks = s.getMasks(id);
    steps.push_back(DemonstrationStep{id, s.getRecord(id)->state.getPhase(),
                                      s.getObservation(id), masks.flatten(),
                                      masks.unsplit, encode(step)});
  };
  for (int64_t id : order) {
    std::vector<Action> actions = perOp[id];
    actions.push_back(Action{ActionKind::NoTransformation, {}});
    for (const Action &a : actions) {
      if (s.getRecord(id)->state.done)
        break;
      std::string message;
      ApplyStatus status = ApplyStatus::Applied;
      if (a.info().params == ActionParams::Permutation) {
        for (int64_t loop : a.sizes) {
          Step pointer{true, loop, {}};
          record(id, pointer);
          status = s.applyPointer(id, loop, message);
          if (status == ApplyStatus::Illegal)
            break;
        }
      } else {
        record(id, Step{false, -1, a});
        status = s.apply(id, a, message);
      }
      if (status == ApplyStatus::Illegal) {
        error = "the demonstration's " + a.str() + " on op " +
                std::to_string(id) + " is illegal: " + message;
        return false;
      }
    }
  }
  return true;
}

/// A decision source as a PolicyFn's callable: the shared ONNX policy, the
/// heuristic's or uniform logits (DecisionSource.h).
struct DecisionLogits {
  DecisionSource source = DecisionSource::Policy;
  FeatureLayout layout;
  OnnxPolicy *policy = nullptr;

  LogicalResult operator()(ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                           PolicyLogits &logits, std::string &err) const {
    return computeDecisionLogits(source, layout, policy, obs, mask, logits,
                                 err);
  }
};

/// The decision source `decisions` ("policy": the shared ONNX policy at
/// `model`); nothing, with `error` set, when it is unknown or cannot load.
static std::optional<DecisionLogits>
getDecisionLogits(const std::string &decisions, const std::string &model,
                  const std::string &ortLib, std::string &error) {
  std::optional<DecisionSource> parsed = parseDecisionSource(decisions);
  if (!parsed) {
    error = "unknown decisions '" + decisions + "' (valid: " +
            getDecisionSourceNames() + ")";
    return std::nullopt;
  }
  DecisionLogits out{*parsed, FeatureLayout::getDefault(), nullptr};
  if (out.source == DecisionSource::Policy &&
      !(out.policy = getSharedPolicy(model, ortLib, error)))
    return std::nullopt;
  return out;
}

bool Program::runFrontEnd(const PipelineSettings &settings,
                          std::string &error) {
  return impl->runFrontEnd(settings, error);
}

bool Program::applyRules(const PipelineSettings &settings,
                         const std::string &decisions,
                         const std::string &model, const std::string &ortLib,
                         PolicyRunInfo &info, std::string &error) {
  std::optional<DecisionLogits> run =
      getDecisionLogits(decisions, model, ortLib, error);
  if (!run)
    return false;
  DiagnosticCollector collect(impl->context.get(), error);
  impl->applyRules(settings, *run, info);
  return true;
}

bool Program::hasAppliedRules() const {
  return impl->pipeline->hasAppliedRules();
}

bool Program::scheduleWithPolicy(const std::string &model,
                                 const std::string &ortLib, bool sample,
                                 uint64_t seed, PolicyRunInfo &info,
                                 std::string &error,
                                 const StepObserver &onStep,
                                 const PipelineSettings &settings,
                                 const std::string &decisions) {
  std::optional<DecisionLogits> decide =
      getDecisionLogits(decisions, model, ortLib, error);
  if (!decide || !impl->runFrontEnd(settings, error))
    return false;
  const DecisionLogits &run = *decide;
  DecisionSource source = run.source;
  OnnxPolicy *policy = run.policy;
  // As the pass: random decisions are uniform logits, sampled.
  impl->sched().setSource(decisions + (sample && source == DecisionSource::Policy
                                           ? ", sampled"
                                           : ""));
  sample = sample || source == DecisionSource::Random;
  int64_t hits = policy ? policy->getNumMemoHits() : 0;
  bool ok = impl->run(run, sample, seed, info, error, onStep) ==
            ApplyStatus::Applied;
  info.memoHits = policy ? policy->getNumMemoHits() - hits : 0;
  // As the pass: random decisions draw the rules' choices too -- under the
  // shipped rules when these are off (decisions measured through the
  // pipeline later: rules=False).
  if (ok && source == DecisionSource::Random) {
    PipelineOptions options = Impl::toOptions(settings);
    impl->pipeline->setRules(options.hasRules() ? options.rules
                                                : PipelineOptions().rules);
    impl->pipeline->drawRuleChoices(seed);
  }
  if (ok)
    impl->applyRules(settings, run, info);
  return ok;
}

bool Program::scheduleWithLogits(const LogitsFn &policy, bool sample,
                                 uint64_t seed, PolicyRunInfo &info,
                                 std::string &error,
                                 const StepObserver &onStep,
                                 const PipelineSettings &settings) {
  if (!impl->runFrontEnd(settings, error))
    return false;
  auto run = [&](ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                 PolicyLogits &logits, std::string &err) {
    std::vector<float> o(obs.begin(), obs.end());
    std::vector<uint8_t> m(mask.begin(), mask.end());
    return success(policy(o, m, logits.kind, logits.tile, logits.pointer, err));
  };
  impl->sched().setSource(sample ? "caller's policy, sampled"
                                 : "caller's policy");
  bool ok = impl->run(run, sample, seed, info, error, onStep) ==
            ApplyStatus::Applied;
  if (ok)
    impl->applyRules(settings, run, info);
  return ok;
}

bool Program::getPolicyLogits(const std::string &model,
                              const std::string &ortLib, int64_t id,
                              std::vector<float> &kind,
                              std::vector<float> &tile,
                              std::vector<float> &pointer,
                              std::string &error) {
  OnnxPolicy *policy = getSharedPolicy(model, ortLib, error);
  if (!policy)
    return false;
  PolicyLogits logits;
  std::vector<float> obs = impl->sched().getObservation(id);
  std::vector<uint8_t> mask = impl->sched().getMasks(id).flatten();
  if (failed(policy->run(obs, mask, logits, error)))
    return false;
  kind = std::move(logits.kind);
  tile = std::move(logits.tile);
  pointer = std::move(logits.pointer);
  return true;
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
Program::getRuleChoiceMask(int64_t id) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  RuleChoiceMask mask = impl->pipeline->getRuleChoiceMask(id);
  for (const RuleChoiceInfo &c : kRuleChoices)
    if (!mask[static_cast<int>(c.kind)].empty())
      out.emplace_back(c.key, mask[static_cast<int>(c.kind)]);
  return out;
}

StepStatus Program::setRuleChoices(
    int64_t id, const std::vector<std::pair<std::string, int64_t>> &choices,
    std::string &message) {
  std::optional<RuleChoices> parsed = toRuleChoices(choices, message);
  if (!parsed)
    return StepStatus::Illegal;
  if (parsed->empty())
    return StepStatus::Applied;
  return (StepStatus)impl->sched().setChoices(id, *parsed, message);
}

std::vector<std::tuple<int64_t, std::string, int64_t>>
Program::getRuleChoices() const {
  std::vector<std::tuple<int64_t, std::string, int64_t>> out;
  for (const OpRecord &rec : impl->sched().getOps())
    for (const RuleChoiceInfo &c : kRuleChoices)
      if (rec.choices.isSet(c.kind))
        out.emplace_back(rec.id, c.key, rec.choices.get(c.kind));
  return out;
}

void Program::drawRuleChoices(uint64_t seed) {
  impl->pipeline->setRules(PipelineOptions().rules);
  impl->pipeline->drawRuleChoices(seed);
}

std::string Program::getScheduleText() const {
  return impl->pipeline->getTrace();
}

std::vector<std::tuple<int64_t, std::string, std::string>>
Program::getProvenance() const {
  std::vector<std::tuple<int64_t, std::string, std::string>> out;
  const Scheduler &s = impl->sched();
  for (int64_t id : s.getTraversalOrder()) {
    const OpRecord *rec = s.getRecord(id);
    for (size_t i = 0; i < rec->state.history.size(); ++i)
      out.emplace_back(id, rec->state.history[i].str(),
                       i < rec->sources.size() ? rec->sources[i] : "");
  }
  return out;
}

std::string Program::getDecisionText() const {
  return impl->sched().getScheduleText();
}

std::string Program::getTransformScript() const {
  return impl->sched().getTransformScript();
}

std::string Program::str(bool withTags) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (withTags) {
    impl->mod()->print(os);
  } else {
    OwningOpRef<ModuleOp> copy = cloneWithoutTags(impl->mod());
    copy->print(os);
  }
  return out;
}

void Program::injectFailure(int64_t n) {
  impl->injectFailureAt = n;
  impl->sched().setFailureInjection(n);
}

bool Program::verify(std::string &error) const {
  DiagnosticCollector collect(impl->context.get(), error);
  return succeeded(mlir::verify(impl->mod()));
}

bool Program::getLowered(std::string &out, std::string &error) const {
  OwningOpRef<ModuleOp> copy = cloneWithoutTags(impl->mod());
  if (failed(lowerToLLVM(*copy, error)))
    return false;
  llvm::raw_string_ostream os(out);
  copy->print(os);
  return true;
}

FunctionSignature Program::getSignature(const std::string &function,
                                        std::string &error) const {
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(impl->mod(), function, error);
  return succeeded(sig) ? *sig : FunctionSignature{};
}

bool Program::time(const TimingOptions &options, TimingResult &result,
                   std::string &error) const {
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(impl->mod(), options.function, error);
  if (failed(sig))
    return false;
  OwningOpRef<ModuleOp> copy = cloneWithoutTags(impl->mod());
  // Only the module's own functions are the JIT's entry points; nested
  // modules (not translatable to one LLVM module) are left out of the copy.
  for (ModuleOp nested :
       llvm::make_early_inc_range(copy->getBody()->getOps<ModuleOp>()))
    nested.erase();
  if (failed(lowerToLLVM(*copy, error)))
    return false;
  FailureOr<TimingResult> timing = timeFunction(*copy, *sig, options, error);
  if (failed(timing))
    return false;
  result = std::move(*timing);
  return true;
}

LayoutInfo getLayoutInfo() {
  const FeatureLayout &l = FeatureLayout::getDefault();
  LayoutInfo info;
  info.sizes = {
      {"max_loops", l.maxLoops},
      {"num_tile_sizes", l.numTileSizes},
      {"max_rank", l.maxRank},
      {"max_operands", l.maxOperands},
      {"history_length", l.historyLength},
      {"num_op_kinds", kNumOpKinds},
      {"num_actions", kNumActionKinds},
      {"num_tiled_kinds", kNumTiledKinds},
      {"num_arith_counts", kNumArithCounts},
      {"op_feature_size", l.getOpFeatureSize()},
      {"observation_size", l.getObservationSize()},
      {"op_kind_offset", l.getOpKindOffset()},
      {"loop_bounds_offset", l.getLoopBoundsOffset()},
      {"iterators_offset", l.getIteratorsOffset()},
      {"vectorizable_offset", l.getVectorizableOffset()},
      {"access_offset", l.getAccessOffset()},
      {"arith_offset", l.getArithOffset()},
      {"tile_history_offset", l.getTileHistoryOffset()},
      {"interchange_history_offset", l.getInterchangeHistoryOffset()},
      {"action_history_offset", l.getActionHistoryOffset()},
      {"kind_mask_size", l.getKindMaskSize()},
      {"tile_mask_size", l.getTileMaskSize()},
      {"pointer_mask_size", l.getPointerMaskSize()},
      {"mask_size", l.getMaskSize()},
      {"max_steps_per_op", l.getMaxStepsPerOp()},
  };
  info.tileCandidates = l.tileCandidates;
  for (int k = 0; k < kNumOpKinds; ++k)
    info.opKinds.push_back(getOpKindName((OpKind)k));
  info.hash = l.getHash();
  info.description = l.getDescription();
  return info;
}

LegalityInfo getLegalityInfo() {
  const LegalityConfig &c = LegalityConfig::getDefault();
  return LegalityInfo{{{"max_vector_innermost", c.maxVectorInnermost},
                       {"max_vector_elements", c.maxVectorElements},
                       {"max_vector_rows", c.maxVectorRows},
                       {"max_strided_row_reads", c.maxStridedRowReads},
                       {"max_partial_vector_pieces", c.maxPartialVectorPieces},
                       {"vector_registers", c.vectorRegisters},
                       {"vector_register_bits", c.vectorRegisterBits}},
                      c.getHash(),
                      c.getDescription()};
}

bool parseScheduleText(const std::string &text,
                       std::vector<ScheduleEntryText> &out,
                       std::string &error,
                       std::optional<std::string> *prelude) {
  std::optional<ExplicitSchedule> s = parseSchedule(text, error);
  if (!s)
    return false;
  if (prelude)
    *prelude = s->hasPrelude ? std::optional<std::string>(s->prelude)
                             : std::nullopt;
  for (ExplicitSchedule::Entry &e : s->entries) {
    std::vector<std::pair<std::string, int64_t>> choices;
    for (const RuleChoiceInfo &c : kRuleChoices)
      if (e.choices.isSet(c.kind))
        choices.emplace_back(c.key, e.choices.get(c.kind));
    out.emplace_back(e.opId, std::move(e.actions), std::move(choices));
  }
  return true;
}

std::optional<Action> parseActionText(const std::string &text,
                                      std::string &error) {
  return parseAction(text, error);
}

bool formatScheduleText(const std::vector<ScheduleEntryText> &entries,
                        std::string &out, std::string &error,
                        const std::optional<std::string> &prelude) {
  ExplicitSchedule s;
  if (prelude) {
    s.prelude = *prelude;
    s.hasPrelude = true;
  }
  for (const auto &[id, actions, choices] : entries) {
    s.entries.push_back({id, actions});
    std::optional<RuleChoices> parsed = toRuleChoices(choices, error);
    if (!parsed)
      return false;
    s.entries.back().choices = *parsed;
  }
  out = formatSchedule(s);
  return true;
}

std::string formatScheduleHeaderText(const std::string &schedule) {
  return formatScheduleHeader(schedule);
}

std::optional<std::string> readScheduleHeaderText(const std::string &text) {
  return readScheduleHeader(text);
}

void clearPolicyMemos() {
  std::lock_guard<std::mutex> lock(getPoliciesMutex());
  for (auto &entry : getPolicies())
    entry.second->clearMemo();
}

std::string getPolicyPriorKey() { return kPriorKey; }

bool computePriorLogitsBatch(const std::string &name, const float *observations,
                             size_t count, size_t size, std::vector<float> &kind,
                             std::vector<float> &tile,
                             std::vector<float> &pointer, std::string &error) {
  const FeatureLayout &layout = FeatureLayout::getDefault();
  if (size != (size_t)layout.getObservationSize()) {
    error = "observations have " + std::to_string(size) + " values each, not " +
            std::to_string(layout.getObservationSize());
    return false;
  }
  kind.clear();
  tile.clear();
  pointer.clear();
  for (size_t i = 0; i < count; ++i) {
    PolicyLogits one;
    if (failed(computePriorLogits(
            name, layout, ArrayRef<float>(observations + i * size, size), one,
            error)))
      return false;
    kind.insert(kind.end(), one.kind.begin(), one.kind.end());
    tile.insert(tile.end(), one.tile.begin(), one.tile.end());
    pointer.insert(pointer.end(), one.pointer.begin(), one.pointer.end());
  }
  return true;
}

std::vector<uint8_t> getTerminalMask() {
  return ActionMasks::onlyNoTransformation(FeatureLayout::getDefault())
      .flatten();
}

std::vector<std::string> getPolicyInputNames() {
  return {std::begin(kPolicyInputNames), std::end(kPolicyInputNames)};
}
std::vector<std::string> getPolicyOutputNames() {
  return {std::begin(kPolicyOutputNames), std::end(kPolicyOutputNames)};
}
std::string getPolicyLayoutHashKey() { return kLayoutHashKey; }

std::string getLoweringPipelineText() { return getLoweringPipeline(); }

std::string getPreparePipelineText() { return getPreparePipeline(); }

std::string getFrontEndStepsText() {
  return "builtin.module(" +
         formatPassSteps(getFrontEndSteps(FrontEndOptions())) + ")";
}

/// `text` parsed, rewritten in place by `rewrite`, printed into `out`.
static bool rewriteText(
    const std::string &text, const std::string &bufferName,
    function_ref<LogicalResult(ModuleOp, std::string &)> rewrite,
    std::string &out, std::string &error) {
  registerAllPassesOnce();
  std::unique_ptr<MLIRContext> context = createContext();
  OwningOpRef<ModuleOp> module =
      parseVerified(context.get(), text, bufferName, error);
  if (!module || failed(rewrite(*module, error)))
    return false;
  llvm::raw_string_ostream os(out);
  module->print(os);
  return true;
}

bool prepareText(const std::string &text, const std::string &bufferName,
                 std::string &out, std::string &error) {
  return rewriteText(text, bufferName, prepareModule, out, error);
}

bool prepareTextWith(const std::string &text, const std::string &bufferName,
                     const std::string &steps, std::string &out,
                     std::string &error) {
  return rewriteText(
      text, bufferName,
      [&](ModuleOp module, std::string &err) -> LogicalResult {
        if (module->hasAttr(kFrontEndAttrName))
          return success();
        // getFrontEndStepsText's form: the steps inside builtin.module(...).
        StringRef body = steps;
        if (!(body.consume_front("builtin.module(") && body.consume_back(")")))
          body = steps;
        std::vector<PassStep> parsed;
        if (failed(parsePassSteps(body, parsed, err)) ||
            failed(runPassSteps(module, parsed,
                                getPassManagerRunner(module, err), err)))
          return failure();
        module->setAttr(kFrontEndAttrName, UnitAttr::get(module.getContext()));
        return success();
      },
      out, error);
}

bool frontEndText(const std::string &text, const std::string &bufferName,
                  const PipelineSettings &settings, std::string &out,
                  std::string &error) {
  FrontEndOptions options;
  options.computeInF32 = settings.computeInF32;
  options.bf16Dot = settings.bf16Dot;
  options.fuseElementwise = settings.fuseElementwise;
  options.rewriteWindows = settings.rewriteWindows;
  options.padToTiles = settings.padToTiles;
  options.flattenElementwise = settings.flattenElementwise;
  return rewriteText(
      text, bufferName,
      [&](ModuleOp module, std::string &err) {
        std::vector<PassStep> ran;
        return applyFrontEnd(module, options,
                             getPassManagerRunner(module, err), ran, err);
      },
      out, error);
}

/// `text` up to its resource section (`{-#` at the start of a line:
/// dialect resources such as dense_resource blobs), all of it where it has
/// none. The printer writes the section last, and a `{-#` inside an
/// attribute's string is never at the start of a line (it prints newlines
/// escaped): the first one is the section's (searched from the front: the
/// section is most of a network's text).
static llvm::StringRef withoutResources(llvm::StringRef text) {
  size_t at = text.find("\n{-#");
  return at == llvm::StringRef::npos ? text : text.take_front(at + 1);
}

std::unique_ptr<JitFunction> compileTensorFunction(const std::string &text,
                                                   const std::string &function,
                                                   int threads,
                                                   std::string &error,
                                                   const std::string &objectPath) {
  registerAllPassesOnce();
  // The machine code of an earlier compile: no lowering, no code
  // generation, and the text parsed without its resources (an imported
  // network's weights: most of its text; ResNet-18's 94 MB took 0.4 s)
  // for the signature alone, in a context of its own (its resource
  // handles have no data). An object that does not load (truncated,
  // another LLVM's) is compiled again.
  if (!objectPath.empty() && llvm::sys::fs::exists(objectPath)) {
    std::unique_ptr<MLIRContext> headContext = createContext();
    std::string headError;
    if (OwningOpRef<ModuleOp> head =
            parseVerified(headContext.get(), withoutResources(text),
                          "<compiled>", headError)) {
      FailureOr<FunctionSignature> sig =
          getFunctionSignature(*head, function, error);
      if (failed(sig))
        return nullptr;
      std::string loadError;
      if (FailureOr<std::unique_ptr<JitFunction>> fn =
              JitFunction::load(objectPath, *sig, threads, loadError);
          succeeded(fn))
        return std::move(*fn);
      llvm::errs() << "mlir-rl: " << loadError << "; compiling again\n";
    }
  }
  std::unique_ptr<MLIRContext> context = createContext();
  OwningOpRef<ModuleOp> module =
      parseVerified(context.get(), text, "<compiled>", error);
  if (!module)
    return nullptr;
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(*module, function, error);
  if (failed(sig))
    return nullptr;
  for (ModuleOp nested :
       llvm::make_early_inc_range(module->getBody()->getOps<ModuleOp>()))
    nested.erase();
  markArgumentsReadOnly(*module);
  if (failed(lowerToLLVM(*module, error)))
    return nullptr;
  FailureOr<std::unique_ptr<JitFunction>> fn =
      JitFunction::compile(*module, *sig, threads, error, objectPath);
  if (failed(fn))
    return nullptr;
  return std::move(*fn);
}

std::string getDefaultModelPath() { return OnnxPolicy::getDefaultModelPath(); }

std::map<std::string, std::string> getPolicyInfo(const std::string &model,
                                                 const std::string &ortLib,
                                                 std::string &error) {
  OnnxPolicy *policy = getSharedPolicy(model, ortLib, error);
  if (!policy)
    return {};
  std::map<std::string, std::string> info = policy->getMetadata();
  info["model_path"] = policy->getModelPath();
  info["ort_library"] = policy->getLibraryPath();
  info["ort_version"] = policy->getLibraryVersion();
  return info;
}
std::string getDefaultOrtLibrary() {
  return OnnxPolicy::getDefaultLibraryPath();
}

} // namespace mlir::rl
