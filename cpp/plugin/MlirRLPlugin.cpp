//===- MlirRLPlugin.cpp - libMlirRL.so pass plugin ------------------------===//
//
// Load into mlir-opt with
//   mlir-opt-22 --load-pass-plugin=$(mlir-rl plugin-path) \
//     -p 'builtin.module(linalg-rl-schedule{schedule="..."})' in.mlir
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Pipeline/Registration.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MlirRL", LLVM_VERSION_STRING,
          []() { mlir::rl::registerMlirRlPassesAndPipelines(); }};
}
