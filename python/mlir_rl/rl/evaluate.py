"""Evaluate a policy on a dataset split against search baselines.

For every program: the policy's greedy schedule (exactly what the pass
applies, zero measurements at compile time), (a) random search — uniformly
random legal schedules — with as many measurements per program as the
training spent per program, and (b) best-of-N structured search. Every
schedule is measured through the environment (memoized, outputs checked
against the unscheduled program). Reports per-kind geomean speedups over
the unscheduled program.

The search keeps the fastest of N single measurements, and on a noisy
machine the fastest of N noisy figures is biased low (the winner's curse),
while the policy's schedule is measured once: the policy/search ratio is
read from a confirmation instead (``confirm_rounds``), the policy's schedule
and the search's best timed against each other in one process, in
alternating rounds, their outputs compared.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mlir_rl.stats import geomean


@dataclass
class EvalConfig:
    """``mlir-rl evaluate``: a policy against search baselines on a split."""

    dataset: str = field(default="runs/dataset", metadata={"help": "dataset directory"})
    split: str = field(default="val", metadata={"help": "split to evaluate on"})
    model: str = field(default="", metadata={"help": "ONNX policy (default: the shipped one)"})
    random_budget: Optional[int] = field(default=None, metadata={
        "help": "measurements per program for random search (default: the training's "
                "per-program budget recorded in the model's card, else 8)"})
    search_budget: int = field(default=200, metadata={"help": "best-of-N structured search"})
    threads: int = field(default=2, metadata={"help": "OpenMP threads of measurements"})
    runs: int = field(default=3, metadata={"help": "timed runs per measurement (median)"})
    memo: Optional[str] = field(default="runs/measurements.sqlite",
                                metadata={"help": "measurement memo"})
    limit: Optional[int] = field(default=None, metadata={"help": "first N programs only"})
    kinds: str = field(default="", metadata={
        "help": "only programs of these op kinds (comma-separated, e.g. "
                "matmul,pooling; a best-of-200 search of one prepared convolution took "
                "4-30 minutes on the 2-core hosts measured)"})
    names: str = field(default="", metadata={
        "help": "only these programs (comma-separated names, e.g. sequence_012,sequence_014)"})
    seed: int = field(default=0, metadata={"help": "seed of the samplers"})
    confirm_rounds: int = field(default=10, metadata={
        "help": "then time the policy's schedule and the search's best against each other in "
                "this many alternating rounds of --confirm-runs; the speedups and the ratio "
                "are read from them (0: from the search's own measurements); each schedule is "
                "compiled once, so many short rounds cost little and cancel the machine's drift"})
    confirm_runs: int = field(default=2, metadata={"help": "timed runs per confirmation round"})
    json: Optional[str] = field(default=None, metadata={
        "help": "write the report as JSON, rewritten after every program (a cut run keeps "
                "what it measured)"})
    baselines: Optional[str] = field(default=None, metadata={
        "help": "an earlier evaluate --json report with the same budgets: reuse its random "
                "and search figures, measure only the policy"})


def training_budget(model: str) -> Optional[int]:
    """Measurements per program the policy's training spent (from its card)."""
    from mlir_rl.core import default_model_path
    card = Path(model or default_model_path()).with_suffix(".json")
    try:
        prov = json.loads(card.read_text()).get("provenance", {})
    except (OSError, ValueError):
        return None
    per = prov.get("episodes_per_program")
    return int(round(per)) if per else None


def evaluate(cfg: EvalConfig, progress: bool = True) -> dict:
    from mlir_rl.core import Module
    from mlir_rl.data.dataset import load_dataset
    from mlir_rl.measure.executor import ExecConfig
    from mlir_rl.measure.measurer import MeasureConfig, Measurer
    from mlir_rl.rl.search import search

    items = load_dataset(cfg.dataset, cfg.split)
    where = f"{cfg.dataset}:{cfg.split}"
    if cfg.kinds:
        items = only(items, "kind", cfg.kinds, lambda missing, known: (
            f"no programs of kinds {missing} in {where}; it has {', '.join(known)}"))
    if cfg.names:
        items = only(items, "name", cfg.names, lambda missing, known: (
            f"no programs named {missing} in {where}"
            + (f" of kinds {cfg.kinds}" if cfg.kinds else "")))
    if cfg.limit:
        items = items[:cfg.limit]
    measurer = Measurer(MeasureConfig(exec=ExecConfig(runs=cfg.runs, threads=cfg.threads),
                                      memo_path=cfg.memo))
    random_budget = cfg.random_budget or training_budget(cfg.model) or 8
    earlier = {}
    if cfg.baselines:
        prev = json.loads(Path(cfg.baselines).read_text())
        pc = prev["config"]
        if (prev["random_budget"], pc["search_budget"], pc["dataset"], pc["split"]) != (
                random_budget, cfg.search_budget, cfg.dataset, cfg.split):
            raise ValueError(f"{cfg.baselines}: made with random budget {prev['random_budget']}, "
                             f"search budget {pc['search_budget']} on {pc['dataset']}:{pc['split']}, "
                             f"not {random_budget}, {cfg.search_budget} on {cfg.dataset}:{cfg.split}")
        earlier = {r["name"]: r for r in prev["rows"]}
    rows = []
    it = items
    if progress:
        from tqdm import tqdm
        it = tqdm(items, desc="evaluate", unit="program")
    try:
        for i, (entry, text) in enumerate(it):
            base = measurer.baseline(text)
            m = Module.parse(text, entry["name"])
            # The decisions; the measurer runs the pipeline around them (the
            # front end before, the rules after), as the pass ships them.
            m.schedule_with_policy(cfg.model, rules=False)
            meas = measurer.measure(text, m.decisions)
            policy = measurer.speedup(text, meas)
            row = {"name": entry["name"], "kind": entry["kind"], "family": entry["family"],
                   "baseline_s": base.median_s, "policy_schedule": m.decisions,
                   "policy_status": meas.status, "policy": policy}
            if entry["name"] in earlier and applies(text, earlier[entry["name"]]["search_schedule"]):
                row.update({k: earlier[entry["name"]][k] for k in (
                    "random", "random_tried", "search", "search_tried", "search_schedule")})
            else:  # not in the report, or its program changed since (searched anew)
                rnd = search(measurer, entry["name"], text, random_budget, "random",
                             cfg.seed + i)
                best = search(measurer, entry["name"], text, cfg.search_budget, "structured",
                              cfg.seed + i)
                row.update({"random": rnd.best_speedup, "random_tried": rnd.tried,
                            "search": best.best_speedup, "search_tried": best.tried,
                            "search_schedule": best.best_schedule})
            if cfg.confirm_rounds and meas.status == "ok":
                row.update(confirm(text, entry["name"], m.decisions, row["search_schedule"],
                                   base.median_s, cfg))
            rows.append(row)
            if cfg.json:
                Path(cfg.json).write_text(json.dumps(
                    report(cfg, random_budget, rows), indent=2) + "\n")
    finally:
        measurer.close()
    return report(cfg, random_budget, rows)


