//===- PackOperands.cpp - Right-hand sides of matmuls packed into panels --===//
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

#include <random>
#include <set>

#include <cstring>

namespace mlir::rl {
#define GEN_PASS_DEF_PACKRHS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace mlir::rl {

std::vector<char> transposeBytes(ArrayRef<char> in, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> perm, size_t bytes) {
  int64_t rank = shape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * shape[d + 1];
  SmallVector<int64_t> outShape, strides;
  for (int64_t d = 0; d < rank; ++d) {
    outShape.push_back(shape[perm[d]]);
    strides.push_back(inStrides[perm[d]]);
  }
  std::vector<char> out(in.size());
  SmallVector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (size_t o = 0, e = in.size() / bytes; o < e; ++o) {
    std::memcpy(out.data() + o * bytes, in.data() + offset * bytes, bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < outShape[d])
        break;
      offset -= strides[d] * outShape[d];
      idx[d] = 0;
    }
  }
  return out;
}

TypedAttr transposeConstant(Attribute value, ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> perm, RankedTensorType outType,
                            StringRef keySuffix) {
  Type elt = outType.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  size_t bytes = elt.getIntOrFloatBitWidth() / 8;
  size_t total = (size_t)outType.getNumElements() * bytes;
  if (total > (size_t(256) << 20))
    return {};
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return dense.resizeSplat(outType);
    ArrayRef<char> raw = dense.getRawData();
    if (raw.size() != total)
      return {};
    std::vector<char> out = transposeBytes(raw, shape, perm, bytes);
    return DenseElementsAttr::getFromRawBuffer(outType, out);
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    DenseResourceElementsHandle handle = resource.getRawHandle();
    AsmResourceBlob *blob = handle.getBlob();
    if (!blob || blob->getData().size() != total)
      return {};
    std::vector<char> out =
        transposeBytes(blob->getData(), shape, perm, bytes);
    return DenseResourceElementsAttr::get(
        outType, (handle.getKey() + keySuffix).str(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(
            out, blob->getDataAlignment(), /*dataIsMutable=*/false));
  }
  return {};
}

/// Elements of `elementType` in one vector register of `legality`'s
/// register file; 0 when it is unknown or does not hold whole elements.
int64_t getVectorLanes(Type elementType, const LegalityConfig &legality) {
  if (!elementType.isIntOrFloat() || legality.vectorRegisterBits <= 0)
    return 0;
  int64_t bits = elementType.getIntOrFloatBitWidth();
  if (bits <= 0 || legality.vectorRegisterBits % bits != 0)
    return 0;
  return legality.vectorRegisterBits / bits;
}

int64_t getPanelWidth(Type elementType, const LegalityConfig &legality) {
  return 2 * getVectorLanes(elementType, legality);
}

/// The extents of `op`'s loops when it is a matmul in plain form after
/// `batch` leading batch loops (loops (b...,) m, n, k; A(b..., m, k),
/// B(b..., k, n), C(b..., m, n); a contraction) with static shapes, tensor
/// semantics, one init and integer or float elements of whole bytes.
static std::optional<SmallVector<int64_t>>
getPlainExtents(linalg::LinalgOp op, unsigned batch) {
  unsigned loops = batch + 3;
  if (!op.hasPureTensorSemantics() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumLoops() != loops ||
      op.getNumParallelLoops() != loops - 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(batch, ctx),
             n = getAffineDimExpr(batch + 1, ctx),
             k = getAffineDimExpr(batch + 2, ctx);
  auto map = [&](AffineExpr row, AffineExpr column) {
    SmallVector<AffineExpr> results;
    for (unsigned b = 0; b < batch; ++b)
      results.push_back(getAffineDimExpr(b, ctx));
    results.append({row, column});
    return AffineMap::get(loops, 0, results, ctx);
  };
  SmallVector<AffineMap> plain = {map(m, k), map(k, n), map(m, n)};
  if (op.getIndexingMapsArray() != ArrayRef<AffineMap>(plain))
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat() ||
        t.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
  }
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  if (bounds.size() != loops ||
      llvm::any_of(bounds, [](int64_t b) { return b < 1; }))
    return std::nullopt;
  return bounds;
}

std::optional<std::array<int64_t, 3>>
getPlainMatmulExtents(linalg::LinalgOp op) {
  std::optional<SmallVector<int64_t>> e = getPlainExtents(op, /*batch=*/0);
  if (!e)
    return std::nullopt;
  return std::array<int64_t, 3>{(*e)[0], (*e)[1], (*e)[2]};
}

std::optional<std::vector<int64_t>> getRegisterTileExtents(linalg::LinalgOp op) {
  for (unsigned batch : {0u, 1u})
    if (std::optional<SmallVector<int64_t>> e = getPlainExtents(op, batch))
      return std::vector<int64_t>(e->begin(), e->end());
  return std::nullopt;
}

