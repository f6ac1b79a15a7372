"""The measurement policy, in one place.

A :class:`Measurer` times programs in its worker process (a crash or a hang
costs one measurement), checks every scheduled program's outputs against
the unscheduled program's, stops a run that is far slower than the
baseline, and memoizes everything in SQLite. The environment, searches,
evaluation and the demonstrations of fine-tuning all measure through it.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mlir_rl.measure.executor import ExecConfig, Executor
from mlir_rl.measure.memo import Measurement, MeasurementMemo, host_fingerprint, module_hash
from mlir_rl.stats import speedup

# Microsecond kernels get a floor on every time limit: timer noise is not a
# slowdown.
MIN_LIMIT_S = 0.02


@dataclass
class MeasureConfig:
    """Where and how measurements are made."""

    exec: ExecConfig = field(default_factory=ExecConfig)
    """Runs, warm-up, threads, seed and time limits of each measurement."""
    memo_path: Optional[str] = None
    """SQLite memo of measurements (None: measure everything)."""


@functools.lru_cache(maxsize=1)
def build_fingerprint() -> str:
    """The compiled code that measurements run through (the bindings'
    library, with the scheduler and our lowering passes linked in): a change
    of a pass's code changes it even when the pipeline's text stays the
    same. About 1 MB, hashed once per process."""
    from mlir_rl import _core
    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:16]


def compiler_fingerprint() -> str:
    """What else a time depends on: mlir-rl's version and build, the lowering
    pipeline, the observation layout and the legality config."""
    import mlir_rl
    from mlir_rl.core import layout, legality, lowering_pipeline
    text = "|".join([mlir_rl.__version__, build_fingerprint(), lowering_pipeline(),
                     layout().hash, legality()["hash"]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def measurement_context(cfg: ExecConfig) -> str:
    """The memo key's context: everything but the module, schedule and host."""
    return (f"runs={cfg.runs};warmup={cfg.warmup};seed={cfg.seed};threads={cfg.threads};"
            f"pipeline={cfg.pipeline};compiler={compiler_fingerprint()}")


class Measurer:
    """Baselines, scheduled measurements with output checks, the memo."""

    def __init__(self, config: Optional[MeasureConfig] = None):
        self.config = config or MeasureConfig()
        cfg = self.config.exec
        self.host = host_fingerprint(cfg.threads)
        self.context = measurement_context(cfg)
        self.memo = MeasurementMemo(self.config.memo_path) if self.config.memo_path else None
        self.executor: Optional[Executor] = None
        self._baselines: dict[str, Measurement] = {}
        self._references: dict[str, list] = {}
        self.measurements = 0  # measurements actually run (not from the memo)

    def _executor(self) -> Executor:
        if self.executor is None:
            self.executor = Executor(self.config.exec)
        return self.executor

    def _timeout(self, baseline: Optional[Measurement]) -> float:
        c = self.config.exec
        base = baseline.median_s if baseline and baseline.ok else 10.0
        return c.compile_budget_s + (c.warmup + c.runs) * c.slowdown_limit * base

    def _get(self, h: str, schedule: str) -> Optional[Measurement]:
        return self.memo.get(h, schedule, self.host, self.context) if self.memo else None

    def _put(self, h: str, schedule: str, m: Measurement) -> None:
        if self.memo is not None:
            self.memo.put(h, schedule, self.host, self.context, m)

    def baseline(self, text: str) -> Measurement:
        """The unscheduled program (memoized); its outputs are the reference."""
        h = module_hash(text)
        if h in self._baselines:
            return self._baselines[h]
        m = self._get(h, "")
        if m is None:
            m, outputs = self._executor().measure(text, "", self._timeout(None))
            self.measurements += 1
            if outputs is not None:
                self._references[h] = outputs
            self._put(h, "", m)
        self._baselines[h] = m
        return m

    def measure(self, text: str, schedule: str,
                cut_at: Optional[float] = None) -> Measurement:
        """The scheduled program's time (memoized), its outputs checked.

        ``cut_at``: a search's shortcut -- stop a candidate as soon as one call
        is slower than ``cut_at`` x the baseline (it cannot be the best); the
        result is then ``cut`` and its time a lower bound. The memo keeps it
        as such: a later search with a cut below that bound reuses it, a
        measurement without a cut (training, the policy) measures again."""
        h = module_hash(text)
        base = self.baseline(text)
        if not schedule:
            return base
        cached = self._get(h, schedule)
        if cached is not None and cached.status == "cut":
            if cut_at is not None and base.ok and cached.median_s >= cut_at * base.median_s:
                return cached
            cached = None
        if cached is not None:
            return cached
        if h not in self._references:  # the baseline came from the memo
            _, outputs = self._executor().measure(text, "", self._timeout(base))
            self._references[h] = outputs
        c = self.config.exec
        cutting = cut_at is not None and cut_at < c.slowdown_limit
        factor = cut_at if cutting else c.slowdown_limit
        full_limit = max(c.slowdown_limit * base.median_s, MIN_LIMIT_S) if base.ok else 0.0
        limit = max(factor * base.median_s, MIN_LIMIT_S) if base.ok else 0.0
        timeout = self._timeout(base)
        if cutting and base.ok:
            # A cut candidate's worker is also killed sooner when one call hangs.
            timeout = min(timeout, 20.0 + 3 * (c.warmup + c.runs) * limit)
        m, _ = self._executor().measure(text, schedule, timeout,
                                        reference=self._references.get(h),
                                        abort_after_s=limit)
        self.measurements += 1
        if m.status == "timeout" and cutting:
            m = Measurement("cut", max(m.median_s or 0.0, limit), m.min_s, m.max_s,
                            detail=f"slower than {factor:g}x the baseline: {m.detail}")
        if m.ok and base.ok and m.median_s > full_limit:
            m = Measurement("timeout", m.median_s, m.min_s, m.max_s,
                            detail=f"{m.median_s / base.median_s:.1f}x slower than the baseline")
        self._put(h, schedule, m)
        return m

    def speedup(self, text: str, m: Measurement) -> float:
        """Speedup of a measurement over the program's baseline (0 if either
        failed)."""
        base = self.baseline(text)
        return speedup(base.median_s, m.median_s) if (base.ok and m.ok) else 0.0

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        if self.memo is not None:
            self.memo.close()
            self.memo = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
