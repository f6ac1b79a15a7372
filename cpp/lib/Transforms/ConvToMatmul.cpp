//===- ConvToMatmul.cpp - Convolutions as im2col and a matmul --------------===//
//
// The scheduler vectorizes a 2-D convolution only after decomposing it into
// 1-D convolutions, which for NCHW needs transposes and runs far below what
// the same multiply-adds reach as a matmul. This pass rewrites a convolution
// into a copy of its input windows (im2col) and a matmul-like generic, which
// the scheduler tiles, parallelizes and vectorizes as it does matmuls.
//
// Unlike upstream's rewriteInIm2Col, the copy keeps the window dimensions
// apart ([N, C, KH, KW, OH, OW] for NCHW) with affine accesses instead of
// floordiv/mod ones: the scheduler can analyse and tile it, and for stride 1
// its innermost loop reads the input contiguously.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rl {
#define GEN_PASS_DEF_CONVTOMATMUL
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

enum class Layout { NchwFchw, NhwcHwcf, NhwcFhwc };

struct ConvShape {
  Layout layout;
  int64_t n, c, h, w, f, kh, kw, oh, ow;
  int64_t sh, sw, dh, dw;
};

std::optional<ConvShape> getConvShape(linalg::LinalgOp op) {
  Layout layout;
  DenseIntElementsAttr strides, dilations;
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
    layout = Layout::NchwFchw;
    strides = conv.getStrides();
    dilations = conv.getDilations();
  } else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    layout = Layout::NhwcHwcf;
    strides = conv.getStrides();
    dilations = conv.getDilations();
  } else if (auto conv = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op.getOperation())) {
    layout = Layout::NhwcFhwc;
    strides = conv.getStrides();
    dilations = conv.getDilations();
  } else {
    return std::nullopt;
  }
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto wt = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto ot = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!xt || !wt || !ot || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape())
    return std::nullopt;
  // An empty tensor: nothing to compute, and no slice of it is in bounds.
  if (xt.getNumElements() == 0 || wt.getNumElements() == 0 ||
      ot.getNumElements() == 0)
    return std::nullopt;
  // One element type: the body is then a multiply-add (no casts).
  Type elt = ot.getElementType();
  if (xt.getElementType() != elt || wt.getElementType() != elt ||
      !(isa<FloatType>(elt) || elt.isSignlessInteger()))
    return std::nullopt;
  auto s = llvm::to_vector(strides.getValues<int64_t>());
  auto d = llvm::to_vector(dilations.getValues<int64_t>());
  ConvShape shape{layout, 0, 0, 0, 0, 0, 0, 0, 0, 0, s[0], s[1], d[0], d[1]};
  ArrayRef<int64_t> x = xt.getShape(), w = wt.getShape(), o = ot.getShape();
  switch (layout) {
  case Layout::NchwFchw:
    shape.n = x[0], shape.c = x[1], shape.h = x[2], shape.w = x[3];
    shape.f = w[0], shape.kh = w[2], shape.kw = w[3];
    shape.oh = o[2], shape.ow = o[3];
    break;
  case Layout::NhwcHwcf:
    shape.n = x[0], shape.h = x[1], shape.w = x[2], shape.c = x[3];
    shape.kh = w[0], shape.kw = w[1], shape.f = w[3];
    shape.oh = o[1], shape.ow = o[2];
    break;
  case Layout::NhwcFhwc:
    shape.n = x[0], shape.h = x[1], shape.w = x[2], shape.c = x[3];
    shape.f = w[0], shape.kh = w[1], shape.kw = w[2];
    shape.oh = o[1], shape.ow = o[2];
    break;
  }
  // The body must be the plain multiply-add of the named op (a convolution
  // whose region was built otherwise, e.g. with casts, is left alone).
  Block &body = op->getRegion(0).front();
  if (body.getOperations().size() != 3)
    return std::nullopt;
  return shape;
}

/// The multiply-add body of the matmul: out + lhs * rhs.
void buildMulAdd(OpBuilder &b, Location loc, ValueRange args) {
  Value mul, add;
  if (isa<FloatType>(args[0].getType())) {
    mul = arith::MulFOp::create(b, loc, args[0], args[1]);
    add = arith::AddFOp::create(b, loc, args[2], mul);
  } else {
    mul = arith::MulIOp::create(b, loc, args[0], args[1]);
    add = arith::AddIOp::create(b, loc, args[2], mul);
  }
  linalg::YieldOp::create(b, loc, add);
}

/// Reassociation groups of consecutive dimensions of the given sizes.
SmallVector<ReassociationIndices> groups(ArrayRef<int64_t> sizes) {
  SmallVector<ReassociationIndices> re;
  int64_t next = 0;
  for (int64_t size : sizes) {
    ReassociationIndices group;
    for (int64_t i = 0; i < size; ++i)
      group.push_back(next++);
    re.push_back(group);
  }
  return re;
}

/// Whether `s` is 1x1 with stride 1: its input is already the matmul's
/// operand (no im2col copy).
bool isPointwise(const ConvShape &s) {
  return s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1;
}

/// An all-parallel generic copying `in` (read through `inExprs` of the
/// loops of `out`) into `out`.
Value buildCopy(OpBuilder &b, Location loc, Value in, Value out,
                ArrayRef<AffineExpr> inExprs) {
  unsigned rank = cast<RankedTensorType>(out.getType()).getRank();
  return linalg::GenericOp::create(
             b, loc, out.getType(), ValueRange{in}, ValueRange{out},
             ArrayRef<AffineMap>{
                 AffineMap::get(rank, 0, inExprs, b.getContext()),
                 b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &ob, Location l, ValueRange args) {
               linalg::YieldOp::create(ob, l, args[0]);
             })
      .getResult(0);
}

