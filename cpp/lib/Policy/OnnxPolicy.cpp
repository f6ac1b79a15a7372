//===- OnnxPolicy.cpp - The exported actor through ONNX Runtime -----------===//
#include "mlir-rl/Policy/OnnxPolicy.h"
#include "mlir-rl/Policy/DecisionSource.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnxruntime_c_api.h>

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

#ifndef MLIR_RL_ORT_DEFAULT_LIB
#define MLIR_RL_ORT_DEFAULT_LIB ""
#endif
#ifndef MLIR_RL_SOURCE_DIR
#define MLIR_RL_SOURCE_DIR ""
#endif

namespace mlir::rl {

namespace {
/// The oldest C API we need (ONNX Runtime 1.17); newer libraries serve it.
constexpr uint32_t kMinOrtApiVersion = 17;

const char *const *kInputNames = kPolicyInputNames;
const char *const *kOutputNames = kPolicyOutputNames;

/// One loaded ONNX Runtime library per path, for the life of the process
/// (ONNX Runtime does not support being unloaded and reloaded).
struct OrtLibrary {
  const OrtApi *api = nullptr;
  OrtEnv *env = nullptr;
  std::string path;
  std::string version;
};

const OrtLibrary *loadLibrary(const std::string &path, std::string &error) {
  static std::mutex mutex;
  static std::map<std::string, OrtLibrary> libraries;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = libraries.find(path);
  if (it != libraries.end())
    return &it->second;
  if (path.empty()) {
    error = "no ONNX Runtime library: pass ort-lib=<path to "
            "libonnxruntime.so>, set MLIR_RL_ORT_LIB, or install the "
            "onnxruntime Python package and rebuild mlir-rl";
    return nullptr;
  }
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load the ONNX Runtime library '" + path + "': " +
            std::string(dlerror());
    return nullptr;
  }
  using GetApiBase = const OrtApiBase *(*)();
  auto getApiBase =
      reinterpret_cast<GetApiBase>(dlsym(handle, "OrtGetApiBase"));
  if (!getApiBase) {
    error = "'" + path + "' is not an ONNX Runtime library (no OrtGetApiBase)";
    return nullptr;
  }
  const OrtApiBase *base = getApiBase();
  const OrtApi *api = base ? base->GetApi(kMinOrtApiVersion) : nullptr;
  if (!api) {
    error = "the ONNX Runtime library '" + path + "' (version " +
            std::string(base ? base->GetVersionString() : "unknown") +
            ") is too old: mlir-rl needs C API " +
            std::to_string(kMinOrtApiVersion) + " (ONNX Runtime 1.17) or newer";
    return nullptr;
  }
  OrtLibrary lib;
  lib.api = api;
  lib.path = path;
  lib.version = base->GetVersionString();
  if (OrtStatus *st = api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "mlir-rl",
                                     &lib.env)) {
    error = std::string("cannot create the ONNX Runtime environment: ") +
            api->GetErrorMessage(st);
    api->ReleaseStatus(st);
    return nullptr;
  }
  return &libraries.emplace(path, lib).first->second;
}

/// True for success; otherwise releases `status` and sets `error` to a
/// message naming the model and the failed step.
bool checkStatus(const OrtApi *api, OrtStatus *status, const std::string &model,
                 const std::string &what, std::string &error) {
  if (!status)
    return true;
  error = "policy model '" + model + "': " + what + ": " +
          api->GetErrorMessage(status);
  api->ReleaseStatus(status);
  return false;
}

} // namespace

struct OnnxPolicy::State {
  const OrtLibrary *lib = nullptr;
  OrtSession *session = nullptr;
  OrtMemoryInfo *memory = nullptr;
  /// Memo: the observation's non-zero (index, value) pairs and the mask,
  /// as bytes -> logits.
  std::mutex mutex;
  std::unordered_map<std::string, PolicyLogits> memo;
};

