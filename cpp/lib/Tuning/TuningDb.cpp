//===- TuningDb.cpp - Measured schedules, remembered ----------------------===//
#include "mlir-rl/Tuning/TuningDb.h"
#include "mlir-rl/Analysis/FeatureLayout.h"
#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Transforms/Lowering.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace mlir::rl {

static const char *kSchema = R"sql(
CREATE TABLE IF NOT EXISTS units (
  signature TEXT PRIMARY KEY,
  op        TEXT NOT NULL,   -- the root op's name
  unit      TEXT NOT NULL    -- the unit's canonical text
);
CREATE TABLE IF NOT EXISTS measurements (
  signature TEXT NOT NULL,
  host      TEXT NOT NULL,
  context   TEXT NOT NULL,
  schedule  TEXT NOT NULL,   -- the unit's schedule ('' unscheduled)
  status    TEXT NOT NULL,
  median_s  REAL,
  detail    TEXT,
  created   REAL NOT NULL,
  PRIMARY KEY (signature, host, context, schedule)
);
CREATE TABLE IF NOT EXISTS winners (
  signature   TEXT NOT NULL,
  host        TEXT NOT NULL,
  context     TEXT NOT NULL,
  schedule    TEXT NOT NULL, -- the root op's actions
  median_s    REAL NOT NULL,
  baseline_s  REAL NOT NULL,
  candidates  INTEGER NOT NULL,
  created     REAL NOT NULL,
  PRIMARY KEY (signature, host, context)
);
)sql";

static double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
/// A prepared statement, finalized on scope exit.
struct Statement {
  sqlite3_stmt *stmt = nullptr;
  Statement(sqlite3 *db, const char *sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK)
      stmt = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt); }
  explicit operator bool() const { return stmt != nullptr; }
  void bind(int i, StringRef s) {
    sqlite3_bind_text(stmt, i, s.data(), (int)s.size(), SQLITE_TRANSIENT);
  }
  void bind(int i, double d) { sqlite3_bind_double(stmt, i, d); }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt, i, v); }
  std::string text(int i) {
    const unsigned char *t = sqlite3_column_text(stmt, i);
    return t ? std::string(reinterpret_cast<const char *>(t)) : std::string();
  }
};
} // namespace

std::unique_ptr<TuningDb> TuningDb::open(StringRef path, std::string &error) {
  std::unique_ptr<TuningDb> out(new TuningDb());
  std::string p = path.str();
  if (sqlite3_open_v2(p.c_str(), &out->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    error = "cannot open the tuning database '" + p +
            "': " + (out->db ? sqlite3_errmsg(out->db) : "out of memory");
    return nullptr;
  }
  sqlite3_busy_timeout(out->db, 60000);
  if (failed(out->exec("PRAGMA journal_mode=WAL", error)) ||
      failed(out->exec(kSchema, error))) {
    error = "the tuning database '" + p + "': " + error;
    return nullptr;
  }
  return out;
}

TuningDb::~TuningDb() { sqlite3_close(db); }

LogicalResult TuningDb::exec(const char *sql, std::string &error) {
  char *message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK)
    return success();
  error = message ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  return failure();
}

std::optional<TunedWinner> TuningDb::lookup(const TuningKey &key) {
  Statement s(db, "SELECT schedule, median_s, baseline_s, candidates FROM "
                  "winners WHERE signature=? AND host=? AND context=?");
  if (!s)
    return std::nullopt;
  s.bind(1, key.signature);
  s.bind(2, key.host);
  s.bind(3, key.context);
  if (sqlite3_step(s.stmt) != SQLITE_ROW)
    return std::nullopt;
  TunedWinner w;
  w.rootActions = s.text(0);
  w.medianSeconds = sqlite3_column_double(s.stmt, 1);
  w.baselineSeconds = sqlite3_column_double(s.stmt, 2);
  w.candidates = sqlite3_column_int64(s.stmt, 3);
  return w;
}