/// Rewrites `op`; returns the matmul generic.
FailureOr<Operation *> rewriteConv(RewriterBase &rewriter, linalg::LinalgOp op,
                                   const ConvShape &s, int64_t padMultiple,
                                   int64_t maxPadMultiple,
                                   int64_t minReductionPadMultiple,
                                   int64_t maxTapCopies) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  auto outType = cast<RankedTensorType>(init.getType());
  Type elt = outType.getElementType();
  bool nchw = s.layout == Layout::NchwFchw;
  // A batch of one is collapsed away: the matmul is then a plain 2-D one
  // (loops m, q, k), which is what the policy has seen most.
  bool batched = s.n != 1;
  unsigned b = batched ? 1 : 0;
  rewriter.setInsertionPoint(op);

  // Padding to full tiles: the scheduler's tile sizes are powers of two, and
  // a size that does not divide its loop leaves a dynamic extent that cannot
  // be vectorized. So the reduction K = C*KH*KW and the pixels P = OH*OW are
  // made multiples of a power of two by padding KW, and OH and OW, with
  // zeros: P of the largest one up to `maxPadMultiple` (32), K of the
  // largest from 8 down to `minReductionPadMultiple` (4), that costs at most
  // 1/3 more work, else of `padMultiple` whatever it costs (7x7 pixels
  // become 8x8, 14x14 14x16, 28x28 28x32, or NHWC 784 rows 800, below; a
  // 3-channel 3x3 filter 3x3x4); the
  // extra outputs are computed and dropped. Up to 64, 14x14 became 16x16:
  // 30 % more work, 15 % slower in a 256-channel conv (measured
  // 2026-11-27); 28x28 unpadded (up to 16) takes tiles of 16 rows at most,
  // 30 % slower. An RGB 3x3 filter padded to 3x3x8 (K = 72) was 2.7 times
  // the work of a memory-bound first layer.
  // The smallest a*b >= x*y (a >= x, b >= y; a == x when `onlyB`) that `m`
  // divides, as {a, b}, or {x, y} when there is none.
  auto smallest = [](int64_t x, int64_t y, int64_t m, bool onlyB) {
    std::pair<int64_t, int64_t> best{x, y};
    int64_t bestSize = -1;
    for (int64_t a = x; a < x + (onlyB ? 1 : m); ++a)
      for (int64_t b = y; b < y + m; ++b)
        if ((a * b) % m == 0 && (bestSize < 0 || a * b < bestSize)) {
          best = {a, b};
          bestSize = a * b;
        }
    return bestSize < 0 ? std::pair<int64_t, int64_t>{x, y} : best;
  };
  // The first multiple of a power of two from `largest` down to `least`
  // that costs at most 1/3 more, else of `padMultiple` whatever it costs.
  auto padTo = [&](int64_t x, int64_t y, bool onlyB, int64_t largest,
                   int64_t least) {
    if (padMultiple <= 1)
      return std::pair<int64_t, int64_t>{x, y};
    for (int64_t m = std::max(largest, padMultiple); m >= least; m /= 2) {
      auto [a, b] = smallest(x, y, m, onlyB);
      if ((a * b) % m == 0 && rl::isPaddingCheapEnough(a * b, x * y))
        return std::pair<int64_t, int64_t>{a, b};
    }
    auto [a, b] = smallest(x, y, padMultiple, onlyB);
    return (a * b) % padMultiple == 0 ? std::pair<int64_t, int64_t>{a, b}
                                      : std::pair<int64_t, int64_t>{x, y};
  };
  // The policy's tiles of the reduction are at most 8.
  int64_t kwP = padTo(s.c * s.kh, s.kw, /*onlyB=*/true, 8,
                      std::min(padMultiple, minReductionPadMultiple))
                    .second;
  auto [ohP, owP] =
      padTo(s.oh, s.ow, /*onlyB=*/false, maxPadMultiple, padMultiple);
  // NHWC: the pixels P = OH*OW are the matmul's rows, contiguous in the
  // im2col tensor and the output, so they can be padded as one dimension,
  // at their end: 28x28 = 784 to 800 (2 % more) where padding OW gives
  // 28x32 = 896 (14 %). Used where that is less work.
  const int64_t pixels = s.oh * s.ow;
  int64_t pFlat = pixels;
  if (!nchw && padMultiple > 1 && ohP * owP != pixels) {
    for (int64_t m = std::max(maxPadMultiple, padMultiple); m >= padMultiple;
         m /= 2) {
      int64_t p = llvm::divideCeil(pixels, m) * m;
      if (rl::isPaddingCheapEnough(p, pixels)) {
        pFlat = p;
        break;
      }
    }
  }
  bool flat = pFlat != pixels && pFlat < ohP * owP;
  if (flat)
    ohP = s.oh, owP = s.ow;
  bool padded = kwP != s.kw || owP != s.ow || ohP != s.oh || flat;
  Value zeroValue;
  auto zero = [&]() {
    if (!zeroValue)
      zeroValue = arith::ConstantOp::create(
          rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(elt)));
    return zeroValue;
  };
  // `v` padded with zeros at the end of the given dimensions.
  auto padHigh = [&](Value v,
                     ArrayRef<std::pair<unsigned, int64_t>> dims) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    for (auto [dim, to] : dims)
      shape[dim] = to;
    if (ArrayRef<int64_t>(shape) == t.getShape())
      return v;
    return tensor::createPadHighOp(RankedTensorType::get(shape, elt), v, zero(),
                                   /*nofold=*/false, loc, rewriter);
  };

  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;
  auto red = utils::IteratorType::reduction;
  // With a batch: the leading dimension of each group list stays alone.
  auto batch = [&](SmallVector<int64_t> sizes) {
    if (batched)
      sizes.insert(sizes.begin(), 1);
    else
      sizes.front() += 1;
    return groups(sizes);
  };

  // The im2col tensor, collapsed to [(N,) K, P] (NCHW) or [(N,) P, K] (NHWC).
  Value col;
  bool copyFree = isPointwise(s) && s.h == s.oh && s.w == s.ow && !padded;
  if (copyFree) {
    col = tensor::CollapseShapeOp::create(
        rewriter, loc, x, nchw ? batch({1, 2}) : batch({2, 1}));
  } else {
    // The input without its unit batch: [C, H, W] or [H, W, C].
    Value input = batched ? x
                          : tensor::CollapseShapeOp::create(
                                rewriter, loc, x, groups({2, 1, 1}))
                                .getResult();
    // Loops ((n,) c, kh, kw, oh, ow) for NCHW, ((n,) oh, ow, kh, kw, c)
    // for NHWC.
    SmallVector<int64_t> colShape;
    SmallVector<AffineExpr> xExprs;
    if (batched)
      xExprs.push_back(d(0));
    if (nchw) {
      colShape = {s.c, s.kh, s.kw, s.oh, s.ow};
      xExprs.append({d(b), d(b + 3) * s.sh + d(b + 1) * s.dh,
                     d(b + 4) * s.sw + d(b + 2) * s.dw});
    } else {
      colShape = {s.oh, s.ow, s.kh, s.kw, s.c};
      xExprs.append({d(b) * s.sh + d(b + 2) * s.dh,
                     d(b + 1) * s.sw + d(b + 3) * s.dw, d(b + 4)});
    }
    if (batched)
      colShape.insert(colShape.begin(), s.n);
    unsigned rank = colShape.size();
    // Padded: the copy writes the real windows into a zero-filled tensor
    // whose KW and OW dimensions are padded.
    SmallVector<int64_t> paddedShape(colShape);
    paddedShape[b + (nchw ? 2 : 3)] = kwP;
    paddedShape[b + (nchw ? 4 : 1)] = owP;
    paddedShape[b + (nchw ? 3 : 0)] = ohP;
    // Flat: the tensor is [(N,) Ppad, KH, KWp, C]; each copy writes a
    // slice of its first P rows, seen as [(N,) OH, OW, ...] through its own
    // expand_shape (no view shared by the copies: after CSE merged the zero
    // tensors of convolutions of one shape, mlir-rl-split-empty-tensors
    // gives each copy its own tensor only through such a chain).
    SmallVector<int64_t> fullShape(paddedShape);
    SmallVector<ReassociationIndices> viewGroups;
    if (flat) {
      fullShape.erase(fullShape.begin() + b + 1);
      fullShape[b] = pFlat;
      viewGroups = batched ? groups({1, 2, 1, 1, 1}) : groups({2, 1, 1, 1});
    }
    Value full = tensor::EmptyOp::create(rewriter, loc, fullShape, elt);
    Value dest = full;
    // The extents the copies write of each dimension of `full`.
    SmallVector<int64_t> written(colShape);
    if (flat) {
      written.erase(written.begin() + b + 1);
      written[b] = pixels;
    }
    SmallVector<unsigned> paddedDims;
    for (unsigned i = 0; i < fullShape.size(); ++i)
      if (written[i] != fullShape[i])
        paddedDims.push_back(i);
    // The pixels' dimension that padding extends: flat, the pixels; else
    // the output width.
    unsigned pixelDim = flat ? b : b + (nchw ? 4 : 1);
    if (padded && paddedDims.size() == 1 && paddedDims.front() == pixelDim) {
      // The pixels alone padded (past 784 of 800, a lifted 1-D
      // convolution's 99 of 128 columns): zeros there alone, the copies
      // write all the rest. Filling all of it was a memset of the whole
      // im2col tensor (800x1440 for 784 pixels: 7% of a 3x3 convolution's
      // time, AVX2, 2026-11-29). Not where the filter's width is padded
      // (ResNet's first 7x7 convolution to 8): 0.95x on the model.
      unsigned dim = pixelDim;
      SmallVector<int64_t> tailShape(fullShape);
      tailShape[dim] = fullShape[dim] - written[dim];
      Value tail = linalg::FillOp::create(
                       rewriter, loc, zero(),
                       Value(tensor::EmptyOp::create(rewriter, loc, tailShape,
                                                     elt)))
                       .getResult(0);
      SmallVector<int64_t> offsets(fullShape.size(), 0);
      offsets[dim] = written[dim];
      full = tensor::InsertSliceOp::create(
          rewriter, loc, tail, full, getAsIndexOpFoldResult(ctx, offsets),
          getAsIndexOpFoldResult(ctx, tailShape),
          SmallVector<OpFoldResult>(fullShape.size(),
                                    rewriter.getIndexAttr(1)));
    } else if (padded) {
      full = linalg::FillOp::create(rewriter, loc, zero(), full).getResult(0);
    }
    if (padded && !flat)
      dest = rl::sliceOfPadded(rewriter, loc, full,
                               RankedTensorType::get(colShape, elt));
    // Flat: `copy` of `in` into the rows of `into` at the 5-D (6-D batched)
    // place `offsets`/`sizes` (kh, kw, or all of them), inserted back.
    auto copyIntoRows = [&](Value in, Value into, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<AffineExpr> exprs) -> Value {
      SmallVector<int64_t> off4(offsets), size4(sizes);
      off4.erase(off4.begin() + b + 1);
      size4.erase(size4.begin() + b + 1);
      size4[b] = pixels;
      auto index = [&](ArrayRef<int64_t> v) {
        return getAsIndexOpFoldResult(ctx, v);
      };
      SmallVector<OpFoldResult> ones(size4.size(), rewriter.getIndexAttr(1));
      Value rows = tensor::ExtractSliceOp::create(rewriter, loc, into,
                                                  index(off4), index(size4), ones);
      Value out = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(sizes, elt), rows, viewGroups);
      Value copied = buildCopy(rewriter, loc, in, out, exprs);
      Value back =
          tensor::CollapseShapeOp::create(rewriter, loc, copied, viewGroups);
      return tensor::InsertSliceOp::create(rewriter, loc, back, into,
                                           index(off4), index(size4), ones);
    };
    Value colFull;
    if (s.kh * s.kw <= maxTapCopies) {
      // One copy per filter tap (kh, kw): col[.., kh, kw, ..] is a strided
      // view of the input, so each copy has identity maps, which the
      // vectorizer takes (it refuses the one-op form's `oh * s + kh` map).
      unsigned khDim = b + (nchw ? 1 : 2), kwDim = khDim + 1;
      unsigned hDim = b + (nchw ? 1 : 0), wDim = hDim + 1;
      unsigned inRank = cast<RankedTensorType>(input.getType()).getRank();
      Value cur = padded ? full : dest;
      for (int64_t kh = 0; kh < s.kh; ++kh) {
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          SmallVector<OpFoldResult> inOffsets, inSizes, inStrides;
          auto inShape = cast<RankedTensorType>(input.getType()).getShape();
          for (unsigned i = 0; i < inRank; ++i) {
            int64_t offset = 0, size = inShape[i], stride = 1;
            if (i == hDim) {
              offset = kh * s.dh;
              size = s.oh;
              stride = s.sh;
            } else if (i == wDim) {
              offset = kw * s.dw;
              size = s.ow;
              stride = s.sw;
            }
            inOffsets.push_back(rewriter.getIndexAttr(offset));
            inSizes.push_back(rewriter.getIndexAttr(size));
            inStrides.push_back(rewriter.getIndexAttr(stride));
          }
          Value tap = tensor::ExtractSliceOp::create(
              rewriter, loc, input, inOffsets, inSizes, inStrides);
          SmallVector<int64_t> off, size;
          SmallVector<AffineExpr> tapExprs;
          for (unsigned i = 0; i < rank; ++i) {
            off.push_back(i == khDim ? kh : i == kwDim ? kw : 0);
            size.push_back(i == khDim || i == kwDim ? 1 : colShape[i]);
            if (i != khDim && i != kwDim)
              tapExprs.push_back(d(i));
          }
          // The copy keeps the unit (kh, kw) dimensions, so that it is not
          // an identity generic, which canonicalization would fold into
          // a memref.copy of strided views after bufferization.
          if (flat) {
            cur = copyIntoRows(tap, cur, off, size, tapExprs);
            continue;
          }
          SmallVector<OpFoldResult> offsets = getAsIndexOpFoldResult(ctx, off),
                                    sizes = getAsIndexOpFoldResult(ctx, size),
                                    strides(rank, rewriter.getIndexAttr(1));
          Value out = tensor::ExtractSliceOp::create(rewriter, loc, cur,
                                                     offsets, sizes, strides);
          cur = tensor::InsertSliceOp::create(
              rewriter, loc, buildCopy(rewriter, loc, tap, out, tapExprs), cur, offsets,
              sizes, strides);
        }
      }
      colFull = cur;
    } else if (flat) {
      colFull = copyIntoRows(input, full, SmallVector<int64_t>(rank, 0),
                             colShape, xExprs);
    } else {
      colFull = buildCopy(rewriter, loc, input, dest, xExprs);
      if (padded) {
        auto slice = dest.getDefiningOp<tensor::ExtractSliceOp>();
        colFull = tensor::InsertSliceOp::create(
            rewriter, loc, colFull, full, slice.getMixedOffsets(),
            slice.getMixedSizes(), slice.getMixedStrides());
      }
    }
    SmallVector<ReassociationIndices> re =
        groups(nchw ? SmallVector<int64_t>{3, 2} : SmallVector<int64_t>{2, 3});
    if (batched)
      re = groups(nchw ? SmallVector<int64_t>{1, 3, 2}
                       : SmallVector<int64_t>{1, 2, 3});
    if (flat)
      re = batched ? groups({1, 1, 3}) : groups({1, 3});
    col = tensor::CollapseShapeOp::create(rewriter, loc, colFull, re);
  }

  // The filter as a matrix: [F, K] (fchw, fhwc) or [K, F] (hwcf), its KW
  // padded with zeros.
  unsigned kwDim = s.layout == Layout::NchwFchw ? 3 : s.layout == Layout::NhwcHwcf ? 1 : 2;
  Value w2 = tensor::CollapseShapeOp::create(
      rewriter, loc, padHigh(w, {{kwDim, kwP}}),
      groups(s.layout == Layout::NhwcHwcf ? SmallVector<int64_t>{3, 1}
                                          : SmallVector<int64_t>{1, 3}));

  SmallVector<ReassociationIndices> outRe =
      nchw ? batch({1, 2}) : batch({2, 1});
  // The output with its OW padded (flat: its P).
  unsigned owDim = nchw ? 3 : 2;
  Value initP = padHigh(init, {{owDim - 1, ohP}, {owDim, owP}});
  auto paddedOutType = cast<RankedTensorType>(initP.getType());
  Value init2 = tensor::CollapseShapeOp::create(rewriter, loc, initP, outRe);
  if (flat)
    init2 = padHigh(init2, {{b, pFlat}});

  // Loops ((n,) m, q, k): NCHW out[m=f, q=p] = w2[f, k] * col[k, p];
  // NHWC out[m=p, q=f] = col[p, k] * w2[k, f] (or w2[f, k] for fhwc).
  unsigned loops = 3 + b;
  auto map = [&](SmallVector<AffineExpr> exprs, bool withBatch) {
    if (withBatch && batched)
      exprs.insert(exprs.begin(), d(0));
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  AffineExpr m = d(b), q = d(b + 1), kk = d(b + 2);
  SmallVector<AffineMap> maps;
  SmallVector<Value> ins;
  if (nchw) {
    ins = {w2, col};
    maps = {map({m, kk}, false), map({kk, q}, true)};
  } else {
    ins = {col, w2};
    maps = {map({m, kk}, true), s.layout == Layout::NhwcHwcf
                                    ? map({kk, q}, false)
                                    : map({q, kk}, false)};
  }
  maps.push_back(map({m, q}, true));
  SmallVector<utils::IteratorType> iterators(loops, par);
  iterators.back() = red;
  auto matmul = linalg::GenericOp::create(
      rewriter, loc, init2.getType(), ins, ValueRange{init2}, maps, iterators,
      [](OpBuilder &ob, Location l, ValueRange args) {
        buildMulAdd(ob, l, args);
      });
  Value result;
  if (flat) {
    SmallVector<int64_t> rows(
        cast<RankedTensorType>(init2.getType()).getShape());
    rows[b] = pixels;
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, outType,
        rl::sliceOfPadded(rewriter, loc, matmul.getResult(0),
                          RankedTensorType::get(rows, elt)),
        outRe);
  } else {
    result = tensor::ExpandShapeOp::create(rewriter, loc, paddedOutType,
                                           matmul.getResult(0), outRe);
    if (padded)
      result = rl::sliceOfPadded(rewriter, loc, result, outType);
  }
  rewriter.replaceOp(op, result);
  return matmul.getOperation();
}

