//===- Preconditions.cpp - When a transformation is legal -----------------===//
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Analysis/OpAnalysis.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/bit.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <sstream>

namespace mlir::rl {

const LegalityConfig &LegalityConfig::getDefault() {
  static const LegalityConfig config = [] {
    LegalityConfig c;
    std::tie(c.vectorRegisters, c.vectorRegisterBits) =
        getHostVectorRegisters();
    return c;
  }();
  return config;
}

std::pair<int64_t, int64_t> getHostVectorRegisters() {
  if (const char *env = std::getenv("MLIR_RL_VECTOR_REGISTERS")) {
    // <count>x<bits>; anything else reads as unknown (no register tiling).
    auto [count, bits] = StringRef(env).split('x');
    int64_t n = 0, b = 0;
    if (count.getAsInteger(10, n) || bits.getAsInteger(10, b) || n <= 0 ||
        b <= 0)
      return {0, 0};
    return {n, b};
  }
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](StringRef f) { return features.lookup(f); };
  llvm::Triple host(llvm::sys::getProcessTriple());
  if (host.isX86()) {
    if (has("avx512f"))
      return {32, 512};
    if (has("avx"))
      return {16, 256};
    return {16, 128};
  }
  if (host.isAArch64())
    return {32, 128}; // NEON (SVE's width is not known statically)
  return {0, 0};
}

/// Registers that a vectorized contraction may keep for its accumulator:
/// the register file less 4 (the vectors of the operands of one step); 0
/// when the register file is unknown.
int64_t getAccumulatorRegisterBudget(const LegalityConfig &config) {
  if (config.vectorRegisters <= 0 || config.vectorRegisterBits <= 0)
    return 0;
  return std::max<int64_t>(1, config.vectorRegisters - 4);
}

std::string LegalityConfig::getDescription() const {
  std::ostringstream os;
  // Bump the version whenever a rule of the action space changes meaning.
  // v2: TP/TF must split a loop (llvm-project#222143); ops with an empty
  // iteration space are not scheduled.
  // v3: the `divide` rule (tile sizes divide their loops).
  // v4: an op's last action slot takes only V or NT.
  // v5: V bounds the rows read through strided views (`strided`).
  // v6: V keeps a contraction's accumulator within the register file
  // (`vregs`, count x bits; the host's by default).
  // v7: V bounds the partial vector pieces of rows wider or narrower than
  // the registers (`pieces`).
  // v8: rows and pieces counted per operand too, along the operand's own
  // innermost dimension (a vector across memory order: transposed access).
  os << "mlir-rl-legality-v8;vecmax=" << maxVectorInnermost
     << ";vecelts=" << maxVectorElements << ";vecrows=" << maxVectorRows
     << ";strided=" << maxStridedRowReads
     << ";pieces=" << maxPartialVectorPieces
     << ";divide=" << (dividingTiles ? 1 : 0) << ";vregs=" << vectorRegisters
     << "x" << vectorRegisterBits;
  return os.str();
}

std::string LegalityConfig::getHash() const {
  return getStableHash(getDescription());
}

/// Whether `v` is read through a view whose innermost stride is not 1: a
/// chain of tensor.extract_slice ops (a tile of a strided window view is a
/// unit-stride slice of a strided one) with a non-unit innermost stride.
static bool isStridedView(Value v) {
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (slice.getSourceType().getRank() != slice.getResultType().getRank())
      return false; // rank-reducing: not what the window rewrite makes
    std::optional<int64_t> stride =
        getConstantIntValue(slice.getMixedStrides().back());
    if (!stride || *stride != 1)
      return true;
    v = slice.getSource();
  }
  return false;
}

/// The rows a vector of the op's iteration space `bounds` makes in one
/// operand's transfer: along the operand's own innermost dimension where
/// the vector crosses memory order (a transposed access), else the
/// iteration space's rows (elements / innermost loop). Sets `width` to the
/// row's length.
static int64_t getOperandVectorRows(linalg::LinalgOp op, OpOperand &operand,
                                    ArrayRef<int64_t> bounds,
                                    int64_t *width = nullptr) {
  int64_t elements = 1;
  for (int64_t b : bounds)
    elements *= b;
  int64_t rows = elements / bounds.back();
  if (width)
    *width = bounds.back();
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (map.getNumResults() == 0)
    return rows;
  auto inner = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!inner || inner.getPosition() + 1 == bounds.size())
    return rows;
  llvm::SmallBitVector used(bounds.size());
  for (AffineExpr e : map.getResults())
    e.walk([&](AffineExpr sub) {
      if (auto d = dyn_cast<AffineDimExpr>(sub))
        used.set(d.getPosition());
    });
  // A vector along a loop the operand does not use is a broadcast: its
  // transfer reads the operand's own elements only.
  int64_t operandElements = 1;
  for (unsigned d : used.set_bits())
    operandElements *= bounds[d];
  if (width)
    *width = bounds[inner.getPosition()];
  return operandElements / bounds[inner.getPosition()];
}

