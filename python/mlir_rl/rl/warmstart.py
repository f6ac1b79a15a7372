"""Warm starts for PPO: an actor from an earlier policy, Pearl's critic
pre-training, and behaviour cloning of demonstrated schedules.

Demonstrations are encoded by C++ (``Module.demonstrate``: the schedule's
every decision with its observation, mask, phase and indices), so a cloned
decision is exactly what the environment and the pass would execute.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from mlir_rl.core import Module, ScheduleError, layout
from mlir_rl.rl.policy import Actor, Critic, action_log_prob

Log = Callable[[str, float, int], None]


def init_from(actor: Actor, critic: Critic, source: str) -> None:
    """Loads an exported policy's actor (.onnx) or a checkpoint's actor and
    critic (.pt) into ``actor``/``critic``; both must match the network shape.
    A residual actor (``cfg.prior``) started from a source without that
    prior keeps the source's embedding and backbone and zeroes its heads, so
    it starts deciding as the prior does."""
    if str(source).endswith(".onnx"):
        from mlir_rl.rl.export import actor_from_onnx
        loaded = actor_from_onnx(source)
        actor.load_state_dict(loaded.state_dict())
    else:
        from mlir_rl.rl.policy import load_actor
        ck = torch.load(source, map_location="cpu", weights_only=False)
        loaded = load_actor(ck)
        actor.load_state_dict(loaded.state_dict())
        if "critic" in ck:
            critic.load_state_dict(ck["critic"])
    if actor.cfg.prior and loaded.cfg.prior != actor.cfg.prior:
        actor.zero_residual()


def pretrain_critic(critic: Critic, measurer, programs, epochs: int, lr: float,
                    log: Log) -> None:
    """Pearl's actor-critic pre-training: regress the critic on log10 baseline
    times of the programs (their first op's observation) before PPO."""
    xs, ys = [], []
    for name, text in programs:
        base = measurer.baseline(text)
        if not base.ok:
            continue
        m = Module.parse(text, name)
        op = m.next_op()
        if op is None:
            continue
        xs.append(m.observation(op))
        ys.append(math.log10(base.median_s))
    if not xs:
        return
    x, y = torch.tensor(np.stack(xs)), torch.tensor(ys, dtype=torch.float32)
    opt = torch.optim.Adam(critic.parameters(), lr=lr)
    for epoch in range(epochs):
        loss = ((critic(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log("pretrain/critic_loss", loss.item(), epoch)
    # The value of a fresh episode is a return, not a time: reset the head.
    nn.init.zeros_(critic.value.weight)
    nn.init.zeros_(critic.value.bias)


class Decisions:
    """A batch of decisions: observations, masks, phases, unsplit choices,
    executed indices."""

    def __init__(self, obs, mask, phase, unsplit, action):
        self.obs, self.mask, self.phase, self.unsplit, self.action = (
            obs, mask, phase, unsplit, action)

    def __len__(self) -> int:
        return len(self.action)


def demonstration_decisions(programs: dict[str, str], demos: list[dict],
                            on_skip: Callable[[str], None] | None = None) -> Decisions:
    """Every decision of each demonstrated schedule (``{"name", "best_schedule"}``
    entries of ``mlir-rl search``) replayed on its program. A schedule the
    action space no longer allows (recorded under an older legality config)
    is left out and reported to ``on_skip`` (raised without it)."""
    steps = []
    for d in demos:
        if d["name"] in programs:
            try:
                steps += Module.parse(programs[d["name"]], d["name"]).demonstrate(
                    d["best_schedule"])
            except ScheduleError as e:
                if on_skip is None:
                    raise
                on_skip(f"demonstration of {d['name']} left out: {e}")
    if not steps:
        raise ValueError("no demonstration matches a training program")
    return _decisions(steps)


def is_thin_matmul(op, rows: int) -> bool:
    """A matmul-like op (``OpInfo``) of at most ``rows`` rows (its first
    loop): a batch-1 linear layer. False for every op when ``rows`` is 0."""
    return rows > 0 and op.kind == "matmul" and bool(op.loop_bounds) \
        and op.loop_bounds[0] <= rows


def anchor_decisions(actor: Actor, paths: list[str], log_line: Callable[[str], None],
                     keep: Callable = lambda op: True) -> Decisions:
    """The starting actor's own decisions on whole networks, to clone with the
    demonstrations so that fine-tuning keeps its schedules where no
    demonstration says otherwise (cloning alone moved many untouched ops:
    VGG-11's large elementwise ops went from parallel to serial tiles).

    ``paths`` holds MLIR files of imported networks, or names of
    ``mlir_rl.data.torch_models.MODELS`` (imported with torch-mlir into the
    models directory, cached, as the models suite does). Each network is
    taken in the two forms the pass sees: the pass's front end on the
    imported text (how the bench, the gate and torch.compile give it to the
    pass) and on it after ``mlir-rl-prepare``. Each form is scheduled greedily
    by ``actor`` with the C++ loop the pass runs, and the schedule's
    decisions on the ops ``keep`` accepts (default: all) are kept, each
    distinct (observation, decision) once. Leave a network's batch-1 linear layers
    out (``is_thin_matmul``) only where demonstrations show them in the
    networks' form (the front end makes them read [N, K] weights in place):
    without such demonstrations, cloning moved VGG-11's classifier to a
    schedule 15% slower on the whole network."""
    from mlir_rl.core import front_end, prepare
    from mlir_rl.rl.policy import greedy_schedule
    steps, seen = [], set()
    for path in map(_network_file, paths):
        name = path.stem
        imported = path.read_text()
        for form, source in (("imported", imported), ("prepared", prepare(imported, name))):
            text = front_end(source, name)
            schedule = greedy_schedule(actor, Module.parse(text, name))
            fresh = Module.parse(text, name)
            kept = {op.id for op in fresh.ops() if keep(op)}
            added = 0
            for s in fresh.demonstrate(schedule):
                key = (np.asarray(s.observation, dtype=np.float32).tobytes(),
                       tuple(s.indices), int(s.phase))
                if s.op in kept and key not in seen:
                    seen.add(key)
                    steps.append(s)
                    added += 1
            log_line(f"anchor {name} ({form}): {len(kept)} ops kept, "
                     f"{added} distinct decisions")
    if not steps:
        raise ValueError("the anchors gave no decision")
    return _decisions(steps)


def _network_file(entry: str) -> Path:
    from mlir_rl.data import torch_models
    if Path(entry).exists() or entry not in torch_models.MODELS:
        return Path(entry)
    from mlir_rl.bench.peers import model_file
    return model_file(entry)


def concat_decisions(a: Decisions, b: Decisions) -> Decisions:
    return Decisions(*(torch.cat([x, y]) for x, y in zip(
        (a.obs, a.mask, a.phase, a.unsplit, a.action),
        (b.obs, b.mask, b.phase, b.unsplit, b.action))))


def _decisions(steps) -> Decisions:
    lay = layout()
    unsplit = np.stack([s.unsplit for s in steps]).astype(bool).reshape(
        -1, lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes)
    return Decisions(torch.tensor(np.stack([s.observation for s in steps]), dtype=torch.float32),
                     torch.tensor(np.stack([s.mask for s in steps]), dtype=torch.float32),
                     torch.tensor([int(s.phase) for s in steps]),
                     torch.from_numpy(unsplit),
                     torch.tensor(np.stack([s.indices for s in steps])))


def behaviour_clone(actor: Actor, decisions: Decisions, epochs: int, lr: float,
                    batch_size: int, generator: torch.Generator, log: Log) -> float:
    """Maximise the log-likelihood (``action_log_prob``: the C++ decoder's
    distribution) of demonstrated decisions; returns the final mean negative
    log-likelihood."""
    opt = torch.optim.Adam(actor.parameters(), lr=lr)
    nll = float("nan")
    n = len(decisions)
    for epoch in range(epochs):
        perm = torch.randperm(n, generator=generator)
        total = 0.0
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            logits = actor(decisions.obs[idx], decisions.mask[idx])
            logp, _ = action_log_prob(logits, decisions.phase[idx], decisions.action[idx],
                                      decisions.unsplit[idx])
            loss = -logp.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        nll = total / n
        log("bc/nll", nll, epoch)
    return nll
