//===- Bf16Dot.cpp - bf16 matmuls on AVX-512 BF16's dot product ----------===//
//
// mlir-rl-bf16-dot (see Passes.td): a matmul or batch matmul whose f32
// operands are bf16 values extended (torch-mlir's form of a bf16 linear
// layer, and what mlir-rl-compute-in-f32 makes of a bf16 matmul) becomes a
// micro-kernel of `x86vector.avx512.dot` (vdpbf16ps: 16 lanes, each the sum
// of two bf16 products added to an f32 accumulator; twice the products of
// an f32 FMA per instruction).
//
// The pairs of B it multiplies (B[2k][n], B[2k+1][n]) come from a constant
// packed at compile time in VNNI panels, Bp[j][k/2][i][2] = B[k][j*NB+i]
// (NB columns, one or two vectors; held as [J][K/2][NB * 2], so that a
// vector of pairs is one read), or else from two rows of B interleaved in
// registers. A is read as [M][K/2][2], a pair of bf16 broadcast to all
// lanes per row. A tile of MR rows by NB columns keeps MR * NB / 16
// accumulators in registers over the whole reduction; the tiles are an
// scf.forall over ((batch,) panel, row tile).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

namespace mlir::rl {
#define GEN_PASS_DEF_BF16DOT
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace mlir::rl {

bool hostHasBf16Dot() {
  if (const char *env = std::getenv("MLIR_RL_BF16_DOT"))
    return StringRef(env) == "1";
  llvm::Triple host(llvm::sys::getProcessTriple());
  if (!host.isX86())
    return false;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") && features.lookup("avx512bf16");
}

} // namespace mlir::rl

namespace {

constexpr int64_t kLanes = 16;  // f32 lanes of a zmm register
constexpr int64_t kRowTile = 8; // rows of a tile (8 x 2 accumulators)

/// The bf16 tensor that `v` (f32) is the exact extension of: the result of
/// an elementwise linalg.generic of one input whose body only extends it,
/// possibly through reshapes (mlir-rl-compute-in-f32 moves extensions above
/// them). With `b`, that tensor in `v`'s shape (the same reshapes built on
/// the bf16 one, at b's insertion point); without, a non-null value says
/// that there is one.
Value getExtendedBf16(Value v, OpBuilder *b) {
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    Value src = getExtendedBf16(collapse.getSrc(), b);
    if (!src || !b)
      return src;
    return tensor::CollapseShapeOp::create(
        *b, collapse.getLoc(), collapse.getResultType().clone(b->getBF16Type()),
        src, collapse.getReassociationIndices());
  }
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    Value src = getExtendedBf16(expand.getSrc(), b);
    if (!src || !b || !expand.getResultType().hasStaticShape())
      return expand.getResultType().hasStaticShape() ? src : Value();
    return tensor::ExpandShapeOp::create(
        *b, expand.getLoc(), expand.getResultType().clone(b->getBF16Type()),
        src, expand.getReassociationIndices());
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return {};
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!ext || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != ext.getResult() ||
      ext.getIn() != body.getArgument(0) || !ext.getIn().getType().isBF16() ||
      !ext.getType().isF32())
    return {};
  return g.getDpsInputs()[0];
}

/// A bf16 right-hand side known at compile time: the constant and whether
/// B is its transpose (a linear layer's weight [N, K]).
struct ConstantRhs {
  arith::ConstantOp constant;
  bool transposed = false;
};

