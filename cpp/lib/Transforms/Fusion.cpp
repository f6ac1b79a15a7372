//===- Fusion.cpp - Fusing a producer into a consumer's scf.forall --------===//
#include "mlir-rl/Transforms/Fusion.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SetVector.h"

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

/// Whether tiles at `offsets` are disjoint across the forall's iterations:
/// every induction variable with more than one iteration moves an offset.
/// A consumer tiled along a loop that does not index the producer's result
/// (a broadcast along it) has every iteration compute the same producer
/// tile.
static bool tilesAreDisjoint(scf::ForallOp forall,
                             ArrayRef<OpFoldResult> offsets) {
  SmallVector<OpFoldResult> lbs = forall.getMixedLowerBound();
  SmallVector<OpFoldResult> ubs = forall.getMixedUpperBound();
  SmallVector<OpFoldResult> steps = forall.getMixedStep();
  for (auto [i, iv] : llvm::enumerate(forall.getInductionVars())) {
    std::optional<int64_t> lb = getConstantIntValue(lbs[i]);
    std::optional<int64_t> ub = getConstantIntValue(ubs[i]);
    std::optional<int64_t> step = getConstantIntValue(steps[i]);
    if (lb && ub && step && *step > 0 && *ub - *lb <= *step)
      continue; // one iteration
    bool moves = llvm::any_of(offsets, [&](OpFoldResult offset) {
      auto value = dyn_cast<Value>(offset);
      return value && dependsOn(value, iv);
    });
    if (!moves)
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
  // Iterations that compute the same tile would all write it to the shared
  // output, each starting from the tile the others write (a reduction would
  // be accumulated once per iteration): the producer stays for the later
  // uses instead (computed twice, correct).
  if (!tilesAreDisjoint(forall, offsets))
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
        cast<TilingInterface>(copy).generateResultTileValue(
            rewriter, resultNumber, offsets, sizes);
    if (failed(tiled) || tiled->tiledValues.empty() ||
        failed(replaceSlice(rewriter, slice, tiled->tiledValues.front()))) {
      rewriter.eraseOp(copy);
      return failure();
    }
    forall = addResultForLaterUses(rewriter, producer, resultNumber, forall,
                                   tiled->tiledValues.front(), offsets, sizes);
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
        cast<TilingInterface>(copy).generateResultTileValue(
            rewriter, resultNumber, slice.getMixedOffsets(),
            slice.getMixedSizes());
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