namespace {
/// Observations are sparse (tens of non-zeros in thousands): the key holds
/// the non-zeros exactly, then the mask.
std::string getMemoKey(ArrayRef<float> observation, ArrayRef<uint8_t> mask) {
  std::string key;
  key.reserve(64 * 8 + mask.size());
  for (uint32_t i = 0; i < observation.size(); ++i) {
    if (observation[i] == 0.0f)
      continue;
    key.append(reinterpret_cast<const char *>(&i), sizeof(i));
    key.append(reinterpret_cast<const char *>(&observation[i]), sizeof(float));
  }
  key.push_back('|');
  key.append(reinterpret_cast<const char *>(mask.data()), mask.size());
  return key;
}
/// Bounds the memo's memory (about 1.3 KB an entry).
constexpr size_t kMaxMemoEntries = 1 << 16;
} // namespace

OnnxPolicy::~OnnxPolicy() {
  if (!state || !state->lib)
    return;
  const OrtApi *api = state->lib->api;
  if (state->memory)
    api->ReleaseMemoryInfo(state->memory);
  if (state->session)
    api->ReleaseSession(state->session);
}

const std::string &OnnxPolicy::getLibraryVersion() const {
  return state->lib->version;
}

std::string getOwnBinaryDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&getOwnBinaryDirectory), &info) ||
      !info.dli_fname)
    return "";
  llvm::SmallString<256> path(info.dli_fname);
  (void)llvm::sys::fs::make_absolute(path);
  return llvm::sys::path::parent_path(path).str();
}

namespace {
/// The newest `libonnxruntime.so*` in `dir` ("" if none).
std::string findOrtLibraryIn(const std::string &dir) {
  std::error_code ec;
  std::string best;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with("libonnxruntime.so") && it->path() > best)
      best = it->path();
  }
  llvm::SmallString<256> path(best);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}
} // namespace

std::string OnnxPolicy::getDefaultLibraryPath() {
  if (const char *env = std::getenv("MLIR_RL_ORT_LIB"); env && *env)
    return env;
  // The onnxruntime package installed beside this one (site-packages/
  // onnxruntime for mlir_rl/ and mlir_rl/bin/): what pip installed with a
  // wheel, wherever it was built; then the one found at build time.
  std::string dir = getOwnBinaryDirectory();
  if (!dir.empty())
    for (const char *rel : {"/../onnxruntime/capi", "/../../onnxruntime/capi"})
      if (std::string found = findOrtLibraryIn(dir + rel); !found.empty())
        return found;
  return MLIR_RL_ORT_DEFAULT_LIB;
}

std::string OnnxPolicy::getDefaultModelPath() {
  std::string dir = getOwnBinaryDirectory();
  llvm::SmallVector<std::string> candidates = {
      dir + "/models/policy.onnx",    // plugin / _core in the package
      dir + "/../models/policy.onnx", // mlir_rl/bin/mlir-rl-opt
      std::string(MLIR_RL_SOURCE_DIR) + "/models/policy.onnx"};
  for (const std::string &c : candidates)
    if (llvm::sys::fs::exists(c))
      return c;
  return candidates.front();
}