Value transposeValue(RewriterBase &rewriter, Location loc, Value v,
                     ArrayRef<int64_t> perm, StringRef keySuffix);

/// Whether `op` (of shape `s`) is computed as shifted-window matmuls
/// (rewriteConvAsShiftedMatmuls) rather than im2col and one matmul: an
/// NHWC stride-1 convolution of one image with a window of more than one
/// tap, channels of whole vectors (each tap's matmul reduces over them),
/// at most `maxFilters` filters, whose im2col matrix would exceed
/// `minBytes` (-1: never) and whose padded width computes at most a quarter
/// more columns than it keeps. The im2col copy costs the same for any
/// number of filters, the matmul in proportion to them: few filters are
/// where it shows (one process, AMD EPYC Zen 5, 2 threads, 2026-12-02,
/// im2col vs shifted: 3x3 192->64 at 64x64 4.49 vs 3.34 ms, 64->64 at 64x64
/// 1.32 vs 1.08, 32->32 at 112x112 1.65 vs 1.08; 64->64 at 56x56, 7 MiB of
/// im2col, 1.01 vs 0.95; with 128 to 512 filters no gain: 64->128 at
/// 112x112 7.27 vs 7.59, 128->256 at 56x56 6.77 vs 7.37, 512->512 at 28x28
/// 12.0 vs 12.1).
bool useShiftedMatmuls(linalg::LinalgOp op, const ConvShape &s,
                       int64_t minBytes, int64_t maxFilters) {
  if (minBytes < 0 || s.layout == Layout::NchwFchw || s.n != 1 ||
      s.sh != 1 || s.sw != 1 || s.kh * s.kw < 2 || s.c % 8 != 0 ||
      s.f > maxFilters)
    return false;
  Type elt = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != elt)
      return false;
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t colBytes = s.oh * s.ow * s.kh * s.kw * s.c * bytes;
  return colBytes > minBytes && 4 * (s.w - s.ow) <= s.ow;
}

