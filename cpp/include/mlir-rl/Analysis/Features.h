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
#ifndef MLIR_RL_ANALYSIS_FEATURES_H
#define MLIR_RL_ANALYSIS_FEATURES_H

#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Support/Action.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <vector>

namespace mlir::rl {

/// Features of one op in its current form, with its schedule state. The
/// vectorization bit is the legality config's vectorization precondition.
std::vector<float> computeOpFeatures(linalg::LinalgOp op,
                                     const OpScheduleState &state,
                                     const FeatureLayout &layout,
                                     const LegalityConfig &legality);

/// Arithmetic operations per iteration of `op` (the body's ops that the
/// features count as arithmetic: add/sub, mul, div/rem, math functions,
/// max/min/compare/select; not constants, casts or the yield): a matmul's
/// 2. Times the iteration space, its floating-point (or integer) work.
int64_t countArithmeticPerIteration(linalg::LinalgOp op);

} // namespace mlir::rl

#endif // MLIR_RL_ANALYSIS_FEATURES_H