std::optional<ConstantRhs> getConstantRhs(Value bf16) {
  bool transposed = false;
  if (auto t = bf16.getDefiningOp<linalg::TransposeOp>()) {
    if (t.getPermutation() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    bf16 = t.getInput();
    transposed = true;
  }
  auto cst = rl::skipReshapes(bf16).getDefiningOp<arith::ConstantOp>();
  if (!cst ||
      !isa<DenseElementsAttr, DenseResourceElementsAttr>(cst.getValue()))
    return std::nullopt;
  return ConstantRhs{cst, transposed};
}

/// What a matmul becomes: its operands' sources and its shape.
struct Candidate {
  linalg::LinalgOp op;
  bool batched = false; // loops (b, m, n, k): a batch matmul
  int64_t batches = 1, m = 0, n = 0, k = 0, panel = 0;
  int64_t nMain = 0; // columns in panels; the rest an f32 matmul of its own
  int64_t kMain = 0; // K, or K - 1 where K is odd (its last step in f32)
  Value lhs; // bf16 [(B,) M, K]
  Value rhs; // bf16 [(B,) K, N]: read as it is where it is not a constant
  std::optional<ConstantRhs> constant; // packed at compile time
  std::optional<Value> fillValue;      // the init's scalar where it is a fill
};

/// `op` as a candidate, or nothing; the bf16 operands it reads are built
/// before it with `b` where they are reshapes (unused if nothing comes of
/// them: the pass's clean-up erases them).
std::optional<Candidate> getCandidate(linalg::LinalgOp op, OpBuilder &b) {
  std::optional<std::vector<int64_t>> extents =
      rl::getRegisterTileExtents(op);
  if (!extents)
    return std::nullopt;
  Candidate c;
  c.op = op;
  c.batched = extents->size() == 4;
  ArrayRef<int64_t> e(*extents);
  if (c.batched) {
    c.batches = e.front();
    e = e.drop_front();
  }
  c.m = e[0];
  c.n = e[1];
  c.k = e[2];
  Value init = op.getDpsInits()[0];
  c.kMain = c.k / 2 * 2;
  if (!getElementTypeOrSelf(init.getType()).isF32() || c.kMain == 0)
    return std::nullopt;
  // Panels of two vectors, else of one; columns past the last panel (N not
  // a multiple of 16 or 32) are left to an f32 matmul of their own.
  c.panel = c.n % (2 * kLanes) == 0 || (c.n % kLanes != 0 && c.n >= 2 * kLanes)
                ? 2 * kLanes
                : kLanes;
  c.nMain = c.n / c.panel * c.panel;
  if (c.nMain == 0)
    return std::nullopt;
  // A contraction (getRegisterTileExtents) of f32 operands that are bf16
  // values extended.
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  if (!getExtendedBf16(lhs, nullptr) || !getExtendedBf16(rhs, nullptr))
    return std::nullopt;
  b.setInsertionPoint(op);
  c.lhs = getExtendedBf16(lhs, &b);
  c.rhs = getExtendedBf16(rhs, &b);
  if (!c.batched)
    c.constant = getConstantRhs(c.rhs);
  // The panels need a run of the constant's elements: a plain B's first
  // rows (all columns), a weight's first rows (all of K). Else B is read as
  // an argument's rows.
  if (c.constant && (c.constant->transposed ? c.kMain != c.k : c.nMain != c.n))
    c.constant.reset();
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (fill.getInputs()[0].getType().isF32())
      c.fillValue = fill.getInputs()[0];
  return c;
}

/// `rest` after `lead`, the batch dimension's entry, where `c` is a batch
/// matmul: the indices, offsets, sizes and shapes of its operands.
template <typename T>
SmallVector<T> withBatch(const Candidate &c, T lead, ArrayRef<T> rest) {
  SmallVector<T> out;
  if (c.batched)
    out.push_back(lead);
  out.append(rest.begin(), rest.end());
  return out;
}

/// One scf.forall over ((batch,) panel, row tile) for rows [row0, row0 +
/// rows) in tiles of `mr` rows; `out` is the [(B,) M, N] f32 tensor it
/// writes into. `bp` is the packed constant [J][K/2][NB * 2], or null: B
/// [(B,) K, N] is then read two rows at a time and interleaved in
/// registers into the same pairs.
Value buildTiles(OpBuilder &b, Location loc, const Candidate &c, Value a,
                 Value bp, Value out, int64_t row0, int64_t rows,
                 int64_t mr) {
  MLIRContext *ctx = b.getContext();
  int64_t panels = c.nMain / c.panel, vecs = c.panel / kLanes;
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type(), i32 = b.getI32Type(),
       i16 = b.getI16Type();
  auto accType = VectorType::get({kLanes}, f32);
  auto pairsType = VectorType::get({2 * kLanes}, bf16);
  auto forall = scf::ForallOp::create(
      b, loc,
      withBatch<OpFoldResult>(c, b.getIndexAttr(c.batches),
                              {b.getIndexAttr(panels),
                               b.getIndexAttr(rows / mr)}),
      ValueRange{out}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  unsigned first = c.batched ? 1 : 0;
  Value batch = c.batched ? forall.getInductionVar(0) : Value();
  Value j = forall.getInductionVar(first),
        t = forall.getInductionVar(first + 1);
  Value shared = forall.getRegionIterArgs()[0];
  AffineExpr d0;
  bindDims(ctx, d0);
  Value m0 = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(1, 0, d0 * mr + row0), ValueRange{t});
  Value n0 = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(1, 0, d0 * c.panel), ValueRange{j});
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto apply = [&](OpBuilder &ob, AffineExpr e, Value v) -> Value {
    return affine::AffineApplyOp::create(ob, loc, AffineMap::get(1, 0, e),
                                         ValueRange{v});
  };
  // Indices with the batch's in front where there is one.
  auto at = [&](ArrayRef<Value> rest) {
    return withBatch<Value>(c, batch, rest);
  };
  Value zero = index(0);
  Value f32Zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value bf16Zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(bf16, 0.0));
  OpFoldResult one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets =
      withBatch<OpFoldResult>(c, batch, {m0, n0});
  SmallVector<OpFoldResult> sizes = withBatch<OpFoldResult>(
      c, one, {b.getIndexAttr(mr), b.getIndexAttr(c.panel)});
  SmallVector<OpFoldResult> strides =
      withBatch<OpFoldResult>(c, one, {one, one});
  Value tile =
      tensor::ExtractSliceOp::create(b, loc, shared, offsets, sizes, strides);
  // Indices into the tile: (0,) r, column.
  auto tileAt = [&](int64_t r, int64_t col) {
    return withBatch<Value>(c, zero, {index(r), index(col)});
  };
  // The accumulators: row r, vector h at init[r][h * 16].
  SmallVector<Value> accs;
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t h = 0; h < vecs; ++h) {
      if (c.fillValue) {
        accs.push_back(
            vector::BroadcastOp::create(b, loc, accType, *c.fillValue));
        continue;
      }
      accs.push_back(vector::TransferReadOp::create(
          b, loc, accType, tile, tileAt(r, h * kLanes), f32Zero,
          ArrayRef<bool>{true}));
    }
  auto loop = scf::ForOp::create(
      b, loc, zero, index(c.kMain / 2), index(1), accs,
      [&](OpBuilder &lb, Location l, Value k2, ValueRange iter) {
        SmallVector<Value> cols;
        if (bp) {
          // One read of 32 contiguous bf16 per vector (a 2-D read is
          // unrolled into 16 reads of pairs and shuffles).
          for (int64_t h = 0; h < vecs; ++h)
            cols.push_back(vector::TransferReadOp::create(
                lb, l, pairsType, bp,
                ValueRange{j, k2, index(h * 2 * kLanes)}, bf16Zero,
                ArrayRef<bool>{true}));
        } else {
          // Rows 2 k2 and 2 k2 + 1 of the panel, interleaved as integers:
          // (B[2k2][n], B[2k2+1][n]) pairs, 16 columns per vector.
          auto rowType = VectorType::get({c.panel}, bf16);
          auto rowBits = VectorType::get({c.panel}, i16);
          SmallVector<Value> halves;
          for (int64_t kk = 0; kk < 2; ++kk) {
            Value row = apply(lb, d0 * 2 + kk, k2);
            Value v = vector::TransferReadOp::create(
                lb, l, rowType, c.rhs, at({row, n0}), bf16Zero,
                ArrayRef<bool>{true});
            halves.push_back(vector::BitCastOp::create(lb, l, rowBits, v));
          }
          Value both =
              vector::InterleaveOp::create(lb, l, halves[0], halves[1]);
          for (int64_t h = 0; h < vecs; ++h) {
            Value part = vector::ExtractStridedSliceOp::create(
                lb, l, both, ArrayRef<int64_t>{h * 2 * kLanes},
                ArrayRef<int64_t>{2 * kLanes}, ArrayRef<int64_t>{1});
            cols.push_back(vector::BitCastOp::create(lb, l, pairsType, part));
          }
        }
        SmallVector<Value> next;
        for (int64_t r = 0; r < mr; ++r) {
          Value row = r == 0 ? m0 : apply(lb, d0 + r, m0);
          Value pair = vector::TransferReadOp::create(
              lb, l, VectorType::get({2}, bf16), a, at({row, k2, zero}),
              bf16Zero, ArrayRef<bool>{true});
          Value word = vector::BitCastOp::create(
              lb, l, VectorType::get({1}, i32), pair);
          Value scalar =
              vector::ExtractOp::create(lb, l, word, ArrayRef<int64_t>{0});
          Value spread = vector::BroadcastOp::create(
              lb, l, VectorType::get({kLanes}, i32), scalar);
          Value pairs = vector::BitCastOp::create(lb, l, pairsType, spread);
          for (int64_t h = 0; h < vecs; ++h)
            next.push_back(x86vector::DotBF16Op::create(
                lb, l, accType, iter[r * vecs + h], pairs, cols[h]));
        }
        scf::YieldOp::create(lb, l, next);
      });
  Value written = tile;
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t h = 0; h < vecs; ++h)
      written = vector::TransferWriteOp::create(
                    b, loc, loop.getResult(r * vecs + h), written,
                    tileAt(r, h * kLanes), ArrayRef<bool>{true})
                    .getResult();
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, written, shared, offsets,
                                        sizes, strides);
  return forall.getResult(0);
}