/// A stride-1 NHWC convolution of one image as one matmul per filter tap,
/// with no im2col copy: the padded input [H, W, C] is seen as rows of C,
/// [H*W, C], and the output computed at the input's width, [OH*W, F], so
/// that tap (kh, kw) reads the rows from kh*dh*W + kw*dw on, a plain 2-D
/// slice: out[q] += in[q + kh*dh*W + kw*dw] * w[kh, kw] for q = oh*W + ow.
/// The W - OW columns of each output row past OW read across the next row
/// and are dropped. Rows are rounded up to a multiple of 8 (the input
/// padded with zeros past its end); a constant filter becomes one [C, F]
/// constant per tap (packed into panels by the rules). Returns the last
/// matmul.
FailureOr<Operation *> rewriteConvAsShiftedMatmuls(RewriterBase &rewriter,
                                                   linalg::LinalgOp op,
                                                   const ConvShape &s) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  auto outType = cast<RankedTensorType>(init.getType());
  Type elt = outType.getElementType();
  rewriter.setInsertionPoint(op);
  const int64_t width = s.w, rows = s.oh * width;
  const int64_t paddedRows = llvm::divideCeil(rows, 8) * 8;
  const int64_t maxOffset = (s.kh - 1) * s.dh * width + (s.kw - 1) * s.dw;
  Value zero = arith::ConstantOp::create(
      rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(elt)));
  auto padRows = [&](Value v, int64_t to) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getDimSize(0) == to)
      return v;
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = to;
    return tensor::createPadHighOp(RankedTensorType::get(shape, elt), v, zero,
                                   /*nofold=*/false, loc, rewriter);
  };
  auto index = [&](ArrayRef<int64_t> v) {
    return getAsIndexOpFoldResult(ctx, v);
  };
  auto ones = [&](unsigned rank) {
    return SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1));
  };
  // The input as rows of channels, with the rows the last taps read past
  // its end.
  Value flat = tensor::CollapseShapeOp::create(rewriter, loc, x,
                                               groups({3, 1}));
  flat = padRows(flat, paddedRows + maxOffset);
  // The accumulator at the input's width: the init's columns past OW are
  // zeros (computed and dropped).
  Value init3 = tensor::CollapseShapeOp::create(rewriter, loc, init,
                                                groups({2, 1, 1}));
  SmallVector<int64_t> wideShape{s.oh, width, s.f};
  Value wideInit =
      width == s.ow ? init3
                    : tensor::createPadHighOp(
                          RankedTensorType::get(wideShape, elt), init3, zero,
                          /*nofold=*/false, loc, rewriter);
  Value acc = tensor::CollapseShapeOp::create(rewriter, loc, wideInit,
                                              groups({2, 1}));
  acc = padRows(acc, paddedRows);
  // The filter as [KH, KW, C, F].
  Value hwcf = s.layout == Layout::NhwcHwcf
                   ? w
                   : transposeValue(rewriter, loc, w, {1, 2, 3, 0}, "_hwcf");
  // Reshapes keep the elements' order (a filter imported flat).
  auto cst = rl::skipReshapes(hwcf).getDefiningOp<arith::ConstantOp>();
  auto tapType = RankedTensorType::get({s.c, s.f}, elt);
  Operation *last = nullptr;
  for (int64_t kh = 0; kh < s.kh; ++kh) {
    for (int64_t kw = 0; kw < s.kw; ++kw) {
      int64_t tap = kh * s.kw + kw;
      Value filter;
      if (cst) {
        if (TypedAttr part = rl::sliceConstant(
                cst.getValue(), tap * s.c * s.f, tapType,
                ("_tap" + std::to_string(tap)).c_str()))
          filter = arith::ConstantOp::create(rewriter, loc, tapType, part);
      }
      if (!filter) {
        Value slice = tensor::ExtractSliceOp::create(
            rewriter, loc, hwcf, index({kh, kw, 0, 0}),
            index({1, 1, s.c, s.f}), ones(4));
        filter = tensor::CollapseShapeOp::create(rewriter, loc, tapType, slice,
                                                 groups({3, 1}));
      }
      int64_t offset = kh * s.dh * width + kw * s.dw;
      Value lhs = tensor::ExtractSliceOp::create(
          rewriter, loc, flat, index({offset, 0}), index({paddedRows, s.c}),
          ones(2));
      last = linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                      ValueRange{lhs, filter}, ValueRange{acc});
      acc = last->getResult(0);
    }
  }
  // The kept rows and columns, as the convolution's result.
  Value kept = tensor::ExtractSliceOp::create(
      rewriter, loc, acc, index({0, 0}), index({rows, s.f}), ones(2));
  Value wide = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({1, s.oh, width, s.f}, elt), kept,
      groups({3, 1}));
  Value result = tensor::ExtractSliceOp::create(
      rewriter, loc, outType, wide, index({0, 0, 0, 0}),
      index({1, s.oh, s.ow, s.f}), ones(4));
  rewriter.replaceOp(op, result);
  return last;
}

