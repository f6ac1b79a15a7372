"""PPO for the MLIR RL environment, in the shape of CleanRL's single file.

rollout (episodes over programs) -> GAE -> minibatch updates, with the paper's
defaults (lr 1e-3, clip 0.2, gamma 1, lambda 0.95, 64 programs per iteration,
minibatch 32, 4 epochs, value coefficient 0.5, entropy 0.01). ``compute_gae``
and ``ppo_loss`` are pure functions; ``train(args)`` is ``setup`` ->
``warm_start`` -> ``iterate`` and returns the run directory.

Actions are decoded by C++ (the pass's decoder, sampled): the actor gives
logits, the environment's ``decode`` samples the step, and PPO learns from
the log-probability (``action_log_prob``) of the decision the environment
executed. Compiled code runs in the measurer's worker process (a crash there
costs one measurement, not the training), and every measurement is memoized
in SQLite (``memo_path``), so a restarted training (``--resume``) loses no
committed measurement.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from torch import nn

from mlir_rl.core import layout
from mlir_rl.rl.policy import Actor, Critic, PolicyConfig, action_log_prob
from mlir_rl.stats import geomean


@dataclass
class Args:
    """PPO training configuration (``configs/ppo.toml``; every field overridable)."""

    dataset: str = "runs/dataset"
    """Dataset directory (``mlir-rl dataset``); its ``train`` split is used."""
    run_dir: str = "runs/ppo"
    """Checkpoints, TensorBoard logs and the exported policy go here."""
    memo_path: Optional[str] = "runs/measurements.sqlite"
    """SQLite memo of measurements, shared across trainings."""
    seed: int = 0
    """Seed of torch, numpy, program sampling and the decoder's sampling."""
    iterations: int = 100
    """PPO iterations."""
    programs_per_iteration: int = 64
    """Episodes (programs) per iteration (paper: 64)."""
    learning_rate: float = 1e-3
    """Adam learning rate (paper: 1e-3)."""
    gamma: float = 1.0
    """Discount (paper: 1)."""
    gae_lambda: float = 0.95
    """GAE lambda (paper: 0.95)."""
    minibatch_size: int = 32
    """Transitions per minibatch (paper: 32)."""
    update_epochs: int = 4
    """Passes over the rollout per iteration (paper: 4)."""
    clip_coef: float = 0.2
    """PPO clip (paper: 0.2)."""
    vf_coef: float = 0.5
    """Value loss coefficient (paper: 0.5)."""
    ent_coef: float = 0.01
    """Entropy bonus (paper: 0.01)."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    target_kl: Optional[float] = None
    """Stop an iteration's updates early beyond this KL (None: never)."""
    reward: str = "final"
    """'final' (log speedup at the end) or 'immediate'."""
    threads: int = 2
    """OpenMP threads of every measurement."""
    runs: int = 1
    """Timed runs per measurement, after one warm-up (median)."""
    pretrain_epochs: int = 0
    """Actor-critic pre-training (Pearl): epochs of regressing the critic on
    the programs' log baseline times before PPO (0: off)."""
    init_actor: Optional[str] = None
    """Start the actor from an exported policy (.onnx, e.g. the shipped
    models/policy.onnx) or a checkpoint (.pt): fine-tuning. The critic starts
    fresh unless a checkpoint has one (None: a fresh actor)."""
    critic_warmup_iterations: int = 0
    """First iterations that train only the critic (the actor is kept): for a
    fresh critic under a started actor (``init_actor``)."""
    demonstrations: Optional[str] = None
    """JSON of best schedules per training program (``mlir-rl search``) to
    warm-start the actor by behaviour cloning before PPO (None: off); several
    files separated by commas give, per program, the fastest of theirs."""
    bc_epochs: int = 0
    """Behaviour-cloning epochs over the demonstrations."""
    anchors: Optional[str] = None
    """Imported networks on which behaviour cloning keeps the starting
    actor's own schedules (comma-separated MLIR files, or names of
    mlir_rl.data.torch_models.MODELS, imported and cached as the models
    suite does): their ops, in the forms the pass sees (the pass's front end
    on the imported text, and on it after mlir-rl-prepare), are scheduled by
    the actor as it starts (or ``anchor_policy``) and those decisions join
    the demonstrations (each distinct decision once). Cloning alone moves
    ops no demonstration shows (None: off)."""
    anchor_policy: Optional[str] = None
    """With ``anchors``: the exported policy (.onnx) whose decisions are
    anchored instead of the starting actor's (for an actor that starts
    elsewhere, such as a residual over a prior whose heads start at zero)."""
    anchor_free_rows: int = 0
    """With ``anchors``: the networks' matmuls with at most this many rows
    (batch-1 linear layers) are not anchored, so that demonstrations decide
    them (the thin family's linear layers in the networks' form); 0: every
    op is anchored."""
    rollout_workers: int = 0
    """Ray rollout workers (0: episodes run in this process). Each has its own
    environment and measurement worker and shares the SQLite memo; on one
    small machine concurrent measurements disturb each other's timings."""
    ray_address: Optional[str] = None
    """Ray cluster to join (None: a local Ray on this machine's cores)."""
    time_budget_s: Optional[float] = None
    """Stop after this many seconds of training (checkpointing first)."""
    checkpoint_every: int = 1
    """Iterations between checkpoints."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """Network shape."""

    @classmethod
    def from_toml(cls, path: str | Path, **overrides) -> "Args":
        data = tomllib.loads(Path(path).read_text()) if path else {}
        data.update({k: v for k, v in overrides.items() if v is not None})
        pol = dict(data.pop("policy", {}))
        # "policy.prior" (e.g. from --set) is the [policy] table's "prior".
        for key in [k for k in data if k.startswith("policy.")]:
            pol[key[len("policy."):]] = data.pop(key)
        fields = {f.name for f in dataclasses.fields(PolicyConfig)}
        if set(pol) - fields:
            raise ValueError(f"unknown policy settings {sorted(set(pol) - fields)}; "
                             f"valid: {sorted(fields)}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}; valid: {sorted(known)}")
        return cls(**data, policy=PolicyConfig(**pol))


# ---------------------------------------------------------------------------
# Pure pieces
# ---------------------------------------------------------------------------

def compute_gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray,
                last_value: float, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalized advantage estimation over a flat rollout.

    ``dones[t]`` is 1 when step t ended its episode (no bootstrap past it).
    Returns (advantages, returns).
    """
    n = len(rewards)
    adv = np.zeros(n, dtype=np.float32)
    last = 0.0
    for t in reversed(range(n)):
        next_value = last_value if t == n - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