/// The part of `c`'s matmul over reduction steps [k0, k0 + ks) and columns
/// [n0, n0 + ns), as the op itself on f32 slices of its operands (a linalg
/// op the decisions schedule), inserted into `out`. It accumulates into
/// `out`'s part where `accumulate`, else into the matmul's init's.
Value buildPartOnSlices(RewriterBase &rw, Candidate c, Value out, int64_t k0,
                        int64_t ks, int64_t n0, int64_t ns, bool accumulate) {
  Location loc = c.op.getLoc();
  linalg::LinalgOp op = c.op;
  auto attr = [&](int64_t v) -> OpFoldResult { return rw.getIndexAttr(v); };
  SmallVector<OpFoldResult> strides =
      withBatch<OpFoldResult>(c, attr(1), {attr(1), attr(1)});
  // [(B,) rows, cols] from (row, col) offsets.
  auto slice = [&](Value v, int64_t r0, int64_t rows, int64_t c0,
                   int64_t cols) {
    return tensor::ExtractSliceOp::create(
               rw, loc, v,
               withBatch<OpFoldResult>(c, attr(0), {attr(r0), attr(c0)}),
               withBatch<OpFoldResult>(c, attr(c.batches),
                                       {attr(rows), attr(cols)}),
               strides)
        .getResult();
  };
  Value init;
  if (accumulate) {
    init = slice(out, 0, c.m, n0, ns);
  } else if (c.fillValue) {
    Value empty = tensor::EmptyOp::create(
        rw, loc, withBatch<int64_t>(c, c.batches, {c.m, ns}),
        rw.getF32Type());
    init = linalg::FillOp::create(rw, loc, *c.fillValue, empty).getResult(0);
  } else {
    init = slice(op.getDpsInits()[0], 0, c.m, n0, ns);
  }
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  if (ks != c.k)
    a = slice(a, 0, c.m, k0, ks);
  b = slice(b, k0, ks, n0, ns);
  Operation *part = rw.clone(*op.getOperation());
  part->setOperands({a, b, init});
  part->getResult(0).setType(init.getType());
  return tensor::InsertSliceOp::create(
             rw, loc, part->getResult(0), out,
             withBatch<OpFoldResult>(c, attr(0), {attr(0), attr(n0)}),
             tensor::getMixedSizes(rw, loc, init), strides)
      .getResult();
}

