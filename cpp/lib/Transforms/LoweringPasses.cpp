//===- LoweringPasses.cpp - The lowering's own passes ---------------------===//
//
// The passes of mlir-rl that the lowering pipeline (Lowering.cpp) runs
// besides upstream's: mlir-rl-strip-transform-ir, mlir-rl-lower-pack-unpack,
// mlir-rl-mark-manual-deallocation, mlir-rl-split-empty-tensors,
// mlir-rl-lower-copies, mlir-rl-lower-vectors and mlir-rl-lower-math (see
// Passes.td).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {
#define GEN_PASS_DEF_LOWERVECTOROPS
#define GEN_PASS_DEF_LOWERMATH
#define GEN_PASS_DEF_EXPANDBF16
#define GEN_PASS_DEF_STRIPTRANSFORMIR
#define GEN_PASS_DEF_LOWERPACKUNPACK
#define GEN_PASS_DEF_MARKMANUALDEALLOCATION
#define GEN_PASS_DEF_SPLITEMPTYTENSORS
#define GEN_PASS_DEF_UNITSLICESTRIDES
#define GEN_PASS_DEF_LOWERCOPIES
#define GEN_PASS_DEF_DECOMPOSEAGGREGATES
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {
/// An op of AggregatedOpInterface on tensors as its decomposition.
struct DecomposeAggregatedOp
    : public OpInterfaceRewritePattern<linalg::AggregatedOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::AggregatedOpInterface op,
                                PatternRewriter &rewriter) const override {
    Operation *operation = op.getOperation();
    if (operation->getNumResults() == 0 ||
        !llvm::all_of(operation->getOperandTypes(), [](Type t) {
          return isa<RankedTensorType>(t) || !isa<ShapedType>(t);
        }))
      return failure();
    FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
    if (failed(values))
      return rewriter.notifyMatchFailure(operation, "no decomposition");
    rewriter.replaceOp(operation, *values);
    return success();
  }
};

struct DecomposeAggregatesPass
    : public mlir::rl::impl::DecomposeAggregatesBase<DecomposeAggregatesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::rl::populateDecomposeAggregatesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

struct StripTransformIRPass
    : public mlir::rl::impl::StripTransformIRBase<StripTransformIRPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef withSequences =
        transform::TransformDialect::kWithNamedSequenceAttrName;
    auto isTransformOp = [](Operation &op) {
      return op.getDialect() && isa<transform::TransformDialect>(op.getDialect());
    };
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations())) {
      auto nested = dyn_cast<ModuleOp>(op);
      bool transformModule =
          nested && (nested->hasAttr(withSequences) ||
                     (!nested.getBody()->empty() &&
                      llvm::all_of(nested.getBody()->getOperations(),
                                   isTransformOp)));
      if (isTransformOp(op) || transformModule)
        op.erase();
    }
    module->removeAttr(withSequences);
  }
};

struct LowerPackUnpackPass
    : public mlir::rl::impl::LowerPackUnpackBase<LowerPackUnpackPass> {
  void runOnOperation() override {
    SmallVector<Operation *> targets;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::PackOp, linalg::UnPackOp>(op))
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : targets) {
      rewriter.setInsertionPoint(op);
      // Failures (dynamic inner tiles) leave the op; bufferization reports it.
      if (auto pack = dyn_cast<linalg::PackOp>(op))
        (void)linalg::lowerPack(rewriter, pack);
      else
        (void)linalg::lowerUnPack(rewriter, cast<linalg::UnPackOp>(op));
    }
  }
};

struct MarkManualDeallocationPass
    : public mlir::rl::impl::MarkManualDeallocationBase<
          MarkManualDeallocationPass> {
  void runOnOperation() override {
    StringRef manual = bufferization::BufferizationDialect::kManualDeallocation;
    UnitAttr unit = UnitAttr::get(&getContext());
    getOperation()->walk([&](memref::DeallocOp dealloc) {
      dealloc->setAttr(manual, unit);
      if (Operation *alloc = dealloc.getMemref().getDefiningOp())
        if (isa<memref::AllocOp, memref::AllocaOp, memref::ReallocOp>(alloc))
          alloc->setAttr(manual, unit);
    });
  }
};

struct UnitSliceStridesPass
    : public mlir::rl::impl::UnitSliceStridesBase<UnitSliceStridesPass> {
  /// The strides with 1 on every dimension of static size 1; false when
  /// there is none to change.
  static bool unitStrides(ArrayRef<OpFoldResult> sizes,
                          SmallVector<OpFoldResult> &strides, Builder &b) {
    bool changed = false;
    for (auto [size, stride] : llvm::zip_equal(sizes, strides)) {
      std::optional<int64_t> n = getConstantIntValue(size);
      std::optional<int64_t> s = getConstantIntValue(stride);
      if (n && *n == 1 && (!s || *s != 1)) {
        stride = b.getIndexAttr(1);
        changed = true;
      }
    }
    return changed;
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> slices;
    getOperation()->walk([&](Operation *op) {
      if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp,
              tensor::ParallelInsertSliceOp>(op))
        slices.push_back(op);
    });
    for (Operation *op : slices) {
      auto slice = cast<OffsetSizeAndStrideOpInterface>(op);
      SmallVector<OpFoldResult> strides = slice.getMixedStrides();
      if (!unitStrides(slice.getMixedSizes(), strides, rewriter))
        continue;
      rewriter.setInsertionPoint(op);
      if (auto e = dyn_cast<tensor::ExtractSliceOp>(op))
        rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
            e, e.getType(), e.getSource(), e.getMixedOffsets(),
            e.getMixedSizes(), strides);
      else if (auto i = dyn_cast<tensor::InsertSliceOp>(op))
        rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
            i, i.getSource(), i.getDest(), i.getMixedOffsets(),
            i.getMixedSizes(), strides);
      else if (auto p = dyn_cast<tensor::ParallelInsertSliceOp>(op))
        rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
            p, p.getSource(), p.getDest(), p.getMixedOffsets(),
            p.getMixedSizes(), strides);
    }
  }
};

