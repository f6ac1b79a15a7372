//===- FrontEnd.cpp - The rewrites before the decisions, defined once -----===//
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Padding.h"
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

namespace mlir::rl {

const std::vector<FrontEndStage> &getFrontEndStages() {
  static const std::vector<FrontEndStage> stages = {
      // First: the stages after it see f32 arithmetic between loads and
      // stores of bf16 (and the rounding of a reduction's result fuses
      // into its consumer).
      {"compute-in-f32",
       &FrontEndOptions::computeInF32,
       {{"mlir-rl-compute-in-f32", {}, {}}}},
      // Before fusion: a matmul's operands are still the extensions of
      // bf16 values (of a transposed constant: a linear layer's weight).
      {"bf16-dot",
       &FrontEndOptions::bf16Dot,
       {{"mlir-rl-bf16-dot", {}, {}}}},
      {"fuse-elementwise",
       &FrontEndOptions::fuseElementwise,
       {{"mlir-rl-fuse-elementwise", {}, {}}, {"canonicalize", {}, {}},
        {"cse", {}, {}}}},
      {"rewrite-windows",
       &FrontEndOptions::rewriteWindows,
       {{"mlir-rl-conv-to-matmul", {}, {}},
        {"mlir-rl-unroll-windows", {{"nhwc-depthwise", false}}, {}},
        {"canonicalize", {}, {}},
        {"cse", {}, {}},
        {"mlir-rl-untie-inits", {}, {}}}},
      {"pad-to-tiles",
       &FrontEndOptions::padToTiles,
       {{"mlir-rl-pad-to-tiles", {}, {}}}},
      {"flatten-elementwise",
       &FrontEndOptions::flattenElementwise,
       {{"mlir-rl-flatten-elementwise", {}, {}}}},
  };
  return stages;
}

std::vector<PassStep> getFrontEndSteps(const FrontEndOptions &options) {
  std::vector<PassStep> steps;
  for (const FrontEndStage &stage : getFrontEndStages())
    if (options.*stage.enabled)
      steps.insert(steps.end(), stage.steps.begin(), stage.steps.end());
  return steps;
}

bool PassStep::onModule() const { return name == "mlir-rl-pack-rhs"; }

/// One step as pipeline text: "name{k=v k=1,2}".
static std::string formatPassStep(const PassStep &step) {
  std::string text = step.name;
  std::vector<std::string> opts;
  for (const auto &[key, value] : step.options)
    opts.push_back(key + "=" + (value ? "true" : "false"));
  for (const auto &[key, value] : step.intOptions)
    opts.push_back(key + "=" + std::to_string(value));
  for (const auto &[key, values] : step.listOptions) {
    std::vector<std::string> items;
    for (int64_t v : values)
      items.push_back(std::to_string(v));
    opts.push_back(key + "=" + llvm::join(items, ","));
  }
  if (!opts.empty())
    text += "{" + llvm::join(opts, " ") + "}";
  return text;
}

std::string formatPassSteps(ArrayRef<PassStep> steps) {
  std::string text;
  for (const PassStep &step : steps)
    text += (text.empty() ? "" : ",") + formatPassStep(step);
  return text;
}

/// The passes a trace's prelude may name.
static const std::set<std::string> &getTraceablePasses() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out{"mlir-rl-pack-rhs", "mlir-rl-untie-empties"};
    for (const FrontEndStage &stage : getFrontEndStages())
      for (const PassStep &step : stage.steps)
        out.insert(step.name);
    return out;
  }();
  return names;
}

LogicalResult parsePassSteps(StringRef text, std::vector<PassStep> &steps,
                             std::string &error) {
  text = text.trim();
  while (!text.empty()) {
    size_t end = text.find_first_of(",{");
    PassStep step;
    step.name = text.take_front(end).trim().str();
    text = end == StringRef::npos ? StringRef() : text.drop_front(end);
    if (!getTraceablePasses().count(step.name)) {
      error = "'" + step.name +
              "' is not a pass of the front end or the rules (" +
              llvm::join(getTraceablePasses(), ", ") + ")";
      return failure();
    }
    if (text.consume_front("{")) {
      size_t close = text.find('}');
      if (close == StringRef::npos) {
        error = "unclosed '{' in the options of " + step.name;
        return failure();
      }
      SmallVector<StringRef> opts;
      text.take_front(close).split(opts, ' ', -1, /*KeepEmpty=*/false);
      text = text.drop_front(close + 1);
      for (StringRef opt : opts) {
        auto [key, value] = opt.split('=');
        int64_t number;
        if (value == "true" || value == "false") {
          step.options.emplace_back(key.str(), value == "true");
        } else if (!value.getAsInteger(10, number)) {
          step.intOptions.emplace_back(key.str(), number);
        } else {
          SmallVector<StringRef> items;
          value.split(items, ',');
          std::vector<int64_t> numbers;
          for (StringRef item : items) {
            if (item.trim().getAsInteger(10, number)) {
              error = "option '" + opt.str() + "' of " + step.name +
                      " is neither key=true|false, key=<integer> nor "
                      "key=<integer>,<integer>,...";
              return failure();
            }
            numbers.push_back(number);
          }
          step.listOptions.emplace_back(key.str(), std::move(numbers));
        }
      }
    }
    steps.push_back(std::move(step));
    text = text.trim();
    if (!text.empty() && !text.consume_front(",")) {
      error = "expected ',' between passes at '" + text.str() + "'";
      return failure();
    }
    text = text.trim();
  }
  return success();
}

