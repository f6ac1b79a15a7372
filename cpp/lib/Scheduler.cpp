//===- Scheduler.cpp - Schedule state of a whole module -------------------===//
#include "mlir-rl/Scheduler.h"
#include "mlir-rl/Features.h"
#include "mlir-rl/ScheduleBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Debug.h"

#include <chrono>
#include <map>
#include <random>

#define DEBUG_TYPE "linalg-rl-schedule"

namespace mlir::rl {

Scheduler::Scheduler(ModuleOp module, const FeatureLayout &layout)
    : module(module), layout(layout) {}

static std::optional<int64_t> getOpId(Operation *op) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(kOpIdAttrName))
    return attr.getInt();
  return std::nullopt;
}

void Scheduler::initialize() {
  ops.clear();
  opByIdValid = false;
  MLIRContext *ctx = module.getContext();
  module.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    OpRecord rec;
    rec.id = ops.size();
    rec.name = op->getName().getStringRef().str();
    rec.kind = classifyOp(op);
    rec.loc = op->getLoc();
    if (auto fn = op->getParentOfType<FunctionOpInterface>())
      rec.function = fn.getName().str();
    rec.supported = succeeded(checkSupported(op, layout, rec.reason));
    for (int64_t b : getLoopBounds(op))
      rec.loopBounds.push_back(b);
    for (utils::IteratorType it : op.getIteratorTypesArray())
      rec.iterators.push_back(it == utils::IteratorType::parallel
                                  ? "parallel"
                                  : "reduction");
    op->setAttr(kOpIdAttrName,
                IntegerAttr::get(IntegerType::get(ctx, 64), rec.id));
    ops.push_back(std::move(rec));
  });
  // The last producer: the defining linalg op of the last operand that has one.
  module.walk([&](linalg::LinalgOp op) {
    int64_t id = *getOpId(op);
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (std::optional<int64_t> pid = getOpId(def);
            pid && isa<linalg::LinalgOp>(def))
          ops[id].producerId = *pid;
    if (ops[id].producerId >= 0)
      ops[ops[id].producerId].consumerIds.push_back(id);
  });
}

const OpRecord *Scheduler::getRecord(int64_t id) const {
  if (id < 0 || id >= (int64_t)ops.size())
    return nullptr;
  return &ops[id];
}

std::vector<int64_t> Scheduler::getTraversalOrder() const {
  // Functions in order of appearance; inside each, reverse program order,
  // which visits every consumer before its producers.
  std::vector<std::string> functions;
  for (const OpRecord &r : ops)
    if (!llvm::is_contained(functions, r.function))
      functions.push_back(r.function);
  std::vector<int64_t> order;
  for (const std::string &fn : functions)
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      if (it->function == fn && it->supported)
        order.push_back(it->id);
  return order;
}

linalg::LinalgOp Scheduler::lookup(int64_t id) {
  if (!opByIdValid) {
    opById.clear();
    // The first op carrying the id in pre-order (a fused producer can exist
    // twice: inside the consumer's forall and, if still used, outside).
    module.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      if (std::optional<int64_t> opId = getOpId(op))
        opById.try_emplace(*opId, op.getOperation());
    });
    opByIdValid = true;
  }
  return dyn_cast_or_null<linalg::LinalgOp>(opById.lookup(id));
}

bool Scheduler::hasFusableProducer(int64_t id) {
  const OpRecord *rec = getRecord(id);
  if (!rec || rec->producerId < 0)
    return false;
  const OpRecord &producer = ops[rec->producerId];
  if (!producer.supported || !producer.state.history.empty() ||
      producer.state.done)
    return false;
  linalg::LinalgOp consumerOp = lookup(id), producerOp = lookup(producer.id);
  if (!consumerOp || !producerOp)
    return false;
  // The producer must still feed the consumer directly.
  return llvm::any_of(consumerOp->getOperands(), [&](Value v) {
    return v.getDefiningOp() == producerOp.getOperation();
  });
}

ActionMasks Scheduler::getMasks(int64_t id) {
  const OpRecord *rec = getRecord(id);
  linalg::LinalgOp op = lookup(id);
  if (!rec || !op || !rec->supported) {
    ActionMasks m;
    m.kind.assign(kNumActionKinds, 0);
    m.kind[(int)ActionKind::NoTransformation] = 1;
    m.tile.assign(3 * layout.maxLoops * layout.numTileSizes, 0);
    m.pointer.assign(layout.maxLoops, 0);
    return m;
  }
  return computeActionMasks(op, rec->state, hasFusableProducer(id), layout);
}

std::vector<float> Scheduler::getOpFeatures(int64_t id) {
  const OpRecord *rec = getRecord(id);
  linalg::LinalgOp op = lookup(id);
  if (!rec || !op)
    return std::vector<float>(layout.getOpFeatureSize(), 0.0f);
  return computeOpFeatures(op, rec->state, layout);
}

