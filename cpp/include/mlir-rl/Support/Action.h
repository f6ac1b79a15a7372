//===- Action.h - The vocabulary of schedules -------------------*- C++ -*-===//
//
// Action kinds (from ActionKinds.def), one action, one decision step, and the
// schedule state of one op. Header-only and free of MLIR IR: the analysis
// (features record the action history), the action space (masks, decoding,
// the textual grammar), the transforms and the Python bindings all speak it.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_SUPPORT_ACTION_H
#define MLIR_RL_SUPPORT_ACTION_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::rl {

/// What an action's parameter list holds.
enum class ActionParams { TileSizes, Permutation, None };

/// Properties of an action kind (bit flags of ActionKindInfo::flags).
enum ActionFlag : unsigned {
  /// Tiles parallel loops only (0 on reductions).
  kParallelOnly = 1u << 0,
  /// Needs at least one loop split: a tile size above 0 and below the
  /// loop's extent. A parallelization of one iteration is none, and a
  /// single-iteration scf.forall whose fused producer's result is used later
  /// is miscompiled by upstream canonicalization (llvm-project#222143).
  /// Decoding skips a choice that splits no loop and takes the next most
  /// likely kind.
  kNeedsSplit = 1u << 1,
  /// Puts the op in an scf.forall: no further parallelization.
  kParallelizes = 1u << 2,
  /// Fuses the op's last producer into the forall.
  kFusesProducer = 1u << 3,
  /// Completes the op's schedule.
  kTerminal = 1u << 4,
};

enum class ActionKind {
#define ACTION_KIND(Enum, Mnemonic, Name, Params, Flags) Enum,
#include "mlir-rl/Support/ActionKinds.def"
};

struct ActionKindInfo {
  ActionKind kind;
  const char *mnemonic; // "T", "TP", ... (the schedule grammar)
  const char *name;     // "tiling", ...
  ActionParams params;
  unsigned flags;

  bool has(ActionFlag f) const { return (flags & f) != 0; }
  bool isTiled() const { return params == ActionParams::TileSizes; }
};

inline constexpr ActionKindInfo kActionKinds[] = {
#define ACTION_KIND(Enum, Mnemonic, Name, Params, Flags)                       \
  {ActionKind::Enum, Mnemonic, Name, ActionParams::Params, Flags},
#include "mlir-rl/Support/ActionKinds.def"
};

constexpr int kNumActionKinds =
    static_cast<int>(sizeof(kActionKinds) / sizeof(kActionKinds[0]));

/// Number of kinds with tile sizes (their rows of the tile mask and head).
constexpr int computeNumTiledKinds() {
  int n = 0;
  for (const ActionKindInfo &k : kActionKinds)
    n += k.params == ActionParams::TileSizes;
  return n;
}
constexpr int kNumTiledKinds = computeNumTiledKinds();

/// Tiled kinds come first, so a tiled kind's index is its tile-mask row.
constexpr bool tiledKindsComeFirst() {
  for (int i = 0; i < kNumActionKinds; ++i)
    if ((kActionKinds[i].params == ActionParams::TileSizes) != (i < kNumTiledKinds))
      return false;
  return true;
}
static_assert(tiledKindsComeFirst(), "ActionKinds.def: list tiled kinds first");

inline const ActionKindInfo &getActionKindInfo(ActionKind kind) {
  return kActionKinds[static_cast<int>(kind)];
}
inline const char *getActionMnemonic(ActionKind kind) {
  return getActionKindInfo(kind).mnemonic;
}
inline const char *getActionName(ActionKind kind) {
  return getActionKindInfo(kind).name;
}

/// One action on one op. `sizes` holds the tile sizes (tiled kinds) or the
/// permutation (interchange); empty otherwise.
struct Action {
  ActionKind kind = ActionKind::NoTransformation;
  std::vector<int64_t> sizes;

  const ActionKindInfo &info() const { return getActionKindInfo(kind); }
  bool isTiled() const { return info().isTiled(); }
  bool isTerminal() const { return info().has(kTerminal); }
  /// Textual form, e.g. "TP(32,64,0)", "I(1,0,2)", "V".
  std::string str() const {
    std::string s = info().mnemonic;
    if (info().params == ActionParams::None)
      return s;
    s += "(";
    for (size_t i = 0; i < sizes.size(); ++i)
      s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + ")";
  }
  bool operator==(const Action &o) const {
    return kind == o.kind && sizes == o.sizes;
  }
};

