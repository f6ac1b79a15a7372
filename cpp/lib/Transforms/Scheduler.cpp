//===- Scheduler.cpp - Schedule state of a whole module -------------------===//
#include "mlir-rl/Transforms/Scheduler.h"
#include "mlir-rl/Analysis/Features.h"
#include "mlir-rl/Analysis/OpAnalysis.h"
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Transforms/Fusion.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <chrono>
#include <map>

#define DEBUG_TYPE "linalg-rl-schedule"

namespace mlir::rl {

Scheduler::Scheduler(ModuleOp module, const ActionSpaceConfig &config,
                     VerifyScope verifyScope)
    : module(module), config(config), verifyScope(verifyScope) {}

static std::optional<int64_t> getOpId(Operation *op) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(kOpIdAttrName))
    return attr.getInt();
  return std::nullopt;
}

void Scheduler::initialize() {
  ops.clear();
  applied.clear();
  opById.clear();
  MLIRContext *ctx = module.getContext();
  module.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    OpRecord rec;
    rec.id = ops.size();
    rec.name = op->getName().getStringRef().str();
    rec.kind = classifyOp(op);
    rec.loc = op->getLoc();
    if (auto fn = op->getParentOfType<FunctionOpInterface>())
      rec.function = fn.getName().str();
    rec.supported =
        succeeded(checkSupported(op, config.layout, rec.reason));
    for (int64_t b : getLoopBounds(op))
      rec.loopBounds.push_back(b);
    for (utils::IteratorType it : op.getIteratorTypesArray())
      rec.iterators.push_back(it == utils::IteratorType::parallel
                                  ? "parallel"
                                  : "reduction");
    op->setAttr(kOpIdAttrName,
                IntegerAttr::get(IntegerType::get(ctx, 64), rec.id));
    opById[rec.id] = op.getOperation();
    ops.push_back(std::move(rec));
  });
  opByIdValid = true;
  // The last producer: the defining linalg op of the last operand that has one.
  for (OpRecord &rec : ops) {
    Operation *op = opById.lookup(rec.id);
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (std::optional<int64_t> pid = getOpId(def);
            pid && isa<linalg::LinalgOp>(def))
          rec.producerId = *pid;
  }
  for (OpRecord &rec : ops)
    if (rec.producerId >= 0)
      ops[rec.producerId].consumerIds.push_back(rec.id);
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

int64_t Scheduler::getNextOp() const {
  for (int64_t id : getTraversalOrder())
    if (!ops[id].state.done)
      return id;
  return -1;
}

int64_t Scheduler::getStepBudget() const {
  int64_t n = getTraversalOrder().size();
  return std::max<int64_t>(1, n) * config.layout.getMaxStepsPerOp();
}

void Scheduler::rebuildOpMap() {
  opById.clear();
  // The first op carrying the id in pre-order (a fused producer can exist
  // twice: inside the consumer's forall and, if still used, outside).
  module.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    if (std::optional<int64_t> opId = getOpId(op))
      opById.try_emplace(*opId, op.getOperation());
  });
  opByIdValid = true;
}

linalg::LinalgOp Scheduler::lookup(int64_t id) {
  if (!opByIdValid)
    rebuildOpMap();
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
  if (!rec || !op || !rec->supported)
    return ActionMasks::onlyNoTransformation(config.layout);
  return computeActionMasks(op, rec->state, hasFusableProducer(id), config);
}

std::vector<float> Scheduler::getOpFeatures(int64_t id) {
  const OpRecord *rec = getRecord(id);
  linalg::LinalgOp op = lookup(id);
  if (!rec || !op)
    return std::vector<float>(config.layout.getOpFeatureSize(), 0.0f);
  return computeOpFeatures(op, rec->state, config.layout, config.legality);
}

std::vector<float> Scheduler::getObservation(int64_t id) {
  std::vector<float> obs = getOpFeatures(id);
  const OpRecord *rec = getRecord(id);
  std::vector<float> producer =
      rec && rec->producerId >= 0
          ? getOpFeatures(rec->producerId)
          : std::vector<float>(config.layout.getOpFeatureSize(), 0.0f);
  obs.insert(obs.end(), producer.begin(), producer.end());
  return obs;
}

std::string Scheduler::getUnknownOpMessage(int64_t id) const {
  return "unknown op id " + std::to_string(id) + " (the module has " +
         std::to_string(ops.size()) +
         " linalg ops, numbered from 0; `mlir-rl ops FILE` lists them)";
}

