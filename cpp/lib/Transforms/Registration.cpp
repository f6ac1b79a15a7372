//===- Registration.cpp - MlirRLTransforms' passes registered -------------===//
//
// The passes this library defines and the mlir-rl-lower pipeline: what the
// pipelines it builds from text (the lowering, the front end) name. The
// entry points register every mlir-rl pass, linalg-rl-schedule included,
// through MlirRLPasses (Pipeline/Registration.cpp), which calls these.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"

#include <mutex>

namespace mlir::rl {

void registerTransformsPassesAndPipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Every pass of Passes.td but MlirRLPasses' (linalg-rl-schedule,
    // mlir-rl-strip-op-ids).
    registerBf16Dot();
    registerComputeInF32();
    registerConvToMatmul();
    registerDecomposeAggregates();
    registerExpandBF16();
    registerMoveBf16AsI16();
    registerFlattenElementwise();
    registerFuseElementwise();
    registerFuseForalls();
    registerLowerCopies();
    registerLowerMath();
    registerLowerPackUnpack();
    registerLowerVectorOps();
    registerMarkManualDeallocation();
    registerOutlineParallelLoops();
    registerPackRhs();
    registerPadToTiles();
    registerPrepare();
    registerSplitEmptyTensors();
    registerStripTransformIR();
    registerUnitSliceStrides();
    registerUnrollWindows();
    registerUntieInits();
    registerUntieEmpties();
    PassPipelineRegistration<>(
        "mlir-rl-lower",
        "Lower scheduled linalg-on-tensors code to the LLVM dialect with "
        "OpenMP (the pipeline mlir-rl times with)",
        [](OpPassManager &pm) { (void)buildLoweringPipeline(pm); });
  });
}

void registerTransformsAndUpstreamPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerTransformsPassesAndPipelines();
  });
}

} // namespace mlir::rl
