"""Runs measurements in a worker process, with time limits.

Compiled code runs in the worker, never in the training process: a crash or
a hang in a scheduled kernel kills (or times out) the worker, which is
restarted, and the measurement is recorded as 'crashed' or 'timeout'.
"""
from __future__ import annotations

import multiprocessing as mp
import traceback
from dataclasses import dataclass
from typing import Optional

from mlir_rl.measure.memo import Measurement


@dataclass
class ExecConfig:
    """How every measurement runs."""

    runs: int = 1
    """Timed calls (the median is the measurement)."""
    warmup: int = 1
    """Untimed calls first."""
    threads: int = 2
    """OpenMP threads."""
    seed: int = 0
    """Seed of the random inputs."""
    compile_budget_s: float = 60.0
    """Lowering + JIT allowance in a measurement's time limit."""
    slowdown_limit: float = 10.0
    """A call slower than this x the baseline stops the measurement."""
    pipeline: str = "default"
    """How a schedule of decisions is measured: ``default``, through the
    schedule pipeline as the pass ships it (the front end, the decisions --
    in the front end's op ids, as :meth:`Module.decisions` gives them --,
    the post-decision rules); ``none``, applied to the module as given. A
    trace (``[passes] ...``, :attr:`Module.schedule`) is replayed as it is."""


def _measure_in_worker(text: str, schedule: str, cfg: ExecConfig,
                       reference: Optional[list],
                       abort_after_s: float = 0.0) -> tuple[Measurement, Optional[list]]:
    import mlir_rl
    try:
        m = mlir_rl.Module.parse(text)
    except Exception as e:  # noqa: BLE001
        return Measurement("compile_failed", detail=str(e)), None
    if schedule:
        try:
            status = (m.apply_schedule(schedule) if cfg.pipeline == "none"
                      else m.apply_decisions(schedule))
        except mlir_rl.ScheduleError as e:
            return Measurement("apply_failed", detail=str(e)), None
        if status == mlir_rl.ApplyStatus.FAILED:
            return Measurement("apply_failed", detail=m.last_message), None
    try:
        t = m.time(runs=cfg.runs, warmup=cfg.warmup, threads=cfg.threads, seed=cfg.seed,
                   abort_after_s=abort_after_s)
    except mlir_rl.ScheduleError as e:
        return Measurement("compile_failed", detail=str(e)), None
    if t.aborted:
        return Measurement("timeout", t.median, *t.spread,
                           detail=f"a call took {max(t.seconds):.3f} s > {abort_after_s:.3f} s"), None
    if reference is not None:
        ok, err = mlir_rl.outputs_match(t.outputs, reference)
        if not ok:
            return Measurement("wrong_output", t.median, *t.spread,
                               detail=f"max abs error {err}"), None
    return Measurement("ok", t.median, *t.spread), t.outputs


def _exit_with_parent() -> None:
    """Ends the worker when the process that started it is gone (killed by a
    signal, its daemon children are not reaped and a long kernel would keep
    running)."""
    import os
    import threading
    import time
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="mlir-rl-parent-watch").start()


def _worker_main(conn) -> None:
    _exit_with_parent()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        try:
            conn.send(_measure_in_worker(*msg))
        except Exception:  # noqa: BLE001
            conn.send((Measurement("crashed", detail=traceback.format_exc()[-2000:]), None))


class Executor:
    """One measurement worker process (spawned; restarted after a failure)."""

    def __init__(self, cfg: Optional[ExecConfig] = None):
        self.cfg = cfg or ExecConfig()
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self._proc.start()
        self._conn = parent

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(5)
        self._proc, self._conn = None, None

    def measure(self, text: str, schedule: str, timeout_s: float,
                reference: Optional[list] = None,
                abort_after_s: float = 0.0) -> tuple[Measurement, Optional[list]]:
        """Measure ``text`` with ``schedule`` ('' = unscheduled) in the worker.

        ``reference``: outputs to compare with (the unscheduled program's).
        Returns the measurement and, when it succeeded, the outputs.
        """
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send((text, schedule, self.cfg, reference, abort_after_s))
        if not self._conn.poll(timeout_s):
            self._kill()
            return Measurement("timeout", detail=f"no result within {timeout_s:.1f} s"), None
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            self._kill()
            return Measurement("crashed", detail="the worker died"), None

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
