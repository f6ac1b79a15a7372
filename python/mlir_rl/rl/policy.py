"""The actor-critic of the paper (section V), in PyTorch.

Producer-consumer embedding: the consumer's and its last producer's feature
vectors are projected to a small embedding each (so that the exported model
stays a few MB), then fed in order to an LSTM with 512 units; its final hidden
state goes through a backbone of three 512-unit ReLU layers. The actor has a
head for the transformation, one N x M head per tiled transformation (a
softmax per loop over the M tile candidates) and an N-way head for the
interchange level pointer. The critic has the same shape with its own weights
and one output. Masks from C++ set forbidden logits to ``MASKED_LOGIT``.

All sizes come from the C++ layout (``mlir_rl.layout()``); which kinds are
tiled, which need a non-zero size and which one takes level pointers come
from the action-kind table (``mlir_rl.action_kinds()``). Decoding is C++'s:
:func:`action_log_prob` is the probability of what the C++ sampler executes.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from mlir_rl.core import (ActionParams, DecisionPhase, Layout, action_kinds, layout,
                          prior_logits)

# Logit of a masked choice: finite, so that softmax stays defined, and far
# below any real logit. The pass's decoder never picks a masked choice.
MASKED_LOGIT = -1.0e9


@dataclass
class PolicyConfig:
    """Shape of the networks (saved in checkpoints and ONNX metadata)."""

    embed_size: int = 64
    """Per-op projection of the features before the LSTM."""
    lstm_size: int = 512
    """LSTM units (paper: 512)."""
    hidden_size: int = 512
    """Width of the three backbone layers (paper: 512)."""
    prior: str = ""
    """A non-learned source whose logits (C++ ``prior_logits``) the heads'
    outputs are added to, so the network learns a residual over it:
    ``"heuristic"``, or ``""`` for none. A residual of zero decides as the
    prior does. Exported as the model's ``prior`` metadata, which the pass
    reads and adds the same logits for."""


class Logits(NamedTuple):
    kind: torch.Tensor     # (B, A)
    tile: torch.Tensor     # (B, T, N, M), T = tiled kinds
    pointer: torch.Tensor  # (B, N)


class MaskParts(NamedTuple):
    kind: torch.Tensor
    tile: torch.Tensor
    pointer: torch.Tensor


def split_mask(mask: torch.Tensor, lay: Layout) -> MaskParts:
    """Flat C++ masks (B, mask_size) -> boolean (kind, tile, pointer) parts,
    with the part sizes of the C++ layout."""
    k, t = lay.raw["kind_mask_size"], lay.raw["tile_mask_size"]
    mask = mask > 0.5
    return MaskParts(mask[:, :k],
                     mask[:, k:k + t].reshape(-1, lay.num_tiled_kinds, lay.max_loops,
                                              lay.num_tile_sizes),
                     mask[:, k + t:])


def layer_init(layer: nn.Linear, std: float = 2 ** 0.5) -> nn.Linear:
    """CleanRL's initialisation: orthogonal weights, zero bias."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


class ProducerConsumerEmbedding(nn.Module):
    def __init__(self, lay: Layout, cfg: PolicyConfig):
        super().__init__()
        self.op_size = lay.op_feature_size
        self.project = layer_init(nn.Linear(lay.op_feature_size, cfg.embed_size))
        self.lstm = nn.LSTM(cfg.embed_size, cfg.lstm_size, batch_first=True)
        self.backbone = nn.Sequential(
            layer_init(nn.Linear(cfg.lstm_size, cfg.hidden_size)), nn.ReLU(),
            layer_init(nn.Linear(cfg.hidden_size, cfg.hidden_size)), nn.ReLU(),
            layer_init(nn.Linear(cfg.hidden_size, cfg.hidden_size)), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        # (B, 2F) -> (B, 2, F): consumer first, then its producer.
        x = obs.reshape(obs.shape[0], 2, self.op_size)
        x = torch.relu(self.project(x))
        _, (h, _) = self.lstm(x)
        return self.backbone(h[-1])


class Actor(nn.Module):
    """Observation and mask in, masked logits of every head out."""

    def __init__(self, lay: Layout | None = None, cfg: PolicyConfig | None = None):
        super().__init__()
        self.lay = lay or layout()
        self.cfg = cfg or PolicyConfig()
        lay = self.lay
        self.embed = ProducerConsumerEmbedding(lay, self.cfg)
        # Small output weights: an untrained actor is close to uniform.
        self.kind_head = layer_init(nn.Linear(self.cfg.hidden_size, lay.raw["kind_mask_size"]), 0.01)
        self.tile_head = layer_init(nn.Linear(self.cfg.hidden_size, lay.raw["tile_mask_size"]), 0.01)
        self.pointer_head = layer_init(nn.Linear(self.cfg.hidden_size, lay.raw["pointer_mask_size"]), 0.01)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> Logits:
        """Masked logits: the heads' outputs plus, for a residual actor
        (``cfg.prior``), the prior's logits. The exported network is the
        part without the prior (the pass adds it)."""
        lay = self.lay
        h = self.embed(obs)
        kind, tile, pointer = self.kind_head(h), self.tile_head(h), self.pointer_head(h)
        if self.cfg.prior:
            pk, pt, pp = prior_logits(self.cfg.prior, obs.detach().cpu().numpy())
            kind = kind + torch.from_numpy(pk).to(kind.dtype)
            tile = tile + torch.from_numpy(pt).to(tile.dtype)
            pointer = pointer + torch.from_numpy(pp).to(pointer.dtype)
        parts = split_mask(mask, lay)
        masked = torch.full((), MASKED_LOGIT, dtype=h.dtype)
        kind = torch.where(parts.kind, kind, masked)
        tile = torch.where(parts.tile, tile.reshape(
            -1, lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes), masked)
        pointer = torch.where(parts.pointer, pointer, masked)
        return Logits(kind, tile, pointer)

    def zero_residual(self) -> None:
        """Zero the heads: a residual actor then decides as its prior does
        (the start of fine-tuning over a prior)."""
        for head in (self.kind_head, self.tile_head, self.pointer_head):
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)


