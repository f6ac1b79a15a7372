//===- Fusion.cpp - Fusing a producer into a consumer's scf.forall --------===//
#include "mlir-rl/Transforms/Fusion.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::rl {

/// The first `tensor.extract_slice` among `users` (use-list order) nested
/// in `forall`.
template <typename Users>
static tensor::ExtractSliceOp findSliceIn(Users &&users, scf::ForallOp forall) {
  for (Operation *user : users)
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
      if (forall->isProperAncestor(slice))
        return slice;
  return {};
}

static tensor::ExtractSliceOp findResultSlice(Operation *producer,
                                              scf::ForallOp forall) {
  return findSliceIn(producer->getUsers(), forall);
}

/// The first use of `producer` by an scf.forall (use-list order).
static OpOperand *findForallUse(Operation *producer) {
  for (OpOperand &use : producer->getUses())
    if (isa<scf::ForallOp>(use.getOwner()))
      return &use;
  return nullptr;
}

FusionShape getFusionShape(Operation *producer, scf::ForallOp forall) {
  if (!isa<TilingInterface>(producer))
    return FusionShape::Other;
  // Fused once: exactly one use inside (or by) the forall.
  int64_t usesInside = llvm::count_if(producer->getUsers(), [&](Operation *u) {
    return forall->isAncestor(u);
  });
  if (usesInside != 1)
    return FusionShape::Other;
  if (tensor::ExtractSliceOp slice = findResultSlice(producer, forall)) {
    if (slice->getParentOp() != forall.getOperation())
      return FusionShape::Other;
    return FusionShape::SliceOfResult;
  }
  OpOperand *use = findForallUse(producer);
  if (!use || use->getOwner() != forall.getOperation() ||
      !isa<DestinationStyleOpInterface>(producer))
    return FusionShape::Other;
  BlockArgument bbArg = forall.getTiedBlockArgument(use);
  if (!bbArg || !findSliceIn(bbArg.getUsers(), forall))
    return FusionShape::Other;
  return FusionShape::SharedOutput;
}

/// The users of `result` after `forall` (outside it, dominated by it).
static SetVector<Operation *> getUsersAfter(Value result,
                                            scf::ForallOp forall) {
  SetVector<Operation *> users;
  DominanceInfo dominance;
  for (Operation *user : result.getUsers())
    if (!forall->isAncestor(user) && dominance.dominates(forall, user))
      users.insert(user);
  return users;
}

/// Whether `value` is computed from `iv` (through ops inside the forall).
static bool dependsOn(Value value, Value iv, int depth = 0) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 32)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, iv, depth + 1);
  });
}

/// The value of the index `value` when `iv` is `ivValue`, folding
/// constants and affine.apply/min/max on the way; nullopt for anything else
/// (another induction variable, a value from outside).
static std::optional<int64_t> evalIndex(Value value, Value iv, int64_t ivValue,
                                        int depth = 0) {
  if (value == iv)
    return ivValue;
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return c;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 32)
    return std::nullopt;
  SmallVector<int64_t> operands;
  for (Value operand : def->getOperands()) {
    std::optional<int64_t> v = evalIndex(operand, iv, ivValue, depth + 1);
    if (!v)
      return std::nullopt;
    operands.push_back(*v);
  }
  auto evalMap = [&](AffineMap map) -> SmallVector<int64_t> {
    if (map.getNumInputs() != operands.size())
      return {};
    return map.compose(operands);
  };
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    SmallVector<int64_t> r = evalMap(apply.getAffineMap());
    return r.size() == 1 ? std::optional<int64_t>(r.front()) : std::nullopt;
  }
  if (auto min = dyn_cast<affine::AffineMinOp>(def)) {
    SmallVector<int64_t> r = evalMap(min.getAffineMap());
    return r.empty() ? std::nullopt
                     : std::optional<int64_t>(*llvm::min_element(r));
  }
  if (auto max = dyn_cast<affine::AffineMaxOp>(def)) {
    SmallVector<int64_t> r = evalMap(max.getAffineMap());
    return r.empty() ? std::nullopt
                     : std::optional<int64_t>(*llvm::max_element(r));
  }
  if (operands.size() == 2) {
    if (isa<arith::AddIOp>(def))
      return operands[0] + operands[1];
    if (isa<arith::SubIOp>(def))
      return operands[0] - operands[1];
    if (isa<arith::MulIOp>(def))
      return operands[0] * operands[1];
  }
  return std::nullopt;
}

