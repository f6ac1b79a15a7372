"""PPO's pieces and the distribution of the C++ decoder."""
import collections

import numpy as np
import pytest
import torch

import mlir_rl
from cases import KERNELS
from mlir_rl.data import kernels as K
from mlir_rl.rl.policy import Actor, Logits, action_log_prob
from mlir_rl.rl.ppo import compute_gae, ppo_loss
from mlir_rl.rl.warmstart import demonstration_decisions

A = mlir_rl.ActionKind


def test_gae_matches_hand_computation():
    rewards = np.array([0.0, 0.0, 1.0, 0.0, 2.0], dtype=np.float32)
    values = np.array([0.5, 0.4, 0.3, 0.2, 0.1], dtype=np.float32)
    dones = np.array([0, 0, 1, 0, 1], dtype=np.float32)
    adv, ret = compute_gae(rewards, values, dones, last_value=9.0, gamma=1.0, lam=0.5)
    # Episode 2 (one bootstrap-free step each): delta = r - v.
    assert adv[4] == pytest.approx(2.0 - 0.1)
    assert adv[3] == pytest.approx((0 + 0.1 - 0.2) + 0.5 * adv[4])
    assert adv[2] == pytest.approx(1.0 - 0.3)
    assert adv[1] == pytest.approx((0 + 0.3 - 0.4) + 0.5 * adv[2])
    np.testing.assert_allclose(ret, adv + values)


def test_ppo_loss_clips():
    old = torch.zeros(4)
    new = torch.log(torch.tensor([1.5, 0.5, 1.0, 1.0]))
    adv = torch.tensor([1.0, -1.0, 1.0, -1.0])
    loss, stats = ppo_loss(new, old, adv, torch.zeros(4), torch.zeros(4), torch.zeros(4),
                           clip_coef=0.2, vf_coef=0.5, ent_coef=0.0)
    # min(r A, clip(r) A): 1.2, -(0.8)... -> pg = -mean([1.2, -0.8, 1, -1]) = -0.1
    assert stats["policy_loss"] == pytest.approx(-0.1)
    assert stats["clipfrac"] == pytest.approx(0.5)


def test_critic_warmup_leaves_the_actor_alone():
    new = torch.log(torch.tensor([1.5, 0.5])).requires_grad_()
    values = torch.zeros(2, requires_grad=True)
    loss, _ = ppo_loss(new, torch.zeros(2), torch.tensor([1.0, -1.0]), values,
                       torch.ones(2), torch.ones(2), 0.2, 0.5, 0.01, actor_weight=0.0)
    loss.backward()
    assert torch.all(new.grad == 0) and torch.all(values.grad != 0)


def _logits_for(module, op, seed, zero_bias=0.0):
    """Random logits for op, tile heads pushed towards size 0 so that the
    decoder's skipping of all-zero TP/TF matters."""
    lay = mlir_rl.layout()
    g = torch.Generator().manual_seed(seed)
    mask = torch.from_numpy(module.masks(op).flat().astype(np.float32))[None]
    kind = torch.randn(1, lay.raw["kind_mask_size"], generator=g)
    tile = torch.randn(1, lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes, generator=g)
    tile[..., 0] += zero_bias
    pointer = torch.randn(1, lay.max_loops, generator=g)
    from mlir_rl.rl.policy import split_mask
    parts = split_mask(mask, lay)
    masked = torch.tensor(-1e9)
    return Logits(torch.where(parts.kind, kind, masked), torch.where(parts.tile, tile, masked),
                  torch.where(parts.pointer, pointer, masked))