def only(items: list, key: str, wanted: str, message) -> list:
    """The ``items`` (entry, text) whose ``entry[key]`` is among the
    comma-separated ``wanted``; ValueError(``message(missing, known)``, both
    sorted lists) when some wanted value is not in ``items``."""
    want = set(wanted.split(","))
    known = {e[key] for e, _ in items}
    if want - known:
        raise ValueError(message(sorted(want - known), sorted(known)))
    return [(e, t) for e, t in items if e[key] in want]


def applies(text: str, schedule: str) -> bool:
    """Whether ``schedule`` still applies to the program ``text`` (an earlier
    report's schedule stops applying when the dataset's form changes)."""
    from mlir_rl.core import Module, ScheduleError
    if not schedule:
        return True
    try:
        Module.parse(text, "baseline").apply_decisions(schedule)
    except ScheduleError:
        return False
    return True


def confirm(text: str, name: str, policy_schedule: str, search_schedule: str,
            baseline_s: float, cfg: EvalConfig) -> dict:
    """The policy's schedule and the search's best ("" = the unscheduled
    program) timed against each other (``time_alternating``): their
    speedups over ``baseline_s``, and whether their outputs agree."""
    from mlir_rl.bench.timing import time_alternating, wait_for_openmp_spin
    from mlir_rl.core import Module, ScheduleError, outputs_match

    def scheduled(schedule: str) -> Module:
        mod = Module.parse(text, name)
        if schedule:
            mod.apply_decisions(schedule)
        return mod

    same = policy_schedule == search_schedule
    mods = [scheduled(policy_schedule)] + ([] if same else [scheduled(search_schedule)])
    wait_for_openmp_spin()  # the measurer's worker has just run
    try:
        timed = time_alternating(mods, rounds=cfg.confirm_rounds, runs=cfg.confirm_runs,
                                 threads=cfg.threads)
    except ScheduleError as e:
        return {"confirm_error": str(e)[:300]}
    ok, err = outputs_match(timed[-1].outputs, timed[0].outputs)
    out = {"policy_confirmed": baseline_s / timed[0].median,
           "search_confirmed": baseline_s / timed[-1].median,
           "confirm_outputs_equal": ok}
    if not ok:
        out["confirm_error"] = f"the two schedules' outputs differ (max abs error {err:.3g})"
    return out


def report(cfg: EvalConfig, random_budget: int, rows: list[dict]) -> dict:
    """Per-kind geomeans of ``rows`` (confirmed figures where every row has
    them), as JSON and a Markdown table."""
    confirmed = bool(rows) and all("policy_confirmed" in r and "confirm_error" not in r
                                   for r in rows)
    pcol, scol = (("policy_confirmed", "search_confirmed") if confirmed
                  else ("policy", "search"))
    kinds = sorted({r["kind"] for r in rows})
    table = ["| kind | programs | policy | random search (%d / program) | best-of-%d search | policy / search | slower than baseline |"
             % (random_budget, cfg.search_budget),
             "|---|---|---|---|---|---|---|"]
    summary = {}
    for k in kinds + ["all"]:
        rs = [r for r in rows if k == "all" or r["kind"] == k]
        p, ra, s = (geomean(r[c] for r in rs) for c in (pcol, "random", scol))
        slower = sum(1 for r in rs if r[pcol] < 1.0)
        summary[k] = {"programs": len(rs), "policy": p, "random": ra, "search": s,
                      "ratio": p / s if s else 0.0, "slower": slower}
        table.append(f"| {k} | {len(rs)} | {p:.2f}x | {ra:.2f}x | {s:.2f}x | "
                     f"{(p / s if s else 0):.2f} | {slower} |")
    if confirmed:
        table.append(f"\npolicy and search figures: their schedules timed against each other, "
                     f"{cfg.confirm_rounds} alternating rounds of {cfg.confirm_runs} runs")
    return {"config": cfg.__dict__, "random_budget": random_budget, "rows": rows,
            "confirmed": confirmed, "summary": summary, "table": "\n".join(table)}
