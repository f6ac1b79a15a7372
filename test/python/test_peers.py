"""The peer benchmark harness, on its small smoke suite."""
import pytest

from mlir_rl.bench import peers, report

pytestmark = pytest.mark.slow  # peers (PyTorch, numpy) and PyTorch models


def test_smoke_suite_report(tmp_path):
    rep = peers.run_suite(("torch", "numpy"), runs=2, warmup=1, progress=False,
                          suite_name="smoke", min_time=0.002)
    names = [k["name"] for k in rep["kernels"]]
    assert names == [k.name for k in peers.smoke_suite()]
    assert rep["settings"]["min_time"] == 0.002 and rep["suite"] == "smoke"
    assert rep["contenders"] == ["unscheduled", "mlir-rl", "torch", "numpy"]
    for k in rep["kernels"]:
        # Microsecond kernels: more than 2 calls to fill 2 ms, at most 200.
        assert 2 < k["runs"] <= 200, k
        f = k["figures"]
        # The unscheduled program and mlir-rl are checked against PyTorch.
        assert f["unscheduled"]["status"] == "ok", f["unscheduled"]
        assert f["mlir-rl"]["status"] == "ok", f["mlir-rl"]
        assert f["torch"]["status"] == "ok"
        assert f["numpy"]["status"] in ("ok", "n/a")
        assert f["unscheduled"]["min_ms"] <= f["unscheduled"]["median_ms"] <= f["unscheduled"]["max_ms"]
    out = peers.save(rep, tmp_path)
    doc = report.load(out / "bench.json")  # the result schema, validated
    assert doc["threads"] == 2 and doc["host"]["vector_isa"]
    assert "vregs=" in doc["host"]["legality"]  # the register file V tiled for
    md = (out / "bench.md").read_text()
    assert md.startswith("| kernel |") and "mlir-rl vs best peer" in md
    assert (out / "bench.png").stat().st_size > 1000


class _FakeCompiled:
    """A compiled function whose calls take ``seconds`` each."""

    signature = {"outputs": [{"shape": [1], "dtype": "f32"}]}

    def __init__(self, seconds):
        self.seconds = seconds

    def random_inputs(self, seed):
        return []

    def time(self, inputs, outputs, runs, warmup):
        return [self.seconds] * runs


def test_runs_for_min_time_fills_the_fastest_contender():
    fns = [_FakeCompiled(1e-3), _FakeCompiled(1e-4)]
    assert peers.runs_for_min_time(fns, 10, 0.0) == 10     # off
    assert peers.runs_for_min_time(fns, 10, 0.0005) == 10  # 10 runs already fill it
    assert peers.runs_for_min_time(fns, 10, 0.05) == 500   # 0.05 s / 0.1 ms
    assert peers.runs_for_min_time(fns, 10, 10.0) == 1000  # at most 100x
    assert peers.runs_for_min_time([_FakeCompiled(1.0)], 5, 0.2) == 5


def test_failing_peer_is_reported(tmp_path):
    rep = peers.run_suite(("nonexistent",), runs=1, warmup=0, progress=False, suite_name="smoke")
    f = rep["kernels"][0]["figures"]["nonexistent"]
    assert f["status"] == "failed" and "unknown comparator" in f["detail"]


def test_self_written_models_build():
    import torch

    from mlir_rl.data import torch_models
    for name in torch_models.MODELS:
        net = torch_models.build(name)
        with torch.no_grad():
            xs = torch_models.example_inputs(name)
            out = net(*xs)
        expected = {"resnet18": (1, 1000), "mobilenet_v2": (1, 1000), "vgg11": (1, 1000),
                    "efficientnet_b0": (1, 1000), "convnext_stage": (1, 192, 28, 28),
                    "unet_up": (1, 64, 64, 64), "wav2vec2_encoder": (1, 512, 49),
                    "gru_cell": (16, 1024)}.get(name, tuple(xs[0].shape))
        assert out.shape == expected, name
        assert torch.isfinite(out).all(), name
        # Seeded: a second build has the same weights.
        again = torch_models.build(name)
        assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(),
                                                     again.state_dict().values()))


