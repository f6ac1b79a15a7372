//===- ScheduleBuilder.h - Actions as transform-dialect IR ------*- C++ -*-===//
//
// Turns an action on a tagged op into transform-dialect IR (LLVM 22 syntax) and
// applies it with the transform interpreter. Ops are found by their
// `mlir_rl.op_id` attribute and re-tagged after each transformation, so that
// the same script text serves both the in-process application and the
// `dump-schedule` file replayed with `mlir-opt --transform-interpreter`.
//
// Example, `TP(32,64,0)` on op 1:
//
//   %op_0 = transform.structured.match attributes{mlir_rl.op_id = 1 : i64} in %root
//   %tiled_0, %forall_0 = transform.structured.tile_using_forall %op_0
//       tile_sizes [32, 64, 0] : (...) -> (...)
//   %id_0 = transform.param.constant 1 : i64 -> !transform.param<i64>
//   transform.annotate %tiled_0 "mlir_rl.op_id" = %id_0 : ...
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_SCHEDULEBUILDER_H
#define MLIR_RL_SCHEDULEBUILDER_H

#include "mlir-rl/ActionSpace.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::rl {

/// Name of the discardable attribute that identifies ops across transforms.
constexpr const char kOpIdAttrName[] = "mlir_rl.op_id";

/// Options of one action's transform IR.
struct ActionScriptOptions {
  int64_t opId = 0;
  /// For TF: the producer fused into the consumer's scf.forall.
  std::optional<int64_t> producerId;
  /// For V: decompose a 2-D conv/pool into its 1-D form first.
  bool decompose = false;
  /// Makes SSA names unique when several actions share one sequence.
  unsigned uniqueSuffix = 0;
};

/// The body (without the enclosing named sequence) of `action`, operating on
/// the handle `%root`. Empty for NT.
std::string buildActionScript(const Action &action,
                              const ActionScriptOptions &options);

/// Wraps sequence bodies into a module with `@__transform_main`, ready for
/// `--transform-interpreter`.
std::string wrapTransformScript(llvm::StringRef body);

/// The prologue of a replayable script: tags the `count` linalg ops of the
/// payload (in pre-order, as the pass numbers them) with their op ids.
std::string buildTaggingScript(int64_t count);

/// Parses `script` (a full module from wrapTransformScript) and applies it to
/// `payload`. On failure, `error` holds the interpreter's diagnostics; the
/// caller restores the payload (see Scheduler::apply).
LogicalResult applyTransformScript(Operation *payload, llvm::StringRef script,
                                   std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_SCHEDULEBUILDER_H