@pytest.mark.parametrize("zero_bias", [0.0, 2.5])
def test_log_prob_is_the_cpp_samplers_distribution(zero_bias):
    """action_log_prob is the probability of what the C++ sampled decoder
    executes: empirical frequencies of 4,000 C++ draws agree with it, also
    when TP/TF often split no loop (sizes 0 or the whole extent) and are
    skipped."""
    m = mlir_rl.Module.parse(K.add([4, 2]))  # 2 parallel loops: TP/TF draw (0,0) often
    op = m.traversal_order()[0]
    logits = _logits_for(m, op, seed=3, zero_bias=zero_bias)
    flat = (logits.kind[0].numpy(), logits.tile[0].numpy(), logits.pointer[0].numpy())
    n = 4000
    counts = collections.Counter()
    for seed in range(n):
        counts[tuple(m.encode(m.decode(op, flat, sample=True, seed=seed)))] += 1
    acts = torch.tensor([list(k) for k in counts])
    phase = torch.full((len(acts),), int(m.masks(op).phase))
    rep = Logits(*(x.repeat(len(acts), *([1] * (x.dim() - 1))) for x in logits))
    unsplit = torch.from_numpy(m.masks(op).unsplit)[None].repeat(len(acts), 1, 1, 1)
    logp, _ = action_log_prob(rep, phase, acts, unsplit)
    p = logp.exp().numpy()
    freq = np.array([counts[tuple(a.tolist())] / n for a in acts])
    # Every frequent outcome within 4 standard errors of its probability.
    se = np.sqrt(np.maximum(p * (1 - p), 1e-4) / n)
    assert np.all(np.abs(freq - p) < 4 * se + 1e-3), list(zip(freq, p))
    # The probabilities of what was drawn are most of the mass.
    assert p.sum() > 0.95


def test_log_prob_of_executed_actions_is_finite():
    torch.manual_seed(0)
    m = mlir_rl.Module.parse(K.matmul(32, 64, 48))
    obs = torch.from_numpy(m.observation(1))[None].repeat(16, 1)
    mask = torch.from_numpy(m.masks(1).flat().astype(np.float32))[None].repeat(16, 1)
    logits = Actor()(obs, mask)
    flat = (logits.kind[0].detach().numpy(), logits.tile[0].detach().numpy(),
            logits.pointer[0].detach().numpy())
    acts = torch.tensor(np.stack([m.encode(m.decode(1, flat, sample=True, seed=s))
                                  for s in range(16)]))
    unsplit = torch.from_numpy(m.masks(1).unsplit)[None].repeat(16, 1, 1, 1)
    logp, ent = action_log_prob(logits, torch.zeros(16, dtype=torch.long), acts, unsplit)
    assert torch.isfinite(logp).all() and (logp <= 0).all() and (ent >= 0).all()


def test_a_demonstration_the_action_space_no_longer_allows_is_left_out():
    """A schedule recorded under an older legality config (here V on a whole
    256x256x256 matmul, beyond every vector limit) is reported and left out
    when asked to, and an error otherwise."""
    demos = [{"name": "big", "best_schedule": "1: V; 0: V"},
             {"name": "mm", "best_schedule": "1: TP(16,32,0) T(8,8,1) V; 0: V"}]
    programs = {"big": K.matmul(256, 256, 256), "mm": K.matmul(32, 64, 48)}
    with pytest.raises(mlir_rl.ScheduleError, match="not allowed"):
        demonstration_decisions(programs, demos)
    skipped = []
    d = demonstration_decisions(programs, demos, skipped.append)
    assert len(skipped) == 1 and "big" in skipped[0]
    assert len(d) == len(demonstration_decisions({"mm": programs["mm"]}, demos[1:]))


def test_demonstrations_are_encoded_by_cpp():
    text = K.matmul(32, 64, 48)
    d = demonstration_decisions({"mm": text},
                                [{"name": "mm", "best_schedule": "1: TP(16,32,0) I(1,0,2) T(8,8,1); 0: V"}])
    kinds = [mlir_rl.ActionKind(int(k)) for k in d.action[:, 0]]
    # TP, three interchange pointers, T, then NT (closes op 1), V on the fill.
    assert kinds == [A.TILED_PARALLELIZATION, A.INTERCHANGE, A.INTERCHANGE, A.INTERCHANGE,
                     A.TILING, A.NO_TRANSFORMATION, A.VECTORIZATION]
    assert d.action[1:4, -1].tolist() == [1, 0, 2]
    phases = [mlir_rl.DecisionPhase(int(p)) for p in d.phase]
    assert phases[1] == mlir_rl.DecisionPhase.TRANSFORMATION
    assert phases[2:4] == [mlir_rl.DecisionPhase.INTERCHANGE_POINTER] * 2
    # Replaying the demonstrated indices gives the schedule back.
    m = mlir_rl.Module.parse(text)
    for op_id, a in zip([1] * 6 + [0], d.action.numpy()):
        assert not m.step(op_id, a).fallback
    assert m.schedule == "1: TP(16,32,0) I(1,0,2) T(8,8,1) NT; 0: V"
