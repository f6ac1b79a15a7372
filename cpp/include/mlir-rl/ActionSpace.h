//===- ActionSpace.h - Actions, per-op schedule state, masks ----*- C++ -*-===//
//
// The multi-discrete action space of the paper (IV-A):
//
//   | kind | mnemonic | parameters                                   |
//   |------|----------|----------------------------------------------|
//   | 0    | T(..)    | one tile size per loop (0 = not tiled)       |
//   | 1    | TP(..)   | tile sizes, parallel loops only -> scf.forall|
//   | 2    | TF(..)   | as TP, then the last producer fused in       |
//   | 3    | I(..)    | a permutation, chosen by level pointers      |
//   | 4    | V        | vectorization (terminal)                     |
//   | 5    | NT       | no transformation (next op)                  |
//
// `computeActionMasks` is the one function that says which actions are legal
// now; the pass (explicit schedules, policy decoding) and the Python
// environment all use it.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ACTIONSPACE_H
#define MLIR_RL_ACTIONSPACE_H

#include "mlir-rl/FeatureLayout.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace mlir::rl {

/// One action on one op. `sizes` holds tile sizes (T, TP, TF) or the
/// permutation (I); empty for V and NT.
struct Action {
  ActionKind kind = ActionKind::NoTransformation;
  std::vector<int64_t> sizes;

  /// Textual form, e.g. "TP(32,64,0)", "I(1,0,2)", "V".
  std::string str() const;
  bool isTiled() const {
    return kind == ActionKind::Tiling ||
           kind == ActionKind::TiledParallelization ||
           kind == ActionKind::TiledFusion;
  }
};

/// Parses one action ("T(8,32,1)", "V", ...). Returns std::nullopt and sets
/// `error` on malformed text.
std::optional<Action> parseAction(llvm::StringRef text, std::string &error);

/// An explicit schedule: for each op id, its list of actions.
/// Grammar:  schedule := entry (';' entry)*
///           entry    := [INT ':'] action (WS action)*
/// An entry without an id applies to the first op of the traversal order
/// (the last consumer of the first function).
struct ExplicitSchedule {
  struct Entry {
    std::optional<int64_t> opId;
    std::vector<Action> actions;
  };
  std::vector<Entry> entries;
};
std::optional<ExplicitSchedule> parseSchedule(llvm::StringRef text,
                                              std::string &error);

/// What has been done to one op so far.
struct OpScheduleState {
  std::vector<Action> history;        // applied actions, at most tau
  std::vector<int64_t> pendingPointers; // interchange under construction
  bool parallelized = false;          // TP or TF applied, or inside a forall
  bool done = false;                  // V or NT taken, or tau reached

  /// True while interchange level pointers are being chosen.
  bool inInterchange() const { return !pendingPointers.empty(); }
};

/// Masks over the action space (1 = allowed).
struct ActionMasks {
  std::vector<uint8_t> kind;    // [kNumActionKinds]
  std::vector<uint8_t> tile;    // [3][N][M]: T, TP, TF
  std::vector<uint8_t> pointer; // [N]: next interchange level pointer

  bool isKindAllowed(ActionKind k) const { return kind[(int)k]; }
  bool isTileAllowed(ActionKind k, int loop, int candidate,
                     const FeatureLayout &layout) const;
  /// Flattened [kind, tile, pointer] as in FeatureLayout::getMaskSize().
  std::vector<uint8_t> flatten() const;
};

/// Whether `op` (in its current form) can be vectorized: the vectorizer's own
/// precondition (after conv/pool decomposition where that applies) and the
/// innermost extent bound. Used for the mask and as the guard of `V`.
LogicalResult vectorizationPrecondition(linalg::LinalgOp op,
                                        const FeatureLayout &layout,
                                        std::string *reason = nullptr);

/// Whether the named conv/pool `op` is decomposed to its 1-D form before
/// vectorization (true when its window height and output height are 1).
bool needsDecomposition(linalg::LinalgOp op);

/// Computes the legal actions for `op` given its state. `hasProducer` says
/// whether a linalg producer exists for tiled fusion.
ActionMasks computeActionMasks(linalg::LinalgOp op,
                               const OpScheduleState &state, bool hasProducer,
                               const FeatureLayout &layout);

/// Checks `action` against the masks; on failure `reason` says why in words.
LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const FeatureLayout &layout, std::string &reason);

/// Logits of the policy heads for one op (already masked or not: masked
/// choices are skipped either way).
struct PolicyLogits {
  std::vector<float> kind;    // [A]
  std::vector<float> tile;    // [3][N][M]
  std::vector<float> pointer; // [N]
};

/// One decoded decision: a whole action, or one interchange level pointer.
struct DecodedStep {
  bool isPointer = false;
  int64_t pointer = -1;
  Action action;
  std::string str() const {
    return isPointer ? "I-pointer(" + std::to_string(pointer) + ")"
                     : action.str();
  }
};

/// Masked decoding of the policy's logits into a legal step. Greedy (argmax)
/// when `rng` is null, else sampled from the softmax of the allowed choices.
/// Transformations are tried from the most to the least likely; one whose
/// decoded parameters are illegal (TP with every size 0) is skipped, so NT,
/// always legal, ends the search. Interchange is decoded one level pointer
/// at a time.
DecodedStep decodeStep(linalg::LinalgOp op, const OpScheduleState &state,
                       bool hasProducer, const ActionMasks &masks,
                       const PolicyLogits &logits, const FeatureLayout &layout,
                       std::mt19937_64 *rng = nullptr);

} // namespace mlir::rl

#endif // MLIR_RL_ACTIONSPACE_H