class Critic(nn.Module):
    """Same embedding and backbone shape, separate weights, one output."""

    def __init__(self, lay: Layout | None = None, cfg: PolicyConfig | None = None):
        super().__init__()
        self.lay = lay or layout()
        self.cfg = cfg or PolicyConfig()
        self.embed = ProducerConsumerEmbedding(self.lay, self.cfg)
        self.value = layer_init(nn.Linear(self.cfg.hidden_size, 1), 1.0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value(self.embed(obs)).squeeze(-1)


def new_checkpoint(seed: int = 0, cfg: PolicyConfig | None = None) -> dict:
    """A freshly initialised actor-critic, as a checkpoint dict."""
    torch.manual_seed(seed)
    cfg = cfg or PolicyConfig()
    lay = layout()
    actor, critic = Actor(lay, cfg), Critic(lay, cfg)
    return {
        "actor": actor.state_dict(),
        "critic": critic.state_dict(),
        "config": asdict(cfg),
        "layout_hash": lay.hash,
        "provenance": {"trained": False, "dataset": "none", "steps": 0,
                       "seed": seed, "note": "freshly initialised, untrained"},
    }


def load_actor(checkpoint: dict) -> Actor:
    """The actor of a checkpoint; refuses one made for another feature layout."""
    lay = layout()
    if checkpoint.get("layout_hash") != lay.hash:
        raise ValueError(
            f"checkpoint was made for feature layout {checkpoint.get('layout_hash')}, "
            f"this build has {lay.hash}")
    actor = Actor(lay, PolicyConfig(**checkpoint["config"]))
    actor.load_state_dict(checkpoint["actor"])
    actor.eval()
    return actor


# ---------------------------------------------------------------------------
# The distribution of the C++ decoder
# ---------------------------------------------------------------------------

class _KindTable(NamedTuple):
    tiled: list[int]        # kinds with tile sizes (their tile-head row = index)
    rejectable: list[int]   # kinds skipped when the sampled sizes split no loop
    pointer: int            # the kind chosen by level pointers (interchange)


def _kind_table() -> _KindTable:
    kinds = action_kinds()
    tiled = [int(k.kind) for k in kinds if k.is_tiled]
    rejectable = [int(k.kind) for k in kinds if k.needs_split]
    pointer = [int(k.kind) for k in kinds if k.params == ActionParams.PERMUTATION]
    return _KindTable(tiled, rejectable, pointer[0])


def action_log_prob(logits: Logits, phase: torch.Tensor, action: torch.Tensor,
                    unsplit: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability, under the C++ sampled decoder (``decodeStep``), of the
    executed decisions ``action`` (B, 2 + N) = [kind, tile per loop,
    pointer], and an entropy estimate.

    ``phase`` (B,) holds each decision's ``DecisionPhase`` value; ``unsplit``
    (B, T, N, M) the C++ ``Masks.unsplit``: the tile choices that split no
    loop. While an interchange is being chosen the decision is the pointer
    alone. Otherwise the decoder draws kinds without replacement until one is
    accepted: a kind that needs a split is skipped when none of its sampled
    sizes splits a loop. So a kind k is executed with probability
    ``pi_k * sum over sequences s of skipped kinds (k not in s) of
    prod_i (pi_{s_i} z_{s_i} / (1 - sum_{j<i} pi_{s_j})) / (1 - sum_s pi)``,
    with ``z_j`` the probability that kind j draws no split; its tile sizes
    (conditioned on a split for such a kind, which the factor 1 - z_k of its
    acceptance cancels) and, for interchange, its first pointer follow.
    Loops beyond the op's allow only size 0 and contribute nothing.
    """
    table = _kind_table()
    n = action.shape[0]
    rows = torch.arange(n)
    kind = action[:, 0]
    tiles = action[:, 1:-1]
    ptr = action[:, -1]

    kind_lp = torch.log_softmax(logits.kind, -1)                    # (B, A)
    tile_lp = torch.log_softmax(logits.tile, -1)                    # (B, T, N, M)
    ptr_lp = torch.log_softmax(logits.pointer, -1)                  # (B, N)
    pi = kind_lp.exp()
    # P(no loop split | kind j) for the tiled kinds.
    zeros = (tile_lp.exp() * unsplit.to(tile_lp.dtype)).sum(-1).clamp_min(1e-30).log() \
        .sum(-1).exp()                                              # (B, T)

    # Acceptance factor S_k for each kind, over sequences of skipped kinds.
    accept = torch.ones_like(pi)
    eps = 1e-12
    for k in range(pi.shape[1]):
        others = [j for j in table.rejectable if j != k]
        total = torch.zeros(n, dtype=pi.dtype)
        for r in range(len(others) + 1):
            for seq in itertools.permutations(others, r):
                term = torch.ones(n, dtype=pi.dtype)
                used = torch.zeros(n, dtype=pi.dtype)
                for j in seq:
                    term = term * pi[:, j] * zeros[:, j] / (1 - used).clamp_min(eps)
                    used = used + pi[:, j]
                total = total + term / (1 - used).clamp_min(eps)
        accept[:, k] = total

    lp_kind = kind_lp[rows, kind] + accept[rows, kind].clamp_min(eps).log()
    is_tiled = torch.zeros_like(kind, dtype=torch.bool)
    for k in table.tiled:
        is_tiled |= kind.eq(k)
    row = kind.clamp(max=len(table.tiled) - 1)
    lp_tiles = tile_lp[rows, row].gather(2, tiles[:, :, None]).squeeze(2).sum(1)
    lp_ptr = ptr_lp[rows, ptr]
    zero = torch.zeros_like(lp_kind)
    logp = lp_kind + torch.where(is_tiled, lp_tiles, zero) \
        + torch.where(kind.eq(table.pointer), lp_ptr, zero)
    pointer_phase = phase.eq(int(DecisionPhase.INTERCHANGE_POINTER))
    logp = torch.where(pointer_phase, lp_ptr, logp)

    def entropy(lp):
        return -(lp.exp() * lp).sum(-1)
    ent_tiles = entropy(tile_lp[rows, row]).mean(-1)
    ent = torch.where(pointer_phase, entropy(ptr_lp),
                      entropy(kind_lp) + torch.where(is_tiled, ent_tiles, zero))
    return logp, ent


def logits_numpy(logits: Logits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first row of batched logits as flat numpy arrays (for C++)."""
    return (logits.kind[0].detach().numpy(), logits.tile[0].detach().reshape(-1).numpy(),
            logits.pointer[0].detach().numpy())


@torch.no_grad()
def actor_logits(actor: Actor, module, op_id: int) -> Logits:
    """The PyTorch actor's masked logits for op ``op_id`` of ``module`` now."""
    obs = torch.from_numpy(module.observation(op_id)).unsqueeze(0)
    mask = torch.from_numpy(module.masks(op_id).flat().astype("float32")).unsqueeze(0)
    return actor(obs, mask)


def as_policy(actor: Actor):
    """The actor as a policy callable for ``Module.schedule_with``."""
    @torch.no_grad()
    def policy(obs: np.ndarray, mask: np.ndarray):
        logits = actor(torch.from_numpy(obs).unsqueeze(0),
                       torch.from_numpy(mask.astype(np.float32)).unsqueeze(0))
        return logits_numpy(logits)
    return policy


def greedy_schedule(actor: Actor, module) -> str:
    """Schedule ``module`` with the PyTorch actor, exactly as the pass does
    with its exported copy: the C++ scheduling loop and decoder, the actor
    only providing logits, after the pipeline's front end. Returns the
    decisions (:attr:`Module.decisions`; the measurer and
    :meth:`Module.apply_decisions` add the rules, as the pass does)."""
    module.schedule_with(as_policy(actor), rules=False)
    return module.decisions