std::vector<float> Scheduler::getObservation(int64_t id) {
  std::vector<float> obs = getOpFeatures(id);
  const OpRecord *rec = getRecord(id);
  std::vector<float> producer =
      rec && rec->producerId >= 0
          ? getOpFeatures(rec->producerId)
          : std::vector<float>(layout.getOpFeatureSize(), 0.0f);
  obs.insert(obs.end(), producer.begin(), producer.end());
  return obs;
}

std::string Scheduler::getUnknownOpMessage(int64_t id) const {
  return "unknown op id " + std::to_string(id) + " (the module has " +
         std::to_string(ops.size()) +
         " linalg ops, numbered from 0; `mlir-rl ops FILE` lists them)";
}

/// Verifies what an action can have changed: the top-level ops (direct
/// children of the function body) that now hold the op and, for a fusion, its
/// producer. Verifying the whole function after every action was 40% of the
/// pass on a ResNet-18-sized module. Falls back to the whole payload when an
/// op cannot be found.
LogicalResult Scheduler::verifyTouched(Operation *payload, int64_t id,
                                       const ActionScriptOptions &options) {
  if (payload->getNumRegions() != 1 || !payload->getRegion(0).hasOneBlock())
    return verify(payload);
  Block &body = payload->getRegion(0).front();
  llvm::SmallPtrSet<Operation *, 4> roots;
  for (std::optional<int64_t> opId : {std::optional<int64_t>(id), options.producerId}) {
    if (!opId)
      continue;
    linalg::LinalgOp op = lookup(*opId);
    if (!op) {
      if (opId == id)
        return verify(payload);
      continue; // a fused producer with no other use is gone
    }
    Operation *top = body.findAncestorOpInBlock(*op.getOperation());
    if (!top)
      return verify(payload);
    roots.insert(top);
  }
  for (Operation *top : roots)
    if (failed(verify(top)))
      return failure();
  return success();
}

ApplyStatus Scheduler::apply(int64_t id, const Action &action,
                             std::string &message) {
  const OpRecord *cRec = getRecord(id);
  if (!cRec) {
    message = getUnknownOpMessage(id);
    return ApplyStatus::Illegal;
  }
  OpRecord &rec = ops[id];
  std::string prefix = "op " + std::to_string(id) + " (" + rec.name + "): ";
  if (!rec.supported) {
    message = prefix + "not supported: " + rec.reason;
    return ApplyStatus::Illegal;
  }
  linalg::LinalgOp op = lookup(id);
  if (!op || rec.state.done) {
    message = prefix + action.str() +
              " is not allowed: the op's schedule is complete";
    return ApplyStatus::Illegal;
  }
  bool hasProducer = hasFusableProducer(id);
  std::string reason;
  if (failed(verifyAction(op, rec.state, hasProducer, action, layout,
                          reason))) {
    message = prefix + reason;
    return ApplyStatus::Illegal;
  }

  auto record = [&]() {
    rec.state.history.push_back(action);
    if (action.kind == ActionKind::TiledParallelization ||
        action.kind == ActionKind::TiledFusion)
      rec.state.parallelized = true;
    if (action.kind == ActionKind::Vectorization ||
        action.kind == ActionKind::NoTransformation ||
        (int)rec.state.history.size() >= layout.historyLength)
      rec.state.done = true;
  };
  if (action.kind == ActionKind::NoTransformation) {
    record();
    return ApplyStatus::Applied;
  }

  ActionScriptOptions options;
  options.opId = id;
  if (action.kind == ActionKind::TiledFusion)
    options.producerId = rec.producerId;
  options.decompose = action.kind == ActionKind::Vectorization &&
                      needsDecomposition(op);
  options.uniqueSuffix = scriptCounter++;
  std::string body = buildActionScript(action, options);
  if (action.kind == ActionKind::TiledFusion)
    body += "    transform.apply_dce to %root : !transform.any_op\n";

  // Clone the function, apply, and restore it if anything goes wrong.
  auto func = op->getParentOfType<FunctionOpInterface>();
  Operation *payload = func ? func.getOperation() : module.getOperation();
  Operation *backup = payload->clone();
  std::string error;
  LogicalResult result =
      applyTransformScript(payload, wrapTransformScript(body), error);
  opByIdValid = false; // ops were replaced (or, below, restored from a clone)
  if (succeeded(result) && failed(verifyTouched(payload, id, options))) {
    result = failure();
    error += "the transformed IR does not verify";
  }
  if (failed(result)) {
    Region &region = payload->getRegion(0);
    region.takeBody(backup->getRegion(0));
    backup->erase();
    message = prefix + action.str() + " failed to apply; the IR is unchanged: " +
              StringRef(error).trim().str();
    LLVM_DEBUG(llvm::dbgs() << message << "\n");
    return ApplyStatus::Failed;
  }
  backup->erase();
  appliedScripts.push_back(body);
  record();
  return ApplyStatus::Applied;
}

