//===- ScheduleBuilder.cpp - Actions as transform-dialect IR --------------===//
#include "mlir-rl/Transforms/ScheduleBuilder.h"

#include "mlir/Dialect/Linalg/TransformOps/LinalgTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformTypes.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {

namespace tr = mlir::transform;

static Type anyOp(MLIRContext *ctx) { return tr::AnyOpType::get(ctx); }

/// `transform.annotate %handle "mlir_rl.op_id" = <id>`.
static void buildTag(OpBuilder &b, Location loc, Value handle, int64_t id) {
  MLIRContext *ctx = b.getContext();
  Value param = tr::ParamConstantOp::create(
      b, loc, tr::ParamType::get(ctx, IntegerType::get(ctx, 64)),
      b.getI64IntegerAttr(id));
  tr::AnnotateOp::create(b, loc, handle, kOpIdAttrName, param);
}

/// Fuses the producer into the forall, re-tags it, and (given `dceRoot`)
/// erases what became dead.
static void buildFusion(OpBuilder &b, Location loc, Value producer,
                        Value forall, int64_t producerId, Value dceRoot) {
  auto fuse = tr::FuseIntoContainingOp::create(b, loc, producer, forall);
  buildTag(b, loc, fuse.getFusedOp(), producerId);
  if (dceRoot)
    tr::ApplyDeadCodeEliminationOp::create(b, loc, dceRoot);
}

void buildActionTransforms(OpBuilder &b, Location loc,
                           const AppliedAction &applied, Value root,
                           Value target, Value producer,
                           bool withDeadCodeElimination) {
  MLIRContext *ctx = b.getContext();
  const Action &action = applied.action;
  switch (action.kind) {
  case ActionKind::NoTransformation:
    return;
  case ActionKind::Tiling: {
    unsigned loops = llvm::count_if(action.sizes, [](int64_t s) { return s; });
    if (loops == 0)
      return; // all sizes 0: nothing to tile
    auto tile = tr::TileUsingForOp::create(
        b, loc, SmallVector<Type>(loops, anyOp(ctx)), target,
        ArrayRef<int64_t>(action.sizes));
    buildTag(b, loc, tile.getTiledLinalgOp(), applied.opId);
    return;
  }
  case ActionKind::TiledParallelization:
  case ActionKind::TiledFusion: {
    auto tile = tr::TileUsingForallOp::create(
        b, loc, target, ArrayRef<int64_t>(action.sizes), tr::TileSizesSpec(),
        ArrayAttr());
    buildTag(b, loc, tile.getTiledOp(), applied.opId);
    if (action.info().has(kFusesProducer) && producer)
      buildFusion(b, loc, producer, tile.getForallOp(), *applied.producerId,
                  withDeadCodeElimination ? root : Value());
    return;
  }
  case ActionKind::Interchange: {
    auto generic = tr::GeneralizeOp::create(b, loc, anyOp(ctx), target);
    auto interchange = tr::InterchangeOp::create(
        b, loc, anyOp(ctx), generic.getTransformed(),
        ArrayRef<int64_t>(action.sizes));
    buildTag(b, loc, interchange.getTransformed(), applied.opId);
    return;
  }
  case ActionKind::Vectorization: {
    Value vectorTarget = target;
    if (!applied.registerTile.empty()) {
      unsigned loops = llvm::count_if(applied.registerTile,
                                      [](int64_t s) { return s; });
      auto tile = tr::TileUsingForOp::create(
          b, loc, SmallVector<Type>(loops, anyOp(ctx)), target,
          ArrayRef<int64_t>(applied.registerTile));
      vectorTarget = tile.getTiledLinalgOp();
    }
    if (applied.decompose)
      vectorTarget =
          tr::DecomposeOp::create(b, loc, anyOp(ctx), target).getTransformed();
    tr::VectorizeOp::create(b, loc, vectorTarget, ValueRange(),
                            ArrayRef<int64_t>(), UnitAttr(), UnitAttr(),
                            UnitAttr(), ArrayRef<bool>());
    return;
  }
  }
}

