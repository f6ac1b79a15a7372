"""Datasets, suites and search samplers."""
import ast
import random
from pathlib import Path

import mlir_rl
from helpers import SMALL
from mlir_rl.data import kernels as K
from mlir_rl.data.dataset import load_dataset, make_dataset
from mlir_rl.rl.search import random_schedule, search, structured_schedule
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
