//===- mlir-rl-measure.cpp - The measurement helper of compile-time tuning ===//
//
// mlir-rl-measure UNIT.mlir --schedules=FILE [--first=I] [--threads=N]
//     [--runs=R] [--warmup=W] [--seed=S] [--budget-ms=B] [--cut=F]
//     [--min-ms=M]
//
// Times the unit's function unscheduled once (its outputs are the
// reference; unscheduled code can take seconds; a call shorter than M ms
// is timed again like a candidate; arguments are read-only, so that every
// call computes the same),
// then the unit with each schedule of FILE (one per line) from the I-th on:
// applied by the scheduler, lowered with mlir-rl-lower, JIT-compiled, run
// on the same seeded inputs. Prints one line per result (Tuning/Measure.h).
// A candidate stops as soon as one call takes longer than F x the best time
// so far and 10 ms more than it (`cut`); once B ms have passed, the remaining ones are `skipped`.
// Short functions get more than R timed calls, until they add up to M ms
// (microsecond kernels are too noisy in five calls).
// Runs in a process of its own, so that a candidate that crashes or hangs
// costs that candidate only (the caller restarts it after the culprit).
//
// Test hooks: MLIR_RL_MEASURE_CRASH_AT=I makes candidate I crash,
// MLIR_RL_MEASURE_HANG_AT=I makes it hang.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/ActionSpace/ScheduleText.h"
#include "mlir-rl/Runtime/Jit.h"
#include "mlir-rl/Pipeline/Registration.h"
#include "mlir-rl/Pipeline/SchedulePipeline.h"
#include "mlir-rl/Transforms/Lowering.h"
#include "mlir-rl/Transforms/Scheduler.h"
#include "mlir-rl/Tuning/OpUnit.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>
#include <csignal>
#include <cstdio>

using namespace mlir;
using namespace mlir::rl;

namespace {
/// The options (parsed by hand: llvm::cl's registry is shared with the
/// passes linked in, whose options have the same names).
struct Options {
  std::string unitPath, schedulesPath;
  unsigned first = 0;
  int threads = 1, runs = 5, warmup = 1;
  uint64_t seed = 0;
  int64_t budgetMs = 0;
  double cut = 1.25;
  double minMs = 20;
};

bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    StringRef a(argv[i]);
    auto [name, value] = a.split('=');
    bool bad = false;
    if (!a.starts_with("--")) {
      if (!o.unitPath.empty()) {
        error = "more than one unit: " + a.str();
        return false;
      }
      o.unitPath = a.str();
    } else if (name == "--schedules") {
      o.schedulesPath = value.str();
    } else if (name == "--first") {
      bad = value.getAsInteger(10, o.first);
    } else if (name == "--threads") {
      bad = value.getAsInteger(10, o.threads);
    } else if (name == "--runs") {
      bad = value.getAsInteger(10, o.runs);
    } else if (name == "--warmup") {
      bad = value.getAsInteger(10, o.warmup);
    } else if (name == "--seed") {
      bad = value.getAsInteger(10, o.seed);
    } else if (name == "--budget-ms") {
      bad = value.getAsInteger(10, o.budgetMs);
    } else if (name == "--cut") {
      bad = value.getAsDouble(o.cut);
    } else if (name == "--min-ms") {
      bad = value.getAsDouble(o.minMs);
    } else {
      error = "unknown option " + a.str();
      return false;
    }
    if (bad) {
      error = "bad value in " + a.str();
      return false;
    }
  }
  if (o.unitPath.empty() || o.schedulesPath.empty()) {
    error = "usage: mlir-rl-measure UNIT.mlir --schedules=FILE [--first=I] "
            "[--threads=N] [--runs=R] [--warmup=W] [--seed=S] "
            "[--budget-ms=B] [--cut=F] [--min-ms=M]";
    return false;
  }
  return true;
}
} // namespace

