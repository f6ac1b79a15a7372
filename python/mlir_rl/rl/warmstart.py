"""Warm starts for PPO: an actor from an earlier policy, Pearl's critic
pre-training, and behaviour cloning of demonstrated schedules.

Demonstrations are encoded by C++ (``Module.demonstrate``: the schedule's
every decision with its observation, mask, phase and indices), so a cloned
decision is exactly what the environment and the pass would execute.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch
from torch import nn

from mlir_rl.core import Module, layout
from mlir_rl.rl.policy import Actor, Critic, action_log_prob

Log = Callable[[str, float, int], None]


def init_from(actor: Actor, critic: Critic, source: str) -> None:
    """Loads an exported policy's actor (.onnx) or a checkpoint's actor and
    critic (.pt) into ``actor``/``critic``; both must match the network shape."""
    if str(source).endswith(".onnx"):
        from mlir_rl.rl.export import actor_from_onnx
        actor.load_state_dict(actor_from_onnx(source).state_dict())
        return
    from mlir_rl.rl.policy import load_actor
    ck = torch.load(source, map_location="cpu", weights_only=False)
    actor.load_state_dict(load_actor(ck).state_dict())
    if "critic" in ck:
        critic.load_state_dict(ck["critic"])


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


def demonstration_decisions(programs: dict[str, str], demos: list[dict]) -> Decisions:
    """Every decision of each demonstrated schedule (``{"name", "best_schedule"}``
    entries of ``mlir-rl search``) replayed on its program."""
    steps = []
    for d in demos:
        if d["name"] in programs:
            steps += Module.parse(programs[d["name"]], d["name"]).demonstrate(d["best_schedule"])
    if not steps:
        raise ValueError("no demonstration matches a training program")
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
