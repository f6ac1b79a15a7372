"""``mlir-rl fuzz``: the differential fuzzer's loop, shrinker and report.

For each random program (``programs.py``) a worker computes the
unscheduled outputs, then schedules it several ways (random mask-legal
schedules, the policy sampled and greedy), verifies the IR, lowers, runs,
and compares every output with the unscheduled ones. Each failure is shrunk
to a small program and schedule, written as a reproducer file with the
commands that show it, and everything goes to a JSON report.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Optional

from mlir_rl.cli.args import option
from mlir_rl.fuzz.programs import FuzzProgram, GenConfig, program_for
from mlir_rl.fuzz.worker import FAILURES, Spec, Worker, WorkerConfig, prepare_steps


@dataclass
class FuzzConfig:
    """Differential fuzzing: random programs, scheduled random, sampled and
    greedy ways, every output checked against the unscheduled program."""

    minutes: float = option(2.0, help="stop starting programs after this long")
    programs: int = option(0, help="at most this many programs (0: as many as fit)")
    seed: int = option(0, help="seed of the program stream (program i is the same for a seed)")
    first: int = option(0, help="index of the first program")
    jobs: int = option(2, help="worker processes")
    random_schedules: int = option(6, help="random mask-legal schedules per program")
    sampled_schedules: int = option(2, help="policy schedules sampled per program")
    no_greedy: bool = option(False, help="no greedy policy schedule")
    no_baselines: bool = option(False, help="no schedule by the pass's other decision "
                                "sources (decisions=heuristic, decisions=random with a seed)")
    no_prepared: bool = option(False, help="no greedy policy schedule of the program through "
                                           "mlir-rl-prepare")
    threads: int = option(2, help="OpenMP threads of each run")
    model: str = option("", help="the policy (default: the shipped one)")
    timeout_s: float = option(120.0, help="a stage without progress this long is a hang")
    shrink_seconds: float = option(120.0, help="time to shrink each distinct failure")
    max_shrinks: int = option(10, help="distinct failures to shrink")
    max_nodes: int = option(6, help="most nodes (ops or op groups) per program")
    out: str = option("fuzz-out", help="directory of the report and the reproducers")
    quiet: bool = option(False, help="no progress lines")


def specs_for(cfg: FuzzConfig, index: int) -> list[Spec]:
    base = (cfg.seed * 1_000_003 + index) * 16
    specs = [Spec("random", base + k) for k in range(cfg.random_schedules)]
    specs += [Spec("sampled", base + 8 + k) for k in range(cfg.sampled_schedules)]
    if not cfg.no_greedy:
        specs.append(Spec("greedy"))
    if not cfg.no_baselines:
        specs += [Spec("heuristic"), Spec("uniform", base + 12)]
    if not cfg.no_prepared:
        specs += [Spec("prepared"), Spec("prepared", 1)]
    return specs


@dataclass
class Failure:
    status: str
    detail: str
    program: FuzzProgram
    spec: Spec
    schedule: str
    stage: str = ""
    step: str = ""
    shrunk: Optional[dict] = None
    reproducer: str = ""

    def signature(self) -> str:
        first = self.detail.splitlines()[0] if self.detail else ""
        return f"{self.status}: {first[:120]}"


@dataclass
class Tally:
    programs: int = 0
    programs_ok: int = 0
    unlowerable: int = 0
    pairs: int = 0
    duplicates: int = 0
    declined: int = 0
    by_status: collections.Counter = field(default_factory=collections.Counter)
    by_source: collections.Counter = field(default_factory=collections.Counter)
    node_kinds: collections.Counter = field(default_factory=collections.Counter)
    dtypes: collections.Counter = field(default_factory=collections.Counter)
    actions: collections.Counter = field(default_factory=collections.Counter)
    zero_size_programs: int = 0
    multi_result_programs: int = 0
    unlowerable_details: collections.Counter = field(default_factory=collections.Counter)
    unlowerable_programs: list = field(default_factory=list)


def _count_actions(tally: Tally, schedule: str) -> None:
    from mlir_rl.core import parse_schedule
    try:
        for _, actions, _choices in parse_schedule(schedule, with_choices=True):
            for a in actions:
                tally.actions[a.info.mnemonic] += 1
    except Exception:  # noqa: BLE001 - a crash's partial schedule is still text
        pass


def _record(tally: Tally, failures: list[Failure], program: FuzzProgram, specs: list[Spec],
            outcome) -> None:
    tally.programs += 1
    tally.dtypes[program.dtype] += 1
    for n in program.nodes:
        tally.node_kinds[n.kind] += 1
    tally.zero_size_programs += program.zero_size
    tally.multi_result_programs += len(program.returns) > 1
    status = outcome.program.get("status")
    if status == "unlowerable":
        tally.unlowerable += 1
        detail = outcome.program.get("detail", "")
        # The first error names the cause ("the lowering pipeline failed" ends them all).
        first = next((line for line in detail.splitlines()
                      if "error" in line or line.startswith("loc(")), "")
        tally.unlowerable_details[first[:160] or (detail.splitlines()[-1][:160]
                                                  if detail else "")] += 1
        if len(tally.unlowerable_programs) < 20:
            tally.unlowerable_programs.append(program.origin)
        return
    if status in ("crash", "hang"):
        spec = Spec("unscheduled")
        failures.append(Failure(status, outcome.program.get("detail", ""), program, spec, ""))
        tally.by_status[status] += 1
        return
    tally.programs_ok += 1
    for index, res in sorted(outcome.results.items()):
        st = res["status"]
        tally.declined += res.get("declined", 0)
        if st == "duplicate":
            tally.duplicates += 1
            continue
        tally.pairs += 1
        tally.by_status[st] += 1
        tally.by_source[specs[index].source] += 1
        _count_actions(tally, res.get("schedule", ""))
        if st in FAILURES:
            failures.append(Failure(st, res.get("detail", ""), program, specs[index],
                                    res.get("schedule", ""), res.get("stage", ""),
                                    res.get("step", "")))


# -- Shrinking -------------------------------------------------------------------

class _Shrinker:
    """Greedy reduction of (program, explicit schedule) while the failure
    keeps its status: whole nodes out (their results become arguments,
    the schedule's op ids renumbered), results not returned, schedule
    entries and actions out, tile sizes to 0."""

    def __init__(self, worker: Worker, wcfg: WorkerConfig, status: str, deadline: float,
                 spec: Optional[Spec] = None):
        self.worker, self.wcfg, self.status, self.deadline = worker, wcfg, status, deadline
        self.spec = spec  # None: the explicit schedule given to fails()
        self.tests = 0

    def fails(self, program: FuzzProgram, schedule: str) -> bool:
        if time.monotonic() > self.deadline:
            return False
        self.tests += 1
        spec = self.spec or Spec("explicit", schedule=schedule)
        out = self.worker.run(program.text(), [spec], self.wcfg)
        if out.program.get("status") != "ok":
            return False
        res = out.results.get(0, {})
        return res.get("status") == self.status

    def run_nodes(self, program: FuzzProgram) -> FuzzProgram:
        """Nodes and returned results out while the failure stays (a policy
        run each time: for failures without a schedule of the program's own
        op ids, such as the prepared program's)."""
        changed = True
        while changed and time.monotonic() < self.deadline:
            changed = False
            for j in reversed(range(len(program.nodes))):
                cut = program.without_node(j) if j < len(program.nodes) else None
                if cut is not None and self.fails(cut[0], ""):
                    program, changed = cut[0], True
            for k in reversed(range(len(program.returns))):
                smaller = program.without_return(k) if k < len(program.returns) else None
                if smaller is not None and self.fails(smaller, ""):
                    program, changed = smaller, True
        return program

    def run(self, program: FuzzProgram, schedule: str) -> tuple[FuzzProgram, str]:
        from mlir_rl.core import Action, format_schedule, parse_schedule, schedule_prelude
        # A trace keeps its prelude (the front end's passes, whose module its
        # op ids name) and each entry its rule choices.
        prelude = schedule_prelude(schedule)
        parsed = parse_schedule(schedule, with_choices=True)
        entries = [(i, list(a), c) for i, a, c in parsed]

        def text(es):
            return format_schedule([e for e in es if e[1] or e[2]], prelude)
        changed = True
        while changed and time.monotonic() < self.deadline:
            changed = False
            # Nodes, last first (consumers go before what they read); not
            # under a prelude, whose rewritten module's ids do not follow
            # the program's nodes.
            for j in reversed(range(len(program.nodes) if prelude is None else 0)):
                if j >= len(program.nodes):
                    continue
                cut = program.without_node(j)
                if cut is None:
                    continue
                smaller, ids = cut
                es = [(ids[i], a, c) for i, a, c in entries if i in ids]
                if self.fails(smaller, text(es)):
                    program, entries, changed = smaller, es, True
            for k in reversed(range(len(program.returns))):
                if k >= len(program.returns):
                    continue
                smaller = program.without_return(k)
                if smaller is not None and self.fails(smaller, text(entries)):
                    program, changed = smaller, True
            for e in reversed(range(len(entries))):
                es = entries[:e] + entries[e + 1:]
                if es and self.fails(program, text(es)):
                    entries, changed = es, True
            for e in range(len(entries)):
                for a in reversed(range(len(entries[e][1]))):
                    if a >= len(entries[e][1]) or len(entries[e][1]) == 1:
                        continue
                    es = list(entries)
                    es[e] = (es[e][0], es[e][1][:a] + es[e][1][a + 1:], es[e][2])
                    if self.fails(program, text(es)):
                        entries, changed = es, True
            for e in range(len(entries)):
                for a in range(len(entries[e][1])):
                    act = entries[e][1][a]
                    if not act.info.is_tiled:
                        continue
                    for loop in range(len(act.sizes)):
                        if act.sizes[loop] == 0:
                            continue
                        sizes = list(act.sizes)
                        sizes[loop] = 0
                        es = list(entries)
                        es[e] = (es[e][0], es[e][1][:a] + [Action(act.kind, sizes)]
                                 + es[e][1][a + 1:], es[e][2])
                        if self.fails(program, text(es)):
                            entries, act = es, es[e][1][a]
        return program, text(entries)


def _reproducer(f: Failure, program: FuzzProgram, schedule: str, path: Path) -> None:
    from mlir_rl.core import schedule_header  # noqa: F401 (grammar is C++'s)
    lines = [f"// mlir-rl fuzz: {f.status}: {f.detail.splitlines()[0] if f.detail else ''}"[:400],
             f"// program {program.origin}: {program.describe()}",
             f"// found by the {f.spec.label()} schedule" +
             (f" (stage {f.stage})" if f.stage else "")]
    if f.spec.source == "prepared" and f.spec.seed:
        steps = prepare_steps(f.spec)
        lines += [f"// the schedule of the prepared program (greedy policy): {schedule}",
                  f"// prepared with: {steps}",
                  "// reproduce: mlir-rl-opt --pass-pipeline='" + steps[:-1] +
                  f",linalg-rl-schedule{{fuse-elementwise=false rewrite-windows=false "
                  f"pad-to-tiles=false flatten-elementwise=false}},mlir-rl-lower)' {path.name}"]
    elif f.spec.source == "prepared":
        lines += [f"// the schedule of the prepared program (greedy policy): {schedule}",
                  f"// reproduce: mlir-rl bench {path.name} --prepare --runs 1",
                  "// or: mlir-opt-22 --load-pass-plugin=$(mlir-rl plugin-path) "
                  "--pass-pipeline='builtin.module(mlir-rl-prepare,linalg-rl-schedule,"
                  f"mlir-rl-lower)' {path.name}"]
    elif schedule:
        lines += [f"// schedule: {schedule}",
                  f"// reproduce: mlir-rl bench {path.name} --schedule '{schedule}' --runs 1",
                  "// or: mlir-opt-22 --load-pass-plugin=$(mlir-rl plugin-path) "
                  f"--pass-pipeline='builtin.module(linalg-rl-schedule{{schedule=\"{schedule}\"}},"
                  f"mlir-rl-lower)' {path.name}"]
    if f.spec.source in ("sampled", "greedy", "heuristic", "uniform"):
        opts = {"sampled": f"sample=true seed={f.spec.seed}", "greedy": "",
                "heuristic": "decisions=heuristic",
                "uniform": f"decisions=random seed={f.spec.seed}"}[f.spec.source]
        lines.append("// the policy run: mlir-opt-22 --load-pass-plugin=$(mlir-rl plugin-path) "
                     f"--pass-pipeline='builtin.module(linalg-rl-schedule{{{opts}}},mlir-rl-lower)' "
                     f"{path.name}")
    text = "\n".join(lines) + "\n" + program.text().split("\n", 1)[1]
    path.write_text(text)


def shrink_failures(failures: list[Failure], cfg: FuzzConfig, wcfg: WorkerConfig,
                    out: Path, log) -> None:
    """Shrink the first failure of each signature; write reproducers."""
    seen: dict[str, Failure] = {}
    out.mkdir(parents=True, exist_ok=True)
    worker = Worker(cfg.timeout_s)
    try:
        for n, f in enumerate(failures):
            key = f.signature()
            if key in seen or len(seen) >= cfg.max_shrinks:
                f.reproducer = seen[key].reproducer if key in seen else ""
                continue
            seen[key] = f
            path = out / f"failure-{len(seen):03d}-{f.status}.mlir"
            program, schedule = f.program, f.schedule
            if f.spec.source == "prepared":
                sh = _Shrinker(worker, wcfg, f.status, time.monotonic() + cfg.shrink_seconds,
                               spec=f.spec)
                if sh.fails(program, ""):
                    program = sh.run_nodes(program)
                    f.shrunk = {"reproduces": True, "tests": sh.tests,
                                "nodes": [len(f.program.nodes), len(program.nodes)]}
                else:
                    f.shrunk = {"reproduces": False, "tests": sh.tests}
            elif f.spec.source != "unscheduled" and schedule:
                sh = _Shrinker(worker, wcfg, f.status, time.monotonic() + cfg.shrink_seconds)
                if sh.fails(program, schedule):
                    program, schedule = sh.run(program, schedule)
                    f.shrunk = {"reproduces": True, "tests": sh.tests,
                                "nodes": [len(f.program.nodes), len(program.nodes)],
                                "schedule": schedule}
                else:
                    f.shrunk = {"reproduces": False, "tests": sh.tests}
            _reproducer(f, program, schedule, path)
            f.reproducer = str(path)
            log(f"  {f.signature()}\n    -> {path}"
                + (f" ({len(program.nodes)} of {len(f.program.nodes)} nodes)"
                   if f.shrunk and f.shrunk.get("reproduces") else ""))
    finally:
        worker.close()


# -- The loop --------------------------------------------------------------------

def run_fuzz(cfg: FuzzConfig, argv: Optional[list[str]] = None) -> dict:
    import mlir_rl
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    wcfg = WorkerConfig(threads=cfg.threads, model=cfg.model)
    gcfg = GenConfig(max_nodes=cfg.max_nodes, bf16=True)
    log = (lambda s: None) if cfg.quiet else (lambda s: print(s, flush=True))
    start = time.monotonic()
    deadline = start + cfg.minutes * 60
    workers = [Worker(cfg.timeout_s) for _ in range(max(1, cfg.jobs))]
    inflight: dict[int, tuple[int, FuzzProgram, list[Spec]]] = {}
    tally, failures = Tally(), []
    next_index = cfg.first
    last_log = start

    def more() -> bool:
        if cfg.programs and next_index >= cfg.first + cfg.programs:
            return False
        return time.monotonic() < deadline
    try:
        while True:
            for w_id, w in enumerate(workers):
                if not w.busy and more():
                    program = program_for(cfg.seed, next_index, gcfg)
                    specs = specs_for(cfg, next_index)
                    w.submit(program.text(), specs, wcfg)
                    inflight[w_id] = (next_index, program, specs)
                    next_index += 1
            busy = [w for w in workers if w.busy]
            if not busy:
                break
            wait([w.conn for w in busy if w.conn is not None], timeout=1.0)
            for w_id, w in enumerate(workers):
                if w_id in inflight and w.pump():
                    _, program, specs = inflight.pop(w_id)
                    _record(tally, failures, program, specs, w.outcome)
            now = time.monotonic()
            if now - last_log > 30:
                last_log = now
                log(f"[{(now - start) / 60:5.1f} min] {tally.programs} programs, "
                    f"{tally.pairs} pairs, {len(failures)} failures")
    finally:
        for w in workers:
            w.close()
    elapsed = time.monotonic() - start
    log(f"{tally.programs} programs ({tally.unlowerable} not lowerable unscheduled), "
        f"{tally.pairs} program-schedule pairs in {elapsed / 60:.1f} min: "
        + ", ".join(f"{k} {v}" for k, v in sorted(tally.by_status.items())))
    if failures:
        log(f"{len(failures)} failures; shrinking:")
        shrink_failures(failures, cfg, wcfg, out / "failures", log)
    report = {
        "command": "mlir-rl " + " ".join(argv if argv is not None else sys.argv[1:]),
        "version": mlir_rl.__version__,
        "layout_hash": mlir_rl.layout().hash,
        "legality_hash": mlir_rl.legality()["hash"],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "config": dataclasses.asdict(cfg),
        "elapsed_s": round(elapsed, 1),
        "programs": tally.programs,
        "programs_unlowerable_unscheduled": tally.unlowerable,
        "unlowerable_reasons": dict(tally.unlowerable_details.most_common(10)),
        "unlowerable_programs": tally.unlowerable_programs,
        "pairs": tally.pairs,
        "duplicate_schedules_skipped": tally.duplicates,
        "declined_actions": tally.declined,
        "by_status": dict(tally.by_status),
        "by_source": dict(tally.by_source),
        "failures": len(failures),
        "wrong_outputs": tally.by_status.get("wrong_output", 0),
        "crashes": tally.by_status.get("crash", 0),
        "hangs": tally.by_status.get("hang", 0),
        "coverage": {"node_kinds": dict(tally.node_kinds.most_common()),
                     "dtypes": dict(tally.dtypes), "actions": dict(tally.actions),
                     "zero_size_programs": tally.zero_size_programs,
                     "multi_result_programs": tally.multi_result_programs},
        "failure_list": [{"status": f.status, "detail": f.detail[:1000],
                          "program": f.program.origin, "source": f.spec.label(),
                          "schedule": f.schedule, "stage": f.stage, "step": f.step,
                          "shrunk": f.shrunk, "reproducer": f.reproducer}
                         for f in failures[:200]],
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