/// Fuses the generic that `use` reads into `use`'s owner (a generic) where
/// upstream elementwise fusion can: the owner's results become the fused
/// op's and the owner is erased; the producer stays for its other readers.
/// Returns whether it fused.
bool fuseAtUse(RewriterBase &rewriter, OpOperand *use) {
  Operation *consumer = use->getOwner();
  if (!isa<linalg::GenericOp>(consumer) ||
      !linalg::areElementwiseOpsFusable(use))
    return false;
  rewriter.setInsertionPoint(consumer);
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, use);
  if (failed(fused))
    return false;
  for (auto [original, replacement] : fused->replacements)
    if (original.getDefiningOp() == consumer)
      rewriter.replaceAllUsesWith(original, replacement);
  if (consumer->use_empty())
    rewriter.eraseOp(consumer);
  return true;
}

/// Fuses the generic that produces `copy`'s input into `copy` (an
/// all-parallel generic that reads one tensor); the producer is erased
/// once nothing else reads it.
void fuseProducerInto(RewriterBase &rewriter, linalg::GenericOp copy) {
  auto producer = copy.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
  if (producer && fuseAtUse(rewriter, &copy->getOpOperand(0)) &&
      producer->use_empty())
    rewriter.eraseOp(producer);
}

/// Whether `op` computes elementwise into its only result: all loops
/// parallel, the result written through the identity map.
bool isElementwiseInto(linalg::GenericOp op) {
  return op->getNumResults() == 1 && op.getNumReductionLoops() == 0 &&
         op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity();
}

/// Whether `op` broadcasts lower-rank tensors (a bias into a convolution's
/// accumulator): elementwise, its inputs all of fewer dimensions than its
/// loops.
bool isBroadcast(linalg::GenericOp op) {
  if (!isElementwiseInto(op))
    return false;
  for (OpOperand *in : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(in).getNumResults() >= op.getNumLoops())
      return false;
  return true;
}

/// The permutations between NCHW and NHWC (result dim i = dim perm[i]).
constexpr int64_t kToNhwc[] = {0, 2, 3, 1}, kToNchw[] = {0, 3, 1, 2};

/// `v` transposed (result dim i = dim perm[i] of `v`): a constant at
/// compile time, a fill of an empty tensor as a fill of the new shape, else
/// an all-parallel generic.
Value transposeValue(RewriterBase &rewriter, Location loc, Value v,
                     ArrayRef<int64_t> perm, StringRef keySuffix) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  auto outType = RankedTensorType::get(shape, t.getElementType());
  // Reshapes keep the elements' order: a reshaped constant (a lifted 1-D
  // convolution's filter) or fill (its accumulator) is seen through; else
  // the filter was transposed, the fill copied, at run time.
  if (auto cst = rl::skipReshapes(v).getDefiningOp<arith::ConstantOp>()) {
    Attribute value = cst.getValue();
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      value = dense.reshape(t);
    if (TypedAttr folded = rl::transposeConstant(value, t.getShape(), perm,
                                                 outType, keySuffix))
      return arith::ConstantOp::create(rewriter, loc, outType, folded);
  }
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, shape, t.getElementType());
  if (auto fill = rl::skipReshapes(v).getDefiningOp<linalg::FillOp>()) {
    if (rl::skipReshapes(fill.getOutputs()[0]).getDefiningOp<tensor::EmptyOp>())
      return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
          .getResult(0);
  }
  // out[i0, .., in] = v[..]: v's dim perm[i] is loop i.
  SmallVector<AffineExpr> inExprs(perm.size());
  for (unsigned i = 0; i < perm.size(); ++i)
    inExprs[perm[i]] = rewriter.getAffineDimExpr(i);
  return buildCopy(rewriter, loc, v, empty, inExprs);
}

