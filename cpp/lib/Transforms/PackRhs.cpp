//===- PackRhs.cpp - Matmuls' right-hand sides packed into panels ---------===//
//
// Which matmuls mlir-rl-pack-rhs packs (getRhsPacking, getPackCandidates;
// the panels' width, getPanelWidth), the rewrite (packRhs), the pass, and
// its step in a trace's prelude (getPackRhsStep). See Packing.h.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"
#include "PackingInternal.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"

#include <set>

namespace mlir::rl {
#define GEN_PASS_DEF_PACKRHS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace mlir::rl {

/// Elements of `elementType` in one vector register of `legality`'s
/// register file; 0 when it is unknown or does not hold whole elements.
int64_t getVectorLanes(Type elementType, const LegalityConfig &legality) {
  if (!elementType.isIntOrFloat() || legality.vectorRegisterBits <= 0)
    return 0;
  int64_t bits = elementType.getIntOrFloatBitWidth();
  if (bits <= 0 || legality.vectorRegisterBits % bits != 0)
    return 0;
  return legality.vectorRegisterBits / bits;
}

int64_t getPanelWidth(Type elementType, const LegalityConfig &legality) {
  return 2 * getVectorLanes(elementType, legality);
}

/// The extents of `op`'s loops when it is a matmul in plain form after
/// `batch` leading batch loops (loops (b...,) m, n, k; A(b..., m, k),
/// B(b..., k, n), C(b..., m, n); a contraction) with static shapes, tensor
/// semantics, one init and integer or float elements of whole bytes.
static std::optional<SmallVector<int64_t>>
getPlainExtents(linalg::LinalgOp op, unsigned batch) {
  unsigned loops = batch + 3;
  if (!op.hasPureTensorSemantics() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumLoops() != loops ||
      op.getNumParallelLoops() != loops - 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(batch, ctx),
             n = getAffineDimExpr(batch + 1, ctx),
             k = getAffineDimExpr(batch + 2, ctx);
  auto map = [&](AffineExpr row, AffineExpr column) {
    SmallVector<AffineExpr> results;
    for (unsigned b = 0; b < batch; ++b)
      results.push_back(getAffineDimExpr(b, ctx));
    results.append({row, column});
    return AffineMap::get(loops, 0, results, ctx);
  };
  SmallVector<AffineMap> plain = {map(m, k), map(k, n), map(m, n)};
  if (op.getIndexingMapsArray() != ArrayRef<AffineMap>(plain))
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat() ||
        t.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
  }
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  if (bounds.size() != loops ||
      llvm::any_of(bounds, [](int64_t b) { return b < 1; }))
    return std::nullopt;
  return bounds;
}

std::optional<std::array<int64_t, 3>>
getPlainMatmulExtents(linalg::LinalgOp op) {
  std::optional<SmallVector<int64_t>> e = getPlainExtents(op, /*batch=*/0);
  if (!e)
    return std::nullopt;
  return std::array<int64_t, 3>{(*e)[0], (*e)[1], (*e)[2]};
}

std::optional<std::vector<int64_t>> getRegisterTileExtents(linalg::LinalgOp op) {
  for (unsigned batch : {0u, 1u})
    if (std::optional<SmallVector<int64_t>> e = getPlainExtents(op, batch))
      return std::vector<int64_t>(e->begin(), e->end());
  return std::nullopt;
}

Value skipReshapes(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Whether `v` is an empty tensor, possibly through reshapes (pad-to-tiles
/// and im2col reach a matmul's accumulator as a collapse_shape of one).
bool isEmptyThroughReshapes(Value v) {
  return static_cast<bool>(skipReshapes(v).getDefiningOp<tensor::EmptyOp>());
}

namespace {

/// The constant (dense or dense_resource elements) that `v` is, possibly
/// through reshapes; null otherwise.
arith::ConstantOp getConstantThroughReshapes(Value v) {
  auto cst = skipReshapes(v).getDefiningOp<arith::ConstantOp>();
  if (cst && isa<DenseElementsAttr, DenseResourceElementsAttr>(cst.getValue()))
    return cst;
  return {};
}

/// Erases what defines `v`, from the top, while nothing reads it: the
/// reshapes producing `v`, then the op below them (a constant, an empty
/// tensor).
void eraseUnusedReshapeChain(RewriterBase &rewriter, Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!def->use_empty())
      return;
    bool reshape = isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def);
    Value below = reshape ? def->getOperand(0) : Value();
    rewriter.eraseOp(def);
    if (!reshape)
      return;
    v = below;
  }
}
} // namespace

