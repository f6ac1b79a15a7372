//===- ScheduleBuilder.cpp - Actions as transform-dialect IR --------------===//
#include "mlir-rl/ScheduleBuilder.h"

#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {

static std::string joinSizes(ArrayRef<int64_t> sizes) {
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s;
}

static std::string anyOps(unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::string("!transform.any_op");
  return s;
}

std::string buildActionScript(const Action &action,
                              const ActionScriptOptions &options) {
  std::string out;
  llvm::raw_string_ostream os(out);
  std::string sfx = "_" + std::to_string(options.uniqueSuffix);
  std::string op = "%op" + sfx;
  auto match = [&](const std::string &name, int64_t id) {
    os << "    " << name << " = transform.structured.match attributes{"
       << kOpIdAttrName << " = " << id
       << " : i64} in %root : (!transform.any_op) -> !transform.any_op\n";
  };
  auto tag = [&](const std::string &handle, int64_t id,
                 const std::string &param) {
    os << "    " << param << " = transform.param.constant " << id
       << " : i64 -> !transform.param<i64>\n";
    os << "    transform.annotate " << handle << " \"" << kOpIdAttrName
       << "\" = " << param << " : !transform.any_op, !transform.param<i64>\n";
  };

  os << "    // " << options.opId << ": " << action.str() << "\n";
  switch (action.kind) {
  case ActionKind::NoTransformation:
    break;
  case ActionKind::Tiling: {
    unsigned loops = llvm::count_if(action.sizes, [](int64_t s) { return s; });
    if (loops == 0)
      break; // all sizes 0: nothing to tile
    match(op, options.opId);
    os << "    %tiled" << sfx;
    for (unsigned i = 0; i < loops; ++i)
      os << ", %loop" << sfx << "_" << i;
    os << " = transform.structured.tile_using_for " << op << " tile_sizes ["
       << joinSizes(action.sizes) << "] : (!transform.any_op) -> ("
       << anyOps(loops + 1) << ")\n";
    tag("%tiled" + sfx, options.opId, "%id" + sfx);
    break;
  }
  case ActionKind::TiledParallelization:
  case ActionKind::TiledFusion: {
    match(op, options.opId);
    os << "    %tiled" << sfx << ", %forall" << sfx
       << " = transform.structured.tile_using_forall " << op
       << " tile_sizes [" << joinSizes(action.sizes)
       << "] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n";
    tag("%tiled" + sfx, options.opId, "%id" + sfx);
    if (action.kind == ActionKind::TiledFusion && options.producerId) {
      match("%producer" + sfx, *options.producerId);
      os << "    %fused" << sfx << ", %fused_forall" << sfx
         << " = transform.structured.fuse_into_containing_op %producer" << sfx
         << " into %forall" << sfx
         << " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, "
            "!transform.any_op)\n";
      tag("%fused" + sfx, *options.producerId, "%pid" + sfx);
    }
    break;
  }
  case ActionKind::Interchange:
    match(op, options.opId);
    os << "    %generic" << sfx << " = transform.structured.generalize " << op
       << " : (!transform.any_op) -> !transform.any_op\n";
    os << "    %interchanged" << sfx << " = transform.structured.interchange "
       << "%generic" << sfx << " iterator_interchange = ["
       << joinSizes(action.sizes)
       << "] : (!transform.any_op) -> !transform.any_op\n";
    tag("%interchanged" + sfx, options.opId, "%id" + sfx);
    break;
  case ActionKind::Vectorization: {
    match(op, options.opId);
    std::string target = op;
    if (options.decompose) {
      target = "%decomposed" + sfx;
      os << "    " << target << " = transform.structured.decompose " << op
         << " : (!transform.any_op) -> !transform.any_op\n";
    }
    os << "    transform.structured.vectorize " << target
       << " : !transform.any_op\n";
    break;
  }
  }
  return out;
}

std::string wrapTransformScript(StringRef body) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "module attributes {transform.with_named_sequence} {\n"
     << "  transform.named_sequence @__transform_main(%root: !transform.any_op "
        "{transform.readonly}) {\n"
     << body << "    transform.yield\n  }\n}\n";
  return out;
}

std::string buildTaggingScript(int64_t count) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "    // Number the linalg ops in pre-order, as the pass does.\n";
  if (count == 0)
    return out;
  os << "    %all = transform.structured.match interface{LinalgOp} in %root "
        ": (!transform.any_op) -> !transform.any_op\n    ";
  for (int64_t i = 0; i < count; ++i)
    os << (i ? ", " : "") << "%linalg_" << i;
  os << " = transform.split_handle %all : (!transform.any_op) -> ("
     << anyOps(count) << ")\n";
  for (int64_t i = 0; i < count; ++i) {
    os << "    %tag_" << i << " = transform.param.constant " << i
       << " : i64 -> !transform.param<i64>\n";
    os << "    transform.annotate %linalg_" << i << " \"" << kOpIdAttrName
       << "\" = %tag_" << i << " : !transform.any_op, !transform.param<i64>\n";
  }
  return out;
}

LogicalResult applyTransformScript(Operation *payload, StringRef script,
                                   std::string &error) {
  MLIRContext *ctx = payload->getContext();
  llvm::raw_string_ostream errs(error);
  // Collect everything the parser and the interpreter say.
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error ||
        diag.getSeverity() == DiagnosticSeverity::Warning) {
      errs << diag.str();
      for (Diagnostic &note : diag.getNotes())
        errs << "; note: " << note.str();
      errs << "\n";
    }
    return success();
  });
  OwningOpRef<ModuleOp> transformModule =
      parseSourceString<ModuleOp>(script, ParserConfig(ctx), "mlir-rl-action");
  if (!transformModule) {
    errs << "internal error: the generated transform script did not parse:\n"
         << script;
    return failure();
  }
  Operation *entry = transform::detail::findTransformEntryPoint(
      transformModule.get(), *transformModule,
      transform::TransformDialect::kTransformEntryPointSymbolName);
  if (!entry) {
    errs << "internal error: no @__transform_main in the generated script";
    return failure();
  }
  transform::TransformOptions options;
  // The handle-invalidation checks walk the payload for every transform; the
  // generated scripts never reuse a consumed handle (replays of dumped
  // schedules in tests run with the checks on, in mlir-opt).
  options.enableExpensiveChecks(false);
  if (failed(transform::applyTransformNamedSequence(payload, entry,
                                                    *transformModule, options)))
    return failure();
  return success();
}

} // namespace mlir::rl
