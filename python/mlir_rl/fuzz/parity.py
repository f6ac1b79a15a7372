"""Parity and replay of the schedule pipeline, over many programs.

* **Parity**: the IR the environment produces for a sequence of decisions
  (the module after the front end, the decisions taken one step at a time as
  ``LinalgScheduleEnv.step`` takes them, then the rules) equals, byte for
  byte, what ``linalg-rl-schedule`` in stock ``mlir-opt`` emits for the same
  decisions (``decisions=random seed=S``, or the policy, or the heuristic);
  random decisions draw the rules' choices too (``{pack=0,rt=4}``), which
  the environment records with ``Module.choose`` before its rules.
* **Replay**: the schedule the API prints (``Module.schedule``, a trace),
  handed back to ``Module.apply_schedule`` on the same input, gives the same
  IR; the pass's ``schedule=`` takes the same text (test/replay.mlir).

``python -m mlir_rl.fuzz.parity --programs 300`` runs both over the
benchmark suites' kernels, the ops of the imported models (each cut out as
compile-time tuning cuts it: ``Module.op_unit``; ``--model-ops 0`` leaves
them out) and fuzzed programs, and prints one line per mismatch.
"""
from __future__ import annotations

import argparse
import collections
import random
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterable, Optional

SEPARATOR = "// -----"


@dataclass
class Outcome:
    name: str
    source: str
    status: str  # ok, differs, refused, pass_failed, env_failed
    detail: str = ""


def model_ops(limit: int, models: Optional[Iterable[str]] = None) -> list[tuple[str, str]]:
    """(name, text): distinct ops of the imported models (the models suite's
    torch-mlir imports, imported on first use), each cut out as a module of
    its own with ``Module.op_unit``, at most ``limit``, taken from the
    models in turn so that every model contributes."""
    from mlir_rl.bench.peers import model_file
    from mlir_rl.core import Module, ScheduleError
    from mlir_rl.data import torch_models
    per_model: list[list[tuple[str, str]]] = []
    seen: set[str] = set()
    for name in models or torch_models.MODELS:
        m = Module.parse(model_file(name).read_text(), name)
        units = []
        for op in m.ops():
            try:
                text = m.op_unit(op.id)
            except ScheduleError:
                continue
            if text not in seen:
                seen.add(text)
                units.append((f"model/{name}/{op.id}", text))
        per_model.append(units)
    out: list[tuple[str, str]] = []
    while len(out) < limit and any(per_model):
        for units in per_model:
            if units and len(out) < limit:
                out.append(units.pop(0))
    return out


# Every benchmark suite but the whole models (their ops come cut out).
SUITES = ("ops", "unseen", "fresh", "odd", "shapes", "lqcd", "smoke", "random")


def programs(count: int, seed: int = 0, suites: Iterable[str] = SUITES,
             models: int = 0) -> list[tuple[str, str]]:
    """(name, text): the suites' kernels, up to ``models`` ops of the
    imported models, then fuzzed programs up to ``count``."""
    from mlir_rl.bench.peers import get_suite
    from mlir_rl.fuzz.programs import program_for
    out: list[tuple[str, str]] = []
    for suite in suites:
        out += [(f"{suite}/{k.name}", k.text) for k in get_suite(suite)]
    if models > 0:
        out += model_ops(min(models, max(count - len(out), 0)))
    index = 0
    while len(out) < count:
        out.append((f"fuzz/{seed}/{index}", program_for(seed, index).text()))
        index += 1
    return out[:count]


def run_pass_batch(texts: list[str], decisions: str, seed: int) -> list[Optional[str]]:
    """Each text through ``linalg-rl-schedule{decisions=... seed=...}`` in
    stock mlir-opt (one process, --split-input-file): the IR, or None where
    the pass failed."""
    import os

    from mlir_rl.core import legality
    from mlir_rl.paths import mlir_opt_path, plugin_path
    # The pass sees the register file this process decides with (a process
    # reads it once; a test may have named another target before).
    regs = legality()
    env = dict(os.environ, MLIR_RL_VECTOR_REGISTERS=(
        f"{regs['vector_registers']}x{regs['vector_register_bits']}"))
    r = subprocess.run(
        [str(mlir_opt_path()), f"--load-pass-plugin={plugin_path()}", "--split-input-file",
         "-p", f"builtin.module(linalg-rl-schedule{{decisions={decisions} seed={seed}}})", "-"],
        input=f"\n{SEPARATOR}\n".join(texts), capture_output=True, text=True, env=env)
    chunks = r.stdout.split(SEPARATOR)
    if len(chunks) != len(texts):
        # A chunk that failed prints nothing: find them one by one.
        return [run_pass_batch([t], decisions, seed)[0] if len(texts) > 1 else None
                for t in texts] if len(texts) > 1 else [None]
    return [c.strip() for c in chunks]


