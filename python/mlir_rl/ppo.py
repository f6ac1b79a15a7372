"""PPO for the MLIR RL environment, in the shape of CleanRL's single file.

rollout (episodes over programs) -> GAE -> minibatch updates, with the paper's
defaults (lr 1e-3, clip 0.2, gamma 1, lambda 0.95, 64 programs per iteration,
minibatch 32, 4 epochs, value coefficient 0.5, entropy 0.01). ``compute_gae``
and ``ppo_loss`` are pure functions; ``train(args)`` returns the run directory.

Rollouts run in this process; compiled code runs in the environment's worker
process (a crash there costs one measurement, not the training), and every
measurement is memoized in SQLite (``cache_path``), so a restarted training
(``--resume``) loses no committed measurement.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import torch
from torch import nn

from mlir_rl.core import layout
from mlir_rl.policy import Actor, Critic, Logits, PolicyConfig, split_mask


@dataclass
class Args:
    """PPO training configuration (``configs/ppo.toml``; every field overridable)."""

    dataset: str = "runs/dataset"
    """Dataset directory (``mlir-rl dataset``); its ``train`` split is used."""
    run_dir: str = "runs/ppo"
    """Checkpoints, TensorBoard logs and the exported policy go here."""
    cache_path: Optional[str] = "runs/measurements.sqlite"
    """SQLite memo of measurements, shared across trainings."""
    seed: int = 0
    """Seed of torch, numpy and program sampling."""
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
    warm-start the actor by behaviour cloning before PPO (None: off)."""
    bc_epochs: int = 0
    """Behaviour-cloning epochs over the demonstrations."""
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
        pol = data.pop("policy", {})
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


