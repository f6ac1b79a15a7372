//===- ScheduleBuilder.h - Actions as transform-dialect IR ------*- C++ -*-===//
//
// Builds each action as transform-dialect ops with the ops' C++ builders (no
// text is parsed). One function emits an action's ops on given handles; it
// serves both
//   * the in-process application: a small `@__transform_main(%root,
//     %target[, %producer])` whose handles are bound to the payload ops
//     directly (no matching, so its cost does not grow with the module), and
//   * the replayable script (`dump-schedule`): the op ids are tagged on the
//     original input, then each action finds its ops with
//     `transform.structured.match attributes{mlir_rl.op_id = N}` and emits
//     the same ops. It replays with
//     `mlir-opt -p 'builtin.module(transform-preload-library{...},transform-interpreter)'`.
//
// Example, `TP(32,64,0)` on op 1:
//
//   %op = transform.structured.match attributes{mlir_rl.op_id = 1 : i64} in %root
//   %tiled, %forall = transform.structured.tile_using_forall %op
//       tile_sizes [32, 64, 0] : (...) -> (...)
//   %id = transform.param.constant 1 : i64 -> !transform.param<i64>
//   transform.annotate %tiled "mlir_rl.op_id" = %id : ...
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_SCHEDULEBUILDER_H
#define MLIR_RL_TRANSFORMS_SCHEDULEBUILDER_H

#include "mlir-rl/Support/Action.h"
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::rl {

/// Name of the discardable attribute that identifies ops across transforms.
constexpr const char kOpIdAttrName[] = "mlir_rl.op_id";

/// Removes the `kOpIdAttrName` tags from `root` and the ops nested in it.
void removeOpIdTags(Operation *root);

/// One action as applied: what the transform IR needs to know.
struct AppliedAction {
  int64_t opId = 0;
  Action action;
  /// For tiled fusion: the producer fused into the consumer's scf.forall,
  /// and which operand of the consumer it defines.
  std::optional<int64_t> producerId;
  std::optional<unsigned> producerOperand;
  /// For vectorization: decompose a 2-D conv/pool into its 1-D form first.
  bool decompose = false;
  /// For vectorization: tile sizes applied first so that a contraction's
  /// accumulator fits the register file (getRegisterTile); empty: none.
  SmallVector<int64_t> registerTile;
  /// Where the action came from (Scheduler::setSource): policy,
  /// heuristic, random, explicit, a rule, the tuner, ...
  std::string source;
};

/// Emits the transform ops of `applied` at `b`'s insertion point, on the
/// handles `target` (the op) and, for tiled fusion, `producer`; the results
/// are re-tagged with their op ids. `root` is the handle DCE runs on after a
/// fusion when `withDeadCodeElimination` (the replay script; in-process the
/// Scheduler erases dead ops itself once the result verifies).
void buildActionTransforms(OpBuilder &b, Location loc,
                           const AppliedAction &applied, Value root,
                           Value target, Value producer,
                           bool withDeadCodeElimination);

/// A module with `@__transform_main(%root, %target)` applying one action to
/// a directly bound payload op. For tiled fusion it holds the tiling only:
/// the Scheduler fuses the producer itself (Fusion.h), or with
/// buildFusionModule for the shapes Fusion.h leaves to the transform op.
OwningOpRef<ModuleOp> buildActionModule(MLIRContext *ctx,
                                        const AppliedAction &applied);
/// `@__transform_main(%root, %producer, %forall)`: fuse_into_containing_op,
/// then the fused ops re-tagged with `producerId`.
OwningOpRef<ModuleOp> buildFusionModule(MLIRContext *ctx, int64_t producerId);

/// Applies a module of buildActionModule / buildFusionModule: %root bound to
/// `root` (the function), the other arguments to `operands`. On failure,
/// `error` holds the interpreter's diagnostics; the payload may be half
/// transformed (the Scheduler restores it).
LogicalResult applyTransformModule(ModuleOp transformModule, Operation *root,
                                   ArrayRef<Operation *> operands,
                                   std::string &error);

/// The replayable script of `actions` on a module with `numOps` linalg ops
/// (tagged in pre-order first, as the pass numbers them), printed with one
/// comment line per action. `prelude`: passes the pass ran on each
/// func.func before numbering the ops, replayed first with
/// transform.apply_registered_pass.
std::string printReplayScript(MLIRContext *ctx, int64_t numOps,
                              const std::vector<AppliedAction> &actions,
                              ArrayRef<PassStep> prelude = {});

/// Erases the ops nested in `root` that are trivially dead, and those that
/// become so, as `transform.apply_dce` does.
void eraseDeadOps(Operation *root);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_SCHEDULEBUILDER_H