/// Whether the forall's iterations, each writing the tile at `offsets` and
/// `sizes` (unit strides), write every element of `shape` exactly once.
/// Checked exactly, one dimension at a time, when each dimension moves with
/// at most one induction variable and each induction variable moves at most
/// one dimension; anything else counts as no. A consumer that reads only
/// part of the producer (a strided or windowed map), or overlapping windows
/// of it, or the same tile in every iteration of a loop that does not index
/// it (a broadcast), gives no.
static bool tilesPartitionResult(scf::ForallOp forall,
                                 ArrayRef<OpFoldResult> offsets,
                                 ArrayRef<OpFoldResult> sizes,
                                 ArrayRef<int64_t> shape) {
  if (offsets.size() != shape.size() || sizes.size() != shape.size())
    return false;
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !ubs || !steps)
    return false;
  auto ivs = forall.getInductionVars();
  SmallVector<int> dimOfIv(ivs.size(), -1);
  for (auto [d, extent] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(extent))
      return false;
    // The one induction variable (with more than one iteration) this
    // dimension moves with.
    int ivIndex = -1;
    for (auto [i, iv] : llvm::enumerate(ivs)) {
      auto depends = [&](OpFoldResult ofr) {
        auto v = dyn_cast<Value>(ofr);
        return v && dependsOn(v, iv);
      };
      if (!depends(offsets[d]) && !depends(sizes[d]))
        continue;
      if (ivIndex >= 0 || dimOfIv[i] >= 0)
        return false;
      ivIndex = i;
    }
    SmallVector<std::pair<int64_t, int64_t>> intervals;
    auto evalAt = [&](OpFoldResult ofr, Value iv,
                      int64_t ivValue) -> std::optional<int64_t> {
      if (auto attr = dyn_cast<Attribute>(ofr))
        return getConstantIntValue(attr);
      return evalIndex(cast<Value>(ofr), iv, ivValue);
    };
    if (ivIndex < 0) {
      std::optional<int64_t> off = evalAt(offsets[d], Value(), 0);
      std::optional<int64_t> size = evalAt(sizes[d], Value(), 0);
      if (!off || !size)
        return false;
      intervals.push_back({*off, *off + *size});
    } else {
      dimOfIv[ivIndex] = d;
      int64_t lb = (*lbs)[ivIndex], ub = (*ubs)[ivIndex],
              step = (*steps)[ivIndex];
      if (step <= 0 || (ub - lb) / step > extent)
        return false;
      for (int64_t x = lb; x < ub; x += step) {
        std::optional<int64_t> off = evalAt(offsets[d], ivs[ivIndex], x);
        std::optional<int64_t> size = evalAt(sizes[d], ivs[ivIndex], x);
        if (!off || !size)
          return false;
        intervals.push_back({*off, *off + *size});
      }
    }
    llvm::sort(intervals);
    int64_t next = 0;
    for (auto [begin, end] : intervals) {
      if (begin != next || end <= begin)
        return false;
      next = end;
    }
    if (next != extent)
      return false;
  }
  // An induction variable with more than one iteration that moves no
  // dimension has its iterations write the same tile.
  for (auto [i, iv] : llvm::enumerate(ivs)) {
    int64_t lb = (*lbs)[i], ub = (*ubs)[i], step = (*steps)[i];
    if (dimOfIv[i] < 0 && ub - lb > step)
      return false;
  }
  return true;
}

