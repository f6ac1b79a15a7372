//===- PadToTiles.cpp - Odd extents padded to full tiles ------------------===//
//
// An op whose loops the scheduler's power-of-two tiles do not divide is
// computed on inputs padded with zeros and its result sliced back (see
// Padding.h for which ops and extents); a contraction's rows are split into
// a multiple of 32 and the rest first (getRowSplit), then its columns where
// they would be padded (getColumnSplit), each part padded so.
// The padded op replaces the original in place; its init is made at the
// padded size where that costs nothing (a fill, an empty tensor, or an
// elementwise producer used only there, such as a broadcast bias, is
// re-created padded), else padded as the inputs are.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::rl {
#define GEN_PASS_DEF_PADTOTILES
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;
using mlir::rl::isPaddingCheapEnough;

namespace {

constexpr int64_t kMinExtent = 16;
constexpr int64_t kMinSplitExtent = 64;
constexpr int64_t kSplitMultiple = 32;
constexpr int64_t kMinReuse = 16;

/// A body the padded iterations can run: arith and math only, no integer
/// division (a zero divisor is undefined), no linalg.index (the padded
/// iterations would see indices past the original extents).
bool hasPaddableBody(linalg::LinalgOp op) {
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(o.getDialect()))
      return false;
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(o))
      return false;
  }
  return true;
}

/// Ops whose accesses are plain loop dimensions, with static tensor shapes.
bool hasPaddableAccesses(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op->getNumResults() == 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType())) {
      if (op.isDpsInit(&operand) ||
          !operand.get().getType().isIntOrIndexOrFloat())
        return false;
      continue;
    }
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation(
            /*allowZeroInResults=*/false))
      return false;
  }
  return true;
}

/// Appends to `ops` the reshapes and the empty tensor `v` is (from `v`'s
/// definition down), if it is an empty tensor, possibly reshaped.
void appendEmptyChain(Value v, SmallVectorImpl<Operation *> &ops) {
  for (Operation *def = v.getDefiningOp();
       def && isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                  tensor::EmptyOp>(def);
       def = def->getNumOperands() ? def->getOperand(0).getDefiningOp()
                                   : nullptr)
    ops.push_back(def);
}

/// Whether `v` is an empty tensor, possibly reshaped (as conv-to-matmul
/// leaves a pointwise convolution's accumulator).
bool isEmptyTensor(Value v) {
  SmallVector<Operation *> chain;
  appendEmptyChain(v, chain);
  return !chain.empty() && isa<tensor::EmptyOp>(chain.back());
}