def ppo_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
             new_values: torch.Tensor, returns: torch.Tensor, entropy: torch.Tensor,
             clip_coef: float, vf_coef: float, ent_coef: float,
             actor_weight: float = 1.0) -> tuple[torch.Tensor, dict]:
    """CleanRL's clipped PPO objective (advantages normalised by the caller).
    ``actor_weight`` 0 trains the critic alone (warming up a fresh critic
    under a given actor)."""
    logratio = new_logp - old_logp
    ratio = logratio.exp()
    pg1 = -advantages * ratio
    pg2 = -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg1, pg2).mean()
    v_loss = 0.5 * ((new_values - returns) ** 2).mean()
    ent = entropy.mean()
    loss = actor_weight * (pg_loss - ent_coef * ent) + vf_coef * v_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    return loss, {"policy_loss": pg_loss.item(), "value_loss": v_loss.item(),
                  "entropy": ent.item(), "approx_kl": approx_kl.item(),
                  "clipfrac": clipfrac.item()}


# ---------------------------------------------------------------------------
# Rollouts
# ---------------------------------------------------------------------------

def _unsplit(flat) -> torch.Tensor:
    """The flat ``unsplit`` choices as (T, N, M) booleans."""
    lay = layout()
    return torch.as_tensor(np.asarray(flat, dtype=bool)).reshape(
        lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes)