def _assert_peer_code_computes_the_kernels(kernels, skip=()):
    """Each kernel's PyTorch code gives its output (shape and values) on the
    kernel's own seeded inputs; names starting with ``skip`` are left out."""
    import numpy as np
    import torch

    from mlir_rl.core import Module
    for k in kernels:
        if k.name.startswith(skip):
            continue
        result = Module.parse(k.text, k.name).time(runs=1, warmup=0, threads=1)
        got = k.torch_fn(*[torch.from_numpy(np.ascontiguousarray(a)) for a in result.inputs])
        assert tuple(got.shape) == result.outputs[0].shape, k.name
        np.testing.assert_allclose(got.numpy(), result.outputs[0], rtol=1e-3, atol=1e-3,
                                   err_msg=k.name)


def test_unseen_suite_has_peer_code_for_every_unseen_kernel():
    """`bench --suite unseen` times the very kernels of `check-policy`, and each
    peer's code computes what the kernel computes (shapes agree)."""
    from mlir_rl.data.suites import unseen_suite
    kernels = peers.unseen_suite()
    assert [k.name for k in kernels] == list(unseen_suite())
    # Large, or timed by the suite itself.
    _assert_peer_code_computes_the_kernels(kernels, skip=("bert_ffn", "lqcd"))


def test_shapes_suite_peer_code_agrees_and_its_shapes_are_not_trained_on():
    """`bench --suite shapes`: each peer computes what the kernel computes,
    and no matmul of the training data is as thin as its matmuls."""
    from mlir_rl.data.dataset import MATMUL_SHAPES
    assert min(m for m, _, _ in MATMUL_SHAPES) >= 49
    assert min(n for _, n, _ in MATMUL_SHAPES) >= 256
    # 100 MB of weights; timed by the suite itself.
    _assert_peer_code_computes_the_kernels(peers.shapes_suite(), skip=("vgg_classifier",))


def test_fresh_suite_peer_code_agrees_and_its_shapes_are_in_no_other_suite():
    """`bench --suite fresh`: each peer computes what the kernel computes, and
    no kernel of it is in the unseen, operator or shapes suite."""
    others = {k.text for suite in (peers.unseen_suite, peers.operator_suite, peers.shapes_suite)
              for k in suite()}
    fresh = peers.fresh_suite()
    assert not others & {k.text for k in fresh}
    # Timed by the suite itself (seconds unscheduled).
    _assert_peer_code_computes_the_kernels(
        fresh, skip=("matmul_", "conv_nchw_s2", "conv_nhwc_512", "lqcd"))


def test_random_suite_is_a_fresh_draw_per_seed_with_peer_code_that_agrees():
    """`bench --suite random --suite-seed S`: the same kernels for a seed,
    others for another; every kernel parses; each peer computes what the
    kernel computes (on small draws of the same generator)."""
    from mlir_rl.core import Module
    a, again, b = peers.random_suite(1000), peers.random_suite(1000), peers.random_suite(1001)
    assert [k.text for k in a] == [k.text for k in again]
    assert {k.text for k in a} != {k.text for k in b}
    assert len({k.name for k in a}) == len(a) == 12
    for k in a + b:
        Module.parse(k.text, k.name)
    assert [k.name for k in peers.get_suite("random:1001")] == [k.name for k in b]
    with pytest.raises(ValueError, match="integer"):
        peers.get_suite("random:x")
    assert 1000 in peers.RESERVED_SEEDS and 999 not in peers.RESERVED_SEEDS
    kinds = set()
    for seed in range(3):
        small = peers.random_suite(seed, count=8, max_flops=3e7)
        kinds |= {k.name.split("_")[0] for k in small}
        _assert_peer_code_computes_the_kernels(small)
    assert len(kinds) >= 6, kinds


def test_a_contender_with_anothers_ir_is_that_program():
    """search=1 measures the policy's schedule alone: the same IR as mlir-rl,
    timed once and reported as mlir-rl's figure (the same code timed apart
    differed by 25% on a small convolution)."""
    rep = peers.run_suite((), runs=2, warmup=1, progress=False, suite_name="smoke",
                          search=1, decisions=("heuristic",),
                          only=(peers.smoke_suite()[0].name,))
    f = rep["kernels"][0]["figures"]
    assert f["mlir-rl-search"]["detail"].startswith("the IR of mlir-rl;"), f["mlir-rl-search"]
    assert f["mlir-rl-search"]["median_ms"] == f["mlir-rl"]["median_ms"]
    assert f["mlir-rl-search"]["status"] == f["mlir-rl"]["status"] == "ok"
    assert not f["mlir-rl-heuristic"]["detail"].startswith("the IR of")