/// An NCHW convolution as an NHWC one (conv_2d_nhwc_hwcf) between
/// transposes: input to NHWC, filter to HWCF (at compile time when
/// constant), init to NHWC (a bias broadcast that nothing else reads
/// broadcasts into NHWC directly), the result back to NCHW. Returns the new
/// convolution; the op that transposes its input goes to `in`, the one
/// that transposes its result to `back`.
linalg::LinalgOp transposeToNhwc(RewriterBase &rewriter,
                                 linalg::Conv2DNchwFchwOp conv,
                                 Operation *&in, Operation *&back) {
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  ArrayRef<int64_t> toNhwc = kToNhwc, toNchw = kToNchw;
  Value x = transposeValue(rewriter, loc, conv.getDpsInputs()[0], toNhwc, "");
  in = x.getDefiningOp();
  Value w = transposeValue(rewriter, loc, conv.getDpsInputs()[1],
                           {2, 3, 1, 0}, "_hwcf");
  Value init =
      transposeValue(rewriter, loc, conv.getDpsInits()[0], toNhwc, "");
  auto nhwc = linalg::Conv2DNhwcHwcfOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{x, w},
      ValueRange{init}, conv.getStrides(), conv.getDilations());
  Value result = transposeValue(rewriter, loc, nhwc.getResult(0), toNchw, "");
  back = result.getDefiningOp();
  rewriter.replaceOp(conv, result);
  // An accumulator initialised by a broadcast (a bias) that nothing else
  // reads: broadcast into NHWC directly.
  if (auto copy = init.getDefiningOp<linalg::GenericOp>())
    if (auto producer = copy.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>())
      if (isBroadcast(producer) && producer->hasOneUse()) {
        OpBuilder::InsertionGuard guard(rewriter);
        fuseProducerInto(rewriter, copy);
      }
  return cast<linalg::LinalgOp>(nhwc.getOperation());
}

/// Fuses `back` (an all-parallel generic) into each generic that reads it
/// where upstream elementwise fusion can; erases it once it has no use.
/// The uses are looked up again after each fusion: a fused consumer is
/// erased with its operands, and it may have read `back` twice.
void fuseIntoConsumers(RewriterBase &rewriter, linalg::GenericOp back) {
  for (bool fused = true; fused;) {
    fused = false;
    for (OpOperand &use : back->getResult(0).getUses())
      if ((fused = fuseAtUse(rewriter, &use)))
        break;
  }
  if (back->use_empty())
    rewriter.eraseOp(back);
}

/// Whether the transpose of `producer`'s NCHW result to NHWC can take
/// `producer` in: an all-parallel generic of one result whose full-rank
/// inputs are all NHWC data read in NCHW order (an epilogue that took in a
/// pixel-row convolution's transpose back), the rest broadcasts (batch
/// norm's per-channel constants). Fused, it reads them in their own order;
/// an NCHW input (a residual, a pooling's window) would be read across.
bool takesNhwcInputsOnly(linalg::GenericOp producer) {
  if (!isElementwiseInto(producer))
    return false;
  unsigned rank = producer.getNumLoops();
  AffineMap nhwc =
      AffineMap::getPermutationMap(ArrayRef<int64_t>(kToNhwc),
                                   producer.getContext());
  bool any = false;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    AffineMap map = producer.getMatchingIndexingMap(in);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    if (map.getNumResults() < rank)
      continue;
    if (rank != 4 || map != nhwc)
      return false;
    any = true;
  }
  return any;
}

/// `v` permuted by `perm` (result i = v[perm[i]]).
template <typename T>
SmallVector<T> permuted(ArrayRef<T> v, ArrayRef<int64_t> perm) {
  SmallVector<T> out;
  for (int64_t p : perm)
    out.push_back(v[p]);
  return out;
}

/// An NCHW max or sum pooling as its NHWC twin (the window as it is) on its
/// input and init transposed to NHWC (a fill as a fill). Returns the new
/// pooling's result; the input's transpose goes to `inputTranspose`.
Value poolingToNhwc(RewriterBase &rewriter, linalg::LinalgOp pool,
                    linalg::GenericOp &inputTranspose) {
  Location loc = pool.getLoc();
  rewriter.setInsertionPoint(pool);
  Value x = transposeValue(rewriter, loc, pool.getDpsInputs()[0], kToNhwc, "");
  Value init =
      transposeValue(rewriter, loc, pool.getDpsInits()[0], kToNhwc, "");
  Value window = pool.getDpsInputs()[1];
  Value result;
  if (auto max = dyn_cast<linalg::PoolingNchwMaxOp>(pool.getOperation()))
    result = linalg::PoolingNhwcMaxOp::create(
                 rewriter, loc, TypeRange{init.getType()}, ValueRange{x, window},
                 ValueRange{init}, max.getStrides(), max.getDilations())
                 .getResult(0);
  else {
    auto sum = cast<linalg::PoolingNchwSumOp>(pool.getOperation());
    result = linalg::PoolingNhwcSumOp::create(
                 rewriter, loc, TypeRange{init.getType()}, ValueRange{x, window},
                 ValueRange{init}, sum.getStrides(), sum.getDilations())
                 .getResult(0);
  }
  inputTranspose = x.getDefiningOp<linalg::GenericOp>();
  return result;
}

/// A value as padded from `src`: by a constant `tensor.pad` of static
/// amounts, by an `insert_slice` with unit strides into a filled empty
/// tensor (the form imported models reach the pass in), or not at all.
struct Padding {
  Value src;
  tensor::PadOp pad;
  tensor::InsertSliceOp insert;
  linalg::FillOp fill;
};

/// `v` as a padding of a value that nothing else reads, `v` itself read
/// once; none where it is padded some other way.
std::optional<Padding> matchPadding(Value v) {
  Padding p{v, v.getDefiningOp<tensor::PadOp>(),
            v.getDefiningOp<tensor::InsertSliceOp>(), {}};
  if (p.pad) {
    if (!p.pad.getConstantPaddingValue() || !p.pad.getLow().empty() ||
        !p.pad.getHigh().empty())
      return std::nullopt;
    p.src = p.pad.getSource();
  } else if (p.insert) {
    p.fill = p.insert.getDest().getDefiningOp<linalg::FillOp>();
    if (!p.fill || !p.fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
        !p.insert.hasUnitStride() || !p.insert.getOffsets().empty() ||
        p.insert.getSourceType().getRank() != p.insert.getType().getRank())
      return std::nullopt;
    p.src = p.insert.getSource();
  }
  if (!v.hasOneUse() || !p.src.hasOneUse())
    return std::nullopt;
  return p;
}

/// The NCHW max or sum pooling that produces `v`, if any.
linalg::LinalgOp nchwPooling(Value v) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op))
    return {};
  return cast<linalg::LinalgOp>(op);
}

/// Whether a transpose of `v` to NHWC can be taken into what produces it:
/// `v` is (a padding of) an epilogue that reads NHWC data only
/// (`takesNhwcInputsOnly`), or of an NCHW pooling of such a value.
bool nhwcBehind(Value v) {
  std::optional<Padding> p = matchPadding(v);
  if (!p)
    return false;
  if (linalg::LinalgOp pool = nchwPooling(p->src))
    return nhwcBehind(pool.getDpsInputs()[0]);
  auto producer = p->src.getDefiningOp<linalg::GenericOp>();
  return producer && takesNhwcInputsOnly(producer);
}