struct SplitEmptyTensorsPass
    : public mlir::rl::impl::SplitEmptyTensorsBase<SplitEmptyTensorsPass> {
  /// A use of the whole tensor as a destination: an init of a linalg op,
  /// a shared output of scf.forall, a reshape (of an im2col matmul's
  /// init). Slices of one empty tensor that are filled and inserted back
  /// (im2col) must keep sharing it.
  static bool isWholeDestination(OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      return linalgOp.isDpsInit(&use);
    if (auto forall = dyn_cast<scf::ForallOp>(user))
      return llvm::any_of(forall.getOutputsMutable(),
                          [&](OpOperand &o) { return &o == &use; });
    return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user);
  }

  /// An op whose results depend on no tensor it reads: without memory
  /// effects, its tensor operands empty tensors, its regions reading no
  /// tensor from above (a fill, scheduled or not). A clone of it costs a
  /// pass of writes, no more than the copy it saves.
  static bool writesOnly(Operation *op) {
    if (op->getNumRegions() == 0 || !isMemoryEffectFree(op))
      return false;
    for (Value v : op->getOperands())
      if (isa<TensorType>(v.getType()) && !v.getDefiningOp<tensor::EmptyOp>())
        return false;
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    return llvm::none_of(above,
                         [](Value v) { return isa<TensorType>(v.getType()); });
  }

  /// Whether `v` is the result of a write-only op, possibly through
  /// reshapes.
  static bool isWrittenOnly(Value v) {
    Operation *def = v.getDefiningOp();
    while (def && isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      def = def->getOperand(0).getDefiningOp();
    return def && def->getNumResults() == 1 && writesOnly(def);
  }

  /// A clone of `v`'s write-only producer and of the reshapes between
  /// them, at `b`'s insertion point; the clone of `v`.
  static Value cloneWrittenOnly(OpBuilder &b, Value v) {
    Operation *def = v.getDefiningOp();
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
      Value src = cloneWrittenOnly(b, def->getOperand(0));
      IRMapping map;
      map.map(def->getOperand(0), src);
      return b.clone(*def, map)->getResult(0);
    }
    return b.clone(*def)->getResult(0);
  }

  /// Gives each use of a write-only result (zeros: a padded input's, an
  /// accumulator's; scheduled or not) as a destination its own clone of
  /// it: as an init, a shared output of `scf.forall`, the destination of
  /// `tensor.insert_slice`. CSE merges such ops (one padded input shared
  /// by convolutions of one shape, one accumulator by matmuls of one
  /// shape); bufferized, every destination after the first would copy the
  /// whole buffer. A clone costs a pass of writes, no more than that copy.
  void untieWrittenOnlyDestinations() {
    SmallVector<Value> values;
    getOperation()->walk([&](Operation *op) {
      if (op->getNumResults() == 1 && isWrittenOnly(op->getResult(0)))
        values.push_back(op->getResult(0));
    });
    OpBuilder b(&getContext());
    for (Value v : values) {
      SmallVector<OpOperand *> dests;
      for (OpOperand &use : v.getUses()) {
        auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
        if ((insert && use.get() == insert.getDest()) ||
            (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                 use.getOwner()) &&
             isWholeDestination(use)))
          dests.push_back(&use);
      }
      if (dests.size() < 2)
        continue;
      b.setInsertionPointAfterValue(v);
      for (OpOperand *use : llvm::drop_begin(dests)) {
        // The destination the inserted value was computed in, when it is
        // a slice of `v` at the same place: it moves to the clone too.
        OpOperand *pairedSlice = nullptr;
        if (auto insert = dyn_cast<tensor::InsertSliceOp>(use->getOwner()))
          pairedSlice = findSliceDestination(insert, v);
        Value clone = cloneWrittenOnly(b, v);
        use->set(clone);
        if (pairedSlice) {
          OpBuilder::InsertionGuard guard(b);
          // The slice, and the reshapes between it and the operand (which
          // other copies' operands may share, merged by CSE).
          SmallVector<Operation *> chain;
          Operation *def = pairedSlice->get().getDefiningOp();
          while (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
            chain.push_back(def);
            def = def->getOperand(0).getDefiningOp();
          }
          chain.push_back(cast<tensor::ExtractSliceOp>(def));
          b.setInsertionPoint(pairedSlice->getOwner());
          IRMapping map;
          map.map(v, clone);
          Value moved;
          for (Operation *op : llvm::reverse(chain))
            moved = b.clone(*op, map)->getResult(0);
          pairedSlice->set(moved);
        }
      }
    }
  }

  /// The operand through which `insert`'s source was computed in place
  /// (destination-passing: a shared output of scf.forall, an init), when
  /// it is a slice of `v` at the place `insert` writes; null otherwise.
  static OpOperand *findSliceDestination(tensor::InsertSliceOp insert,
                                         Value v) {
    Value cur = insert.getSource();
    OpOperand *operand = nullptr;
    for (int depth = 0; depth < 8; ++depth) {
      auto result = dyn_cast<OpResult>(cur);
      if (!result)
        return nullptr;
      Operation *def = result.getOwner();
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
        if (!operand || slice.getSource() != v ||
            slice.getMixedOffsets() != insert.getMixedOffsets() ||
            slice.getMixedSizes() != insert.getMixedSizes() ||
            slice.getMixedStrides() != insert.getMixedStrides())
          return nullptr;
        return operand;
      }
      if (auto forall = dyn_cast<scf::ForallOp>(def))
        operand = &forall.getOutputsMutable()[result.getResultNumber()];
      else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
        // A view of the slice (an im2col tensor's flat pixel rows as
        // [OH, OW]): the caller moves it with the slice.
        cur = def->getOperand(0);
        continue;
      } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
        operand = dps.getTiedOpOperand(result);
      else
        return nullptr;
      cur = operand->get();
    }
    return nullptr;
  }

  /// A reshape of an empty tensor is an empty tensor of its shape (so
  /// that its uses can be split like the others').
  /// In program order, so that a chain of reshapes folds in one walk.
  void foldReshapedEmpties() {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](Operation *op) {
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) ||
          !op->getOperand(0).getDefiningOp<tensor::EmptyOp>())
        return;
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      if (!type.hasStaticShape())
        return;
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
          op, type.getShape(), type.getElementType(), type.getEncoding());
    });
  }

  /// Reads of a value after it was inserted into a larger tensor read the
  /// inserted slice instead (canonicalization folds a slice of the
  /// insertion back to the value, a depthwise convolution's centre tap):
  /// computed in place in that tensor, the value would otherwise be read
  /// after the insertion wrote its buffer, which bufferization resolves by
  /// computing it out of place and copying it in and out.
  void readInsertedValuesThroughInsertions() {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation()->walk(
        [&](tensor::InsertSliceOp insert) { inserts.push_back(insert); });
    OpBuilder b(&getContext());
    for (tensor::InsertSliceOp insert : inserts) {
      Value src = insert.getSource();
      Block *block = insert->getBlock();
      SmallVector<OpOperand *> later;
      for (OpOperand &use : src.getUses()) {
        Operation *user = block->findAncestorOpInBlock(*use.getOwner());
        if (user && user != insert && insert->isBeforeInBlock(user) &&
            !isWholeDestination(use))
          later.push_back(&use);
      }
      if (later.empty())
        continue;
      b.setInsertionPointAfter(insert);
      Value slice = tensor::ExtractSliceOp::create(
          b, insert.getLoc(), cast<RankedTensorType>(src.getType()),
          insert.getResult(), insert.getMixedOffsets(), insert.getMixedSizes(),
          insert.getMixedStrides());
      for (OpOperand *use : later)
        use->set(slice);
    }
  }

  void runOnOperation() override {
    foldReshapedEmpties();
    untieWrittenOnlyDestinations();
    readInsertedValuesThroughInsertions();
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    OpBuilder b(&getContext());
    for (tensor::EmptyOp op : empties) {
      SmallVector<OpOperand *> whole;
      for (OpOperand &use : op->getUses())
        if (isWholeDestination(use))
          whole.push_back(&use);
      if (whole.size() < 2)
        continue;
      // One whole use keeps the original (with any slices of it); each
      // other gets a clone next to it (not inside the user's loops).
      b.setInsertionPointAfter(op);
      for (OpOperand *use : llvm::drop_begin(whole))
        use->set(b.clone(*op)->getResult(0));
    }
  }
};

