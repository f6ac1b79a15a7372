//===- Bf16Dot.cpp - bf16 matmuls on AVX-512 BF16's dot product ----------===//
//
// mlir-rl-bf16-dot (see Passes.td): a matmul whose f32 operands are bf16
// values extended (torch-mlir's form of a bf16 linear layer, and what
// mlir-rl-compute-in-f32 makes of a bf16 matmul) and whose right-hand side
// is a constant becomes a micro-kernel of `x86vector.avx512.dot`
// (vdpbf16ps: 16 lanes, each the sum of two bf16 products added to an f32
// accumulator; twice the products of an f32 FMA per instruction).
//
// The constant is packed at compile time in VNNI panels, Bp[j][k/2][i][2] =
// B[k][j * NB + i] (NB columns, one or two vectors; held as
// [J][K/2][NB * 2], so that a vector of pairs is one read); A is read as
// [M][K/2][2], a pair of bf16 broadcast to all lanes per row. A tile of MR
// rows by NB columns keeps MR * NB / 16 accumulators in registers over the
// whole reduction; the tiles are an scf.forall over (panel, row tile).
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

/// The bf16 tensor that `v` is, extended to f32 exactly: `v` is the result
/// of an elementwise linalg.generic of one input whose body only extends it.
Value getExtendedBf16(Value v) {
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
  Value lhs; // bf16 [M, K]
  ConstantRhs rhs;
  int64_t m, n, k, panel;
  std::optional<Value> fillValue; // the init's scalar where it is a fill
};

std::optional<Candidate> getCandidate(linalg::LinalgOp op) {
  std::optional<std::array<int64_t, 3>> mnk = rl::getPlainMatmulExtents(op);
  if (!mnk)
    return std::nullopt;
  auto [m, n, k] = *mnk;
  Value init = op.getDpsInits()[0];
  if (!getElementTypeOrSelf(init.getType()).isF32() || k % 2 != 0)
    return std::nullopt;
  int64_t panel = n % (2 * kLanes) == 0 ? 2 * kLanes
                  : n % kLanes == 0     ? kLanes
                                        : 0;
  if (!panel)
    return std::nullopt;
  // The body multiplies and adds (a contraction); its operands f32.
  Value lhs = getExtendedBf16(op.getDpsInputs()[0]);
  Value rhs = getExtendedBf16(op.getDpsInputs()[1]);
  if (!lhs || !rhs)
    return std::nullopt;
  std::optional<ConstantRhs> constant = getConstantRhs(rhs);
  if (!constant)
    return std::nullopt;
  Candidate c{op, lhs, *constant, m, n, k, panel, std::nullopt};
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    c.fillValue = fill.getInputs()[0];
  return c;
}