/// The product of `op`'s reduction loops' extents.
int64_t getReductionIterations(linalg::LinalgOp op) {
  int64_t product = 1;
  for (auto [range, iterator] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    if (iterator == utils::IteratorType::reduction)
      product *= range;
  return product;
}

/// `operand`'s shape with `extents` (one per loop of its op).
SmallVector<int64_t> shapeFor(linalg::LinalgOp op, OpOperand &operand,
                              ArrayRef<int64_t> extents) {
  auto type = cast<RankedTensorType>(operand.get().getType());
  SmallVector<int64_t> shape(type.getShape());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    shape[i] = extents[cast<AffineDimExpr>(expr).getPosition()];
  return shape;
}

/// `v` padded with zeros at the end of each dimension up to `type`.
Value padWithZeros(RewriterBase &rewriter, Location loc, Value v,
                   RankedTensorType type) {
  if (v.getType() == type)
    return v;
  Value zero = arith::ConstantOp::create(
      rewriter, loc,
      cast<TypedAttr>(rewriter.getZeroAttr(type.getElementType())));
  return tensor::createPadHighOp(type, v, zero, /*nofold=*/false, loc,
                                 rewriter);
}

Value padInit(RewriterBase &rewriter, Location loc, Value init,
              RankedTensorType type, SmallVectorImpl<Operation *> &dead);

/// The empty tensors `op` writes into.
SmallVector<Operation *> emptyInits(linalg::LinalgOp op) {
  llvm::SetVector<Operation *> inits;
  for (Value init : op.getDpsInits())
    if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
      inits.insert(empty);
  return inits.takeVector();
}

/// Erases those of `ops` that nothing uses any more, until none is left
/// (an op may be used by one later in `ops`).
void eraseUnused(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (bool again = true; again;) {
    again = false;
    for (Operation *op : ops)
      if (!erased.contains(op) && op->use_empty()) {
        erased.insert(op);
        rewriter.eraseOp(op);
        again = true;
      }
  }
}

/// Clones `op` (in place of it) on operands padded to `extents`; returns
/// the padded op. Inputs are padded with zeros, inits by padInit. Ops that
/// the original's replacement will leave unused are added to `dead`.
Operation *clonePadded(RewriterBase &rewriter, linalg::LinalgOp op,
                       ArrayRef<int64_t> extents,
                       SmallVectorImpl<Operation *> &dead) {
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  SmallVector<Type> resultTypes;
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type) {
      operands.push_back(v);
      continue;
    }
    auto padded = RankedTensorType::get(shapeFor(op, operand, extents),
                                        type.getElementType(),
                                        type.getEncoding());
    rewriter.setInsertionPoint(op);
    if (op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand)) {
      // An init the op only writes (a fill's): an empty tensor, not a pad
      // (bufferized: a serial fill of the whole buffer and a copy into it).
      operands.push_back(tensor::EmptyOp::create(rewriter, loc,
                                                 padded.getShape(),
                                                 padded.getElementType(),
                                                 padded.getEncoding()));
      resultTypes.push_back(padded);
      appendEmptyChain(v, dead);
    } else if (op.isDpsInit(&operand)) {
      operands.push_back(padInit(rewriter, loc, v, padded, dead));
      resultTypes.push_back(padded);
    } else {
      operands.push_back(padWithZeros(rewriter, loc, v, padded));
    }
  }
  rewriter.setInsertionPoint(op);
  return clone(rewriter, op, resultTypes, operands);
}

/// An init of `type` (padded) whose first elements are `init`'s; the padded
/// part is never read back, so a producer that costs as much as a copy is
/// re-created at the padded size.
Value padInit(RewriterBase &rewriter, Location loc, Value init,
              RankedTensorType type, SmallVectorImpl<Operation *> &dead) {
  if (init.getType() == type)
    return init;
  Operation *def = init.getDefiningOp();
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(empty);
    return tensor::EmptyOp::create(rewriter, empty.getLoc(), type.getShape(),
                                   type.getElementType(), type.getEncoding());
  }
  auto producer = dyn_cast_or_null<linalg::LinalgOp>(def);
  if (producer && init.hasOneUse() && producer->getNumResults() == 1 &&
      producer.getNumLoops() == producer.getNumParallelLoops() &&
      hasPaddableAccesses(producer) && hasPaddableBody(producer) &&
      producer.getIndexingMapMatchingResult(cast<OpResult>(init))
          .isIdentity()) {
    // Each input it pads must be small next to the init (a broadcast bias).
    SmallVector<int64_t> extents(type.getShape());
    bool cheap = true;
    for (OpOperand *in : producer.getDpsInputOperands()) {
      auto inType = dyn_cast<RankedTensorType>(in->get().getType());
      if (!inType)
        continue;
      SmallVector<int64_t> shape = shapeFor(producer, *in, extents);
      if (ArrayRef<int64_t>(shape) != inType.getShape() &&
          inType.getNumElements() * kMinReuse > type.getNumElements())
        cheap = false;
    }
    if (cheap) {
      OpBuilder::InsertionGuard guard(rewriter);
      Operation *padded = clonePadded(rewriter, producer, extents, dead);
      dead.push_back(producer);
      llvm::append_range(dead, emptyInits(producer));
      return padded->getResult(0);
    }
  }
  return padWithZeros(rewriter, loc, init, type);
}

