//===- Jit.h - JIT execution and timing -------------------------*- C++ -*-===//
//
// Compiles a lowered module to machine code and runs it: the module is
// translated to LLVM IR; a large one is split into parts optimized at -O3
// and compiled on as many threads as the process has CPUs
// ($MLIR_RL_JIT_THREADS), one object each, a small one optimized and
// compiled whole; the objects are linked into an ORC LLJIT. timeFunction
// times it on seeded random inputs (warm-up runs, then `runs` timed calls at
// a fixed OpenMP thread count, the last call's outputs returned for
// comparison); JitFunction keeps it to call on the caller's buffers.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_RUNTIME_JIT_H
#define MLIR_RL_RUNTIME_JIT_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::rl {

/// A dense buffer of an input or output (elements stored as double).
struct HostTensor {
  std::vector<int64_t> shape;
  std::string elementType; // "f32", "f64", "i32", "i64"
  std::vector<double> data;
};

struct TimingOptions {
  std::string function;   // empty: the first public function with a body
  int warmup = 1;
  int runs = 5;
  int threads = 1;        // OpenMP threads
  uint64_t seed = 0;      // inputs: uniform in [-1, 1] (ints: [-4, 4])
  bool keepOutputs = true;
  /// Stop as soon as one call takes longer than this (0: never; the first
  /// warm-up call, which carries one-time costs, may take 2x this + 50 ms);
  /// the result is then marked `aborted`.
  double abortAfterSeconds = 0;
  /// Adaptive repetition for short functions: after `runs` timed calls,
  /// keep calling until the timed calls add up to this many seconds or
  /// `maxRuns` calls were timed (0: exactly `runs`).
  double minTimedSeconds = 0;
  int maxRuns = 1000;
};

struct TimingResult {
  std::vector<double> seconds; // one per timed run
  std::vector<HostTensor> outputs;
  std::vector<HostTensor> inputs; // the random inputs, when keepOutputs
  bool aborted = false;           // a call exceeded abortAfterSeconds
  double median() const;
};

/// Signature of a tensor function, read before lowering.
struct FunctionSignature {
  std::string name;
  std::vector<HostTensor> inputs;  // shapes/types only
  std::vector<HostTensor> outputs; // shapes/types only
};

/// Reads the signature of `function` (or the first public function with a
/// body). Fails with `error` on non-tensor or dynamic arguments.
FailureOr<FunctionSignature> getFunctionSignature(ModuleOp module,
                                                  const std::string &function,
                                                  std::string &error);

/// JIT-compiles the lowered `llvmModule` and times `signature.name`.
FailureOr<TimingResult> timeFunction(ModuleOp llvmModule,
                                     const FunctionSignature &signature,
                                     const TimingOptions &options,
                                     std::string &error);

/// A lowered function compiled once and called many times on buffers the
/// caller owns (the runtime of the torch.compile backend): inputs are read
/// in place, results are copied into the caller's output buffers and the
/// function's own allocations freed. Build the module with its arguments
/// marked read-only (markArgumentsReadOnly) before lowering, or the code
/// may write into them.
class JitFunction {
public:
  /// JIT-compiles `llvmModule`; with `objectPath`, also writes its machine
  /// code there (for `load` in another process): the object, or an archive
  /// of the objects where its code was generated in parts.
  static FailureOr<std::unique_ptr<JitFunction>>
  compile(ModuleOp llvmModule, const FunctionSignature &signature,
          int threads, std::string &error, const std::string &objectPath = "");
  /// The machine code `compile` wrote to `objectPath`, linked into this
  /// process (no lowering, no code generation); it must come from this
  /// LLVM on this host (getJitTargetTag).
  static FailureOr<std::unique_ptr<JitFunction>>
  load(const std::string &objectPath, const FunctionSignature &signature,
       int threads, std::string &error);
  ~JitFunction();

  const FunctionSignature &getSignature() const { return signature; }
  /// Whether the code was loaded from an object file (`load`).
  bool isLoaded() const;
  /// `inputs[i]`: dense row-major data of signature.inputs[i]; `outputs[i]`:
  /// a dense row-major buffer for signature.outputs[i]. Thread-compatible,
  /// not thread-safe.
  LogicalResult call(const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs, std::string &error);
  /// `warmup` untimed calls, then `runs` calls on the same buffers, each
  /// timed around the compiled code alone (as timeFunction times it: no
  /// copies, no frees), all in one loop as timeFunction makes them (a
  /// first call after other work runs from a cold cache); the last call's
  /// results land in `outputs`. `seconds` gets one entry per timed call.
  LogicalResult time(const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs, int runs, int warmup,
                     std::vector<double> &seconds, std::string &error);

private:
  JitFunction() = default;
  /// One call; its time (compiled code only) in `seconds` when given; the
  /// results copied into `outputs` when `copyResults`.
  LogicalResult invoke(const std::vector<const void *> &inputs,
                       const std::vector<void *> &outputs, bool copyResults,
                       double *seconds, std::string &error);
  struct Engine;
  std::unique_ptr<Engine> engine;
  FunctionSignature signature;
  int threads = 1;
};

/// What machine code compiled here depends on besides the module: the LLVM
/// version and the host CPU and its features, as a short hash (part of the
/// key of cached objects).
std::string getJitTargetTag();

/// The inputs timeFunction gives `signature` for `seed` (the same values,
/// as doubles): compiled functions timed on them compute what a
/// timeFunction call on the unlowered module computes.
std::vector<HostTensor> makeRandomInputs(const FunctionSignature &signature,
                                         uint64_t seed);

/// Marks the arguments of the module's functions `bufferization.writable =
/// false`: the lowering then never writes into a caller's buffer.
void markArgumentsReadOnly(ModuleOp module);

/// Bytes of one element of a HostTensor element type ("f32": 4).
size_t getElementTypeBytes(const std::string &elementType);

/// Whether `actual` equals `expected` up to reassociated float sums: per
/// tensor, |a - e| <= atol + rtol * |e| with atol = atolScale * max(1,
/// max |e|) (the rule of mlir_rl.outputs_match). `maxError` gets the largest
/// absolute difference (infinity when shapes or counts differ).
bool outputsMatch(const std::vector<HostTensor> &actual,
                  const std::vector<HostTensor> &expected, double &maxError,
                  double rtol = 1e-4, double atolScale = 1e-4);

} // namespace mlir::rl

#endif // MLIR_RL_RUNTIME_JIT_H
