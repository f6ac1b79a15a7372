//===- Prepare.cpp - The front end for imported IR (mlir-rl-prepare) ------===//
//
// torch-mlir (and other importers) emit linalg code that is correct but hard
// to schedule well: batch norm as five one-op generics, elementwise named ops
// that upstream fusion does not see, fills that CSE shared between several
// convolutions, pads as separate copies. The passes here rewrite such IR
// into what the scheduler handles (one op per fused chain, one init per
// consumer); `mlir-rl-prepare` runs them with canonicalization and CSE.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>
#include <vector>

namespace mlir::rl {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#define GEN_PASS_DEF_UNTIEINITS
#define GEN_PASS_DEF_UNTIEEMPTIES
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

bool isAllParallel(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// An all-parallel named op that reads tensors (linalg.add, linalg.exp,
/// linalg.elementwise, linalg.broadcast, linalg.transpose, linalg.copy,
/// linalg.map, ...): as a generic, upstream elementwise fusion sees it.
/// Fills stay (they are inits, handled by untie-inits), and so do ops with
/// reductions (matmuls, convolutions, pooling): the scheduler knows them by
/// name.
struct GeneralizeElementwiseNamedOp
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp, linalg::FillOp>(op.getOperation()) ||
        !op.hasPureTensorSemantics() || !isAllParallel(op) ||
        op.getNumDpsInputs() == 0)
      return failure();
    if (!llvm::any_of(op.getDpsInputs(), [](Value v) {
          return isa<RankedTensorType>(v.getType());
        }))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// A linalg.reduce as the generic it stands for: the rules know a row
/// reduction (a softmax's max or sum written with linalg.reduce) only as a
/// generic. As a named op the policy split it in 32-row tiles where the row
/// ops around it have 64 (512x1024 softmax), and its forall could not join
/// theirs (mlir-rl-fuse-foralls).
struct GeneralizeReduce : public OpRewritePattern<linalg::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// A transpose of a constant (a weight: torch-mlir transposes every
/// nn.Linear weight at run time) becomes the transposed constant, for dense
/// and for resource (`dense_resource<...>`) constants up to 256 MiB.
struct FoldTransposeOfConstant
    : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto cst = op.getInput().getDefiningOp<arith::ConstantOp>();
    if (!cst || !op.hasPureTensorSemantics() || op->getNumResults() != 1)
      return failure();
    auto inType = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!inType || !outType || !inType.hasStaticShape() ||
        !inType.getElementType().isIntOrFloat())
      return failure();
    TypedAttr folded =
        rl::transposeConstant(cst.getValue(), inType.getShape(),
                              op.getPermutation(), outType, "_transposed");
    if (!folded)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, outType, folded);
    return success();
  }
};

/// An elementwise extension of a bf16 or f16 constant to f32 (torch-mlir
/// widens every low-precision weight of a linear layer at run time, and
/// mlir-rl-compute-in-f32 every accumulator's constant init) becomes the
/// f32 constant, which the rules then pack at compile time like any other.
struct FoldExtensionOfConstant : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
        op.getNumDpsInits() != 1 || !isAllParallel(op) ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    auto cst = op.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
    Block *body = op.getBody();
    auto ext = dyn_cast<arith::ExtFOp>(&body->front());
    if (!cst || !ext || ext.getIn() != body->getArgument(0) ||
        body->getTerminator()->getOperand(0) != ext.getResult() ||
        &*std::next(body->begin()) != body->getTerminator())
      return failure();
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!outType || !outType.hasStaticShape())
      return failure();
    TypedAttr folded = rl::extendConstant(cst.getValue(), outType, "_f32");
    if (!folded)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, outType, folded);
    return success();
  }
};

/// A matmul with at most `maxRows` rows (a batch-1 linear layer: a
/// matrix-vector product, which streams its weight once) reads its weight
/// [N, K], so that each output column reads one weight row contiguously;
/// read [K, N], every step of the reduction jumps a whole row of N.
/// torch-mlir emits `nn.Linear` as a 2-D transpose of the [N, K] weight and
/// a matmul: such a matmul becomes a generic that reads the transpose's
/// input with the map (m, n, k) -> (n, k), and the transpose, unused, goes
/// (whatever its input). A [K, N] constant weight (with
/// `transposeConstants`) is read through a new transpose instead, which
/// FoldTransposeOfConstant makes an [N, K] constant at compile time.
bool isThinMatmul(linalg::MatmulOp op, int64_t maxRows) {
  if (maxRows <= 0 || !op.hasPureTensorSemantics() ||
      op.getIndexingMapsArray() !=
          linalg::MatmulOp::getDefaultIndexingMaps(op.getContext()))
    return false;
  auto lhs = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
  auto rhs = dyn_cast<RankedTensorType>(op.getInputs()[1].getType());
  return lhs && rhs && lhs.getRank() == 2 && rhs.getRank() == 2 &&
         !ShapedType::isDynamic(lhs.getDimSize(0)) &&
         lhs.getDimSize(0) <= maxRows;
}

