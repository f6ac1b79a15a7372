//===- Tuner.h - The policy proposes, the machine measures ------*- C++ -*-===//
//
// linalg-rl-schedule with search=K or tuning-db=FILE. Op by op, consumers
// first (the pass's order): the op is cut out as a unit (OpUnit); a winner
// in the database for its signature, host and context is applied without
// measuring; otherwise, with search=K, the policy's K most likely schedules
// plus NT (Proposals) are measured by the helper (Measure) and the fastest
// whose outputs are equal is applied -- NT when none beats the unit
// unscheduled -- and everything measured is recorded. An op that cannot be
// cut out or measured is scheduled by the policy as without search.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_TUNER_H
#define MLIR_RL_TUNING_TUNER_H

#include "mlir-rl/Transforms/Packing.h"
#include "mlir-rl/Transforms/Scheduler.h"
#include "mlir-rl/Tuning/Measure.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::rl {

struct TuningOptions {
  int search = 0;          // K: schedules measured per op (0: the database only)
  std::string dbPath;      // "" : no database
  double budgetMs = 0;     // per op, for its candidates (0: none)
  int threads = 0;         // the thread count the code runs with (0: all)
  MeasureOptions measure;  // threads/budget are set from the above
  /// The pipeline's post-decision rules, through which every candidate
  /// is measured (SchedulePipeline); the pass sets its own.
  Rescheduling rules;
};

struct TuningStats {
  int64_t ops = 0;
  int64_t fromDb = 0;       // winners applied from the database
  int64_t searched = 0;     // ops whose candidates were measured
  int64_t policyOnly = 0;   // ops scheduled by the policy alone
  int64_t measurements = 0; // candidates measured (baselines not counted)
  int64_t processes = 0;    // helpers started
  std::vector<double> searchSeconds; // per searched op
};

/// One line per op ("op 3 (linalg.matmul): ..."), at the op's location.
using TuningReport = std::function<void(int64_t id, const std::string &)>;

/// The thread count tuning measures with and keys on: `options.threads`,
/// else every core.
int getTuningThreads(const TuningOptions &options);

/// The tuning database's context for `options` (TuningDb.h's
/// getTuningContext with the rules measured through).
std::string getTuningContext(const TuningOptions &options);
/// A median for a remark: "1.23 ms" (three significant digits).
std::string formatMilliseconds(double seconds);

/// Schedules every supported op of `scheduler`'s module (see above).
LogicalResult tuneWithPolicy(Scheduler &scheduler, PolicyFn policy,
                             const TuningOptions &options, TuningStats &stats,
                             PolicyStats &policyStats,
                             const TuningReport &report, std::string &error);

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_TUNER_H
