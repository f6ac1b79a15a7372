//===- Registration.cpp - Every mlir-rl pass registered -------------------===//
//
// Part of MlirRLPasses, the top library: the tablegen'd registration
// (registerMlirRLPasses) names every pass's constructor, linalg-rl-schedule's
// among them, so it links only here, above the tuner the pass runs. The
// passes of MlirRLTransforms and the mlir-rl-lower pipeline are registered
// there (Transforms/Registration.cpp), for the pipelines that library builds
// from text.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Pipeline/Registration.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"

#include <mutex>

namespace mlir::rl {

void registerMlirRlPassesAndPipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The pipeline is registered there, once (a second registration of a
    // pipeline asserts); the passes of Passes.td registered again by
    // registerMlirRLPasses are the same passes, which the registry allows.
    registerTransformsPassesAndPipelines();
    registerMlirRLPasses();
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