Value skipReshapes(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

namespace {

/// The constant (dense or dense_resource elements) that `v` is, possibly
/// through reshapes; null otherwise.
arith::ConstantOp getConstantThroughReshapes(Value v) {
  auto cst = skipReshapes(v).getDefiningOp<arith::ConstantOp>();
  if (cst && isa<DenseElementsAttr, DenseResourceElementsAttr>(cst.getValue()))
    return cst;
  return {};
}

/// Whether `v` is an empty tensor, possibly through reshapes (pad-to-tiles
/// and im2col reach a matmul's accumulator as a collapse_shape of one).
bool isEmptyThroughReshapes(Value v) {
  return static_cast<bool>(skipReshapes(v).getDefiningOp<tensor::EmptyOp>());
}

/// Erases what defines `v`, from the top, while nothing reads it: the
/// reshapes producing `v`, then the op below them (a constant, an empty
/// tensor).
void eraseUnusedReshapeChain(RewriterBase &rewriter, Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!def->use_empty())
      return;
    bool reshape = isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def);
    Value below = reshape ? def->getOperand(0) : Value();
    rewriter.eraseOp(def);
    if (!reshape)
      return;
    v = below;
  }
}
} // namespace

std::optional<std::array<int64_t, 3>>
getRhsPacking(linalg::LinalgOp op, int64_t panelWidth, int64_t minRowsToCopy) {
  std::optional<std::array<int64_t, 3>> mnk = getPlainMatmulExtents(op);
  if (panelWidth <= 0 || !mnk || (*mnk)[1] % panelWidth != 0)
    return std::nullopt;
  Value rhs = op.getDpsInputs()[1];
  bool constant = static_cast<bool>(getConstantThroughReshapes(rhs));
  if (!constant && (minRowsToCopy <= 0 || (*mnk)[0] < minRowsToCopy))
    return std::nullopt;
  return mnk;
}

FailureOr<linalg::GenericOp> packRhs(RewriterBase &rewriter,
                                     linalg::LinalgOp op, int64_t panelWidth,
                                     int64_t minRowsToCopy,
                                     bool fillsInPanels) {
  std::optional<std::array<int64_t, 3>> mnk =
      getRhsPacking(op, panelWidth, minRowsToCopy);
  if (!mnk)
    return failure();
  auto [M, N, K] = *mnk;
  int64_t NB = panelWidth, J = N / NB;
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  auto packedType =
      RankedTensorType::get({J, K, NB}, rhsType.getElementType());
  auto par = utils::IteratorType::parallel;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  rewriter.setInsertionPoint(op);

  // Bp[j, k, i] = B[k, j * NB + i]: B as [K, J, NB], dims (1, 0, 2).
  Value panels;
  // A constant, also through reshapes (a filter collapsed to [K, F]).
  arith::ConstantOp cst = getConstantThroughReshapes(rhs);
  if (cst) {
    TypedAttr packed = transposeConstant(cst.getValue(), {K, J, NB},
                                         {1, 0, 2}, packedType, "_panels");
    if (!packed)
      return failure();
    panels = arith::ConstantOp::create(rewriter, loc, packedType, packed);
  } else {
    // A copy at run time (a linalg op of its own, scheduled as others).
    Value split = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({K, J, NB}, rhsType.getElementType()), rhs,
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
    Value empty = tensor::EmptyOp::create(rewriter, loc, packedType.getShape(),
                                          packedType.getElementType());
    panels =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{packedType}, ValueRange{split},
            ValueRange{empty},
            ArrayRef<AffineMap>{AffineMap::get(3, 0, {d1, d0, d2}, ctx),
                                AffineMap::getMultiDimIdentityMap(3, ctx)},
            SmallVector<utils::IteratorType>(3, par),
            [](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l, args[0]);
            })
            .getResult(0);
  }
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
  auto outType =
      RankedTensorType::get({M, J, NB}, initType.getElementType());
  // A fill of an empty tensor that only this op reads is filled in the
  // packed shape (it keeps its op id): the packed op's last producer is
  // then the fill, which a rule fuses into its tiles (reschedule).
  Value out;
  auto fill = fillsInPanels ? init.getDefiningOp<linalg::FillOp>()
                            : linalg::FillOp();
  if (fill && init.hasOneUse() &&
      isEmptyThroughReshapes(fill.getOutputs()[0])) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(fill);
    Value empty = tensor::EmptyOp::create(rewriter, fill.getLoc(),
                                          outType.getShape(),
                                          outType.getElementType());
    auto packedFill = linalg::FillOp::create(rewriter, fill.getLoc(),
                                             fill.getInputs()[0], empty);
    for (NamedAttribute attr : fill->getDiscardableAttrs())
      packedFill->setAttr(attr.getName(), attr.getValue());
    out = packedFill.getResult(0);
  } else {
    out = tensor::ExpandShapeOp::create(rewriter, loc, outType, init, split);
  }

  // Loops (m, j, i, k): A(m, k), Bp(j, k, i), C(m, j, i).
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d0, d3}, ctx),
                                 AffineMap::get(4, 0, {d1, d3, d2}, ctx),
                                 AffineMap::get(4, 0, {d0, d1, d2}, ctx)};
  SmallVector<utils::IteratorType> iterators = {par, par, par,
                                                utils::IteratorType::reduction};
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{outType}, ValueRange{lhs, panels},
      ValueRange{out}, maps, iterators);
  // The body: the op's own (a generic's region, or a named op's implicit
  // one), block arguments in the same order (a, b, c).
  IRMapping mapping;
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().end(), mapping);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    generic->setAttr(attr.getName(), attr.getValue());
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, initType, generic.getResult(0), split);
  rewriter.replaceOp(op, result);
  if (fill && fill->use_empty()) {
    // The fill, then the reshapes and the empty tensor it filled.
    Value filled = fill.getOutputs()[0];
    rewriter.eraseOp(fill);
    eraseUnusedReshapeChain(rewriter, filled);
  }
  // The reshapes between B and the constant, then the constant, once
  // nothing else reads them.
  if (cst)
    eraseUnusedReshapeChain(rewriter, rhs);
  return generic;
}

