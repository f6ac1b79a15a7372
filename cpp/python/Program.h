//===- Program.h - The bindings facade: a module under scheduling -*- C++ -*-===//
//
// What the Python extension reaches: standard types and the MLIR-free
// vocabulary of Support/Action.h only, so the nanobind translation unit
// (built with exceptions and RTTI) includes no MLIR IR headers. Everything
// is delegated to the Scheduler, Lowering and the JIT -- the code the pass
// runs.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_PYTHON_PROGRAM_H
#define MLIR_RL_PYTHON_PROGRAM_H

#include "mlir-rl/Runtime/Jit.h"
#include "mlir-rl/Support/Action.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mlir::rl {

/// One linalg op of the module and where its schedule stands.
struct OpInfo {
  int64_t id;
  std::string name;
  std::string kind;
  std::string function;
  bool supported;
  std::string reason;
  int64_t producer;
  std::vector<int64_t> consumers;
  std::vector<int64_t> loopBounds;
  std::vector<std::string> iterators;
  std::vector<Action> history;
  DecisionPhase phase;
  /// As printed by MLIR: one affine map per operand, and the operand types
  /// (what an IREE tuning spec matches on). Empty for ops already
  /// transformed.
  std::vector<std::string> indexingMaps;
  std::vector<std::string> operandTypes;
  /// Arithmetic operations of the op in its current form: iterations times
  /// countArithmeticPerIteration (0 for ops already transformed).
  int64_t flops = 0;
};

/// Legal choices now, in named parts (1 = allowed).
struct MaskInfo {
  DecisionPhase phase;
  std::vector<uint8_t> kind;    // [A]
  std::vector<uint8_t> tile;    // [T][N][M], T = tiled kinds
  std::vector<uint8_t> pointer; // [N]
  std::vector<uint8_t> unsplit; // [T][N][M]: choices that split no loop
};

/// Status codes of applying a decision (mirrors Scheduler's ApplyStatus).
enum class StepStatus { Applied = 0, Illegal = 1, Failed = 2 };

/// A decision taken by index (the environment's step).
struct StepOutcome {
  StepStatus status;
  Step step;                // what was executed
  std::vector<int> indices; // its indices [kind, tile per loop, pointer]
  bool fallback = false;    // the chosen indices were not legal as given
  std::string message;      // why it failed to apply, if it did
};

/// One decision of a demonstration: what the policy saw and chose.
struct DemonstrationStep {
  int64_t op;
  DecisionPhase phase; // which decision it was
  std::vector<float> observation;
  std::vector<uint8_t> mask;
  std::vector<uint8_t> unsplit;
  std::vector<int> indices;
};

/// Cost and outcome of scheduling with a policy.
struct PolicyRunInfo {
  int64_t ops = 0;
  int64_t inferences = 0;
  int64_t memoHits = 0; // inferences answered by the policy's memo
  double inferenceSeconds = 0;
  int64_t applications = 0;
  double applySeconds = 0;
  std::vector<std::string> warnings;
  /// Matmuls whose right-hand side was packed into panels, plain ones
  /// given a register tile, and why neither was done when there were
  /// candidates (reschedule).
  int64_t packed = 0;
  int64_t registerTiled = 0;
  /// Copies scheduled by rule (getCopySchedule).
  int64_t copiesByRule = 0;
  std::string notRescheduled;
};

/// The schedule pipeline's stages (SchedulePipeline.h), as the pass's
/// options of the same names. getDefaultPipelineSettings() holds the
/// pass's defaults: start from it.
struct PipelineSettings {
  // The front end.
  bool computeInF32;
  bool bf16Dot;
  bool fuseElementwise;
  bool rewriteWindows;
  bool padToTiles;
  bool flattenElementwise;
  // The post-decision rules.
  bool packRhs;
  int64_t minRowsToCopy;
  bool registerTiles;
  bool copiesByRule;
};
/// The pass's defaults (every stage on).
PipelineSettings getDefaultPipelineSettings();
/// Every stage off: decisions on the module as given, applied as decided.
PipelineSettings getNoPipelineSettings();

/// A policy given by the caller (e.g. a PyTorch actor): observation and flat
/// masks in, (kind, tile, pointer) logits out; false and `error` to stop.
using LogitsFn = std::function<bool(
    const std::vector<float> &observation, const std::vector<uint8_t> &mask,
    std::vector<float> &kind, std::vector<float> &tile,
    std::vector<float> &pointer, std::string &error)>;

/// Told each decoded step (op id, step) before it is applied.
using StepObserver = std::function<void(int64_t id, const Step &step)>;

class Program {
public:
  /// Parses and verifies `text`; returns null and sets `error` on failure.
  static std::unique_ptr<Program> parse(const std::string &text,
                                        const std::string &bufferName,
                                        std::string &error);
  ~Program();

