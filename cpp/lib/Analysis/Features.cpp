//===- Features.cpp - Native features of linalg ops -----------------------===//
#include "mlir-rl/Analysis/Features.h"
#include "mlir-rl/Analysis/OpAnalysis.h"
#include "mlir-rl/Analysis/Preconditions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::rl {

static int classifyArith(Operation *op) {
  return llvm::TypeSwitch<Operation *, int>(op)
      .Case<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp>(
          [](auto) { return 0; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return 1; })
      .Case<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp,
            arith::RemSIOp, arith::RemUIOp>([](auto) { return 2; })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
            arith::MinUIOp, arith::CmpFOp, arith::CmpIOp, arith::SelectOp>(
          [](auto) { return 4; })
      .Default([](Operation *o) {
        if (isa<math::MathDialect>(o->getDialect()))
          return 3;
        return 5;
      });
}

int64_t countArithmeticPerIteration(linalg::LinalgOp op) {
  int64_t count = 0;
  for (Operation &inner : op->getRegion(0).front())
    if (classifyArith(&inner) != 5)
      ++count;
  return count;
}

std::vector<float> computeOpFeatures(linalg::LinalgOp op,
                                     const OpScheduleState &state,
                                     const FeatureLayout &layout,
                                     const LegalityConfig &legality) {
  std::vector<float> f(layout.getOpFeatureSize(), 0.0f);
  const int N = layout.maxLoops, M = layout.numTileSizes, D = layout.maxRank;
  f[layout.getOpKindOffset() + (int)classifyOp(op)] = 1.0f;

  SmallVector<int64_t> bounds = getLoopBounds(op);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int numLoops = std::min<int>(bounds.size(), N);
  for (int l = 0; l < numLoops; ++l) {
    int64_t b = bounds[l];
    f[layout.getLoopBoundsOffset() + l] =
        ShapedType::isDynamic(b) ? 0.0f : (float)std::log2(1.0 + (double)b);
    f[layout.getIteratorsOffset() + l] =
        iterators[l] == utils::IteratorType::parallel ? 1.0f : -1.0f;
  }
  f[layout.getVectorizableOffset()] =
      succeeded(vectorizationPrecondition(op, legality)) ? 1.0f : 0.0f;

  // Access matrices: operand x result dim x (loops + constant).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (int o = 0; o < (int)maps.size() && o < layout.maxOperands; ++o) {
    AffineMap map = maps[o];
    for (int r = 0; r < (int)map.getNumResults() && r < D; ++r) {
      SmallVector<int64_t> row(map.getNumDims() + 1, 0);
      if (failed(accumulateLinear(map.getResult(r), 1, row)))
        continue;
      int base = layout.getAccessOffset() + (o * D + r) * (N + 1);
      for (int l = 0; l < (int)map.getNumDims() && l < N; ++l)
        f[base + l] = (float)row[l];
      f[base + N] = (float)row.back();
    }
  }

  // Arithmetic op counts of the body.
  if (op->getNumRegions() == 1) {
    for (Operation &inner : op->getRegion(0).getOps()) {
      if (inner.hasTrait<OpTrait::IsTerminator>())
        continue;
      f[layout.getArithOffset() + classifyArith(&inner)] += 1.0f;
    }
  }

  // An interchange being chosen by level pointers shows as a partial
  // permutation in the next history slot, so each pointer decision sees the
  // earlier ones.
  int pendingSlot = state.history.size();
  if (state.inInterchange() && pendingSlot < layout.historyLength) {
    for (int l = 0; l < (int)state.pendingPointers.size() && l < N; ++l)
      if (state.pendingPointers[l] >= 0 && state.pendingPointers[l] < N)
        f[layout.getInterchangeHistoryOffset() + (pendingSlot * N + l) * N +
          state.pendingPointers[l]] = 1.0f;
  }

  // Action history.
  for (int t = 0; t < (int)state.history.size() && t < layout.historyLength;
       ++t) {
    const Action &a = state.history[t];
    f[layout.getActionHistoryOffset() + t * kNumActionKinds + (int)a.kind] =
        1.0f;
    if (a.isTiled()) {
      for (int l = 0; l < (int)a.sizes.size() && l < N; ++l) {
        int c = layout.getTileIndex(a.sizes[l]);
        if (c >= 0)
          f[layout.getTileHistoryOffset() + (t * N + l) * M + c] = 1.0f;
      }
    } else if (a.kind == ActionKind::Interchange) {
      for (int l = 0; l < (int)a.sizes.size() && l < N; ++l)
        if (a.sizes[l] >= 0 && a.sizes[l] < N)
          f[layout.getInterchangeHistoryOffset() + (t * N + l) * N +
            a.sizes[l]] = 1.0f;
    }
  }
  return f;
}

} // namespace mlir::rl