struct LowerCopiesPass
    : public mlir::rl::impl::LowerCopiesBase<LowerCopiesPass> {
  using LowerCopiesBase::LowerCopiesBase;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      auto src = dyn_cast<MemRefType>(copy.getSource().getType());
      auto dst = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!src || !dst || !src.hasStaticShape() || src.getRank() == 0 ||
          src.getShape() != dst.getShape() ||
          src.getElementType() != dst.getElementType())
        continue;
      int64_t elements = src.getNumElements();
      bool contiguous = memref::isStaticShapeAndContiguousRowMajor(src) &&
                        memref::isStaticShapeAndContiguousRowMajor(dst);
      bool nested = copy->getParentOfType<scf::ForallOp>() ||
                    copy->getParentOfType<scf::ParallelOp>();
      bool parallel = !nested && elements >= minParallelElements &&
                      src.getRank() >= 2;
      if (contiguous && !parallel)
        continue; // one memcpy
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      SmallVector<Value> ubs;
      for (int64_t size : src.getShape())
        ubs.push_back(arith::ConstantIndexOp::create(b, loc, size));
      SmallVector<Value> lbs(ubs.size(), zero), steps(ubs.size(), one);
      // Loads and stores; LLVM vectorizes the innermost loop.
      auto move = [&](OpBuilder &lb, Location l, ValueRange ivs) {
        Value v = memref::LoadOp::create(lb, l, copy.getSource(), ivs);
        memref::StoreOp::create(lb, l, v, copy.getTarget(), ivs);
      };
      if (parallel) {
        // The outer dimensions in parallel, the innermost one serial.
        scf::ParallelOp::create(
            b, loc, ArrayRef(lbs).drop_back(), ArrayRef(ubs).drop_back(),
            ArrayRef(steps).drop_back(),
            [&](OpBuilder &pb, Location l, ValueRange outer) {
              scf::buildLoopNest(
                  pb, l, lbs.back(), ubs.back(), steps.back(),
                  [&](OpBuilder &ib, Location il, ValueRange inner) {
                    SmallVector<Value> ivs(outer);
                    ivs.append(inner.begin(), inner.end());
                    move(ib, il, ivs);
                  });
            });
      } else {
        scf::buildLoopNest(b, loc, lbs, ubs, steps, move);
      }
      copy.erase();
    }
  }
};