void Scheduler::recordApplied(OpRecord &rec, const Action &action) {
  rec.state.history.push_back(action);
  rec.sources.push_back(source);
  if (action.info().has(kParallelizes))
    rec.state.parallelized = true;
  if (action.isTerminal() ||
      (int)rec.state.history.size() >= config.layout.historyLength)
    rec.state.done = true;
}

namespace {
/// A use of a value by an op outside the IR an action replaces, to be put
/// back if the action is undone.
struct RecordedUse {
  Operation *user;
  unsigned operandNumber;
  Value value; // the value used before the action (or, below, its result
               // number in the backup)
  unsigned resultNumber;
};
} // namespace

LogicalResult Scheduler::transform(linalg::LinalgOp op,
                                   const AppliedAction &action,
                                   std::string &error) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  Operation *root = func ? func.getOperation() : module.getOperation();
  Operation *producer =
      action.producerId ? lookup(*action.producerId).getOperation() : nullptr;

  // What the action may change: the op itself (replaced, or modified in
  // place), the uses of its results, and for a fusion the uses of the
  // producer's results. New ops appear where the op was, between its
  // untouched neighbours `prev` and `next` in its block.
  Operation *top = op.getOperation();
  Block *block = top->getBlock();
  Operation *prev = top->getPrevNode();
  if (prev && prev == producer)
    prev = prev->getPrevNode();
  Operation *next = top->getNextNode();

  // The backup must not use live values while it waits: transforms look at
  // the users of a value (a fusion checks their dominance), and a detached
  // user would be one. Its operands from outside are set aside and put back
  // if it is restored.
  OwningOpRef<Operation *> backup(top->clone());
  SmallVector<RecordedUse> backupOperands;
  backup.get()->walk([&](Operation *nested) {
    for (OpOperand &operand : nested->getOpOperands()) {
      Value v = operand.get();
      Operation *owner = v.getParentRegion()
                             ? v.getParentRegion()->getParentOp()
                             : nullptr;
      bool inside = owner && (owner == backup.get() ||
                              backup.get()->isProperAncestor(owner));
      if (auto res = dyn_cast<OpResult>(v))
        inside = backup.get()->isAncestor(res.getOwner());
      if (!inside)
        backupOperands.push_back(
            {nested, operand.getOperandNumber(), v, 0});
    }
  });
  for (const RecordedUse &u : backupOperands)
    u.user->getOpOperand(u.operandNumber).drop();
  SmallVector<RecordedUse> topUses, producerUses;
  for (OpResult r : top->getResults())
    for (OpOperand &use : r.getUses())
      topUses.push_back({use.getOwner(), use.getOperandNumber(), Value(),
                         r.getResultNumber()});
  if (producer)
    for (OpResult r : producer->getResults())
      for (OpOperand &use : r.getUses())
        if (!top->isAncestor(use.getOwner()))
          producerUses.push_back(
              {use.getOwner(), use.getOperandNumber(), r, 0});

  auto rangeOps = [&]() {
    SmallVector<Operation *> out;
    for (Operation *it = prev ? prev->getNextNode() : &block->front();
         it && it != next; it = it->getNextNode())
      if (it != producer)
        out.push_back(it);
    return out;
  };

  OwningOpRef<ModuleOp> transformModule =
      buildActionModule(module.getContext(), action);
  LogicalResult result =
      applyTransformModule(*transformModule, root, {op}, error);
  if (succeeded(result) && producer) {
    // The tiled op is in its new forall: fuse the producer into it.
    scf::ForallOp forall;
    for (Operation *c : rangeOps())
      c->walk([&](linalg::LinalgOp l) {
        if (getOpId(l) == action.opId)
          forall = l->getParentOfType<scf::ForallOp>();
      });
    result = fuse(root, producer, forall, *action.producerId, error);
  }

  if (succeeded(result)) {
    SmallVector<Operation *> changed = rangeOps();
    if (verifyScope == VerifyScope::Function) {
      if (failed(verify(root)))
        result = failure();
    } else {
      // What was replaced or modified; every op using its results and every
      // ancestor, by themselves (their regions did not change otherwise).
      llvm::SmallPtrSet<Operation *, 16> seen(changed.begin(), changed.end());
      for (Operation *c : changed)
        if (failed(verify(c)))
          result = failure();
      SmallVector<Operation *> others;
      for (Operation *c : changed)
        for (Value v : c->getResults())
          for (Operation *user : v.getUsers())
            if (seen.insert(user).second)
              others.push_back(user);
      for (Operation *a = block->getParentOp(); a && a != root;
           a = a->getParentOp())
        if (seen.insert(a).second)
          others.push_back(a);
      for (Operation *o : others)
        if (succeeded(result) && failed(verify(o, /*verifyRecursively=*/false)))
          result = failure();
    }
    if (failed(result))
      error += "the transformed IR does not verify";
  }
  if (injectFailureAt >= 0 && injectFailureAt-- == 0 && succeeded(result)) {
    result = failure();
    error += "injected failure (a test of the restore path)";
  }

  if (failed(result)) {
    // Put `top` back from its backup, and every recorded use.
    Operation *restored = backup.release();
    for (const RecordedUse &u : backupOperands)
      u.user->setOperand(u.operandNumber, u.value);
    if (next)
      block->getOperations().insert(next->getIterator(), restored);
    else
      block->push_back(restored);
    for (const RecordedUse &u : topUses)
      u.user->setOperand(u.operandNumber,
                         restored->getResult(u.resultNumber));
    for (const RecordedUse &u : producerUses)
      u.user->setOperand(u.operandNumber, u.value);
    SmallVector<Operation *> discard = rangeOps();
    llvm::erase(discard, restored);
    for (Operation *d : discard)
      d->dropAllReferences();
    for (Operation *d : discard) {
      d->dropAllDefinedValueUses();
      d->erase();
    }
    opByIdValid = false;
    return failure();
  }

  if (action.producerId) {
    // The producer, fused into the forall, is dead unless used elsewhere.
    // The whole module, as the replay script's apply_dce (a function's dead
    // ops otherwise stayed until a fusion in that function, and a replay of
    // a module of several functions differed from the pass's result).
    eraseDeadOps(module.getOperation());
    opByIdValid = false;
  } else if (opByIdValid) {
    // Only the op itself was replaced; find its new form (V leaves none).
    opById.erase(action.opId);
    for (Operation *c : rangeOps()) {
      c->walk<WalkOrder::PreOrder>([&](linalg::LinalgOp l) {
        if (getOpId(l) == action.opId)
          opById.try_emplace(action.opId, l.getOperation());
      });
    }
  }
  return success();
}