namespace {

/// Rows of a register tile: the largest power of two dividing `rows`
/// whose accumulators (`vectorsPerRow` each) fit in `budget`.
int64_t getRegisterTileRows(int64_t rows, int64_t vectorsPerRow,
                            int64_t budget) {
  int64_t r = 1;
  while (2 * r * vectorsPerRow <= budget && rows % (2 * r) == 0)
    r *= 2;
  return r;
}

/// The reduction step of a register tile of `tilePoints` accumulators:
/// the plain schedule's last k tile (loop `kLoop` of its tilings), else 8;
/// halved until it divides `extent` and the tile's iteration space fits
/// `legality`'s vector limit.
int64_t getRegisterTileDepth(const std::vector<Action> &plain, size_t kLoop,
                             int64_t extent, int64_t tilePoints,
                             const LegalityConfig &legality) {
  int64_t kr = 8;
  for (const Action &q : plain)
    if (q.isTiled() && q.sizes.size() > kLoop && q.sizes[kLoop] != 0)
      kr = q.sizes[kLoop];
  while (kr > 1 && (extent % kr != 0 ||
                    kr * tilePoints > legality.maxVectorElements))
    kr /= 2;
  return std::max<int64_t>(kr, 1);
}

using Sizes = std::vector<int64_t>;

/// The walk both translations share: a plain matmul schedule's steps on
/// loops (m, n, k) carried over to the target op's loops, starting at
/// `extent`. NT stays; TF and interchange have no equivalent. A tiling
/// becomes the tilings `mapSizes(it, extents before it)` gives (nothing:
/// no equivalent); the tiling right before V leaves the reduction (target
/// loop `kLoop`) whole, and each V gets the tilings of
/// `registerTile(extents as the tilings leave them)` before it (nothing:
/// no equivalent; all zeros: V as it is). When that tiling is
/// a T whose tile has no register tile (its columns less than a vector:
/// the policy's T(1,8,8,32) on AVX-512), the register tile of the extents
/// before it takes its place. Nothing when the result is longer than
/// `historyLength`.
std::optional<std::vector<Action>> translateTilings(
    const std::vector<Action> &plain, Sizes extent, size_t kLoop,
    llvm::function_ref<std::optional<std::vector<Sizes>>(
        const Action &, const Sizes &)>
        mapSizes,
    llvm::function_ref<std::optional<std::vector<Sizes>>(const Sizes &)>
        registerTile,
    int historyLength) {
  auto anyTiled = [](const Sizes &sizes) {
    return llvm::any_of(sizes, [](int64_t s) { return s != 0; });
  };
  std::vector<Action> out;
  // The extents before the last T right before V, and how many tilings
  // it left in `out` (a T that tiles nothing leaves none).
  std::optional<std::pair<Sizes, size_t>> beforeLastT;
  for (size_t a = 0; a < plain.size(); ++a) {
    const Action &p = plain[a];
    if (p.kind != ActionKind::Vectorization)
      beforeLastT.reset();
    switch (p.kind) {
    case ActionKind::NoTransformation:
      out.push_back(p);
      continue;
    case ActionKind::TiledFusion:
    case ActionKind::Interchange:
      return std::nullopt;
    case ActionKind::Tiling:
    case ActionKind::TiledParallelization: {
      std::optional<std::vector<Sizes>> mapped = mapSizes(p, extent);
      if (!mapped || mapped->empty())
        return std::nullopt;
      bool beforeV = a + 1 < plain.size() &&
                     plain[a + 1].kind == ActionKind::Vectorization;
      if (beforeV && p.kind == ActionKind::Tiling)
        beforeLastT = {extent, 0};
      for (size_t i = 0; i < mapped->size(); ++i) {
        Action t{p.kind, (*mapped)[i]};
        if (t.sizes.size() != extent.size())
          return std::nullopt;
        if (beforeLastT && i + 1 == mapped->size())
          t.sizes[kLoop] = 0;
        if (anyTiled(t.sizes)) {
          out.push_back(t);
          if (beforeLastT)
            ++beforeLastT->second;
        }
        for (size_t l = 0; l < extent.size(); ++l)
          if (t.sizes[l] != 0)
            extent[l] = t.sizes[l];
      }
      continue;
    }
    case ActionKind::Vectorization: {
      std::optional<std::vector<Sizes>> reg = registerTile(extent);
      if (!reg && beforeLastT) {
        extent = beforeLastT->first;
        out.resize(out.size() - beforeLastT->second);
        reg = registerTile(extent);
      }
      if (!reg)
        return std::nullopt;
      for (const Sizes &tile : *reg)
        if (anyTiled(tile))
          out.push_back(Action{ActionKind::Tiling, tile});
      out.push_back(p);
      continue;
    }
    }
  }
  if ((int)out.size() > historyLength)
    return std::nullopt;
  return out;
}

} // namespace