/// A transfer_read that reads one element and broadcasts it (every vector
/// dimension it maps to the source has size 1: what the vectorizer emits for
/// a per-channel operand such as a batch norm's scale, `(0, d0, 0, 0)`), as
/// that element's load and a vector.broadcast. Upstream lowers such a read,
/// whose broadcast dimension is not leading, into a loop that inserts the
/// element into the vector lane by lane (with a dynamic index, through the
/// stack): an elementwise op with four such operands ran 40x slower than
/// its loads and stores. Only reads at constant indices inside a static
/// source, unmasked.
struct ScalarBroadcastRead : public OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    VectorType vt = read.getVectorType();
    if (read.getMask() || vt.isScalable() || vt.getNumElements() == 1)
      return failure();
    auto st = dyn_cast<ShapedType>(read.getBase().getType());
    if (!st || !st.hasStaticShape() || st.getElementType() != vt.getElementType())
      return failure();
    AffineMap map = read.getPermutationMap();
    for (auto [i, expr] : llvm::enumerate(map.getResults()))
      if (!isa<AffineConstantExpr>(expr) && vt.getDimSize(i) != 1)
        return failure();
    SmallVector<Value> indices(read.getIndices());
    for (auto [i, index] : llvm::enumerate(indices)) {
      std::optional<int64_t> c = getConstantIntValue(index);
      if (!c || *c < 0 || *c >= st.getDimSize(i))
        return failure();
    }
    Value element;
    if (isa<RankedTensorType>(st))
      element = tensor::ExtractOp::create(rewriter, read.getLoc(), read.getBase(),
                                          indices);
    else if (isa<MemRefType>(st))
      element = memref::LoadOp::create(rewriter, read.getLoc(), read.getBase(),
                                       indices);
    else
      return failure();
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, vt, element);
    return success();
  }
};

/// A transfer_read whose innermost vector dimensions broadcast (its
/// permutation map gives them the constant 0) from a tensor whose
/// dimensions past the ones it reads are unit: a per-channel parameter
/// [C, 1, 1] read as vector<C x H x W> by an NCHW op (batch norm's scale
/// and shift, torch-mlir's broadcast shape). Lowered as it is, each row of
/// the vector becomes a loop over its lanes, each a scalar load: 128
/// loops in one 64x2x4 read, and ResNet-18 had 76 such reads, the bulk of
/// its LLVM time (LICM alone 10 s). Instead: the read of the leading
/// dimensions from the tensor without its unit ones (one contiguous vector
/// load), shaped back with unit dimensions and broadcast along them.
struct InnerBroadcastRead : public OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    VectorType vt = read.getVectorType();
    auto source = dyn_cast<RankedTensorType>(read.getBase().getType());
    if (read.getMask() || vt.isScalable() || vt.getRank() < 2 || !source ||
        !source.hasStaticShape() ||
        source.getElementType() != vt.getElementType())
      return failure();
    for (int64_t i = 0; i < vt.getRank(); ++i)
      if (!read.isDimInBounds(i))
        return failure();
    AffineMap map = read.getPermutationMap();
    // The vector's trailing broadcast dimensions, and its leading ones
    // reading the source's leading dimensions in order.
    int64_t rank = vt.getRank(), kept = rank;
    while (kept > 0 && isa<AffineConstantExpr>(map.getResult(kept - 1))) {
      if (cast<AffineConstantExpr>(map.getResult(kept - 1)).getValue() != 0)
        return failure();
      --kept;
    }
    if (kept == rank || kept == 0)
      return failure();
    for (int64_t i = 0; i < kept; ++i) {
      auto d = dyn_cast<AffineDimExpr>(map.getResult(i));
      if (!d || d.getPosition() != i)
        return failure();
    }
    // The source's dimensions past those: unit, read at 0.
    ArrayRef<int64_t> shape = source.getShape();
    for (int64_t i = kept; i < source.getRank(); ++i)
      if (shape[i] != 1 || !isConstantIntValue(read.getIndices()[i], 0))
        return failure();
    Location loc = read.getLoc();
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < kept; ++i)
      groups.push_back({i});
    for (int64_t i = kept; i < source.getRank(); ++i)
      groups.back().push_back(i);
    auto collapsedType = RankedTensorType::get(shape.take_front(kept),
                                               source.getElementType());
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, collapsedType, read.getBase(), groups);
    auto leading = VectorType::get(vt.getShape().take_front(kept),
                                   vt.getElementType());
    SmallVector<Value> indices(read.getIndices().take_front(kept));
    Value part = vector::TransferReadOp::create(
        rewriter, loc, leading, collapsed, indices,
        AffineMapAttr::get(rewriter.getMultiDimIdentityMap(kept)),
        read.getPadding(), /*mask=*/Value(),
        rewriter.getBoolArrayAttr(SmallVector<bool>(kept, true)));
    SmallVector<int64_t> unit(vt.getShape().take_front(kept));
    unit.append(rank - kept, 1);
    Value shaped = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get(unit, vt.getElementType()), part);
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, vt, shaped);
    return success();
  }
};

