//===- Tuner.cpp - The policy proposes, the machine measures --------------===//
#include "mlir-rl/Tuning/Tuner.h"

#include "llvm/ADT/ScopeExit.h"
#include "mlir-rl/Tuning/OpUnit.h"
#include "mlir-rl/Tuning/Proposals.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <chrono>
#include <map>
#include <thread>

namespace mlir::rl {

std::string formatMilliseconds(double seconds) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.3g ms", seconds * 1e3);
  return s;
}

int getTuningThreads(const TuningOptions &options) {
  return options.threads > 0
             ? options.threads
             : (int)std::max(1u, std::thread::hardware_concurrency());
}

/// Applies `actions` (a root's schedule text, with its rule choices) to op
/// `id`, recorded as coming from `source`.
static LogicalResult applyActions(Scheduler &scheduler, int64_t id,
                                  StringRef actions, std::string &message,
                                  StringRef source) {
  std::optional<ExplicitSchedule> parsed = parseSchedule(actions, message);
  if (!parsed)
    return failure();
  std::string before = scheduler.getSource();
  scheduler.setSource(source.str());
  auto restore = llvm::make_scope_exit([&] { scheduler.setSource(before); });
  for (const ExplicitSchedule::Entry &e : parsed->entries) {
    if (!e.choices.empty() &&
        scheduler.setChoices(id, e.choices, message) != ApplyStatus::Applied)
      return failure();
    for (const Action &a : e.actions)
      if (scheduler.apply(id, a, message) != ApplyStatus::Applied)
        return failure();
  }
  return success();
}

std::string getTuningContext(const TuningOptions &options) {
  const Rescheduling &r = options.rules;
  return getTuningContext(getTuningThreads(options)) + ";rules=" +
         (r.pack ? "pack" + std::to_string(r.minRowsToCopy) : "") +
         (r.registerTiles ? ",register-tiles" : "") +
         (r.copies ? ",copies" : "");
}

