//===- Lowering.cpp - The lowering to LLVM + OpenMP, defined once ---------===//
//
// The lowering pipeline as text, built from text and run with its
// diagnostics collected; lowerToLLVM. The lowering's own passes are in
// LoweringPasses.cpp.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {

const std::string &getLoweringPipeline() {
  static const std::string pipeline =
      "builtin.module(mlir-rl-strip-transform-ir,"
      // A forall that reads only the tiles an earlier one wrote in the
      // same iteration joins it: one parallel region.
      "func.func(mlir-rl-fuse-foralls),"
      // linalg.softmax has no lowering of its own.
      "func.func(mlir-rl-decompose-aggregates),"
      "func.func(mlir-rl-lower-pack-unpack,canonicalize,mlir-rl-lower-vectors,"
      "lower-vector-mask,lower-vector-multi-reduction),"
      // Math on bf16 or f16 (what mlir-rl-compute-in-f32 left) in f32.
      "math-extend-to-supported-types,mlir-rl-lower-math,"
      "canonicalize,cse,mlir-rl-mark-manual-deallocation,"
      // An op whose result is inserted into a larger tensor (the padded
      // input of a convolution) writes into that tensor's slice.
      "mlir-rl-split-empty-tensors,eliminate-empty-tensors,"
      // (A stride on a unit dimension reaches a rank-reducing subview that
      // expand-strided-metadata lowers wrongly.)
      "mlir-rl-unit-slice-strides,"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      // Tiled inserts of in-place results bufferize to copies of a subview
      // onto an identical subview (inside reduction loops, once per step):
      // CSE makes them self-copies, which canonicalization erases.
      "cse,canonicalize,func.func(mlir-rl-lower-copies),"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "convert-linalg-to-loops,scf-forall-to-parallel,"
      // One function per parallel region: the OpenMP translation's cost
      // is per region times its function's size.
      "mlir-rl-outline-parallel-loops,convert-scf-to-openmp,"
      "convert-vector-to-scf{full-unroll=true},expand-strided-metadata,lower-affine,"
      // After bufferization: its outlined functions are unstructured.
      "convert-math-to-funcs,"
      // bf16 arithmetic left (none after mlir-rl-compute-in-f32) as f32
      // between conversions, and the conversions as integer operations.
      "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32},"
      "mlir-rl-expand-bf16,"
      // x86vector: mlir-rl-bf16-dot's vdpbf16ps.
      "convert-vector-to-llvm{vector-contract-lowering=outerproduct "
      "reassociate-fp-reductions enable-x86vector},"
      "finalize-memref-to-llvm,convert-scf-to-cf,convert-arith-to-llvm,"
      "convert-math-to-llvm,convert-index-to-llvm,convert-ub-to-llvm,"
      "convert-openmp-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
      "reconcile-unrealized-casts,"
      // LLVM cannot select moves of 8k + 1 bf16 (a 17x17 bf16 transpose).
      "mlir-rl-move-bf16-as-i16)";
  return pipeline;
}

LogicalResult buildPipelineFromText(OpPassManager &pm, StringRef text,
                                    StringRef what) {
  registerTransformsPassesAndPipelines();
  std::string error;
  llvm::raw_string_ostream os(error);
  // The pipeline is anchored on builtin.module; parse its contents into pm.
  text = text.drop_front(strlen("builtin.module(")).drop_back();
  if (failed(parsePassPipeline(text, pm, os))) {
    llvm::errs() << "mlir-rl: cannot build the " << what
                 << " pipeline: " << error << "\n";
    return failure();
  }
  return success();
}

LogicalResult buildLoweringPipeline(OpPassManager &pm) {
  return buildPipelineFromText(pm, getLoweringPipeline(), "lowering");
}

LogicalResult runWithDiagnostics(PassManager &pm, ModuleOp module,
                                 std::string &error, StringRef what) {
  MLIRContext *ctx = module.getContext();
  llvm::raw_string_ostream os(error);
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      os << diag.getLocation() << ": " << diag.str() << "\n";
      for (Diagnostic &note : diag.getNotes())
        os << "  note: " << note.str() << "\n";
    }
    return success();
  });
  if (failed(pm.run(module))) {
    os << "the " << what << " pipeline failed";
    return failure();
  }
  return success();
}

/// Runs `build`'s pipeline on `module`, errors collected into `error`.
static LogicalResult runPipeline(ModuleOp module, std::string &error,
                                 LogicalResult (*build)(OpPassManager &),
                                 StringRef what) {
  registerTransformsAndUpstreamPassesOnce();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(build(pm))) {
    error = ("cannot build the " + what + " pipeline").str();
    return failure();
  }
  return runWithDiagnostics(pm, module, error, what);
}

LogicalResult lowerToLLVM(ModuleOp module, std::string &error) {
  MLIRContext *ctx = module.getContext();
  module.walk([&](func::FuncOp fn) {
    if (fn.isPublic() && !fn.isExternal())
      fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  });
  return runPipeline(module, error, buildLoweringPipeline, "lowering");
}

} // namespace mlir::rl