std::optional<std::array<int64_t, 3>>
getRhsPacking(linalg::LinalgOp op, int64_t panelWidth, int64_t minRowsToCopy) {
  std::optional<std::array<int64_t, 3>> mnk = getPlainMatmulExtents(op);
  if (panelWidth <= 0 || !mnk || (*mnk)[1] % panelWidth != 0)
    return std::nullopt;
  Value rhs = op.getDpsInputs()[1];
  bool constant = static_cast<bool>(getConstantThroughReshapes(rhs));
  if (!constant && (minRowsToCopy <= 0 || (*mnk)[0] < minRowsToCopy))
    return std::nullopt;
  return mnk;
}

FailureOr<linalg::GenericOp> packRhs(RewriterBase &rewriter,
                                     linalg::LinalgOp op, int64_t panelWidth,
                                     int64_t minRowsToCopy,
                                     bool fillsInPanels) {
  std::optional<std::array<int64_t, 3>> mnk =
      getRhsPacking(op, panelWidth, minRowsToCopy);
  if (!mnk)
    return failure();
  auto [M, N, K] = *mnk;
  int64_t NB = panelWidth, J = N / NB;
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  auto packedType =
      RankedTensorType::get({J, K, NB}, rhsType.getElementType());
  auto par = utils::IteratorType::parallel;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  rewriter.setInsertionPoint(op);

  // Bp[j, k, i] = B[k, j * NB + i]: B as [K, J, NB], dims (1, 0, 2).
  Value panels;
  // A constant, also through reshapes (a filter collapsed to [K, F]).
  arith::ConstantOp cst = getConstantThroughReshapes(rhs);
  if (cst) {
    TypedAttr packed = transposeConstant(cst.getValue(), {K, J, NB},
                                         {1, 0, 2}, packedType, "_panels");
    if (!packed)
      return failure();
    panels = arith::ConstantOp::create(rewriter, loc, packedType, packed);
  } else {
    // A copy at run time (a linalg op of its own, scheduled as others).
    Value split = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({K, J, NB}, rhsType.getElementType()), rhs,
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
    Value empty = tensor::EmptyOp::create(rewriter, loc, packedType.getShape(),
                                          packedType.getElementType());
    panels =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{packedType}, ValueRange{split},
            ValueRange{empty},
            ArrayRef<AffineMap>{AffineMap::get(3, 0, {d1, d0, d2}, ctx),
                                AffineMap::getMultiDimIdentityMap(3, ctx)},
            SmallVector<utils::IteratorType>(3, par),
            [](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l, args[0]);
            })
            .getResult(0);
  }
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
  auto outType =
      RankedTensorType::get({M, J, NB}, initType.getElementType());
  // A fill of an empty tensor that only this op reads is filled in the
  // packed shape (it keeps its op id): the packed op's last producer is
  // then the fill, which a rule fuses into its tiles (reschedule).
  Value out;
  auto fill = fillsInPanels ? init.getDefiningOp<linalg::FillOp>()
                            : linalg::FillOp();
  if (fill && init.hasOneUse() &&
      isEmptyThroughReshapes(fill.getOutputs()[0])) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(fill);
    Value empty = tensor::EmptyOp::create(rewriter, fill.getLoc(),
                                          outType.getShape(),
                                          outType.getElementType());
    auto packedFill = linalg::FillOp::create(rewriter, fill.getLoc(),
                                             fill.getInputs()[0], empty);
    for (NamedAttribute attr : fill->getDiscardableAttrs())
      packedFill->setAttr(attr.getName(), attr.getValue());
    out = packedFill.getResult(0);
  } else {
    out = tensor::ExpandShapeOp::create(rewriter, loc, outType, init, split);
  }

  // Loops (m, j, i, k): A(m, k), Bp(j, k, i), C(m, j, i).
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d0, d3}, ctx),
                                 AffineMap::get(4, 0, {d1, d3, d2}, ctx),
                                 AffineMap::get(4, 0, {d0, d1, d2}, ctx)};
  SmallVector<utils::IteratorType> iterators = {par, par, par,
                                                utils::IteratorType::reduction};
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{outType}, ValueRange{lhs, panels},
      ValueRange{out}, maps, iterators);
  // The body: the op's own (a generic's region, or a named op's implicit
  // one), block arguments in the same order (a, b, c).
  IRMapping mapping;
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().end(), mapping);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    generic->setAttr(attr.getName(), attr.getValue());
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, initType, generic.getResult(0), split);
  rewriter.replaceOp(op, result);
  if (fill && fill->use_empty()) {
    // The fill, then the reshapes and the empty tensor it filled.
    Value filled = fill.getOutputs()[0];
    rewriter.eraseOp(fill);
    eraseUnusedReshapeChain(rewriter, filled);
  }
  // The reshapes between B and the constant, then the constant, once
  // nothing else reads them.
  if (cst)
    eraseUnusedReshapeChain(rewriter, rhs);
  return generic;
}

