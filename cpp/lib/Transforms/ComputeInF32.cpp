//===- ComputeInF32.cpp - bf16 and f16 ops computed in f32 ----------------===//
//
// mlir-rl-compute-in-f32 (see Passes.td): a linalg op on bf16 or f16 data
// computes its body in f32 and rounds once, where it stores; a reduction
// accumulates in an f32 tensor that one elementwise op rounds afterwards.
// This is what PyTorch does for these types (and what importers drop: a
// bf16 aten.mm becomes a linalg.matmul with a bf16 accumulator).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rl {
#define GEN_PASS_DEF_COMPUTEINF32
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

bool isLowPrecision(Type t) {
  return isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(t));
}

/// A conversion from or to a low-precision type (kept as is: it is what
/// the computation in f32 starts or ends with).
bool isBoundaryCast(Operation &op) {
  if (auto ext = dyn_cast<arith::ExtFOp>(op))
    return isLowPrecision(ext.getIn().getType()) &&
           !isLowPrecision(ext.getType());
  if (auto trunc = dyn_cast<arith::TruncFOp>(op))
    return isLowPrecision(trunc.getType()) &&
           !isLowPrecision(trunc.getIn().getType());
  return false;
}

/// Whether `op`'s body computes on low-precision values (more than moving
/// them or converting them at its boundary).
bool computesInLowPrecision(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return false;
  for (Operation &inner : body->without_terminator()) {
    if (isBoundaryCast(inner))
      continue;
    if (llvm::any_of(inner.getOperandTypes(), isLowPrecision) ||
        llvm::any_of(inner.getResultTypes(), isLowPrecision))
      return true;
  }
  return false;
}

/// The inits that accumulate in low precision: read by the body of an op
/// with reduction loops.
SmallVector<bool> getAccumulatingInits(linalg::LinalgOp op) {
  SmallVector<bool> out;
  for (OpOperand &init : op.getDpsInitsMutable())
    out.push_back(op.getNumReductionLoops() > 0 &&
                  isLowPrecision(init.get().getType()) &&
                  op.payloadUsesValueFromOperand(&init));
  return out;
}

/// Whether every op of `op`'s body can be computed in f32 by changing its
/// low-precision types (arith and math ops on scalars, linalg.index).
bool isRetypable(linalg::GenericOp op) {
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (inner.getNumRegions() || isa<arith::BitcastOp>(inner))
      return false;
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) &&
        !isa<linalg::IndexOp>(inner))
      return false;
    for (Type t : llvm::concat<Type>(llvm::to_vector(inner.getOperandTypes()),
                                     llvm::to_vector(inner.getResultTypes())))
      if (isLowPrecision(t) && isa<ShapedType>(t))
        return false;
  }
  return true;
}

Type widen(Type t, Type f32) { return isLowPrecision(t) ? f32 : t; }

/// `value` converted elementwise to `element` by one generic: an extf to a
/// wider type, a truncf to a narrower one.
Value convertElements(OpBuilder &b, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, element);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  bool wider = element.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{value},
             ValueRange{empty}, ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value c = wider ? arith::ExtFOp::create(nb, nl, element, args[0])
                                     .getResult()
                               : arith::TruncFOp::create(nb, nl, element,
                                                         args[0])
                                     .getResult();
               linalg::YieldOp::create(nb, nl, c);
             })
      .getResult(0);
}

/// An f32 tensor holding `init` (a low-precision tensor) extended: a fill
/// of the extended value where `init` is a fill; the pad or reshape of its
/// source extended where it is one (a convolution's padded input: the
/// extension then fuses into the op that makes the source, and the padding
/// into it as for f32); else an elementwise extf.
Value extendTensor(OpBuilder &b, Location loc, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  Type f32 = b.getF32Type();
  auto wide = RankedTensorType::get(type.getShape(), f32);
  if (auto pad = init.getDefiningOp<tensor::PadOp>()) {
    Value padValue = pad.getConstantPaddingValue();
    Attribute cst;
    Value value;
    if (padValue && matchPattern(padValue, m_Constant(&cst)) &&
        isa<FloatAttr>(cst))
      value = arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(cast<FloatAttr>(cst).getValueAsDouble()));
    else if (padValue && !pad.getRegion().isAncestor(padValue.getParentRegion()))
      value = arith::ExtFOp::create(b, loc, f32, padValue);
    if (value)
      return tensor::PadOp::create(b, loc, wide,
                                   extendTensor(b, loc, pad.getSource()),
                                   pad.getMixedLowPad(), pad.getMixedHighPad(),
                                   value, pad.getNofold());
  }
  if (auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>())
    return tensor::CollapseShapeOp::create(
        b, loc, wide, extendTensor(b, loc, collapse.getSrc()),
        collapse.getReassociationIndices());
  if (auto expand = init.getDefiningOp<tensor::ExpandShapeOp>())
    return tensor::ExpandShapeOp::create(
        b, loc, wide, extendTensor(b, loc, expand.getSrc()),
        expand.getReassociationIndices(), expand.getMixedOutputShape());
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    Value v = fill.getInputs()[0];
    if (isLowPrecision(v.getType()))
      v = arith::ExtFOp::create(b, loc, f32, v);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, init);
    Value empty = tensor::EmptyOp::create(b, loc, sizes, f32);
    return linalg::FillOp::create(b, loc, ValueRange{v}, ValueRange{empty})
        .getResult(0);
  }
  return convertElements(b, loc, init, f32);
}

