"""Datasets, suites and search samplers."""
import ast
import json
import random
from pathlib import Path

import pytest

import mlir_rl
from helpers import SMALL
from mlir_rl.data import kernels as K
from mlir_rl.data.dataset import load_dataset, make_dataset
from mlir_rl.rl.search import neighbours, random_schedule, search, structured_schedule
from mlir_rl.measure.measurer import MeasureConfig, Measurer


def test_dataset_split_keeps_signatures_apart(tmp_path):
    manifest = make_dataset(tmp_path, seed=3, sequences=6, lqcd=2)
    train = {e["signature"] for e in manifest["programs"] if e["split"] == "train"}
    val = {e["signature"] for e in manifest["programs"] if e["split"] == "val"}
    assert train and val and not train & val
    families = {e["family"] for e in manifest["programs"]}
    assert families == {"single", "sequence", "lqcd", "prepared"}
    again = make_dataset(tmp_path / "again", seed=3, sequences=6, lqcd=2)
    assert [e["sha256"] for e in again["programs"]] == [e["sha256"] for e in manifest["programs"]]
    # Every program parses, is supported, and LQCD contractions are deep.
    for e, text in load_dataset(tmp_path):
        m = mlir_rl.Module.parse(text, e["name"])
        assert m.traversal_order(), e["name"]
        if e["family"] == "lqcd":
            assert max(len(o.loop_bounds) for o in m.ops()) >= 8
        if e["family"] == "prepared" and e["kind"] == "conv_2d":
            # Prepared: the convolution is a matmul-like generic now.
            assert not any(o.name.startswith("linalg.conv") for o in m.ops()), e["name"]


def test_thin_family_leaves_the_split_as_it_was_and_spares_the_shapes_suite(tmp_path):
    from mlir_rl.bench.peers import shapes_suite
    base = make_dataset(tmp_path / "base", seed=3, sequences=6, lqcd=2)
    thin = make_dataset(tmp_path / "thin", seed=3, sequences=6, lqcd=2, thin=True)
    split = {e["name"]: (e["split"], e["sha256"]) for e in thin["programs"]}
    assert all(split[e["name"]] == (e["split"], e["sha256"]) for e in base["programs"])
    base_names = {e["name"] for e in base["programs"]}
    added = [e for e in thin["programs"] if e["name"] not in base_names]
    assert added and {e["family"] for e in added} == {"thin"}
    assert {e["split"] for e in added} == {"train", "val"}
    # The benchmark of such shapes times programs the family does not hold.
    texts = {text for _, text in load_dataset(tmp_path / "thin")}
    assert not texts & {k.text for k in shapes_suite()}
    for e, text in load_dataset(tmp_path / "thin"):
        if e["family"] == "thin":
            assert mlir_rl.Module.parse(text, e["name"]).traversal_order(), e["name"]
        if e["name"].startswith("thin_linear_torch_"):
            # Linear layers in the networks' form: after mlir-rl-prepare the
            # matmul reads the [N, K] weight in place, no transpose left.
            ops = mlir_rl.Module.parse(text, e["name"]).ops()
            assert not any(o.name == "linalg.transpose" for o in ops), e["name"]
            assert [o.kind for o in ops].count("matmul") == 1, e["name"]
    # They come last in each split (earlier programs keep their places,
    # which seed their searches).
    for part in ("train", "val"):
        fam = [e["name"] for e in thin["programs"] if e["split"] == part and e["family"] == "thin"]
        torch_form = [n.startswith("thin_linear_torch_") for n in fam]
        assert any(torch_form) and torch_form == sorted(torch_form), part


@pytest.mark.slow
def test_front_end_dataset_holds_what_the_pass_schedules(tmp_path):
    """`--front-end` writes the form the pass's policy is asked about:
    training and evaluation then schedule what a user's program becomes."""
    plain = make_dataset(tmp_path / "plain", seed=3, sequences=6, lqcd=2)
    fe = make_dataset(tmp_path / "fe", seed=3, sequences=6, lqcd=2, front_end=True)
    assert fe["front_end"] and not plain["front_end"]
    key = [(e["name"], e["split"], e["signature"]) for e in plain["programs"]]
    assert [(e["name"], e["split"], e["signature"]) for e in fe["programs"]] == key
    given = {e["name"]: text for e, text in load_dataset(tmp_path / "plain")}
    changed = []
    for e, text in load_dataset(tmp_path / "fe"):
        names = [o.name for o in mlir_rl.Module.parse(text, e["name"]).ops()]
        assert not [n for n in names if n.startswith(("linalg.conv_2d_n", "linalg.pooling"))], \
            (e["name"], names)
        if text != given[e["name"]]:
            changed.append(e["name"])
            # The policy on the written program decides as the pass does on
            # the program as the user wrote it.
            # (The written program carries the front end's mark: the
            # pipeline does not run it again.)
            m = mlir_rl.Module.parse(text, e["name"])
            m.schedule_with_policy()
            u = mlir_rl.Module.parse(given[e["name"]], e["name"])
            u.schedule_with_policy()
            assert m.decisions == u.decisions and m.ir() == u.ir(), e["name"]
    kinds = {e["kind"] for e in plain["programs"] if e["name"] in changed}
    assert {"conv_2d", "pooling"} <= kinds, kinds
    # Programs without windows or odd extents are written as they were.
    assert any(e["kind"] == "matmul" and e["name"] not in changed for e in plain["programs"])
    one = given[changed[0]]
    assert mlir_rl.front_end(mlir_rl.front_end(one)) == mlir_rl.front_end(one)


