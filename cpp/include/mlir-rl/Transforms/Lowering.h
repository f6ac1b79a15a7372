//===- Lowering.h - The lowering to LLVM + OpenMP, defined once -*- C++ -*-===//
#ifndef MLIR_RL_TRANSFORMS_LOWERING_H
#define MLIR_RL_TRANSFORMS_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::rl {

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

/// The front end for imported IR as text (also registered as
/// `mlir-rl-prepare`): elementwise fusion, canonicalization, CSE, one init
/// per consumer. Run before scheduling.
const std::string &getPreparePipeline();

/// Adds the prepare pipeline to `pm` (anchored on builtin.module).
LogicalResult buildPreparePipeline(OpPassManager &pm);

/// Runs the prepare pipeline on `module` in place.
LogicalResult prepareModule(ModuleOp module, std::string &error);

/// The passes that put a module's windowed ops (2-D convolutions, poolings,
/// NCHW depthwise convolutions) into the forms the policy schedules, before
/// linalg-rl-schedule asks it (rewrite-windows): pass name and options, in
/// order, run on each func.func, as the pass runs them and as
/// dump-schedule's script replays them.
struct PassStep {
  std::string name;
  std::vector<std::pair<std::string, bool>> options;
};
const std::vector<PassStep> &getPolicyWindowSteps();
/// Whether `module` has an op that getPolicyWindowSteps rewrites.
bool hasPolicyWindowOps(ModuleOp module);
/// Adds getPolicyWindowSteps to `pm` (anchored on builtin.module).
LogicalResult buildPolicyWindowPipeline(OpPassManager &pm);
/// Runs them on `module` in place.
LogicalResult rewriteWindowsForPolicy(ModuleOp module, std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_LOWERING_H