std::unique_ptr<OnnxPolicy> OnnxPolicy::load(const std::string &modelPath,
                                             const std::string &ortLibPath,
                                             const FeatureLayout &layout,
                                             std::string &error) {
  std::string path = modelPath.empty() ? getDefaultModelPath() : modelPath;
  std::string libPath =
      ortLibPath.empty() ? getDefaultLibraryPath() : ortLibPath;
  if (!llvm::sys::fs::exists(path)) {
    error = "policy model '" + path + "' does not exist";
    return nullptr;
  }
  if (llvm::sys::fs::is_directory(path)) {
    error = "policy model '" + path + "' is a directory, not an ONNX file";
    return nullptr;
  }
  const OrtLibrary *lib = loadLibrary(libPath, error);
  if (!lib)
    return nullptr;
  const OrtApi *api = lib->api;

  std::unique_ptr<OnnxPolicy> policy(new OnnxPolicy());
  policy->state = std::make_unique<State>();
  policy->state->lib = lib;
  policy->modelPath = path;
  policy->libraryPath = libPath;
  policy->layout = &layout;

  auto check = [&](OrtStatus *st, const std::string &what) {
    return checkStatus(api, st, path, what, error);
  };

  OrtSessionOptions *options = nullptr;
  if (!check(api->CreateSessionOptions(&options), "session options"))
    return nullptr;
  bool ok = check(api->SetIntraOpNumThreads(options, 1), "threads") &&
            check(api->SetInterOpNumThreads(options, 1), "threads") &&
            check(api->SetSessionGraphOptimizationLevel(options,
                                                        ORT_ENABLE_ALL),
                  "optimization level") &&
            check(api->CreateSession(lib->env, path.c_str(), options,
                                     &policy->state->session),
                  "cannot load it as an ONNX model");
  api->ReleaseSessionOptions(options);
  if (!ok)
    return nullptr;

  // Metadata: the layout hash must be ours.
  OrtAllocator *allocator = nullptr;
  OrtModelMetadata *meta = nullptr;
  if (!check(api->GetAllocatorWithDefaultOptions(&allocator), "allocator") ||
      !check(api->SessionGetModelMetadata(policy->state->session, &meta),
             "metadata"))
    return nullptr;
  char **keys = nullptr;
  int64_t numKeys = 0;
  if (check(api->ModelMetadataGetCustomMetadataMapKeys(meta, allocator, &keys,
                                                       &numKeys),
            "metadata keys")) {
    for (int64_t i = 0; i < numKeys; ++i) {
      char *value = nullptr;
      if (check(api->ModelMetadataLookupCustomMetadataMap(meta, allocator,
                                                          keys[i], &value),
                "metadata") &&
          value) {
        policy->metadata[keys[i]] = value;
        (void)api->AllocatorFree(allocator, value);
      }
      (void)api->AllocatorFree(allocator, keys[i]);
    }
    if (keys)
      (void)api->AllocatorFree(allocator, keys);
  }
  api->ReleaseModelMetadata(meta);
  if (!error.empty())
    return nullptr;
  auto hash = policy->metadata.find(kLayoutHashKey);
  if (hash == policy->metadata.end()) {
    error = "policy model '" + path +
            "' has no feature-layout hash in its metadata (key " +
            kLayoutHashKey + "); export it with `mlir-rl export`";
    return nullptr;
  }
  if (hash->second != layout.getHash()) {
    error = "policy model '" + path + "' was exported for feature layout " +
            hash->second + ", but this mlir-rl computes layout " +
            layout.getHash() + "; re-export or retrain the policy";
    return nullptr;
  }

  auto prior = policy->metadata.find(kPriorKey);
  if (prior != policy->metadata.end() && !prior->second.empty()) {
    if (!isKnownPrior(prior->second)) {
      error = "policy model '" + path + "' is a residual over the prior '" +
              prior->second + "', which this mlir-rl does not know (known: " +
              getPriorNames() + ")";
      return nullptr;
    }
    policy->prior = prior->second;
  }

  // The model's interface must be the exporter's.
  size_t numInputs = 0, numOutputs = 0;
  if (!check(api->SessionGetInputCount(policy->state->session, &numInputs),
             "inputs") ||
      !check(api->SessionGetOutputCount(policy->state->session, &numOutputs),
             "outputs"))
    return nullptr;
  if (numInputs != 2 || numOutputs != 3) {
    error = "policy model '" + path + "' has " + std::to_string(numInputs) +
            " inputs and " + std::to_string(numOutputs) +
            " outputs; expected (observation, mask) -> (kind_logits, "
            "tile_logits, pointer_logits)";
    return nullptr;
  }
  if (!check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault,
                                      &policy->state->memory),
             "memory info"))
    return nullptr;
  return policy;
}