/// A transfer_read of a tensor slice whose innermost stride is small and
/// above one (what a pooling or a convolution of stride 2 reads, window by
/// window, after mlir-rl-unroll-windows or conv-to-matmul) as a contiguous
/// read of the span it covers and one vector.shuffle per row that keeps every
/// stride-th element. Upstream lowers a strided read into one scalar load
/// and insert per element (a 3x3 max pooling of stride 2 spent its time
/// there). Only unmasked reads with a minor identity map that are in bounds
/// along the innermost dimension, from a rank-preserving static slice.
struct StridedInnerRead : public OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  static constexpr int64_t kMaxStride = 4;
  static constexpr int64_t kMaxRows = 256;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto slice = read.getBase().getDefiningOp<tensor::ExtractSliceOp>();
    VectorType vt = read.getVectorType();
    if (!slice || read.getMask() || vt.isScalable() || vt.getRank() == 0 ||
        !read.getPermutationMap().isMinorIdentity() ||
        !read.isDimInBounds(vt.getRank() - 1))
      return failure();
    RankedTensorType sliceType = slice.getResultType();
    if (sliceType.getRank() != slice.getSourceType().getRank() ||
        ShapedType::isDynamic(sliceType.getShape().back()))
      return failure();
    SmallVector<OpFoldResult> strides = slice.getMixedStrides();
    std::optional<int64_t> stride = getConstantIntValue(strides.back());
    if (!stride || *stride <= 1 || *stride > kMaxStride)
      return failure();
    int64_t n = vt.getShape().back();
    int64_t rows = vt.getNumElements() / n;
    if (rows > kMaxRows)
      return failure();

    Location loc = read.getLoc();
    int64_t s = *stride;
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    sizes.back() = rewriter.getIndexAttr(s * (sliceType.getShape().back() - 1) + 1);
    strides.back() = rewriter.getIndexAttr(1);
    Value span = tensor::ExtractSliceOp::create(
        rewriter, loc, slice.getSource(), slice.getMixedOffsets(), sizes, strides);
    SmallVector<Value> indices(read.getIndices());
    AffineExpr d0 = rewriter.getAffineDimExpr(0);
    indices.back() = affine::makeComposedAffineApply(
                         rewriter, loc, d0 * s, {getAsOpFoldResult(indices.back())})
                         .getResult();
    SmallVector<int64_t> wideShape(vt.getShape());
    wideShape.back() = s * (n - 1) + 1;
    auto wideType = VectorType::get(wideShape, vt.getElementType());
    Value wide = vector::TransferReadOp::create(
        rewriter, loc, wideType, span, indices, read.getPermutationMapAttr(),
        read.getPadding(), /*mask=*/Value(), read.getInBoundsAttr());

    SmallVector<int64_t> keep;
    for (int64_t i = 0; i < n; ++i)
      keep.push_back(i * s);
    if (vt.getRank() == 1) {
      rewriter.replaceOpWithNewOp<vector::ShuffleOp>(read, wide, wide, keep);
      return success();
    }
    SmallVector<int64_t> rowStrides = computeStrides(vt.getShape().drop_back());
    Value result = ub::PoisonOp::create(rewriter, loc, vt);
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<int64_t> pos = delinearize(r, rowStrides);
      Value row = vector::ExtractOp::create(rewriter, loc, wide, pos);
      Value picked = vector::ShuffleOp::create(rewriter, loc, row, row, keep);
      result = vector::InsertOp::create(rewriter, loc, picked, result, pos);
    }
    rewriter.replaceOp(read, result);
    return success();
  }
};

