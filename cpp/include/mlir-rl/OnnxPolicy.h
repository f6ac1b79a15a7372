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
#ifndef MLIR_RL_ONNXPOLICY_H
#define MLIR_RL_ONNXPOLICY_H

#include "mlir-rl/ActionSpace.h"
#include "mlir-rl/FeatureLayout.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::rl {

/// Metadata keys written by `mlir-rl export` and read here.
constexpr const char kLayoutHashKey[] = "mlir_rl.layout_hash";

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

  /// Runs the actor on one observation and its flat masks.
  LogicalResult run(ArrayRef<float> observation, ArrayRef<uint8_t> mask,
                    PolicyLogits &logits, std::string &error);

  const std::string &getModelPath() const { return modelPath; }
  const std::string &getLibraryPath() const { return libraryPath; }
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
  std::string modelPath, libraryPath;
  std::map<std::string, std::string> metadata;
  const FeatureLayout *layout = nullptr;
};

} // namespace mlir::rl

#endif // MLIR_RL_ONNXPOLICY_H