@torch.no_grad()
def collect_episodes(env, actor: Actor, seeds: list[int]) -> list[dict]:
    """One episode per seed, actions sampled by the C++ decoder from the
    actor's logits; records the executed decisions and their log-probability."""
    episodes = []
    for seed in seeds:
        memo = env.measurer.memo
        hits0, miss0 = (memo.hits, memo.misses) if memo is not None else (0, 0)
        obs, _ = env.reset(seed=seed)
        ep: dict[str, Any] = {k: [] for k in ("obs", "mask", "phase", "unsplit", "act",
                                               "logp", "rewards", "dones")}
        done, info, step = False, {}, 0
        while not done:
            o = torch.from_numpy(obs["observation"])[None]
            mk = torch.from_numpy(obs["action_mask"].astype(np.float32))[None]
            ph = torch.tensor([obs["phase"]])
            us = _unsplit(obs["unsplit"])[None]
            logits = actor(o, mk)
            action = env.decode((logits.kind[0].numpy(), logits.tile[0].numpy(),
                                 logits.pointer[0].numpy()),
                                sample=True, seed=seed * 10_007 + step)
            obs, r, term, trunc, info = env.step(action)
            executed = torch.from_numpy(np.asarray(info["executed"]))[None]
            lp, _ = action_log_prob(logits, ph, executed, us)
            done = term or trunc
            step += 1
            ep["obs"].append(o[0]); ep["mask"].append(mk[0]); ep["phase"].append(ph[0])
            ep["unsplit"].append(us[0])
            ep["act"].append(executed[0]); ep["logp"].append(lp[0])
            ep["rewards"].append(r); ep["dones"].append(float(done))
        ep["speedup"] = info.get("speedup", 0.0)
        ep["status"] = info.get("status", "?")
        if memo is not None:
            ep["cache_hits"] = memo.hits - hits0
            ep["cache_misses"] = memo.misses - miss0
        episodes.append(ep)
    return episodes


class RolloutWorker:
    """A Ray actor: its own environment (and measurement worker), the shared
    SQLite memo, and a copy of the policy refreshed every iteration."""

    def __init__(self, programs, env_config, policy_config, seed: int):
        from mlir_rl.rl.env import LinalgScheduleEnv
        torch.set_num_threads(1)
        self.env = LinalgScheduleEnv(programs, env_config)
        self.actor = Actor(layout(), policy_config)
        torch.manual_seed(seed)

    def run(self, actor_state: dict, seeds: list[int]) -> list[dict]:
        self.actor.load_state_dict(actor_state)
        return collect_episodes(self.env, self.actor, seeds)


def start_workers(args: Args, programs, env_config) -> tuple[object, list]:
    """Ray rollout workers: a local Ray on this machine's cores by default,
    or the cluster at ``ray_address``."""
    import ray
    if not ray.is_initialized():
        if args.ray_address:
            ray.init(address=args.ray_address, log_to_driver=False)
        else:
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(RolloutWorker)
    workers = [remote.remote(programs, env_config, args.policy, args.seed + i)
               for i in range(args.rollout_workers)]
    return ray, workers


# ---------------------------------------------------------------------------
# Training: setup -> warm start -> iterations
# ---------------------------------------------------------------------------

def _save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a kill never leaves half a checkpoint


