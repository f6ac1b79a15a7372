"""Evaluate a policy on a dataset split against search baselines.

For every program: the policy's greedy schedule (exactly what the pass
applies, zero measurements at compile time), (a) random search — uniformly
random legal schedules — with as many measurements per program as the
training spent per program, and (b) best-of-N structured search. Every
schedule is measured through the environment (memoized, outputs checked
against the unscheduled program). Reports per-kind geomean speedups over
the unscheduled program.
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
    seed: int = field(default=0, metadata={"help": "seed of the samplers"})
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
            # The schedule is measured on `text` as given: no window rewrite.
            m.schedule_with_policy(cfg.model, rewrite_windows=False, pad_to_tiles=False)
            meas = measurer.measure(text, m.schedule)
            policy = measurer.speedup(text, meas)
            row = {"name": entry["name"], "kind": entry["kind"], "family": entry["family"],
                   "baseline_s": base.median_s, "policy_schedule": m.schedule,
                   "policy_status": meas.status, "policy": policy}
            if entry["name"] in earlier:
                row.update({k: earlier[entry["name"]][k] for k in (
                    "random", "random_tried", "search", "search_tried", "search_schedule")})
            else:
                rnd = search(measurer, entry["name"], text, random_budget, "random",
                             cfg.seed + i)
                best = search(measurer, entry["name"], text, cfg.search_budget, "structured",
                              cfg.seed + i)
                row.update({"random": rnd.best_speedup, "random_tried": rnd.tried,
                            "search": best.best_speedup, "search_tried": best.tried,
                            "search_schedule": best.best_schedule})
            rows.append(row)
    finally:
        measurer.close()
    kinds = sorted({r["kind"] for r in rows})
    table = ["| kind | programs | policy | random search (%d / program) | best-of-%d search | policy / search | slower than baseline |"
             % (random_budget, cfg.search_budget),
             "|---|---|---|---|---|---|---|"]
    summary = {}
    for k in kinds + ["all"]:
        rs = [r for r in rows if k == "all" or r["kind"] == k]
        p, ra, s = (geomean(r[c] for r in rs) for c in ("policy", "random", "search"))
        slower = sum(1 for r in rs if r["policy"] < 1.0)
        summary[k] = {"programs": len(rs), "policy": p, "random": ra, "search": s,
                      "ratio": p / s if s else 0.0, "slower": slower}
        table.append(f"| {k} | {len(rs)} | {p:.2f}x | {ra:.2f}x | {s:.2f}x | "
                     f"{(p / s if s else 0):.2f} | {slower} |")
    return {"config": cfg.__dict__, "random_budget": random_budget, "rows": rows,
            "summary": summary, "table": "\n".join(table)}