LogicalResult rewrite(RewriterBase &rw, Candidate c) {
  Location loc = c.op.getLoc();
  Type bf16 = rw.getBF16Type();
  int64_t k2 = c.kMain / 2;
  rw.setInsertionPoint(c.op);
  Value bp;
  if (c.constant) {
    // Bp[j][k2][i][2] = B[2 * k2 + kk][j * NB + i]: B [K, N] viewed as
    // [K/2, 2, J, NB] (dims 2, 0, 3, 1), or a weight W [N, K] = B^T viewed
    // as [J, NB, K/2, 2] (dims 0, 2, 1, 3); held as [J][K/2][NB * 2].
    int64_t panels = c.nMain / c.panel;
    auto packedType =
        RankedTensorType::get({panels, k2, c.panel * 2}, bf16);
    // A weight's first nMain rows, a plain B's first kMain rows: the first
    // run of its elements (getCandidate).
    Attribute weight = c.constant->constant.getValue();
    if (c.constant->transposed && c.nMain != c.n)
      weight = rl::sliceConstant(
          weight, 0, RankedTensorType::get({c.nMain, c.k}, bf16), "_main");
    if (!c.constant->transposed && c.kMain != c.k)
      weight = rl::sliceConstant(
          weight, 0, RankedTensorType::get({c.kMain, c.n}, bf16), "_main");
    if (!weight)
      return failure();
    SmallVector<int64_t> shape, perm;
    if (c.constant->transposed) {
      shape = {panels, c.panel, k2, 2};
      perm = {0, 2, 1, 3};
    } else {
      shape = {k2, 2, panels, c.panel};
      perm = {2, 0, 3, 1};
    }
    TypedAttr packed =
        rl::transposeConstant(weight, shape, perm, packedType, "_vnni");
    if (!packed)
      return failure();
    bp = arith::ConstantOp::create(rw, loc, packedType, packed);
  }
  // A as pairs: [(B,) M, K/2, 2].
  SmallVector<int64_t> pairsShape =
      withBatch<int64_t>(c, c.batches, {c.m, k2, 2});
  int64_t r = c.batched ? 1 : 0;
  SmallVector<ReassociationIndices> split =
      withBatch<ReassociationIndices>(c, {0}, {{r}, {r + 1, r + 2}});
  Value lhs = c.lhs;
  if (c.kMain != c.k) {
    // Its first kMain columns.
    auto type = cast<RankedTensorType>(lhs.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), rw.getIndexAttr(0)),
        strides(type.getRank(), rw.getIndexAttr(1)), sizes;
    for (int64_t d : type.getShape())
      sizes.push_back(rw.getIndexAttr(d));
    sizes.back() = rw.getIndexAttr(c.kMain);
    lhs = tensor::ExtractSliceOp::create(rw, loc, lhs, offsets, sizes,
                                         strides);
  }
  Value a = tensor::ExpandShapeOp::create(
      rw, loc, RankedTensorType::get(pairsShape, bf16), lhs, split);
  Value init = c.op.getDpsInits()[0];
  Value out = c.fillValue
                  ? tensor::EmptyOp::create(
                        rw, loc,
                        cast<RankedTensorType>(init.getType()).getShape(),
                        rw.getF32Type())
                        .getResult()
                  : init;
  int64_t main = c.m / kRowTile * kRowTile, rest = c.m - main;
  if (main)
    out = buildTiles(rw, loc, c, a, bp, out, 0, main, kRowTile);
  if (rest)
    out = buildTiles(rw, loc, c, a, bp, out, main, rest, rest);
  // The columns past the panels over all of K, then the panels' last step
  // of an odd K (a rank-1 update).
  if (c.nMain != c.n)
    out = buildPartOnSlices(rw, c, out, 0, c.k, c.nMain, c.n - c.nMain,
                            /*accumulate=*/false);
  if (c.kMain != c.k)
    out = buildPartOnSlices(rw, c, out, c.kMain, c.k - c.kMain, 0, c.nMain,
                            /*accumulate=*/true);
  rw.replaceOp(c.op, out);
  return success();
}