namespace {
void report(const std::string &what, const std::string &status, double seconds,
            std::string detail) {
  for (char &c : detail)
    if (c == '\n' || c == '\r')
      c = ' ';
  std::printf("%s %s %.9g %s\n", what.c_str(), status.c_str(), seconds,
              detail.c_str());
  std::fflush(stdout);
}

struct Result {
  std::string status;
  double seconds = 0;
  std::string detail;
  std::vector<HostTensor> outputs;
};

/// Schedules (unless `schedule` is empty), lowers and times a copy of the
/// unit.
Result measure(ModuleOp unit, const FunctionSignature &sig,
               const Options &o, const std::string &schedule,
               double abortAfter, bool keep, int warmupRuns, int timedRuns) {
  Result r;
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(unit->clone()));
  if (!schedule.empty()) {
    std::string error;
    std::optional<ExplicitSchedule> parsed = parseSchedule(schedule, error);
    if (!parsed)
      return {"apply_failed", 0, "malformed schedule: " + error, {}};
    // A trace's passes (the rules' packing) run first.
    SchedulePipeline pipeline(*copy);
    std::string message;
    ApplyStatus s = applyTrace(pipeline, *parsed,
                               getPassManagerRunner(*copy, message), message);
    pipeline.commit();
    if (s != ApplyStatus::Applied)
      return {"apply_failed", 0, message, {}};
  }
  // Every call reads the same inputs: a unit whose op accumulates into an
  // argument in place (its init comes from outside the unit: a producer
  // fused into an earlier consumer, a broadcast bias) would otherwise add
  // to it at every call, and a candidate timed for ten calls differed from
  // the reference called once ("wrong_output" for every schedule, NT too).
  markArgumentsReadOnly(*copy);
  std::string error;
  if (failed(lowerToLLVM(*copy, error)))
    return {"compile_failed", 0, error, {}};
  TimingOptions options;
  options.function = kOpUnitFunction;
  options.warmup = warmupRuns;
  options.runs = timedRuns;
  options.threads = o.threads;
  options.seed = o.seed;
  options.keepOutputs = keep;
  options.abortAfterSeconds = abortAfter;
  if (timedRuns > 1)
    options.minTimedSeconds = o.minMs / 1000;
  FailureOr<TimingResult> t = timeFunction(*copy, sig, options, error);
  if (failed(t))
    return {"compile_failed", 0, error, {}};
  r.seconds = t->median();
  if (t->aborted) {
    r.status = "cut";
    r.detail = "a call took longer than " + std::to_string(abortAfter) + " s";
    return r;
  }
  r.status = "ok";
  r.outputs = std::move(t->outputs);
  return r;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Unbuffered: what the measured code prints before it aborts (a failed
  // cf.assert's message) reaches the caller, which shows it as the reason.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  Options o;
  std::string usage;
  if (!parseOptions(argc, argv, o, usage)) {
    llvm::errs() << "mlir-rl-measure: " << usage << "\n";
    return 1;
  }
  registerAllPassesOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> unit =
      parseSourceFile<ModuleOp>(o.unitPath, sourceMgr, &context);
  if (!unit) {
    report("baseline", "compile_failed", 0, "cannot parse " + o.unitPath);
    return 0;
  }
  auto buf = llvm::MemoryBuffer::getFile(o.schedulesPath);
  if (!buf) {
    llvm::errs() << "cannot read " << o.schedulesPath << "\n";
    return 1;
  }
  std::vector<std::string> schedules;
  for (StringRef line : llvm::split((*buf)->getBuffer(), '\n'))
    if (!line.trim().empty())
      schedules.push_back(line.trim().str());

  std::string error;
  FailureOr<FunctionSignature> sig =
      getFunctionSignature(*unit, kOpUnitFunction, error);
  if (failed(sig)) {
    report("baseline", "compile_failed", 0, error);
    return 0;
  }
  Result base = measure(*unit, *sig, o, "", 0, /*keep=*/true,
                        /*warmupRuns=*/0, /*timedRuns=*/1);
  if (base.status == "ok" && base.seconds * 1000 < o.minMs) {
    // Short enough to time as carefully as the candidates it is held to.
    Result again = measure(*unit, *sig, o, "", 0, /*keep=*/true, o.warmup,
                           o.runs);
    if (again.status == "ok")
      base.seconds = again.seconds;
  }
  report("baseline", base.status, base.seconds, base.detail);
  if (base.status != "ok")
    return 0;

  const char *crashAt = std::getenv("MLIR_RL_MEASURE_CRASH_AT");
  const char *hangAt = std::getenv("MLIR_RL_MEASURE_HANG_AT");
  double best = base.seconds;
  auto start = std::chrono::steady_clock::now();
  for (size_t i = o.first; i < schedules.size(); ++i) {
    std::string what = "candidate " + std::to_string(i);
    double spent = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    if (o.budgetMs > 0 && spent * 1000 > o.budgetMs) {
      report(what, "skipped", 0, "the budget was spent");
      continue;
    }
    if (crashAt && std::to_string(i) == crashAt)
      std::raise(SIGSEGV);
    if (hangAt && std::to_string(i) == hangAt)
      std::this_thread::sleep_for(std::chrono::hours(1));
    // The cut saves the time of slow candidates; below 10 ms over the best
    // there is nothing to save, and one call of a short op (an OpenMP wake
    // up, a page fault) must not end a candidate.
    double abortAfter = std::max(o.cut * best, best + 0.01);
    Result r = measure(*unit, *sig, o, schedules[i], abortAfter, /*keep=*/true,
                       o.warmup, o.runs);
    if (r.status == "ok") {
      double err;
      if (!outputsMatch(r.outputs, base.outputs, err)) {
        r.status = "wrong_output";
        r.detail = "max abs error " + std::to_string(err);
      } else {
        best = std::min(best, r.seconds);
      }
    }
    report(what, r.status, r.seconds, r.detail);
  }
  return 0;
}
