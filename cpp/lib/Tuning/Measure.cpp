//===- Measure.cpp - Measuring candidates outside the compiler ------------===//
#include "mlir-rl/Tuning/Measure.h"
#include "mlir-rl/Policy/OnnxPolicy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace mlir::rl {

std::string findMeasureTool() {
  if (std::string own = getOwnBinaryDirectory(); !own.empty()) {
    SmallString<256> dir(own);
    for (const char *rel : {"bin/mlir-rl-measure", "mlir-rl-measure",
                            "../bin/mlir-rl-measure",
                            "../tools/mlir-rl-measure/mlir-rl-measure"}) {
      SmallString<256> p(dir);
      llvm::sys::path::append(p, rel);
      if (llvm::sys::fs::can_execute(p))
        return std::string(p);
    }
  }
  if (auto found = llvm::sys::findProgramByName("mlir-rl-measure"))
    return *found;
  return "";
}

namespace {
/// A temporary file removed on scope exit.
struct TempFile {
  SmallString<128> path;
  explicit TempFile(StringRef suffix) {
    int fd;
    if (!llvm::sys::fs::createTemporaryFile("mlir-rl-measure", suffix, fd,
                                            path))
      ::close(fd);
  }
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
  bool write(StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return false;
    os << text;
    return true;
  }
  std::string read() const {
    auto buf = llvm::MemoryBuffer::getFile(path);
    return buf ? (*buf)->getBuffer().str() : std::string();
  }
};

/// "<status> <seconds> <detail>" into `m`.
void parseResult(StringRef rest, TunedMeasurement &m) {
  auto [status, tail] = rest.split(' ');
  auto [seconds, detail] = tail.split(' ');
  m.status = status.str();
  double s = 0;
  if (!seconds.getAsDouble(s))
    m.medianSeconds = s;
  m.detail = detail.str();
}
} // namespace