LogicalResult tuneWithPolicy(Scheduler &scheduler, PolicyFn policy,
                             const TuningOptions &options, TuningStats &stats,
                             PolicyStats &policyStats,
                             const TuningReport &report, std::string &error) {
  using Clock = std::chrono::steady_clock;
  std::unique_ptr<TuningDb> db;
  if (!options.dbPath.empty()) {
    db = TuningDb::open(options.dbPath, error);
    if (!db)
      return failure();
  }
  int threads = getTuningThreads(options);
  MeasureOptions measure = options.measure;
  measure.threads = threads;
  measure.budgetSeconds = options.budgetMs / 1000.0;
  const std::string host = getTuningHost();
  const std::string context = getTuningContext(options);
  PolicyRunOptions greedy;
  std::mt19937_64 rng(0);

  auto byPolicy = [&](int64_t id, const std::string &why) -> LogicalResult {
    ++stats.policyOnly;
    if (!why.empty())
      report(id, why + "; scheduled by the policy");
    return scheduler.scheduleOpWithPolicy(id, policy, greedy, rng,
                                          policyStats, error);
  };

  for (int64_t id : scheduler.getTraversalOrder()) {
    const OpRecord *rec = scheduler.getRecord(id);
    if (rec->state.done)
      continue;
    ++stats.ops;
    std::string prefix =
        "op " + std::to_string(id) + " (" + rec->name + "): ";
    std::string why;
    FailureOr<OpUnit> unit = extractOpUnit(scheduler, id, why);
    if (failed(unit)) {
      if (failed(byPolicy(id, prefix + "not tuned: " + why)))
        return failure();
      continue;
    }
    TuningKey key{hashText(unit->text), host, context};
    if (db) {
      if (std::optional<TunedWinner> w = db->lookup(key)) {
        std::string message;
        if (succeeded(applyActions(scheduler, id, w->rootActions, message,
                                   "tuning database"))) {
          ++stats.fromDb;
          report(id, prefix + "from the tuning database: " + w->rootActions +
                         " (" + formatMilliseconds(w->medianSeconds) +
                         ", unscheduled " + formatMilliseconds(w->baselineSeconds) +
                         ")");
          continue;
        }
        // A winner that no longer applies: the policy goes on from there.
        if (failed(byPolicy(id, prefix + "the database's schedule '" +
                                    w->rootActions +
                                    "' does not apply: " + message)))
          return failure();
        continue;
      }
    }
    if (unit->module->lookupSymbol<FunctionOpInterface>(kOpUnitFunction)
            .getNumArguments() == 0) {
      // Nothing comes in: the lowering folds what it computes to a
      // constant, and a time of it says nothing.
      if (failed(byPolicy(id, options.search > 0
                                  ? prefix + "not tuned: it computes a "
                                             "constant"
                                  : "")))
        return failure();
      continue;
    }
    if (options.search <= 0) {
      if (failed(byPolicy(id, "")))
        return failure();
      continue;
    }

    auto t0 = Clock::now();
    FailureOr<std::vector<Proposal>> proposals = proposeSchedules(
        *unit->module, unit->rootId, policy, scheduler.getConfig(),
        options.search, options.rules, error);
    if (failed(proposals))
      return failure();
    std::vector<std::string> schedules;
    for (const Proposal &p : *proposals)
      schedules.push_back(p.unitSchedule);
    MeasureOutcome outcome;
    std::string measureError;
    if (failed(measureUnit(unit->text, schedules, measure, outcome,
                           measureError))) {
      if (failed(byPolicy(id, prefix + "not tuned: " + measureError)))
        return failure();
      continue;
    }
    ++stats.searched;
    stats.measurements += outcome.measured;
    stats.processes += outcome.processes;

    // The fastest candidate whose outputs are equal; NT when none beats
    // the unit unscheduled. The policy's own schedule (the first) keeps
    // its place unless another one is faster by more than the noise of a
    // median (kPreferGreedy): a schedule that wins by 1% on the unit is
    // a coin toss in the module.
    // Below a millisecond the unit's differences carry over to the module
    // less well (an im2col copy writes into a slice of a shared buffer
    // there, into its own tensor here): another schedule must win by 10%.
    const TunedMeasurement &first = outcome.candidates.front();
    const double kPreferGreedy = first.medianSeconds < 1e-3 ? 0.10 : 0.03;
    TunedWinner winner;
    winner.rootActions = "NT";
    winner.medianSeconds = outcome.baseline.medianSeconds;
    winner.baselineSeconds = outcome.baseline.medianSeconds;
    winner.candidates = schedules.size();
    bool greedyOk =
        first.status == "ok" && first.medianSeconds < winner.medianSeconds;
    if (greedyOk) {
      winner.rootActions = proposals->front().rootActions;
      winner.medianSeconds = first.medianSeconds;
    }
    double bar = greedyOk ? winner.medianSeconds * (1 - kPreferGreedy)
                          : winner.medianSeconds;
    for (auto [p, m] : llvm::drop_begin(llvm::zip(*proposals,
                                                  outcome.candidates)))
      if (m.status == "ok" && m.medianSeconds < bar &&
          m.medianSeconds < winner.medianSeconds) {
        winner.rootActions = p.rootActions;
        winner.medianSeconds = m.medianSeconds;
      }
    std::string message;
    if (failed(applyActions(scheduler, id, winner.rootActions, message,
                            "search"))) {
      // Measured on the unit, but not applicable in the module: not
      // recorded.
      if (failed(byPolicy(id, prefix + "the winner '" + winner.rootActions +
                                  "' does not apply in the module: " +
                                  message)))
        return failure();
      continue;
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    stats.searchSeconds.push_back(seconds);
    if (db) {
      std::vector<TunedMeasurement> all = outcome.candidates;
      all.push_back(outcome.baseline);
      if (failed(db->record(key, rec->name, unit->text, all, winner, error)))
        return failure();
    }
    std::map<std::string, int> statuses;
    for (const TunedMeasurement &m : outcome.candidates)
      ++statuses[m.status];
    std::string counts;
    for (auto &[status, n] : statuses)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + status;
    std::string line;
    llvm::raw_string_ostream os(line);
    os << prefix << "tuned " << schedules.size() << " candidates (" << counts
       << ") in " << llvm::format("%.2f", seconds)
       << " s: " << winner.rootActions << " " << formatMilliseconds(winner.medianSeconds)
       << "; the policy's " << (*proposals).front().rootActions << " "
       << (first.status == "ok" ? formatMilliseconds(first.medianSeconds)
                                : first.status)
       << "; unscheduled " << formatMilliseconds(outcome.baseline.medianSeconds);
    report(id, line);
  }
  return success();
}

} // namespace mlir::rl
