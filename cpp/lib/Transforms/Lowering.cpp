//===- Lowering.cpp - The lowering to LLVM + OpenMP, defined once ---------===//
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {
#define GEN_PASS_DEF_LOWERVECTOROPS
#define GEN_PASS_DEF_STRIPTRANSFORMIR
#define GEN_PASS_DEF_LOWERPACKUNPACK
#define GEN_PASS_DEF_MARKMANUALDEALLOCATION
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {
struct StripTransformIRPass
    : public mlir::rl::impl::StripTransformIRBase<StripTransformIRPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef withSequences =
        transform::TransformDialect::kWithNamedSequenceAttrName;
    auto isTransformOp = [](Operation &op) {
      return op.getDialect() && isa<transform::TransformDialect>(op.getDialect());
    };
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations())) {
      auto nested = dyn_cast<ModuleOp>(op);
      bool transformModule =
          nested && (nested->hasAttr(withSequences) ||
                     (!nested.getBody()->empty() &&
                      llvm::all_of(nested.getBody()->getOperations(),
                                   isTransformOp)));
      if (isTransformOp(op) || transformModule)
        op.erase();
    }
    module->removeAttr(withSequences);
  }
};

struct LowerPackUnpackPass
    : public mlir::rl::impl::LowerPackUnpackBase<LowerPackUnpackPass> {
  void runOnOperation() override {
    SmallVector<Operation *> targets;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::PackOp, linalg::UnPackOp>(op))
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : targets) {
      rewriter.setInsertionPoint(op);
      // Failures (dynamic inner tiles) leave the op; bufferization reports it.
      if (auto pack = dyn_cast<linalg::PackOp>(op))
        (void)linalg::lowerPack(rewriter, pack);
      else
        (void)linalg::lowerUnPack(rewriter, cast<linalg::UnPackOp>(op));
    }
  }
};

struct MarkManualDeallocationPass
    : public mlir::rl::impl::MarkManualDeallocationBase<
          MarkManualDeallocationPass> {
  void runOnOperation() override {
    StringRef manual = bufferization::BufferizationDialect::kManualDeallocation;
    UnitAttr unit = UnitAttr::get(&getContext());
    getOperation()->walk([&](memref::DeallocOp dealloc) {
      dealloc->setAttr(manual, unit);
      if (Operation *alloc = dealloc.getMemref().getDefiningOp())
        if (isa<memref::AllocOp, memref::AllocaOp, memref::ReallocOp>(alloc))
          alloc->setAttr(manual, unit);
    });
  }
};

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
      "builtin.module(mlir-rl-strip-transform-ir,"
      "func.func(mlir-rl-lower-pack-unpack,canonicalize,mlir-rl-lower-vectors,"
      "lower-vector-mask,lower-vector-multi-reduction),"
      "canonicalize,cse,mlir-rl-mark-manual-deallocation,"
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