/// Replaces `op` by its padded clone and slices of its results.
void padOp(RewriterBase &rewriter, linalg::LinalgOp op,
           ArrayRef<int64_t> extents) {
  SmallVector<Operation *> dead;
  Operation *padded = clonePadded(rewriter, op, extents, dead);
  llvm::append_range(dead, emptyInits(op));
  rewriter.setInsertionPointAfter(padded);
  SmallVector<Value> results;
  for (auto [old, now] : llvm::zip(op->getResults(), padded->getResults())) {
    auto type = cast<RankedTensorType>(old.getType());
    if (now.getType() == type) {
      results.push_back(now);
      continue;
    }
    results.push_back(
        mlir::rl::sliceOfPadded(rewriter, op.getLoc(), now, type));
  }
  rewriter.replaceOp(op, results);
  eraseUnused(rewriter, dead);
}

/// The extent a parallel loop is padded to (see getTilePadding): one that
/// a vector register's 8 floats divide already only where that costs at
/// most 1/6 more. An NHWC convolution's 24 filters at 32 were 33% more
/// work and got packed 4x16 tiles; at 24, plain 8x8 ones ran the
/// convolution 1.37x faster (AVX2, 2026-11-29).
int64_t paddedParallelExtent(int64_t extent) {
  if (extent < kMinExtent || extent % 32 == 0)
    return extent;
  bool tileable = extent % 8 == 0;
  for (int64_t m = 64; m >= 8; m /= 2) {
    int64_t padded = llvm::divideCeil(extent, m) * m;
    if (tileable ? 6 * (padded - extent) <= extent
                 : isPaddingCheapEnough(padded, extent))
      return padded;
  }
  return extent;
}

/// The extent a contraction's row loop (its result's second-to-last
/// dimension) is padded to: of 64 or 32 where that pads and costs at most
/// 1/6 more, else as another parallel loop. A 197x1000x128 matmul's rows
/// at 224 rather than 256: 1.10x; a 12x197x196x128 batch matmul's
/// 1.08x (AVX2, 2026-11-29). Only the rows: ViT's 197x197 attention
/// scores at 224x224 got the policy's TF(1,16,2,0), 4% slower overall.
int64_t paddedRowExtent(int64_t extent) {
  if (extent >= kMinExtent && extent % 32 != 0)
    for (int64_t m : {64, 32}) {
      int64_t padded = llvm::divideCeil(extent, m) * m;
      if (6 * (padded - extent) <= extent)
        return padded;
    }
  return paddedParallelExtent(extent);
}

/// The extent a contraction's reduction loop is padded to: none where 4
/// divides it (196 was padded to 200, a copy of both inputs; the register
/// tile's step of 4 divides 196).
int64_t paddedReductionExtent(int64_t extent) {
  if (extent < kMinExtent || extent % 4 == 0)
    return extent;
  int64_t padded = llvm::divideCeil(extent, 8) * 8;
  return isPaddingCheapEnough(padded, extent) ? padded : extent;
}

/// The offsets, sizes and strides of the part [offset, offset + size) of
/// dimension `dim` of a tensor of `shape`.
struct Part {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
Part getPart(Builder &b, ArrayRef<int64_t> shape, unsigned dim,
             int64_t offset, int64_t size) {
  Part part{SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(0)),
            getAsIndexOpFoldResult(b.getContext(), shape),
            SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1))};
  part.offsets[dim] = b.getIndexAttr(offset);
  part.sizes[dim] = b.getIndexAttr(size);
  return part;
}

/// `v` sliced to [offset, offset + size) along dimension `dim`.
Value sliceAlong(RewriterBase &rewriter, Location loc, Value v, unsigned dim,
                 int64_t offset, int64_t size) {
  Part part = getPart(rewriter, cast<RankedTensorType>(v.getType()).getShape(),
                      dim, offset, size);
  return tensor::ExtractSliceOp::create(rewriter, loc, v, part.offsets,
                                        part.sizes, part.strides);
}

