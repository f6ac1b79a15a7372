"""The actor-critic of the paper (section V), in PyTorch.

Producer-consumer embedding: the consumer's and its last producer's feature
vectors are projected to a small embedding each (so that the exported model
stays a few MB), then fed in order to an LSTM with 512 units; its final hidden
state goes through a backbone of three 512-unit ReLU layers. The actor has a
head for the transformation, one N x M head per tiled transformation (T, TP,
TF; a softmax per loop over the M tile candidates) and an N-way head for the
interchange level pointer. The critic has the same shape with its own weights
and one output. Masks from C++ set forbidden logits to ``MASKED_LOGIT``.

All sizes come from the C++ FeatureLayout (``mlir_rl.layout()``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch
from torch import nn

from mlir_rl.core import Layout, layout

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


class Logits(NamedTuple):
    kind: torch.Tensor     # (B, A)
    tile: torch.Tensor     # (B, 3, N, M)
    pointer: torch.Tensor  # (B, N)


class MaskParts(NamedTuple):
    kind: torch.Tensor
    tile: torch.Tensor
    pointer: torch.Tensor


def split_mask(mask: torch.Tensor, lay: Layout) -> MaskParts:
    """Flat C++ masks (B, mask_size) -> boolean (kind, tile, pointer) parts."""
    a, n, m = lay.num_actions, lay.max_loops, lay.num_tile_sizes
    mask = mask > 0.5
    return MaskParts(mask[:, :a], mask[:, a:a + 3 * n * m].reshape(-1, 3, n, m),
                     mask[:, a + 3 * n * m:])


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
        n, m = self.lay.max_loops, self.lay.num_tile_sizes
        self.embed = ProducerConsumerEmbedding(self.lay, self.cfg)
        # Small output weights: an untrained actor is close to uniform.
        self.kind_head = layer_init(nn.Linear(self.cfg.hidden_size, self.lay.num_actions), 0.01)
        self.tile_head = layer_init(nn.Linear(self.cfg.hidden_size, 3 * n * m), 0.01)
        self.pointer_head = layer_init(nn.Linear(self.cfg.hidden_size, n), 0.01)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> Logits:
        n, m = self.lay.max_loops, self.lay.num_tile_sizes
        h = self.embed(obs)
        parts = split_mask(mask, self.lay)
        masked = torch.full((), MASKED_LOGIT, dtype=h.dtype)
        kind = torch.where(parts.kind, self.kind_head(h), masked)
        tile = torch.where(parts.tile, self.tile_head(h).reshape(-1, 3, n, m), masked)
        pointer = torch.where(parts.pointer, self.pointer_head(h), masked)
        return Logits(kind, tile, pointer)


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


@torch.no_grad()
def actor_logits(actor: Actor, module, op_id: int) -> Logits:
    """The PyTorch actor's masked logits for op ``op_id`` of ``module`` now."""
    obs = torch.from_numpy(module.observation(op_id)).unsqueeze(0)
    mask = torch.from_numpy(module.flat_masks(op_id).astype("float32")).unsqueeze(0)
    return actor(obs, mask)


@torch.no_grad()
def greedy_schedule(actor: Actor, module) -> str:
    """Schedule ``module`` with the PyTorch actor, decoding as the pass does.

    Visits ops consumer -> producer and feeds the actor's logits to the C++
    decoder (``decodeStep``: best allowed transformation, best allowed tile
    size per loop, interchange pointer by pointer) until every op is
    complete. Returns the applied schedule text.
    """
    from mlir_rl.core import ApplyStatus
    lay = layout()
    max_steps = lay.history_length * (lay.max_loops + 1) + 1
    for op_id in module.traversal_order():
        for _ in range(max_steps):
            if module.ops()[op_id].done:
                break
            logits = actor_logits(actor, module, op_id)
            status, _ = module.decode_and_apply(
                op_id, logits.kind[0].numpy(), logits.tile[0].reshape(-1).numpy(),
                logits.pointer[0].numpy())
            if status == ApplyStatus.FAILED:  # as the pass: the op ends
                module.apply(op_id, "NT")
    return module.schedule