/// Whether `op` is a named op with reduction loops (a contraction, a
/// convolution, a pooling) that reads a low-precision tensor.
bool isNamedReductionOnLowPrecision(linalg::LinalgOp op) {
  return !isa<linalg::GenericOp>(op.getOperation()) &&
         op.getNumReductionLoops() > 0 &&
         llvm::any_of(op.getDpsInputs(), [](Value v) {
           return isa<RankedTensorType>(v.getType()) &&
                  isLowPrecision(v.getType());
         });
}

/// Rebuilds a named op on f32 inputs (low-precision ones extended by an
/// elementwise op, a constant's at compile time by the front end's constant
/// folding) and with f32 accumulators, or returns null where it has no
/// region builder. The rules then see an f32 contraction: the matmuls'
/// packing and register tiles, the convolutions' im2col, as for f32.
Operation *rebuildNamed(RewriterBase &rewriter, linalg::LinalgOp op,
                        ArrayRef<bool> widened) {
  auto regionBuilder = op.getRegionBuilder();
  if (!regionBuilder)
    return nullptr;
  Location loc = op.getLoc();
  SmallVector<Value> inputs, inits;
  for (Value in : op.getDpsInputs())
    inputs.push_back(isa<RankedTensorType>(in.getType()) &&
                             isLowPrecision(in.getType())
                         ? extendTensor(rewriter, loc, in)
                         : in);
  for (auto [init, w] : llvm::zip(op.getDpsInits(), widened))
    inits.push_back(w ? extendTensor(rewriter, loc, init) : init);
  OperationState state(loc, op->getName());
  state.addOperands(inputs);
  state.addOperands(inits);
  state.addAttributes(op->getAttrs());
  for (Value init : inits)
    state.addTypes(init.getType());
  Region *region = state.addRegion();
  Block *block = new Block();
  region->push_back(block);
  for (Value v : llvm::concat<Value>(inputs, inits))
    block->addArgument(getElementTypeOrSelf(v.getType()), loc);
  ImplicitLocOpBuilder b(loc, rewriter);
  b.setInsertionPointToStart(block);
  regionBuilder(b, *block, op->getAttrs(),
                [&]() { return op->emitError("cannot rebuild in f32"); });
  return rewriter.create(state);
}