/// The position of loop `loop` in the results of `map` (a projected
/// permutation, possibly with zeros: broadcasts), if it is there.
std::optional<unsigned> positionOf(AffineMap map, unsigned loop) {
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == loop)
      return i;
  return std::nullopt;
}

/// Whether the parts of a split op make their own init for `init`: the op
/// does not read it, or it is a fill of an empty tensor.
bool makesOwnInit(linalg::LinalgOp op, OpOperand &init) {
  if (!op.payloadUsesValueFromOperand(&init))
    return true;
  auto fill = init.get().getDefiningOp<linalg::FillOp>();
  return fill && isEmptyTensor(fill.getOutputs()[0]);
}

/// An init for the part [offset, offset + size) of loop `loop` of `op`'s
/// init `operand`, written into `dest` (the whole init so far): a fill of a
/// new empty tensor where the whole init is a fill of an empty tensor (so
/// that the schedule can fuse it, and eliminate-empty-tensors makes it a
/// slice of the result's buffer), an empty tensor where the op does not
/// read its init, else the slice of `dest`.
Value partInit(RewriterBase &rewriter, linalg::LinalgOp op, OpOperand &operand,
               Value dest, unsigned dim, int64_t offset, int64_t size) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(dest.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  auto emptyOfPart = [&] {
    return tensor::EmptyOp::create(rewriter, loc, shape,
                                   type.getElementType(), type.getEncoding());
  };
  if (!op.payloadUsesValueFromOperand(&operand))
    return emptyOfPart();
  if (!makesOwnInit(op, operand))
    return sliceAlong(rewriter, loc, dest, dim, offset, size);
  auto fill = operand.get().getDefiningOp<linalg::FillOp>();
  return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                Value(emptyOfPart()))
      .getResult(0);
}

/// Replaces `op` by two ops over the rows [0, split) and [split, end) of
/// loop `loop`, each on slices of the inputs, their results inserted into
/// the init in turn (the second's init a slice of the first's insertion,
/// so that both bufferize in place); returns the two.
std::array<linalg::LinalgOp, 2> splitOp(RewriterBase &rewriter,
                                        linalg::LinalgOp op, unsigned loop,
                                        int64_t split) {
  Location loc = op.getLoc();
  int64_t extent = op.getStaticLoopRanges()[loop];
  rewriter.setInsertionPoint(op);
  // Where the parts are inserted: an empty tensor of the init's type
  // where the parts make their own inits, else the init.
  SmallVector<Value> dests;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value v = init.get();
    if (makesOwnInit(op, init)) {
      auto type = cast<RankedTensorType>(v.getType());
      v = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                  type.getElementType(), type.getEncoding());
    }
    dests.push_back(v);
  }
  std::array<linalg::LinalgOp, 2> parts;
  std::array<std::pair<int64_t, int64_t>, 2> ranges = {
      std::pair<int64_t, int64_t>{0, split}, {split, extent - split}};
  for (auto [p, range] : llvm::enumerate(ranges)) {
    auto [offset, size] = range;
    SmallVector<Value> operands;
    SmallVector<Type> resultTypes;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isa<RankedTensorType>(v.getType())) {
        operands.push_back(v);
        continue;
      }
      std::optional<unsigned> dim =
          positionOf(op.getMatchingIndexingMap(&operand), loop);
      if (op.isDpsInit(&operand)) {
        unsigned i = operand.getOperandNumber() - op.getNumDpsInputs();
        Value init = partInit(rewriter, op, operand, dests[i], *dim, offset,
                              size);
        operands.push_back(init);
        resultTypes.push_back(init.getType());
      } else {
        operands.push_back(dim ? sliceAlong(rewriter, loc, v, *dim, offset, size)
                               : v);
      }
    }
    Operation *part = clone(rewriter, op, resultTypes, operands);
    parts[p] = cast<linalg::LinalgOp>(part);
    for (auto [i, result] : llvm::enumerate(part->getResults())) {
      unsigned dim = *positionOf(
          op.getIndexingMapMatchingResult(op->getResult(i)), loop);
      Part into = getPart(
          rewriter, cast<RankedTensorType>(dests[i].getType()).getShape(), dim,
          offset, size);
      dests[i] = tensor::InsertSliceOp::create(rewriter, loc, result, dests[i],
                                               into.offsets, into.sizes,
                                               into.strides);
    }
  }
  // The whole init's fill and empty tensor (and reshapes of it), if the
  // parts made their own.
  SmallVector<Operation *> dead = emptyInits(op);
  for (Value init : op.getDpsInits()) {
    if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
      dead.push_back(fill);
      init = fill.getOutputs()[0];
    }
    appendEmptyChain(init, dead);
  }
  rewriter.replaceOp(op, dests);
  eraseUnused(rewriter, dead);
  return parts;
}