/// One scf.forall over (panel, row tile) for rows [row0, row0 + rows) in
/// tiles of `mr` rows; `out` is the [M, N] f32 tensor it writes into.
Value buildTiles(OpBuilder &b, Location loc, const Candidate &c, Value a,
                 Value bp, Value out, int64_t row0, int64_t rows,
                 int64_t mr) {
  MLIRContext *ctx = b.getContext();
  int64_t panels = c.n / c.panel, vecs = c.panel / kLanes;
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type(), i32 = b.getI32Type();
  auto accType = VectorType::get({kLanes}, f32);
  auto pairsType = VectorType::get({2 * kLanes}, bf16);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(panels),
                                     b.getIndexAttr(rows / mr)},
      ValueRange{out}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value j = forall.getInductionVar(0), t = forall.getInductionVar(1);
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
  auto plus = [&](Value base, int64_t v) -> Value {
    if (v == 0)
      return base;
    return affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, d0 + v), ValueRange{base});
  };
  Value zero = index(0);
  Value f32Zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value bf16Zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(bf16, 0.0));
  Value tile = tensor::ExtractSliceOp::create(
      b, loc, shared, ArrayRef<OpFoldResult>{m0, n0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(mr), b.getIndexAttr(c.panel)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
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
          b, loc, accType, tile, ValueRange{index(r), index(h * kLanes)},
          f32Zero, ArrayRef<bool>{true}));
    }
  auto loop = scf::ForOp::create(
      b, loc, zero, index(c.k / 2), index(1), accs,
      [&](OpBuilder &lb, Location l, Value k2, ValueRange iter) {
        SmallVector<Value> cols;
        for (int64_t h = 0; h < vecs; ++h) {
          // One read of 32 contiguous bf16 (a 2-D read is unrolled
          // into 16 reads of pairs and shuffles).
          cols.push_back(vector::TransferReadOp::create(
              lb, l, pairsType, bp, ValueRange{j, k2, index(h * 2 * kLanes)},
              bf16Zero, ArrayRef<bool>{true}));
        }
        SmallVector<Value> next;
        for (int64_t r = 0; r < mr; ++r) {
          Value pair = vector::TransferReadOp::create(
              lb, l, VectorType::get({2}, bf16), a,
              ValueRange{plus(m0, r), k2, zero}, bf16Zero,
              ArrayRef<bool>{true});
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
                    ValueRange{index(r), index(h * kLanes)},
                    ArrayRef<bool>{true})
                    .getResult();
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, written, shared, ArrayRef<OpFoldResult>{m0, n0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(mr), b.getIndexAttr(c.panel)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  return forall.getResult(0);
}

LogicalResult rewrite(RewriterBase &rw, Candidate c) {
  Location loc = c.op.getLoc();
  Type bf16 = rw.getBF16Type();
  int64_t panels = c.n / c.panel, k2 = c.k / 2;
  // Bp[j][k2][i][2] = B[2 * k2 + kk][j * NB + i]: B [K, N] viewed as
  // [K/2, 2, J, NB] (dims 2, 0, 3, 1), or a weight W [N, K] = B^T viewed as
  // [J, NB, K/2, 2] (dims 0, 2, 1, 3).
  // (Held as [J][K/2][NB * 2]: the same elements.)
  auto packedType = RankedTensorType::get({panels, k2, c.panel * 2}, bf16);
  SmallVector<int64_t> shape, perm;
  if (c.rhs.transposed) {
    shape = {panels, c.panel, k2, 2};
    perm = {0, 2, 1, 3};
  } else {
    shape = {k2, 2, panels, c.panel};
    perm = {2, 0, 3, 1};
  }
  TypedAttr packed = rl::transposeConstant(c.rhs.constant.getValue(), shape,
                                           perm, packedType, "_vnni");
  if (!packed)
    return failure();
  rw.setInsertionPoint(c.op);
  Value bp = arith::ConstantOp::create(rw, loc, packedType, packed);
  Value a = tensor::ExpandShapeOp::create(
      rw, loc, RankedTensorType::get({c.m, k2, 2}, bf16), c.lhs,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value init = c.op.getDpsInits()[0];
  Value out = c.fillValue
                  ? tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{c.m, c.n},
                                            rw.getF32Type())
                        .getResult()
                  : init;
  int64_t main = c.m / kRowTile * kRowTile, rest = c.m - main;
  if (main)
    out = buildTiles(rw, loc, c, a, bp, out, 0, main, kRowTile);
  if (rest)
    out = buildTiles(rw, loc, c, a, bp, out, main, rest, rest);
  rw.replaceOp(c.op, out);
  return success();
}

struct Bf16DotPass : public rl::impl::Bf16DotBase<Bf16DotPass> {
  using Bf16DotBase::Bf16DotBase;

  void runOnOperation() override {
    SmallVector<Candidate> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<Candidate> c = getCandidate(op))
        candidates.push_back(*c);
    });
    IRRewriter rewriter(&getContext());
    for (Candidate &c : candidates) {
      // What the matmul read goes where nothing else reads it: the
      // extensions, the transpose, the constant, the fill, empty tensors.
      SmallVector<Operation *> dead;
      for (Value v : c.op->getOperands())
        if (Operation *def = v.getDefiningOp())
          dead.push_back(def);
      if (failed(rewrite(rewriter, c))) {
        c.op->emitRemark() << "mlir-rl-bf16-dot: the constant could not be "
                              "packed; the matmul is left as it is";
        continue;
      }
      llvm::DenseSet<Operation *> erased;
      while (!dead.empty()) {
        Operation *op = dead.pop_back_val();
        if (erased.contains(op) || !isOpTriviallyDead(op))
          continue;
        erased.insert(op);
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp())
            dead.push_back(def);
        rewriter.eraseOp(op);
      }
    }
  }
};

} // namespace
