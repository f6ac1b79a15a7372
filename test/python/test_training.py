"""Training end to end: PPO, resume, fine-tuning, Ray rollouts, evaluation."""
import json

import pytest
import torch

from helpers import tiny_training_set
from mlir_rl.data.dataset import make_dataset
from mlir_rl.measure.memo import MeasurementMemo
from mlir_rl.stats import geomean

pytestmark = pytest.mark.slow  # training, Ray, evaluation with searches


def test_train_checkpoints_and_resumes(tmp_path):
    from mlir_rl.rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                memo_path=str(tmp_path / "m.sqlite"), iterations=1,
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
    assert len(MeasurementMemo(args.memo_path)) >= 1


def test_train_fine_tunes_an_exported_policy(tmp_path, varied_model):
    """init_actor starts from an exported ONNX policy; critic warm-up
    iterations keep that actor exactly."""
    from mlir_rl.rl.export import actor_from_onnx
    from mlir_rl.rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                memo_path=str(tmp_path / "m.sqlite"), iterations=1,
                programs_per_iteration=2, minibatch_size=8, update_epochs=1,
                init_actor=str(varied_model), critic_warmup_iterations=1)
    run = train(args, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    start = actor_from_onnx(varied_model).state_dict()
    assert all(torch.equal(ck["actor"][k], start[k]) for k in start)
    assert ck["provenance"]["init_actor"] == str(varied_model)


def test_a_warm_start_alone_is_a_training_run(tmp_path, varied_model):
    """iterations = 0: the started actor is the run's checkpoint (it used
    to end without one, and `mlir-rl train` failed exporting it)."""
    from mlir_rl.rl.export import actor_from_onnx
    from mlir_rl.rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                memo_path=str(tmp_path / "m.sqlite"), iterations=0,
                init_actor=str(varied_model))
    run = train(args, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    assert ck["iteration"] == 0 and ck["provenance"]["trained"]
    start = actor_from_onnx(varied_model).state_dict()
    assert all(torch.equal(ck["actor"][k], start[k]) for k in start)


def test_behaviour_cloning_learns_the_demonstrations(tmp_path):
    """Cloning demonstrations (encoded by C++) makes the actor's greedy
    schedule, decoded by C++, the demonstrated one."""
    from mlir_rl.core import Module
    from mlir_rl.rl.policy import Actor, greedy_schedule
    from mlir_rl.rl.warmstart import behaviour_clone, demonstration_decisions
    from mlir_rl.data import kernels as K
    text = K.matmul(32, 64, 48)
    demo = "1: TP(16,32,0) T(8,8,1) V; 0: V"
    d = demonstration_decisions({"mm": text}, [{"name": "mm", "best_schedule": demo}])
    torch.manual_seed(0)
    actor = Actor()
    nll = behaviour_clone(actor, d, epochs=60, lr=1e-3, batch_size=8,
                          generator=torch.Generator().manual_seed(0), log=lambda *a: None)
    assert nll < 0.1
    assert greedy_schedule(actor.eval(), Module.parse(text)) == demo


def test_anchors_keep_the_starting_actors_schedules_beside_the_demonstrations(tmp_path):
    """anchor_decisions: the starting actor's own decisions on a network in
    the pass's form. Cloned together with a demonstration on another
    program, the actor learns the demonstration and keeps its schedules of
    the network's ops (cloning alone changes them); ``keep`` selects ops."""
    from mlir_rl.core import Module, front_end, parse_schedule, prepare
    from mlir_rl.data import kernels as K
    from mlir_rl.rl.policy import Actor, greedy_schedule
    from mlir_rl.rl.warmstart import (anchor_decisions, behaviour_clone, concat_decisions,
                                      demonstration_decisions, is_thin_matmul)
    net = tmp_path / "net.mlir"
    net.write_text(K.matmul_bias_relu(4, 64, 32))
    text = front_end(prepare(net.read_text(), "net"), "net")
    ops = Module.parse(text).ops()
    assert len(ops) > 2
    torch.manual_seed(3)
    actor = Actor().eval()
    before = dict(parse_schedule(greedy_schedule(actor, Module.parse(text))))
    lines = []
    anchors = anchor_decisions(actor, [str(net)], lines.append)
    assert len(anchors) > 0 and lines and "net" in lines[0]
    # Both forms the pass sees: as imported, and after mlir-rl-prepare.
    assert "(imported)" in lines[0] and "(prepared)" in lines[1]
    matmuls = anchor_decisions(actor, [str(net)], lines.append,
                               keep=lambda op: op.kind == "matmul")
    assert 0 < len(matmuls) < len(anchors)
    # The 4-row linear layer left free (anchor_free_rows): all but its decisions.
    free = anchor_decisions(actor, [str(net)], lines.append,
                            keep=lambda op: not is_thin_matmul(op, 4))
    assert len(free) == len(anchors) - len(matmuls)
    assert not any(is_thin_matmul(op, 0) or is_thin_matmul(op, 3) for op in ops)
    mm = K.matmul(32, 64, 48)
    demo = "1: TP(16,32,0) T(8,8,1) V; 0: V"
    d = concat_decisions(demonstration_decisions({"mm": mm}, [{"name": "mm", "best_schedule": demo}]),
                         anchors)
    assert len(d) == len(anchors) + len(Module.parse(mm).demonstrate(demo))
    behaviour_clone(actor.train(), d, epochs=80, lr=1e-3, batch_size=8,
                    generator=torch.Generator().manual_seed(0), log=lambda *a: None)
    actor.eval()
    assert greedy_schedule(actor, Module.parse(mm)) == demo
    after = dict(parse_schedule(greedy_schedule(actor, Module.parse(text))))
    assert all(str(after[i]) == str(before[i]) for i in before)


def test_a_warm_start_clones_demonstrations_and_anchors(tmp_path, varied_model):
    """train() with demonstrations and anchors: a demonstration the action
    space does not allow is left out and listed, the anchors' decisions
    join the cloned ones, and the run's provenance names them."""
    from mlir_rl.data import kernels as K
    from mlir_rl.rl.ppo import Args, train
    ds = tiny_training_set(tmp_path / "ds")
    names = [e["name"] for e in json.loads((ds / "manifest.json").read_text())["programs"]]
    demos = tmp_path / "demos.json"
    demos.write_text(json.dumps([
        {"name": names[0], "best_schedule": "0: NT", "best_speedup": 1.0},
        {"name": names[1], "best_schedule": "0: T(0,0,0,0,0,0,0,0,0,0,0,3) V",
         "best_speedup": 2.0}]))
    net = tmp_path / "net.mlir"
    net.write_text(K.matmul_bias_relu(8, 64, 32))
    args = Args(dataset=str(ds), run_dir=str(tmp_path / "run"), memo_path=str(tmp_path / "m.sqlite"),
                iterations=0, init_actor=str(varied_model), demonstrations=str(demos),
                bc_epochs=1, anchors=str(net), anchor_free_rows=4,
                anchor_policy=str(varied_model))
    run = train(args, progress=False)
    ck = torch.load(run / "checkpoint.pt", weights_only=False)
    bc = [h["behaviour_cloning"] for h in ck["history"] if "behaviour_cloning" in h][0]
    assert len(bc["left_out"]) == 1 and names[1] in bc["left_out"][0]
    assert bc["decisions"] >= 1 and bc["anchor_decisions"] >= 3
    assert ck["provenance"]["anchors"] == str(net)
    assert ck["provenance"]["anchor_policy"] == str(varied_model)
    assert ck["provenance"]["anchor_free_rows"] == 4  # 8 rows: the matmul stays anchored


def test_args_from_toml_rejects_unknown_keys(tmp_path):
    from mlir_rl.rl.ppo import Args
    f = tmp_path / "c.toml"
    f.write_text('iterations = 3\n[policy]\nembed_size = 32\n')
    a = Args.from_toml(f, seed=5)
    assert a.iterations == 3 and a.seed == 5 and a.policy.embed_size == 32
    f.write_text('iteratons = 3\n')
    with pytest.raises(ValueError, match="iteratons"):
        Args.from_toml(f)


def test_shipped_configs_load():
    """Every shipped config loads, and each of its settings reaches Args."""
    import tomllib
    from pathlib import Path

    from mlir_rl.rl.ppo import Args
    files = sorted(Path(__file__).parents[2].glob("configs/*.toml"))
    assert files, "no configs/*.toml"
    for f in files:
        args = Args.from_toml(f)
        data = tomllib.loads(f.read_text())
        for key, value in data.pop("policy", {}).items():
            assert getattr(args.policy, key) == value, (f.name, "policy", key)
        for key, value in data.items():
            assert getattr(args, key) == value, (f.name, key)
    with pytest.raises(ValueError, match="unknown settings"):
        Args.from_toml(files[0], no_such_setting=1)


def test_evaluate_reports_per_kind(tmp_path, varied_model):
    from mlir_rl.rl.evaluate import EvalConfig, evaluate
    make_dataset(tmp_path / "ds", seed=2, sequences=1, lqcd=1)
    out = tmp_path / "eval.json"
    rep = evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", model=str(varied_model),
                              random_budget=2, search_budget=2, runs=1, limit=2,
                              confirm_rounds=2, confirm_runs=1, json=str(out),
                              memo=str(tmp_path / "m.sqlite")), progress=False)
    assert len(rep["rows"]) == 2 and "all" in rep["summary"]
    assert rep["table"].startswith("| kind |")
    assert json.loads(out.read_text())["rows"] == rep["rows"]  # written as it goes
    for r in rep["rows"]:
        # Small validation programs: the policy's schedule applies, runs and
        # computes what the unscheduled program computes.
        assert r["policy_status"] == "ok", r
        # The policy's schedule and the search's best, timed against each other.
        assert r["confirm_outputs_equal"] and r["policy_confirmed"] > 0
        if r["policy_schedule"] == r["search_schedule"]:
            assert r["policy_confirmed"] == r["search_confirmed"]
    assert rep["confirmed"]
    assert rep["summary"]["all"]["policy"] == pytest.approx(
        geomean(r["policy_confirmed"] for r in rep["rows"]))
    # --kinds: only those programs; an unknown kind is an error that names the known ones.
    kind = rep["rows"][-1]["kind"]
    only = evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", model=str(varied_model),
                               random_budget=2, search_budget=2, runs=1, limit=1, kinds=kind,
                               confirm_rounds=0, memo=str(tmp_path / "m.sqlite")), progress=False)
    assert [r["kind"] for r in only["rows"]] == [kind]
    with pytest.raises(ValueError, match="no programs of kinds"):
        evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", kinds="nonexistent"),
                 progress=False)
    # --names: only those programs, in the dataset's order; an unknown name is an error.
    name = rep["rows"][-1]["name"]
    named = evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", model=str(varied_model),
                                random_budget=1, search_budget=1, runs=1, names=name,
                                confirm_rounds=0, memo=str(tmp_path / "m.sqlite")), progress=False)
    assert [r["name"] for r in named["rows"]] == [name]
    with pytest.raises(ValueError, match="no programs named"):
        evaluate(EvalConfig(dataset=str(tmp_path / "ds"), split="val", names="nonexistent"),
                 progress=False)