ApplyStatus Scheduler::applyPointer(int64_t id, int64_t loop,
                                    std::string &message) {
  ActionMasks m = getMasks(id);
  const OpRecord *rec = getRecord(id);
  if (!rec || !m.isKindAllowed(ActionKind::Interchange) || loop < 0 ||
      loop >= layout.maxLoops || !m.pointer[loop]) {
    message = "op " + std::to_string(id) + ": level pointer to loop " +
              std::to_string(loop) + " is not allowed now";
    return ApplyStatus::Illegal;
  }
  OpRecord &r = ops[id];
  r.state.pendingPointers.push_back(loop);
  if (r.state.pendingPointers.size() < rec->loopBounds.size())
    return ApplyStatus::Applied;
  Action action;
  action.kind = ActionKind::Interchange;
  action.sizes = r.state.pendingPointers;
  r.state.pendingPointers.clear();
  return apply(id, action, message);
}

ApplyStatus Scheduler::applySchedule(const ExplicitSchedule &schedule,
                                     std::string &message, int64_t *opId) {
  if (opId)
    *opId = -1;
  std::vector<int64_t> order = getTraversalOrder();
  std::map<int64_t, std::vector<Action>> perOp;
  for (const ExplicitSchedule::Entry &e : schedule.entries) {
    int64_t id;
    if (e.opId) {
      id = *e.opId;
    } else if (!order.empty()) {
      id = order.front();
    } else {
      message = "the schedule names no op id and the module has no "
                "schedulable linalg op";
      return ApplyStatus::Illegal;
    }
    const OpRecord *rec = getRecord(id);
    if (!rec) {
      message = getUnknownOpMessage(id);
      return ApplyStatus::Illegal;
    }
    if (!rec->supported) {
      message = "op " + std::to_string(id) + " (" + rec->name +
                ") cannot be scheduled: " + rec->reason;
      if (opId)
        *opId = id;
      return ApplyStatus::Illegal;
    }
    auto &list = perOp[id];
    list.insert(list.end(), e.actions.begin(), e.actions.end());
  }
  ApplyStatus status = ApplyStatus::Applied;
  std::string failures;
  for (int64_t id : order) {
    auto it = perOp.find(id);
    if (it == perOp.end())
      continue;
    for (const Action &a : it->second) {
      std::string msg;
      ApplyStatus s = apply(id, a, msg);
      if (s == ApplyStatus::Illegal) {
        message = msg;
        if (opId)
          *opId = id;
        return s;
      }
      if (s == ApplyStatus::Failed) {
        status = ApplyStatus::Failed;
        failures += (failures.empty() ? "" : "\n") + msg;
      }
    }
  }
  message = failures;
  return status;
}

ApplyStatus Scheduler::applyStep(int64_t id, const DecodedStep &step,
                                 std::string &message) {
  if (step.isPointer)
    return applyPointer(id, step.pointer, message);
  return apply(id, step.action, message);
}

LogicalResult Scheduler::scheduleWithPolicy(PolicyFn policy,
                                            const PolicyRunOptions &options,
                                            PolicyStats &stats,
                                            std::string &error) {
  using Clock = std::chrono::steady_clock;
  std::mt19937_64 rng(options.seed);
  // Each op takes at most tau actions, an interchange N + 1 decisions.
  const int maxSteps = layout.historyLength * (layout.maxLoops + 1) + 1;
  for (int64_t id : getTraversalOrder()) {
    ++stats.ops;
    for (int step = 0; step < maxSteps && !ops[id].state.done; ++step) {
      linalg::LinalgOp op = lookup(id);
      if (!op)
        break;
      std::vector<float> obs = getObservation(id);
      ActionMasks masks = getMasks(id);
      PolicyLogits logits;
      auto t0 = Clock::now();
      if (failed(policy(obs, masks.flatten(), logits, error)))
        return failure();
      auto t1 = Clock::now();
      stats.inferenceSeconds += std::chrono::duration<double>(t1 - t0).count();
      ++stats.inferences;
      DecodedStep decoded =
          decodeStep(op, ops[id].state, hasFusableProducer(id), masks, logits,
                     layout, options.sample ? &rng : nullptr);
      std::string message;
      auto t2 = Clock::now();
      ApplyStatus status = applyStep(id, decoded, message);
      stats.applySeconds +=
          std::chrono::duration<double>(Clock::now() - t2).count();
      ++stats.applications;
      if (status == ApplyStatus::Applied)
        continue;
      // Decoding only picks legal steps; a failure to apply ends the op.
      stats.warnings.push_back(message);
      ops[id].state.pendingPointers.clear();
      std::string ignored;
      (void)apply(id, Action{ActionKind::NoTransformation, {}}, ignored);
    }
  }
  return success();
}

std::string Scheduler::getScheduleText() const {
  std::string out;
  for (int64_t id : getTraversalOrder()) {
    const OpRecord &r = ops[id];
    if (r.state.history.empty())
      continue;
    out += (out.empty() ? "" : "; ") + std::to_string(id) + ":";
    for (const Action &a : r.state.history)
      out += " " + a.str();
  }
  return out;
}

std::string Scheduler::getTransformScript() const {
  std::string body = buildTaggingScript(ops.size());
  for (const std::string &s : appliedScripts)
    body += s;
  return wrapTransformScript(body);
}

void Scheduler::removeTags() {
  module.walk([](Operation *op) { op->removeAttr(kOpIdAttrName); });
  opByIdValid = false;
}

} // namespace mlir::rl
