//===- UnrollWindows.cpp - Depthwise convolutions and poolings, unrolled --===//
//
// A depthwise convolution or a pooling does a few operations per output
// element over a small window. The scheduler cannot vectorize the named ops
// well in NCHW (upstream vectorizes depthwise convolutions only along the
// channels of NHWC), so they ran slower than unscheduled. This pass rewrites
// them as all-parallel generics over strided views of the input, one view
// (and, for a depthwise convolution, one filter column) per window tap:
//
//   out[n, c, oh, ow] = init + x[n, c, oh*s + 0, ow*s + 0] * w[c, 0, 0] + ...
//
// whose accesses are projected permutations, so they tile and vectorize as
// elementwise ops do. The taps are accumulated in the named op's order
// (kh outer, kw inner) with the named op's own body; a window with more taps
// than one op may have operands is split over a chain of generics, each
// accumulating into the previous one's result.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rl {
#define GEN_PASS_DEF_UNROLLWINDOWS
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

/// Operands of one generic at most: the scheduler skips ops with more than
/// 14 (the feature layout's L); one is the init.
constexpr int64_t kMaxOperands = 13;

struct Window {
  bool depthwise;        // else a pooling (its second input is a shape)
  unsigned hDim, wDim;   // spatial dimensions of input and output
  unsigned cDim;         // channel dimension of the output
  int64_t kh, kw;        // window
  int64_t fhDim, fwDim;  // window dimensions of the filter (depthwise)
  int64_t sh, sw, dh, dw;
};

template <typename OpTy>
void readStridesDilations(OpTy op, Window &win) {
  auto s = llvm::to_vector(op.getStrides().template getValues<int64_t>());
  auto d = llvm::to_vector(op.getDilations().template getValues<int64_t>());
  win.sh = s[0], win.sw = s[1], win.dh = d[0], win.dw = d[1];
}

std::optional<Window> getWindow(linalg::LinalgOp op) {
  Window win{};
  Operation *o = op.getOperation();
  bool nchw;
  if (auto c = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(o)) {
    win.depthwise = true, nchw = true;
    readStridesDilations(c, win);
  } else if (auto c = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(o)) {
    win.depthwise = true, nchw = false;
    readStridesDilations(c, win);
  } else if (auto c = dyn_cast<linalg::PoolingNchwMaxOp>(o)) {
    win.depthwise = false, nchw = true;
    readStridesDilations(c, win);
  } else if (auto c = dyn_cast<linalg::PoolingNchwSumOp>(o)) {
    win.depthwise = false, nchw = true;
    readStridesDilations(c, win);
  } else if (auto c = dyn_cast<linalg::PoolingNhwcMaxOp>(o)) {
    win.depthwise = false, nchw = false;
    readStridesDilations(c, win);
  } else if (auto c = dyn_cast<linalg::PoolingNhwcSumOp>(o)) {
    win.depthwise = false, nchw = false;
    readStridesDilations(c, win);
  } else {
    return std::nullopt;
  }
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto kt = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto ot = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!xt || !kt || !ot || !xt.hasStaticShape() || !kt.hasStaticShape() ||
      !ot.hasStaticShape() || xt.getRank() != 4 || ot.getRank() != 4)
    return std::nullopt;
  // An empty tensor: nothing to compute, and no slice of it is in bounds.
  if (xt.getNumElements() == 0 || kt.getNumElements() == 0 ||
      ot.getNumElements() == 0)
    return std::nullopt;
  win.hDim = nchw ? 2 : 1, win.wDim = nchw ? 3 : 2, win.cDim = nchw ? 1 : 3;
  if (win.depthwise) {
    // Filter [C, KH, KW] (NCHW) or [KH, KW, C] (NHWC).
    win.fhDim = nchw ? 1 : 0, win.fwDim = nchw ? 2 : 1;
  } else {
    win.fhDim = 0, win.fwDim = 1;
  }
  win.kh = kt.getDimSize(win.fhDim), win.kw = kt.getDimSize(win.fwDim);
  // Every view must lie inside the input (the named op's verifier does not
  // check it for every shape).
  for (auto [dim, k, s, d] : {std::tuple{win.hDim, win.kh, win.sh, win.dh},
                              std::tuple{win.wDim, win.kw, win.sw, win.dw}}) {
    int64_t out = ot.getDimSize(dim);
    if (out < 1 || (out - 1) * s + (k - 1) * d + 1 > xt.getDimSize(dim))
      return std::nullopt;
  }
  for (unsigned i : {0u, win.cDim})
    if (xt.getDimSize(i) != ot.getDimSize(i))
      return std::nullopt;
  // The body: block arguments (input, filter or window, output), and for a
  // pooling the window is not read.
  Block &body = o->getRegion(0).front();
  if (body.getNumArguments() != 3 || (!win.depthwise && !body.getArgument(1).use_empty()))
    return std::nullopt;
  for (Operation &inner : body.without_terminator())
    if (inner.getNumRegions() != 0 || !isPure(&inner))
      return std::nullopt;
  return win;
}