/// The identity of `kind` on `elt` (null when unknown).
static TypedAttr getReductionIdentity(vector::CombiningKind kind, Type elt) {
  using K = vector::CombiningKind;
  if (auto f = dyn_cast<FloatType>(elt)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    switch (kind) {
    case K::ADD:
      return FloatAttr::get(f, APFloat::getZero(sem, /*Negative=*/true));
    case K::MUL:
      return FloatAttr::get(f, APFloat::getOne(sem));
    case K::MAXIMUMF:
    case K::MAXNUMF:
      return FloatAttr::get(f, APFloat::getInf(sem, /*Negative=*/true));
    case K::MINIMUMF:
    case K::MINNUMF:
      return FloatAttr::get(f, APFloat::getInf(sem, /*Negative=*/false));
    default:
      return {};
    }
  }
  if (auto i = dyn_cast<IntegerType>(elt)) {
    unsigned w = i.getWidth();
    switch (kind) {
    case K::ADD:
    case K::OR:
    case K::XOR:
    case K::MAXUI:
      return IntegerAttr::get(i, APInt::getZero(w));
    case K::MUL:
      return IntegerAttr::get(i, APInt(w, 1));
    case K::AND:
    case K::MINUI:
      return IntegerAttr::get(i, APInt::getAllOnes(w));
    case K::MAXSI:
      return IntegerAttr::get(i, APInt::getSignedMinValue(w));
    case K::MINSI:
      return IntegerAttr::get(i, APInt::getSignedMaxValue(w));
    default:
      return {};
    }
  }
  return {};
}

/// A reduction tiled along its reduced dimension carries the partial
/// result through an scf.for: `acc = multi_reduction(tile, acc)` at every
/// step, which reduces each tile to the accumulator's shape (a transpose
/// and a chain of dependent ops per tile). Instead the loop carries a
/// tile-shaped accumulator, combined elementwise (independent lanes), and
/// the tile is reduced once after the loop. Row max 384x384, 2 threads:
/// `TP(32,0) T(8,16) V` 0.029 -> 0.010-0.016 ms, `T(8,64)` 0.020-0.026 ->
/// 0.010 ms. Floating-point sums are reassociated (as
/// `reassociate-fp-reductions` does for the rest). Tiles of at most 512
/// elements (the 32 vector registers of AVX-512).
static bool reassociateLoopReduction(scf::ForOp loop, unsigned i) {
  BlockArgument acc = loop.getRegionIterArg(i);
  if (!acc.hasOneUse())
    return false;
  auto red = dyn_cast<vector::MultiDimReductionOp>(*acc.getUsers().begin());
  if (!red || red.getAcc() != acc || red->getParentOp() != loop.getOperation())
    return false;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!red.getResult().hasOneUse() || yield.getOperand(i) != red.getResult())
    return false;
  VectorType tileType = red.getSourceVectorType();
  if (tileType.isScalable() || tileType.getNumElements() > 512 ||
      red.getResult().getType() == tileType)
    return false;
  // Reduced dimensions of one element (a window tiled to 1x1) have nothing
  // to reassociate; other patterns fold such reductions into elementwise
  // ops, which a tile-shaped accumulator would only get in the way of.
  int64_t reducedElements = 1;
  for (auto [size, reduced] :
       llvm::zip(tileType.getShape(), red.getReductionMask()))
    if (reduced)
      reducedElements *= size;
  if (reducedElements <= 1)
    return false;
  TypedAttr identity =
      getReductionIdentity(red.getKind(), tileType.getElementType());
  if (!identity)
    return false;
  vector::CombiningKind kind = red.getKind();
  SmallVector<bool> mask(red.getReductionMask());
  Location loc = red.getLoc();
  OpBuilder b(loop);
  Value init = loop.getInitArgs()[i];
  Value wideInit = arith::ConstantOp::create(
      b, loc, tileType, SplatElementsAttr::get(tileType, identity));
  loop.getInitArgsMutable()[i].set(wideInit);
  acc.setType(tileType);
  Value result = loop.getResult(i);
  result.setType(tileType);
  b.setInsertionPoint(red);
  Value combined =
      vector::makeArithReduction(b, loc, kind, red.getSource(), acc);
  red.getResult().replaceAllUsesWith(combined);
  red.erase();
  b.setInsertionPointAfter(loop);
  auto reduced =
      vector::MultiDimReductionOp::create(b, loc, result, init, mask, kind);
  result.replaceAllUsesExcept(reduced.getResult(), reduced);
  return true;
}

