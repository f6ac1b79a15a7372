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

/// Ops scheduled by rule run in parallel over at least this many iterations.
constexpr int64_t kMinIterations = 8;

/// The rules' parallel tiling: the loops before the innermost one that
/// `skip` leaves (a reduction, the other side of a transpose), from the
/// outermost, each the largest tile candidate dividing it that still gives
/// kMinIterations iterations in all (else tiles of 1), until there are that
/// many; set in `parallel` and `tile`. Returns the iterations.
static int64_t splitForParallelism(ArrayRef<int64_t> extents,
                                   const FeatureLayout &layout,
                                   llvm::function_ref<bool(int64_t)> skip,
                                   Sizes &parallel, Sizes &tile) {
  int64_t n = extents.size(), iterations = 1;
  for (int64_t i = 0; i + 1 < n && iterations < kMinIterations; ++i) {
    if (skip(i) || extents[i] == 1)
      continue;
    int64_t c = 0;
    for (int64_t k : layout.tileCandidates)
      if (k > 0 && k <= extents[i] && extents[i] % k == 0 &&
          iterations * (extents[i] / k) >= kMinIterations)
        c = std::max(c, k);
    if (c == 0)
      c = 1;
    parallel[i] = c, tile[i] = c;
    iterations *= extents[i] / c;
  }
  return iterations;
}

/// A rule's schedule: TP(parallel), T(vector) where it tiles anything, V;
/// none when the op's history cannot hold it.
static std::optional<std::vector<Action>>
makeRuleSchedule(const Sizes &parallel, const Sizes &vector,
                 const FeatureLayout &layout) {
  std::vector<Action> out = {{ActionKind::TiledParallelization, parallel}};
  if (llvm::any_of(vector, [](int64_t v) { return v != 0; }))
    out.push_back({ActionKind::Tiling, vector});
  out.push_back({ActionKind::Vectorization, {}});
  if ((int)out.size() > layout.historyLength)
    return std::nullopt;
  return out;
}

/// A row op: a generic over rows of its innermost loop, as softmax, layer
/// norm and RMS norm are imported (torch-mlir: a max, an exp, a sum, a
/// division; a mean, a variance, a scale): every loop parallel, or all but
/// the innermost, which reduces (a row reduction); each operand either runs
/// along the rows (the innermost loop is its last dimension: the row
/// itself, or a per-column vector such as a norm's weight) or holds one
/// value per row (it does not use the innermost loop: a row's max, sum or
/// mean); the result is written in loop order. Not a copy, not a
/// contraction (a matrix-vector product is the policy's), no index in the
/// body; an all-parallel one reads a per-row value and not its output.
static bool isRowOp(linalg::GenericOp op) {
  int64_t n = op.getNumLoops();
  if (n < 2 || op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      linalg::isaContractionOpInterface(op))
    return false;
  auto iterators = op.getIteratorTypesArray();
  for (int64_t i = 0; i + 1 < n; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return false;
  bool reduction = iterators[n - 1] == utils::IteratorType::reduction;
  Block &body = op.getRegion().front();
  if (llvm::any_of(body,
                   [](Operation &inner) { return isa<linalg::IndexOp>(inner); }))
    return false;
  // A copy (the copies' rule below), or an all-parallel op that reads its
  // output (a pooling's or depthwise convolution's taps unrolled into one
  // op: by rule, NHWC max poolings of 96 and 384 channels ran 1.2x slower).
  if (body.getOperations().size() == 1 ||
      (!reduction && !op.getMatchingBlockArgument(op.getDpsInitOperand(0))
                          .use_empty()))
    return false;
  MLIRContext *ctx = op.getContext();
  AffineExpr row = getAffineDimExpr(n - 1, ctx);
  bool alongRows = false, perRow = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    if (map.getNumResults() > 0 && map.getResults().back() == row)
      alongRows = true;
    else if (map.isFunctionOfDim(n - 1))
      return false;
    else
      perRow = true;
  }
  // An all-parallel one combines rows with per-row values (a max, a sum, a
  // mean): taps of a window over rows of channels (a max pooling unrolled
  // by mlir-rl-unroll-windows) stay the policy's.
  if (!reduction && !perRow)
    return false;
  // The result: the loops in order (the innermost one only when it is
  // parallel), with unit dimensions (a constant 0) anywhere.
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  int64_t next = 0;
  for (AffineExpr e : out.getResults()) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0)
        return false;
      continue;
    }
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || (int64_t)d.getPosition() != next++)
      return false;
  }
  return alongRows && next == (reduction ? n - 1 : n);
}

