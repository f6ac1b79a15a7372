"""Environment, memo, data, search and PPO pieces."""
import json
import math
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import mlir_rl
from mlir_rl import kernels as K
from mlir_rl.cache import Measurement, MeasurementCache
from mlir_rl.data import load_dataset, make_dataset
from mlir_rl.env import EnvConfig, LinalgScheduleEnv
from mlir_rl.executor import ExecConfig, Executor
from mlir_rl.policy import Actor
from mlir_rl.ppo import action_log_prob, compute_gae, demonstration_steps, ppo_loss, sample_action
from mlir_rl.search import random_schedule, structured_schedule, search

SMALL = [("mm", K.matmul(32, 64, 48)), ("relu", K.relu([16, 64]))]


def action(kind, sizes=(), ptr=0):
    lay = mlir_rl.layout()
    a = np.zeros(lay.max_loops + 2, dtype=np.int64)
    a[0] = lay.action_mnemonics.index(kind)
    for i, s in enumerate(sizes):
        a[1 + i] = lay.tile_candidates.index(s)
    a[-1] = ptr
    return a


@pytest.fixture
def env(tmp_path):
    e = LinalgScheduleEnv(SMALL, EnvConfig(cache_path=str(tmp_path / "m.sqlite")))
    yield e
    e.close()


def test_check_env(env):
    check_env(env.unwrapped, skip_render_check=True)


def test_registered():
    import gymnasium as gym
    assert "mlir_rl/LinalgSchedule-v0" in gym.registry


def test_episode_reward_is_log_speedup(env):
    env.reset(seed=0, options={"index": 0})
    for a in (action("TP", (16, 32, 0)), action("T", (8, 32, 1)), action("V")):
        _, r, term, trunc, info = env.step(a)
        assert r == 0.0 and not term
    _, r, term, trunc, info = env.step(action("NT"))  # the fill
    assert term and not trunc
    assert info["schedule"] == "1: TP(16,32,0) T(8,32,1) V; 0: NT"
    assert info["status"] == "ok" and info["speedup"] > 1
    assert r == pytest.approx(math.log(info["speedup"]), rel=1e-6)
    # Measured once, then memoized.
    assert env.cache.get(mlir_rl.cache.module_hash(SMALL[0][1]), info["schedule"], env.host).ok


def test_illegal_actions_become_nt(env):
    env.reset(seed=0, options={"index": 0})
    _, _, _, _, info = env.step(action("TP", (8, 8, 8)))  # reduction loop tiled
    assert info["illegal"] and env.module.ops()[1].history == ("NT",)


def test_interchange_by_pointers(env):
    env.reset(seed=0, options={"index": 1})
    env.step(action("I", ptr=1))
    _, _, term, _, _ = env.step(action("T", ptr=0))  # only the pointer is read now
    assert not term and env.module.schedule == "0: I(1,0)"
    _, _, term, _, _ = env.step(action("NT"))
    assert term and env.module.schedule == "0: I(1,0) NT"


