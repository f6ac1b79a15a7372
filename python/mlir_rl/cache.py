"""Memoized measurements (Pearl): SQLite in WAL mode, shared by all workers.

Key: (module hash, canonical schedule, host fingerprint). A row is committed
as soon as it is measured, so a training killed with SIGKILL loses no
committed measurement, and later trainings reuse them.
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
CREATE TABLE IF NOT EXISTS measurements (
  module_hash TEXT NOT NULL,
  schedule    TEXT NOT NULL,
  host        TEXT NOT NULL,
  status      TEXT NOT NULL,      -- ok, apply_failed, compile_failed, wrong_output, timeout, crashed,
                                  -- cut (a search stopped it: median_s is a lower bound)
  median_s    REAL,
  min_s       REAL,
  max_s       REAL,
  detail      TEXT,
  created     REAL NOT NULL,
  PRIMARY KEY (module_hash, schedule, host)
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


class MeasurementCache:
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

    def get(self, mhash: str, schedule: str, host: str) -> Optional[Measurement]:
        row = self._conn.execute(
            "SELECT status, median_s, min_s, max_s, detail FROM measurements "
            "WHERE module_hash=? AND schedule=? AND host=?", (mhash, schedule, host)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Measurement(*row)

    def put(self, mhash: str, schedule: str, host: str, m: Measurement) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO measurements VALUES (?,?,?,?,?,?,?,?,?)",
            (mhash, schedule, host, m.status, m.median_s, m.min_s, m.max_s,
             m.detail[:2000], time.time()))

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def close(self) -> None:
        self._conn.close()