std::optional<std::vector<Action>>
translateRegisterTile(const std::vector<Action> &plain,
                      const std::vector<int64_t> &extents, int64_t elementBits,
                      const LegalityConfig &legality, int historyLength) {
  if ((extents.size() != 3 && extents.size() != 4) || elementBits <= 0 ||
      legality.vectorRegisterBits <= 0 ||
      llvm::none_of(plain, [](const Action &a) {
        return a.kind == ActionKind::Vectorization;
      }))
    return std::nullopt;
  // Loops (b,) m, n, k.
  const size_t m = extents.size() - 3, n = m + 1, k = m + 2;
  int64_t lanes = std::max<int64_t>(1, legality.vectorRegisterBits / elementBits);
  int64_t budget = getAccumulatorRegisterBudget(legality);
  auto same = [&](const Action &p,
                  const Sizes &) -> std::optional<std::vector<Sizes>> {
    if (p.sizes.size() != extents.size())
      return std::nullopt;
    return std::vector<Sizes>{p.sizes};
  };
  // One batch, rows of two vectors of columns, else one.
  auto registerTile =
      [&](const Sizes &extent) -> std::optional<std::vector<Sizes>> {
    int64_t vectors = extent[n] % (2 * lanes) == 0 ? 2
                      : extent[n] % lanes == 0     ? 1
                                                   : 0;
    if (vectors == 0)
      return std::nullopt;
    int64_t r = getRegisterTileRows(extent[m], vectors, budget);
    int64_t kr = getRegisterTileDepth(plain, k, extent[k],
                                      r * vectors * lanes, legality);
    Sizes tile(extents.size(), 0);
    if (m == 1 && extent[0] > 1)
      tile[0] = 1;
    tile[m] = r < extent[m] ? r : 0;
    tile[n] = vectors * lanes < extent[n] ? vectors * lanes : 0;
    tile[k] = kr < extent[k] ? kr : 0;
    return std::vector<Sizes>{tile};
  };
  std::optional<std::vector<Action>> out = translateTilings(
      plain, extents, /*kLoop=*/k, same, registerTile, historyLength);
  if (!out || *out == plain)
    return std::nullopt;
  return out;
}

