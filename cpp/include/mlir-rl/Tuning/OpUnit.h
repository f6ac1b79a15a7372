//===- OpUnit.h - One op as a standalone function ---------------*- C++ -*-===//
//
// What compile-time tuning measures: an op of the module being scheduled,
// cut out as a function of its own. The unit holds the op, the producer
// tiled fusion would fuse into it (when there is one), and the fills that
// initialise them; every other value they use becomes an argument (seeded
// random inputs when measured), except scalar and splat constants and
// tensor.empty, which are copied. The unit's printed text is its canonical
// signature: the op with its shapes and its fused producers.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_OPUNIT_H
#define MLIR_RL_TUNING_OPUNIT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::rl {

class Scheduler;

/// The function name of a unit.
constexpr const char kOpUnitFunction[] = "mlir_rl_unit";

struct OpUnit {
  OwningOpRef<ModuleOp> module;
  /// The op's id in the unit (pre-order among the unit's linalg ops, as a
  /// Scheduler numbers them).
  int64_t rootId = -1;
  /// The unit printed without locations: the canonical signature's text.
  std::string text;
};

/// Cuts op `id` of `scheduler`'s module (tagged, as the scheduler keeps it)
/// out as a unit. Fails with `error` when a value the op uses cannot be an
/// argument (not a statically shaped tensor of f32, f64, i32 or i64), its
/// members are not in one block, or a consumer fused it into its tiles.
FailureOr<OpUnit> extractOpUnit(Scheduler &scheduler, int64_t id,
                                std::string &error);

/// Copied into a unit rather than passed in: no operands, no regions, and
/// cheap to print (scalars, splats, small tensors, tensor.empty).
bool isCopiedIntoUnit(Operation *def);

/// A type the measurement can feed with random values (an argument of a
/// unit): statically shaped tensors of f32, f64, i32, i64.
bool isUnitArgumentType(Type type);

/// Hex SHA-256 of `text` (the first `chars` characters).
std::string hashText(StringRef text, size_t chars = 32);

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_OPUNIT_H
