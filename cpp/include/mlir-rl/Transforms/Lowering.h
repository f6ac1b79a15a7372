//===- Lowering.h - The lowering to LLVM + OpenMP, defined once -*- C++ -*-===//
#ifndef MLIR_RL_TRANSFORMS_LOWERING_H
#define MLIR_RL_TRANSFORMS_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <utility>
#include <vector>

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

/// The front end for imported IR as text (also registered as
/// `mlir-rl-prepare`): elementwise fusion, canonicalization, CSE,
/// convolutions as im2col + matmul, windows unrolled, one init per consumer,
/// odd extents padded to full tiles. Run before scheduling.
const std::string &getPreparePipeline();

/// Adds the prepare pipeline to `pm` (anchored on builtin.module).
LogicalResult buildPreparePipeline(OpPassManager &pm);

/// Runs the prepare pipeline on `module` in place.
LogicalResult prepareModule(ModuleOp module, std::string &error);

/// A pass of the policy's front end: name and options, run on each
/// func.func, as linalg-rl-schedule runs it and as dump-schedule's script
/// replays it.
struct PassStep {
  std::string name;
  std::vector<std::pair<std::string, bool>> options;
  std::vector<std::pair<std::string, int64_t>> intOptions;
};
/// The passes that put a module's windowed ops (2-D convolutions, poolings,
/// NCHW depthwise convolutions) into the forms the policy schedules
/// (rewrite-windows), in order.
const std::vector<PassStep> &getPolicyWindowSteps();
/// Whether `module` has an op that getPolicyWindowSteps rewrites.
bool hasPolicyWindowOps(ModuleOp module);
/// The pass that pads odd extents to full tiles (pad-to-tiles).
const std::vector<PassStep> &getPadToTilesSteps();
const std::vector<PassStep> &getFlattenElementwiseSteps();
/// Adds `steps` to `pm` (anchored on builtin.module).
LogicalResult buildPolicyStepsPipeline(OpPassManager &pm,
                                       ArrayRef<PassStep> steps);

/// What linalg-rl-schedule does before it asks the policy.
struct PolicyFrontEndOptions {
  bool rewriteWindows = true;
  bool padToTiles = true;
  /// mlir-rl-flatten-elementwise, last (for the copies' rule: off where the
  /// policy decides every op).
  bool flattenElementwise = false;
};
/// Runs the policy's front end on `module`: the window steps where it has
/// windowed ops, then the padding where it has ops to pad. `run` runs a
/// pipeline on `module` (a pass's runPipeline); `ran` gets the steps that
/// ran, in order (dump-schedule's prelude). Fails with `error` set.
LogicalResult
applyPolicyFrontEnd(ModuleOp module, const PolicyFrontEndOptions &options,
                    function_ref<LogicalResult(OpPassManager &)> run,
                    std::vector<PassStep> &ran, std::string &error);
/// The same, with a pass manager of its own (outside a pass).
LogicalResult applyPolicyFrontEnd(ModuleOp module,
                                  const PolicyFrontEndOptions &options,
                                  std::vector<PassStep> &ran,
                                  std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_LOWERING_H
