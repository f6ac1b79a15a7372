//===- Lowering.cpp - The lowering to LLVM + OpenMP, defined once ---------===//
#include "mlir-rl/Lowering.h"
#include "mlir-rl/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {
#define GEN_PASS_DEF_LOWERVECTOROPS
#include "mlir-rl/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {
struct LowerVectorOpsPass
    : public mlir::rl::impl::LowerVectorOpsBase<LowerVectorOpsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // 1. Multiply + multi_reduction (what the vectorizer emits for matmuls)
    //    into vector.contract; transfer permutations into broadcasts and
    //    transposes.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateSinkVectorOpsPatterns(patterns);
      for (RegisteredOperationName name : ctx->getRegisteredOperations())
        if (name.getDialectNamespace() == "vector")
          name.getCanonicalizationPatterns(patterns, ctx);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // 2. Contractions into outer products into FMAs; the remaining
    //    multi-reductions into inner reductions.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerParallel);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
  }
};
} // namespace

namespace mlir::rl {

const std::string &getLoweringPipeline() {
  static const std::string pipeline =
      "builtin.module("
      "func.func(canonicalize,mlir-rl-lower-vectors,lower-vector-mask,"
      "lower-vector-multi-reduction),"
      "canonicalize,cse,"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "convert-linalg-to-loops,scf-forall-to-parallel,convert-scf-to-openmp,"
      "convert-vector-to-scf{full-unroll=true},expand-strided-metadata,lower-affine,"
      "convert-vector-to-llvm{vector-contract-lowering=outerproduct "
      "reassociate-fp-reductions},"
      "finalize-memref-to-llvm,convert-scf-to-cf,convert-arith-to-llvm,"
      "convert-math-to-llvm,convert-index-to-llvm,convert-ub-to-llvm,"
      "convert-openmp-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
      "reconcile-unrealized-casts)";
  return pipeline;
}

LogicalResult buildLoweringPipeline(OpPassManager &pm) {
  registerMlirRlPassesAndPipelines();
  std::string error;
  llvm::raw_string_ostream os(error);
  // The pipeline is anchored on builtin.module; parse its contents into pm.
  StringRef text = getLoweringPipeline();
  text = text.drop_front(strlen("builtin.module(")).drop_back();
  if (failed(parsePassPipeline(text, pm, os))) {
    llvm::errs() << "mlir-rl: cannot build the lowering pipeline: " << error
                 << "\n";
    return failure();
  }
  return success();
}

LogicalResult lowerToLLVM(ModuleOp module, std::string &error) {
  registerAllPassesOnce();
  MLIRContext *ctx = module.getContext();
  module.walk([&](func::FuncOp fn) {
    if (fn.isPublic() && !fn.isExternal())
      fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  });
  PassManager pm(ctx, ModuleOp::getOperationName());
  if (failed(buildLoweringPipeline(pm))) {
    error = "cannot build the lowering pipeline";
    return failure();
  }
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
    os << "the lowering pipeline failed";
    return failure();
  }
  return success();
}

} // namespace mlir::rl