/// Splits `op` as getSplit says, its parts again (a part of the rows in
/// its columns), and pads what is left as getTilePadding says. Each split
/// leaves its loop a multiple of 32 or under 32, so this ends.
void splitAndPad(RewriterBase &rewriter, linalg::LinalgOp op) {
  if (std::optional<std::pair<unsigned, int64_t>> split =
          mlir::rl::getSplit(op)) {
    for (linalg::LinalgOp part :
         splitOp(rewriter, op, split->first, split->second))
      splitAndPad(rewriter, part);
    return;
  }
  if (std::optional<SmallVector<int64_t>> extents =
          mlir::rl::getTilePadding(op))
    padOp(rewriter, op, *extents);
}

struct PadToTilesPass : public mlir::rl::impl::PadToTilesBase<PadToTilesPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (mlir::rl::getSplit(op) || mlir::rl::getTilePadding(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      splitAndPad(rewriter, op);
  }
};

} // namespace

Value mlir::rl::sliceOfPadded(OpBuilder &b, Location loc, Value padded,
                              RankedTensorType type) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, padded, zeros, getAsIndexOpFoldResult(b.getContext(), type.getShape()),
      ones);
}

/// The loop of a contraction's result dimension `fromEnd` places before
/// its last (0: its columns, 1: its rows), if it has one.
static std::optional<unsigned> getResultLoop(linalg::LinalgOp op,
                                             unsigned fromEnd) {
  if (!linalg::isaContractionOpInterface(op) || op->getNumResults() == 0)
    return std::nullopt;
  AffineMap result = op.getIndexingMapMatchingResult(op->getResult(0));
  if (result.getNumResults() < fromEnd + 1)
    return std::nullopt;
  if (auto d = dyn_cast<AffineDimExpr>(
          result.getResult(result.getNumResults() - 1 - fromEnd)))
    return d.getPosition();
  return std::nullopt;
}

/// The loop of a contraction's rows (its result's second-to-last
/// dimension), if it has one.
static std::optional<unsigned> getRowLoop(linalg::LinalgOp op) {
  return getResultLoop(op, 1);
}

/// Whether `op` may be split along loop `loop` (getRowSplit's conditions
/// but which loop): at least 64 iterations that 32 does not divide.
static bool isSplittable(linalg::LinalgOp op, std::optional<unsigned> loop) {
  if (!loop || op.getNumReductionLoops() == 0 || !hasPaddableAccesses(op) ||
      op.getNumDpsInits() != 1)
    return false;
  // Nothing to split in an empty iteration space (see getTilePadding).
  if (getReductionIterations(op) < kMinReuse ||
      llvm::is_contained(op.getStaticLoopRanges(), 0))
    return false;
  int64_t extent = op.getStaticLoopRanges()[*loop];
  return extent >= kMinSplitExtent && extent % kSplitMultiple != 0;
}

std::optional<std::pair<unsigned, int64_t>>
mlir::rl::getRowSplit(linalg::LinalgOp op) {
  std::optional<unsigned> rows = getRowLoop(op);
  if (!isSplittable(op, rows))
    return std::nullopt;
  int64_t extent = op.getStaticLoopRanges()[*rows];
  return std::pair<unsigned, int64_t>{
      *rows, extent / kSplitMultiple * kSplitMultiple};
}

