//===- FrontEnd.h - The rewrites before the decisions, defined once -*- C++ -*-===//
//
// The front end is every rewrite that runs before a decision is taken:
// elementwise chains fused, convolutions and poolings into the forms the
// policy schedules, odd extents padded to full tiles, elementwise ops
// flattened. It is one list of stages, in one order; `linalg-rl-schedule`
// runs it before its decisions (SchedulePipeline), `mlir-rl-prepare` is the
// front end alone, and a trace's prelude (the passes that ran, in the
// schedule text) replays it.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_FRONTEND_H
#define MLIR_RL_TRANSFORMS_FRONTEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::rl {

/// A pass of the front end (or of the rules: mlir-rl-pack-rhs): name and
/// options, run on each func.func, as linalg-rl-schedule runs it and as a
/// trace's prelude and dump-schedule's script replay it.
struct PassStep {
  std::string name;
  std::vector<std::pair<std::string, bool>> options;
  std::vector<std::pair<std::string, int64_t>> intOptions;
  std::vector<std::pair<std::string, std::vector<int64_t>>> listOptions;

  bool operator==(const PassStep &other) const {
    return name == other.name && options == other.options &&
           intOptions == other.intOptions && listOptions == other.listOptions;
  }
  bool operator!=(const PassStep &other) const { return !(*this == other); }
  /// Whether it runs on the module (mlir-rl-pack-rhs: its op numbering is
  /// the module's), not on each func.func.
  bool onModule() const;
};

/// Which stages of the front end run (all by default).
struct FrontEndOptions {
  /// fuse-elementwise: elementwise chains into one generic (imported IR),
  /// canonicalization, CSE.
  bool fuseElementwise = true;
  /// rewrite-windows: 2-D convolutions as im2col + matmul, windows of
  /// poolings and NCHW depthwise convolutions unrolled, canonicalization,
  /// CSE, one init per consumer.
  bool rewriteWindows = true;
  /// pad-to-tiles: odd extents padded to full tiles.
  bool padToTiles = true;
  /// flatten-elementwise: elementwise ops over identity maps flattened to
  /// whole-register rows (their schedule is then the copies' rule's).
  bool flattenElementwise = true;
  /// compute-in-f32: ops on bf16 and f16 data compute in f32 and round
  /// where they store; reductions accumulate in f32 (mlir-rl-compute-in-f32).
  bool computeInF32 = true;
  /// bf16-dot: on a host with AVX-512 BF16 (hostHasBf16Dot), matmuls and
  /// batch matmuls of bf16 values as vdpbf16ps micro-kernels
  /// (mlir-rl-bf16-dot).
  bool bf16Dot = true;

  /// Every stage off.
  static FrontEndOptions none() {
    return {false, false, false, false, false, false};
  }
};

/// Whether the host multiplies bf16 with AVX-512 BF16's vdpbf16ps
/// (mlir-rl-bf16-dot's condition in the front end); MLIR_RL_BF16_DOT=1 or
/// =0 says so instead (tests, another target).
bool hostHasBf16Dot();

/// Whether `module` has a linalg op on bf16 or f16 data (the
/// compute-in-f32 stage's cheap check).
bool hasLowPrecisionOps(ModuleOp module);

/// The mark of a module the front end has run on (a unit attribute): the
/// front end does not run on it again -- running it twice is not the same
/// as once (its fusion would fold the im2col copies' shared buffer and a
/// filter's transpose into the matmul) -- and the schedule pipeline
/// removes it from what it hands on.
constexpr const char kFrontEndAttrName[] = "mlir_rl.front_end";

/// One stage: its option's name (as the pass spells it) and its passes.
struct FrontEndStage {
  const char *option;
  bool FrontEndOptions::*enabled;
  std::vector<PassStep> steps;
};
/// The stages, in the order they run.
const std::vector<FrontEndStage> &getFrontEndStages();

/// The steps of the stages `options` enables, in order (mlir-rl-prepare:
/// every stage).
std::vector<PassStep> getFrontEndSteps(const FrontEndOptions &options);

/// The front end as text (also registered as `mlir-rl-prepare`).
const std::string &getPreparePipeline();
/// Adds the prepare pipeline to `pm` (anchored on builtin.module).
LogicalResult buildPreparePipeline(OpPassManager &pm);
/// Runs the prepare pipeline on `module` in place.
LogicalResult prepareModule(ModuleOp module, std::string &error);

/// `steps` as the inside of a func.func pipeline ("a,b{k=true n=3}").
std::string formatPassSteps(ArrayRef<PassStep> steps);
/// formatPassSteps's inverse. Only the front end's passes and the rules'
/// (mlir-rl-pack-rhs) are accepted: a trace names what the pipeline ran.
/// Fails with `error` set.
LogicalResult parsePassSteps(StringRef text, std::vector<PassStep> &steps,
                             std::string &error);

/// Adds `steps` to `pm` (anchored on builtin.module, run on each func.func).
LogicalResult buildPassStepsPipeline(OpPassManager &pm,
                                     ArrayRef<PassStep> steps);

/// Runs a pipeline on the module (a pass's runPipeline, or
/// getPassManagerRunner's).
using PipelineRunner = function_ref<LogicalResult(OpPassManager &)>;

/// Runs the stages `options` enables on `module`, in order; those that
/// changed it are appended to `ran` (a trace's prelude: replaying only
/// them gives the same module), and marks it (kFrontEndAttrName). A module
/// already marked is left as it is. Fails with `error` set.
LogicalResult applyFrontEnd(ModuleOp module, const FrontEndOptions &options,
                            PipelineRunner run, std::vector<PassStep> &ran,
                            std::string &error);

/// Runs `steps` on `module` as they are (a trace's prelude).
LogicalResult runPassSteps(ModuleOp module, ArrayRef<PassStep> steps,
                           PipelineRunner run, std::string &error);

/// A runner with a pass manager of its own (outside a pass); errors go to
/// `error`.
std::function<LogicalResult(OpPassManager &)>
getPassManagerRunner(ModuleOp module, std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_FRONTEND_H
