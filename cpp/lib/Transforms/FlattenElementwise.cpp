//===- FlattenElementwise.cpp - Elementwise ops in rows of whole vectors ---===//
//
// An elementwise op over contiguous data is vectorized along its innermost
// dimension; where that extent is not a multiple of the vector register
// (14 or 28 pixels, 24 channels), each row becomes pieces of 8, 4 and 2
// lanes. The data being contiguous, the op is computed on its operands seen
// as [rows, width] with width a whole number of registers, and the result is
// reshaped back (see Passes.td, mlir-rl-flatten-elementwise).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rl {
#define GEN_PASS_DEF_FLATTENELEMENTWISE
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

/// Elements below which an op is left alone.
static constexpr int64_t kMinElements = 1 << 14;

bool mlir::rl::isElementwiseOverWholeTensors(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 1 || op.hasIndexSemantics() ||
      op.getNumLoops() < 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()) ||
        !op.getMatchingIndexingMap(&operand).isIdentity())
      return false;
    // A slice (the strided views of a rewritten pooling): its rows are
    // not contiguous, and collapsing it would copy it.
    if (!op.isDpsInit(&operand) &&
        rl::skipReshapes(operand.get()).getDefiningOp<tensor::ExtractSliceOp>())
      return false;
  }
  return true;
}

std::optional<std::pair<int64_t, int64_t>>
mlir::rl::getElementwiseFlattening(linalg::LinalgOp op) {
  if (!isElementwiseOverWholeTensors(op) || op.getNumLoops() < 2)
    return std::nullopt;
  // An input from a linalg op: the policy may fuse that producer into the
  // op's tiles (TF; in ResNet-18 a max pooling into the copy after it),
  // which the reshapes would prevent. Such ops stay.
  for (Value v : op.getDpsInputs())
    if (rl::skipReshapes(v).getDefiningOp<linalg::LinalgOp>())
      return std::nullopt;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  const LegalityConfig &legality = LegalityConfig::getDefault();
  int64_t lanes = rl::getVectorLanes(element, legality);
  if (lanes < 1 || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (extents.back() % lanes == 0)
    return std::nullopt;
  int64_t total = computeProduct(extents);
  // Small ops gain nothing measurable (a call's fixed cost dominates).
  if (total < kMinElements)
    return std::nullopt;
  for (int64_t width : {4 * lanes, 2 * lanes, lanes})
    if (width <= legality.maxVectorInnermost && total % width == 0 &&
        total / width >= 2)
      return std::pair<int64_t, int64_t>{total / width, width};
  return std::nullopt;
}

bool mlir::rl::hasOpsToFlatten(ModuleOp module) {
  return module
      .walk([](linalg::LinalgOp op) {
        return getElementwiseFlattening(op) ? WalkResult::interrupt()
                                            : WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {

/// `op` computed on its operands seen as [rows, width], its result reshaped
/// back.
void flatten(RewriterBase &rewriter, linalg::LinalgOp op, int64_t rows,
             int64_t width) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t rank = op.getNumLoops();
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  SmallVector<ReassociationIndices> toFlat = {all};
  SmallVector<ReassociationIndices> toRows = {{0, 1}};
  auto asRows = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    auto rowsType = RankedTensorType::get({rows, width}, type.getElementType());
    // A write-only init: an empty tensor of the new shape.
    if (v.getDefiningOp<tensor::EmptyOp>())
      return tensor::EmptyOp::create(rewriter, loc, rowsType.getShape(),
                                     rowsType.getElementType());
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, v, toFlat);
    return tensor::ExpandShapeOp::create(rewriter, loc, rowsType, flat, toRows);
  };
  SmallVector<Value> inputs, inits;
  for (Value v : op.getDpsInputs())
    inputs.push_back(asRows(v));
  for (Value v : op.getDpsInits())
    inits.push_back(asRows(v));
  auto resultType = cast<RankedTensorType>(inits.front().getType());
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps(inputs.size() + inits.size(),
                              AffineMap::getMultiDimIdentityMap(2, ctx));
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, inputs, inits, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel));
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().begin());
  auto originalType = cast<RankedTensorType>(op->getResult(0).getType());
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, generic.getResult(0), toRows);
  Value result = tensor::ExpandShapeOp::create(rewriter, loc, originalType,
                                               flat, toFlat);
  rewriter.replaceOp(op, result);
}

struct FlattenElementwisePass
    : public mlir::rl::impl::FlattenElementwiseBase<FlattenElementwisePass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, std::pair<int64_t, int64_t>>> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (auto shape = mlir::rl::getElementwiseFlattening(op))
        ops.push_back({op, *shape});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, shape] : ops)
      flatten(rewriter, op, shape.first, shape.second);
  }
};

} // namespace
