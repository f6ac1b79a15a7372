//===- Lowering.h - The lowering to LLVM + OpenMP, defined once -*- C++ -*-===//
#ifndef MLIR_RL_TRANSFORMS_LOWERING_H
#define MLIR_RL_TRANSFORMS_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::rl {

/// The version of the lowering's own passes (mlir-rl-lower-vectors, ...):
/// bumped when one of them changes the code it emits, so that measurements
/// keyed by the lowering (the tuning database) are not reused across it.
constexpr const char kLoweringVersion[] = "2026-11-25";

/// The lowering pipeline as text (also registered as `mlir-rl-lower`):
/// transform IR stripped, pack/unpack lowered, vector lowering,
/// bufferization (input that frees its own buffers accepted), scf.forall ->
/// OpenMP, LLVM conversions.
const std::string &getLoweringPipeline();

/// Adds the lowering pipeline to `pm` (anchored on builtin.module).
LogicalResult buildLoweringPipeline(OpPassManager &pm);

/// Lowers `module` in place to the LLVM dialect. Marks public functions with
/// `llvm.emit_c_interface` first so that they can be called from C.
LogicalResult lowerToLLVM(ModuleOp module, std::string &error);

/// Parses `text` (a pipeline anchored on builtin.module, as
/// getLoweringPipeline's) into `pm`; `what` names it in the error printed
/// to stderr when it does not parse.
LogicalResult buildPipelineFromText(OpPassManager &pm, StringRef text,
                                    StringRef what);

/// Runs `pm` on `module`; error diagnostics (and their notes) are collected
/// into `error`, followed by "the `what` pipeline failed".
LogicalResult runWithDiagnostics(PassManager &pm, ModuleOp module,
                                 std::string &error, StringRef what);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_LOWERING_H