LogicalResult TuningDb::record(const TuningKey &key, StringRef opName,
                               StringRef unitText,
                               ArrayRef<TunedMeasurement> measurements,
                               const TunedWinner &winner, std::string &error) {
  if (failed(exec("BEGIN IMMEDIATE", error)))
    return failure();
  auto fail = [&]() {
    error = sqlite3_errmsg(db);
    std::string ignored;
    (void)exec("ROLLBACK", ignored);
    return failure();
  };
  double t = now();
  {
    Statement s(db, "INSERT OR IGNORE INTO units VALUES (?,?,?)");
    if (!s)
      return fail();
    s.bind(1, key.signature);
    s.bind(2, opName);
    s.bind(3, unitText);
    if (sqlite3_step(s.stmt) != SQLITE_DONE)
      return fail();
  }
  for (const TunedMeasurement &m : measurements) {
    Statement s(db, "INSERT OR REPLACE INTO measurements VALUES "
                    "(?,?,?,?,?,?,?,?)");
    if (!s)
      return fail();
    s.bind(1, key.signature);
    s.bind(2, key.host);
    s.bind(3, key.context);
    s.bind(4, m.schedule);
    s.bind(5, m.status);
    s.bind(6, m.medianSeconds);
    s.bind(7, StringRef(m.detail).take_front(2000));
    s.bind(8, t);
    if (sqlite3_step(s.stmt) != SQLITE_DONE)
      return fail();
  }
  {
    Statement s(db, "INSERT OR REPLACE INTO winners VALUES (?,?,?,?,?,?,?,?)");
    if (!s)
      return fail();
    s.bind(1, key.signature);
    s.bind(2, key.host);
    s.bind(3, key.context);
    s.bind(4, winner.rootActions);
    s.bind(5, winner.medianSeconds);
    s.bind(6, winner.baselineSeconds);
    s.bind(7, winner.candidates);
    s.bind(8, t);
    if (sqlite3_step(s.stmt) != SQLITE_DONE)
      return fail();
  }
  return exec("COMMIT", error);
}

std::string TuningDb::exportJson(bool withUnits) {
  llvm::json::Array rows;
  Statement s(db,
              "SELECT w.signature, w.host, w.context, u.op, w.schedule, "
              "w.median_s, w.baseline_s, w.candidates, u.unit, "
              "(SELECT COUNT(*) FROM measurements m WHERE m.signature = "
              "w.signature AND m.host = w.host AND m.context = w.context) "
              "FROM winners w LEFT JOIN units u ON u.signature = w.signature "
              "ORDER BY w.host, u.op, w.signature");
  while (s && sqlite3_step(s.stmt) == SQLITE_ROW) {
    llvm::json::Object o{
        {"signature", s.text(0)},
        {"host", s.text(1)},
        {"context", s.text(2)},
        {"op", s.text(3)},
        {"schedule", s.text(4)},
        {"median_s", sqlite3_column_double(s.stmt, 5)},
        {"baseline_s", sqlite3_column_double(s.stmt, 6)},
        {"candidates", sqlite3_column_int64(s.stmt, 7)},
        {"measurements", sqlite3_column_int64(s.stmt, 9)},
    };
    if (withUnits)
      o["unit"] = s.text(8);
    rows.push_back(std::move(o));
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(rows));
  return out;
}

FailureOr<int64_t> TuningDb::merge(StringRef otherPath, std::string &error) {
  if (!llvm::sys::fs::exists(otherPath)) {
    error = "no such database: " + otherPath.str();
    return failure();
  }
  {
    Statement s(db, "ATTACH DATABASE ? AS other");
    s.bind(1, otherPath);
    if (!s || sqlite3_step(s.stmt) != SQLITE_DONE) {
      error = sqlite3_errmsg(db);
      return failure();
    }
  }
  int64_t before = sqlite3_total_changes64(db);
  int64_t changed = -1;
  if (succeeded(exec("BEGIN IMMEDIATE", error))) {
    if (succeeded(exec(
            "INSERT OR IGNORE INTO units SELECT * FROM other.units;"
            "INSERT OR IGNORE INTO measurements SELECT * FROM "
            "other.measurements;",
            error))) {
      int64_t mid = sqlite3_total_changes64(db);
      if (succeeded(exec(
              "INSERT INTO winners SELECT * FROM other.winners WHERE true "
              "ON CONFLICT (signature, host, context) DO UPDATE SET "
              "schedule = excluded.schedule, median_s = excluded.median_s, "
              "baseline_s = excluded.baseline_s, candidates = "
              "excluded.candidates, created = excluded.created "
              "WHERE excluded.median_s < winners.median_s",
              error)) &&
          succeeded(exec("COMMIT", error)))
        changed = sqlite3_total_changes64(db) - mid;
    }
    if (changed < 0) {
      std::string ignored;
      (void)exec("ROLLBACK", ignored);
    }
  }
  (void)before;
  std::string ignored;
  (void)exec("DETACH DATABASE other", ignored);
  if (changed < 0)
    return failure();
  return changed;
}

std::string getTuningHost() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0)
    name[0] = 0;
  std::string cpu = "unknown-cpu";
  if (auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo")) {
    for (StringRef line :
         llvm::split((*buf)->getBuffer(), '\n')) {
      if (line.starts_with("model name")) {
        cpu = line.split(':').second.trim().str();
        break;
      }
    }
  }
  return std::string(name) + "|" + cpu + "|" +
         std::to_string(std::thread::hardware_concurrency()) + "cpu";
}

std::string getTuningContext(int threads) {
  return "layout=" + FeatureLayout::getDefault().getHash() +
         ";legality=" + LegalityConfig::getDefault().getHash() +
         ";lowering=" +
         getStableHash(getLoweringPipeline() + "|" + kLoweringVersion) +
         ";measure=" + kMeasurementVersion +
         ";threads=" + std::to_string(threads);
}

} // namespace mlir::rl