bool needsDecomposition(linalg::LinalgOp op) {
  return getDecomposableWindow(op).has_value();
}

LogicalResult vectorizationPrecondition(linalg::LinalgOp op,
                                        const LegalityConfig &config,
                                        std::string *reason) {
  auto fail = [&](const std::string &why) {
    if (reason)
      *reason = why;
    return failure();
  };
  if (!op.hasPureTensorSemantics())
    return fail("op does not have tensor semantics");
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<ShapedType>(v.getType()); t && !t.hasStaticShape())
      return fail("operand shapes are not static (a tile size does not "
                  "divide its loop)");
  SmallVector<int64_t> bounds = getLoopBounds(op);
  if (bounds.empty())
    return fail("op has no loops");
  if (llvm::is_contained(bounds, 0))
    return fail("op has an empty iteration space");
  if (bounds.back() > config.maxVectorInnermost)
    return fail("innermost loop extent " + std::to_string(bounds.back()) +
                " exceeds " + std::to_string(config.maxVectorInnermost));
  int64_t elements = 1;
  for (int64_t b : bounds)
    elements *= b;
  if (elements > config.maxVectorElements)
    return fail("iteration space of " + std::to_string(elements) +
                " points exceeds " + std::to_string(config.maxVectorElements) +
                " (tile first)");
  std::optional<WindowExtents> window = getDecomposableWindow(op);
  // (Convolutions and pooling are vectorized after decomposition into 1-D
  // ops whose vectors do not follow the 2-D loop nest: only the element
  // limit applies to them.)
  // Rows read through strided views (each operand's rows, as below).
  int64_t strided = 0, stridedRows = 0;
  if (!window) {
    // Rows as each operand's transfer lowers them: along the operand's own
    // innermost (contiguous) dimension, not the innermost loop, so that an
    // interchange that vectorizes across memory order (a transposed read
    // or write) counts the rows it really makes; the iteration space's
    // rows for the computation itself. Rows whose width is not a whole
    // number of registers split into pieces of a power of two each
    // (128-bit registers where the target's are unknown).
    int64_t bits = config.vectorRegisterBits > 0 ? config.vectorRegisterBits
                                                 : 128;
    int64_t elementBits = 32;
    if (op.getNumDpsInits() > 0)
      if (auto t = dyn_cast<ShapedType>(op.getDpsInits()[0].getType());
          t && t.getElementType().isIntOrFloat())
        elementBits = std::max<int64_t>(
            8, t.getElementType().getIntOrFloatBitWidth());
    int64_t lanes = std::max<int64_t>(1, bits / elementBits);
    struct Rows {
      int64_t rows, width;
      std::string what;
    };
    SmallVector<Rows> all{{elements / bounds.back(), bounds.back(), ""}};
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<ShapedType>(operand.get().getType()))
        continue;
      int64_t width = 0;
      int64_t rows = getOperandVectorRows(op, operand, bounds, &width);
      if (op.isDpsInput(&operand) && isStridedView(operand.get())) {
        ++strided;
        stridedRows += rows;
      }
      if (width != bounds.back() || rows != all.front().rows)
        all.push_back({rows, width,
                       "operand " + std::to_string(operand.getOperandNumber()) +
                           " (vectorized across its innermost dimension)"});
    }
    for (const Rows &r : all) {
      std::string in = r.what.empty() ? "" : " in " + r.what;
      if (r.rows > config.maxVectorRows)
        return fail(std::to_string(r.rows) +
                    (r.what.empty()
                         ? " vector rows (iteration space / innermost extent)"
                         : " vector rows" + in) +
                    " exceed " + std::to_string(config.maxVectorRows) +
                    " (tile first)");
      int64_t pieces = r.rows * llvm::popcount(uint64_t(r.width % lanes));
      if (pieces > config.maxPartialVectorPieces)
        return fail(std::to_string(r.rows) + " vector rows of " +
                    std::to_string(r.width) + " elements" + in + " (" +
                    std::to_string(pieces) + " partial vector pieces) exceed " +
                    std::to_string(config.maxPartialVectorPieces) +
                    " (tile first)");
    }
  }
  if (window) {
    if (!((window->height[0] == 1 && window->height[1] == 1) ||
          (window->width[0] == 1 && window->width[1] == 1)))
      return fail("2-D convolution/pooling needs its output and window "
                  "height (or width) tiled to 1 before vectorization");
    return success();
  }
  if (stridedRows > config.maxStridedRowReads)
    return fail(std::to_string(stridedRows) + " vector rows read from " +
                std::to_string(strided) + " strided views exceed " +
                std::to_string(config.maxStridedRowReads) + " (tile first)");
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return fail("the linalg vectorizer does not support this op");
  return success();
}

