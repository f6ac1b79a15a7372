"""The policy in the compiler: PyTorch actor, ONNX export, ONNX Runtime in C++."""
import json
import subprocess

import numpy as np
import onnx
import pytest
import torch

import mlir_rl
from cases import KERNELS
from mlir_rl.rl.export import export_checkpoint, round_to_fp16
from mlir_rl.rl.policy import Actor, Critic, actor_logits, greedy_schedule, load_actor
from policy_fixtures import varied_checkpoint

PROGRAMS = ["matmul", "conv2d_nchw", "conv2d_nhwc", "maxpool_nchw", "add", "relu", "chain"]


def test_model_sizes_come_from_the_layout():
    lay = mlir_rl.layout()
    actor, critic = Actor(), Critic()
    obs = torch.zeros(3, lay.observation_size)
    mask = torch.ones(3, lay.mask_size)
    out = actor(obs, mask)
    assert out.kind.shape == (3, lay.num_actions)
    assert out.tile.shape == (3, lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes)
    assert out.pointer.shape == (3, lay.max_loops)
    assert critic(obs).shape == (3,)
    assert actor.embed.lstm.hidden_size == 512


def test_masks_are_minus_infinity_like():
    lay = mlir_rl.layout()
    actor = Actor()
    mask = torch.zeros(1, lay.mask_size)
    nt = int(mlir_rl.ActionKind.NO_TRANSFORMATION)
    mask[0, nt] = 1  # only NT
    out = actor(torch.randn(1, lay.observation_size), mask)
    probs = torch.softmax(out.kind, -1)
    assert probs[0, nt] == 1.0 and torch.isfinite(out.kind).all()


@pytest.mark.parametrize("name", PROGRAMS)
def test_logits_and_greedy_schedule_match_pytorch(name, varied_model):
    """Parity: ONNX Runtime in C++ computes the PyTorch actor's logits, and the
    pass's greedy decoding picks the PyTorch actor's actions."""
    text = KERNELS[name][0]
    actor = round_to_fp16(load_actor(varied_checkpoint()))
    m = mlir_rl.Module.parse(text)
    for op in m.traversal_order():
        kind, tile, pointer = m.policy_logits(op, varied_model)
        ref = actor_logits(actor, m, op)
        np.testing.assert_allclose(kind, ref.kind[0].numpy(), atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(tile, ref.tile[0].reshape(-1).numpy(), atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(pointer, ref.pointer[0].numpy(), atol=1e-4, rtol=1e-4)
    torch_schedule = greedy_schedule(actor, mlir_rl.Module.parse(text))
    # greedy_schedule gives the decisions after the pipeline's front end
    # (the rules are the measurer's): the same as the ONNX policy's.
    d = mlir_rl.Module.parse(text)
    d.schedule_with_policy(varied_model, rules=False)
    assert d.decisions == torch_schedule
    assert all(f"{op}:" in d.decisions for op in d.traversal_order())


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("sample,seed", [(False, 0), (True, 1), (True, 2)])
def test_policy_schedules_preserve_outputs(name, sample, seed, varied_model):
    text = KERNELS[name][0]
    base = mlir_rl.Module.parse(text)
    m = base.fresh()
    stats = m.schedule_with_policy(varied_model, sample=sample, seed=seed)
    assert stats["ops"] == len(m.traversal_order())
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2).outputs,
                                    base.time(runs=1, warmup=0, threads=2).outputs)
    assert ok, f"{m.schedule}: {err}"


def test_sampling_is_seeded(varied_model):
    text = KERNELS["chain"][0]
    runs = []
    for seed in (3, 3, 4):
        m = mlir_rl.Module.parse(text)
        m.schedule_with_policy(varied_model, sample=True, seed=seed)
        runs.append(m.schedule)
    assert runs[0] == runs[1]


def test_pass_in_mlir_opt_uses_the_model(varied_model, mlir_opt, plugin, tmp_path):
    text = KERNELS["chain"][0]
    dump = tmp_path / "schedule.mlir"
    r = subprocess.run([mlir_opt, f"--load-pass-plugin={plugin}", "-p",
                        f"builtin.module(linalg-rl-schedule{{model={varied_model} "
                        f"dump-schedule={dump}}})", "-"],
                       input=text, capture_output=True, text=True, check=True)
    m = mlir_rl.Module.parse(text)
    m.schedule_with_policy(varied_model)
    assert mlir_rl.core.read_schedule_header(dump.read_text()) == m.schedule
    ok, _ = mlir_rl.outputs_match(
        mlir_rl.Module.parse(r.stdout).time(runs=1, warmup=0, threads=2).outputs,
        mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=2).outputs)
    assert ok