def action_log_prob(logits: Logits, mask: torch.Tensor, action: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability and entropy of multi-discrete actions.

    ``action``: (B, 1 + N + 1) = [kind, tile candidate per loop, pointer].
    While an interchange is being chosen (the masks allow only I), the action
    is the pointer alone; otherwise the kind, plus the chosen tiled action's
    per-loop sizes, plus the first pointer for I. Loops beyond the op's allow
    only 0 and contribute nothing.
    """
    lay = layout()
    n = lay.max_loops
    parts = split_mask(mask, lay)
    kind_lp = torch.log_softmax(logits.kind, -1)
    ptr_lp = torch.log_softmax(logits.pointer, -1)
    kind = action[:, 0]
    tiles = action[:, 1:1 + n]
    ptr = action[:, 1 + n]
    i_index = lay.action_mnemonics.index("I")
    # NT is allowed whenever no interchange is under way.
    pointer_phase = parts.kind.sum(-1).eq(1) & parts.kind[:, i_index]

    lp_kind = kind_lp.gather(1, kind[:, None]).squeeze(1)
    tiled = kind < 3
    k_idx = kind.clamp(max=2)
    tile_logits = logits.tile[torch.arange(len(kind)), k_idx]  # (B, N, M)
    tile_lp_all = torch.log_softmax(tile_logits, -1)
    lp_tiles = tile_lp_all.gather(2, tiles[:, :, None]).squeeze(2).sum(1)
    lp_ptr = ptr_lp.gather(1, ptr[:, None]).squeeze(1)
    uses_ptr = kind.eq(i_index)

    logp = torch.where(pointer_phase, lp_ptr,
                       lp_kind + torch.where(tiled, lp_tiles, torch.zeros_like(lp_kind))
                       + torch.where(uses_ptr, lp_ptr, torch.zeros_like(lp_kind)))

    def entropy(lp):
        p = lp.exp()
        return -(p * lp).sum(-1)
    ent_kind = entropy(kind_lp)
    ent_tiles = entropy(tile_lp_all).mean(-1)
    ent_ptr = entropy(ptr_lp)
    ent = torch.where(pointer_phase, ent_ptr, ent_kind + torch.where(tiled, ent_tiles, torch.zeros_like(ent_kind)))
    return logp, ent


@torch.no_grad()
def sample_action(logits: Logits, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Sample [kind, tiles..., pointer] from the masked heads (batch 1 or more)."""
    b = logits.kind.shape[0]

    def draw(lg):
        p = torch.softmax(lg, -1)
        return torch.multinomial(p.reshape(-1, p.shape[-1]), 1, generator=generator).reshape(p.shape[:-1])
    kind = draw(logits.kind)
    tiles = draw(logits.tile[torch.arange(b), kind.clamp(max=2)])  # (B, N)
    ptr = draw(logits.pointer)
    return torch.cat([kind[:, None], tiles, ptr[:, None]], 1)


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
# Training
# ---------------------------------------------------------------------------

def _save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a kill never leaves half a checkpoint


def checkpoint_dict(actor: Actor, critic: Critic, optimizer, args: Args,
                    iteration: int, global_step: int, history: list,
                    num_programs: int = 0) -> dict:
    lay = layout()
    return {
        "actor": actor.state_dict(), "critic": critic.state_dict(),
        "optimizer": optimizer.state_dict(), "config": dataclasses.asdict(args.policy),
        "layout_hash": lay.hash, "iteration": iteration, "global_step": global_step,
        "args": dataclasses.asdict(args), "history": history,
        "provenance": {"trained": iteration > 0 or bool(args.init_actor),
                       "dataset": args.dataset, "init_actor": args.init_actor,
                       "demonstrations": args.demonstrations if args.bc_epochs else None,
                       "bc_epochs": args.bc_epochs,
                       "iterations": iteration, "steps": global_step,
                       "episodes": iteration * args.programs_per_iteration,
                       "episodes_per_program": (iteration * args.programs_per_iteration
                                                / max(1, num_programs)),
                       "date": time.strftime("%Y-%m-%d"), "seed": args.seed,
                       "init_provenance": next((h.get("provenance") for h in history
                                                if "init_actor" in h), None)},
    }


def pretrain_critic(critic: Critic, env, programs, epochs: int, lr: float, log) -> None:
    """Pearl's actor-critic pre-training: regress the critic on log10 baseline
    times of the programs (their first op's observation) before PPO."""
    from mlir_rl.core import Module
    xs, ys = [], []
    for name, text in programs:
        base = env.baseline(text)
        if not base.ok:
            continue
        m = Module.parse(text, name)
        order = m.traversal_order()
        if not order:
            continue
        xs.append(m.observation(order[0]))
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


def demonstration_steps(text: str, schedule: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(observation, mask, action) of every decision of ``schedule`` replayed
    on ``text``, in the environment's action encoding; ops the schedule does
    not complete get NT."""
    from mlir_rl.core import Module, parse_schedule_entries
    lay = layout()
    n = lay.max_loops
    m = Module.parse(text)
    per_op = parse_schedule_entries(schedule)
    steps = []

    def record(op, kind, tiles=(), ptr=0):
        a = np.zeros(n + 2, dtype=np.int64)
        a[0] = lay.action_mnemonics.index(kind)
        for i, t in enumerate(tiles):
            a[1 + i] = lay.tile_candidates.index(t)
        a[1 + n] = ptr
        steps.append((m.observation(op).astype(np.float32),
                      m.flat_masks(op).astype(np.float32), a))

    for op in m.traversal_order():
        for action in per_op.get(op, []) + ["NT"]:
            if m.ops()[op].done:
                break
            mnem, _, rest = action.partition("(")
            values = [int(v) for v in rest.rstrip(")").split(",")] if rest else []
            if mnem == "I":
                for ptr in values:
                    record(op, "I", ptr=ptr)
                    m.apply_pointer(op, ptr)
            else:
                record(op, mnem, tiles=values if mnem in ("T", "TP", "TF") else ())
                m.apply(op, action)
    return steps


def behaviour_clone(actor: Actor, steps: list, epochs: int, lr: float,
                    batch_size: int, generator: torch.Generator, log) -> float:
    """Maximise the log-likelihood (``action_log_prob``) of demonstrated
    decisions; returns the final mean negative log-likelihood."""
    obs = torch.tensor(np.stack([s[0] for s in steps]))
    mask = torch.tensor(np.stack([s[1] for s in steps]))
    act = torch.tensor(np.stack([s[2] for s in steps]))
    opt = torch.optim.Adam(actor.parameters(), lr=lr)
    nll = float("nan")
    for epoch in range(epochs):
        perm = torch.randperm(len(steps), generator=generator)
        total = 0.0
        for start in range(0, len(steps), batch_size):
            idx = perm[start:start + batch_size]
            logp, _ = action_log_prob(actor(obs[idx], mask[idx]), mask[idx], act[idx])
            loss = -logp.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        nll = total / len(steps)
        log("bc/nll", nll, epoch)
    return nll


@torch.no_grad()
def collect_episodes(env, actor: Actor, seeds: list[int]) -> list[dict]:
    """Run one episode per seed with actions sampled from ``actor``."""
    episodes = []
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        hits0, miss0 = (env.cache.hits, env.cache.misses) if env.cache is not None else (0, 0)
        obs, _ = env.reset(seed=seed)
        ep = {"obs": [], "mask": [], "act": [], "logp": [], "rewards": [], "dones": []}
        done, info = False, {}
        while not done:
            o = torch.from_numpy(obs["observation"])[None]
            mk = torch.from_numpy(obs["action_mask"].astype(np.float32))[None]
            logits = actor(o, mk)
            a = sample_action(logits, mk, gen)
            lp, _ = action_log_prob(logits, mk, a)
            obs, r, term, trunc, info = env.step(a[0].numpy())
            done = term or trunc
            ep["obs"].append(o[0]); ep["mask"].append(mk[0]); ep["act"].append(a[0])
            ep["logp"].append(lp[0]); ep["rewards"].append(r); ep["dones"].append(float(done))
        ep["speedup"] = info.get("speedup", 0.0)
        ep["status"] = info.get("status", "?")
        if env.cache is not None:
            ep["cache_hits"] = env.cache.hits - hits0
            ep["cache_misses"] = env.cache.misses - miss0
        episodes.append(ep)
    return episodes


class RolloutWorker:
    """A Ray actor: its own environment (and measurement worker), the shared
    SQLite memo, and a copy of the policy refreshed every iteration."""

    def __init__(self, programs, env_config, policy_config, seed: int):
        from mlir_rl.env import LinalgScheduleEnv
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


def init_from(actor: Actor, critic: Critic, source: str) -> None:
    """Loads an exported policy's actor (.onnx) or a checkpoint's actor and
    critic (.pt) into ``actor``/``critic``; both must match the network shape."""
    if str(source).endswith(".onnx"):
        from mlir_rl.export import actor_from_onnx
        actor.load_state_dict(actor_from_onnx(source).state_dict())
        return
    from mlir_rl.policy import load_actor
    ck = torch.load(source, map_location="cpu", weights_only=False)
    actor.load_state_dict(load_actor(ck).state_dict())
    if "critic" in ck:
        critic.load_state_dict(ck["critic"])


def train(args: Args, resume: bool = False, progress: bool = True) -> Path:
    """Train with PPO; returns the run directory (checkpoint.pt, tb/, policy.onnx)."""
    from torch.utils.tensorboard import SummaryWriter

    from mlir_rl.data import load_dataset
    from mlir_rl.env import EnvConfig, LinalgScheduleEnv
    from mlir_rl.executor import ExecConfig

    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = run_dir / "checkpoint.pt"
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    programs = [(e["name"], text) for e, text in load_dataset(args.dataset, "train")]
    env_config = EnvConfig(reward=args.reward, cache_path=args.cache_path,
                           exec=ExecConfig(runs=args.runs, threads=args.threads, seed=args.seed))
    env = LinalgScheduleEnv(programs, env_config)
    ray, workers = start_workers(args, programs, env_config) if args.rollout_workers else (None, [])
    lay = layout()
    actor, critic = Actor(lay, args.policy), Critic(lay, args.policy)
    params = list(actor.parameters()) + list(critic.parameters())
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    start_iter, global_step, history = 0, 0, []
    if resume and ckpt_path.exists():
        ck = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        actor.load_state_dict(ck["actor"])
        critic.load_state_dict(ck["critic"])
        optimizer.load_state_dict(ck["optimizer"])
        start_iter, global_step, history = ck["iteration"], ck["global_step"], ck["history"]
        gen.manual_seed(args.seed + start_iter)

    if args.init_actor and start_iter == 0:
        init_from(actor, critic, args.init_actor)
        entry = {"init_actor": args.init_actor}
        if str(args.init_actor).endswith(".onnx"):
            from mlir_rl.export import onnx_provenance
            entry["provenance"] = onnx_provenance(args.init_actor)
        history.append(entry)

    writer = SummaryWriter(str(run_dir / "tb"))
    writer.add_text("args", json.dumps(dataclasses.asdict(args), indent=2))

    def log(tag, value, step):
        writer.add_scalar(tag, value, step)

    if args.pretrain_epochs and start_iter == 0:
        pretrain_critic(critic, env, programs, args.pretrain_epochs, args.learning_rate, log)
    if args.demonstrations and args.bc_epochs and start_iter == 0:
        demos = json.loads(Path(args.demonstrations).read_text())
        texts = dict(programs)
        steps = []
        for d in demos:
            if d["name"] in texts:
                steps += demonstration_steps(texts[d["name"]], d["best_schedule"])
        nll = behaviour_clone(actor, steps, args.bc_epochs, args.learning_rate,
                              args.minibatch_size, gen, log)
        history.append({"behaviour_cloning": {"demonstrations": len(demos),
                                              "decisions": len(steps), "final_nll": nll}})
        # The warm start alone, for comparison with what PPO makes of it.
        _save(run_dir / "checkpoint_bc.pt", checkpoint_dict(
            actor, critic, optimizer, args, 0, 0, history, len(programs)))

    t_start = time.time()
    iterator = range(start_iter, args.iterations)
    if progress:
        from tqdm import tqdm
        iterator = tqdm(iterator, initial=start_iter, total=args.iterations, desc="ppo", unit="it")
    episode_counter = start_iter * args.programs_per_iteration
    for iteration in iterator:
        it_start = time.time()
        obs_b, mask_b, act_b, logp_b, rew_b, done_b = [], [], [], [], [], []
        hits = misses = 0
        speedups, statuses = [], {}
        seeds = [args.seed * 1_000_003 + episode_counter + i
                 for i in range(args.programs_per_iteration)]
        episode_counter += len(seeds)
        if workers:
            state = {k: v.detach().clone() for k, v in actor.state_dict().items()}
            per = [seeds[i::len(workers)] for i in range(len(workers))]
            episodes = [e for part in ray.get([w.run.remote(state, p)
                                               for w, p in zip(workers, per) if p])
                        for e in part]
        else:
            episodes = collect_episodes(env, actor, seeds)
        for ep in episodes:
            obs_b += ep["obs"]; mask_b += ep["mask"]; act_b += ep["act"]; logp_b += ep["logp"]
            rew_b += ep["rewards"]; done_b += ep["dones"]
            speedups.append(ep["speedup"])
            hits += ep.get("cache_hits", 0)
            misses += ep.get("cache_misses", 0)
            statuses[ep["status"]] = statuses.get(ep["status"], 0) + 1
        global_step += len(rew_b)

        rewards = np.array(rew_b, dtype=np.float32)
        with torch.no_grad():
            values = critic(torch.stack(obs_b)).numpy()
        adv, ret = compute_gae(rewards, values, np.array(done_b, dtype=np.float32), 0.0,
                               args.gamma, args.gae_lambda)
        b_obs, b_mask = torch.stack(obs_b), torch.stack(mask_b)
        b_act, b_logp = torch.stack(act_b), torch.stack(logp_b)
        b_adv, b_ret = torch.tensor(adv), torch.tensor(ret)
        n = len(rewards)
        stats = {}
        critic_warmup = iteration < args.critic_warmup_iterations
        for _epoch in range(args.update_epochs):
            perm = torch.randperm(n, generator=gen)
            for start in range(0, n, args.minibatch_size):
                idx = perm[start:start + args.minibatch_size]
                logits = actor(b_obs[idx], b_mask[idx])
                new_lp, ent = action_log_prob(logits, b_mask[idx], b_act[idx])
                mb_adv = b_adv[idx]
                if len(idx) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                loss, stats = ppo_loss(new_lp, b_logp[idx], mb_adv, critic(b_obs[idx]),
                                       b_ret[idx], ent, args.clip_coef, args.vf_coef, args.ent_coef,
                                       actor_weight=0.0 if critic_warmup else 1.0)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and stats.get("approx_kl", 0) > args.target_kl:
                break

        ok = [s for s in speedups if s > 0]
        geomean = float(np.exp(np.mean(np.log(ok)))) if ok else 0.0
        elapsed = time.time() - it_start
        record = {"iteration": iteration + 1, "global_step": global_step,
                  "episode_return_mean": float(rewards.sum() / args.programs_per_iteration),
                  "speedup_geomean": geomean, "statuses": statuses,
                  "cache_hit_rate": hits / max(1, hits + misses),
                  "steps_per_s": n / max(elapsed, 1e-9), **stats}
        history.append(record)
        log("charts/episodic_return", record["episode_return_mean"], global_step)
        log("charts/speedup_geomean", geomean, global_step)
        log("charts/cache_hit_rate", record["cache_hit_rate"], global_step)
        log("charts/SPS", record["steps_per_s"], global_step)
        log("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
            if k in stats:
                log(f"losses/{k}", stats[k], global_step)
        if progress and hasattr(iterator, "set_postfix"):
            iterator.set_postfix(geomean=f"{geomean:.2f}", ret=f"{record['episode_return_mean']:.2f}",
                                 hit=f"{record['cache_hit_rate']:.2f}")
        out_of_time = args.time_budget_s is not None and time.time() - t_start > args.time_budget_s
        if (iteration + 1) % args.checkpoint_every == 0 or out_of_time or iteration + 1 == args.iterations:
            _save(ckpt_path, checkpoint_dict(actor, critic, optimizer, args, iteration + 1,
                                             global_step, history, len(programs)))
        if out_of_time:
            break
    (run_dir / "history.json").write_text(json.dumps(history, indent=2) + "\n")
    writer.close()
    env.close()
    for w in workers:
        ray.kill(w)
    return run_dir