LogicalResult buildPassStepsPipeline(OpPassManager &pm,
                                     ArrayRef<PassStep> steps) {
  // Consecutive func.func steps nested together; module steps alone.
  std::string text;
  for (size_t i = 0; i < steps.size();) {
    text += text.empty() ? "" : ",";
    if (steps[i].onModule()) {
      text += formatPassStep(steps[i++]);
      continue;
    }
    size_t j = i;
    while (j < steps.size() && !steps[j].onModule())
      ++j;
    text += "func.func(" + formatPassSteps(steps.slice(i, j - i)) + ")";
    i = j;
  }
  return buildPipelineFromText(pm, "builtin.module(" + text + ")",
                               "front end");
}

const std::string &getPreparePipeline() {
  static const std::string pipeline = "builtin.module(mlir-rl-prepare)";
  return pipeline;
}

LogicalResult buildPreparePipeline(OpPassManager &pm) {
  return buildPipelineFromText(pm, getPreparePipeline(), "prepare");
}

std::function<LogicalResult(OpPassManager &)>
getPassManagerRunner(ModuleOp module, std::string &error) {
  registerTransformsAndUpstreamPassesOnce();
  return [module, &error](OpPassManager &steps) mutable {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    static_cast<OpPassManager &>(pm) = steps;
    return runWithDiagnostics(pm, module, error, "front end");
  };
}

LogicalResult prepareModule(ModuleOp module, std::string &error) {
  std::vector<PassStep> ran;
  return applyFrontEnd(module, FrontEndOptions(),
                       getPassManagerRunner(module, error), ran, error);
}

LogicalResult runPassSteps(ModuleOp module, ArrayRef<PassStep> steps,
                           PipelineRunner run, std::string &error) {
  if (steps.empty())
    return success();
  OpPassManager pm(ModuleOp::getOperationName());
  if (failed(buildPassStepsPipeline(pm, steps)) || failed(run(pm))) {
    if (error.empty())
      error = "the passes " + formatPassSteps(steps) + " failed";
    return failure();
  }
  return success();
}

LogicalResult applyFrontEnd(ModuleOp module, const FrontEndOptions &options,
                            PipelineRunner run, std::vector<PassStep> &ran,
                            std::string &error) {
  if (module->hasAttr(kFrontEndAttrName))
    return success();
  for (const FrontEndStage &stage : getFrontEndStages()) {
    if (!(options.*stage.enabled))
      continue;
    // Cheap checks first where a stage has one.
    StringRef name = stage.option;
    if ((name == "compute-in-f32" && !hasLowPrecisionOps(module)) ||
        (name == "bf16-dot" &&
         (!hostHasBf16Dot() || !hasLowPrecisionOps(module))) ||
        (name == "pad-to-tiles" && !hasOpsToPad(module)) ||
        (name == "flatten-elementwise" && !hasOpsToFlatten(module)))
      continue;
    OperationFingerPrint before(module);
    if (failed(runPassSteps(module, stage.steps, run, error))) {
      error = "the front end's " + name.str() + " stage failed: " + error;
      return failure();
    }
    if (OperationFingerPrint(module) != before)
      ran.insert(ran.end(), stage.steps.begin(), stage.steps.end());
  }
  module->setAttr(kFrontEndAttrName, UnitAttr::get(module.getContext()));
  return success();
}

} // namespace mlir::rl

namespace mlir::rl {
#define GEN_PASS_DEF_PREPARE
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {
struct PreparePass : public mlir::rl::impl::PrepareBase<PreparePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    if (succeeded(mlir::rl::buildPassStepsPipeline(
            pm, mlir::rl::getFrontEndSteps(mlir::rl::FrontEndOptions()))))
      pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    std::vector<mlir::rl::PassStep> ran;
    if (failed(mlir::rl::applyFrontEnd(
            module, mlir::rl::FrontEndOptions(),
            [&](OpPassManager &pm) { return runPipeline(pm, module); }, ran,
            error))) {
      module.emitError() << "mlir-rl-prepare: " << error;
      signalPassFailure();
    }
  }
};
} // namespace