/// An op that reads a row op's result or whose result a row op reads.
static bool isPerRowCompanion(Operation *op) {
  auto isRowGeneric = [](Operation *o) {
    auto g = dyn_cast_or_null<linalg::GenericOp>(o);
    return g && g.hasPureTensorSemantics() && isRowOp(g);
  };
  for (Value operand : op->getOperands())
    if (isRowGeneric(operand.getDefiningOp()))
      return true;
  for (Operation *user : op->getUsers())
    if (isRowGeneric(user))
      return true;
  return false;
}

/// A column reduction: a generic whose innermost loop is parallel and which
/// reduces over outer loops (a sum or mean over axis 0, over a sequence, over
/// a batch): every input a projected permutation that runs along the
/// innermost loop (its last dimension) or does not use it; the result the
/// parallel loops in order. Not a contraction, no index in the body.
static bool isColumnReduction(linalg::GenericOp op) {
  int64_t n = op.getNumLoops();
  if (n < 2 || op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || linalg::isaContractionOpInterface(op))
    return false;
  auto iterators = op.getIteratorTypesArray();
  if (iterators[n - 1] != utils::IteratorType::parallel)
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() == 1 ||
      llvm::any_of(body,
                   [](Operation &inner) { return isa<linalg::IndexOp>(inner); }))
    return false;
  MLIRContext *ctx = op.getContext();
  AffineExpr column = getAffineDimExpr(n - 1, ctx);
  bool along = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    if (map.getNumResults() > 0 && map.getResults().back() == column)
      along = true;
    else if (map.isFunctionOfDim(n - 1))
      return false;
  }
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<AffineExpr> expected;
  for (int64_t i = 0; i < n; ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      expected.push_back(getAffineDimExpr(i, ctx));
  return along && out.getResults() == ArrayRef<AffineExpr>(expected);
}