/// A generic producer whose result is also used after the forall: the tile
/// computed inside is also written to a new shared output (the producer's
/// init), and those later uses take the forall's new result, so the
/// producer is not computed twice. Returns the new forall (the old one is
/// erased), or `forall` when there is nothing to do.
static scf::ForallOp addResultForLaterUses(RewriterBase &rewriter,
                                           Operation *producer,
                                           unsigned resultNumber,
                                           scf::ForallOp forall, Value tile,
                                           ArrayRef<OpFoldResult> offsets,
                                           ArrayRef<OpFoldResult> sizes) {
  SetVector<Operation *> later =
      getUsersAfter(producer->getResult(resultNumber), forall);
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (later.empty() || !generic)
    return forall;
  // The later uses may take the tiles only if they make up the whole
  // result, each element once. Iterations that compute the same tile would
  // all write it to the shared output, each starting from the tile the
  // others write (a reduction would be accumulated once per iteration); a
  // consumer that reads part of the producer (a strided or windowed map)
  // leaves elements unwritten. Then the producer stays for the later uses
  // (computed twice, correct).
  auto resultType =
      dyn_cast<RankedTensorType>(producer->getResult(resultNumber).getType());
  if (!resultType ||
      !tilesPartitionResult(forall, offsets, sizes, resultType.getShape()))
    return forall;
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(forall);
  SmallVector<Value> outputs(forall.getOutputs());
  outputs.push_back(generic.getDpsInits()[resultNumber]);
  auto grown = scf::ForallOp::create(
      rewriter, loc, forall.getMixedLowerBound(), forall.getMixedUpperBound(),
      forall.getMixedStep(), outputs, forall.getMapping());
  rewriter.eraseBlock(grown.getBody());
  grown.getRegion().takeBody(forall.getRegion());
  Value init = outputs.back();
  BlockArgument shared =
      grown.getBody()->addArgument(init.getType(), init.getLoc());
  rewriter.replaceUsesWithIf(init, shared, [&](OpOperand &use) {
    return grown->isProperAncestor(use.getOwner());
  });
  Operation *firstYield = &*grown.getTerminator().getYieldingOps().begin();
  rewriter.setInsertionPoint(firstYield);
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(rewriter, firstYield->getLoc(), tile,
                                        shared, offsets, sizes, strides);
  for (auto [i, result] : llvm::enumerate(forall.getResults()))
    rewriter.replaceAllUsesWith(result, grown->getResult(i));
  rewriter.replaceUsesWithIf(producer->getResult(resultNumber),
                             grown->getResults().back(), [&](OpOperand &use) {
                               return later.contains(use.getOwner());
                             });
  rewriter.eraseOp(forall);
  return grown;
}

/// The tile of `op`'s result `resultNumber` at `offsets` and `sizes`:
/// upstream's generateResultTileValue, which takes only results indexed by
/// a projected permutation of the loops, and for a linalg op whose result
/// also has unit dimensions indexed by the constant 0 (a reduction over
/// channels kept as a dimension of 1: `(d0, d1, d2, d3) -> (d0, d1, d2, 0)`,
/// as torch-mlir imports a channels-last layer norm's mean) its tiled
/// implementation on the loops the other dimensions give (the rest whole).
/// Upstream's refusal left ConvNeXt's layer norms unscheduled: the policy's
/// TF on the op after each such reduction did not apply.
static FailureOr<TilingResult>
generateResultTile(RewriterBase &rewriter, Operation *op,
                   unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
                   ArrayRef<OpFoldResult> sizes) {
  auto tileable = cast<TilingInterface>(op);
  FailureOr<TilingResult> tiled =
      tileable.generateResultTileValue(rewriter, resultNumber, offsets, sizes);
  if (succeeded(tiled))
    return tiled;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || resultNumber >= op->getNumResults())
    return failure();
  AffineMap map = linalgOp.getIndexingMapMatchingResult(
      op->getResult(resultNumber));
  if (map.getNumResults() != offsets.size())
    return failure();
  SmallVector<Range> domain = tileable.getIterationDomain(rewriter);
  SmallVector<OpFoldResult> loopOffsets, loopSizes;
  for (const Range &r : domain) {
    if (!isConstantIntValue(r.stride, 1))
      return failure();
    loopOffsets.push_back(r.offset);
    loopSizes.push_back(r.size);
  }
  llvm::SmallBitVector seen(domain.size());
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (seen.test(d.getPosition()))
        return failure();
      seen.set(d.getPosition());
      loopOffsets[d.getPosition()] = offsets[i];
      loopSizes[d.getPosition()] = sizes[i];
      continue;
    }
    // A unit dimension: its tile is the whole of it.
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || !isConstantIntValue(offsets[i], 0) ||
        !isConstantIntValue(sizes[i], 1))
      return failure();
  }
  FailureOr<TilingResult> all =
      tileable.getTiledImplementation(rewriter, loopOffsets, loopSizes);
  if (failed(all) || all->tiledValues.size() <= resultNumber)
    return failure();
  return TilingResult{all->tiledOps, {all->tiledValues[resultNumber]},
                      all->generatedSlices};
}