def test_kernels_import_no_dataset():
    """The kernel builders are the bottom layer: datasets and suites use them,
    not the other way round."""
    src = Path(K.__file__).read_text()
    imports = [n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [i for i in imports if isinstance(i, ast.ImportFrom) and i.module
                and i.module.startswith("mlir_rl")]


def test_samplers_make_legal_complete_schedules():
    rng = random.Random(0)
    for _, text in SMALL + [("chain", K.matmul_bias_relu(32, 64, 32))]:
        for sampler in (random_schedule, structured_schedule):
            m = mlir_rl.Module.parse(text)
            sampler(m, rng)
            assert all(o.done for o in m.ops()), (sampler.__name__, m.schedule)
            # The schedule replays on a fresh module.
            again = mlir_rl.Module.parse(text)
            assert again.apply_schedule(m.schedule) == mlir_rl.ApplyStatus.APPLIED


def test_search_finds_a_speedup(tmp_path):
    """A measured schedule beats the unscheduled 128x256x128 matmul (a tiled,
    parallel, vectorized one is >5x faster on any machine this runs on)."""
    text = K.matmul(128, 256, 128)
    with Measurer(MeasureConfig(memo_path=str(tmp_path / "m.sqlite"))) as measurer:
        r = search(measurer, "mm", text, budget=6, sampler="structured", seed=0)
        assert r.tried >= 1 and r.best_schedule.startswith("1:"), r
        assert r.best_speedup > 1.0
        # The reported speedup is the measured one.
        m = measurer.measure(text, r.best_schedule)
        assert r.best_speedup == measurer.speedup(text, m)


def test_neighbours_move_one_tile_size_one_step():
    """Each neighbour differs from the schedule in one tile size, moved to the
    next candidate size (0, 1, 2, 4, ..., 64), and replays on a fresh module;
    sizes the masks refuse (a T that no longer divides its TP tile) are not
    proposed."""
    text = K.matmul(8, 256, 64)
    start = "1: TP(1,64,0) T(1,8,8) V; 0: TP(4,64) V"
    got = neighbours(text, "mm", start)
    assert start not in got and len(got) == len(set(got)) >= 8
    assert "1: TP(1,64,0) T(1,16,8) V; 0: TP(4,64) V" in got
    assert "1: TP(1,64,0) T(1,8,4) V; 0: TP(4,64) V" in got
    assert "1: TP(2,64,0) T(1,8,8) V; 0: TP(4,64) V" in got
    assert "1: TP(1,64,0) T(1,8,8) V; 0: TP(4,32) V" in got
    sizes = mlir_rl.layout().tile_candidates
    import re
    def tiles(sched):
        return [int(x) for x in re.findall(r"-?\d+", re.sub(r"^\d+:|; \d+:", " ", sched))]
    for n in got:
        a, b = tiles(start), tiles(n)
        assert len(a) == len(b)
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(diff) == 1, n
        (x, y), = diff
        assert abs(sizes.index(x) - sizes.index(y)) == 1, n
        assert mlir_rl.Module.parse(text).apply_schedule(n) == mlir_rl.ApplyStatus.APPLIED
    # TP(1,64,0) then T(1,128,8) is not a tile size the masks allow.
    assert not any("T(1,128" in n for n in got)


@pytest.mark.slow
def test_a_local_search_climbs_from_the_best_sample(tmp_path):
    """budget=1 then local=12: every measurement after the samples is a
    neighbour of a best-so-far schedule, and the result is at least as fast
    as the best sample."""
    text = K.matmul(8, 256, 64)
    policy_like = "1: TP(1,64,0) T(1,8,8) V; 0: TP(4,64) V"
    with Measurer(MeasureConfig(memo_path=str(tmp_path / "m.sqlite"))) as measurer:
        flat = search(measurer, "mm", text, budget=0, candidates=[policy_like])
        r = search(measurer, "mm", text, budget=0, candidates=[policy_like], local=12)
    assert flat.tried == 1 and 2 <= r.tried <= 13 and len(r.speedups) == r.tried
    assert r.best_speedup == max([flat.best_speedup] + r.speedups)


@pytest.mark.slow
def test_search_with_a_policy_keeps_its_schedule_within_the_margin(tmp_path):
    """`mlir-rl search --policy P --policy-margin F`: the demonstration is the
    policy's own schedule unless the search's best is F times faster; the
    search's winner is still recorded."""
    import json

    from mlir_rl.rl.search import SearchConfig, search_dataset
    data = tmp_path / "data"
    data.mkdir()
    progs = {"mm": K.matmul(64, 128, 64), "relu": K.relu([64, 256])}
    for name, text in progs.items():
        (data / f"{name}.mlir").write_text(text)
    (data / "manifest.json").write_text(json.dumps({"programs": [
        {"name": n, "file": f"{n}.mlir", "split": "train", "family": f, "kind": k}
        for n, f, k in (("mm", "single", "matmul"), ("relu", "thin", "generic"))]}))
    cfg = dict(dataset=str(data), budget=6, memo=str(tmp_path / "m.sqlite"),
               policy=str(mlir_rl.default_model_path()))
    both = search_dataset(SearchConfig(**cfg, output=str(tmp_path / "a.json")), progress=False)
    kept = search_dataset(SearchConfig(**cfg, policy_margin=1e9,
                                       output=str(tmp_path / "b.json")), progress=False)
    for a, b in zip(both, kept):
        # Measured (> 0); not "> 1": a timed figure, and on a loaded machine a
        # 1-run relu has measured 0.13x.
        assert a["policy_schedule"] == b["policy_schedule"] and a["policy_speedup"] > 0
        # Margin 1: the best of both, the search's when faster.
        assert a["best_speedup"] >= a["policy_speedup"]
        assert a["best_is_policy"] == (a["best_schedule"] == a["policy_schedule"])
        # An unreachable margin: always the policy's, the search's winner aside.
        assert b["best_schedule"] == b["policy_schedule"] and b["best_is_policy"]
        assert b["best_speedup"] == b["policy_speedup"]
        if not a["best_is_policy"]:
            assert b["search_schedule"] == a["best_schedule"]
    # --family: that family's programs only, each with its seed in the split
    # (the same candidates, measured from the memo: the same result).
    only = search_dataset(SearchConfig(**cfg, family="thin", output=str(tmp_path / "c.json")),
                          progress=False)
    assert only == [both[1]]
    with pytest.raises(ValueError, match="no program"):
        search_dataset(SearchConfig(**cfg, family="lqcd", output=str(tmp_path / "d.json")),
                       progress=False)
    # --kind: programs whose main op is of that kind; --name: name prefixes;
    # each with the other selectors (all must match).
    for picks, want, clash, message in (
            (dict(kind="matmul"), both[0], dict(family="thin", kind="matmul"), "of kinds matmul"),
            (dict(name="xx,re"), both[1], dict(name="re", kind="matmul"), "named re")):
        picked = search_dataset(SearchConfig(**cfg, **picks, output=str(tmp_path / "e.json")),
                                progress=False)
        assert picked == [want]
        with pytest.raises(ValueError, match=message):
            search_dataset(SearchConfig(**cfg, **clash, output=str(tmp_path / "f.json")),
                           progress=False)


def test_a_policy_schedule_that_did_not_measure_gives_no_demonstration(tmp_path):
    """The policy's schedule timed out (speedup 0) and the search found
    nothing faster than the unscheduled program: the entry is kept, marked,
    and fine-tuning does not clone the unscheduled program from it."""
    from mlir_rl.rl.ppo import load_demonstrations
    from mlir_rl.rl.search import demonstration
    failed = demonstration({"name": "a", "best_schedule": "", "best_speedup": 1.0, "tried": 1},
                           "0: TP(4) V", 0.0, 1.0)
    assert failed["no_demonstration"] and failed["best_schedule"] == ""
    slow = demonstration({"name": "b", "best_schedule": "", "best_speedup": 1.0, "tried": 1},
                         "0: TP(4) V", 0.5, 1.0)
    assert "no_demonstration" not in slow and slow["best_schedule"] == ""
    f = tmp_path / "d.json"
    f.write_text(json.dumps([failed, slow]))
    assert [d["name"] for d in load_demonstrations(str(f))] == ["b"]


def test_a_search_win_within_the_margin_leaves_the_policys_demonstration():
    from mlir_rl.rl.search import demonstration
    found = {"name": "p", "best_schedule": "1: T(8) V", "best_speedup": 11.0, "tried": 9}
    d = demonstration(found, "1: TP(4) V", 10.0, 1.2)
    assert (d["best_schedule"], d["best_speedup"], d["best_is_policy"]) == ("1: TP(4) V", 10.0, True)
    assert (d["search_schedule"], d["search_speedup"]) == ("1: T(8) V", 11.0)
    d = demonstration(found, "1: TP(4) V", 9.0, 1.2)
    assert (d["best_schedule"], d["best_is_policy"]) == ("1: T(8) V", False)
    assert "search_schedule" not in d and d["policy_speedup"] == 9.0
    # Margin 1: the faster of the two.
    assert not demonstration(found, "1: TP(4) V", 10.9, 1.0)["best_is_policy"]


def test_random_family_draws_the_generators_training_seeds_only(tmp_path, monkeypatch):
    """The random family: kernels of the random suite's generator from seeds
    0, 1, ...; a seed reserved for evaluation is never drawn (an error when
    more kernels are asked for than the training seeds give)."""
    from mlir_rl.bench import peers
    from mlir_rl.data.dataset import random_kernels
    got = random_kernels(15)
    first, second = peers.random_suite(0), peers.random_suite(1)
    want = [k.name for k in first] + [k.name for k in second if k.name not in
                                       {k.name for k in first}][:3]
    assert [p.name for p in got] == [f"rand_{n}" for n in want]
    assert {p.family for p in got} == {"random"}
    assert got[0].text == first[0].text
    # The kind is an op's kind (per-kind reports), not a piece of the name.
    assert all(p.kind in {o.kind for o in mlir_rl.Module.parse(p.text).ops()} | {"generic"}
               for p in got)
    monkeypatch.setattr(peers, "RESERVED_SEEDS", range(1, 10))
    with pytest.raises(ValueError, match="seed 1 is reserved"):
        random_kernels(13)
    monkeypatch.undo()
    base = make_dataset(tmp_path / "base", seed=3, sequences=6, lqcd=2)
    more = make_dataset(tmp_path / "more", seed=3, sequences=6, lqcd=2, rand=12)
    assert more["random"] == 12
    names = [e["name"] for e in base["programs"]]
    # Split on its own and placed after the other families in each split.
    for part in ("train", "val"):
        before = [e["name"] for e in base["programs"] if e["split"] == part]
        now = [e["name"] for e in more["programs"] if e["split"] == part]
        assert now[:len(before)] == before
        assert all(n.startswith("rand_") for n in now[len(before):])
    assert len(more["programs"]) == len(names) + 12


def test_network_family_takes_decided_ops_of_the_imported_networks(monkeypatch):
    """The networks family: the imported networks' ops as the tuner cuts
    them; lone fills (scheduled by rule) are left out, the same op in two
    networks is one signature, and the kind is the op's."""
    from mlir_rl.data import dataset
    from mlir_rl.fuzz import parity
    m = mlir_rl.Module.parse(K.matmul_bias_relu(64, 96, 48), "mbr")
    units = [(f"model/fake/{op.id}", m.op_unit(op.id)) for op in m.ops()]
    fill = next(i for i, (_, t) in enumerate(units)
                if all(o.kind == "fill" for o in mlir_rl.Module.parse(t).ops()))
    monkeypatch.setattr(parity, "model_ops", lambda limit: units + [("model/other/9", units[-1][1])])
    progs = dataset.network_ops(100)
    assert f"net_fake_{fill}" not in {p.name for p in progs}
    assert len(progs) == len(units)  # the fill out, the copy from "other" in
    assert {p.family for p in progs} == {"networks"}
    assert progs[-1].signature == progs[-2].signature
    assert "matmul" in {p.kind for p in progs}
    assert len(dataset.network_ops(1)) == 1


def test_search_measures_the_heuristics_decisions_when_asked(tmp_path):
    """`mlir-rl search --heuristic`: the heuristic's decisions (the pass's
    decisions=heuristic) are a candidate of every program's search."""
    from mlir_rl.rl.search import SearchConfig, search_dataset
    data = tmp_path / "data"
    data.mkdir()
    (data / "mm.mlir").write_text(K.matmul(64, 128, 64))
    (data / "manifest.json").write_text(json.dumps({"programs": [
        {"name": "mm", "file": "mm.mlir", "split": "train", "family": "single",
         "kind": "matmul"}]}))
    h = mlir_rl.Module.parse(K.matmul(64, 128, 64), "mm")
    h.schedule_with_policy(decisions="heuristic", rules=False)
    res = search_dataset(SearchConfig(dataset=str(data), budget=0, heuristic=True,
                                      memo=str(tmp_path / "m.sqlite"),
                                      output=str(tmp_path / "s.json")), progress=False)
    assert res[0]["tried"] == 1
    assert res[0]["best_schedule"] in (h.decisions, "")
    none = search_dataset(SearchConfig(dataset=str(data), budget=0,
                                       memo=str(tmp_path / "m.sqlite"),
                                       output=str(tmp_path / "t.json")), progress=False)
    assert none[0]["tried"] == 0