def test_cache_survives_sigkill(tmp_path):
    """A writer killed with SIGKILL loses no committed measurement."""
    path = tmp_path / "c.sqlite"
    code = (f"from mlir_rl.cache import *; c = MeasurementCache({str(path)!r});\n"
            "import os, signal\n"
            "for i in range(20): c.put('h', f's{i}', 'host', Measurement('ok', i * 1.0, 0, 0))\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, "-c", code])
    assert r.returncode == -signal.SIGKILL
    c = MeasurementCache(path)
    assert len(c) == 20 and c.get("h", "s19", "host").median_s == 19.0
    assert c.get("h", "nope", "host") is None and c.hit_rate == 0.5


def test_executor_isolates_crashes_and_hangs():
    with Executor(ExecConfig()) as ex:
        m, out = ex.measure(K.add([8, 8]), "0: T(4,4)", timeout_s=60)
        assert m.ok and out is not None
        m, _ = ex.measure("this is not MLIR", "", timeout_s=60)
        assert m.status == "compile_failed"
        m, _ = ex.measure(K.matmul(64, 256, 128), "", timeout_s=0.001)
        assert m.status == "timeout"
        m, _ = ex.measure(K.add([8, 8]), "", timeout_s=60)  # restarted
        assert m.ok


def test_worker_ends_with_its_parent(tmp_path):
    """A worker whose parent is killed (no atexit, daemon children not
    reaped) stops instead of running its kernel on."""
    pidfile = tmp_path / "worker.pid"
    code = ("import os, signal, threading, time\n"
            "from mlir_rl import kernels as K\n"
            "from mlir_rl.executor import ExecConfig, Executor\n"
            "ex = Executor(ExecConfig(runs=50))\n"
            "ex._start()\n"
            f"open({str(pidfile)!r}, 'w').write(str(ex._proc.pid))\n"
            "threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()\n"
            "ex.measure(K.matmul(512, 512, 512), '', timeout_s=600)\n")
    r = subprocess.run([sys.executable, "-c", code])
    assert r.returncode == -signal.SIGKILL
    pid = int(pidfile.read_text())
    import time
    for _ in range(40):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    os.kill(pid, signal.SIGKILL)
    pytest.fail("the worker outlived its parent")


def test_search_cut_is_a_memoized_lower_bound(tmp_path):
    """A search stops a candidate slower than its cut (here 1/1000 of the
    unscheduled time, floored at 20 ms); the memo keeps the cut as a lower
    bound that only searches use."""
    text = K.matmul(384, 384, 384)
    e = LinalgScheduleEnv([("mm", text)], EnvConfig(cache_path=str(tmp_path / "m.sqlite")))
    try:
        base = e.baseline(text)
        assert base.ok and base.median_s > 0.03, base  # above the floor
        n = len(e.cache)
        cut = e.measure(text, "1: T(1,1,1)", cut_at=1e-3)  # scalar tiles: slow
        assert cut.status == "cut" and cut.median_s >= 0.02, cut
        assert len(e.cache) == n + 1  # memoized as a lower bound...
        assert e.measure(text, "1: T(1,1,1)", cut_at=1e-3) == cut  # ...for searches
        full = e.measure(text, "1: T(1,1,1)")  # not for a full verdict
        assert full.status == "ok" and len(e.cache) == n + 1
        assert e.measure(text, "1: T(1,1,1)", cut_at=1e-3).status == "ok"
    finally:
        e.close()


def test_large_vector_tiles_run():
    """Regression: vectorized 4x8x64 tiles once overflowed the stack (allocas
    in loops from vector-to-scf); measured in the worker, so a crash is a
    status, not a dead test run."""
    with Executor(ExecConfig()) as ex:
        text = K.matmul(64, 256, 128)
        ref, out = ex.measure(text, "", timeout_s=120)
        m, _ = ex.measure(text, "1: T(4,8,64) V", timeout_s=120, reference=out)
        assert m.status == "ok", m.detail


def test_dataset_split_keeps_signatures_apart(tmp_path):
    manifest = make_dataset(tmp_path, seed=3, sequences=6, lqcd=2)
    train = {e["signature"] for e in manifest["programs"] if e["split"] == "train"}
    val = {e["signature"] for e in manifest["programs"] if e["split"] == "val"}
    assert train and val and not train & val
    families = {e["family"] for e in manifest["programs"]}
    assert families == {"single", "sequence", "lqcd"}
    again = make_dataset(tmp_path / "again", seed=3, sequences=6, lqcd=2)
    assert [e["sha256"] for e in again["programs"]] == [e["sha256"] for e in manifest["programs"]]
    # Every program parses, is supported, and LQCD contractions are deep.
    for e, text in load_dataset(tmp_path):
        m = mlir_rl.Module.parse(text, e["name"])
        assert m.traversal_order(), e["name"]
        if e["family"] == "lqcd":
            assert max(len(o.loop_bounds) for o in m.ops()) >= 8


def test_samplers_make_legal_complete_schedules():
    import random
    rng = random.Random(0)
    for _, text in SMALL + [("chain", K.matmul_bias_relu(32, 64, 32))]:
        for sampler in (random_schedule, structured_schedule):
            m = mlir_rl.Module.parse(text)
            sampler(m, rng)
            assert all(o.done for o in m.ops())


def test_search_finds_a_speedup(env):
    r = search(env, "mm", SMALL[0][1], budget=6, sampler="structured", seed=0)
    assert r.tried >= 1 and r.best_speedup >= 1.0
    assert r.best_schedule == "" or r.best_schedule.startswith("1:")


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


def test_log_prob_of_sampled_actions_is_consistent():
    torch.manual_seed(0)
    lay = mlir_rl.layout()
    m = mlir_rl.Module.parse(SMALL[0][1])
    obs = torch.from_numpy(m.observation(1))[None].repeat(64, 1)
    mask = torch.from_numpy(m.flat_masks(1).astype(np.float32))[None].repeat(64, 1)
    actor = Actor()
    logits = actor(obs, mask)
    acts = sample_action(logits, mask, torch.Generator().manual_seed(0))
    logp, ent = action_log_prob(logits, mask, acts)
    assert torch.isfinite(logp).all() and (logp <= 0).all() and (ent >= 0).all()
    # Sampled choices respect the masks.
    kinds = acts[:, 0]
    assert all(m.masks(1).kind[k] for k in kinds.tolist())
    # Loops beyond the op's 3 only take candidate 0.
    assert (acts[:, 4:1 + lay.max_loops] == 0).all()


def test_demonstrations_replay_to_the_same_schedule():
    text = K.matmul(32, 64, 48)
    steps = demonstration_steps(text, "1: TP(16,32,0) I(1,0,2) T(8,8,1); 0: V")
    lay = mlir_rl.layout()
    kinds = [lay.action_mnemonics[s[2][0]] for s in steps]
    # TP, three interchange pointers, T, then NT (closes op 1), V on the fill.
    assert kinds == ["TP", "I", "I", "I", "T", "NT", "V"]
    assert [s[2][-1] for s in steps[1:4]] == [1, 0, 2]


def tiny_training_set(path):
    """A dataset whose training split is two small single-op programs."""
    make_dataset(path, seed=1, sequences=1, lqcd=1)
    manifest = json.loads((path / "manifest.json").read_text())
    keep = [e for e in manifest["programs"] if e["family"] == "single"
            and e["kind"] in ("add", "generic")][:2]
    for e in keep:
        e["split"] = "train"
    manifest["programs"] = keep
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def test_train_checkpoints_and_resumes(tmp_path):
    from mlir_rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                cache_path=str(tmp_path / "m.sqlite"), iterations=1,
                programs_per_iteration=2, minibatch_size=8, update_epochs=1)
    run = train(args, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    assert ck["iteration"] == 1 and ck["provenance"]["trained"]
    assert (run / "tb").is_dir() and json.loads((run / "history.json").read_text())
    args.iterations = 2
    train(args, resume=True, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    assert ck["iteration"] == 2 and len(ck["history"]) == 2
    # Measurements were memoized.
    assert len(MeasurementCache(args.cache_path)) >= 1


def test_train_fine_tunes_an_exported_policy(tmp_path, varied_model):
    """init_actor starts from an exported ONNX policy; critic warm-up
    iterations keep that actor exactly."""
    from mlir_rl.export import actor_from_onnx
    from mlir_rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                cache_path=str(tmp_path / "m.sqlite"), iterations=1,
                programs_per_iteration=2, minibatch_size=8, update_epochs=1,
                init_actor=str(varied_model), critic_warmup_iterations=1)
    run = train(args, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    start = actor_from_onnx(varied_model).state_dict()
    assert all(torch.equal(ck["actor"][k], start[k]) for k in start)
    assert ck["provenance"]["init_actor"] == str(varied_model)


def test_args_from_toml_rejects_unknown_keys(tmp_path):
    from mlir_rl.ppo import Args
    f = tmp_path / "c.toml"
    f.write_text('iterations = 3\n[policy]\nembed_size = 32\n')
    a = Args.from_toml(f, seed=5)
    assert a.iterations == 3 and a.seed == 5 and a.policy.embed_size == 32
    f.write_text('iteratons = 3\n')
    with pytest.raises(ValueError, match="iteratons"):
        Args.from_toml(f)


def test_evaluate_reports_per_kind(tmp_path, varied_model):
    from mlir_rl.evaluate import EvalConfig, evaluate
    make_dataset(tmp_path / "ds", seed=2, sequences=1, lqcd=1)
    rep = evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", model=str(varied_model),
                              random_budget=2, search_budget=2, runs=1, limit=2,
                              cache_path=str(tmp_path / "m.sqlite")), progress=False)
    assert len(rep["rows"]) == 2 and "all" in rep["summary"]
    assert rep["table"].startswith("| kind |")
    for r in rep["rows"]:
        assert r["policy_status"] in ("ok", "timeout", "wrong_output", "apply_failed",
                                      "compile_failed", "crashed")


def test_train_with_ray_rollout_workers(tmp_path):
    """Rollouts on a local Ray: two workers, each with its own environment,
    sharing the SQLite memo; the learner trains on their episodes."""
    pytest.importorskip("ray")
    from mlir_rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                cache_path=str(tmp_path / "m.sqlite"), iterations=1, programs_per_iteration=4,
                minibatch_size=8, update_epochs=1, rollout_workers=2)
    try:
        run = train(args, progress=False)
    finally:
        import ray
        ray.shutdown()
    hist = json.loads((run / "history.json").read_text())
    assert sum(hist[-1]["statuses"].values()) == 4
    assert len(MeasurementCache(args.cache_path)) >= 2  # both workers wrote to it