linalg::TransposeOp getTransposeOf2D(Value value) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (transpose && transpose.hasPureTensorSemantics() &&
      transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
    return transpose;
  return {};
}

/// The bytes of a static tensor, or -1.
static int64_t staticBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return -1;
  return tensor.getNumElements() *
         ((tensor.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

void readThinMatmulWeightsByRow(Operation *root, int64_t maxRows,
                                bool transposeConstants,
                                int64_t maxConstantRows,
                                int64_t maxConstantBytes) {
  SmallVector<linalg::MatmulOp> thin;
  root->walk([&](linalg::MatmulOp op) {
    Value rhs = op.getInputs()[1];
    linalg::TransposeOp transpose = getTransposeOf2D(rhs);
    bool constant =
        transpose ? (bool)transpose.getInput().getDefiningOp<arith::ConstantOp>()
                  : (bool)rhs.getDefiningOp<arith::ConstantOp>();
    if (!transpose && !(constant && transposeConstants &&
                        cast<RankedTensorType>(rhs.getType()).hasStaticShape()))
      return;
    // A constant weight read [K, N] is packed into panels at compile time
    // by the rules, which stream it contiguously for any number of rows:
    // only a matrix-vector product whose weight stays in cache does better
    // reading it [N, K] (AMD EPYC Zen 5, 2 threads, one process, 16
    // alternating rounds, 2026-12-02: [N, K] against packed [K, N], 1x2048
    // by 2048x1000 0.149 vs 0.272 ms, 1x3072x1024 0.144 vs 0.231; 16 MiB and
    // more the other way: 1x1024x4096 0.536 vs 0.138, 1x4096x4096 4.77 vs
    // 1.79, 1x25088x1024 5.56 vs 2.77; with 2 to 16 rows packed always won
    // or tied: 16x512x3072 0.409 vs 0.148, 8x4096x1024 7.38 vs 0.30).
    // A large one only where its columns are whole vectors of 16 (the rules'
    // register tile; else nothing parallelized 1x4096 by 4096x1000 read
    // [K, N]: 3.20 ms, 0.45 read [N, K]).
    int64_t bytes = staticBytes(rhs.getType());
    int64_t columns = cast<RankedTensorType>(rhs.getType()).getDimSize(1);
    if (constant && (!isThinMatmul(op, maxConstantRows) || bytes < 0 ||
                     (bytes > maxConstantBytes && columns % 16 == 0)))
      return;
    if (isThinMatmul(op, maxRows))
      thin.push_back(op);
  });
  MLIRContext *ctx = root->getContext();
  IRRewriter rewriter(ctx);
  for (linalg::MatmulOp op : thin) {
    rewriter.setInsertionPoint(op);
    Value rhs = op.getInputs()[1];
    Value weight;
    if (linalg::TransposeOp transpose = getTransposeOf2D(rhs)) {
      weight = transpose.getInput();
    } else {
      auto type = cast<RankedTensorType>(rhs.getType());
      Value init = tensor::EmptyOp::create(
          rewriter, op.getLoc(), {type.getDimSize(1), type.getDimSize(0)},
          type.getElementType());
      weight = linalg::TransposeOp::create(rewriter, op.getLoc(), rhs, init,
                                           ArrayRef<int64_t>{1, 0})
                   ->getResult(0);
    }
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      continue;
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    SmallVector<AffineMap> maps = generic->getIndexingMapsArray();
    maps[1] = AffineMap::get(3, 0, {n, k}, ctx);
    rewriter.modifyOpInPlace(*generic, [&] {
      generic->setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      generic->setOperand(1, weight);
    });
  }
}

/// The body of `op` only forwards block arguments (a broadcast, transpose
/// or copy): fusing it costs no recomputation, whatever the access.
bool onlyMovesData(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (!llvm::hasSingleElement(body.getOperations()))
    return false;
  return llvm::all_of(body.getTerminator()->getOperands(), [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body;
  });
}

/// A one-input, all-parallel generic whose body is one cast (torch-mlir's
/// layer norm widens its whole input to f64 for the variance): each
/// consumer can cast for itself at less cost than writing and reading the
/// wider copy.
bool onlyCasts(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
      !isAllParallel(op) || body.getOperations().size() != 2)
    return false;
  Operation &cast = body.front();
  return isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
             arith::TruncIOp, arith::SIToFPOp, arith::UIToFPOp>(cast) &&
         cast.getOperand(0) == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == cast.getResult(0);
}

/// Fuse an elementwise producer into its consumer when that duplicates no
/// work: the producer has no other user, and the consumer reads each of its
/// elements once (a permutation map) unless the producer only moves data.
/// A small per-channel computation (batch norm's 1/sqrt(var + eps)) that a
/// consumer broadcasts stays a separate op: fused, it would be recomputed
/// for every pixel. A cast goes into each of its consumers that read each
/// element once, whatever else reads it (imported layer norm: 512x1024
/// 0.19 -> 0.12 ms, no 4 MB f64 copy of its input).
bool shouldFuse(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!producer)
    return false;
  Operation *consumer = operand->getOwner();
  if (onlyCasts(producer)) {
    auto linalgConsumer = dyn_cast<linalg::GenericOp>(consumer);
    return linalgConsumer &&
           linalgConsumer.getMatchingIndexingMap(operand).isPermutation();
  }
  for (Operation *user : producer->getUsers())
    if (user != consumer)
      return false;
  if (onlyMovesData(producer))
    return true;
  auto linalgConsumer = dyn_cast<linalg::LinalgOp>(consumer);
  if (!linalgConsumer)
    return false;
  AffineMap map = linalgConsumer.getMatchingIndexingMap(operand);
  return map.isPermutation();
}

