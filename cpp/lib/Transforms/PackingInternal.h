//===- PackingInternal.h - Shared by the packing files ----------*- C++ -*-===//
//
// Helpers that more than one of the files implementing Packing.h uses
// (PackRhs.cpp, CopyRules.cpp, Rescheduling.cpp); not part of the library's
// interface.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_LIB_TRANSFORMS_PACKINGINTERNAL_H
#define MLIR_RL_LIB_TRANSFORMS_PACKINGINTERNAL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"

namespace mlir::rl {

/// Whether `v` is an empty tensor, possibly through reshapes (pad-to-tiles
/// and im2col reach a matmul's accumulator as a collapse_shape of one).
/// Defined in PackRhs.cpp.
bool isEmptyThroughReshapes(Value v);

/// A linalg.fill of an empty tensor (possibly reshaped) whose result only
/// initialises one linalg op's output (an accumulator). Defined in
/// CopyRules.cpp.
bool isAccumulatorFill(linalg::LinalgOp op);

} // namespace mlir::rl

#endif // MLIR_RL_LIB_TRANSFORMS_PACKINGINTERNAL_H