/// Rebuilds a generic with its body in f32 and the `widened` inits as f32
/// tensors.
Operation *rebuildGeneric(RewriterBase &rewriter, linalg::GenericOp op,
                          ArrayRef<bool> widened) {
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  SmallVector<Value> inits;
  for (auto [init, w] : llvm::zip(op.getDpsInits(), widened))
    inits.push_back(w ? extendTensor(rewriter, loc, init) : init);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange(ValueRange(inits)), op.getDpsInputs(), inits,
      op.getIndexingMapsArray(), op.getIteratorTypesArray());
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *old = op.getBody();
  OpBuilder::InsertionGuard guard(rewriter);
  Block *body = rewriter.createBlock(&generic.getRegion());
  int64_t numInputs = op.getNumDpsInputs();
  // f32 values standing for the old body's values; block arguments that
  // stay low precision also keep their own (a value passed through).
  IRMapping f32Of, same;
  for (BlockArgument arg : old->getArguments()) {
    int64_t i = arg.getArgNumber();
    bool w = i >= numInputs && widened[i - numInputs];
    BlockArgument now = body->addArgument(w ? f32 : arg.getType(), arg.getLoc());
    same.map(arg, now);
    if (w || !isLowPrecision(arg.getType()) || arg.use_empty())
      f32Of.map(arg, now);
    else
      f32Of.map(arg, arith::ExtFOp::create(rewriter, arg.getLoc(), f32, now));
  }
  // Low-precision scalars from outside the body (an epsilon), extended
  // where the body starts.
  for (Operation &inner : old->without_terminator())
    for (Value v : inner.getOperands())
      if (isLowPrecision(v.getType()) && !f32Of.contains(v) &&
          v.getParentBlock() != old)
        f32Of.map(v, arith::ExtFOp::create(rewriter, v.getLoc(), f32, v));
  for (Operation &inner : old->without_terminator()) {
    if (auto ext = dyn_cast<arith::ExtFOp>(inner)) {
      Value in = f32Of.lookupOrDefault(ext.getIn());
      f32Of.map(ext.getResult(),
                in.getType() == ext.getType()
                    ? in
                    : arith::ExtFOp::create(rewriter, ext.getLoc(),
                                            ext.getType(), in)
                          .getResult());
      continue;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(inner)) {
      Value in = f32Of.lookupOrDefault(trunc.getIn());
      Type to = widen(trunc.getType(), f32);
      f32Of.map(trunc.getResult(),
                in.getType() == to
                    ? in
                    : arith::TruncFOp::create(rewriter, trunc.getLoc(), to, in)
                          .getResult());
      continue;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
      auto value = dyn_cast<FloatAttr>(cst.getValue());
      if (value && isLowPrecision(value.getType())) {
        f32Of.map(cst.getResult(),
                  arith::ConstantOp::create(
                      rewriter, cst.getLoc(),
                      rewriter.getF32FloatAttr(value.getValueAsDouble())));
        continue;
      }
    }
    Operation *copy = rewriter.clone(inner, f32Of);
    for (OpResult r : copy->getResults())
      r.setType(widen(r.getType(), f32));
  }
  auto yield = cast<linalg::YieldOp>(old->getTerminator());
  SmallVector<Value> yielded;
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    Type want = body->getArgument(numInputs + i).getType();
    Value f = f32Of.lookupOrDefault(v);
    if (f.getType() == want) {
      yielded.push_back(f);
      continue;
    }
    // A low-precision value passed through: the argument itself, or the
    // value from outside the body.
    Value kept = same.lookupOrDefault(v);
    bool fromBody = v.getParentBlock() == old && !isa<BlockArgument>(v);
    if (!fromBody && kept.getType() == want) {
      yielded.push_back(kept);
      continue;
    }
    if (isLowPrecision(f.getType()))
      f = arith::ExtFOp::create(rewriter, yield.getLoc(), rewriter.getF32Type(), f);
    yielded.push_back(
        f.getType() == want
            ? f
            : arith::TruncFOp::create(rewriter, yield.getLoc(), want, f).getResult());
  }
  linalg::YieldOp::create(rewriter, yield.getLoc(), yielded);
  return generic;
}

struct ComputeInF32Pass
    : public mlir::rl::impl::ComputeInF32Base<ComputeInF32Pass> {
  void runOnOperation() override {
    // Each op with the inits that become f32 accumulators.
    SmallVector<std::pair<linalg::LinalgOp, SmallVector<bool>>> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      SmallVector<bool> widened = getAccumulatingInits(op);
      if (llvm::is_contained(widened, true) || computesInLowPrecision(op) ||
          isNamedReductionOnLowPrecision(op))
        ops.emplace_back(op, std::move(widened));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, widened] : ops) {
      rewriter.setInsertionPoint(op);
      Operation *now = nullptr;
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      // A named op that accumulates and computes nothing else in low
      // precision keeps its name (the rules know matmuls by it).
      if (!generic && !computesInLowPrecisionBeyondInputs(op))
        now = rebuildNamed(rewriter, op, widened);
      if (!now) {
        if (!generic) {
          FailureOr<linalg::GenericOp> g =
              linalg::generalizeNamedOp(rewriter, op);
          if (failed(g))
            continue;
          generic = *g;
          rewriter.setInsertionPoint(generic);
        }
        if (!isRetypable(generic))
          continue;
        now = rebuildGeneric(rewriter, generic, widened);
        op = generic;
      }
      SmallVector<Value> results;
      for (auto [old, res, w] :
           llvm::zip(op->getResults(), now->getResults(), widened))
        results.push_back(w ? convertElements(rewriter, op.getLoc(), res,
                                              getElementTypeOrSelf(old))
                            : res);
      rewriter.replaceOp(op, results);
    }
  }

  /// A named op's body beyond casting its inputs to the accumulator's type
  /// (which the rebuilt op does in f32): low-precision arithmetic of
  /// another kind (a named elementwise op) is generalized instead.
  static bool computesInLowPrecisionBeyondInputs(linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return computesInLowPrecision(op);
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(inner))
        continue;
      // The accumulation itself (mul, add, max on the accumulator's type)
      // is what the rebuilt op computes in f32.
      if (isa<arith::ArithDialect>(inner.getDialect()))
        continue;
      if (llvm::any_of(inner.getOperandTypes(), isLowPrecision) ||
          llvm::any_of(inner.getResultTypes(), isLowPrecision))
        return true;
    }
    return false;
  }
};

} // namespace

bool mlir::rl::hasLowPrecisionOps(ModuleOp module) {
  return module
      .walk([](linalg::LinalgOp op) {
        return llvm::any_of(op->getOperandTypes(), isLowPrecision) ||
                       llvm::any_of(op->getResultTypes(), isLowPrecision)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}