struct LowerVectorOpsPass
    : public mlir::rl::impl::LowerVectorOpsBase<LowerVectorOpsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // 0. A tile that a reduction loop reads and writes back at every step
    //    (a matmul's accumulator under K tiling, a row max's partial result)
    //    as a value the loop carries: read before the loop, written after
    //    it, in registers in between instead of a load and a store per
    //    step (matmul 384x768x768, T(8,32,8) V, one thread: 5.2 -> 4.1 ms).
    //    Innermost loops first, so that a hoisted tile can move again.
    {
      IRRewriter rewriter(ctx);
      SmallVector<scf::ForOp> loops;
      getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        (void)hoistLoopInvariantSubsets(rewriter, loop);
    }
    // 1. Multiply + multi_reduction (what the vectorizer emits for matmuls)
    //    into vector.contract; transfer permutations into broadcasts and
    //    transposes.
    {
      RewritePatternSet patterns(ctx);
      patterns.add<ScalarBroadcastRead>(ctx, /*benefit=*/2);
      patterns.add<StridedInnerRead, InnerBroadcastRead>(ctx);
      // A tile of a strided slice as one strided slice, for StridedInnerRead.
      tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateSinkVectorOpsPatterns(patterns);
      for (RegisteredOperationName name : ctx->getRegisteredOperations())
        if (name.getDialectNamespace() == "vector")
          name.getCanonicalizationPatterns(patterns, ctx);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // 1b. Loop-carried tile reductions reassociated (see above).
    {
      SmallVector<scf::ForOp> loops;
      getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i)
          (void)reassociateLoopReduction(loop, i);
    }
    // 2. Multi-reductions along a long innermost run (a softmax's row max
    //    and row sum) as one vector.reduction per row: LLVM splits it into
    //    full-width vertical ops and one horizontal step per row. The
    //    default below would first transpose the tile so that the reduced
    //    dimension is outermost, a shuffle per element.
    lowerSelected<vector::MultiDimReductionOp>(
        reducesLongInnerRun, [](RewritePatternSet &patterns) {
          vector::populateVectorMultiReductionLoweringPatterns(
              patterns, vector::VectorMultiReductionLowering::InnerReduction);
        });
    // 2b. Contractions that reduce the innermost dimension of both operands
    //    (A x B^T: a batch-1 linear layer reading its [N, K] weight by row)
    //    over one row or a long reduction, as dot products: elementwise
    //    multiplies and one reduction per output element. The outer-product
    //    lowering below transposes both tiles element by element.
    lowerSelected<vector::ContractionOp>(
        prefersDotLowering, [](RewritePatternSet &patterns) {
          vector::populateVectorContractLoweringPatterns(
              patterns, vector::VectorContractLowering::Dot);
        });
    // 3. Contractions into outer products into FMAs; the remaining
    //    multi-reductions into elementwise ops across the reduced dimension.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerParallel);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
  }

  /// Applies the patterns `populate` adds to the ops of type OpTy that
  /// `select` picks, and to the ops they create, before the general
  /// lowering below takes the rest.
  template <typename OpTy, typename Select, typename Populate>
  void lowerSelected(Select select, Populate populate) {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](OpTy op) {
      if (select(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populate(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
  }

  /// Whether `op` is better lowered to dot products than to outer products:
  /// it has one reduction dimension, the innermost of both operands (A x
  /// B^T), and the tile has one row or reduces at least 64 elements. With
  /// shorter reductions over several rows the outer products' transposes
  /// become shuffles that cost less than one horizontal reduction per output
  /// element. Measured on matmuls reading B as [N, K] (2 threads, tile
  /// M x N x K, outer -> dot): 1x64x64 1.23 -> 0.29 ms, 1x8x16 0.44 -> 0.23,
  /// 4x16x64 0.79 -> 0.47, 4x8x16 0.58 -> 0.86, 8x32x8 2.0 -> 4.8, 8x16x16
  /// 1.9 -> 3.9, a batch matmul's 1x8x8x32 0.032 -> 0.051.
  static bool prefersDotLowering(vector::ContractionOp op) {
    constexpr int64_t kMinDotReduction = 64;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<vector::IteratorType> iterators = op.getIteratorTypesArray();
    std::optional<unsigned> reduced;
    for (auto [i, it] : llvm::enumerate(iterators)) {
      if (it != vector::IteratorType::reduction)
        continue;
      if (reduced)
        return false;
      reduced = i;
    }
    if (!reduced || op.getLhsType().isScalable() ||
        op.getRhsType().isScalable())
      return false;
    AffineExpr k = getAffineDimExpr(*reduced, op.getContext());
    for (AffineMap map : {maps[0], maps[1]})
      if (map.getNumResults() == 0 ||
          map.getResult(map.getNumResults() - 1) != k)
        return false;
    ArrayRef<int64_t> lhsShape = op.getLhsType().getShape();
    int64_t rows = 1;
    for (int64_t size : lhsShape.drop_back())
      rows *= size;
    return rows == 1 || lhsShape.back() >= kMinDotReduction;
  }

  /// Whether `op` reduces exactly its innermost dimensions, of at least
  /// kMinInnerRun elements together: then reducing each row in place beats
  /// transposing the reduced dimension outwards.
  static bool reducesLongInnerRun(vector::MultiDimReductionOp op) {
    // Softmax 384x384 rows (4x384 tiles): 0.106 -> 0.083 ms; a 8x16 tile
    // measured the same either way.
    constexpr int64_t kMinInnerRun = 32;
    VectorType type = op.getSourceVectorType();
    if (type.isScalable() || type.getRank() < 2)
      return false;
    ArrayRef<bool> reduced = op.getReductionMask();
    int64_t rank = type.getRank(), run = 1;
    int64_t i = rank - 1;
    for (; i >= 0 && reduced[i]; --i)
      run *= type.getDimSize(i);
    if (i == rank - 1)
      return false; // the innermost dimension is parallel
    for (; i >= 0; --i)
      if (reduced[i])
        return false; // a reduced dimension outside the parallel ones
    return run >= kMinInnerRun;
  }
};

/// A math op on vectors of rank >= 2 as the same op on each 1-D row.
struct UnrollMathToRows : public RewritePattern {
  UnrollMathToRows(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<math::MathDialect>(op->getDialect()) || op->getNumResults() != 1 ||
        op->getNumRegions() != 0)
      return failure();
    auto type = dyn_cast<VectorType>(op->getResult(0).getType());
    if (!type || type.getRank() < 2 || type.isScalable())
      return failure();
    for (Value v : op->getOperands()) {
      auto t = dyn_cast<VectorType>(v.getType());
      if (!t || t.getShape() != type.getShape())
        return failure();
    }
    Location loc = op->getLoc();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> strides = computeStrides(shape.drop_back());
    int64_t rows = computeProduct(shape.drop_back());
    Value result = ub::PoisonOp::create(rewriter, loc, type);
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<int64_t> pos = delinearize(r, strides);
      SmallVector<Value> operands;
      for (Value v : op->getOperands())
        operands.push_back(vector::ExtractOp::create(rewriter, loc, v, pos));
      OperationState state(loc, op->getName());
      state.addOperands(operands);
      state.addAttributes(op->getAttrs());
      state.addTypes(VectorType::get({shape.back()}, type.getElementType()));
      Operation *row = rewriter.create(state);
      result = vector::InsertOp::create(rewriter, loc, row->getResult(0),
                                        result, pos);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The f32 math ops approximated by polynomials (upstream's, accurate to a
/// few ulp on f32): the transcendental functions of networks (GELU's erf and
/// tanh, softmax's and sigmoid's exp, log-softmax's log). Approximated, they
/// stay vectorized; as LLVM intrinsics they would be scalarized into one
/// libm call per lane. f64 keeps the intrinsics and libm.
bool isApproximatedMathOp(StringRef name) {
  name.consume_front("math."); // upstream passes operation names
  return llvm::is_contained({"tanh", "erf", "erfc", "exp", "expm1", "log",
                             "log1p", "log2"},
                            name);
}

/// Whether `op`, defined outside a region that uses its result, is cloned
/// into the region's function rather than passed to it: a constant or a
/// global's address (which the code generator then sees as such).
static bool isClonedIntoOutlined(Operation *op) {
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1 &&
         (op->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(op));
}

/// `loop` (inside `parent`) moved into a new private function, which is
/// called in its place.
static void outlineParallelLoop(scf::ParallelOp loop, func::FuncOp parent,
                                SymbolTable &symbols) {
  // What the loop uses from above: its operands and its body's captures.
  llvm::SetVector<Value> captured;
  for (Value v : loop->getOperands())
    captured.insert(v);
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  SmallVector<Value> arguments;
  SmallVector<Operation *> cloned;
  for (Value v : captured) {
    if (Operation *def = v.getDefiningOp(); isClonedIntoOutlined(def)) {
      if (!llvm::is_contained(cloned, def))
        cloned.push_back(def);
      continue;
    }
    arguments.push_back(v);
  }
  OpBuilder b(loop.getContext());
  auto type = b.getFunctionType(ValueRange(arguments).getTypes(),
                                loop->getResultTypes());
  auto fn = func::FuncOp::create(b, loop.getLoc(),
                                 (parent.getSymName() + "_parallel").str(), type);
  fn.setPrivate();
  fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  symbols.insert(fn); // at the module's end, renamed where the name is taken
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  for (auto [v, arg] : llvm::zip(arguments, entry->getArguments()))
    map.map(v, arg);
  b.setInsertionPointToStart(entry);
  for (Operation *def : cloned)
    b.clone(*def, map);
  Operation *copy = b.clone(*loop, map);
  func::ReturnOp::create(b, loop.getLoc(), copy->getResults());
  b.setInsertionPoint(loop);
  auto call = func::CallOp::create(b, loop.getLoc(), fn, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
}

struct OutlineParallelLoopsPass
    : public mlir::rl::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<scf::ParallelOp, func::FuncOp>> loops;
    for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      fn.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
        loops.push_back({loop, fn});
        return WalkResult::skip(); // the loops inside it stay in it
      });
    }
    for (auto [loop, fn] : loops)
      outlineParallelLoop(loop, fn, symbols);
  }
};

