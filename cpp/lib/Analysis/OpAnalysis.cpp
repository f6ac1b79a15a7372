//===- OpAnalysis.cpp - What a linalg op is, structurally -----------------===//
#include "mlir-rl/Analysis/OpAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

namespace mlir::rl {

/// An elementwise op whose body adds its two inputs and yields the sum.
static bool isElementwiseAdd(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isElementwise(op) || op->getNumRegions() != 1)
    return false;
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 2)
    return false;
  Operation &add = body->front();
  if (!isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  auto isInput = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body && arg.getArgNumber() < 2;
  };
  auto yield = dyn_cast<linalg::YieldOp>(body->back());
  return isInput(add.getOperand(0)) && isInput(add.getOperand(1)) &&
         add.getOperand(0) != add.getOperand(1) && yield &&
         yield->getNumOperands() == 1 &&
         yield->getOperand(0) == add.getResult(0);
}

OpKind classifyOp(linalg::LinalgOp op) {
  Operation *operation = op.getOperation();
  if (isa<linalg::FillOp>(operation))
    return OpKind::Fill;
  if (auto generic = dyn_cast<linalg::GenericOp>(operation))
    if (linalg::isaFillOpInterface(generic))
      return OpKind::Fill;
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (succeeded(dims))
      return dims->batch.empty() ? OpKind::Matmul : OpKind::BatchMatmul;
  }
  if (linalg::isaConvolutionOpInterface(op)) {
    FailureOr<linalg::ConvolutionDimensions> dims =
        linalg::inferConvolutionDims(op);
    if (succeeded(dims) && dims->outputImage.size() == 2) {
      if (!dims->depth.empty())
        return OpKind::DepthwiseConv2D;
      if (dims->outputChannel.empty() && dims->inputChannel.empty())
        return OpKind::Pooling;
      return OpKind::Conv2D;
    }
  }
  if (isElementwiseAdd(op))
    return OpKind::Add;
  if (isa<linalg::GenericOp>(operation))
    return OpKind::Generic;
  return OpKind::Unknown;
}

SmallVector<int64_t> getLoopBounds(linalg::LinalgOp op) {
  return op.getStaticLoopRanges();
}

LogicalResult accumulateLinear(AffineExpr expr, int64_t scale,
                               MutableArrayRef<int64_t> row) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    if (dim.getPosition() >= row.size() - 1)
      return failure();
    row[dim.getPosition()] += scale;
    return success();
  }
  if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
    row.back() += scale * cst.getValue();
    return success();
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!bin)
    return failure(); // symbols
  if (expr.getKind() == AffineExprKind::Add)
    return success(succeeded(accumulateLinear(bin.getLHS(), scale, row)) &&
                   succeeded(accumulateLinear(bin.getRHS(), scale, row)));
  if (expr.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return accumulateLinear(bin.getLHS(), scale * c.getValue(), row);
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return accumulateLinear(bin.getRHS(), scale * c.getValue(), row);
  }
  return failure(); // mod, floordiv, ceildiv, products of dims
}

LogicalResult checkSupported(linalg::LinalgOp op, const FeatureLayout &layout,
                             std::string &reason) {
  if (!op.hasPureTensorSemantics()) {
    reason = "operands are not all tensors (memref semantics)";
    return failure();
  }
  int64_t numLoops = op.getNumLoops();
  if (numLoops == 0) {
    reason = "op has no loops";
    return failure();
  }
  if (numLoops > layout.maxLoops) {
    reason = "op has " + std::to_string(numLoops) + " loops, more than the " +
             std::to_string(layout.maxLoops) + " the feature layout allows";
    return failure();
  }
  if ((int64_t)op->getNumOperands() > layout.maxOperands) {
    reason = "op has " + std::to_string(op->getNumOperands()) +
             " operands, more than " + std::to_string(layout.maxOperands);
    return failure();
  }
  for (OpOperand &operand : op->getOpOperands()) {
    auto shaped = dyn_cast<ShapedType>(operand.get().getType());
    if (!shaped)
      continue;
    if (!shaped.hasStaticShape()) {
      reason = "operand #" + std::to_string(operand.getOperandNumber()) +
               " has a dynamic shape";
      return failure();
    }
    if (shaped.getRank() > layout.maxRank) {
      reason = "operand #" + std::to_string(operand.getOperandNumber()) +
               " has rank " + std::to_string(shaped.getRank()) +
               ", more than " + std::to_string(layout.maxRank);
      return failure();
    }
  }
  SmallVector<int64_t> bounds = getLoopBounds(op);
  for (size_t l = 0; l < bounds.size(); ++l)
    if (bounds[l] == 0) {
      reason = "loop " + std::to_string(l) +
               " has extent 0 (an empty iteration space: nothing to schedule)";
      return failure();
    }
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (map.getNumSymbols() != 0) {
      reason = "indexing map has symbols";
      return failure();
    }
    for (AffineExpr e : map.getResults()) {
      SmallVector<int64_t> row(numLoops + 1, 0);
      if (failed(accumulateLinear(e, 1, row))) {
        reason = "indexing map is not an affine linear access";
        return failure();
      }
    }
  }
  return success();
}

std::optional<WindowExtents> getDecomposableWindow(linalg::LinalgOp op) {
  // The named 2-D ops upstream `transform.structured.decompose` rewrites to
  // their 1-D form once a window dimension and its output are 1.
  if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp,
           linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcSumOp,
           linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMaxUnsignedOp,
           linalg::PoolingNhwcMinOp, linalg::PoolingNhwcMinUnsignedOp,
           linalg::PoolingNchwSumOp, linalg::PoolingNchwMaxOp>(
          op.getOperation()))
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || dims->outputImage.size() != 2 ||
      dims->filterLoop.size() != 2)
    return std::nullopt;
  SmallVector<int64_t> b = getLoopBounds(op);
  WindowExtents w;
  w.height = {b[dims->outputImage[0]], b[dims->filterLoop[0]]};
  w.width = {b[dims->outputImage[1]], b[dims->filterLoop[1]]};
  return w;
}

} // namespace mlir::rl