LogicalResult Scheduler::fuse(Operation *root, Operation *producer,
                              scf::ForallOp forall, int64_t producerId,
                              std::string &error) {
  if (!forall) {
    error = "internal error: the tiled op is not in an scf.forall";
    return failure();
  }
  // A shared output of the forall that is a tensor.empty used elsewhere too
  // (cse ties equal tensor.empty ops together: the front end's
  // fuse-elementwise stage runs it) gets one of its own first. Upstream's
  // fusion writes a producer whose destination (or its fill's) is that same
  // value into the forall's output: the tiles of a transposed consumer
  // were overwritten by the next iteration's producer tile (wrong output),
  // or the producer was moved past a use outside (IR that does not
  // verify). Found by the fuzzer, 2026-11-28. apply() unties them before
  // the first transformation (mlir-rl-untie-empties, which a dumped script
  // replays); this stays for a tie made since.
  for (OpOperand &out : forall.getOutputsMutable()) {
    auto empty = out.get().getDefiningOp<tensor::EmptyOp>();
    if (!empty || empty->hasOneUse())
      continue;
    OpBuilder b(forall);
    out.set(b.clone(*empty)->getResult(0));
  }
  if (getFusionShape(producer, forall) == FusionShape::Other) {
    // fuse_into_containing_op gives the producer's uses after the forall a
    // new forall result holding the tiles computed inside, which is wrong
    // when the tiles do not cover the result exactly once. Those uses take
    // a copy of the producer instead (computed twice, correct).
    Operation *copy = nullptr;
    for (OpOperand &use : llvm::make_early_inc_range(producer->getUses())) {
      if (forall->isAncestor(use.getOwner()))
        continue;
      if (!copy) {
        // Right after the producer: a use outside may come before the
        // forall (which stands where the consumer stood).
        OpBuilder b(producer->getContext());
        b.setInsertionPointAfter(producer);
        copy = b.clone(*producer);
      }
      use.set(copy->getResult(cast<OpResult>(use.get()).getResultNumber()));
    }
    OwningOpRef<ModuleOp> fusion =
        buildFusionModule(module.getContext(), producerId);
    return applyTransformModule(*fusion, root, {producer, forall}, error);
  }
  IRRewriter rewriter(module.getContext());
  FailureOr<FusionResult> fused =
      fuseProducerIntoForall(rewriter, producer, forall);
  if (failed(fused)) {
    error = "could not tile the producer at the forall's slice";
    return failure();
  }
  IntegerAttr tag = IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                     producerId);
  for (Operation *op : fused->fusedOps)
    op->setAttr(kOpIdAttrName, tag);
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
  if (failed(verifyAction(op, rec.state, hasProducer, action, config,
                          reason))) {
    message = prefix + reason;
    return ApplyStatus::Illegal;
  }
  if (action.kind == ActionKind::NoTransformation) {
    recordApplied(rec, action);
    return ApplyStatus::Applied;
  }

  AppliedAction step;
  step.opId = id;
  step.action = action;
  step.source = source;
  if (action.info().has(kFusesProducer)) {
    step.producerId = rec.producerId;
    Operation *producer = lookup(rec.producerId).getOperation();
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get().getDefiningOp() == producer) {
        step.producerOperand = operand.getOperandNumber();
        break;
      }
  }
  step.decompose =
      action.kind == ActionKind::Vectorization && needsDecomposition(op);
  if (action.kind == ActionKind::Vectorization)
    step.registerTile = getRegisterTile(op, config.legality);
  // Before the first transformation, each linalg init its own
  // tensor.empty (cse ties equal ones; tiled fusion would write a
  // producer into a forall's output), named in the prelude so that a trace
  // and a dumped script replay it. Not at construction: inspecting a
  // module (its ops, masks, features) leaves it as it was, and a front end
  // may still run (SchedulePipeline::restart).
  if (applied.empty() && !untied && untieEmptyInits(module)) {
    PassStep untie;
    untie.name = "mlir-rl-untie-empties";
    prelude.push_back(untie);
    untied = true;
  }
  std::string error;
  if (failed(transform(op, step, error))) {
    message = prefix + action.str() +
              " failed to apply; the IR is unchanged: " +
              StringRef(error).trim().str();
    LLVM_DEBUG(llvm::dbgs() << message << "\n");
    return ApplyStatus::Failed;
  }
  applied.push_back(step);
  recordApplied(rec, action);
  return ApplyStatus::Applied;
}

