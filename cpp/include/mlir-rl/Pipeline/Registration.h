//===- Registration.h - Every mlir-rl pass registered -----------*- C++ -*-===//
//
// What the entry points (the plugin, mlir-rl-opt, mlir-rl-measure, the
// Python extension) call: MlirRLPasses, the library above all others,
// defines it. Code in the libraries below registers only what it needs
// (registerTransformsPassesAndPipelines in Transforms/Passes.h).
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_PIPELINE_REGISTRATION_H
#define MLIR_RL_PIPELINE_REGISTRATION_H

namespace mlir::rl {

/// Registers every mlir-rl pass (Transforms/Passes.td) and the
/// `mlir-rl-lower` pipeline (once).
void registerMlirRlPassesAndPipelines();

/// Registers every upstream pass too (for our own tools), once.
void registerAllPassesOnce();

} // namespace mlir::rl

#endif // MLIR_RL_PIPELINE_REGISTRATION_H
