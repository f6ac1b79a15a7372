"""Memoized measurements (Pearl): SQLite in WAL mode, shared by all workers.

Key: (module hash, canonical schedule, host fingerprint, measurement
context). The context names everything else a time depends on: runs,
warm-up, seed, threads, and the compiler (mlir-rl's version, a hash of its
compiled library, the lowering pipeline, the observation layout and the
legality config). A row is
committed as soon as it is measured, so a training killed with SIGKILL
loses no committed measurement, and later trainings reuse them.
"""
from __future__ import annotations

import hashlib
import os
import platform
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements_v2 (
  module_hash TEXT NOT NULL,
  schedule    TEXT NOT NULL,
  host        TEXT NOT NULL,
  context     TEXT NOT NULL,      -- runs, warm-up, seed, threads, compiler
  status      TEXT NOT NULL,      -- ok, apply_failed, compile_failed, wrong_output, timeout, crashed,
                                  -- cut (a search stopped it: median_s is a lower bound)
  median_s    REAL,
  min_s       REAL,
  max_s       REAL,
  detail      TEXT,
  created     REAL NOT NULL,
  PRIMARY KEY (module_hash, schedule, host, context)
);
"""


def module_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def host_fingerprint(threads: int) -> str:
    """What makes timings comparable: machine, CPU model, cores, threads."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}|{cpu}|{os.cpu_count()}cpu|{threads}thr"


@dataclass
class Measurement:
    status: str
    median_s: Optional[float] = None
    min_s: Optional[float] = None
    max_s: Optional[float] = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class MeasurementMemo:
    """A process-safe SQLite cache of measurements with hit/miss counters."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)
        self.hits = 0
        self.misses = 0

    def get(self, mhash: str, schedule: str, host: str, context: str) -> Optional[Measurement]:
        row = self._conn.execute(
            "SELECT status, median_s, min_s, max_s, detail FROM measurements_v2 "
            "WHERE module_hash=? AND schedule=? AND host=? AND context=?",
            (mhash, schedule, host, context)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Measurement(*row)

    def put(self, mhash: str, schedule: str, host: str, context: str, m: Measurement) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO measurements_v2 VALUES (?,?,?,?,?,?,?,?,?,?)",
            (mhash, schedule, host, context, m.status, m.median_s, m.min_s, m.max_s,
             m.detail[:2000], time.time()))

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM measurements_v2").fetchone()[0]

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def close(self) -> None:
        self._conn.close()