/// Replaces `slice` by `tile` (rank-reduced to the slice's type if needed).
static LogicalResult replaceSlice(RewriterBase &rewriter,
                                  tensor::ExtractSliceOp slice, Value tile) {
  FailureOr<Value> reduced = tensor::ExtractSliceOp::rankReduceIfNeeded(
      rewriter, slice.getLoc(), tile, slice.getType().getShape());
  if (failed(reduced))
    return failure();
  rewriter.replaceOp(slice, *reduced);
  return success();
}

FailureOr<FusionResult>
fuseProducerIntoForall(RewriterBase &rewriter, Operation *producer,
                       scf::ForallOp forall) {
  OpBuilder::InsertionGuard guard(rewriter);
  switch (getFusionShape(producer, forall)) {
  case FusionShape::Other:
    return failure();

  case FusionShape::SliceOfResult: {
    tensor::ExtractSliceOp slice = findResultSlice(producer, forall);
    rewriter.setInsertionPoint(slice);
    // Tile a copy whose inits that are also the forall's outputs become the
    // forall's shared outputs, so both write the same tensor.
    Operation *copy = rewriter.clone(*producer);
    rewriter.modifyOpInPlace(copy, [&]() {
      auto dps = dyn_cast<DestinationStyleOpInterface>(copy);
      if (!dps)
        return;
      auto loop = cast<LoopLikeOpInterface>(forall.getOperation());
      for (OpOperand &init : dps.getDpsInitsMutable())
        for (BlockArgument iterArg : loop.getRegionIterArgs())
          if (forall->getOperand(loop.getTiedLoopInit(iterArg)
                                     ->getOperandNumber()) == init.get())
            init.set(iterArg);
    });
    unsigned resultNumber =
        cast<OpResult>(slice.getSource()).getResultNumber();
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    FailureOr<TilingResult> tiled =
        generateResultTile(rewriter, copy, resultNumber, offsets, sizes);
    if (failed(tiled) || tiled->tiledValues.empty() ||
        failed(replaceSlice(rewriter, slice, tiled->tiledValues.front()))) {
      rewriter.eraseOp(copy);
      return failure();
    }
    if (slice.hasUnitStride())
      forall = addResultForLaterUses(rewriter, producer, resultNumber, forall,
                                     tiled->tiledValues.front(), offsets,
                                     sizes);
    rewriter.eraseOp(copy);
    return FusionResult{tiled->tiledOps, forall};
  }

  case FusionShape::SharedOutput: {
    OpOperand *use = findForallUse(producer);
    BlockArgument bbArg = forall.getTiedBlockArgument(use);
    tensor::ExtractSliceOp slice = findSliceIn(bbArg.getUsers(), forall);
    rewriter.setInsertionPoint(slice);
    unsigned resultNumber = cast<OpResult>(use->get()).getResultNumber();
    SmallVector<Value> destinations;
    if (failed(tensor::getOrCreateDestinations(rewriter, producer->getLoc(),
                                               producer, destinations)))
      return failure();
    // Compute the producer on the forall's slice of the output.
    IRMapping mapping;
    mapping.map(destinations[resultNumber], bbArg);
    Operation *copy = rewriter.clone(*producer, mapping);
    FailureOr<TilingResult> tiled =
        generateResultTile(rewriter, copy, resultNumber,
                           slice.getMixedOffsets(), slice.getMixedSizes());
    if (failed(tiled) || tiled->tiledValues.empty() ||
        failed(replaceSlice(rewriter, slice, tiled->tiledValues.front()))) {
      rewriter.eraseOp(copy);
      return failure();
    }
    // The forall now starts from the producer's own init.
    unsigned operandNumber = use->getOperandNumber();
    rewriter.modifyOpInPlace(forall, [&]() {
      forall->setOperand(operandNumber, destinations.front());
    });
    rewriter.eraseOp(copy);
    return FusionResult{tiled->tiledOps, forall};
  }
  }
  return failure();
}

} // namespace mlir::rl
