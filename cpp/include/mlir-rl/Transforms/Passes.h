//===- Passes.h - mlir-rl passes --------------------------------*- C++ -*-===//
#ifndef MLIR_RL_TRANSFORMS_PASSES_H
#define MLIR_RL_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rl {

// Every pass of Passes.td. linalg-rl-schedule and mlir-rl-strip-op-ids are
// defined in MlirRLPasses (Pipeline/LinalgRlSchedulePass.cpp), the others
// in MlirRLTransforms.
#define GEN_PASS_DECL
#include "mlir-rl/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mlir-rl/Transforms/Passes.h.inc"

/// Registers the passes above that MlirRLTransforms defines (all but
/// linalg-rl-schedule and mlir-rl-strip-op-ids, MlirRLPasses') and the
/// `mlir-rl-lower` pipeline, once: what the pipelines this library builds
/// from text (the lowering, the front end) name. Every pass is registered
/// by registerMlirRlPassesAndPipelines (mlir-rl/Pipeline/Registration.h).
void registerTransformsPassesAndPipelines();

/// Patterns that rewrite linalg ops of AggregatedOpInterface on tensors
/// (linalg.softmax) as the linalg ops they stand for (a max, an exp, a sum,
/// a division: generics the rules and the policy schedule, and that lower).
void populateDecomposeAggregatesPatterns(RewritePatternSet &patterns);

/// Registers every upstream pass and registerTransformsPassesAndPipelines'
/// passes, once: before this library runs a pipeline of its own
/// (lowerToLLVM, getPassManagerRunner).
void registerTransformsAndUpstreamPassesOnce();

/// Gives every linalg op whose init is a tensor.empty used elsewhere too a
/// tensor.empty of its own (cse ties equal ones together); returns whether
/// it changed anything. Tiled fusion needs it: upstream's
/// fuse_into_containing_op, and the in-process fusion that mirrors it,
/// write a producer whose destination is a forall's shared output into
/// that output. The pass mlir-rl-untie-empties; Scheduler::apply runs it
/// before its first transformation.
bool untieEmptyInits(Operation *root);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_PASSES_H
