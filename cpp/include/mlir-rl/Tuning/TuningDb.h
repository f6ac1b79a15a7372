//===- TuningDb.h - Measured schedules, remembered --------------*- C++ -*-===//
//
// A SQLite database of compile-time tuning. A unit (OpUnit) is keyed by its
// signature (hash of its canonical text), the host (machine name, CPU
// model, cores) and the context (feature-layout hash, lowering version,
// thread count). It holds every measurement made for a key and the winner:
// the root op's actions that a later compile applies without measuring.
// Merging databases keeps each host's entries apart (the host is part of
// every key); on a conflict the faster winner stays.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TUNING_TUNINGDB_H
#define MLIR_RL_TUNING_TUNINGDB_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace mlir::rl {

/// One candidate's measurement.
struct TunedMeasurement {
  std::string schedule;  // the unit's schedule ("" for unscheduled)
  std::string status;    // ok, cut, wrong_output, apply_failed, crashed, ...
  double medianSeconds = 0;
  std::string detail;
};

/// What a later compile applies.
struct TunedWinner {
  std::string rootActions; // e.g. "TP(32,64,0) T(8,32,8) V", or "NT"
  double medianSeconds = 0;
  double baselineSeconds = 0; // the unit unscheduled
  int64_t candidates = 0;
};

/// The key of a unit's entries.
struct TuningKey {
  std::string signature, host, context;
};

class TuningDb {
public:
  /// Opens (creating it and its tables if needed) the database at `path`.
  static std::unique_ptr<TuningDb> open(StringRef path, std::string &error);
  ~TuningDb();

  std::optional<TunedWinner> lookup(const TuningKey &key);
  /// Stores the unit's text, every measurement and the winner in one
  /// transaction.
  LogicalResult record(const TuningKey &key, StringRef opName,
                       StringRef unitText,
                       ArrayRef<TunedMeasurement> measurements,
                       const TunedWinner &winner, std::string &error);

  /// Every winner with its op's name, as JSON lines' objects:
  /// {signature, host, context, op, schedule, median_s, baseline_s,
  /// candidates, measurements}.
  std::string exportJson(bool withUnits);
  /// Copies `other`'s units, measurements and winners in; a winner already
  /// here for the same key is replaced only by a faster one. Returns the
  /// number of winners added or replaced.
  FailureOr<int64_t> merge(StringRef otherPath, std::string &error);

private:
  TuningDb() = default;
  LogicalResult exec(const char *sql, std::string &error);
  sqlite3 *db = nullptr;
};

/// The host part of a key: machine name, CPU model, logical cores.
std::string getTuningHost();

/// The version of how the helper measures (mlir-rl-measure): bumped when a
/// change can decide differently on the same unit, so that a database's
/// earlier winners are not reused across it. 2: arguments read-only (a unit
/// accumulating into one had every candidate rejected as wrong_output).
/// 3: the heuristic's decisions are a candidate; the module check measures
/// a narrow win twice. 4: the module check times at least 200 ms per
/// candidate and measures any win of a module shorter than 1 ms twice.
constexpr const char kMeasurementVersion[] = "4";

/// The context part of a key: feature layout, legality, lowering,
/// measurement, threads.
std::string getTuningContext(int threads);

} // namespace mlir::rl

#endif // MLIR_RL_TUNING_TUNINGDB_H