/// One decision of the policy or the environment: a whole action, or (while
/// an interchange is being chosen) one level pointer.
struct Step {
  bool isPointer = false;
  int64_t pointer = -1;
  Action action;

  std::string str() const {
    return isPointer ? "I-pointer(" + std::to_string(pointer) + ")"
                     : action.str();
  }
  bool operator==(const Step &o) const {
    return isPointer == o.isPointer &&
           (isPointer ? pointer == o.pointer : action == o.action);
  }
};

/// Which decision an op is waiting for.
enum class DecisionPhase {
  /// A transformation and its parameters.
  Transformation,
  /// The next interchange level pointer.
  InterchangePointer,
  /// None: the op's schedule is complete.
  Done,
};

/// What has been done to one op so far.
struct OpScheduleState {
  std::vector<Action> history;           // applied actions, at most tau
  std::vector<int64_t> pendingPointers;  // interchange under construction
  bool parallelized = false;             // TP or TF applied
  bool done = false;                     // terminal action or tau reached

  bool inInterchange() const { return !pendingPointers.empty(); }
  DecisionPhase getPhase() const {
    if (done)
      return DecisionPhase::Done;
    return inInterchange() ? DecisionPhase::InterchangePointer
                           : DecisionPhase::Transformation;
  }
};

/// The rules' choices (RuleChoices.def).
enum class RuleChoice {
#define RULE_CHOICE(Enum, Key, Name, Doc) Enum,
#include "mlir-rl/Support/RuleChoices.def"
};

struct RuleChoiceInfo {
  RuleChoice kind;
  const char *key;  // "pack", ... (the schedule grammar)
  const char *name; // "pack_rhs", ... (Python)
  const char *doc;
};

inline constexpr RuleChoiceInfo kRuleChoices[] = {
#define RULE_CHOICE(Enum, Key, Name, Doc) {RuleChoice::Enum, Key, Name, Doc},
#include "mlir-rl/Support/RuleChoices.def"
};

constexpr int kNumRuleChoices =
    static_cast<int>(sizeof(kRuleChoices) / sizeof(kRuleChoices[0]));

inline const RuleChoiceInfo &getRuleChoiceInfo(RuleChoice c) {
  return kRuleChoices[static_cast<int>(c)];
}

/// One op's choices beside its actions; an unset choice (-1) is the rule's
/// default.
struct RuleChoices {
  std::array<int64_t, kNumRuleChoices> values;
  RuleChoices() { values.fill(-1); }

  bool isSet(RuleChoice c) const { return values[static_cast<int>(c)] >= 0; }
  int64_t get(RuleChoice c) const { return values[static_cast<int>(c)]; }
  /// The value, or `otherwise` when unset.
  int64_t getOr(RuleChoice c, int64_t otherwise) const {
    return isSet(c) ? get(c) : otherwise;
  }
  void set(RuleChoice c, int64_t v) { values[static_cast<int>(c)] = v; }
  bool empty() const {
    for (int64_t v : values)
      if (v >= 0)
        return false;
    return true;
  }
  /// The set values of `o` replace these.
  void merge(const RuleChoices &o) {
    for (int i = 0; i < kNumRuleChoices; ++i)
      if (o.values[i] >= 0)
        values[i] = o.values[i];
  }
  /// "{pack=0,rt=4}" (the set choices, in the table's order); "" when none.
  std::string str() const {
    std::string s;
    for (int i = 0; i < kNumRuleChoices; ++i)
      if (values[i] >= 0)
        s += std::string(s.empty() ? "{" : ",") + kRuleChoices[i].key + "=" +
             std::to_string(values[i]);
    return s.empty() ? s : s + "}";
  }
  bool operator==(const RuleChoices &o) const { return values == o.values; }
  bool operator!=(const RuleChoices &o) const { return !(*this == o); }
};

/// The values each choice may take for one op (empty: the choice is not
/// offered); the last value listed is the rule's default.
using RuleChoiceMask = std::array<std::vector<int64_t>, kNumRuleChoices>;

} // namespace mlir::rl

#endif // MLIR_RL_SUPPORT_ACTION_H