std::optional<std::vector<Action>>
translatePackedSchedule(const std::vector<Action> &plain,
                        std::array<int64_t, 3> mnk, int64_t panelWidth,
                        int64_t elementBits, const LegalityConfig &legality,
                        int historyLength) {
  const int64_t NB = panelWidth;
  if (NB <= 0 || elementBits <= 0 || legality.vectorRegisterBits <= 0)
    return std::nullopt;
  int64_t lanes = std::max<int64_t>(1, legality.vectorRegisterBits / elementBits);
  int64_t vectorsPerRow = (NB + lanes - 1) / lanes;
  int64_t budget = getAccumulatorRegisterBudget(legality);
  // A size s of n as panels j = s/NB (i whole) when NB divides it, as
  // j = 1, i = s when it divides NB.
  bool panelsOutside = true;
  auto toPanels = [&](const Action &p, const Sizes &extent)
      -> std::optional<std::vector<Sizes>> {
    const Sizes &sizes = p.sizes;
    if (sizes.size() != 3)
      return std::nullopt;
    int64_t sn = sizes[1], sj, si;
    if (sn == 0) {
      sj = 0, si = 0;
    } else if (sn % NB == 0) {
      sj = sn / NB, si = 0;
    } else if (NB % sn == 0) {
      sj = 1, si = sn;
    } else {
      return std::nullopt;
    }
    // A sequential tile of rows of one panel, taken from several panels:
    // the panel loop goes outside the rows' (tiled first), so that each
    // panel of B is reused by all the rows of the tile while it is in
    // cache, not fetched again for each row block.
    if (panelsOutside && p.kind == ActionKind::Tiling && sj == 1 &&
        extent[1] > 1 && sizes[0] != 0 && sizes[0] < extent[0])
      return std::vector<Sizes>{Sizes{0, 1, 0, 0},
                                Sizes{sizes[0], 0, si, sizes[2]}};
    return std::vector<Sizes>{Sizes{sizes[0], sj, si, sizes[2]}};
  };
  // Rows of m (a power of two dividing its extent), one panel (the panel
  // loop outside the rows' as above), the reduction by the plain
  // schedule's last k tile; none when a tiling split the panel (V as it is).
  auto registerTile =
      [&](const Sizes &extent) -> std::optional<std::vector<Sizes>> {
    if (extent[2] != NB)
      return std::vector<Sizes>{Sizes(4, 0)};
    int64_t r = getRegisterTileRows(extent[0], vectorsPerRow, budget);
    int64_t kr = getRegisterTileDepth(plain, 2, extent[3], r * NB, legality);
    int64_t rows = r < extent[0] ? r : 0, depth = kr < extent[3] ? kr : 0;
    if (panelsOutside && extent[1] > 1 && rows != 0)
      return std::vector<Sizes>{Sizes{0, 1, 0, 0}, Sizes{rows, 0, 0, depth}};
    return std::vector<Sizes>{Sizes{rows, extent[1] > 1 ? 1 : 0, 0, depth}};
  };
  // Extents of (m, j, i, k); with the panel loops split out where the
  // history has room for them, else as the plain schedule has them.
  Sizes extents{mnk[0], mnk[1] / NB, NB, mnk[2]};
  if (std::optional<std::vector<Action>> out =
          translateTilings(plain, extents, /*kLoop=*/3, toPanels, registerTile,
                           historyLength))
    return out;
  panelsOutside = false;
  return translateTilings(plain, extents, /*kLoop=*/3, toPanels, registerTile,
                          historyLength);
}

std::map<int64_t, PackCandidate> getPackCandidates(Operation *root,
                                                   int64_t minRowsToCopy,
                                                   int64_t panelWidth) {
  const LegalityConfig &legality = LegalityConfig::getDefault();
  std::map<int64_t, PackCandidate> out;
  int64_t id = 0;
  root->walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    int64_t current = id++;
    if (op.getNumDpsInits() != 1)
      return;
    Type elt = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    int64_t nb = panelWidth > 0 ? panelWidth : getPanelWidth(elt, legality);
    if (auto mnk = getRhsPacking(op, nb, minRowsToCopy))
      out[current] = {op, *mnk, nb, (int64_t)elt.getIntOrFloatBitWidth()};
  });
  return out;
}

PassStep getPackRhsStep(int64_t minRowsToCopy, bool fillsInPanels,
                        ArrayRef<int64_t> skipOps) {
  // The default threshold (no option), constants only (a flag), or another.
  PassStep step{"mlir-rl-pack-rhs", {}};
  if (minRowsToCopy <= 0)
    step.options.push_back({"constants-only", true});
  else if (minRowsToCopy != kDefaultMinRowsToCopy)
    step.intOptions.push_back({"min-rows-to-copy", minRowsToCopy});
  if (fillsInPanels)
    step.options.push_back({"fills-in-panels", true});
  if (!skipOps.empty())
    step.listOptions.push_back(
        {"skip-ops", std::vector<int64_t>(skipOps.begin(), skipOps.end())});
  return step;
}

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
static bool isAccumulatorFill(linalg::LinalgOp op) {
  auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
  if (!fill || !fill.hasPureTensorSemantics() ||
      !isEmptyThroughReshapes(fill.getOutputs()[0]) ||
      !fill->getResult(0).hasOneUse())
    return false;
  OpOperand &use = *fill->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return consumer && consumer.isDpsInit(&use);
}

