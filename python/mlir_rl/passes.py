"""Running the pass the way users do: stock ``mlir-opt-22`` with the plugin
(the package's ``mlir-rl-opt`` where LLVM 22 is not installed).

One helper for every harness that needs "the IR and the schedule the pass
chose" (the unseen-kernel check, the peer benchmark): it runs
``linalg-rl-schedule`` in a subprocess and reads the schedule back from the
``dump-schedule`` file through the C++ reader of its header.
"""
from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mlir_rl.core import ScheduleError, read_schedule_header
from mlir_rl.paths import pass_driver


@dataclass
class PassResult:
    ir: str            # the scheduled module
    schedule: str      # the schedule the pass applied ("1: TP(..) V; ...")
    script: str        # the replayable transform script (with its header)
    stderr: str        # remarks and warnings the pass emitted


def pass_options(model: str = "", schedule: str = "", extra: Sequence[str] = ()) -> str:
    """The ``{...}`` option string of ``linalg-rl-schedule``."""
    opts = list(extra)
    if model:
        opts.append(f"model={model}")
    if schedule:
        opts.append(f'schedule="{schedule}"')
    return " ".join(opts)


def run_pass(text: str, model: str = "", schedule: str = "", extra: Sequence[str] = (),
             name: str = "<input>", pipeline_after: str = "",
             prepare: bool = False) -> PassResult:
    """Schedule ``text`` with the plugin in stock mlir-opt-22 (``pass_driver``
    says which driver): with the policy
    ``model`` (default: the shipped one), or the explicit ``schedule``.
    ``pipeline_after``: passes to run after it in the same mlir-opt (e.g.
    ``mlir-rl-lower``). ``prepare``: run ``mlir-rl-prepare`` first (imported
    models). Raises ScheduleError with mlir-opt's diagnostics if
    the pass fails."""
    with tempfile.TemporaryDirectory(prefix="mlir-rl-pass-") as tmp:
        dump = Path(tmp) / "schedule.mlir"
        opts = pass_options(model, schedule, [f"dump-schedule={dump}", *extra])
        pipeline = f"linalg-rl-schedule{{{opts}}}"
        if prepare:
            pipeline = "mlir-rl-prepare," + pipeline
        if pipeline_after:
            pipeline += "," + pipeline_after
        r = subprocess.run([*pass_driver(), "-p", f"builtin.module({pipeline})", "-"],
                           input=text, capture_output=True, text=True)
        if r.returncode != 0:
            raise ScheduleError(f"{name}: the pass failed:\n{r.stderr[-4000:]}")
        script = dump.read_text()
    schedule_text = read_schedule_header(script)
    if schedule_text is None:
        raise ScheduleError(f"{name}: the pass wrote no schedule header")
    return PassResult(r.stdout, schedule_text, script, r.stderr)