std::map<int64_t, PackCandidate> getPackCandidates(Operation *root,
                                                   int64_t minRowsToCopy,
                                                   int64_t panelWidth) {
  const LegalityConfig &legality = LegalityConfig::getDefault();
  std::map<int64_t, PackCandidate> out;
  int64_t id = 0;
  root->walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    int64_t current = id++;
    if (op.getNumDpsInits() != 1)
      return;
    Type elt = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    int64_t nb = panelWidth > 0 ? panelWidth : getPanelWidth(elt, legality);
    if (auto mnk = getRhsPacking(op, nb, minRowsToCopy))
      out[current] = {op, *mnk, nb, (int64_t)elt.getIntOrFloatBitWidth()};
  });
  return out;
}

PassStep getPackRhsStep(int64_t minRowsToCopy, bool fillsInPanels,
                        ArrayRef<int64_t> skipOps) {
  // The default threshold (no option), constants only (a flag), or another.
  PassStep step{"mlir-rl-pack-rhs", {}};
  if (minRowsToCopy <= 0)
    step.options.push_back({"constants-only", true});
  else if (minRowsToCopy != kDefaultMinRowsToCopy)
    step.intOptions.push_back({"min-rows-to-copy", minRowsToCopy});
  if (fillsInPanels)
    step.options.push_back({"fills-in-panels", true});
  if (!skipOps.empty())
    step.listOptions.push_back(
        {"skip-ops", std::vector<int64_t>(skipOps.begin(), skipOps.end())});
  return step;
}

} // namespace mlir::rl

namespace {

struct PackRhsPass : public mlir::rl::impl::PackRhsBase<PackRhsPass> {
  using PackRhsBase::PackRhsBase;

  void runOnOperation() override {
    int64_t minRows = constantsOnly ? 0 : std::max<int64_t>(0, minRowsToCopy);
    IRRewriter rewriter(&getContext());
    std::set<int64_t> skip(skipOps.begin(), skipOps.end());
    for (auto &[id, c] :
         rl::getPackCandidates(getOperation(), minRows, panelWidth))
      if (!skip.count(id) && failed(rl::packRhs(rewriter, c.op, c.panelWidth, minRows,
                             fillsInPanels)))
        c.op->emitRemark() << "mlir-rl-pack-rhs: the right-hand side could "
                            "not be packed; the op is left as it is";
  }
};

} // namespace