bool hasOpsToReschedule(Operation *root, const Rescheduling &opts) {
  if (opts.pack && !getPackCandidates(root, opts.minRowsToCopy).empty())
    return true;
  if (!opts.registerTiles && !opts.copies)
    return false;
  const ActionSpaceConfig &config = ActionSpaceConfig::getDefault();
  WalkResult r = root->walk([&](linalg::LinalgOp op) {
    if (opts.registerTiles && getRegisterTileExtents(op))
      return WalkResult::interrupt();
    if (opts.copies &&
        (getCopySchedule(op, config.legality, config.layout) ||
         isAccumulatorFill(op)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// reschedule's application: tags `unscheduled` with the plain ids,
/// packs the candidates, applies `decided` (with `byRule` in place of the
/// copies' decisions) and schedules the copies of B (by rule where
/// `withRules` and the rule fits, else by `policy`).
static std::unique_ptr<Scheduler> applyRescheduling(
    ModuleOp unscheduled, Scheduler &plain, PolicyFn policy,
    const Rescheduling &opts, VerifyScope verifyScope,
    std::map<int64_t, PackCandidate> &candidates,
    const std::map<int64_t, std::vector<Action>> &decided,
    const std::map<int64_t, std::vector<Action>> &byRule, bool withRules,
    const std::set<int64_t> &unpacked, int64_t &copied, std::string &why) {
  const ActionSpaceConfig &config = plain.getConfig();
  copied = 0;
  // Tagged with the plain ids (the clone was made after plain's
  // initialize): the packed op keeps its tag, a copy of B has none.
  {
    int64_t id = 0;
    unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      op->setAttr(kOpIdAttrName,
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64), id++));
    });
    IRRewriter rewriter(unscheduled.getContext());
    for (auto &[id, c] : candidates) {
      if (failed(packRhs(rewriter, c.op, c.panelWidth, opts.minRowsToCopy,
                         withRules))) {
        why = "a right-hand side could not be packed";
        return nullptr;
      }
    }
  }
  std::vector<int64_t> plainIdOf; // by the new id; -1: a copy of B
  std::map<int64_t, std::vector<Action>> copiesOfB; // by the new id
  unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    auto attr = op->getAttrOfType<IntegerAttr>(kOpIdAttrName);
    if (!attr && withRules)
      if (auto rule = getCopySchedule(op, config.legality, config.layout))
        copiesOfB[plainIdOf.size()] = *rule;
    plainIdOf.push_back(attr ? attr.getInt() : -1);
  });
  auto scheduler =
      std::make_unique<Scheduler>(unscheduled, config, verifyScope);
  std::vector<PassStep> prelude = plain.getPrelude();
  if (!candidates.empty())
    prelude.push_back(getPackRhsStep(
        opts.minRowsToCopy, withRules,
        std::vector<int64_t>(unpacked.begin(), unpacked.end())));
  scheduler->setPrelude(prelude);
  scheduler->initialize();
  int64_t copies = llvm::count(plainIdOf, -1);
  if (scheduler->getOps().size() != plainIdOf.size() ||
      plainIdOf.size() != plain.getOps().size() + copies) {
    scheduler->removeTags();
    why = "packing changed the ops unexpectedly";
    return nullptr;
  }
  // Each op's actions, applied op by op in the traversal order (consumers
  // first), as applySchedule replays the resulting trace: the translated
  // decisions, the rules' schedules, the fills fused into their consumers'
  // tiles (vectorized there once the consumer has fused them) and the
  // copies of B without a rule (by `policy`, greedily).
  std::mt19937_64 rng(0);
  PolicyStats stats;
  for (int64_t id : scheduler->getTraversalOrder()) {
    auto rule = byRule.find(plainIdOf[id]);
    auto it = decided.find(plainIdOf[id]);
    auto ofB = copiesOfB.find(id);
    std::vector<Action> actions;
    bool byPolicy = false;
    std::string source = "rule";
    if (plainIdOf[id] >= 0 && rule != byRule.end() && rule->second.empty()) {
      source = "rule: a fill in its consumer's tiles";
      // A fill fused into its consumer's tiles: whole where the tile fits
      // the vector limit, else by the copies' rule on the tile with its
      // parallel tiling made sequential (the forall is the consumer's).
      ++copied;
      linalg::LinalgOp fill = scheduler->lookup(id);
      if (!fill || !fill->getParentOfType<scf::ForallOp>())
        continue;
      if (succeeded(vectorizationPrecondition(fill, config.legality))) {
        actions.push_back(Action{ActionKind::Vectorization, {}});
      } else if (auto tiled =
                     getCopySchedule(fill, config.legality, config.layout)) {
        for (Action &a : *tiled)
          if (a.kind == ActionKind::TiledParallelization)
            a.kind = ActionKind::Tiling;
        actions = *tiled;
      }
    } else if (plainIdOf[id] >= 0 &&
               scheduler->getOps()[id].kind == OpKind::Fill &&
               scheduler->getOps()[id].loopBounds.size() !=
                   plain.getOps()[plainIdOf[id]].loopBounds.size()) {
      // A packed matmul's fill, now in the packed shape (packRhs): its
      // decision was for the plain shape. By the rule for its new shape,
      // else left to the lowering.
      if (withRules)
        if (auto packedRule = getCopySchedule(scheduler->lookup(id),
                                              config.legality, config.layout)) {
          actions = *packedRule;
          ++copied;
        }
    } else if (plainIdOf[id] >= 0 && rule != byRule.end()) {
      actions = rule->second;
      ++copied;
    } else if (plainIdOf[id] >= 0 && it != decided.end()) {
      actions = it->second;
      const OpRecord &was = plain.getOps()[plainIdOf[id]];
      source = was.sources.empty() ? "explicit" : was.sources.front();
      if (actions != was.state.history)
        source += ", translated by the rules";
    } else if (ofB != copiesOfB.end()) {
      actions = ofB->second;
      ++copied;
    } else if (plainIdOf[id] < 0) {
      byPolicy = true;
      source = "decisions: a copy of B, greedy";
    }
    scheduler->setSource(source);
    std::string message;
    if (byPolicy) {
      if (failed(scheduler->scheduleOpWithPolicy(id, policy, PolicyRunOptions(),
                                                 rng, stats, message))) {
        scheduler->removeTags();
        why = "the policy failed on a copy of B: " + message;
        return nullptr;
      }
      continue;
    }
    if (actions.empty())
      continue;
    ExplicitSchedule one;
    one.entries.push_back({id, actions});
    ApplyStatus status = scheduler->applySchedule(one, message);
    if (status != ApplyStatus::Applied) {
      scheduler->removeTags();
      why = "the translated schedule did not apply (" + formatSchedule(one) +
            "): " + message;
      return nullptr;
    }
  }
  if (failed(verify(unscheduled))) {
    scheduler->removeTags();
    why = "the rescheduled module does not verify";
    return nullptr;
  }
  return scheduler;
}

