//===- Registration.cpp - Pass and pipeline registration ------------------===//
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"

#include <mutex>

namespace mlir::rl {

void registerMlirRlPassesAndPipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerMlirRLPasses();
    PassPipelineRegistration<>(
        "mlir-rl-lower",
        "Lower scheduled linalg-on-tensors code to the LLVM dialect with "
        "OpenMP (the pipeline mlir-rl times with)",
        [](OpPassManager &pm) { (void)buildLoweringPipeline(pm); });
  });
}

void registerAllPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerMlirRlPassesAndPipelines();
  });
}

} // namespace mlir::rl