  std::vector<OpInfo> getOps() const;
  std::vector<int64_t> getTraversalOrder() const;
  /// The next op to decide for (consumer to producer), -1 when all are done.
  int64_t getNextOp() const;
  int64_t getStepBudget() const;
  /// Whether `id` names an op of the module (else the getters below fail).
  bool hasOp(int64_t id) const;
  std::vector<float> getObservation(int64_t id);
  std::vector<float> getOpFeatures(int64_t id);
  MaskInfo getMasks(int64_t id);
  /// Op `id` cut out as a standalone function, as compile-time tuning
  /// measures it (Tuning/OpUnit.h): the op, the producer fused into it and
  /// their fills; other values become arguments. False and `error` where
  /// the op cannot be cut out.
  bool getOpUnit(int64_t id, std::string &out, std::string &error);

  /// Applies one action / level pointer / explicit schedule. `message`
  /// explains Illegal and Failed.
  StepStatus apply(int64_t id, const Action &action, std::string &message);
  StepStatus applyPointer(int64_t id, int64_t loop, std::string &message);
  StepStatus applySchedule(const std::string &schedule, std::string &message);
  /// The index-based step: decodeStep() of indicator logits, applied.
  StepOutcome step(int64_t id, const std::vector<int> &indices);
  /// decodeStep() of `logits` for op `id` now, not applied.
  bool decode(int64_t id, const std::vector<float> &kind,
              const std::vector<float> &tile,
              const std::vector<float> &pointer, bool sample, uint64_t seed,
              Step &step, std::string &error);
  /// The indices of a step.
  std::vector<int> encode(const Step &step) const;
  /// Replays `schedule` on this (unscheduled) program and returns every
  /// decision with what was seen before it; ops the schedule leaves
  /// incomplete get NT. False and `error` on an illegal action.
  bool demonstrate(const std::string &schedule,
                   std::vector<DemonstrationStep> &steps, std::string &error);

  /// Stage 1 of the pipeline: the front end's stages `settings` enables,
  /// before the first decision, once (op ids are renumbered; nothing
  /// happens once a decision was applied).
  bool runFrontEnd(const PipelineSettings &settings, std::string &error);
  /// Stage 3: the post-decision rules `settings` enables, after the
  /// decisions (once); copies of right-hand sides without a rule are
  /// decided by `decisions` (policy at `model`, heuristic, random).
  /// `info` gets what they did (packed, register_tiled, copies_by_rule,
  /// not_rescheduled). False only when the decision source cannot load.
  bool applyRules(const PipelineSettings &settings,
                  const std::string &decisions, const std::string &model,
                  const std::string &ortLib, PolicyRunInfo &info,
                  std::string &error);
  bool hasAppliedRules() const;
  /// The whole pipeline, as the pass runs it without a schedule: the
  /// front end, every op decided by `decisions` (policy, heuristic,
  /// random: DecisionSource.h; the ONNX policy at `model`, empty: the
  /// default), the rules. False and `error` on a model problem.
  bool scheduleWithPolicy(const std::string &model, const std::string &ortLib,
                          bool sample, uint64_t seed, PolicyRunInfo &info,
                          std::string &error, const StepObserver &onStep,
                          const PipelineSettings &settings,
                          const std::string &decisions = "policy");
  /// The same with a caller's policy.
  bool scheduleWithLogits(const LogitsFn &policy, bool sample, uint64_t seed,
                          PolicyRunInfo &info, std::string &error,
                          const StepObserver &onStep,
                          const PipelineSettings &settings);
  /// The ONNX policy's logits (kind, tile, pointer) for op `id` now.
  bool getPolicyLogits(const std::string &model, const std::string &ortLib,
                       int64_t id, std::vector<float> &kind,
                       std::vector<float> &tile, std::vector<float> &pointer,
                       std::string &error);

  /// The rules' choices (RuleChoices.def) op `id` offers: (key, values;
  /// the last is the rule's default) for each offered one.
  std::vector<std::pair<std::string, std::vector<int64_t>>>
  getRuleChoiceMask(int64_t id);
  /// Records rule choices (key, value) for op `id` (Scheduler::setChoices).
  StepStatus setRuleChoices(int64_t id,
                            const std::vector<std::pair<std::string, int64_t>> &choices,
                            std::string &message);
  /// Every op's rule choices so far: (op id, key, value).
  std::vector<std::tuple<int64_t, std::string, int64_t>> getRuleChoices() const;
  /// Draws every op's rule choices from its mask with `seed` (as
  /// decisions=random does), under the shipped rules.
  void drawRuleChoices(uint64_t seed);

