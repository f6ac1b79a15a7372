//===- Program.cpp - A linalg module under scheduling, for bindings --------===//
#include "mlir-rl/Program.h"
#include "mlir-rl/Features.h"
#include "mlir-rl/Lowering.h"
#include "mlir-rl/OnnxPolicy.h"
#include "mlir-rl/Passes.h"
#include "mlir-rl/Scheduler.h"

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

struct Program::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<Scheduler> scheduler;
  /// Policies are loaded once per process and shared by all Programs (an
  /// environment creates many), as the pass keeps one per pass instance.
  OnnxPolicy *getPolicy(const std::string &model, const std::string &ortLib,
                        std::string &error) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>,
                    std::unique_ptr<OnnxPolicy>>
        policies;
    std::lock_guard<std::mutex> lock(mutex);
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
};

static std::unique_ptr<MLIRContext> createContext() {
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

Program::Program(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::parse(const std::string &text,
                                        const std::string &bufferName,
                                        std::string &error) {
  registerAllPassesOnce();
  auto impl = std::make_unique<Impl>();
  impl->context = createContext();
  {
    DiagnosticCollector collect(impl->context.get(), error);
    impl->module = parseSourceString<ModuleOp>(
        text, ParserConfig(impl->context.get()), bufferName);
    if (!impl->module)
      return nullptr;
    if (failed(verify(*impl->module)))
      return nullptr;
  }
  impl->scheduler = std::make_unique<Scheduler>(*impl->module,
                                                FeatureLayout::getDefault());
  impl->scheduler->initialize();
  return std::unique_ptr<Program>(new Program(std::move(impl)));
}

std::vector<OpInfo> Program::getOps() const {
  std::vector<OpInfo> out;
  for (const OpRecord &r : impl->scheduler->getOps()) {
    OpInfo info{r.id,         r.name,       getOpKindName(r.kind),
                r.function,   r.supported,  r.reason,
                r.producerId, r.consumerIds, r.loopBounds,
                r.iterators,  {},           r.state.done,
                r.state.inInterchange()};
    for (const Action &a : r.state.history)
      info.history.push_back(a.str());
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<int64_t> Program::getTraversalOrder() const {
  return impl->scheduler->getTraversalOrder();
}

std::vector<float> Program::getObservation(int64_t id) {
  return impl->scheduler->getObservation(id);
}

std::vector<float> Program::getOpFeatures(int64_t id) {
  return impl->scheduler->getOpFeatures(id);
}

std::vector<uint8_t> Program::getMasks(int64_t id) {
  return impl->scheduler->getMasks(id).flatten();
}

int Program::apply(int64_t id, const std::string &text, std::string &message) {
  std::optional<Action> action = parseAction(text, message);
  if (!action)
    return (int)ApplyStatus::Illegal;
  DiagnosticCollector collect(impl->context.get(), message);
  return (int)impl->scheduler->apply(id, *action, message);
}

int Program::applyPointer(int64_t id, int64_t loop, std::string &message) {
  DiagnosticCollector collect(impl->context.get(), message);
  return (int)impl->scheduler->applyPointer(id, loop, message);
}

int Program::applySchedule(const std::string &text, std::string &message) {
  std::optional<ExplicitSchedule> schedule = parseSchedule(text, message);
  if (!schedule) {
    message = "malformed schedule '" + text + "': " + message;
    return (int)ApplyStatus::Illegal;
  }
  DiagnosticCollector collect(impl->context.get(), message);
  return (int)impl->scheduler->applySchedule(*schedule, message);
}

bool Program::scheduleWithPolicy(const std::string &model,
                                 const std::string &ortLib, bool sample,
                                 uint64_t seed, PolicyRunInfo &info,
                                 std::string &error) {
  OnnxPolicy *policy = impl->getPolicy(model, ortLib, error);
  if (!policy)
    return false;
  PolicyRunOptions options;
  options.sample = sample;
  options.seed = seed;
  PolicyStats stats;
  auto run = [&](ArrayRef<float> obs, ArrayRef<uint8_t> mask,
                 PolicyLogits &logits, std::string &err) {
    return policy->run(obs, mask, logits, err);
  };
  DiagnosticCollector collect(impl->context.get(), error);
  if (failed(impl->scheduler->scheduleWithPolicy(run, options, stats, error)))
    return false;
  info = PolicyRunInfo{stats.ops,          stats.inferences,
                       stats.inferenceSeconds, stats.applications,
                       stats.applySeconds, stats.warnings};
  return true;
}

bool Program::getPolicyLogits(const std::string &model,
                              const std::string &ortLib, int64_t id,
                              std::vector<float> &kind,
                              std::vector<float> &tile,
                              std::vector<float> &pointer,
                              std::string &error) {
  OnnxPolicy *policy = impl->getPolicy(model, ortLib, error);
  if (!policy)
    return false;
  PolicyLogits logits;
  std::vector<float> obs = impl->scheduler->getObservation(id);
  std::vector<uint8_t> mask = impl->scheduler->getMasks(id).flatten();
  if (failed(policy->run(obs, mask, logits, error)))
    return false;
  kind = std::move(logits.kind);
  tile = std::move(logits.tile);
  pointer = std::move(logits.pointer);
  return true;
}

int Program::decodeAndApply(int64_t id, const std::vector<float> &kind,
                            const std::vector<float> &tile,
                            const std::vector<float> &pointer, bool sample,
                            uint64_t seed, std::string &step,
                            std::string &message) {
  const FeatureLayout &layout = FeatureLayout::getDefault();
  Scheduler &scheduler = *impl->scheduler;
  const OpRecord *rec = scheduler.getRecord(id);
  linalg::LinalgOp op = scheduler.lookup(id);
  if (!rec || !op || !rec->supported || rec->state.done) {
    message = "op " + std::to_string(id) + " cannot take a step now";
    return (int)ApplyStatus::Illegal;
  }
  if ((int)kind.size() != kNumActionKinds ||
      (int)tile.size() != 3 * layout.maxLoops * layout.numTileSizes ||
      (int)pointer.size() != layout.maxLoops) {
    message = "logits do not match the feature layout's head sizes";
    return (int)ApplyStatus::Illegal;
  }
  std::mt19937_64 rng(seed);
  DecodedStep decoded =
      decodeStep(op, rec->state, scheduler.hasFusableProducer(id),
                 scheduler.getMasks(id), PolicyLogits{kind, tile, pointer},
                 layout, sample ? &rng : nullptr);
  step = decoded.str();
  DiagnosticCollector collect(impl->context.get(), message);
  return (int)scheduler.applyStep(id, decoded, message);
}

std::string Program::getScheduleText() const {
  return impl->scheduler->getScheduleText();
}

std::string Program::getTransformScript() const {
  return impl->scheduler->getTransformScript();
}

static OwningOpRef<ModuleOp> cloneWithoutTags(ModuleOp module) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  copy->walk([](Operation *op) { op->removeAttr("mlir_rl.op_id"); });
  return copy;
}

std::string Program::str(bool withTags) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (withTags) {
    impl->module->print(os);
  } else {
    OwningOpRef<ModuleOp> copy = cloneWithoutTags(*impl->module);
    copy->print(os);
  }
  return out;
}

bool Program::getLowered(std::string &out, std::string &error) const {
  OwningOpRef<ModuleOp> copy = cloneWithoutTags(*impl->module);
  if (failed(lowerToLLVM(*copy, error)))
    return false;
  llvm::raw_string_ostream os(out);
  copy->print(os);
  return true;
}

FunctionSignature Program::getSignature(const std::string &function,
                                        std::string &error) const {
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(*impl->module, function, error);
  return succeeded(sig) ? *sig : FunctionSignature{};
}

bool Program::time(const TimingOptions &options, TimingResult &result,
                   std::string &error) const {
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(*impl->module, options.function, error);
  if (failed(sig))
    return false;
  OwningOpRef<ModuleOp> copy = cloneWithoutTags(*impl->module);
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
      {"max_vector_innermost", l.maxVectorInnermost},
      {"max_vector_elements", l.maxVectorElements},
      {"max_vector_rows", l.maxVectorRows},
      {"num_op_kinds", kNumOpKinds},
      {"num_actions", kNumActionKinds},
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
  };
  info.tileCandidates = l.tileCandidates;
  for (int k = 0; k < kNumOpKinds; ++k)
    info.opKinds.push_back(getOpKindName((OpKind)k));
  for (int a = 0; a < kNumActionKinds; ++a) {
    info.actionNames.push_back(getActionName((ActionKind)a));
    info.actionMnemonics.push_back(getActionMnemonic((ActionKind)a));
  }
  info.hash = l.getHash();
  info.description = l.getDescription();
  return info;
}

std::string getLoweringPipelineText() { return getLoweringPipeline(); }

std::string getDefaultModelPath() { return OnnxPolicy::getDefaultModelPath(); }
std::string getDefaultOrtLibrary() {
  return OnnxPolicy::getDefaultLibraryPath();
}

} // namespace mlir::rl