struct ExpandBF16Pass : public mlir::rl::impl::ExpandBF16Base<ExpandBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

struct LowerMathPass : public mlir::rl::impl::LowerMathBase<LowerMathPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    {
      // x^n with a constant n (GELU's tanh form: x^3) as multiplications;
      // the LLVM conversion takes fpowi only with a scalar exponent. What
      // is left (a variable exponent, ipowi) goes to convert-math-to-funcs.
      RewritePatternSet patterns(ctx);
      math::populateExpansionPatterns(patterns, {"fpowi"});
      populateMathPolynomialApproximationPatterns(patterns,
                                                  isApproximatedMathOp);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      patterns.add<UnrollMathToRows>(ctx);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // Only the ops without an LLVM intrinsic become libm calls.
    SmallVector<Operation *> noIntrinsic;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ErfOp, math::ErfcOp, math::CbrtOp, math::AsinhOp,
              math::AcoshOp, math::AtanhOp>(op))
        noIntrinsic.push_back(op);
    });
    if (noIntrinsic.empty())
      return;
    RewritePatternSet patterns(ctx);
    populateMathToLibmConversionPatterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(noIntrinsic, std::move(patterns), config);
  }
};
} // namespace

void mlir::rl::populateDecomposeAggregatesPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAggregatedOp>(patterns.getContext());
}