std::unique_ptr<Scheduler>
reschedule(Scheduler &plain, ModuleOp unscheduled, PolicyFn policy,
           const Rescheduling &opts, VerifyScope verifyScope,
           int64_t &packed, int64_t &tiled, int64_t &copied, std::string &why) {
  packed = 0, tiled = 0, copied = 0;
  std::map<int64_t, PackCandidate> candidates;
  if (opts.pack)
    candidates = getPackCandidates(unscheduled, opts.minRowsToCopy);
  const ActionSpaceConfig &config = plain.getConfig();
  // Plain matmuls that are not packed, and copies with a rule's schedule,
  // by the plain op id.
  std::map<int64_t, std::pair<std::vector<int64_t>, int64_t>> plainMatmuls;
  std::map<int64_t, std::vector<Action>> copyRules;
  std::set<int64_t> initFills;
  {
    int64_t id = 0;
    unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      int64_t current = id++;
      // Candidates too: one whose decision has no packed form stays plain.
      if (auto extents = getRegisterTileExtents(op);
          extents && opts.registerTiles)
        plainMatmuls[current] = {
            *extents,
            (int64_t)getElementTypeOrSelf(op.getDpsInits()[0].getType())
                .getIntOrFloatBitWidth()};
      if (opts.copies)
        if (auto rule = getCopySchedule(op, config.legality, config.layout))
          copyRules[current] = *rule;
      if (opts.copies && isAccumulatorFill(op))
        initFills.insert(current);
    });
  }
  // A producer fused into a consumer's tiles keeps its decision (its
  // extents are the consumer tile's, not its own).
  auto fusesProducer = [](const OpRecord &rec) {
    return llvm::any_of(rec.state.history, [](const Action &a) {
      return a.info().has(kFusesProducer);
    });
  };
  std::set<int64_t> fused;
  for (const OpRecord &rec : plain.getOps())
    if (rec.producerId >= 0 && fusesProducer(rec))
      fused.insert(rec.producerId);
  // Matmuls that stay plain although mlir-rl-pack-rhs would pack them:
  // the other rules of the module still apply.
  std::set<int64_t> unpacked;
  for (int64_t id : fused)
    // Its consumer would find a collapse_shape instead.
    if (candidates.erase(id))
      unpacked.insert(id);
  std::map<int64_t, std::vector<Action>> decided; // by the plain op id
  // The copies whose decision the rule replaces (the attempt with them).
  std::map<int64_t, std::vector<Action>> byRule;
  for (const OpRecord &rec : plain.getOps()) {
    if (rec.state.history.empty())
      continue;
    auto rule = copyRules.find(rec.id);
    if (rule != copyRules.end() && !fused.count(rec.id) && !fusesProducer(rec))
      byRule[rec.id] = rule->second;
    auto it = candidates.find(rec.id);
    if (it == candidates.end()) {
      decided[rec.id] = rec.state.history;
      auto mm = plainMatmuls.find(rec.id);
      if (mm != plainMatmuls.end() && !fused.count(rec.id)) {
        if (std::optional<std::vector<Action>> actions = translateRegisterTile(
                rec.state.history, mm->second.first, mm->second.second,
                config.legality, config.layout.historyLength)) {
          decided[rec.id] = *actions;
          ++tiled;
        }
      }
      continue;
    }
    const PackCandidate &c = it->second;
    std::optional<std::vector<Action>> actions = translatePackedSchedule(
        rec.state.history, c.mnk, c.panelWidth, c.elementBits,
        config.legality, config.layout.historyLength);
    if (actions) {
      decided[rec.id] = *actions;
      continue;
    }
    // No packed equivalent (a fusion, an interchange): it stays plain, as
    // decided, with a register tile where one translates.
    candidates.erase(it);
    unpacked.insert(rec.id);
    decided[rec.id] = rec.state.history;
    auto mm = plainMatmuls.find(rec.id);
    if (mm != plainMatmuls.end())
      if (std::optional<std::vector<Action>> tiledActions =
              translateRegisterTile(rec.state.history, mm->second.first,
                                    mm->second.second, config.legality,
                                    config.layout.historyLength)) {
        decided[rec.id] = *tiledActions;
        ++tiled;
      }
  }
  // The register tile of a candidate is only for one that stays plain.
  for (auto &[id, c] : candidates)
    plainMatmuls.erase(id);
  // A fill that only initialises its consumer's accumulator goes into the
  // consumer's tiles: the consumer's TP becomes a TF (same tile sizes) and
  // the fill, filling one tile at a time inside the forall, keeps no
  // decision of its own (an empty rule; applyRescheduling vectorizes it in
  // the tile). Apart, it writes the whole accumulator before the consumer
  // reads it back (MobileNetV2: 74 such fills, 45 MB written per
  // inference, a tenth of its time in memset).
  std::map<int64_t, std::vector<Action>> decidedByRule = decided;
  for (const OpRecord &rec : plain.getOps()) {
    if (!initFills.count(rec.producerId) || fused.count(rec.producerId))
      continue;
    auto it = decidedByRule.find(rec.id);
    if (it == decidedByRule.end() || it->second.empty() ||
        it->second.front().kind != ActionKind::TiledParallelization)
      continue;
    it->second.front().kind = ActionKind::TiledFusion;
    byRule[rec.producerId] = {};
  }
  if (candidates.empty() && tiled == 0 && byRule.empty()) {
    why = "no matmul to pack or register-tile, no copy to schedule by rule";
    return nullptr;
  }
  // Should the rule's schedules not apply, the module as it was, for an
  // attempt without them.
  OwningOpRef<ModuleOp> spare;
  if (opts.copies && (!byRule.empty() || !candidates.empty()))
    spare = cast<ModuleOp>(unscheduled->clone());
  std::unique_ptr<Scheduler> scheduler = applyRescheduling(
      unscheduled, plain, policy, opts, verifyScope, candidates,
      opts.copies ? decidedByRule : decided, byRule, opts.copies, unpacked,
      copied, why);
  if (!scheduler && spare) {
    unscheduled.getBodyRegion().takeBody(spare->getBodyRegion());
    std::string first = why;
    byRule.clear();
    // The same matmuls, in the restored module.
    if (opts.pack) {
      candidates = getPackCandidates(unscheduled, opts.minRowsToCopy);
      for (int64_t id : unpacked)
        candidates.erase(id);
    }
    scheduler = applyRescheduling(unscheduled, plain, policy, opts,
                                  verifyScope, candidates, decided, byRule,
                                  /*withRules=*/false, unpacked, copied, why);
    if (!scheduler)
      why += " (with copies by rule: " + first + ")";
  }
  if (!scheduler || (candidates.empty() && tiled == 0 && copied == 0)) {
    if (scheduler) {
      scheduler->removeTags();
      why = "no matmul to pack or register-tile, no copy to schedule by rule";
    }
    return nullptr;
  }
  packed = candidates.size();
  return scheduler;
}

} // namespace mlir::rl

namespace {

struct PackRhsPass : public mlir::rl::impl::PackRhsBase<PackRhsPass> {
  using PackRhsBase::PackRhsBase;

  void runOnOperation() override {
    int64_t minRows = constantsOnly ? 0 : std::max<int64_t>(0, minRowsToCopy);
    IRRewriter rewriter(&getContext());
    std::set<int64_t> skip(skipOps.begin(), skipOps.end());
    for (auto &[id, c] :
         rl::getPackCandidates(getOperation(), minRows, panelWidth))
      if (!skip.count(id) && failed(rl::packRhs(rewriter, c.op, c.panelWidth, minRows,
                             fillsInPanels)))
        c.op->emitRemark() << "mlir-rl-pack-rhs: the right-hand side could "
                            "not be packed; the op is left as it is";
  }
};

} // namespace