@dataclass
class TrainingRun:
    """Everything a training carries from one iteration to the next."""

    args: Args
    run_dir: Path
    programs: list[tuple[str, str]]
    env: Any
    actor: Actor
    critic: Critic
    optimizer: torch.optim.Optimizer
    generator: torch.Generator
    writer: Any
    ray: Any = None
    workers: list = field(default_factory=list)
    start_iteration: int = 0
    global_step: int = 0
    history: list = field(default_factory=list)

    @property
    def checkpoint_path(self) -> Path:
        return self.run_dir / "checkpoint.pt"

    def log(self, tag: str, value: float, step: int) -> None:
        self.writer.add_scalar(tag, value, step)

    def checkpoint(self, iteration: int) -> dict:
        args = self.args
        return {
            "actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "config": dataclasses.asdict(args.policy), "layout_hash": layout().hash,
            "iteration": iteration, "global_step": self.global_step,
            "args": dataclasses.asdict(args), "history": self.history,
            "provenance": {
                "trained": iteration > 0 or bool(args.init_actor),
                "dataset": args.dataset, "init_actor": args.init_actor,
                "demonstrations": args.demonstrations if args.bc_epochs else None,
                "anchors": args.anchors if args.bc_epochs else None,
                "anchor_policy": args.anchor_policy if args.bc_epochs and args.anchors else None,
                "anchor_free_rows": (args.anchor_free_rows
                                     if args.bc_epochs and args.anchors else None),
                "bc_epochs": args.bc_epochs, "iterations": iteration,
                "steps": self.global_step,
                "episodes": iteration * args.programs_per_iteration,
                "episodes_per_program": (iteration * args.programs_per_iteration
                                         / max(1, len(self.programs))),
                "date": time.strftime("%Y-%m-%d"), "seed": args.seed,
                "init_provenance": next((h.get("provenance") for h in self.history
                                         if "init_actor" in h), None)},
        }

    def close(self) -> None:
        (self.run_dir / "history.json").write_text(json.dumps(self.history, indent=2) + "\n")
        self.writer.close()
        self.env.close()
        for w in self.workers:
            self.ray.kill(w)


def setup(args: Args, resume: bool = False) -> TrainingRun:
    """Seeds, the dataset's training split, the environment (and Ray
    workers), the networks and optimizer; a checkpoint's state on resume."""
    from torch.utils.tensorboard import SummaryWriter

    from mlir_rl.data.dataset import load_dataset
    from mlir_rl.measure.executor import ExecConfig
    from mlir_rl.measure.measurer import MeasureConfig
    from mlir_rl.rl.env import EnvConfig, LinalgScheduleEnv

    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    programs = [(e["name"], text) for e, text in load_dataset(args.dataset, "train")]
    env_config = EnvConfig(reward=args.reward, measure=MeasureConfig(
        exec=ExecConfig(runs=args.runs, threads=args.threads, seed=args.seed),
        memo_path=args.memo_path))
    env = LinalgScheduleEnv(programs, env_config)
    ray, workers = start_workers(args, programs, env_config) if args.rollout_workers else (None, [])
    lay = layout()
    actor, critic = Actor(lay, args.policy), Critic(lay, args.policy)
    params = list(actor.parameters()) + list(critic.parameters())
    run = TrainingRun(args=args, run_dir=run_dir, programs=programs, env=env, actor=actor,
                      critic=critic,
                      optimizer=torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5),
                      generator=torch.Generator().manual_seed(args.seed),
                      writer=SummaryWriter(str(run_dir / "tb")), ray=ray, workers=workers)
    if resume and run.checkpoint_path.exists():
        ck = torch.load(run.checkpoint_path, map_location="cpu", weights_only=False)
        actor.load_state_dict(ck["actor"])
        critic.load_state_dict(ck["critic"])
        run.optimizer.load_state_dict(ck["optimizer"])
        run.start_iteration, run.global_step = ck["iteration"], ck["global_step"]
        run.history = ck["history"]
        run.generator.manual_seed(args.seed + run.start_iteration)
    run.writer.add_text("args", json.dumps(dataclasses.asdict(args), indent=2))
    return run


