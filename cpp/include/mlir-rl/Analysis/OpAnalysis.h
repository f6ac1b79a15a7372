//===- OpAnalysis.h - What a linalg op is, structurally ---------*- C++ -*-===//
//
// Facts about one linalg op that the features, the legality and the
// transforms share: its kind (through the linalg interfaces, never its
// name), its loop bounds, whether the layout can describe it, its access
// functions as linear forms, and the windows of 2-D convolutions and pools.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ANALYSIS_OPANALYSIS_H
#define MLIR_RL_ANALYSIS_OPANALYSIS_H

#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/AffineExpr.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::rl {

/// Classifies a linalg op for the one-hot: contractions (batch or not) and
/// convolutions (plain, depthwise, pooling) by the linalg interfaces'
/// dimension inference, elementwise additions by their body, fills by the
/// fill interface; other `linalg.generic` ops are Generic, other named ops
/// Unknown.
OpKind classifyOp(linalg::LinalgOp op);

/// Succeeds when the op can be scheduled: pure tensor semantics, static
/// shapes, affine linear indexing maps, and within the layout's limits.
/// Otherwise `reason` says why (used in the remark of skipped ops).
LogicalResult checkSupported(linalg::LinalgOp op, const FeatureLayout &layout,
                             std::string &reason);

/// Static loop upper bounds (ShapedType::kDynamic where unknown).
SmallVector<int64_t> getLoopBounds(linalg::LinalgOp op);

/// `expr` = sum(row[d] * d) + row.back(): adds `scale` times its
/// coefficients to `row` (numDims + 1 entries). Fails on non-linear
/// expressions (mod, floordiv, products of dims, symbols).
LogicalResult accumulateLinear(AffineExpr expr, int64_t scale,
                               MutableArrayRef<int64_t> row);

/// Loop extents of a 2-D convolution or pooling that upstream
/// `structured.decompose` rewrites to 1-D: {output H, window H} and
/// {output W, window W}. std::nullopt for every other op.
struct WindowExtents {
  std::array<int64_t, 2> height; // output, window
  std::array<int64_t, 2> width;  // output, window
};
std::optional<WindowExtents> getDecomposableWindow(linalg::LinalgOp op);

} // namespace mlir::rl

#endif // MLIR_RL_ANALYSIS_OPANALYSIS_H
