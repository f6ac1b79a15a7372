"""Search baselines and demonstrations: random and structured schedule search.

* ``random_schedule``: uniformly random legal actions (the masks from C++),
  as an untrained agent explores.
* ``structured_schedule``: the shape of schedules that work on CPUs — tiled
  parallelization of the parallel loops, tiling down to a vectorizable
  tile, vectorization — with random sizes, kept legal by the C++ masks.
* ``search``: best of N sampled schedules per program, every candidate
  measured through the environment (memoized, checked against the
  unscheduled program's outputs).

The best schedules found on the training split are also demonstrations for
the behaviour-cloning warm start of PPO (``mlir_rl.ppo.behaviour_clone``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from mlir_rl.core import IllegalActionError, Module, layout


def _mnem(name: str) -> int:
    return layout().action_mnemonics.index(name)


def _apply(module: Module, op: int, action: str) -> bool:
    try:
        module.apply(op, action)
        return True
    except IllegalActionError:
        return False


def _sizes(module: Module, op: int, kind: str, rng: random.Random,
           prefer: Callable[[int, int, list[int]], int]) -> list[int]:
    lay = layout()
    masks = module.masks(op)
    k = _mnem(kind)
    loops = len(module.ops()[op].loop_bounds)
    sizes = []
    for l in range(loops):
        allowed = [lay.tile_candidates[c] for c in range(lay.num_tile_sizes)
                   if masks.tile[k, l, c]]
        sizes.append(prefer(l, loops, allowed))
    return sizes


def random_schedule(module: Module, rng: random.Random) -> str:
    """Uniformly random legal decisions until every op is complete."""
    lay = layout()
    for op in module.traversal_order():
        for _ in range(lay.history_length * (lay.max_loops + 1)):
            if module.ops()[op].done:
                break
            masks = module.masks(op)
            if masks.allowed_kinds() == ["I"]:
                ptrs = [i for i, ok in enumerate(masks.pointer) if ok]
                module.apply_pointer(op, rng.choice(ptrs))
                continue
            kind = rng.choice(masks.allowed_kinds())
            if kind in ("T", "TP", "TF"):
                sizes = _sizes(module, op, kind, rng, lambda l, n, a: rng.choice(a))
                if kind != "T" and not any(sizes):
                    kind = "NT"
                else:
                    _apply(module, op, f"{kind}({','.join(map(str, sizes))})")
                    continue
            if kind == "I":
                ptrs = [i for i, ok in enumerate(masks.pointer) if ok]
                module.apply_pointer(op, rng.choice(ptrs))
                continue
            _apply(module, op, kind)
    return module.schedule


def structured_schedule(module: Module, rng: random.Random) -> str:
    """Parallelize, tile to a vectorizable tile, vectorize; random sizes."""
    for op in module.traversal_order():
        if module.ops()[op].done:
            continue
        masks = module.masks(op)
        if masks.kind[_mnem("TP")] and rng.random() < 0.85:
            kind = "TF" if masks.kind[_mnem("TF")] and rng.random() < 0.3 else "TP"

            def par(l, n, allowed):
                big = [s for s in allowed if s >= 4]
                return rng.choice(big) if big and rng.random() < 0.7 else rng.choice(allowed)
            sizes = _sizes(module, op, kind, rng, par)
            if any(sizes):
                _apply(module, op, f"{kind}({','.join(map(str, sizes))})")
        for _ in range(2):
            masks = module.masks(op)
            if module.ops()[op].done or masks.kind[_mnem("V")] or not masks.kind[_mnem("T")]:
                break

            def small(l, n, allowed):
                if l == n - 1:
                    pick = [s for s in allowed if s >= 8] or allowed
                else:
                    pick = [s for s in allowed if 1 <= s <= 8] or allowed
                return rng.choice(pick)
            sizes = _sizes(module, op, "T", rng, small)
            _apply(module, op, f"T({','.join(map(str, sizes))})")
        if module.ops()[op].done:
            continue
        if module.masks(op).kind[_mnem("V")] and rng.random() < 0.95:
            _apply(module, op, "V")
        else:
            _apply(module, op, "NT")
    return module.schedule


SAMPLERS = {"random": random_schedule, "structured": structured_schedule}


@dataclass
class SearchResult:
    name: str
    best_schedule: str
    best_speedup: float
    tried: int
    speedups: list[float]


def search(env, name: str, text: str, budget: int, sampler: str = "structured",
           seed: int = 0, cut_at: Optional[float] = 1.0,
           candidates: Sequence[str] = ()) -> SearchResult:
    """Best of ``budget`` sampled schedules of one program (distinct ones
    measured; a schedule sampled twice costs one measurement).

    ``cut_at``: a candidate is stopped at its first call slower than this x
    the unscheduled program (it cannot be the best: the search's floor is
    the unscheduled program, 1.0x); None measures every candidate fully.
    ``candidates``: schedules measured first, in addition to the budget (e.g.
    a policy's own schedule, so that the best is at least as good as it)."""
    rng = random.Random(seed)
    base = env.baseline(text)
    best, best_s, speedups, seen = "", 1.0, [], set()
    def draws():
        yield from candidates
        for _ in range(budget):
            yield SAMPLERS[sampler](Module.parse(text, name), rng)
    for sched in draws():
        if sched in seen or not sched:
            continue
        seen.add(sched)
        meas = env.measure(text, sched, cut_at=cut_at)
        s = base.median_s / meas.median_s if (meas.ok and base.ok) else 0.0
        speedups.append(s)
        if s > best_s:
            best, best_s = sched, s
    return SearchResult(name, best, best_s, len(seen), speedups)


def search_dataset(dataset: str, split: str, budget: int, sampler: str, out: str,
                   cache_path: str, threads: int = 2, runs: int = 1, seed: int = 0,
                   progress: bool = True, policy: Optional[str] = None) -> list[dict]:
    """Best-of-``budget`` search on every program of a split; writes JSON.

    ``policy``: an ONNX policy whose greedy schedule of each program is
    measured as one more candidate (search-improved demonstrations for
    fine-tuning that policy: the best of its own choice and the search's)."""
    import json
    from pathlib import Path

    from mlir_rl.data import load_dataset
    from mlir_rl.env import EnvConfig, LinalgScheduleEnv
    from mlir_rl.executor import ExecConfig
    progs = [(e["name"], text) for e, text in load_dataset(dataset, split)]
    env = LinalgScheduleEnv(progs, EnvConfig(cache_path=cache_path,
                                             exec=ExecConfig(runs=runs, threads=threads)))
    results = []
    items = progs
    if progress:
        from tqdm import tqdm
        items = tqdm(progs, desc=f"search {sampler} x{budget}", unit="program")
    try:
        for i, (name, text) in enumerate(items):
            extra = []
            if policy is not None:
                pm = Module.parse(text, name)
                pm.schedule_with_policy(policy)
                extra.append(pm.schedule)
            r = search(env, name, text, budget, sampler, seed + i, candidates=extra)
            entry = {"name": name, "best_schedule": r.best_schedule,
                     "best_speedup": r.best_speedup, "tried": r.tried}
            if extra:
                entry["policy_schedule"] = extra[0]
                entry["best_is_policy"] = r.best_schedule == extra[0]
            results.append(entry)
            Path(out).write_text(json.dumps(results, indent=2) + "\n")
    finally:
        env.close()
    return results
