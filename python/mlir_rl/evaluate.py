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
import math
from pathlib import Path
from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass
class EvalConfig:
    dataset: str = "runs/dataset"
    split: str = "val"
    model: str = ""
    random_budget: Optional[int] = None
    search_budget: int = 200
    threads: int = 2
    runs: int = 3
    cache_path: Optional[str] = "runs/measurements.sqlite"
    limit: Optional[int] = None
    seed: int = 0
    baselines: Optional[str] = None  # an earlier report: reuse its random/search figures


def _geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0]
    return float(math.exp(np.mean(np.log(xs)))) if xs else 0.0


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
    from mlir_rl.data import load_dataset
    from mlir_rl.env import EnvConfig, LinalgScheduleEnv
    from mlir_rl.executor import ExecConfig
    from mlir_rl.search import search

    items = load_dataset(cfg.dataset, cfg.split)
    if cfg.limit:
        items = items[:cfg.limit]
    env = LinalgScheduleEnv([(e["name"], t) for e, t in items], EnvConfig(
        cache_path=cfg.cache_path, exec=ExecConfig(runs=cfg.runs, threads=cfg.threads)))
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
            base = env.baseline(text)
            m = Module.parse(text, entry["name"])
            m.schedule_with_policy(cfg.model)
            meas = env.measure(text, m.schedule)
            policy = base.median_s / meas.median_s if (meas.ok and base.ok) else 0.0
            row = {"name": entry["name"], "kind": entry["kind"], "family": entry["family"],
                   "baseline_s": base.median_s, "policy_schedule": m.schedule,
                   "policy_status": meas.status, "policy": policy}
            if entry["name"] in earlier:
                row.update({k: earlier[entry["name"]][k] for k in (
                    "random", "random_tried", "search", "search_tried", "search_schedule")})
            else:
                rnd = search(env, entry["name"], text, random_budget, "random", cfg.seed + i)
                best = search(env, entry["name"], text, cfg.search_budget, "structured",
                              cfg.seed + i)
                row.update({"random": rnd.best_speedup, "random_tried": rnd.tried,
                            "search": best.best_speedup, "search_tried": best.tried,
                            "search_schedule": best.best_schedule})
            rows.append(row)
    finally:
        env.close()
    kinds = sorted({r["kind"] for r in rows})
    table = ["| kind | programs | policy | random search (%d / program) | best-of-%d search | policy / search | slower than baseline |"
             % (random_budget, cfg.search_budget),
             "|---|---|---|---|---|---|---|"]
    summary = {}
    for k in kinds + ["all"]:
        rs = [r for r in rows if k == "all" or r["kind"] == k]
        p, ra, s = (_geomean([r[c] for r in rs]) for c in ("policy", "random", "search"))
        slower = sum(1 for r in rs if r["policy"] < 1.0)
        summary[k] = {"programs": len(rs), "policy": p, "random": ra, "search": s,
                      "ratio": p / s if s else 0.0, "slower": slower}
        table.append(f"| {k} | {len(rs)} | {p:.2f}x | {ra:.2f}x | {s:.2f}x | "
                     f"{(p / s if s else 0):.2f} | {slower} |")
    return {"config": cfg.__dict__, "random_budget": random_budget, "rows": rows,
            "summary": summary, "table": "\n".join(table)}
