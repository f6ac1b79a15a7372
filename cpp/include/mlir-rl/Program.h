//===- Program.h - A linalg module under scheduling, for bindings -*- C++ -*-===//
//
// The interface of the Python extension: standard types only, so the nanobind
// translation unit needs no MLIR headers. Everything is delegated to the
// Scheduler, Lowering and Jit, the same code the pass runs.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_PROGRAM_H
#define MLIR_RL_PROGRAM_H

#include "mlir-rl/Jit.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::rl {

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
  std::vector<std::string> history;
  bool done;
  bool inInterchange;
};

/// Cost and outcome of scheduling with a policy.
struct PolicyRunInfo {
  int64_t ops = 0;
  int64_t inferences = 0;
  double inferenceSeconds = 0;
  int64_t applications = 0;
  double applySeconds = 0;
  std::vector<std::string> warnings;
};

class Program {
public:
  /// Parses and verifies `text`; returns null and sets `error` on failure.
  static std::unique_ptr<Program> parse(const std::string &text,
                                        const std::string &bufferName,
                                        std::string &error);
  ~Program();

  std::vector<OpInfo> getOps() const;
  std::vector<int64_t> getTraversalOrder() const;
  std::vector<float> getObservation(int64_t id);
  std::vector<float> getOpFeatures(int64_t id);
  /// Flattened masks: [kind (A), tile (3 x N x M), pointer (N)].
  std::vector<uint8_t> getMasks(int64_t id);

  /// Status codes: 0 applied, 1 illegal (nothing changed), 2 failed to apply
  /// (IR restored). `message` explains 1 and 2.
  int apply(int64_t id, const std::string &action, std::string &message);
  int applyPointer(int64_t id, int64_t loop, std::string &message);
  int applySchedule(const std::string &schedule, std::string &message);

  /// Schedules every op with the ONNX policy at `model` (empty: default),
  /// as the pass does. Returns false and sets `error` on a model problem.
  bool scheduleWithPolicy(const std::string &model, const std::string &ortLib,
                          bool sample, uint64_t seed, PolicyRunInfo &info,
                          std::string &error);
  /// The ONNX policy's logits (kind, tile, pointer) for op `id` now.
  bool getPolicyLogits(const std::string &model, const std::string &ortLib,
                       int64_t id, std::vector<float> &kind,
                       std::vector<float> &tile, std::vector<float> &pointer,
                       std::string &error);
  /// Decodes logits (from any actor, e.g. PyTorch) into a step with the
  /// C++ decoder and applies it. `step` receives the decoded step's text.
  int decodeAndApply(int64_t id, const std::vector<float> &kind,
                     const std::vector<float> &tile,
                     const std::vector<float> &pointer, bool sample,
                     uint64_t seed, std::string &step, std::string &message);

  std::string getScheduleText() const;
  std::string getTransformScript() const;
  /// The current IR; op-id tags removed unless `withTags`.
  std::string str(bool withTags = false) const;
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

/// The feature layout as key/value pairs for Python (sizes, offsets, names).
struct LayoutInfo {
  std::vector<std::pair<std::string, int64_t>> sizes;
  std::vector<int64_t> tileCandidates;
  std::vector<std::string> opKinds;
  std::vector<std::string> actionNames;
  std::vector<std::string> actionMnemonics;
  std::string hash;
  std::string description;
};
LayoutInfo getLayoutInfo();

/// The textual lowering pipeline.
std::string getLoweringPipelineText();

/// Defaults of the pass's model= and ort-lib= options.
std::string getDefaultModelPath();
std::string getDefaultOrtLibrary();

} // namespace mlir::rl

#endif // MLIR_RL_PROGRAM_H