/// Rewrites `op` into a chain of elementwise generics; returns the last.
Value unroll(RewriterBase &rewriter, linalg::LinalgOp op, const Window &win) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  Value x = op.getDpsInputs()[0], filter = op.getDpsInputs()[1];
  Value acc = op.getDpsInits()[0];
  auto outType = cast<RankedTensorType>(acc.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> outShape = outType.getShape();
  int64_t channels = outShape[win.cDim];

  // One strided view of the input (and one filter column) per tap.
  SmallVector<Value> views, weights;
  auto viewType = RankedTensorType::get(outShape, xType.getElementType());
  for (int64_t i = 0; i < win.kh; ++i) {
    for (int64_t j = 0; j < win.kw; ++j) {
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(4, rewriter.getIndexAttr(1));
      for (int64_t size : outShape)
        sizes.push_back(rewriter.getIndexAttr(size));
      offsets[win.hDim] = rewriter.getIndexAttr(i * win.dh);
      offsets[win.wDim] = rewriter.getIndexAttr(j * win.dw);
      strides[win.hDim] = rewriter.getIndexAttr(win.sh);
      strides[win.wDim] = rewriter.getIndexAttr(win.sw);
      views.push_back(tensor::ExtractSliceOp::create(rewriter, loc, viewType, x,
                                                     offsets, sizes, strides));
      if (!win.depthwise)
        continue;
      auto ft = cast<RankedTensorType>(filter.getType());
      SmallVector<OpFoldResult> fOffsets(3, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> fSizes(3, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> fStrides(3, rewriter.getIndexAttr(1));
      fOffsets[win.fhDim] = rewriter.getIndexAttr(i);
      fOffsets[win.fwDim] = rewriter.getIndexAttr(j);
      unsigned fcDim = 3 - win.fhDim - win.fwDim;
      fSizes[fcDim] = rewriter.getIndexAttr(channels);
      auto colType = RankedTensorType::get({channels}, ft.getElementType());
      weights.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, colType, filter, fOffsets, fSizes, fStrides));
    }
  }

  Block &body = op.getOperation()->getRegion(0).front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap channel =
      AffineMap::get(4, 0, {getAffineDimExpr(win.cDim, ctx)}, ctx);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  int64_t perTap = win.depthwise ? 2 : 1;
  int64_t tapsPerOp = (kMaxOperands - 1) / perTap;
  int64_t taps = (int64_t)views.size();
  for (int64_t first = 0; first < taps; first += tapsPerOp) {
    int64_t last = std::min(taps, first + tapsPerOp);
    SmallVector<Value> ins(views.begin() + first, views.begin() + last);
    SmallVector<AffineMap> maps(last - first, id);
    if (win.depthwise) {
      ins.append(weights.begin() + first, weights.begin() + last);
      maps.append(last - first, channel);
    }
    maps.push_back(id);
    int64_t n = last - first;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ins, ValueRange{acc}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value sum = args.back();
          for (int64_t t = 0; t < n; ++t) {
            // The named op's body, once per tap, in its order.
            IRMapping map;
            map.map(body.getArgument(0), args[t]);
            if (win.depthwise)
              map.map(body.getArgument(1), args[n + t]);
            map.map(body.getArgument(2), sum);
            for (Operation &inner : body.without_terminator())
              b.clone(inner, map);
            sum = map.lookupOrDefault(yield.getOperand(0));
          }
          linalg::YieldOp::create(b, l, sum);
        });
    acc = generic.getResult(0);
  }
  return acc;
}

struct UnrollWindowsPass
    : public mlir::rl::impl::UnrollWindowsBase<UnrollWindowsPass> {
  using UnrollWindowsBase::UnrollWindowsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Window>> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!nhwcDepthwise && isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        return;
      if (std::optional<Window> win = getWindow(op))
        if (win->kh * win->kw <= maxTaps)
          ops.push_back({op, *win});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, win] : ops) {
      Value result = unroll(rewriter, op, win);
      rewriter.replaceOp(op, result);
    }
  }
};

} // namespace
