"""Search baselines and demonstrations: random and structured schedule search.

* ``random_schedule``: uniformly random legal decisions -- the C++ decoder
  sampling from uniform logits, as an untrained agent explores.
* ``structured_schedule``: the shape of schedules that work on CPUs -- tiled
  parallelization of the parallel loops, tiling down to a vectorizable
  tile, vectorization -- with random sizes among those the C++ masks allow.
* ``neighbours``: the schedules one tile-size step away from a schedule
  (the C++ encoding of each decision, one tile index moved, replayed).
* ``search``: best of N sampled schedules per program, then (``local``) a
  hill climb over the best one's neighbours; every candidate measured by the
  :class:`~mlir_rl.measure.measurer.Measurer` (memoized, checked against the
  unscheduled program's outputs).

The best schedules found on the training split are also demonstrations for
the behaviour-cloning warm start of PPO (``mlir_rl.rl.warmstart``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from mlir_rl.core import Action, ActionKind, IllegalActionError, Module, ScheduleError, layout
from mlir_rl.stats import geomean


def _uniform(obs: np.ndarray, mask: np.ndarray):
    lay = layout()
    return (np.zeros(lay.raw["kind_mask_size"], np.float32),
            np.zeros(lay.raw["tile_mask_size"], np.float32),
            np.zeros(lay.raw["pointer_mask_size"], np.float32))


def random_schedule(module: Module, rng: random.Random) -> str:
    """Uniformly random legal decisions until every op is complete (the C++
    decoder, sampling from uniform logits), after the pipeline's front end,
    and random rule choices: the decisions (the measurer adds the rules, as
    the pass does)."""
    module.schedule_with(_uniform, sample=True, seed=rng.getrandbits(63), rules=False)
    module.draw_rule_choices(rng.getrandbits(63))
    return module.decisions


def _try(module: Module, op: int, action: Action) -> bool:
    try:
        module.apply(op, action)
        return True
    except IllegalActionError:
        return False


def _sizes(module: Module, op: int, kind: ActionKind,
           prefer: Callable[[int, int, list[int]], int]) -> list[int]:
    masks = module.masks(op)
    loops = len(module.op(op).loop_bounds)
    return [prefer(l, loops, masks.allowed_sizes(kind, l)) for l in range(loops)]


def structured_schedule(module: Module, rng: random.Random) -> str:
    """Parallelize, tile to a vectorizable tile, vectorize; random sizes."""
    TP, TF, T, V, NT = (ActionKind.TILED_PARALLELIZATION, ActionKind.TILED_FUSION,
                        ActionKind.TILING, ActionKind.VECTORIZATION,
                        ActionKind.NO_TRANSFORMATION)
    for op in module.traversal_order():
        if module.op(op).done:
            continue
        masks = module.masks(op)
        if masks.allowed(TP) and rng.random() < 0.85:
            kind = TF if masks.allowed(TF) and rng.random() < 0.3 else TP

            def par(l, n, allowed):
                big = [s for s in allowed if s >= 4]
                return rng.choice(big) if big and rng.random() < 0.7 else rng.choice(allowed)
            _try(module, op, Action(kind, _sizes(module, op, kind, par)))
        for _ in range(2):
            masks = module.masks(op)
            if module.op(op).done or masks.allowed(V) or not masks.allowed(T):
                break

            iterators = module.op(op).iterators

            def small(l, n, allowed):
                if l == n - 1:
                    # A reduction innermost may stay scalar: the tile then
                    # accumulates outer products (a few rows of a
                    # matrix-vector product: T(4,64,1), 20x T(1,8,8)).
                    if iterators[l] == "reduction" and 1 in allowed and rng.random() < 0.3:
                        return 1
                    pick = [s for s in allowed if s >= 8] or allowed
                elif rng.random() < 0.3:
                    # Wide tiles of outer loops (the 32 of a matmul's T(8,32,8)).
                    pick = [s for s in allowed if s >= 16] or allowed
                else:
                    pick = [s for s in allowed if 1 <= s <= 8] or allowed
                return rng.choice(pick)
            _try(module, op, Action(T, _sizes(module, op, T, small)))
        if module.op(op).done:
            continue
        if module.masks(op).allowed(V) and rng.random() < 0.95:
            _try(module, op, Action(V))
        else:
            _try(module, op, Action(NT))
    return module.decisions


SAMPLERS = {"random": random_schedule, "structured": structured_schedule}


def _replay_with(text: str, name: str, steps, at: int, loop: int, index: int) -> Optional[str]:
    """``steps`` replayed on a fresh module with decision ``at``'s tile
    index of ``loop`` set to ``index``: the schedule, or None if any
    decision falls back or is refused."""
    m = Module.parse(text, name, front_end=True)
    for j, e in enumerate(steps):
        indices = [int(x) for x in e.indices]
        if j == at:
            indices[1 + loop] = index
        try:
            if m.step(e.op, indices).fallback:
                return None
        except (IllegalActionError, ScheduleError):
            return None
    return m.decisions


def neighbours(text: str, name: str, schedule: str) -> list[str]:
    """The schedules one tile-size step away from ``schedule`` on the
    unscheduled program ``text``: for each decision that carries tile sizes,
    each of its loops' sizes moved to the next smaller or larger candidate
    (its tile index in ``[kind, tile per loop, pointer]`` one up or down),
    every other decision as it was. A neighbour that the C++ masks refuse
    anywhere (a decision that falls back) is dropped; each appears once."""
    steps = Module.parse(text, name, front_end=True).demonstrate(schedule)
    top = len(layout().tile_candidates) - 1
    out, seen = [], {schedule}
    for i, d in enumerate(steps):
        tiles = list(d.indices[1:-1])
        if not any(tiles):
            continue  # no tile sizes: vectorization, interchange, NT
        for loop, t in enumerate(tiles):
            for moved in (t - 1, t + 1):
                if 0 <= moved <= top:
                    sched = _replay_with(text, name, steps, i, loop, moved)
                    if sched is not None and sched not in seen:
                        seen.add(sched)
                        out.append(sched)
    return out


@dataclass
class SearchResult:
    name: str
    best_schedule: str
    best_speedup: float
    tried: int
    speedups: list[float] = field(default_factory=list)


def search(measurer, name: str, text: str, budget: int, sampler: str = "structured",
           seed: int = 0, cut_at: Optional[float] = 1.0,
           candidates: Sequence[str] = (), local: int = 0) -> SearchResult:
    """Best of ``budget`` sampled schedules of one program (distinct ones
    measured; a schedule sampled twice costs one measurement).

    The unscheduled program is the floor: ``best_schedule`` is "" (and
    ``best_speedup`` 1.0) unless a measured schedule is faster.
    ``cut_at``: a candidate is stopped at its first call slower than this x
    the unscheduled program (it cannot be the best); None measures every
    candidate fully. ``candidates``: schedules measured first, in addition
    to the budget, measured without a cut (e.g. a policy's own schedule,
    so that the best is at least as good as it). ``local``: then up to this
    many more measurements climbing from the best (where none beat the
    unscheduled program, the fastest measured): its ``neighbours`` are
    measured in order and the first faster one becomes the best, until none
    is faster or the budget is spent (random samples rarely reach a good
    schedule's exact sizes; one step at a time from a good one often does)."""
    rng = random.Random(seed)
    # The fastest measured schedule, faster than unscheduled or not: the
    # climb starts there also when none is (a loaded machine, a tiny
    # program); it is the best only if it is.
    top, top_s, speedups, seen = "", 0.0, [], set()

    def draws():
        # The candidates are measured in full: a cut one (a slow first call
        # of a fast program) would count as failed, and a policy's schedule
        # as a demonstration of the unscheduled program.
        for c in candidates:
            yield c, None
        for _ in range(budget):
            yield SAMPLERS[sampler](Module.parse(text, name, front_end=True), rng), cut_at
    def improves(sched: str, cut: Optional[float]) -> bool:
        """Measure ``sched`` (once); True if it is the new best (faster
        than every earlier one and than the unscheduled program)."""
        nonlocal top, top_s
        seen.add(sched)
        s = measurer.speedup(text, measurer.measure(text, sched, cut_at=cut))
        speedups.append(s)
        best = s > max(top_s, 1.0)
        if s > top_s:
            top, top_s = sched, s
        return best

    for sched, cut in draws():
        if sched and sched not in seen:
            improves(sched, cut)
    spent, climbing = 0, bool(top)
    while climbing and spent < local:
        climbing = False
        for sched in neighbours(text, name, top):
            if spent >= local:
                break
            if sched in seen:
                continue
            spent += 1
            if improves(sched, cut_at):
                climbing = True
                break
    if top_s <= 1.0:  # the unscheduled program is the floor
        top, top_s = "", 1.0
    return SearchResult(name, top, top_s, len(seen), speedups)


@dataclass
class SearchConfig:
    """``mlir-rl search``: best-of-N search on every program of a split."""

    dataset: str = field(default="runs/dataset", metadata={"help": "dataset directory"})
    split: str = field(default="train", metadata={"help": "split to search"})
    family: str = field(default="", metadata={
        "help": "only programs of these families (comma-separated, e.g. thin); each keeps "
                "the sampler seed of its place in the split"})
    kind: str = field(default="", metadata={
        "help": "only programs whose main op is of these kinds (comma-separated, e.g. "
                "matmul); with --family, both must match"})
    name: str = field(default="", metadata={
        "help": "only programs whose name starts with one of these prefixes (comma-separated, "
                "e.g. thin_linear_torch_); with --family or --kind, all must match"})
    budget: int = field(default=16, metadata={"help": "schedules sampled per program"})
    local: int = field(default=0, metadata={
        "help": "then up to this many more measurements per program, climbing from the best "
                "schedule one tile-size step at a time"})
    sampler: str = field(default="structured", metadata={"help": "structured or random"})
    runs: int = field(default=1, metadata={"help": "timed runs per measurement (median)"})
    threads: int = field(default=2, metadata={"help": "OpenMP threads of measurements"})
    seed: int = field(default=0, metadata={"help": "seed of the sampler"})
    memo: str = field(default="runs/measurements.sqlite", metadata={"help": "measurement memo"})
    output: str = field(default="runs/search.json", metadata={"help": "results (JSON)",
                                                            "flags": ("-o", "--output")})
    policy: Optional[str] = field(default=None, metadata={
        "help": "also measure this ONNX policy's schedule of each program (demonstrations "
                "for fine-tuning it: the best of both)"})
    heuristic: bool = field(default=False, metadata={
        "help": "also measure the heuristic's decisions (the pass's decisions=heuristic) of "
                "each program as a candidate"})
    policy_margin: float = field(default=1.0, metadata={
        "help": "with --policy: the demonstration stays the policy's own schedule unless the "
                "search's best is this many times faster (single timed runs make small wins "
                "noise; cloning them unlearns good choices)"})


def demonstration(entry: dict, policy_schedule: str, policy_speedup: float,
                  margin: float) -> dict:
    """A search result (``best_schedule``, ``best_speedup``) as a
    demonstration for fine-tuning the policy that scheduled the program: the
    policy's own schedule unless the search's best is ``margin`` times faster
    (the search's winner is then kept as ``search_schedule``)."""
    out = dict(entry, policy_schedule=policy_schedule, policy_speedup=policy_speedup)
    if policy_speedup == 0.0 and not out["best_schedule"]:
        # The policy's schedule did not measure (a timeout: the measurer's
        # 60 s compile budget) and nothing else beat the unscheduled
        # program: no evidence for cloning either, so no demonstration.
        out["no_demonstration"] = True
    if out["best_schedule"] != policy_schedule and out["best_speedup"] < margin * policy_speedup:
        out.update(search_schedule=out["best_schedule"], search_speedup=out["best_speedup"],
                   best_schedule=policy_schedule, best_speedup=policy_speedup)
    out["best_is_policy"] = out["best_schedule"] == policy_schedule
    return out


def search_dataset(cfg: SearchConfig, progress: bool = True) -> list[dict]:
    """Best-of-``budget`` search on every program of a split; writes JSON."""
    import json
    from pathlib import Path

    from mlir_rl.data.dataset import load_dataset
    from mlir_rl.measure.executor import ExecConfig
    from mlir_rl.measure.measurer import MeasureConfig, Measurer
    if cfg.sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {cfg.sampler!r}; valid: {', '.join(SAMPLERS)}")
    families = {f for f in cfg.family.split(",") if f}
    kinds = {k for k in cfg.kind.split(",") if k}
    prefixes = tuple(n for n in cfg.name.split(",") if n)
    # (index in the split: the sampler's seed, name, text)
    progs = [(i, e["name"], text) for i, (e, text) in enumerate(load_dataset(cfg.dataset, cfg.split))
             if (not families or e.get("family") in families)
             and (not kinds or e.get("kind") in kinds)
             and (not prefixes or e["name"].startswith(prefixes))]
    if not progs:
        raise ValueError(f"no program of {cfg.dataset}:{cfg.split}"
                         + (f" in families {cfg.family}" if families else "")
                         + (f" of kinds {cfg.kind}" if kinds else "")
                         + (f" named {cfg.name}*" if prefixes else ""))
    results = []
    items = progs
    if progress:
        from tqdm import tqdm
        items = tqdm(progs, desc=f"search {cfg.sampler} x{cfg.budget}", unit="program")
    with Measurer(MeasureConfig(exec=ExecConfig(runs=cfg.runs, threads=cfg.threads),
                                memo_path=cfg.memo)) as measurer:
        for i, name, text in items:
            extra = []
            if cfg.policy is not None:
                pm = Module.parse(text, name)
                pm.schedule_with_policy(cfg.policy, rules=False)
                extra.append(pm.decisions)
            if cfg.heuristic:
                hm = Module.parse(text, name)
                hm.schedule_with_policy(decisions="heuristic", rules=False)
                extra.append(hm.decisions)
            r = search(measurer, name, text, cfg.budget, cfg.sampler, cfg.seed + i,
                       candidates=extra, local=cfg.local)
            entry = {"name": name, "best_schedule": r.best_schedule,
                     "best_speedup": r.best_speedup, "tried": r.tried}
            if cfg.policy is not None:
                # The policy's schedule is the first candidate measured ("" is
                # the unscheduled program: speedup 1).
                entry = demonstration(entry, extra[0], r.speedups[0] if extra[0] else 1.0,
                                      cfg.policy_margin)
            results.append(entry)
            Path(cfg.output).write_text(json.dumps(results, indent=2) + "\n")
    return results


def summary(results: list[dict]) -> float:
    """Geomean of the best speedups of a search's results."""
    return geomean(r["best_speedup"] for r in results)