/// A pixel-row convolution's input transpose (NCHW to NHWC, `transpose`)
/// where `nhwcBehind` its input: the padding moves after the transpose
/// (amounts permuted); an epilogue goes into the transpose, so that it
/// writes NHWC (reading the previous convolution's NHWC result in its own
/// order) and the copy is gone; a pooling becomes an NHWC one whose own
/// input transpose is then taken in the same way. The second convolution
/// of a ResNet block and VGG's convolutions after the first two take their
/// input so.
void fuseInputTranspose(RewriterBase &rewriter, linalg::GenericOp transpose) {
  Value in = transpose.getDpsInputs()[0];
  if (!nhwcBehind(in))
    return;
  Padding p = *matchPadding(in);
  Location loc = transpose.getLoc();
  linalg::LinalgOp pool = nchwPooling(p.src);
  linalg::GenericOp poolTranspose;
  Value t; // `p.src` in NHWC
  if (pool) {
    t = poolingToNhwc(rewriter, pool, poolTranspose);
  } else {
    rewriter.setInsertionPoint(transpose);
    t = transposeValue(rewriter, loc, p.src, kToNhwc, "");
  }
  rewriter.setInsertionPoint(transpose);
  Type type = transpose->getResult(0).getType();
  Value moved = t;
  if (p.pad) {
    moved = tensor::PadOp::create(
        rewriter, loc, type, t,
        permuted<OpFoldResult>(p.pad.getMixedLowPad(), kToNhwc),
        permuted<OpFoldResult>(p.pad.getMixedHighPad(), kToNhwc),
        p.pad.getConstantPaddingValue(), p.pad.getNofold());
  } else if (p.insert) {
    auto shaped = cast<RankedTensorType>(type);
    Value empty = tensor::EmptyOp::create(rewriter, loc, shaped.getShape(),
                                          shaped.getElementType());
    Value filled =
        linalg::FillOp::create(rewriter, loc, p.fill.getInputs()[0], empty)
            .getResult(0);
    moved = tensor::InsertSliceOp::create(
        rewriter, loc, t, filled,
        permuted<OpFoldResult>(p.insert.getMixedOffsets(), kToNhwc),
        permuted<OpFoldResult>(p.insert.getMixedSizes(), kToNhwc),
        permuted<OpFoldResult>(p.insert.getMixedStrides(), kToNhwc));
  }
  rewriter.replaceOp(transpose, moved);
  if (p.pad || p.insert)
    rewriter.eraseOp(in.getDefiningOp());
  if (p.fill && p.fill->use_empty())
    rewriter.eraseOp(p.fill);
  if (pool) {
    rewriter.eraseOp(pool);
    if (poolTranspose)
      fuseInputTranspose(rewriter, poolTranspose);
    return;
  }
  fuseProducerInto(rewriter, t.getDefiningOp<linalg::GenericOp>());
}

/// A 1-D convolution as the 2-D one of the same layout with a unit height
/// (conv_1d_ncw_fcw as conv_2d_nchw_fchw, conv_1d_nwc_wcf as
/// conv_2d_nhwc_hwcf, depthwise_conv_1d_{ncw_cw,nwc_wc} as
/// depthwise_conv_2d_{nchw_chw,nhwc_hwc}), its operands expanded by a unit
/// dimension and its result collapsed back: the rewrites of 2-D
/// convolutions (im2col and a matmul, windows unrolled) then apply, and
/// the analysis knows the op's kind. Static shapes only; returns the
/// collapse of the lifted result (null where it did not rewrite `op`).
tensor::CollapseShapeOp liftConv1D(RewriterBase &rewriter,
                                   linalg::LinalgOp op) {
  // Where the unit dimension goes in the input/output and in the filter.
  int64_t ioUnit, filterUnit;
  DenseIntElementsAttr strides, dilations;
  if (auto c = dyn_cast<linalg::Conv1DNcwFcwOp>(op.getOperation()))
    ioUnit = 2, filterUnit = 2, strides = c.getStrides(),
    dilations = c.getDilations();
  else if (auto c = dyn_cast<linalg::Conv1DNwcWcfOp>(op.getOperation()))
    ioUnit = 1, filterUnit = 0, strides = c.getStrides(),
    dilations = c.getDilations();
  else if (auto c = dyn_cast<linalg::DepthwiseConv1DNcwCwOp>(op.getOperation()))
    ioUnit = 2, filterUnit = 1, strides = c.getStrides(),
    dilations = c.getDilations();
  else if (auto c = dyn_cast<linalg::DepthwiseConv1DNwcWcOp>(op.getOperation()))
    ioUnit = 1, filterUnit = 0, strides = c.getStrides(),
    dilations = c.getDilations();
  else
    return {};
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !strides || !dilations)
    return {};
  for (Value v : {op.getDpsInputs()[0], op.getDpsInputs()[1],
                  op.getDpsInits()[0]}) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return {};
  }
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // `v` with a unit dimension inserted at `at`.
  auto expand = [&](Value v, int64_t at) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape.insert(shape.begin() + at, 1);
    SmallVector<ReassociationIndices> re;
    for (int64_t d = 0, e = t.getRank(); d < e; ++d) {
      ReassociationIndices group{d + (d >= at ? 1 : 0)};
      if (d == at)
        group.insert(group.begin(), d);
      else if (d == at - 1 && at == t.getRank())
        group.push_back(d + 1);
      re.push_back(group);
    }
    return tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, t.getElementType()), v,
        re);
  };
  Value x = expand(op.getDpsInputs()[0], ioUnit);
  Value w = expand(op.getDpsInputs()[1], filterUnit);
  Value init = expand(op.getDpsInits()[0], ioUnit);
  auto attr = [&](DenseIntElementsAttr a) {
    return rewriter.getI64VectorAttr({1, *a.getValues<int64_t>().begin()});
  };
  // Owned: a TypeRange or ValueRange of a braced list points into a
  // temporary that is gone after its statement.
  SmallVector<Type> types{init.getType()};
  SmallVector<Value> ins{x, w}, outs{init};
  Operation *lifted;
  if (isa<linalg::Conv1DNcwFcwOp>(op.getOperation()))
    lifted = linalg::Conv2DNchwFchwOp::create(rewriter, loc, types, ins, outs,
                                              attr(strides), attr(dilations));
  else if (isa<linalg::Conv1DNwcWcfOp>(op.getOperation()))
    lifted = linalg::Conv2DNhwcHwcfOp::create(rewriter, loc, types, ins, outs,
                                              attr(strides), attr(dilations));
  else if (isa<linalg::DepthwiseConv1DNcwCwOp>(op.getOperation()))
    lifted = linalg::DepthwiseConv2DNchwChwOp::create(
        rewriter, loc, types, ins, outs, attr(strides), attr(dilations));
  else
    lifted = linalg::DepthwiseConv2DNhwcHwcOp::create(
        rewriter, loc, types, ins, outs, attr(strides), attr(dilations));
  // The collapse is the expansion's inverse: the init's reassociation.
  auto initExpand = init.getDefiningOp<tensor::ExpandShapeOp>();
  auto result = tensor::CollapseShapeOp::create(
      rewriter, loc, op->getResult(0).getType(), lifted->getResult(0),
      initExpand.getReassociationIndices());
  rewriter.replaceOp(op, result.getResult());
  return result;
}

