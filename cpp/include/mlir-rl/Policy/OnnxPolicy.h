//===- OnnxPolicy.h - The exported actor through ONNX Runtime ---*- C++ -*-===//
//
// Runs an actor exported by `mlir-rl export` with ONNX Runtime's C API. The
// library is dlopen()ed by path (never linked), so the plugin loads into a
// stock mlir-opt and no ONNX Runtime exception can cross an MLIR frame.
//
// Library path: the `ort-lib` option, else $MLIR_RL_ORT_LIB, else the library
// of the `onnxruntime` Python package found at build time.
// Model: the `model` option, else models/policy.onnx next to the installed
// plugin (or in the source tree of a build-tree plugin).
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_POLICY_ONNXPOLICY_H
#define MLIR_RL_POLICY_ONNXPOLICY_H

#include "mlir-rl/ActionSpace/Decoding.h"
#include "mlir-rl/Analysis/FeatureLayout.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::rl {

/// Metadata keys written by `mlir-rl export` and read here.
constexpr const char kLayoutHashKey[] = "mlir_rl.layout_hash";
/// The metadata key naming the policy's prior (DecisionSource.h), whose
/// logits run() adds to the network's; absent or empty: none.
constexpr const char kPriorKey[] = "mlir_rl.prior";

/// The exported actor's interface: (observation [B, obs], mask [B, mask])
/// -> (kind logits [B, A], tile logits [B, T, N, M], pointer logits [B, N]).
/// `mlir-rl export` names its inputs and outputs with these (through the
/// bindings).
inline constexpr const char *kPolicyInputNames[] = {"observation", "mask"};
inline constexpr const char *kPolicyOutputNames[] = {
    "kind_logits", "tile_logits", "pointer_logits"};

/// The directory of the binary this code is linked into (the plugin, a
/// driver or the Python extension); "" if unknown.
std::string getOwnBinaryDirectory();

class OnnxPolicy {
public:
  /// Loads the ONNX Runtime library and the model. Fails, with `error`
  /// naming the file and the reason, when the library is missing or too old,
  /// the model is missing, unreadable or not ONNX, or it was exported for
  /// another feature layout.
  static std::unique_ptr<OnnxPolicy> load(const std::string &modelPath,
                                          const std::string &ortLibPath,
                                          const FeatureLayout &layout,
                                          std::string &error);
  ~OnnxPolicy();

  /// Runs the actor on one observation and its flat masks (adding its
  /// prior's logits, where the model names one). The actor is a
  /// pure function: results are memoized by (observation, mask), which
  /// repeat across the ops of a model with repeated shapes (MobileNetV2:
  /// 602 distinct of 1,591).
  LogicalResult run(ArrayRef<float> observation, ArrayRef<uint8_t> mask,
                    PolicyLogits &logits, std::string &error);
  /// Forgets the memoized results.
  void clearMemo();
  /// Inferences run and answered from the memo.
  int64_t getNumInferences() const { return numInferences; }
  int64_t getNumMemoHits() const { return numMemoHits; }

  const std::string &getModelPath() const { return modelPath; }
  const std::string &getLibraryPath() const { return libraryPath; }
  /// The loaded ONNX Runtime library's version ("1.23.2").
  const std::string &getLibraryVersion() const;
  /// Custom metadata of the model (layout hash, provenance, ...).
  const std::map<std::string, std::string> &getMetadata() const {
    return metadata;
  }

  /// Where the library and the model are looked for when not given.
  static std::string getDefaultLibraryPath();
  static std::string getDefaultModelPath();

private:
  OnnxPolicy() = default;
  struct State;
  std::unique_ptr<State> state;
  LogicalResult runSession(ArrayRef<float> observation, ArrayRef<uint8_t> mask,
                           PolicyLogits &logits, std::string &error);
  int64_t numInferences = 0, numMemoHits = 0;
  std::string modelPath, libraryPath, prior;
  std::map<std::string, std::string> metadata;
  const FeatureLayout *layout = nullptr;
};

} // namespace mlir::rl

#endif // MLIR_RL_POLICY_ONNXPOLICY_H