SmallVector<int64_t> getRegisterTile(linalg::LinalgOp op,
                                     const LegalityConfig &config) {
  int64_t budget = getAccumulatorRegisterBudget(config);
  // A multiply-accumulate over loops that both inputs share (matmuls,
  // batch matmuls, im2col matmuls; not row reductions such as softmax's sums).
  if (budget <= 0 || !op.hasPureTensorSemantics() ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      needsDecomposition(op) || !linalg::isaContractionOpInterface(op))
    return {};
  SmallVector<int64_t> bounds = getLoopBounds(op);
  if (bounds.empty() || llvm::any_of(bounds, [](int64_t b) { return b <= 0; }))
    return {};
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<ShapedType>(init->get().getType());
  if (!outType || !outType.hasStaticShape() || outType.getRank() == 0 ||
      !outType.getElementType().isIntOrFloat())
    return {};
  // The output's dimensions as loops (a projected permutation of parallel
  // loops, as for every contraction the vectorizer takes).
  SmallVector<unsigned> outLoops;
  for (AffineExpr e : op.getMatchingIndexingMap(init).getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return {};
    outLoops.push_back(d.getPosition());
  }
  unsigned colLoop = outLoops.back();
  // Vectors along the output's innermost dimension: some input's innermost.
  bool outerProductForm =
      llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
        AffineMap m = op.getMatchingIndexingMap(in);
        if (m.getNumResults() == 0)
          return false;
        auto d = dyn_cast<AffineDimExpr>(m.getResults().back());
        return d && d.getPosition() == colLoop;
      });
  if (!outerProductForm)
    return {};
  int64_t width = outType.getElementType().getIntOrFloatBitWidth();
  int64_t lanes = std::max<int64_t>(1, config.vectorRegisterBits / width);

  auto vectors = [&](int64_t cols) { return (cols + lanes - 1) / lanes; };
  int64_t cols = bounds[colLoop];
  int64_t rows = 1;
  for (unsigned l : ArrayRef<unsigned>(outLoops).drop_back())
    rows *= bounds[l];
  if (rows * vectors(cols) <= budget)
    return {};

  // Rows come from the output's second innermost dimension; the ones outside
  // it are tiled to 1.
  std::optional<unsigned> rowLoop;
  if (outLoops.size() >= 2)
    rowLoop = outLoops[outLoops.size() - 2];
  int64_t rowExtent = rowLoop ? bounds[*rowLoop] : 1;
  auto divisors = [](int64_t n) {
    SmallVector<int64_t> out;
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0)
        out.push_back(d);
    return out;
  };
  int64_t bestR = 0, bestC = 0;
  auto better = [&](int64_t r, int64_t c) {
    if (bestR == 0)
      return true;
    if (r * c != bestR * bestC)
      return r * c > bestR * bestC;
    int64_t loads = r + vectors(c), bestLoads = bestR + vectors(bestC);
    if (loads != bestLoads)
      return loads < bestLoads;
    return r > bestR;
  };
  for (int64_t r : divisors(rowExtent))
    for (int64_t c : divisors(cols))
      if (r * vectors(c) <= budget && better(r, c)) {
        bestR = r;
        bestC = c;
      }
  if (bestR == 0)
    return {};
  SmallVector<int64_t> sizes(bounds.size(), 0);
  for (unsigned l : ArrayRef<unsigned>(outLoops).drop_back(rowLoop ? 2 : 1))
    if (bounds[l] > 1)
      sizes[l] = 1;
  if (rowLoop && bestR < rowExtent)
    sizes[*rowLoop] = bestR;
  if (bestC < cols)
    sizes[colLoop] = bestC;
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return {};
  return sizes;
}

} // namespace mlir::rl