LogicalResult measureUnit(StringRef unitText, ArrayRef<std::string> schedules,
                          const MeasureOptions &options,
                          MeasureOutcome &outcome, std::string &error) {
  std::string tool = options.tool.empty() ? findMeasureTool() : options.tool;
  if (tool.empty() || !llvm::sys::fs::can_execute(tool)) {
    error = "the measurement helper mlir-rl-measure was not found" +
            (tool.empty() ? std::string(" (beside the library or on PATH)")
                          : " at '" + tool + "'") +
            "; measure-tool= names it";
    return failure();
  }
  TempFile unitFile(".mlir"), schedFile(".txt"), outFile(".out"),
      errFile(".err");
  std::string list;
  for (const std::string &s : schedules)
    list += s + "\n";
  if (!unitFile.write(unitText) || !schedFile.write(list)) {
    error = "cannot write the measurement's temporary files";
    return failure();
  }
  outcome = MeasureOutcome();
  outcome.candidates.assign(schedules.size(), TunedMeasurement());
  for (auto [i, s] : llvm::enumerate(schedules)) {
    outcome.candidates[i].schedule = s;
    outcome.candidates[i].status = "skipped";
  }
  outcome.baseline.status = "";

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  size_t first = 0;
  bool baselineKnown = false;
  while (true) {
    double spent =
        std::chrono::duration<double>(Clock::now() - start).count();
    double budget = options.budgetSeconds > 0
                        ? std::max(0.001, options.budgetSeconds - spent)
                        : 0;
    std::vector<std::string> args = {
        tool,
        unitFile.path.str().str(),
        "--schedules=" + schedFile.path.str().str(),
        "--first=" + std::to_string(first),
        "--threads=" + std::to_string(options.threads),
        "--runs=" + std::to_string(options.runs),
        "--warmup=" + std::to_string(options.warmup),
        "--seed=" + std::to_string(options.seed),
        "--budget-ms=" + std::to_string((int64_t)(budget * 1000)),
        "--cut=" + std::to_string(options.cutFactor),
        "--min-ms=" + std::to_string(options.minMilliseconds)};
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    std::optional<StringRef> redirects[] = {StringRef(""),
                                            StringRef(outFile.path),
                                            StringRef(errFile.path)};
    std::string message;
    bool failedToRun = false;
    auto t0 = Clock::now();
    llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(
        tool, argRefs, std::nullopt, redirects, 0, &message, &failedToRun);
    ++outcome.processes;
    if (failedToRun || child.Pid <= 0) {
      error = "cannot run " + tool + ": " + message;
      return failure();
    }
    // Wait for the helper, watching its reports: past the process timeout,
    // or once the baseline is reported, past the candidate timeout since the
    // last report, it is stopped (and the candidate it was on blamed).
    bool stopped = false, candidateStopped = false;
    int rc;
    {
      size_t reports = 0;
      auto lastReport = t0;
      while (true) {
        std::string waitMessage;
        llvm::sys::ProcessInfo done =
            llvm::sys::Wait(child, /*SecondsToWait=*/0, &waitMessage,
                            nullptr, /*Polling=*/true);
        if (done.Pid != 0) {
          rc = done.ReturnCode;
          if (!waitMessage.empty())
            message = waitMessage;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        auto now = Clock::now();
        std::string sofar = outFile.read();
        size_t n = (size_t)llvm::count(sofar, '\n');
        if (n != reports) {
          reports = n;
          lastReport = now;
        }
        bool pastTotal =
            std::chrono::duration<double>(now - t0).count() >=
            std::max(1.0, options.timeoutSeconds);
        bool pastCandidate =
            options.candidateTimeoutSeconds > 0 && reports > 0 &&
            std::chrono::duration<double>(now - lastReport).count() >=
                options.candidateTimeoutSeconds;
        if (pastTotal || pastCandidate) {
          ::kill(child.Pid, SIGKILL);
          llvm::sys::Wait(child, std::nullopt, nullptr);
          stopped = true;
          candidateStopped = !pastTotal;
          rc = -2;
          break;
        }
      }
    }
    // What the helper reported before it ended.
    int64_t last = (int64_t)first - 1;
    std::string reported = outFile.read();
    std::string printed; // by the measured code (a failed assertion's message)
    for (StringRef line : llvm::split(reported, '\n')) {
      if (!line.starts_with("baseline ") && !line.starts_with("candidate ") &&
          !line.trim().empty()) {
        printed = line.trim().take_front(200).str();
        continue;
      }
      if (line.consume_front("baseline ")) {
        if (!baselineKnown) {
          parseResult(line, outcome.baseline);
          baselineKnown = true;
        }
      } else if (line.consume_front("candidate ")) {
        auto [index, rest] = line.split(' ');
        size_t i;
        if (index.getAsInteger(10, i) || i >= schedules.size())
          continue;
        parseResult(rest, outcome.candidates[i]);
        if (outcome.candidates[i].status != "skipped")
          ++outcome.measured;
        last = std::max<int64_t>(last, i);
      }
    }
    if (rc == 0)
      break;
    // The helper died (or was stopped): blame what it was measuring.
    std::string why = stopped ? "timeout" : "crashed";
    // The helper's stderr without LLVM's crash boilerplate (stack frames).
    std::string stderrText;
    std::string errText = errFile.read();
    for (StringRef line : llvm::split(errText, '\n')) {
      StringRef t = line.trim();
      if (t.empty() || t.starts_with("#") || t.starts_with("PLEASE submit") ||
          t.starts_with("Stack dump") || t.starts_with("0.") ||
          t.starts_with("Program arguments"))
        continue;
      stderrText += (stderrText.empty() ? "" : " ") + t.str();
    }
    if (!printed.empty())
      stderrText = "the code printed '" + printed + "'" +
                   (stderrText.empty() ? "" : "; " + stderrText);
    std::string stderrTail = StringRef(stderrText).take_back(500).str();
    std::string detail = "mlir-rl-measure " +
                         (why == "timeout"
                              ? (candidateStopped
                                     ? "spent over " +
                                           std::to_string((int)options
                                                              .candidateTimeoutSeconds) +
                                           " s on one candidate"
                                     : "ran past " +
                                           std::to_string(
                                               (int)options.timeoutSeconds) +
                                           " s")
                              : "exited with " + std::to_string(rc)) +
                         (message.empty() ? "" : ": " + message) +
                         (stderrTail.empty() ? "" : "; " + stderrTail);
    if (!baselineKnown) {
      error = "the unit could not be measured unscheduled: " + detail;
      return failure();
    }
    size_t culprit = (size_t)(last + 1);
    if (culprit >= schedules.size())
      break;
    outcome.candidates[culprit].status = why;
    outcome.candidates[culprit].detail = detail;
    ++outcome.measured;
    first = culprit + 1;
    if (first >= schedules.size())
      break;
  }
  if (outcome.baseline.status != "ok") {
    error = "the unit could not be measured unscheduled: " +
            (outcome.baseline.status.empty()
                 ? std::string("no result")
                 : outcome.baseline.status + " " + outcome.baseline.detail);
    return failure();
  }
  return success();
}

} // namespace mlir::rl