def environment_ir(text: str, decisions: str, seed: int) -> tuple[str, str]:
    """The decisions ``decisions`` takes (in process, rules off), replayed one
    step at a time on the front end's module as the environment takes them,
    then the rules: (decisions, IR)."""
    from mlir_rl.core import Action, ActionKind, ApplyStatus, Module
    decided = Module.parse(text)
    decided.schedule_with_policy(decisions=decisions, seed=seed, rules=False)
    steps = Module.parse(text, front_end=True).demonstrate(decided.decisions)
    env = Module.parse(text, front_end=True)
    for s in steps:
        if env.op(s.op).done:
            continue
        outcome = env.step(s.op, s.indices)
        if outcome.status == ApplyStatus.FAILED:  # as the environment does
            env.apply(s.op, Action(ActionKind.NO_TRANSFORMATION))
    # The rules' choices (decisions=random draws them) as decided.
    for op, choices in decided.rule_choices.items():
        env.choose(op, **choices)
    env.apply_rules(decisions=decisions)
    return decided.decisions, env.ir().strip()


def replay(text: str, decisions: str, seed: int) -> Outcome:
    """The API's trace replayed on the same input."""
    from mlir_rl.core import Module, ScheduleError
    m = Module.parse(text)
    m.schedule_with_policy(decisions=decisions, seed=seed)
    again = Module.parse(text)
    try:
        again.apply_schedule(m.schedule)
    except ScheduleError as e:
        return Outcome("", decisions, "refused", f"{m.schedule}: {e}"[:500])
    if again.ir() != m.ir():
        return Outcome("", decisions, "differs", m.schedule[:500])
    return Outcome("", decisions, "ok")


def check(progs: list[tuple[str, str]], sources: Iterable[str] = ("random", "policy"),
          seed: int = 0, batch: int = 20, with_replay: bool = True) -> list[Outcome]:
    """Parity (and replay) of every program with every decision source."""
    out: list[Outcome] = []
    for source in sources:
        for start in range(0, len(progs), batch):
            chunk = progs[start:start + batch]
            passed = run_pass_batch([t for _, t in chunk], source, seed)
            for (name, text), pass_ir in zip(chunk, passed):
                if pass_ir is None:
                    out.append(Outcome(name, source, "pass_failed"))
                    continue
                try:
                    decided, env_ir = environment_ir(text, source, seed)
                except Exception as e:  # noqa: BLE001
                    out.append(Outcome(name, source, "env_failed", str(e)[:500]))
                    continue
                out.append(Outcome(name, source, "ok" if env_ir == pass_ir else "differs",
                                   "" if env_ir == pass_ir else decided[:500]))
                if with_replay:
                    r = replay(text, source, seed)
                    r.name = name
                    out.append(Outcome(name, f"replay/{source}", r.status, r.detail))
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mlir_rl.fuzz.parity", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sources", default="random,policy,heuristic")
    ap.add_argument("--model-ops", type=int, default=150,
                    help="at most this many distinct ops of the imported models (default 150)")
    ap.add_argument("--no-replay", action="store_true")
    a = ap.parse_args(argv)
    progs = programs(a.programs, a.seed, models=a.model_ops)
    results = check(progs, a.sources.split(","), a.seed, with_replay=not a.no_replay)
    bad = [r for r in results if r.status != "ok"]
    for r in bad:
        print(f"{r.status:12s} {r.source:18s} {r.name}: {r.detail}")
    kinds = sorted({r.source for r in results})
    origins = collections.Counter(p.split("/")[0] for p, _ in progs)
    print("programs: " + ", ".join(f"{n} {o}" for o, n in sorted(origins.items())))
    for k in kinds:
        rs = [r for r in results if r.source == k]
        print(f"{k}: {sum(r.status == 'ok' for r in rs)}/{len(rs)} ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