def test_evaluate_searches_again_where_an_earlier_schedule_no_longer_applies(tmp_path):
    """--baselines reuses an earlier report's search figures per program,
    but a program whose form changed since (its search schedule no longer
    applies) is searched anew instead of failing the evaluation."""
    from mlir_rl.rl.evaluate import EvalConfig, applies, evaluate
    make_dataset(tmp_path / "ds", seed=2, sequences=1, lqcd=1)
    cfg = dict(dataset=str(tmp_path / "ds"), split="val", random_budget=1, search_budget=2,
               runs=1, limit=2, confirm_rounds=1, confirm_runs=1,
               memo=str(tmp_path / "m.sqlite"))
    first = evaluate(EvalConfig(**cfg), progress=False)
    stale = json.loads(json.dumps(first))
    name = stale["rows"][0]["name"]
    stale["rows"][0]["search_schedule"] = "99: TP(4,4) V"  # no op 99
    stale["rows"][0]["search"] = 1e9                        # would show if reused
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(stale))
    from mlir_rl.data.dataset import load_dataset
    text = dict((e["name"], t) for e, t in load_dataset(cfg["dataset"], "val"))[name]
    assert not applies(text, "99: TP(4,4) V") and applies(text, "")
    again = evaluate(EvalConfig(**cfg, baselines=str(prev)), progress=False)
    row = next(r for r in again["rows"] if r["name"] == name)
    assert row["search"] < 1e9 and applies(text, row["search_schedule"])
    # The other program's figures are the earlier report's.
    other = next(r for r in again["rows"] if r["name"] != name)
    assert other["search"] == next(r for r in first["rows"] if r["name"] == other["name"])["search"]