/// The rule's schedule of a column reduction: the parallel loops in
/// parallel (the outer ones first; the columns in pieces of kColumnPiece
/// where the outer ones give fewer than kMinIterations and a row is at most
/// a page), then vector tiles of kVectorColumns columns (at most) by as
/// many reduced rows as make kColumnTile elements. A sum over axis 0 (2
/// threads, 2026-11-29): 4096x256, the policy's TF(0,4) T(8,4) V 0.33 ms,
/// TP(0,64) T(8,32) V 0.06 ms (T(16,64), T(8,64), T(4,64): 0.07-0.09;
/// PyTorch 0.077); 256x1024, 0.026 and 0.027 ms.
static std::optional<std::vector<Action>>
getColumnReductionSchedule(linalg::GenericOp op, const LegalityConfig &legality,
                           const FeatureLayout &layout) {
  if (!op.hasPureTensorSemantics() || !isColumnReduction(op))
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  int64_t lanes = getVectorLanes(element, legality);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t n = extents.size();
  if (lanes < 1 || llvm::any_of(extents, [](int64_t e) { return e < 1; }) ||
      extents.back() % lanes != 0)
    return std::nullopt;
  constexpr int64_t kColumnPiece = 64, kVectorColumns = 32, kColumnTile = 256;
  auto isCandidate = [&](int64_t c) {
    return llvm::is_contained(layout.tileCandidates, c);
  };
  auto iterators = op.getIteratorTypesArray();
  Sizes parallel(n, 0), tile(extents.begin(), extents.end());
  int64_t iterations = splitForParallelism(
      extents, layout,
      [&](int64_t i) { return iterators[i] != utils::IteratorType::parallel; },
      parallel, tile);
  // Pieces of columns only where a row is at most a page: a piece of a
  // longer row reads a new page in every row (a sum over axis 0 of
  // 1024x4096 ran 2x slower in pieces of 64 than the policy's walk along
  // whole rows on one thread).
  constexpr int64_t kPageBytes = 4096;
  int64_t columns = extents[n - 1];
  int64_t rowBytes = columns * element.getIntOrFloatBitWidth() / 8;
  if (iterations < kMinIterations && rowBytes <= kPageBytes &&
      columns >= 2 * kColumnPiece &&
      columns % kColumnPiece == 0 && kColumnPiece % lanes == 0 &&
      isCandidate(kColumnPiece)) {
    parallel[n - 1] = kColumnPiece, tile[n - 1] = kColumnPiece;
    iterations *= columns / kColumnPiece;
  }
  if (iterations == 1)
    return std::nullopt;
  Sizes vector(n, 0);
  int64_t inner = tile[n - 1];
  if (inner > kVectorColumns) {
    if (inner % kVectorColumns != 0 || kVectorColumns % lanes != 0 ||
        !isCandidate(kVectorColumns))
      return std::nullopt;
    vector[n - 1] = inner = kVectorColumns;
  }
  // The reduced loops, innermost first, take the rest of the tile; the
  // parallel loops outside the columns go one at a time.
  int64_t elements = inner;
  for (int64_t i = n - 2; i >= 0; --i) {
    bool reduced = iterators[i] == utils::IteratorType::reduction;
    int64_t c = 1;
    if (reduced)
      for (int64_t k : layout.tileCandidates)
        if (k > 0 && k <= tile[i] && tile[i] % k == 0 &&
            elements * k <= kColumnTile)
          c = std::max(c, k);
    if (c < tile[i]) {
      if (!isCandidate(c))
        return std::nullopt;
      vector[i] = c;
    }
    elements *= c;
  }
  if (elements > legality.maxVectorElements ||
      elements / inner > legality.maxVectorRows)
    return std::nullopt;
  return makeRuleSchedule(parallel, vector, layout);
}

/// The rule's schedule of a transpose: a copy (a body that yields its one
/// input) into its result in loop order from an input whose innermost
/// dimension is another loop `p` (an NCHW activation read as NHWC). The
/// loops outside both innermost ones in parallel (into at least
/// kMinIterations), then blocks of kTransposeRows along `p` by one vector
/// register along the result's innermost loop, transposed in registers: each
/// block reads whole rows of the input and writes whole rows of the result.
/// An NCHW 3x3 convolution of 160 channels at 32x32 (2 threads,
/// 2026-11-29): its input's transpose by the policy's decisions, one
/// 160-channel pixel gathered from 160 pages per step, took a quarter of
/// the convolution, 1.05 ms; in 8x8 blocks 0.82 ms (32x8: 0.80).
static std::optional<std::vector<Action>>
getTransposeSchedule(linalg::GenericOp op, const LegalityConfig &legality,
                     const FeatureLayout &layout) {
  int64_t n = op.getNumLoops();
  if (n < 2 || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 || !yield ||
      yield->getNumOperands() != 1 || yield->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity() ||
      !in.isPermutation())
    return std::nullopt;
  int64_t p = cast<AffineDimExpr>(in.getResults().back()).getPosition();
  if (p == n - 1)
    return std::nullopt; // a plain copy
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  int64_t lanes = getVectorLanes(element, legality);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  constexpr int64_t kTransposeRows = 8;
  auto isCandidate = [&](int64_t c) {
    return llvm::is_contained(layout.tileCandidates, c);
  };
  if (lanes < 1 || llvm::any_of(extents, [](int64_t e) { return e < 1; }) ||
      extents[n - 1] % lanes != 0 || extents[p] % kTransposeRows != 0 ||
      !isCandidate(lanes) || !isCandidate(kTransposeRows))
    return std::nullopt;
  Sizes parallel(n, 0), vector(n, 0);
  Sizes tile(extents.begin(), extents.end());
  int64_t iterations = splitForParallelism(
      extents, layout, [&](int64_t i) { return i == p; }, parallel, tile);
  // Too few: the input's rows too, in whole blocks (a 2-D transpose).
  if (iterations < kMinIterations && extents[p] >= 2 * kTransposeRows) {
    int64_t best = 0;
    for (int64_t c : layout.tileCandidates)
      if (c >= kTransposeRows && c % kTransposeRows == 0 && c < extents[p] &&
          extents[p] % c == 0 &&
          (best == 0 || iterations * (extents[p] / c) >= kMinIterations))
        best = std::max(best, c);
    if (best != 0) {
      parallel[p] = best, tile[p] = best;
      iterations *= extents[p] / best;
    }
  }
  if (iterations == 1)
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t want = i == p ? kTransposeRows : i == n - 1 ? lanes : 1;
    if (tile[i] > want)
      vector[i] = want;
  }
  return makeRuleSchedule(parallel, vector, layout);
}