/// A module with the transform.with_named_sequence attribute holding one
/// `@__transform_main` with `numArgs` op-handle arguments (the first
/// readonly, the others consumed); the builder is left inside its body.
static tr::NamedSequenceOp createEntryPoint(OpBuilder &b, ModuleOp module,
                                            unsigned numArgs) {
  MLIRContext *ctx = b.getContext();
  module->setAttr(tr::TransformDialect::kWithNamedSequenceAttrName,
                  UnitAttr::get(ctx));
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes(numArgs, anyOp(ctx));
  SmallVector<Attribute> argAttrs;
  for (unsigned i = 0; i < numArgs; ++i)
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        i == 0 ? tr::TransformDialect::kArgReadOnlyAttrName
               : tr::TransformDialect::kArgConsumedAttrName,
        UnitAttr::get(ctx))));
  auto seq = tr::NamedSequenceOp::create(
      b, module.getLoc(),
      tr::TransformDialect::kTransformEntryPointSymbolName,
      TypeAttr::get(FunctionType::get(ctx, argTypes, {})), StringAttr(),
      b.getArrayAttr(argAttrs), ArrayAttr());
  Block *body = b.createBlock(&seq.getBody(), {}, argTypes,
                              SmallVector<Location>(numArgs, module.getLoc()));
  b.setInsertionPointToStart(body);
  return seq;
}

OwningOpRef<ModuleOp> buildActionModule(MLIRContext *ctx,
                                        const AppliedAction &applied) {
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(ctx);
  tr::NamedSequenceOp seq = createEntryPoint(b, *module, 2);
  Block &body = seq.getBody().front();
  // A fusion's second step is the Scheduler's (see Fusion.h).
  buildActionTransforms(b, loc, applied, body.getArgument(0),
                        body.getArgument(1), /*producer=*/Value(),
                        /*withDeadCodeElimination=*/false);
  tr::YieldOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp> buildFusionModule(MLIRContext *ctx, int64_t producerId) {
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(ctx);
  tr::NamedSequenceOp seq = createEntryPoint(b, *module, 3);
  Block &body = seq.getBody().front();
  buildFusion(b, loc, body.getArgument(1), body.getArgument(2), producerId,
              Value());
  tr::YieldOp::create(b, loc);
  return module;
}

/// Collects the interpreter's errors and warnings into a string.
class DiagnosticCapture {
public:
  DiagnosticCapture(MLIRContext *ctx, std::string &out)
      : os(out), handler(ctx, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error ||
              diag.getSeverity() == DiagnosticSeverity::Warning) {
            os << diag.str();
            for (Diagnostic &note : diag.getNotes())
              os << "; note: " << note.str();
            os << "\n";
          }
          return success();
        }) {}

private:
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

LogicalResult applyTransformModule(ModuleOp transformModule, Operation *root,
                                   ArrayRef<Operation *> operands,
                                   std::string &error) {
  DiagnosticCapture capture(root->getContext(), error);
  auto entry = cast<tr::TransformOpInterface>(
      transformModule.getBody()->front());
  RaggedArray<tr::MappedValue> bindings;
  bindings.push_back(ArrayRef<tr::MappedValue>{root});
  for (Operation *op : operands)
    bindings.push_back(ArrayRef<tr::MappedValue>{op});
  tr::TransformOptions options;
  // The handle-invalidation checks walk the payload for every transform; the
  // generated sequences never reuse a consumed handle (replays of dumped
  // schedules in tests run with the checks on, in mlir-opt).
  options.enableExpensiveChecks(false);
  return tr::applyTransformNamedSequence(std::move(bindings), entry,
                                         transformModule, options);
}