def test_train_with_ray_rollout_workers(tmp_path):
    """Rollouts on a local Ray: two workers, each with its own environment,
    sharing the SQLite memo; the learner trains on their episodes."""
    pytest.importorskip("ray")
    from mlir_rl.rl.ppo import Args, train
    args = Args(dataset=str(tiny_training_set(tmp_path / "ds")), run_dir=str(tmp_path / "run"),
                memo_path=str(tmp_path / "m.sqlite"), iterations=1, programs_per_iteration=4,
                minibatch_size=8, update_epochs=1, rollout_workers=2)
    try:
        run = train(args, progress=False)
    finally:
        import ray
        ray.shutdown()
    hist = json.loads((run / "history.json").read_text())
    assert sum(hist[-1]["statuses"].values()) == 4
    assert len(MeasurementMemo(args.memo_path)) >= 2  # both workers wrote to it


def test_demonstrations_from_several_files_keep_the_fastest(tmp_path):
    from mlir_rl.rl.ppo import load_demonstrations

    a = [{"name": "p", "best_schedule": "0: V", "best_speedup": 2.0, "tried": 3},
         {"name": "q", "best_schedule": "0: NT", "best_speedup": 1.0, "tried": 3}]
    b = [{"name": "p", "best_schedule": "0: T(8) V", "best_speedup": 1.5, "tried": 3},
         {"name": "q", "best_schedule": "0: TP(4) V", "best_speedup": 3.0, "tried": 3},
         {"name": "r", "best_schedule": "0: V", "best_speedup": 1.2, "tried": 3}]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    merged = {d["name"]: d["best_schedule"] for d in
              load_demonstrations(f"{tmp_path / 'a.json'}, {tmp_path / 'b.json'}")}
    assert merged == {"p": "0: V", "q": "0: TP(4) V", "r": "0: V"}
    assert len(load_demonstrations(str(tmp_path / "b.json"))) == 3
