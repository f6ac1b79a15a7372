"""The fuzzer's worker processes: schedule, verify, run and compare.

Everything that can crash or hang (parsing, the actions, the lowering, the
JIT, the compiled code) runs in a spawned worker. Before each risky stage
the worker tells the parent what it is about to do (the schedule so far,
the next action), so that when it dies the parent knows what killed it.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Optional

# Statuses of a program-schedule pair. The first ones are failures.
FAILURES = ("wrong_output", "invalid_ir", "lowering_failed", "illegal", "error",
            "replay_differs", "replay_refused", "crash", "hang")


@dataclass
class Spec:
    """Where a schedule comes from: random mask-legal choices (seeded), the
    policy (sampled with a seed, or greedy), the pass's other decision
    sources (``heuristic``; ``uniform``: decisions=random with a seed), the
    greedy policy on the program through mlir-rl-prepare first
    (``prepared``, the models' path; seed 1: with the rewrites that pay
    only at sizes the fuzzer does not reach taken at any size, see
    ``prepare_steps``), or an explicit text."""

    source: str              # random | sampled | greedy | heuristic | uniform | prepared | explicit
    seed: int = 0
    schedule: str = ""       # explicit only

    def label(self) -> str:
        if self.source in ("random", "sampled", "uniform"):
            return f"{self.source}:{self.seed}"
        if self.source == "prepared" and self.seed:
            return "prepared:any-size"
        return self.source


# The pass's decision source (decisions=) of each source of schedules that
# goes through it; the others are the policy's.
DECISIONS = {"heuristic": "heuristic", "uniform": "random"}


@dataclass
class WorkerConfig:
    threads: int = 2
    input_seed: int = 0
    model: str = ""          # "" = the shipped policy


# -- In the worker ---------------------------------------------------------------

def _kind_weight(kind) -> float:
    """How often random schedules pick a kind: fusions and tilings most,
    'no transformation' least (it ends an op's schedule)."""
    from mlir_rl.core import ActionKind as A
    return {A.TILING: 3.0, A.TILED_PARALLELIZATION: 2.0, A.TILED_FUSION: 3.0,
            A.INTERCHANGE: 1.0, A.VECTORIZATION: 2.0, A.NO_TRANSFORMATION: 0.6}.get(kind, 1.0)


def _random_action(m, op: int, rng: random.Random):
    """A random action the masks allow for op (sizes that split a loop for a
    kind that needs one), as a typed Action; None if only NT is left."""
    import numpy as np

    from mlir_rl.core import Action, ActionKind, ActionParams, action_kinds, layout
    masks = m.masks(op)
    kinds = [k for k in action_kinds() if masks.allowed(k.kind)]
    tiled = [k.kind for k in action_kinds() if k.is_tiled]
    num_loops = len(m.op(op).loop_bounds)
    candidates = layout().raw["tile_candidates"]
    tile, unsplit = masks.tile, masks.unsplit
    while kinds:
        info = rng.choices(kinds, [_kind_weight(k.kind) for k in kinds])[0]
        kinds.remove(info)
        if info.is_tiled:
            row = tiled.index(info.kind)
            choice = []
            # Edges: every loop untiled or tiled by its largest size (the
            # whole extent, when that is a candidate), a quarter of the time.
            edge = rng.random() < 0.25
            for loop in range(num_loops):
                allowed = np.flatnonzero(tile[row, loop])
                nonzero = [int(c) for c in allowed if c != 0]
                roll = rng.random()
                if not nonzero or roll < 0.3:
                    c = 0
                elif edge or roll < 0.5:
                    c = nonzero[-1]
                else:
                    c = rng.choice(nonzero)
                choice.append(c)
            if info.needs_split and all(unsplit[row, loop, c] for loop, c in enumerate(choice)):
                splits = [(loop, int(c)) for loop in range(num_loops)
                          for c in np.flatnonzero(tile[row, loop] & ~unsplit[row, loop])]
                if not splits:
                    continue
                loop, c = rng.choice(splits)
                choice[loop] = c
            return Action(info.kind, [candidates[c] for c in choice])
        if info.params == ActionParams.PERMUTATION:
            perm = list(range(num_loops))
            rng.shuffle(perm)
            return Action(info.kind, perm)
        return Action(info.kind)
    return Action(ActionKind.NO_TRANSFORMATION)


def _with_action(schedule: str, op: int, action) -> str:
    """The schedule text with one more action for op (C++'s grammar)."""
    from mlir_rl.core import format_schedule, parse_schedule
    entries = parse_schedule(schedule, with_choices=True) if schedule else []
    if entries and entries[-1][0] == op:
        entries[-1] = (op, list(entries[-1][1]) + [action], entries[-1][2])
    else:
        entries.append((op, [action], {}))
    return format_schedule(entries)


def _schedule(m, spec: Spec, cfg: WorkerConfig, tell) -> dict:
    """Schedule m per spec. Returns {'declined': n} or {'status', 'detail'}."""
    import mlir_rl
    from mlir_rl.core import ActionKind, ApplyStatus, IllegalActionError
    declined = 0
    if spec.source == "explicit":
        tell({"stage": "schedule", "schedule": spec.schedule})
        try:
            if m.apply_schedule(spec.schedule) == ApplyStatus.FAILED:
                declined += 1
        except IllegalActionError as e:
            return {"status": "illegal", "detail": str(e)}
        return {"declined": declined}
    if spec.source == "random":
        # Random decisions through the schedule pipeline, as the pass would
        # take them: the front end before, the rules after.
        tell({"stage": "front end"})
        m.run_front_end()
        rng = random.Random(spec.seed)
        steps = 0
        while (op := m.next_op()) is not None and steps < m.step_budget():
            steps += 1
            action = _random_action(m, op, rng)
            tell({"stage": "schedule", "schedule": _with_action(m.decisions, op, action)})
            try:
                status = m.apply(op, action)
            except IllegalActionError as e:
                return {"status": "illegal",
                        "detail": f"the masks allow {action} on op {op}, the action is "
                                  f"refused: {e}"}
            if status == ApplyStatus.FAILED:
                declined += 1
                m.apply(op, mlir_rl.Action(ActionKind.NO_TRANSFORMATION))
        # The rules' choices too (mask-legal, C++'s draw), three times in
        # four; else the rules' defaults.
        if rng.random() < 0.75:
            m.draw_rule_choices(rng.getrandbits(63))
        tell({"stage": "rules", "schedule": m.decisions})
        m.apply_rules(decisions="heuristic")
        return {"declined": declined}

    def on_step(op, step, so_far):
        text = so_far if step.is_pointer else _with_action(so_far, op, step.action)
        tell({"stage": "schedule", "schedule": text, "step": f"op {op}: {step}"})
    try:
        info = m.schedule_with_policy(cfg.model, sample=spec.source == "sampled",
                                      seed=spec.seed, on_step=on_step,
                                      decisions=DECISIONS.get(spec.source, "policy"))
    except mlir_rl.ScheduleError as e:
        return {"status": "error", "detail": f"the policy run failed: {e}"}
    return {"declined": len(info["warnings"])}


def prepare_steps(spec: Spec) -> Optional[str]:
    """The front end of a ``prepared`` spec: mlir-rl-prepare's (seed 0), or
    its steps with the rewrites that only pay at sizes the fuzzer's programs
    do not reach taken at any size (seed 1: convolutions as shifted-window
    matmuls, ``shifted-min-bytes=0``)."""
    import mlir_rl
    if not spec.seed:
        return None
    steps = mlir_rl.front_end_steps()
    assert "mlir-rl-conv-to-matmul," in steps, steps
    return steps.replace("mlir-rl-conv-to-matmul,", "mlir-rl-conv-to-matmul{shifted-min-bytes=0},", 1)


def _run_pair(text: str, spec: Spec, cfg: WorkerConfig, reference, seen: set, tell) -> dict:
    import mlir_rl
    t0 = time.perf_counter()
    if spec.source == "prepared":
        tell({"stage": "prepare"})
        try:
            m = mlir_rl.Module.parse(mlir_rl.prepare(text, steps=prepare_steps(spec)))
        except mlir_rl.ScheduleError as e:
            return {"schedule": "", "status": "error", "detail": f"prepare failed: {e}"}
    else:
        m = mlir_rl.Module.parse(text)
    out = _schedule(m, spec, cfg, tell)
    schedule = m.schedule
    result = {"schedule": schedule, "declined": out.get("declined", 0)}
    if "status" in out:
        result.update(status=out["status"], detail=out["detail"])
        return result
    # A prepared program's op ids are its own: its schedules are not the
    # others'; the two front ends' programs are one where they are the same.
    key = (f"prepared {hash(m.source)}: " if spec.source == "prepared" else "") + schedule
    if key in seen:
        result["status"] = "duplicate"
        return result
    seen.add(key)
    tell({"stage": "verify", "schedule": schedule})
    ok, messages = m.verify()
    if not ok:
        result.update(status="invalid_ir", detail=messages[-2000:])
        return result
    if spec.source != "explicit":
        # The printed trace, handed back on the same input: the same IR.
        tell({"stage": "replay", "schedule": schedule})
        again = mlir_rl.Module.parse(m.source)
        try:
            again.apply_schedule(schedule)
        except mlir_rl.ScheduleError as e:
            result.update(status="replay_refused", detail=str(e)[-2000:])
            return result
        if again.ir() != m.ir():
            result.update(status="replay_differs",
                          detail="the trace replayed on the same input gives other IR")
            return result
    tell({"stage": "run", "schedule": schedule})
    try:
        t = m.time(runs=1, warmup=0, threads=cfg.threads, seed=cfg.input_seed)
    except mlir_rl.ScheduleError as e:
        result.update(status="lowering_failed", detail=str(e)[-2000:])
        return result
    rtol = low_precision_rtol(text)
    match, err = mlir_rl.outputs_match(t.outputs, reference, rtol=rtol, atol_scale=rtol)
    result.update(status="ok" if match else "wrong_output",
                  detail="" if match else f"max abs error {err}",
                  seconds=time.perf_counter() - t0)
    return result


def low_precision_rtol(text: str) -> float:
    """The outputs' tolerance: outputs_match's, or, for a program on bf16
    data, torch.testing's for bf16 (the schedules compute in f32 in another
    order, and round where they store)."""
    from mlir_rl.core import output_rtol
    return output_rtol(["bf16"] if "bf16" in text else [])


def computed_in_f32(text: str) -> str:
    """A bf16 program as every pair sees it: through mlir-rl-compute-in-f32
    (PyTorch's semantics, which the front end gives it; accumulated in
    bf16, the order of a sum changes it by more than any tolerance), without
    the front end's mark, so that its other stages still run on it."""
    if "bf16" not in text:
        return text
    import subprocess

    from mlir_rl.paths import pass_driver
    r = subprocess.run([*pass_driver(), "-p", "builtin.module(func.func(mlir-rl-compute-in-f32))",
                        "-"], input=text, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"mlir-rl-compute-in-f32 failed:\n{r.stderr[-2000:]}")
    return r.stdout


def _job(conn: Connection, job: dict) -> None:
    import mlir_rl
    cfg: WorkerConfig = job["cfg"]
    try:
        text = computed_in_f32(job["program"])
    except RuntimeError as e:
        conn.send(("program", {"status": "crash", "detail": str(e)[-2000:]}))
        conn.send(("done",))
        return

    def tell(info: dict, index: int = -1) -> None:
        conn.send(("progress", index, info))
    tell({"stage": "reference"})
    try:
        m = mlir_rl.Module.parse(text)
        ref = m.time(runs=1, warmup=0, threads=cfg.threads, seed=cfg.input_seed)
    except mlir_rl.ScheduleError as e:
        conn.send(("program", {"status": "unlowerable", "detail": str(e)[-2000:]}))
        conn.send(("done",))
        return
    conn.send(("program", {"status": "ok", "seconds": ref.median}))
    seen: set = set(job.get("seen", ()))
    for index, spec in job["specs"]:
        try:
            res = _run_pair(text, spec, cfg, ref.outputs, seen,
                            lambda info, i=index: tell(info, i))
        except Exception:  # noqa: BLE001
            res = {"status": "error", "detail": traceback.format_exc()[-2000:]}
        conn.send(("result", index, res))
    conn.send(("done",))


def _main(conn: Connection) -> None:
    # Idle OpenMP threads sleep at once: several workers share the cores.
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    from mlir_rl.measure.executor import _exit_with_parent
    _exit_with_parent()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        _job(conn, job)


# -- In the parent ---------------------------------------------------------------

@dataclass
class Outcome:
    """What a job produced: the program's status and one result per spec."""

    program: dict = field(default_factory=dict)
    results: dict[int, dict] = field(default_factory=dict)


class Worker:
    """One worker process running one job at a time. A crash or a hang is
    charged to the spec (or the reference) under way; the job goes on in a
    fresh process with the specs left."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self._ctx = mp.get_context("spawn")
        self.proc: Optional[Any] = None
        self.conn: Optional[Connection] = None
        self.job: Optional[dict] = None
        self.outcome = Outcome()
        self.current = -1          # spec index under way (-1: reference)
        self.progress: dict = {}
        self.last = 0.0
        self.restarts = 0

    # Process ---------------------------------------------------------------
    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def _kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc, self.conn = None, None

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

    # Jobs ------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.job is not None

    def submit(self, program: str, specs: list[Spec], cfg: WorkerConfig, tag: Any = None) -> None:
        self.job = {"program": program, "specs": list(enumerate(specs)), "cfg": cfg,
                    "tag": tag}
        self.outcome = Outcome()
        self._send(self.job)

    def _send(self, job: dict) -> None:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.current, self.progress, self.last = -1, {}, time.monotonic()
        self.conn.send({k: v for k, v in job.items() if k != "tag"})

    def _fail_current(self, status: str, detail: str) -> None:
        """The process died (or hung) under the current stage: charge it,
        and go on with the specs after it in a new process."""
        self._kill()
        self.restarts += 1
        info = dict(self.progress)
        if not self.outcome.program:
            self.outcome.program = {"status": status, "detail": detail, "progress": info}
            self.job = None
            return
        pending = [i for i, _ in self.job["specs"] if i not in self.outcome.results]
        if not pending:
            self.job = None
            return
        index = pending[0]
        if self.current != index:
            info = {}
        self.outcome.results[index] = {"status": status, "detail": detail,
                                       "schedule": info.get("schedule", ""),
                                       "stage": info.get("stage", ""),
                                       "step": info.get("step", "")}
        rest = [(i, s) for i, s in self.job["specs"] if i > index]
        if not rest:
            self.job = None
            return
        seen = [r["schedule"] for r in self.outcome.results.values()
                if r.get("status") != "duplicate" and r.get("schedule")]
        self.job = dict(self.job, specs=rest, seen=seen)
        self._send(self.job)

    def pump(self) -> bool:
        """Handle what arrived; True when the job is over."""
        if self.job is None:
            return True
        try:
            while self.conn.poll():
                msg = self.conn.recv()
                self.last = time.monotonic()
                if msg[0] == "progress":
                    self.current, self.progress = msg[1], msg[2]
                elif msg[0] == "program":
                    self.outcome.program = msg[1]
                elif msg[0] == "result":
                    self.outcome.results[msg[1]] = msg[2]
                    self.current, self.progress = -1, {}
                elif msg[0] == "done":
                    self.job = None
                    return True
        except (EOFError, OSError):
            code = self.proc.exitcode if self.proc is not None else None
            if self.proc is not None:
                self.proc.join(5)
                code = self.proc.exitcode
            detail = (f"the process died (signal {-code})" if code is not None and code < 0
                      else f"the process exited ({code})")
            self._fail_current("crash", detail)
            return self.job is None
        if time.monotonic() - self.last > self.timeout_s:
            self._fail_current("hang", f"no progress for {self.timeout_s:.0f} s in stage "
                                       f"'{self.progress.get('stage', '?')}'")
            return self.job is None
        return False

    def run(self, program: str, specs: list[Spec], cfg: WorkerConfig) -> Outcome:
        """Run a job to its end (the shrinker's synchronous use)."""
        from multiprocessing.connection import wait
        self.submit(program, specs, cfg)
        while not self.pump():
            if self.conn is not None:
                wait([self.conn], timeout=1.0)
        return self.outcome
