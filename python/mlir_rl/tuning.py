"""Compile-time tuning from Python: ``linalg-rl-schedule{search=K
tuning-db=FILE}`` run the way users run it, and the tuning database.

The pass does the work (C++: the op units, the policy's proposals, the
measurement helper ``mlir-rl-measure``, the SQLite database); this module
runs it in ``mlir-rl-opt`` with a progress callback fed by its per-op
remarks, and reads and merges databases through the bindings.
"""
from __future__ import annotations

import json
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from mlir_rl.core import ScheduleError, read_schedule_header
from mlir_rl.paths import opt_path

_TOTAL = re.compile(r"remark: linalg-rl-schedule: tuning (\d+) ops")
_OP = re.compile(r"remark: linalg-rl-schedule: op (\d+) \(([^)]*)\): (.*)$")
MODULE_CHECK = re.compile(r"remark: linalg-rl-schedule: (module check.*)$", re.M)
"""The whole-function check's remark; group 1: its text."""
TUNED_OP = re.compile(r"tuned \d+ candidates \(.*?\) in ([0-9.]+) s")
"""A searched op's remark; group 1: its tuning time in seconds."""

Progress = Callable[[int, int, str], None]
"""Told (ops done, ops in all, the op's line) after each op."""


@dataclass
class TuneResult:
    ir: str                      # the scheduled module
    schedule: str                # the schedule applied ("1: TP(..) V; ...")
    lines: list[str] = field(default_factory=list)  # one per op
    seconds: float = 0.0         # the whole pass run
    op_seconds: list[float] = field(default_factory=list)  # per searched op
    module_check: str = ""       # the whole-function check's remark ("" if none ran)

    @property
    def searched(self) -> int:
        return len(self.op_seconds)

    @property
    def from_db(self) -> int:
        return sum("from the tuning database" in line for line in self.lines)


def pass_pipeline(search: int = 8, db: Optional[str] = None, threads: int = 0,
                  budget_ms: float = 0, model: str = "", prepare: bool = False,
                  lower: bool = False, dump_schedule: Optional[str] = None,
                  candidate_timeout_s: Optional[float] = None) -> str:
    """The ``-p`` pipeline of a tuning run."""
    opts = [f"search={search}", f"threads={threads}"]
    if candidate_timeout_s is not None:
        opts.append(f"candidate-timeout-s={candidate_timeout_s}")
    if db:
        opts.append(f"tuning-db={db}")
    if budget_ms:
        opts.append(f"budget-ms={budget_ms}")
    if model:
        opts.append(f"model={model}")
    if dump_schedule:
        opts.append(f"dump-schedule={dump_schedule}")
    steps = ["mlir-rl-prepare"] if prepare else []
    steps.append("linalg-rl-schedule{" + " ".join(opts) + "}")
    if lower:
        steps.append("mlir-rl-lower")
    return "builtin.module(" + ",".join(steps) + ")"


def tune(text: str, search: int = 8, db: Optional[str] = None, threads: int = 0,
         budget_ms: float = 0, model: str = "", prepare: bool = False,
         lower: bool = False, progress: Optional[Progress] = None,
         name: str = "<input>", candidate_timeout_s: Optional[float] = None) -> TuneResult:
    """Schedule ``text`` with the policy's proposals measured (``search``
    per op; 0: the database only) in ``mlir-rl-opt``. ``candidate_timeout_s``:
    the pass's ``candidate-timeout-s`` (None: its default). Raises
    ScheduleError with the pass's diagnostics if it fails."""
    with tempfile.TemporaryDirectory(prefix="mlir-rl-tune-") as tmp:
        dump = Path(tmp) / "schedule.mlir"
        out = Path(tmp) / "out.mlir"
        pipeline = pass_pipeline(search, db, threads, budget_ms, model, prepare, lower,
                                 str(dump), candidate_timeout_s)
        start = time.perf_counter()
        proc = subprocess.Popen([str(opt_path()), "-p", pipeline, "-", "-o", str(out)],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(text)
        proc.stdin.close()
        result = TuneResult("", "")
        total, tail = 0, []
        for line in proc.stderr:
            tail = (tail + [line])[-200:]
            if m := _TOTAL.search(line):
                total = int(m.group(1))
            elif m := MODULE_CHECK.search(line):
                result.module_check = m.group(1).strip()
            elif m := _OP.search(line):
                entry = f"op {m.group(1)} ({m.group(2)}): {m.group(3)}"
                result.lines.append(entry)
                if t := TUNED_OP.search(m.group(3)):
                    result.op_seconds.append(float(t.group(1)))
                if progress:
                    progress(len(result.lines), max(total, len(result.lines)), entry)
        rc = proc.wait()
        result.seconds = time.perf_counter() - start
        if rc != 0:
            raise ScheduleError(f"{name}: the pass failed:\n{''.join(tail)[-4000:]}")
        result.ir = out.read_text()
        result.schedule = read_schedule_header(dump.read_text()) or ""
    return result


def db_entries(path: str, with_units: bool = False) -> list[dict]:
    """The winners of a tuning database (see ``_core.tuning_db_export``)."""
    from mlir_rl import _core
    if not Path(path).exists():
        raise ScheduleError(f"no tuning database at {path}")
    return json.loads(_core.tuning_db_export(path, with_units))


def db_merge(into: str, other: str) -> int:
    """Copies ``other``'s entries into ``into``; returns the winners added
    or replaced."""
    from mlir_rl import _core
    return _core.tuning_db_merge(into, other)


def db_summary(entries: list[dict]) -> list[dict]:
    """Per host and context: winners, measurements, the geomean speedup of
    the winners over their units unscheduled."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for e in entries:
        groups.setdefault((e["host"], e["context"]), []).append(e)
    rows = []
    for (host, context), es in sorted(groups.items()):
        speedups = [e["baseline_s"] / e["median_s"] for e in es if e["median_s"] > 0]
        rows.append({"host": host, "context": context, "winners": len(es),
                     "measurements": sum(e["measurements"] for e in es),
                     "geomean_speedup": statistics.geometric_mean(speedups) if speedups else 0.0,
                     "nt": sum(_is_nt(e["schedule"]) for e in es)})
    return rows


def _is_nt(schedule: str) -> bool:
    """A winner that leaves its op unscheduled (parsed by the C++ grammar)."""
    from mlir_rl.core import ActionKind, parse_action
    try:
        return parse_action(schedule).kind == ActionKind.NO_TRANSFORMATION
    except Exception:  # noqa: BLE001 - a schedule of several actions
        return False