/// The generics after lifted 1-D convolutions (`collapses`, their results
/// collapsed back), and the generics after those, computed with the unit
/// height too (upstream's fold of a reshape by expansion), so that no
/// reshape stands between a convolution's result and its epilogue, nor
/// between the epilogue and the next convolution: the transposes to and
/// from NHWC (`nchw-pixel-rows`) are then taken into the epilogue as for
/// 2-D convolutions. Only chains that start at a lifted result are
/// expanded.
LogicalResult expandAfterLifted(Operation *root,
                                ArrayRef<tensor::CollapseShapeOp> collapses) {
  struct Chain : RewriterBase::Listener {
    llvm::DenseSet<Operation *> collapses;
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      // The folds re-collapse the expanded generics' results.
      if (isa<tensor::CollapseShapeOp>(op))
        collapses.insert(op);
    }
    void notifyOperationErased(Operation *op) override {
      collapses.erase(op);
    }
  } chain;
  for (tensor::CollapseShapeOp c : collapses)
    chain.collapses.insert(c);
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateFoldReshapeOpsByExpansionPatterns(
      patterns, [&](OpOperand *operand) {
        auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
        return collapse && chain.collapses.contains(collapse) &&
               isa<linalg::GenericOp>(operand->getOwner());
      });
  GreedyRewriteConfig config;
  config.setListener(&chain);
  if (failed(applyPatternsGreedily(root, std::move(patterns), config)))
    return failure();
  // An expanded generic's result collapsed and expanded back (the next
  // convolution's input): the generic's result itself.
  SmallVector<tensor::ExpandShapeOp> roundTrips;
  root->walk([&](tensor::ExpandShapeOp expand) {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse && chain.collapses.contains(collapse) &&
        collapse.getSrcType() == expand.getResultType() &&
        collapse.getReassociationIndices() == expand.getReassociationIndices())
      roundTrips.push_back(expand);
  });
  for (tensor::ExpandShapeOp expand : roundTrips) {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    expand.getResult().replaceAllUsesWith(collapse.getSrc());
    expand.erase();
    if (collapse->use_empty())
      collapse.erase();
  }
  return success();
}

/// Channels of a pixel-row convolution's input are a multiple of this.
constexpr int64_t kPixelRowChannels = 8;

struct ConvToMatmulPass
    : public mlir::rl::impl::ConvToMatmulBase<ConvToMatmulPass> {
  using ConvToMatmulBase::ConvToMatmulBase;

  void runOnOperation() override {
    // The padding multiples are halved from the larger one down (padTo): a
    // value that is not a power of two would give multiples that the
    // scheduler's power-of-two tiles do not divide.
    for (auto [name, value] : {std::pair<StringRef, int64_t>{"pad-multiple",
                                                             padMultiple},
                               {"max-pad-multiple", maxPadMultiple},
                               {"min-reduction-pad-multiple",
                                minReductionPadMultiple}}) {
      if (value < 1 || !llvm::isPowerOf2_64(value)) {
        getOperation()->emitError()
            << "mlir-rl-conv-to-matmul: " << name << "=" << value
            << " is not a power of two (1 for no padding)";
        return signalPassFailure();
      }
    }
    // 1-D convolutions first, as 2-D ones with a unit height.
    {
      SmallVector<linalg::LinalgOp> oneD;
      getOperation()->walk([&](linalg::LinalgOp op) { oneD.push_back(op); });
      IRRewriter rewriter(&getContext());
      SmallVector<tensor::CollapseShapeOp> lifted;
      for (linalg::LinalgOp op : oneD)
        if (tensor::CollapseShapeOp c = liftConv1D(rewriter, op))
          lifted.push_back(c);
      if (!lifted.empty() &&
          failed(expandAfterLifted(getOperation(), lifted)))
        return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, ConvShape>> convs;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::optional<ConvShape> s = getConvShape(op);
      if (!s)
        return;
      int64_t macs = s->n * s->f * s->oh * s->ow * s->c * s->kh * s->kw;
      if (macs < minMacs)
        return;
      convs.push_back({op, *s});
    });
    // Ops erased by the fusions below (the input transposes recorded here
    // can be among them: one that reads a transpose back directly; a
    // recorded address reused by an op created after it was erased is
    // skipped too).
    struct ErasedOps : RewriterBase::Listener {
      llvm::DenseSet<Operation *> ops;
      void notifyOperationErased(Operation *op) override { ops.insert(op); }
    } erased;
    IRRewriter rewriter(&getContext(), &erased);
    // The transposes of pixel-row convolutions' results back to NCHW.
    SmallVector<linalg::GenericOp> backToNchw, inputToNhwc;
    if (nchwPixelRows) {
      for (auto &[op, shape] : convs) {
        // Channels in whole vectors: the pixel rows' copies move runs of C
        // elements (an RGB image's 3 channels stay NCHW). A 1x1 stride-1
        // convolution needs no im2col copy in NCHW (the input is the
        // matmul's B as it is): the transposes would only add work.
        auto nchw = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
        if (!nchw || shape.c % kPixelRowChannels != 0 || isPointwise(shape))
          continue;
        Operation *in = nullptr, *back = nullptr;
        op = transposeToNhwc(rewriter, nchw, in, back);
        if (auto generic = dyn_cast<linalg::GenericOp>(back))
          backToNchw.push_back(generic);
        if (auto generic = dyn_cast_or_null<linalg::GenericOp>(in))
          inputToNhwc.push_back(generic);
        std::optional<ConvShape> s = getConvShape(op);
        if (!s) {
          op->emitError("mlir-rl-conv-to-matmul: the NHWC form of an NCHW "
                        "convolution (nchw-pixel-rows) is not one it rewrites");
          return signalPassFailure();
        }
        shape = *s;
      }
    }
    // Every recorded transpose exists now; an op erased before may have
    // left its address to one of them: only erasures from here on count.
    erased.ops.clear();
    llvm::SmallPtrSet<Operation *, 16> matmuls;
    for (auto &[op, shape] : convs) {
      FailureOr<Operation *> matmul =
          useShiftedMatmuls(op, shape, shiftedMinBytes, shiftedMaxFilters)
              ? rewriteConvAsShiftedMatmuls(rewriter, op, shape)
              : rewriteConv(rewriter, op, shape, padMultiple, maxPadMultiple,
                            std::max<int64_t>(1, minReductionPadMultiple),
                            maxTapCopies);
      if (failed(matmul))
        return signalPassFailure();
      matmuls.insert(*matmul);
    }
    if (matmuls.empty())
      return;
    // A transpose back to NCHW goes into its elementwise consumers (batch
    // norm, relu, a residual add), which then read the matmul's result
    // through a permuted map and can take it into their tiles.
    for (linalg::GenericOp back : backToNchw)
      fuseIntoConsumers(rewriter, back);
    // Then the next convolution's input transpose takes such an epilogue
    // in where nothing else reads it: NHWC from one convolution to the next.
    if (nhwcBetweenConvs)
      for (linalg::GenericOp transpose : inputToNhwc)
        if (!erased.ops.contains(transpose))
          fuseInputTranspose(rewriter, transpose);
    // The generics that consume a convolution (batch norm, bias, relu) are
    // collapsed to the matmul's shape, so that the scheduler can fuse the
    // matmul into their tiles (the expand_shape between them would stop it).
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        patterns, [&](OpOperand *operand) {
          auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
          return expand && isa<linalg::GenericOp>(operand->getOwner()) &&
                 matmuls.contains(expand.getSrc().getDefiningOp());
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};


} // namespace