/// Reshape propagation only between generics (a named matmul stays named).
bool shouldFoldReshape(OpOperand *operand) {
  Operation *owner = operand->getOwner();
  Operation *producer = operand->get().getDefiningOp();
  if (!producer)
    return false;
  if (isa<linalg::GenericOp>(owner))
    return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(producer);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(owner))
    return isa<linalg::GenericOp>(producer) && producer->hasOneUse();
  return false;
}

struct FuseElementwisePass
    : public mlir::rl::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    readThinMatmulWeightsByRow(getOperation(), thinMatmulRows,
                               foldConstantTransposes, thinConstantRows,
                               thinConstantBytes);
    {
      RewritePatternSet patterns(ctx);
      if (foldConstantTransposes)
        patterns.add<FoldTransposeOfConstant, FoldExtensionOfConstant>(
            ctx, /*benefit=*/2);
      patterns.add<GeneralizeElementwiseNamedOp, GeneralizeReduce>(ctx);
      // linalg.softmax as its max, exp, sum and division.
      mlir::rl::populateDecomposeAggregatesPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    if (foldReshapes)
      linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                        shouldFoldReshape);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (fusePads)
      linalg::populateFuseTensorPadWithProducerLinalgOpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

/// The producer of an init that each consumer should have for itself: a
/// fill, or a generic that only moves data (a broadcast bias). The clone
/// goes right before its consumer, which the producer's operands dominate.
bool isClonableInit(Operation *op) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && isAllParallel(generic) && onlyMovesData(generic) &&
         generic->getNumResults() == 1;
}

struct UntieInitsPass
    : public mlir::rl::impl::UntieInitsBase<UntieInitsPass> {
  void runOnOperation() override {
    SmallVector<OpOperand *> inits;
    getOperation()->walk([&](DestinationStyleOpInterface op) {
      if (!isa<linalg::LinalgOp>(op.getOperation()))
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        Operation *producer = init.get().getDefiningOp();
        if (producer && isClonableInit(producer))
          inits.push_back(&init);
      }
    });
    OpBuilder builder(&getContext());
    for (OpOperand *init : inits) {
      Value value = init->get();
      // The last user keeps the original.
      if (value.hasOneUse())
        continue;
      Operation *producer = value.getDefiningOp();
      builder.setInsertionPoint(init->getOwner());
      Operation *copy = builder.clone(*producer);
      init->set(copy->getResult(cast<OpResult>(value).getResultNumber()));
    }
  }
};

struct UntieEmptiesPass
    : public mlir::rl::impl::UntieEmptiesBase<UntieEmptiesPass> {
  void runOnOperation() override {
    mlir::rl::untieEmptyInits(getOperation());
  }
};

} // namespace

bool mlir::rl::untieEmptyInits(Operation *root) {
  SmallVector<OpOperand *> inits;
  root->walk([&](linalg::LinalgOp op) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (init.get().getDefiningOp<tensor::EmptyOp>())
        inits.push_back(&init);
  });
  bool changed = false;
  OpBuilder builder(root->getContext());
  for (OpOperand *init : inits) {
    Value value = init->get();
    // The last user keeps the original.
    if (value.hasOneUse())
      continue;
    builder.setInsertionPoint(init->getOwner());
    init->set(builder.clone(*value.getDefiningOp())->getResult(0));
    changed = true;
  }
  return changed;
}
