//===- Measure.h - Measuring candidates outside the compiler ----*- C++ -*-===//
//
// Candidates are measured by a helper executable, mlir-rl-measure, in a
// process of its own: a candidate that crashes, hangs or miscompiles costs
// that candidate, never the compiler. The helper times the unit
// unscheduled (the reference outputs, seeded inputs), then each candidate
// schedule: applied, lowered with mlir-rl-lower, JIT-compiled, a warm-up,
// the median of a few runs, outputs checked against the reference. A
// candidate is stopped as soon as one call is slower than the best so far
// (status `cut`). When the helper dies, the candidate it was measuring is
// recorded as `crashed` (or `timeout`) and a new helper goes on with the
// next one.
//
// The helper's protocol (stdout, one line each, flushed):
//   baseline <status> <median seconds> <detail>
//   candidate <index> <status> <median seconds> <detail>
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_MEASURE_H
#define MLIR_RL_TUNING_MEASURE_H

#include "mlir-rl/Tuning/TuningDb.h"

#include <string>
#include <vector>

namespace mlir::rl {

struct MeasureOptions {
  std::string tool;          // the helper ("": findMeasureTool())
  int threads = 1;
  int runs = 5;
  int warmup = 1;
  uint64_t seed = 0;
  double budgetSeconds = 0;  // for the candidates of one unit (0: none)
  double timeoutSeconds = 120; // one helper process
  /// One candidate's compile and measurement (0: no limit): past it the
  /// helper is stopped and the candidate counts as a timeout. A unit's
  /// candidates compile in about a second; a vector transposed element by
  /// element (a relu interchanged, then vectorized 64x56) took 88 s.
  double candidateTimeoutSeconds = 15;
  /// A call slower than this x the best so far stops a candidate.
  double cutFactor = 1.25;
  /// Short functions are called until their timed calls add up to this.
  double minMilliseconds = 20;
};

struct MeasureOutcome {
  TunedMeasurement baseline;
  std::vector<TunedMeasurement> candidates; // one per schedule, in order
  int processes = 0;   // helpers started
  int64_t measured = 0; // candidates the helper ran (not skipped)
};

/// Measures the unit (its text) unscheduled and with each schedule.
/// Fails (with `error`) only when no helper could be run or the unscheduled
/// unit could not be measured.
LogicalResult measureUnit(StringRef unitText, ArrayRef<std::string> schedules,
                          const MeasureOptions &options,
                          MeasureOutcome &outcome, std::string &error);

/// The helper installed with this library: bin/mlir-rl-measure beside it
/// (or ../bin/), else on PATH; "" if none.
std::string findMeasureTool();

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_MEASURE_H
