//===- Passes.h - mlir-rl passes --------------------------------*- C++ -*-===//
#ifndef MLIR_RL_TRANSFORMS_PASSES_H
#define MLIR_RL_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rl {

#define GEN_PASS_DECL
#include "mlir-rl/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mlir-rl/Transforms/Passes.h.inc"

/// Registers the passes above and the `mlir-rl-lower` pipeline (once).
void registerMlirRlPassesAndPipelines();

/// Registers every upstream pass too (for our own tools), once.
void registerAllPassesOnce();

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_PASSES_H