def warm_start(run: TrainingRun) -> None:
    """Before the first iteration: the actor from ``init_actor``, Pearl's
    critic pre-training, behaviour cloning of the demonstrations."""
    from mlir_rl.rl import warmstart
    args = run.args
    if run.start_iteration > 0:
        return
    if args.init_actor:
        warmstart.init_from(run.actor, run.critic, args.init_actor)
        entry: dict[str, Any] = {"init_actor": args.init_actor}
        if str(args.init_actor).endswith(".onnx"):
            from mlir_rl.rl.export import onnx_provenance
            entry["provenance"] = onnx_provenance(args.init_actor)
        run.history.append(entry)
    if args.pretrain_epochs:
        warmstart.pretrain_critic(run.critic, run.env.measurer, run.programs,
                                  args.pretrain_epochs, args.learning_rate, run.log)
    if args.demonstrations and args.bc_epochs:
        demos = load_demonstrations(args.demonstrations)
        skipped = []

        def left_out(line: str) -> None:
            skipped.append(line)
            print(line, flush=True)

        decisions = warmstart.demonstration_decisions(dict(run.programs), demos, left_out)
        demonstrated = len(decisions)
        if args.anchors:
            if args.anchor_policy:
                from mlir_rl.rl.export import actor_from_onnx
                anchor_actor = actor_from_onnx(args.anchor_policy)
            else:
                anchor_actor = run.actor
            anchors = warmstart.anchor_decisions(
                anchor_actor, [p.strip() for p in args.anchors.split(",") if p.strip()],
                lambda line: print(line, flush=True),
                keep=lambda op: not warmstart.is_thin_matmul(op, args.anchor_free_rows))
            decisions = warmstart.concat_decisions(decisions, anchors)
        nll = warmstart.behaviour_clone(run.actor, decisions, args.bc_epochs,
                                        args.learning_rate, args.minibatch_size,
                                        run.generator, run.log)
        run.history.append({"behaviour_cloning": {"demonstrations": len(demos),
                                                  "decisions": demonstrated,
                                                  "anchor_decisions": len(decisions) - demonstrated,
                                                  "left_out": skipped,
                                                  "final_nll": nll}})
        # The warm start alone, for comparison with what PPO makes of it.
        _save(run.run_dir / "checkpoint_bc.pt", run.checkpoint(0))


def load_demonstrations(spec: str) -> list[dict]:
    """The demonstrations of ``spec``: one ``mlir-rl search`` JSON, or several
    separated by commas, merged to the fastest schedule per program (ties go
    to the first file); entries marked ``no_demonstration`` are left out."""
    best: dict[str, dict] = {}
    for path in (p.strip() for p in spec.split(",") if p.strip()):
        for demo in json.loads(Path(path).read_text()):
            if demo.get("no_demonstration"):
                continue  # the policy's own schedule failed to measure
            name = demo["name"]
            if name not in best or demo["best_speedup"] > best[name]["best_speedup"]:
                best[name] = demo
    return list(best.values())


def rollout(run: TrainingRun, iteration: int) -> list[dict]:
    """The iteration's episodes (in this process or on the Ray workers)."""
    args = run.args
    first = iteration * args.programs_per_iteration
    seeds = [args.seed * 1_000_003 + first + i for i in range(args.programs_per_iteration)]
    if not run.workers:
        return collect_episodes(run.env, run.actor, seeds)
    state = {k: v.detach().clone() for k, v in run.actor.state_dict().items()}
    per = [seeds[i::len(run.workers)] for i in range(len(run.workers))]
    return [e for part in run.ray.get([w.run.remote(state, p)
                                       for w, p in zip(run.workers, per) if p])
            for e in part]


