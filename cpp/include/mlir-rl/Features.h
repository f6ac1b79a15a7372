//===- Features.h - Native features of linalg ops ---------------*- C++ -*-===//
//
// The observation of the paper (IV-B), computed from the IR:
//   op kind one-hot | log2(1 + loop upper bound) per loop | iterator kind per
//   loop (+1 parallel, -1 reduction) | vectorization precondition | access
//   matrices (operand x result dim x (loops + constant)) | arithmetic op counts
//   | action history (tiling tau x N x M one-hot, interchange tau x N x N, kind
//   tau x A).
// The offsets of each group come from FeatureLayout.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_FEATURES_H
#define MLIR_RL_FEATURES_H

#include "mlir-rl/ActionSpace.h"
#include "mlir-rl/FeatureLayout.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <string>
#include <vector>

namespace mlir::rl {

/// Classifies a linalg op for the one-hot.
OpKind classifyOp(linalg::LinalgOp op);

/// Succeeds when the op can be scheduled: pure tensor semantics, static
/// shapes, affine indexing maps, and within the layout's limits. Otherwise
/// `reason` says why (used in the remark of skipped ops).
LogicalResult checkSupported(linalg::LinalgOp op, const FeatureLayout &layout,
                             std::string &reason);

/// Static loop upper bounds (ShapedType::kDynamic where unknown).
SmallVector<int64_t> getLoopBounds(linalg::LinalgOp op);

/// Features of one op in its current form, with its schedule state.
std::vector<float> computeOpFeatures(linalg::LinalgOp op,
                                     const OpScheduleState &state,
                                     const FeatureLayout &layout);

} // namespace mlir::rl

#endif // MLIR_RL_FEATURES_H
