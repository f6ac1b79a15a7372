//===- FuseForalls.cpp - A forall that reads its producer's tiles joins it -===//
//
// mlir-rl-fuse-foralls (Passes.td): a scheduled function runs each op in a
// parallel region of its own. Where a forall reads another forall's result
// only at the tile that forall wrote in the same iteration (the rows of a
// softmax's exp, of its sum, of the division that reads both; an
// elementwise chain tiled alike), the two become one forall: one parallel
// region instead of two, the producer's tile consumed while it is in the
// cache, and the producer's full result never written where nothing else
// reads it.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rl {
#define GEN_PASS_DEF_FUSEFORALLS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

/// Whether index value `a` (in the producer forall `pa`) is, in every
/// iteration, the same as `b` (in the consumer forall `pb`): the same
/// induction variable, the same constant, the same value from above both,
/// or the same side-effect-free op of equivalent operands.
static bool equivalent(Value a, scf::ForallOp pa, Value b, scf::ForallOp pb,
                       int depth = 0) {
  if (depth > 16)
    return false;
  if (auto ba = dyn_cast<BlockArgument>(a)) {
    auto bb = dyn_cast<BlockArgument>(b);
    if (!bb)
      return a == b;
    if (ba.getOwner() == pa.getBody() && bb.getOwner() == pb.getBody())
      // Induction variables only: the shared outputs differ.
      return ba.getArgNumber() == bb.getArgNumber() &&
             ba.getArgNumber() < pa.getRank();
    return a == b;
  }
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  if (ca || cb)
    return ca && cb && *ca == *cb;
  Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
  bool insideA = pa->isProperAncestor(da), insideB = pb->isProperAncestor(db);
  if (!insideA || !insideB)
    return !insideA && !insideB && a == b;
  if (da->getName() != db->getName() || da->getNumRegions() ||
      db->getNumRegions() || da->getNumOperands() != db->getNumOperands() ||
      da->getNumResults() != db->getNumResults() ||
      da->getAttrDictionary() != db->getAttrDictionary() ||
      !isMemoryEffectFree(da) ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [oa, ob] : llvm::zip(da->getOperands(), db->getOperands()))
    if (!equivalent(oa, pa, ob, pb, depth + 1))
      return false;
  return true;
}

static bool equivalent(ArrayRef<OpFoldResult> a, scf::ForallOp pa,
                       ArrayRef<OpFoldResult> b, scf::ForallOp pb) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b)) {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx || cy) {
      if (!cx || !cy || *cx != *cy)
        return false;
      continue;
    }
    if (!equivalent(cast<Value>(x), pa, cast<Value>(y), pb))
      return false;
  }
  return true;
}

/// The same iteration space and mapping, normalized or not.
static bool sameIterationSpace(scf::ForallOp a, scf::ForallOp b) {
  auto same = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
    if (x.size() != y.size())
      return false;
    for (auto [p, q] : llvm::zip(x, y)) {
      std::optional<int64_t> cp = getConstantIntValue(p),
                             cq = getConstantIntValue(q);
      if (cp && cq ? *cp != *cq : p != q)
        return false;
    }
    return true;
  };
  return same(a.getMixedLowerBound(), b.getMixedLowerBound()) &&
         same(a.getMixedUpperBound(), b.getMixedUpperBound()) &&
         same(a.getMixedStep(), b.getMixedStep()) &&
         a.getMapping() == b.getMapping();
}

/// The producer's `tensor.parallel_insert_slice` of shared output `i`, if it
/// is the only one.
static tensor::ParallelInsertSliceOp getInsert(scf::ForallOp forall,
                                               unsigned i) {
  BlockArgument out = forall.getRegionIterArgs()[i];
  tensor::ParallelInsertSliceOp found;
  for (Operation &op : forall.getTerminator().getYieldingOps()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op);
    if (!insert)
      return {};
    if (insert.getDest() == out) {
      if (found)
        return {};
      found = insert;
    }
  }
  return found;
}

/// A fusion of `producer` into `consumer`: each use of the producer's
/// results in the consumer is a slice, at the consumer's top level, of the
/// tile the producer inserted in the same iteration.
struct Plan {
  // The consumer's slices of the producer's results and the result number.
  SmallVector<std::pair<tensor::ExtractSliceOp, unsigned>> slices;
};

static std::optional<Plan> planFusion(scf::ForallOp producer,
                                      scf::ForallOp consumer) {
  if (producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer) ||
      !sameIterationSpace(producer, consumer))
    return std::nullopt;
  Plan plan;
  for (OpResult result : producer->getResults()) {
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (!consumer->isAncestor(user)) {
        // A use between the two would see the producer moved past it.
        Operation *a = consumer->getBlock()->findAncestorOpInBlock(*user);
        if (!a || a->isBeforeInBlock(consumer))
          return std::nullopt;
        continue;
      }
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice || slice->getParentOp() != consumer.getOperation() ||
          use.getOperandNumber() != 0)
        return std::nullopt;
      tensor::ParallelInsertSliceOp insert =
          getInsert(producer, result.getResultNumber());
      if (!insert || insert.getSourceType() != slice.getResultType() ||
          !equivalent(insert.getMixedOffsets(), producer,
                      slice.getMixedOffsets(), consumer) ||
          !equivalent(insert.getMixedSizes(), producer, slice.getMixedSizes(),
                      consumer) ||
          !equivalent(insert.getMixedStrides(), producer,
                      slice.getMixedStrides(), consumer))
        return std::nullopt;
      plan.slices.push_back({slice, result.getResultNumber()});
    }
  }
  if (plan.slices.empty())
    return std::nullopt;
  // The producer's operands are available where the consumer stands: they
  // are defined above the producer, which is before it in the block.
  return plan;
}