LogicalResult OnnxPolicy::run(ArrayRef<float> observation,
                              ArrayRef<uint8_t> mask, PolicyLogits &logits,
                              std::string &error) {
  std::string key = getMemoKey(observation, mask);
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto it = state->memo.find(key);
    if (it != state->memo.end()) {
      ++numMemoHits;
      logits = it->second;
      return success();
    }
  }
  if (failed(runSession(observation, mask, logits, error)))
    return failure();
  if (!prior.empty()) {
    PolicyLogits base;
    if (failed(computePriorLogits(prior, *layout, observation, base, error)))
      return failure();
    auto add = [](std::vector<float> &to, const std::vector<float> &from) {
      for (size_t i = 0; i < to.size() && i < from.size(); ++i)
        to[i] += from[i];
    };
    add(logits.kind, base.kind);
    add(logits.tile, base.tile);
    add(logits.pointer, base.pointer);
  }
  std::lock_guard<std::mutex> lock(state->mutex);
  ++numInferences;
  if (state->memo.size() >= kMaxMemoEntries)
    state->memo.clear();
  state->memo.emplace(std::move(key), logits);
  return success();
}

void OnnxPolicy::clearMemo() {
  std::lock_guard<std::mutex> lock(state->mutex);
  state->memo.clear();
}

LogicalResult OnnxPolicy::runSession(ArrayRef<float> observation,
                                     ArrayRef<uint8_t> mask,
                                     PolicyLogits &logits,
                                     std::string &error) {
  const OrtApi *api = state->lib->api;
  const FeatureLayout &l = *layout;
  if ((int)observation.size() != l.getObservationSize() ||
      (int)mask.size() != l.getMaskSize()) {
    error = "internal error: observation/mask sizes do not match the layout";
    return failure();
  }
  std::vector<float> obs(observation.begin(), observation.end());
  std::vector<float> maskF(mask.begin(), mask.end());
  int64_t obsShape[] = {1, (int64_t)obs.size()};
  int64_t maskShape[] = {1, (int64_t)maskF.size()};
  OrtValue *inputs[2] = {nullptr, nullptr};
  OrtValue *outputs[3] = {nullptr, nullptr, nullptr};
  auto release = [&]() {
    for (OrtValue *v : inputs)
      if (v)
        api->ReleaseValue(v);
    for (OrtValue *v : outputs)
      if (v)
        api->ReleaseValue(v);
  };
  auto check = [&](OrtStatus *st, const char *what) {
    return checkStatus(api, st, modelPath, what, error);
  };
  bool ok =
      check(api->CreateTensorWithDataAsOrtValue(
                state->memory, obs.data(), obs.size() * sizeof(float),
                obsShape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &inputs[0]),
            "observation tensor") &&
      check(api->CreateTensorWithDataAsOrtValue(
                state->memory, maskF.data(), maskF.size() * sizeof(float),
                maskShape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &inputs[1]),
            "mask tensor") &&
      check(api->Run(state->session, nullptr, kInputNames, inputs, 2,
                     kOutputNames, 3, outputs),
            "inference failed");
  if (!ok) {
    release();
    return failure();
  }
  size_t expected[3] = {(size_t)l.getKindMaskSize(),
                        (size_t)l.getTileMaskSize(),
                        (size_t)l.getPointerMaskSize()};
  std::vector<float> *dest[3] = {&logits.kind, &logits.tile, &logits.pointer};
  for (int i = 0; i < 3; ++i) {
    OrtTensorTypeAndShapeInfo *info = nullptr;
    size_t count = 0;
    float *data = nullptr;
    ok = check(api->GetTensorTypeAndShape(outputs[i], &info), "output") &&
         check(api->GetTensorShapeElementCount(info, &count), "output");
    if (info)
      api->ReleaseTensorTypeAndShapeInfo(info);
    if (ok && count != expected[i]) {
      error = "policy model '" + modelPath + "': output " + kOutputNames[i] +
              " has " + std::to_string(count) + " values, expected " +
              std::to_string(expected[i]);
      ok = false;
    }
    if (ok)
      ok = check(api->GetTensorMutableData(outputs[i], (void **)&data),
                 "output");
    if (!ok) {
      release();
      return failure();
    }
    dest[i]->assign(data, data + count);
  }
  release();
  return success();
}

} // namespace mlir::rl
