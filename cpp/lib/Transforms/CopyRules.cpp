//===- CopyRules.cpp - Copies and fills scheduled by rule -----------------===//
//
// getCopySchedule (Packing.h): the schedule by rule of copies, fills and
// elementwise ops over whole tensors; isAccumulatorFill
// (PackingInternal.h): the fills that reschedule moves into their
// consumers' tiles.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"
#include "PackingInternal.h"
#include "mlir-rl/Transforms/Padding.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::rl {

namespace {
using Sizes = std::vector<int64_t>;
} // namespace

std::optional<std::vector<Action>>
getCopySchedule(linalg::LinalgOp op, const LegalityConfig &legality,
                const FeatureLayout &layout) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  bool fill = isa<linalg::FillOp>(op.getOperation());
  // An elementwise generic over contiguous data: every operand through the
  // identity map (mlir-rl-flatten-elementwise's ops among them).
  bool elementwise = generic && isElementwiseOverWholeTensors(op);
  if ((!generic && !fill) || !op.hasPureTensorSemantics() ||
      (op.getNumDpsInputs() != 1 && !elementwise) ||
      op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() || op.getNumLoops() < 2)
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  int64_t lanes = getVectorLanes(element, legality);
  if (lanes < 1 || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t n = op.getNumLoops();
  if (generic && !elementwise) {
    Block &body = generic.getRegion().front();
    auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
    if (body.getOperations().size() != 1 || !yield ||
        yield->getNumOperands() != 1 ||
        yield->getOperand(0) != body.getArgument(0))
      return std::nullopt;
    AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    if (!op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity() ||
        !in.isProjectedPermutation() || in.getNumResults() == 0 ||
        in.getResults().back() != getAffineDimExpr(n - 1, op.getContext()))
      return std::nullopt;
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  // A copy's rows hold whole vectors; a fill's at least one (its stores
  // need no aligned loads).
  if (llvm::any_of(extents, [](int64_t e) { return e < 1; }) ||
      extents.back() < lanes || (!fill && extents.back() % lanes != 0))
    return std::nullopt;
  // The largest tile candidate dividing `extent` for which `fits` holds.
  auto largest = [&](int64_t extent, auto fits) -> int64_t {
    int64_t best = 0;
    for (int64_t c : layout.tileCandidates)
      if (c > 0 && c <= extent && extent % c == 0 && fits(c))
        best = std::max(best, c);
    return best;
  };
  // Parallel: the outer loops, from the outermost, into at least
  // kMinIterations iterations (each loop whole, split or untiled).
  constexpr int64_t kMinIterations = 8;
  Sizes parallel(n, 0), tile(extents.begin(), extents.end());
  int64_t iterations = 1;
  for (int64_t i = 0; i + 1 < n && iterations < kMinIterations; ++i) {
    if (extents[i] == 1)
      continue;
    int64_t c = largest(extents[i], [&](int64_t c) {
      return iterations * (extents[i] / c) >= kMinIterations;
    });
    if (c == 0)
      c = 1;
    parallel[i] = c, tile[i] = c;
    iterations *= extents[i] / c;
  }
  if (iterations == 1)
    return std::nullopt;
  // Vectors: whole rows up to the innermost limit (else the largest
  // candidate), then outer loops while the tile holds at most
  // kVectorElements elements.
  constexpr int64_t kVectorElements = 128;
  Sizes vector(n, 0);
  int64_t inner = tile[n - 1];
  if (inner > legality.maxVectorInnermost) {
    inner = largest(tile[n - 1], [&](int64_t c) {
      return c <= legality.maxVectorInnermost && c % lanes == 0;
    });
    if (inner == 0)
      return std::nullopt;
    vector[n - 1] = inner;
  }
  int64_t elements = inner;
  for (int64_t i = n - 2; i >= 0; --i) {
    if (elements * tile[i] <= kVectorElements) {
      elements *= tile[i];
      continue;
    }
    int64_t c = largest(tile[i], [&](int64_t c) {
      return elements * c <= kVectorElements;
    });
    if (c == 0)
      c = 1;
    if (c < tile[i])
      vector[i] = c;
    elements *= c;
  }
  if (elements > legality.maxVectorElements ||
      elements / inner > legality.maxVectorRows)
    return std::nullopt;
  std::vector<Action> out = {{ActionKind::TiledParallelization, parallel}};
  if (llvm::any_of(vector, [](int64_t v) { return v != 0; }))
    out.push_back({ActionKind::Tiling, vector});
  out.push_back({ActionKind::Vectorization, {}});
  if ((int)out.size() > layout.historyLength)
    return std::nullopt;
  return out;
}

/// A linalg.fill of an empty tensor (possibly reshaped) whose result only
/// initialises one linalg op's output (an accumulator).
bool isAccumulatorFill(linalg::LinalgOp op) {
  auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
  if (!fill || !fill.hasPureTensorSemantics() ||
      !isEmptyThroughReshapes(fill.getOutputs()[0]) ||
      !fill->getResult(0).hasOneUse())
    return false;
  OpOperand &use = *fill->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return consumer && consumer.isDpsInit(&use);
}

} // namespace mlir::rl