/// One forall at the consumer's place: the producer's body, then the
/// consumer's reading the producer's tiles directly. Shared outputs of the
/// producer whose results nothing else reads are dropped: their tiles live
/// only in the iteration.
static void fuse(RewriterBase &rewriter, scf::ForallOp producer,
                 scf::ForallOp consumer, const Plan &plan) {
  unsigned np = producer.getNumResults();
  SmallVector<bool> keep(np);
  for (unsigned i = 0; i < np; ++i)
    keep[i] = llvm::any_of(producer->getResult(i).getUsers(), [&](Operation *u) {
      return !consumer->isAncestor(u);
    });
  SmallVector<Value> outputs;
  for (unsigned i = 0; i < np; ++i)
    if (keep[i])
      outputs.push_back(producer.getOutputs()[i]);
  unsigned kept = outputs.size();
  llvm::append_range(outputs, consumer.getOutputs());

  rewriter.setInsertionPoint(consumer);
  auto fused = scf::ForallOp::create(
      rewriter, consumer.getLoc(), consumer.getMixedLowerBound(),
      consumer.getMixedUpperBound(), consumer.getMixedStep(), outputs,
      consumer.getMapping());
  // The builder leaves an empty in_parallel terminator.
  Operation *terminator = fused.getTerminator();

  IRMapping map;
  for (unsigned r = 0; r < fused.getRank(); ++r)
    map.map(producer.getInductionVar(r), fused.getInductionVar(r));
  unsigned next = 0;
  for (unsigned i = 0; i < np; ++i)
    map.map(producer.getRegionIterArgs()[i],
            keep[i] ? fused.getRegionIterArgs()[next++]
                    : producer.getOutputs()[i]);
  rewriter.setInsertionPoint(terminator);
  for (Operation &op : producer.getBody()->without_terminator())
    rewriter.clone(op, map);
  // The producer's tiles, as the consumer reads them.
  IRMapping consumerMap;
  for (unsigned r = 0; r < fused.getRank(); ++r)
    consumerMap.map(consumer.getInductionVar(r), fused.getInductionVar(r));
  for (unsigned i = 0; i < consumer.getNumResults(); ++i)
    consumerMap.map(consumer.getRegionIterArgs()[i],
                    fused.getRegionIterArgs()[kept + i]);
  for (auto [slice, result] : plan.slices)
    consumerMap.map(slice.getResult(),
                    map.lookupOrDefault(getInsert(producer, result).getSource()));
  for (Operation &op : consumer.getBody()->without_terminator()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
    if (slice && consumerMap.contains(slice.getResult()))
      continue;
    rewriter.clone(op, consumerMap);
  }
  rewriter.setInsertionPointToStart(
      &cast<scf::InParallelOp>(terminator).getRegion().front());
  for (unsigned i = 0; i < np; ++i)
    if (keep[i])
      rewriter.clone(*getInsert(producer, i), map);
  for (Operation &op : consumer.getTerminator().getYieldingOps())
    rewriter.clone(op, consumerMap);

  next = 0;
  for (unsigned i = 0; i < np; ++i)
    if (keep[i])
      rewriter.replaceAllUsesWith(producer->getResult(i),
                                  fused->getResult(next++));
  rewriter.replaceOp(consumer, fused->getResults().drop_front(kept));
  rewriter.eraseOp(producer);
}

/// The foralls of `block` whose producers join them, until none does.
static void fuseInBlock(RewriterBase &rewriter, Block &block) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : block) {
      auto consumer = dyn_cast<scf::ForallOp>(op);
      if (!consumer)
        continue;
      // The producers the consumer reads, in the order it reads them.
      SetVector<scf::ForallOp> producers;
      consumer->walk([&](tensor::ExtractSliceOp slice) {
        if (auto p = slice.getSource().getDefiningOp<scf::ForallOp>())
          producers.insert(p);
      });
      for (scf::ForallOp producer : producers) {
        std::optional<Plan> plan = planFusion(producer, consumer);
        if (!plan)
          continue;
        fuse(rewriter, producer, consumer, *plan);
        changed = true;
        break;
      }
      if (changed)
        break;
    }
  }
}

struct FuseForallsPass
    : public mlir::rl::impl::FuseForallsBase<FuseForallsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (llvm::count_if(*block, [](Operation &op) {
            return isa<scf::ForallOp>(op);
          }) > 1)
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      fuseInBlock(rewriter, *block);
  }
};

} // namespace
