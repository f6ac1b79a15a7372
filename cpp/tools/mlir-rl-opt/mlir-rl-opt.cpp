//===- mlir-rl-opt.cpp - mlir-opt with the mlir-rl passes -----------------===//
//
// Every upstream dialect and pass, plus linalg-rl-schedule,
// mlir-rl-lower-vectors and the mlir-rl-lower pipeline, registered statically.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Pipeline/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::rl::registerAllPassesOnce();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "mlir-rl optimizer driver\n", registry));
}
