"""Residual policies (PolicyConfig.prior, Policy/DecisionSource.h): the
network's logits are added to a prior's, in training (the PyTorch actor) and
in the pass (the exported model names its prior, OnnxPolicy adds it), so a
residual of zero decides as the prior does and both paths decide alike."""
import pytest

import mlir_rl
from mlir_rl.core import layout, prior_logits
from mlir_rl.data import kernels as K
from mlir_rl.rl.export import actor_from_onnx, export_checkpoint
from mlir_rl.rl.policy import (Actor, PolicyConfig, greedy_schedule, load_actor,
                                new_checkpoint)

from policy_fixtures import varied_checkpoint

RULES_OFF = dict(rules=False)

PROGRAMS = {
    "matmul": K.matmul(384, 768, 768),
    "matmul_bias_relu": K.matmul_bias_relu(64, 128, 256),
    "add": K.add([1, 64, 56, 56]),
    "softmax": K.softmax_rows(32, 128),
    "batch_matmul": K.batch_matmul(4, 32, 64, 16),
    "conv_nchw": K.conv2d_nchw(1, 8, 18, 18, 16, 3, 3),
}


def _residual_checkpoint(scale: float | None) -> dict:
    """A heuristic-prior checkpoint: heads zero (scale None) or a varied
    actor's heads (scaled so that they sometimes overrule the prior)."""
    ck = new_checkpoint(seed=3) if scale is None else varied_checkpoint(seed=3, scale=scale)
    ck["config"] = {**ck["config"], "prior": "heuristic"}
    if scale is None:
        actor = load_actor(ck)
        actor.zero_residual()
        ck["actor"] = actor.state_dict()
    return ck


def _decisions(text: str, name: str, **kw) -> str:
    m = mlir_rl.Module.parse(text, name)
    m.schedule_with_policy(**kw, **RULES_OFF)
    return m.decisions


def test_the_prior_is_the_heuristic_above_a_floor():
    m = mlir_rl.Module.parse(K.matmul(64, 64, 64))
    op = m.next_op()
    kind, tile, pointer = prior_logits("heuristic", m.observation(op))
    lay = layout()
    assert kind.shape == (1, lay.raw["kind_mask_size"])
    assert tile.shape == (1, lay.raw["tile_mask_size"])
    assert pointer.shape == (1, lay.raw["pointer_mask_size"])
    # The heuristic never fuses at the first step (kNever = -100), the
    # prior's floor (kPriorFloor) keeps it reachable; its first choice is TP.
    assert kind.min() == -10.0 and kind.argmax() == int(mlir_rl.ActionKind.TILED_PARALLELIZATION)
    with pytest.raises(ValueError, match="unknown prior 'oracle' \\(known: heuristic\\)"):
        prior_logits("oracle", m.observation(op))


def test_a_zero_residual_decides_as_its_prior(tmp_path):
    model = tmp_path / "zero.onnx"
    card = export_checkpoint(_residual_checkpoint(None), model)
    assert card["prior"] == "heuristic"
    actor = actor_from_onnx(model)
    assert actor.cfg.prior == "heuristic"
    for name, text in PROGRAMS.items():
        heuristic = _decisions(text, name, decisions="heuristic")
        assert _decisions(text, name, model=str(model)) == heuristic, name
        assert greedy_schedule(actor, mlir_rl.Module.parse(text, name)) == heuristic, name


def test_the_pass_and_training_add_the_same_prior(tmp_path):
    model = tmp_path / "varied.onnx"
    # A fresh actor's heads give logits of about 1e-4 per unit of scale:
    # 3e4 makes them as large as the prior's preferences.
    ck = _residual_checkpoint(scale=3e4)
    export_checkpoint(ck, model)
    actor = actor_from_onnx(model)
    plain = Actor(actor.lay, PolicyConfig(**{**ck["config"], "prior": ""}))
    plain.load_state_dict(actor.state_dict())
    differs_from_prior = differs_from_network = 0
    for name, text in PROGRAMS.items():
        passed = _decisions(text, name, model=str(model))
        assert greedy_schedule(actor, mlir_rl.Module.parse(text, name)) == passed, name
        differs_from_prior += passed != _decisions(text, name, decisions="heuristic")
        differs_from_network += passed != greedy_schedule(plain, mlir_rl.Module.parse(text, name))
    # Both parts count: the residual moves some decisions off the prior's,
    # and the prior moves some off the network's own.
    assert differs_from_prior and differs_from_network


def test_a_model_with_an_unknown_prior_is_refused(tmp_path):
    import onnx
    model = tmp_path / "odd.onnx"
    export_checkpoint(_residual_checkpoint(None), model)
    proto = onnx.load(str(model))
    for p in proto.metadata_props:
        if p.key == mlir_rl._core.policy_prior_key():
            p.value = "oracle"
    onnx.save(proto, str(model))
    with pytest.raises(mlir_rl.ScheduleError,
                       match="residual over the prior 'oracle', which this mlir-rl does not know"):
        _decisions(K.matmul(64, 64, 64), "matmul", model=str(model))


def test_fine_tuning_a_plain_policy_over_a_prior_starts_at_the_prior(tmp_path):
    from mlir_rl.rl.policy import Critic
    from mlir_rl.rl.warmstart import init_from
    plain = tmp_path / "plain.onnx"
    export_checkpoint(varied_checkpoint(seed=4, scale=3e4), plain)
    actor = Actor(layout(), PolicyConfig(prior="heuristic"))
    init_from(actor, Critic(layout(), actor.cfg), str(plain))
    assert all(float(p.detach().abs().sum()) == 0.0 for p in actor.kind_head.parameters())
    text = PROGRAMS["matmul_bias_relu"]
    assert greedy_schedule(actor, mlir_rl.Module.parse(text)) == \
        _decisions(text, "<input>", decisions="heuristic")


def test_training_settings_name_the_prior():
    from mlir_rl.rl.ppo import Args
    assert Args.from_toml(None, **{"policy.prior": "heuristic"}).policy.prior == "heuristic"
    assert Args.from_toml(None).policy.prior == ""
    with pytest.raises(ValueError, match=r"unknown policy settings \['width'\]"):
        Args.from_toml(None, **{"policy.width": 3})