def test_default_model_is_shipped_and_labelled():
    path = mlir_rl.default_model_path()
    assert path.name == "policy.onnx" and path.exists()
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert meta["mlir_rl.layout_hash"] == mlir_rl.layout().hash
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["layout_hash"] == mlir_rl.layout().hash
    assert card["trained"] == meta["mlir_rl.trained"]
    assert path.stat().st_size < 8_000_000
    m = mlir_rl.Module.parse(KERNELS["matmul"][0])
    assert m.schedule_with_policy()["ops"] == 2


def _run_pass(mlir_opt, plugin, options, text):
    return subprocess.run([mlir_opt, f"--load-pass-plugin={plugin}", "-p",
                           f"builtin.module(linalg-rl-schedule{{{options}}})", "-"],
                          input=text, capture_output=True, text=True)


def test_model_errors_are_diagnostics(mlir_opt, plugin, tmp_path, varied_model):
    text = KERNELS["add"][0]
    r = _run_pass(mlir_opt, plugin, f"model={tmp_path}/missing.onnx", text)
    assert r.returncode == 1 and f"policy model '{tmp_path}/missing.onnx' does not exist" in r.stderr
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model at all")
    r = _run_pass(mlir_opt, plugin, f"model={junk}", text)
    assert r.returncode == 1 and f"policy model '{junk}': cannot load it as an ONNX model" in r.stderr
    # Another feature layout: same model, other hash.
    other = tmp_path / "other.onnx"
    model = onnx.load(str(varied_model))
    for p in model.metadata_props:
        if p.key == "mlir_rl.layout_hash":
            p.value = "0123456789abcdef"
    onnx.save(model, str(other))
    r = _run_pass(mlir_opt, plugin, f"model={other}", text)
    assert r.returncode == 1
    assert ("was exported for feature layout 0123456789abcdef, but this mlir-rl computes layout "
            + mlir_rl.layout().hash) in r.stderr
    r = _run_pass(mlir_opt, plugin, f"model={varied_model} ort-lib=/nonexistent/libonnxruntime.so", text)
    assert r.returncode == 1 and "cannot load the ONNX Runtime library '/nonexistent/libonnxruntime.so'" in r.stderr
    r = _run_pass(mlir_opt, plugin, f"model={varied_model} ort-lib=libm.so.6", text)
    assert r.returncode == 1 and "is not an ONNX Runtime library (no OrtGetApiBase)" in r.stderr
    # Nothing crashed, and valid input stayed valid: the same run with a good
    # model succeeds.
    assert _run_pass(mlir_opt, plugin, f"model={varied_model}", text).returncode == 0


def test_checkpoint_for_another_layout_is_refused():
    ck = varied_checkpoint()
    ck["layout_hash"] = "ffffffffffffffff"
    with pytest.raises(ValueError, match="feature layout ffffffffffffffff"):
        load_actor(ck)


def test_export_writes_metadata(tmp_path):
    card = export_checkpoint(varied_checkpoint(seed=5), tmp_path / "p.onnx")
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "p.onnx")).metadata_props}
    assert meta["mlir_rl.trained"] == "false" and card["trained"] == "false"
    assert json.loads(meta["mlir_rl.action_mnemonics"]) == [k.mnemonic for k in mlir_rl.action_kinds()]
    assert meta["mlir_rl.legality_hash"] == mlir_rl.legality()["hash"]
    assert json.loads(meta["mlir_rl.provenance"])["seed"] == 5
    assert card["opset"] >= 17


def test_actor_round_trips_through_onnx(tmp_path):
    """An exported actor comes back into PyTorch with the exact (float16-
    rounded) weights, so a shipped policy can be fine-tuned."""
    from mlir_rl.rl.export import actor_from_onnx
    from mlir_rl.rl.policy import load_actor
    ck = varied_checkpoint(seed=7)
    export_checkpoint(ck, tmp_path / "p.onnx")
    expected = round_to_fp16(load_actor(ck)).state_dict()
    back = actor_from_onnx(tmp_path / "p.onnx").state_dict()
    assert set(back) == set(expected)
    for k in expected:
        assert torch.equal(back[k], expected[k]), k
    (tmp_path / "bad.onnx").write_bytes(b"not onnx")
    with pytest.raises(ValueError, match="bad.onnx"):
        actor_from_onnx(tmp_path / "bad.onnx")


@pytest.mark.parametrize("name", PROGRAMS)
def test_shipped_policy_schedules_and_preserves_outputs(name):
    """The shipped (trained) model transforms each kernel kind, and the
    scheduled program computes what the unscheduled one does."""
    text = KERNELS[name][0]
    base = mlir_rl.Module.parse(text)
    m = base.fresh()
    m.schedule_with_policy()
    card = json.loads(mlir_rl.default_model_path().with_suffix(".json").read_text())
    if card["trained"] == "true":
        assert m.ir() != base.ir(), f"{name}: the shipped policy left it as it was ({m.schedule})"
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2).outputs,
                                    base.time(runs=1, warmup=0, threads=2).outputs)
    assert ok, f"{m.schedule}: {err}"