struct Bf16DotPass : public rl::impl::Bf16DotBase<Bf16DotPass> {
  using Bf16DotBase::Bf16DotBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (rl::getRegisterTileExtents(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      std::optional<Candidate> candidate = getCandidate(op, rewriter);
      if (!candidate)
        continue;
      Candidate &c = *candidate;
      // What the matmul read goes where nothing else reads it: the
      // extensions, the transpose, the constant, the fill, empty tensors.
      SmallVector<Operation *> dead;
      for (Value v : c.op->getOperands())
        if (Operation *def = v.getDefiningOp())
          dead.push_back(def);
      if (failed(rewrite(rewriter, c))) {
        c.op->emitRemark() << "mlir-rl-bf16-dot: the constant could not be "
                              "packed; the matmul is left as it is";
        // Only the bf16 reshapes built for it go.
        dead.clear();
        for (Value v : {c.lhs, c.rhs})
          if (Operation *def = v.getDefiningOp())
            dead.push_back(def);
      }
      llvm::DenseSet<Operation *> erased;
      while (!dead.empty()) {
        Operation *def = dead.pop_back_val();
        if (erased.contains(def) || !isOpTriviallyDead(def))
          continue;
        erased.insert(def);
        for (Value v : def->getOperands())
          if (Operation *below = v.getDefiningOp())
            dead.push_back(below);
        rewriter.eraseOp(def);
      }
    }
  }
};

} // namespace
