//===- Fusion.h - Fusing a producer into a consumer's scf.forall -*- C++ -*-===//
//
// The fusion step of tiled fusion (TF), for the two common shapes, with the
// TilingInterface directly; `transform.structured.fuse_into_containing_op`
// gives the same IR for them but prints both ops into a diagnostic first,
// which verifies the whole enclosing function (seconds on a 500-op model).
//
//   * The forall reads a slice of the producer's result:
//       %p = linalg.generic ... -> tensor<64x128xf32>
//       scf.forall ... {
//         %s = tensor.extract_slice %p[%i, %j] [16, 64] [1, 1]
//         %c = linalg.generic ins(%s ...)
//     becomes
//       scf.forall ... {
//         %s = linalg.generic ins(<slices of %p's operands>) -> tensor<16x64xf32>
//         %c = linalg.generic ins(%s ...)
//     (the producer's inits that are also the forall's become its shared
//     outputs).
//   * The producer initializes the forall's output (a fill before a
//     matmul): the producer is computed on the forall's slice of the output
//     and the forall takes the producer's own init.
//
// When a generic producer's result is also used after the forall, the forall
// gets one more shared output (the producer's init) holding the producer's
// tiles, and those uses take it, as the transform op does. Other shapes (a
// producer used more than once inside the forall, a producer initializing
// another forall first) are left to the transform op.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_FUSION_H
#define MLIR_RL_TRANSFORMS_FUSION_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rl {

enum class FusionShape {
  /// The forall extracts a slice of the producer's result.
  SliceOfResult,
  /// The producer's result is the forall's shared output.
  SharedOutput,
  /// Anything else (use fuse_into_containing_op).
  Other,
};

/// Which of the shapes above fusing `producer` into `forall` has.
FusionShape getFusionShape(Operation *producer, scf::ForallOp forall);

struct FusionResult {
  /// The tiled producer ops inside the forall.
  SmallVector<Operation *> fusedOps;
  /// The forall (a new one if it gained a result, the old one erased).
  scf::ForallOp forall;
};

/// Fuses `producer` into `forall` (a shape other than Other). Fails if the
/// producer cannot be tiled at the slice.
FailureOr<FusionResult>
fuseProducerIntoForall(RewriterBase &rewriter, Operation *producer,
                       scf::ForallOp forall);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_FUSION_H