ApplyStatus Scheduler::applyPointer(int64_t id, int64_t loop,
                                    std::string &message) {
  ActionMasks m = getMasks(id);
  const OpRecord *rec = getRecord(id);
  if (!rec || !m.isKindAllowed(ActionKind::Interchange) || loop < 0 ||
      loop >= config.layout.maxLoops || !m.pointer[loop]) {
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

ApplyStatus Scheduler::applyStep(int64_t id, const Step &step,
                                 std::string &message) {
  if (step.isPointer)
    return applyPointer(id, step.pointer, message);
  return apply(id, step.action, message);
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
    if (!e.choices.empty()) {
      ApplyStatus s = setChoices(id, e.choices, message);
      if (s != ApplyStatus::Applied) {
        if (opId)
          *opId = id;
        return s;
      }
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

FailureOr<Step> Scheduler::decode(int64_t id, const PolicyLogits &logits,
                                  std::mt19937_64 *rng,
                                  std::string &message) {
  const OpRecord *rec = getRecord(id);
  linalg::LinalgOp op = lookup(id);
  if (!rec || !op || !rec->supported || rec->state.done) {
    message = "op " + std::to_string(id) + " cannot take a step now" +
              (!rec                 ? " (" + getUnknownOpMessage(id) + ")"
               : !rec->supported    ? " (not supported: " + rec->reason + ")"
               : rec->state.done    ? " (its schedule is complete)"
                                    : "");
    return failure();
  }
  const FeatureLayout &layout = config.layout;
  if ((int)logits.kind.size() != layout.getKindMaskSize() ||
      (int)logits.tile.size() != layout.getTileMaskSize() ||
      (int)logits.pointer.size() != layout.getPointerMaskSize()) {
    message = "logits of sizes (" + std::to_string(logits.kind.size()) + ", " +
              std::to_string(logits.tile.size()) + ", " +
              std::to_string(logits.pointer.size()) +
              ") do not match the layout's heads (" +
              std::to_string(layout.getKindMaskSize()) + ", " +
              std::to_string(layout.getTileMaskSize()) + ", " +
              std::to_string(layout.getPointerMaskSize()) + ")";
    return failure();
  }
  bool hasProducer = hasFusableProducer(id);
  ActionMasks masks = computeActionMasks(op, rec->state, hasProducer, config);
  return decodeStep(op, rec->state, hasProducer, masks, logits, config, rng);
}

LogicalResult Scheduler::scheduleWithPolicy(PolicyFn policy,
                                            const PolicyRunOptions &options,
                                            PolicyStats &stats,
                                            std::string &error) {
  std::mt19937_64 rng(options.seed);
  for (int64_t id : getTraversalOrder())
    if (failed(scheduleOpWithPolicy(id, policy, options, rng, stats, error)))
      return failure();
  return success();
}

LogicalResult Scheduler::scheduleOpWithPolicy(int64_t id, PolicyFn policy,
                                              const PolicyRunOptions &options,
                                              std::mt19937_64 &rng,
                                              PolicyStats &stats,
                                              std::string &error) {
  using Clock = std::chrono::steady_clock;
  const int maxSteps = config.layout.getMaxStepsPerOp();
  if (!getRecord(id) || !ops[id].supported)
    return success();
  ++stats.ops;
  for (int step = 0; step < maxSteps && !ops[id].state.done; ++step) {
    linalg::LinalgOp op = lookup(id);
    if (!op)
      break;
    std::vector<float> obs = getObservation(id);
    bool hasProducer = hasFusableProducer(id);
    ActionMasks masks =
        computeActionMasks(op, ops[id].state, hasProducer, config);
    PolicyLogits logits;
    auto t0 = Clock::now();
    if (failed(policy(obs, masks.flatten(), logits, error)))
      return failure();
    auto t1 = Clock::now();
    stats.inferenceSeconds += std::chrono::duration<double>(t1 - t0).count();
    ++stats.inferences;
    Step decoded = decodeStep(op, ops[id].state, hasProducer, masks, logits,
                              config, options.sample ? &rng : nullptr);
    if (options.onStep)
      options.onStep(id, decoded);
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
  return success();
}

ExplicitSchedule withoutChoices(ExplicitSchedule schedule) {
  std::vector<ExplicitSchedule::Entry> kept;
  for (ExplicitSchedule::Entry &e : schedule.entries) {
    e.choices = RuleChoices();
    if (!e.actions.empty())
      kept.push_back(std::move(e));
  }
  schedule.entries = std::move(kept);
  return schedule;
}

ApplyStatus Scheduler::setChoices(int64_t id, const RuleChoices &choices,
                                  std::string &message) {
  OpRecord *rec = id >= 0 && id < (int64_t)ops.size() ? &ops[id] : nullptr;
  if (!rec) {
    message = getUnknownOpMessage(id);
    return ApplyStatus::Illegal;
  }
  RuleChoiceMask mask;
  if (choiceMask)
    mask = choiceMask(id);
  for (const RuleChoiceInfo &c : kRuleChoices) {
    if (!choices.isSet(c.kind))
      continue;
    const std::vector<int64_t> &legal = mask[static_cast<int>(c.kind)];
    if (llvm::is_contained(legal, choices.get(c.kind)))
      continue;
    message = "op " + std::to_string(id) + " (" + rec->name +
              "): the rule choice " + c.key + "=" +
              std::to_string(choices.get(c.kind)) + " is not offered";
    std::string offered;
    for (const RuleChoiceInfo &o : kRuleChoices) {
      const std::vector<int64_t> &values = mask[static_cast<int>(o.kind)];
      if (values.empty())
        continue;
      offered += std::string(offered.empty() ? "" : ", ") + o.key + " in {";
      for (size_t i = 0; i < values.size(); ++i)
        offered += (i ? "," : "") + std::to_string(values[i]);
      offered += "}";
    }
    message += offered.empty()
                   ? " (no rule decides anything for this op under the "
                     "pipeline's rules)"
                   : " (this op offers " + offered + ")";
    return ApplyStatus::Illegal;
  }
  rec->choices.merge(choices);
  return ApplyStatus::Applied;
}

ExplicitSchedule Scheduler::getSchedule(size_t skipPreludeSteps) const {
  ExplicitSchedule schedule;
  for (int64_t id : getTraversalOrder())
    if (!ops[id].state.history.empty() || !ops[id].choices.empty()) {
      schedule.entries.push_back({id, ops[id].state.history});
      schedule.entries.back().choices = ops[id].choices;
    }
  ArrayRef<PassStep> steps = prelude;
  schedule.prelude =
      formatPassSteps(steps.drop_front(std::min(skipPreludeSteps, steps.size())));
  schedule.hasPrelude = !schedule.prelude.empty();
  return schedule;
}

std::string Scheduler::getScheduleText() const {
  return formatSchedule(getSchedule(prelude.size()));
}

std::string Scheduler::getTrace() const {
  return formatSchedule(withoutChoices(getSchedule()));
}

std::string Scheduler::getTransformScript() const {
  ModuleOp payload = module;
  return printReplayScript(payload.getContext(), ops.size(), applied,
                           prelude);
}

void Scheduler::removeTags() {
  removeOpIdTags(module);
  opByIdValid = false;
}

} // namespace mlir::rl