std::optional<std::pair<unsigned, int64_t>>
mlir::rl::getColumnSplit(linalg::LinalgOp op) {
  std::optional<unsigned> columns = getResultLoop(op, 0);
  if (!isSplittable(op, columns) ||
      op.getIteratorTypesArray()[*columns] != utils::IteratorType::parallel)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> padded = getTilePadding(op);
  int64_t extent = op.getStaticLoopRanges()[*columns];
  if (!padded || (*padded)[*columns] == extent)
    return std::nullopt;
  return std::pair<unsigned, int64_t>{
      *columns, extent / kSplitMultiple * kSplitMultiple};
}

std::optional<std::pair<unsigned, int64_t>>
mlir::rl::getWideRowSplit(linalg::LinalgOp op) {
  int64_t n = op.getNumLoops();
  if (!isa<linalg::GenericOp>(op.getOperation()) || n < 1 ||
      op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
      op.hasDynamicShape() ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity())
    return std::nullopt;
  // Loop dimensions or broadcasts (a per-row operand [1, C, 1]).
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) &&
        !op.getMatchingIndexingMap(&operand).isProjectedPermutation(
            /*allowZeroInResults=*/true))
      return std::nullopt;
  // Indices would start again at 0 in the second part.
  if (llvm::any_of(op.getBlock()->getOperations(),
                   [](Operation &o) { return isa<linalg::IndexOp>(o); }))
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  const LegalityConfig &legality = LegalityConfig::getDefault();
  int64_t lanes = getVectorLanes(element, legality);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = ranges[n - 1];
  // (An empty iteration space has nothing to split.)
  if (lanes < 1 || extent <= legality.maxVectorInnermost ||
      extent % lanes == 0 || llvm::is_contained(ranges, 0))
    return std::nullopt;
  return std::pair<unsigned, int64_t>{
      unsigned(n - 1), extent / kSplitMultiple * kSplitMultiple};
}

std::optional<std::pair<unsigned, int64_t>>
mlir::rl::getSplit(linalg::LinalgOp op) {
  if (std::optional<std::pair<unsigned, int64_t>> rows = getRowSplit(op))
    return rows;
  if (std::optional<std::pair<unsigned, int64_t>> columns = getColumnSplit(op))
    return columns;
  return getWideRowSplit(op);
}

std::optional<SmallVector<int64_t>>
mlir::rl::getTilePadding(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || !hasPaddableAccesses(op) ||
      !hasPaddableBody(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // An empty iteration space computes nothing (and a zero-size tensor has
  // no slice at offset 0 to take back: the pass made invalid IR).
  if (llvm::is_contained(ranges, 0))
    return std::nullopt;
  if (getReductionIterations(op) < kMinReuse)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool contraction = linalg::isaContractionOpInterface(op);
  SmallVector<int64_t> extents(ranges);
  std::optional<unsigned> rows = getRowLoop(op);
  for (auto [i, extent, iterator] :
       llvm::enumerate(extents, iterators)) {
    if (iterator == utils::IteratorType::parallel)
      extent = rows == i ? paddedRowExtent(extent)
                         : paddedParallelExtent(extent);
    else if (contraction)
      extent = paddedReductionExtent(extent);
  }
  if (extents == ranges)
    return std::nullopt;
  int64_t iterations = computeProduct(extents);
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type)
      continue;
    SmallVector<int64_t> shape = shapeFor(op, *in, extents);
    if (ArrayRef<int64_t>(shape) == type.getShape())
      continue;
    if (computeProduct(shape) * kMinReuse > iterations)
      return std::nullopt;
  }
  return extents;
}

bool mlir::rl::hasOpsToPad(ModuleOp module) {
  bool found = false;
  module.walk([&](linalg::LinalgOp op) {
    if (!getSplit(op) && !getTilePadding(op))
      return WalkResult::advance();
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}
