//===- ModuleCheck.h - The tuned module against the greedy one --*- C++ -*-===//
//
// Per-op tuning measures each op cut out on its own; a winner there is not
// always a winner in the module (an im2col copy that writes its own tensor
// in the unit writes a slice of a shared buffer in the module; caches hold
// other data). So after tuning, when the tuned schedule differs from the
// policy's greedy one, the whole function is measured both ways in the
// helper (with the model's weights; its arguments seeded), outputs checked against the function unscheduled, and the
// faster is kept. Search is then never slower than the pass without it on
// the function as a whole, and the tuned module's outputs are checked as a
// whole. The decision is remembered in the tuning database (op name
// "module"), so that a warm compile measures nothing.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_MODULECHECK_H
#define MLIR_RL_TUNING_MODULECHECK_H

#include "mlir-rl/Tuning/Tuner.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::rl {

/// The module's one function with linalg ops as a unit (renamed
/// kOpUnitFunction, op-id tags and locations removed), printed; with
/// `weightsAsArguments`, large constants become arguments (the signature
/// the database keys on), else they stay (what is measured). Fails with
/// `why` when the linalg ops are spread over several functions or a
/// constant cannot be an argument.
FailureOr<std::string> extractFunctionUnit(ModuleOp module,
                                           bool weightsAsArguments,
                                           std::string &why);

struct ModuleCheckResult {
  bool keepTuned = true;
  bool measured = false; // false: decided by the database
  std::string line;      // for the remark
};

/// Decides between the tuned and the greedy schedule of `before` (the
/// module as the scheduler took it; both schedules in its op ids, which
/// are the unit's). Measures only when
/// `options.search` > 0 and the database has no decision; fails with
/// `why` when it cannot decide (then the tuned schedule stays). The tuned
/// schedule stays when it is not slower than greedy by more than 1%; a win
/// by less than 1.2x is measured again in a second helper process, and the
/// tuned schedule stays only if it wins there too.
FailureOr<ModuleCheckResult>
checkTunedModule(ModuleOp before, StringRef greedySchedule,
                 StringRef tunedSchedule, const TuningOptions &options,
                 std::string &why);

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_MODULECHECK_H
