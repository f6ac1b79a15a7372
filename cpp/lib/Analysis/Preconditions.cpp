//===- Preconditions.cpp - When a transformation is legal -----------------===//
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Analysis/OpAnalysis.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <sstream>

namespace mlir::rl {

const LegalityConfig &LegalityConfig::getDefault() {
  static const LegalityConfig config;
  return config;
}

std::string LegalityConfig::getDescription() const {
  std::ostringstream os;
  // Bump the version whenever a rule of the action space changes meaning.
  // v2: TP/TF must split a loop (llvm-project#222143); ops with an empty
  // iteration space are not scheduled.
  // v3: the `divide` rule (tile sizes divide their loops).
  // v4: an op's last action slot takes only V or NT.
  // v5: V bounds the rows read through strided views (`strided`).
  os << "mlir-rl-legality-v5;vecmax=" << maxVectorInnermost
     << ";vecelts=" << maxVectorElements << ";vecrows=" << maxVectorRows
     << ";strided=" << maxStridedRowReads
     << ";divide=" << (dividingTiles ? 1 : 0);
  return os.str();
}

std::string LegalityConfig::getHash() const {
  return getStableHash(getDescription());
}

/// Whether `v` is read through a view whose innermost stride is not 1: a
/// chain of tensor.extract_slice ops (a tile of a strided window view is a
/// unit-stride slice of a strided one) with a non-unit innermost stride.
static bool isStridedView(Value v) {
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (slice.getSourceType().getRank() != slice.getResultType().getRank())
      return false; // rank-reducing: not what the window rewrite makes
    std::optional<int64_t> stride =
        getConstantIntValue(slice.getMixedStrides().back());
    if (!stride || *stride != 1)
      return true;
    v = slice.getSource();
  }
  return false;
}

bool needsDecomposition(linalg::LinalgOp op) {
  return getDecomposableWindow(op).has_value();
}

LogicalResult vectorizationPrecondition(linalg::LinalgOp op,
                                        const LegalityConfig &config,
                                        std::string *reason) {
  auto fail = [&](const std::string &why) {
    if (reason)
      *reason = why;
    return failure();
  };
  if (!op.hasPureTensorSemantics())
    return fail("op does not have tensor semantics");
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<ShapedType>(v.getType()); t && !t.hasStaticShape())
      return fail("operand shapes are not static (a tile size does not "
                  "divide its loop)");
  SmallVector<int64_t> bounds = getLoopBounds(op);
  if (bounds.empty())
    return fail("op has no loops");
  if (llvm::is_contained(bounds, 0))
    return fail("op has an empty iteration space");
  if (bounds.back() > config.maxVectorInnermost)
    return fail("innermost loop extent " + std::to_string(bounds.back()) +
                " exceeds " + std::to_string(config.maxVectorInnermost));
  int64_t elements = 1;
  for (int64_t b : bounds)
    elements *= b;
  if (elements > config.maxVectorElements)
    return fail("iteration space of " + std::to_string(elements) +
                " points exceeds " + std::to_string(config.maxVectorElements) +
                " (tile first)");
  std::optional<WindowExtents> window = getDecomposableWindow(op);
  // (Convolutions and pooling are vectorized after decomposition into 1-D
  // ops whose vectors do not follow the 2-D loop nest: only the element
  // limit applies to them.)
  if (!window && elements / bounds.back() > config.maxVectorRows)
    return fail(std::to_string(elements / bounds.back()) +
                " vector rows (iteration space / innermost extent) exceed " +
                std::to_string(config.maxVectorRows) + " (tile first)");
  if (window) {
    if (!((window->height[0] == 1 && window->height[1] == 1) ||
          (window->width[0] == 1 && window->width[1] == 1)))
      return fail("2-D convolution/pooling needs its output and window "
                  "height (or width) tiled to 1 before vectorization");
    return success();
  }
  if (int64_t strided = llvm::count_if(op.getDpsInputs(), isStridedView)) {
    int64_t rows = elements / bounds.back();
    if (rows * strided > config.maxStridedRowReads)
      return fail(std::to_string(rows) + " vector rows read from " +
                  std::to_string(strided) + " strided views (" +
                  std::to_string(rows * strided) + " row reads) exceed " +
                  std::to_string(config.maxStridedRowReads) + " (tile first)");
  }
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return fail("the linalg vectorizer does not support this op");
  return success();
}

} // namespace mlir::rl