std::string printReplayScript(MLIRContext *ctx, int64_t numOps,
                              const std::vector<AppliedAction> &actions,
                              ArrayRef<PassStep> prelude) {
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(ctx);
  tr::NamedSequenceOp seq = createEntryPoint(b, *module, 1);
  Value root = seq.getBody().front().getArgument(0);

  // Where each part starts, for its comment line.
  std::vector<std::pair<Operation *, std::string>> comments;
  auto markNext = [&](Operation *before, std::string text) {
    comments.emplace_back(before, std::move(text));
  };
  // The functions, which mlir-rl's passes run on.
  auto matchFuncs = [&]() {
    return tr::MatchOp::create(b, loc, anyOp(ctx), root,
                               b.getStrArrayAttr({"func.func"}),
                               tr::MatchInterfaceEnumAttr(), DictionaryAttr(),
                               TypeAttr(), ArrayAttr());
  };
  if (!prelude.empty()) {
    // func.func steps on the functions; a module step (the packing, whose
    // op numbering is the module's) on the root, whose handle it replaces.
    Value handle;
    bool first = true;
    for (const PassStep &step : prelude) {
      SmallVector<NamedAttribute> opts;
      for (const auto &[key, value] : step.options)
        opts.push_back(b.getNamedAttr(key, b.getBoolAttr(value)));
      for (const auto &[key, value] : step.intOptions)
        opts.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(value)));
      for (const auto &[key, values] : step.listOptions) {
        SmallVector<Attribute> items;
        for (int64_t v : values)
          items.push_back(b.getI64IntegerAttr(v));
        opts.push_back(b.getNamedAttr(key, b.getArrayAttr(items)));
      }
      Value target;
      if (step.onModule()) {
        // The module itself (the entry's argument is read-only; the pass's
        // result then stands for it).
        target = tr::MatchOp::create(b, loc, anyOp(ctx), root,
                                     b.getStrArrayAttr({"builtin.module"}),
                                     tr::MatchInterfaceEnumAttr(),
                                     DictionaryAttr(), TypeAttr(), ArrayAttr())
                     .getResult();
      } else {
        if (!handle) {
          auto funcs = matchFuncs();
          if (first)
            markNext(funcs, "The passes the pass ran first (its front end, "
                            "the packing of its rules).");
          handle = funcs.getResult();
        }
        target = handle;
      }
      auto applied = tr::ApplyRegisteredPassOp::create(
          b, loc, anyOp(ctx), target, step.name, b.getDictionaryAttr(opts),
          ValueRange());
      if (first && step.onModule())
        markNext(applied, "The passes the pass ran first (its front end, "
                          "the packing of its rules).");
      first = false;
      if (step.onModule()) {
        root = applied.getResult();
        handle = Value();
      } else {
        handle = applied.getResult();
      }
    }
  }
  // Number the linalg ops in pre-order, as the pass does.
  Operation *last = nullptr;
  if (numOps > 0) {
    auto all = tr::MatchOp::create(
        b, loc, anyOp(ctx), root, ArrayAttr(),
        tr::MatchInterfaceEnumAttr::get(ctx, tr::MatchInterfaceEnum::LinalgOp),
        DictionaryAttr(), TypeAttr(), ArrayAttr());
    markNext(all, "Number the linalg ops in pre-order, as the pass does.");
    auto split = tr::SplitHandleOp::create(b, loc, all.getResult(), numOps);
    for (int64_t i = 0; i < numOps; ++i)
      buildTag(b, loc, split.getResult(i), i);
  }
  auto match = [&](int64_t id) -> Value {
    auto attrs = b.getDictionaryAttr(
        b.getNamedAttr(kOpIdAttrName, b.getI64IntegerAttr(id)));
    return tr::MatchOp::create(b, loc, anyOp(ctx), root, ArrayAttr(),
                               tr::MatchInterfaceEnumAttr(), attrs, TypeAttr(),
                               ArrayAttr())
        .getResult();
  };
  // The first op carrying an id in program order, as the pass's lookup: a
  // producer fused into a consumer while still used elsewhere exists twice
  // (the original first, then its fused copy). Matched twice and merged so
  // that split_handle always has two payloads to split (it crashes on fewer,
  // with an overflow result, in LLVM 22).
  auto matchFirst = [&](int64_t id) -> Value {
    Value both = tr::MergeHandlesOp::create(b, loc, anyOp(ctx),
                                            ValueRange{match(id), match(id)},
                                            /*deduplicate=*/false)
                     .getResult();
    return tr::SplitHandleOp::create(b, loc, TypeRange{anyOp(ctx), anyOp(ctx)},
                                     both, /*pass_through_empty_handle=*/true,
                                     /*fail_on_payload_too_small=*/true,
                                     b.getI64IntegerAttr(1))
        .getResult(0);
  };
  for (const AppliedAction &a : actions) {
    Block *body = b.getInsertionBlock();
    last = body->empty() ? nullptr : &body->back();
    Value target = matchFirst(a.opId);
    Value producer;
    if (a.action.info().has(kFusesProducer) && a.producerOperand)
      // The op defining that operand of the consumer: the pass's producer
      // (a producer fused earlier into another consumer exists twice, the
      // fused copy and the original, which this finds).
      producer = tr::GetProducerOfOperand::create(b, loc, anyOp(ctx), target,
                                                  *a.producerOperand);
    buildActionTransforms(b, loc, a, root, target, producer,
                          /*withDeadCodeElimination=*/true);
    Operation *first = last ? last->getNextNode() : &body->front();
    markNext(first, std::to_string(a.opId) + ": " + a.action.str() +
                        (a.source.empty() ? "" : "  (" + a.source + ")"));
  }
  // The tags go, as the pass removes them. No transform op removes an
  // attribute and mlir-rl's pass needs the plugin: only a script that
  // already runs mlir-rl's passes (a prelude) does it; one without stays
  // replayable by any transform interpreter (stock mlir-opt, iree-opt) and
  // leaves the `mlir_rl.op_id` attributes.
  if (numOps > 0 && !prelude.empty()) {
    // On the module: the tags, and the front end's mark of an input that
    // came through mlir-rl-prepare.
    auto module = tr::MatchOp::create(b, loc, anyOp(ctx), root,
                                      b.getStrArrayAttr({"builtin.module"}),
                                      tr::MatchInterfaceEnumAttr(),
                                      DictionaryAttr(), TypeAttr(), ArrayAttr());
    markNext(module, "Remove the tags and the front end's mark, as the pass "
                     "does.");
    tr::ApplyRegisteredPassOp::create(b, loc, anyOp(ctx), module.getResult(),
                                      "mlir-rl-strip-op-ids",
                                      b.getDictionaryAttr({}), ValueRange());
  }
  tr::YieldOp::create(b, loc);

  // Print the sequence op by op, with the comment lines.
  std::string out;
  llvm::raw_string_ostream os(out);
  AsmState state(seq);
  os << "module attributes {transform.with_named_sequence} {\n"
     << "  transform.named_sequence @__transform_main(";
  seq.getBody().front().getArgument(0).printAsOperand(os, state);
  os << ": !transform.any_op {transform.readonly}) {\n";
  size_t next = 0;
  for (Operation &op : seq.getBody().front()) {
    while (next < comments.size() && comments[next].first == &op)
      os << "    // " << comments[next++].second << "\n";
    os << "    ";
    op.print(os, state);
    os << "\n";
  }
  os << "  }\n}\n";
  return out;
}

void removeOpIdTags(Operation *root) {
  root->walk([](Operation *op) { op->removeAttr(kOpIdAttrName); });
}

void eraseDeadOps(Operation *root) {
  IRRewriter rewriter(root->getContext());
  llvm::SetVector<Operation *> worklist;
  auto addDefiningOpsToWorklist = [&](Operation *op) {
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (root->isProperAncestor(def))
            worklist.insert(def);
    });
  };
  auto erase = [&](Operation *op) {
    op->walk([&](Operation *nested) { worklist.remove(nested); });
    rewriter.eraseOp(op);
  };
  root->walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (op != root && isOpTriviallyDead(op)) {
      addDefiningOpsToWorklist(op);
      erase(op);
    }
  });
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    addDefiningOpsToWorklist(op);
    erase(op);
  }
}

} // namespace mlir::rl