  /// The trace: the passes the pipeline ran before the decisions, then
  /// the schedule ("[passes] 1: TP(..) V; ..."; without passes, the
  /// schedule). applySchedule on the same input replays it.
  std::string getScheduleText() const;
  /// The schedule alone, in the current module's op ids.
  std::string getDecisionText() const;
  /// Every applied action with where it came from: (op id, action,
  /// source: policy, heuristic, random, explicit, environment, rule, ...),
  /// in the traversal order.
  std::vector<std::tuple<int64_t, std::string, std::string>>
  getProvenance() const;
  std::string getTransformScript() const;
  /// The current IR; op-id tags removed unless `withTags`.
  std::string str(bool withTags = false) const;
  /// Tests only: fail the `n`-th transformation from now after it applied
  /// (the restore path on fully transformed IR).
  void injectFailure(int64_t n);
  /// Whether the current IR verifies (`error` says why not).
  bool verify(std::string &error) const;
  /// The IR after the lowering pipeline (LLVM dialect).
  bool getLowered(std::string &out, std::string &error) const;
  /// Lowers a copy of the current IR, JIT-compiles and times it.
  bool time(const TimingOptions &options, TimingResult &result,
            std::string &error) const;
  FunctionSignature getSignature(const std::string &function,
                                 std::string &error) const;

private:
  struct Impl;
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// The observation layout and the legality config as key/value pairs.
struct LayoutInfo {
  std::vector<std::pair<std::string, int64_t>> sizes;
  std::vector<int64_t> tileCandidates;
  std::vector<std::string> opKinds;
  std::string hash;
  std::string description;
};
LayoutInfo getLayoutInfo();
struct LegalityInfo {
  std::vector<std::pair<std::string, int64_t>> limits;
  std::string hash;
  std::string description;
};
LegalityInfo getLegalityInfo();

/// One entry of a schedule: op id or none, actions, rule choices (key,
/// value).
using ScheduleEntryText =
    std::tuple<std::optional<int64_t>, std::vector<Action>,
               std::vector<std::pair<std::string, int64_t>>>;
/// The schedule grammar: its entries (and a trace's prelude, the passes
/// between its brackets, where `prelude` is given; none without brackets).
/// False and `error` on malformed text.
bool parseScheduleText(const std::string &text,
                       std::vector<ScheduleEntryText> &out, std::string &error,
                       std::optional<std::string> *prelude = nullptr);
std::optional<Action> parseActionText(const std::string &text,
                                      std::string &error);
/// parseScheduleText's inverse (a trace with `prelude`); false and `error`
/// on an unknown choice.
bool formatScheduleText(const std::vector<ScheduleEntryText> &entries,
                        std::string &out, std::string &error,
                        const std::optional<std::string> &prelude = std::nullopt);
/// The header line of dump-schedule files, and reading it back.
std::string formatScheduleHeaderText(const std::string &schedule);
std::optional<std::string> readScheduleHeaderText(const std::string &text);

/// The flat mask of an op that takes no decision (only NT).
std::vector<uint8_t> getTerminalMask();

/// Forgets what the process's ONNX policies memoized (cold-start timings).
void clearPolicyMemos();

/// The exported policy's input and output names.
std::vector<std::string> getPolicyInputNames();
std::vector<std::string> getPolicyOutputNames();
/// The metadata key of the layout hash in exported policies.
std::string getPolicyLayoutHashKey();
/// The metadata key naming an exported policy's prior.
std::string getPolicyPriorKey();

/// The prior `name`'s logits (DecisionSource.h) for `count` observations of
/// `size` values each, stored one after another in `observations`: kind,
/// tile and pointer parts, each row after row. False, with `error` set, for
/// an unknown prior or a `size` that is not the default layout's.
bool computePriorLogitsBatch(const std::string &name, const float *observations,
                             size_t count, size_t size, std::vector<float> &kind,
                             std::vector<float> &tile,
                             std::vector<float> &pointer, std::string &error);

/// The textual lowering pipeline.
std::string getLoweringPipelineText();
std::string getPreparePipelineText();
/// The front end's steps as pipeline text (what mlir-rl-prepare runs).
std::string getFrontEndStepsText();

/// `text` through the mlir-rl-prepare pipeline (false: `error` says why).
bool prepareText(const std::string &text, const std::string &bufferName,
                 std::string &out, std::string &error);
/// `text` through `steps` (a pipeline of the front end's passes, as
/// getFrontEndStepsText's with options changed) instead of mlir-rl-prepare,
/// the module marked as prepared all the same.
bool prepareTextWith(const std::string &text, const std::string &bufferName,
                     const std::string &steps, std::string &out,
                     std::string &error);

/// `text` through the pipeline's front end only (what the decisions are
/// taken on), without scheduling anything (false: `error` says why).
bool frontEndText(const std::string &text, const std::string &bufferName,
                  const PipelineSettings &settings, std::string &out,
                  std::string &error);

/// `text` (a scheduled or unscheduled linalg-on-tensors module) lowered
/// with its arguments read-only and JIT-compiled for calls on the caller's
/// buffers (null: `error` says why). With `objectPath`: the machine code
/// there when it exists (loaded, not compiled), else compiled and written
/// there.
std::unique_ptr<JitFunction> compileTensorFunction(const std::string &text,
                                                   const std::string &function,
                                                   int threads,
                                                   std::string &error,
                                                   const std::string &objectPath = "");

/// Defaults of the pass's model= and ort-lib= options.
std::string getDefaultModelPath();
std::string getDefaultOrtLibrary();

/// What the pass would load for `model` and `ortLib` ("" = the defaults):
/// the model's metadata (mlir_rl.* keys) plus "model_path", "ort_library"
/// and "ort_version" (of the loaded library). Empty, with `error` set, when
/// either cannot be loaded.
std::map<std::string, std::string> getPolicyInfo(const std::string &model,
                                                 const std::string &ortLib,
                                                 std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_PYTHON_PROGRAM_H