std::optional<std::vector<Action>>
getCopySchedule(linalg::LinalgOp op, const LegalityConfig &legality,
                const FeatureLayout &layout) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    if (auto columns = getColumnReductionSchedule(generic, legality, layout))
      return columns;
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    if (auto transpose = getTransposeSchedule(generic, legality, layout))
      return transpose;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  bool fill = isa<linalg::FillOp>(op.getOperation());
  // An elementwise generic over contiguous data: every operand through the
  // identity map (mlir-rl-flatten-elementwise's ops among them).
  bool elementwise = generic && isElementwiseOverWholeTensors(op);
  bool rows = generic && !elementwise && op.hasPureTensorSemantics() &&
              isRowOp(generic);
  if ((!generic && !fill) || !op.hasPureTensorSemantics() ||
      (op.getNumDpsInputs() != 1 && !elementwise && !rows) ||
      op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 ||
      (op.getNumLoops() != op.getNumParallelLoops() && !rows) ||
      op.getNumLoops() < 2)
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  int64_t lanes = getVectorLanes(element, legality);
  if (lanes < 1 || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t n = op.getNumLoops();
  if (generic && !elementwise && !rows) {
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
  // need no aligned loads). So do an elementwise op's, but for one over
  // one value per row that a row op reads or computes (a layer norm's
  // mean, its 1/sqrt(var + eps): loops R x 1): it is split as the row ops
  // are, so that their foralls become one parallel region
  // (mlir-rl-fuse-foralls); by the policy (TP(4,0) V) an imported layer
  // norm ran in seven.
  bool perRow = elementwise && extents.back() == 1 &&
                isPerRowCompanion(op.getOperation());
  if (llvm::any_of(extents, [](int64_t e) { return e < 1; }) ||
      ((extents.back() < lanes || (!fill && extents.back() % lanes != 0)) &&
       !perRow))
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
  Sizes parallel(n, 0), tile(extents.begin(), extents.end());
  int64_t iterations = splitForParallelism(
      extents, layout, [](int64_t) { return false; }, parallel, tile);
  if (iterations == 1)
    return std::nullopt;
  // Vectors: whole rows up to the innermost limit (else the largest
  // candidate), then outer loops while the tile holds at most
  // kVectorElements elements.
  constexpr int64_t kVectorElements = 128;
  // A row op's body is more than a move (an exp, a division, a reduction's
  // accumulator): rows longer than kVectorElements go in pieces of at most
  // kRowVectorInnermost, with a second row beside where one fits. Whole
  // 384-wide rows (TP(32,0) T(1,0) V) ran a 384x384 softmax 1.2x slower
  // than the policy's decisions, pieces of 64 (T(2,64)) 1.3x faster
  // (2026-11-29). Shorter rows stay whole (a 112-wide NCHW batch norm's in
  // pieces of 16 would be 7 times the iterations).
  constexpr int64_t kRowVectorInnermost = 64;
  int64_t maxInner = rows && tile[n - 1] > kVectorElements
                         ? std::min(kRowVectorInnermost,
                                    legality.maxVectorInnermost)
                         : legality.maxVectorInnermost;
  Sizes vector(n, 0);
  int64_t inner = tile[n - 1];
  if (inner > maxInner) {
    inner = largest(tile[n - 1], [&](int64_t c) {
      return c <= maxInner && c % lanes == 0;
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
  return makeRuleSchedule(parallel, vector, layout);
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