def update(run: TrainingRun, episodes: list[dict], iteration: int) -> dict:
    """GAE over the rollout, then clipped-PPO minibatch epochs; returns the
    iteration's record."""
    args = run.args
    params = list(run.actor.parameters()) + list(run.critic.parameters())
    cols = {k: [x for ep in episodes for x in ep[k]]
            for k in ("obs", "mask", "phase", "unsplit", "act", "logp", "rewards", "dones")}
    run.global_step += len(cols["rewards"])
    rewards = np.array(cols["rewards"], dtype=np.float32)
    b_obs, b_mask = torch.stack(cols["obs"]), torch.stack(cols["mask"])
    b_phase, b_act = torch.stack(cols["phase"]), torch.stack(cols["act"])
    b_unsplit = torch.stack(cols["unsplit"])
    b_logp = torch.stack(cols["logp"])
    with torch.no_grad():
        values = run.critic(b_obs).numpy()
    adv, ret = compute_gae(rewards, values, np.array(cols["dones"], dtype=np.float32), 0.0,
                           args.gamma, args.gae_lambda)
    b_adv, b_ret = torch.tensor(adv), torch.tensor(ret)
    n = len(rewards)
    stats: dict = {}
    critic_warmup = iteration < args.critic_warmup_iterations
    for _epoch in range(args.update_epochs):
        perm = torch.randperm(n, generator=run.generator)
        for start in range(0, n, args.minibatch_size):
            idx = perm[start:start + args.minibatch_size]
            logits = run.actor(b_obs[idx], b_mask[idx])
            new_lp, ent = action_log_prob(logits, b_phase[idx], b_act[idx], b_unsplit[idx])
            mb_adv = b_adv[idx]
            if len(idx) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            loss, stats = ppo_loss(new_lp, b_logp[idx], mb_adv, run.critic(b_obs[idx]),
                                   b_ret[idx], ent, args.clip_coef, args.vf_coef, args.ent_coef,
                                   actor_weight=0.0 if critic_warmup else 1.0)
            run.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            run.optimizer.step()
        if args.target_kl is not None and stats.get("approx_kl", 0) > args.target_kl:
            break
    statuses: dict[str, int] = {}
    for ep in episodes:
        statuses[ep["status"]] = statuses.get(ep["status"], 0) + 1
    hits = sum(ep.get("cache_hits", 0) for ep in episodes)
    misses = sum(ep.get("cache_misses", 0) for ep in episodes)
    return {"iteration": iteration + 1, "global_step": run.global_step,
            "episode_return_mean": float(rewards.sum() / max(1, len(episodes))),
            "speedup_geomean": geomean(ep["speedup"] for ep in episodes),
            "statuses": statuses, "cache_hit_rate": hits / max(1, hits + misses),
            "transitions": n, **stats}


def iterate(run: TrainingRun, progress: bool = True) -> None:
    """PPO iterations until ``iterations`` or ``time_budget_s``, logging to
    TensorBoard (CleanRL's tags plus charts/speedup_geomean) and
    checkpointing."""
    args = run.args
    t_start = time.time()
    iterator = range(run.start_iteration, args.iterations)
    if progress:
        from tqdm import tqdm
        iterator = tqdm(iterator, initial=run.start_iteration, total=args.iterations,
                        desc="ppo", unit="it")
    for iteration in iterator:
        it_start = time.time()
        record = update(run, rollout(run, iteration), iteration)
        record["steps_per_s"] = record["transitions"] / max(time.time() - it_start, 1e-9)
        run.history.append(record)
        step = run.global_step
        run.log("charts/episodic_return", record["episode_return_mean"], step)
        run.log("charts/speedup_geomean", record["speedup_geomean"], step)
        run.log("charts/cache_hit_rate", record["cache_hit_rate"], step)
        run.log("charts/SPS", record["steps_per_s"], step)
        run.log("charts/learning_rate", run.optimizer.param_groups[0]["lr"], step)
        for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
            if k in record:
                run.log(f"losses/{k}", record[k], step)
        if progress and hasattr(iterator, "set_postfix"):
            iterator.set_postfix(geomean=f"{record['speedup_geomean']:.2f}",
                                 ret=f"{record['episode_return_mean']:.2f}",
                                 hit=f"{record['cache_hit_rate']:.2f}")
        out_of_time = args.time_budget_s is not None and time.time() - t_start > args.time_budget_s
        if ((iteration + 1) % args.checkpoint_every == 0 or out_of_time
                or iteration + 1 == args.iterations):
            _save(run.checkpoint_path, run.checkpoint(iteration + 1))
        if out_of_time:
            break


def train(args: Args, resume: bool = False, progress: bool = True) -> Path:
    """Train with PPO; returns the run directory (checkpoint.pt, tb/, history.json)."""
    run = setup(args, resume)
    try:
        warm_start(run)
        iterate(run, progress)
        if not run.checkpoint_path.exists():
            # No iteration ran (``iterations = 0``: a warm start alone, e.g.
            # behaviour cloning): the warm-started actor is the result.
            _save(run.checkpoint_path, run.checkpoint(run.start_iteration))
    finally:
        run.close()
    return run.run_dir
