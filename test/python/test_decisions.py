"""The pass's decision sources (decisions=policy|heuristic|random): the
heuristic decides as documented (Policy/DecisionSource.h), random decisions
are seeded, and every source's schedules compute what the unscheduled
program computes, through the same front end and rules as the policy."""
import pytest

import mlir_rl
from mlir_rl.data import kernels as K

RULES_OFF = dict(pipeline="none")


def _decided(text: str, **kw) -> str:
    m = mlir_rl.Module.parse(text)
    m.schedule_with_policy(**kw)
    return m.schedule


@pytest.mark.parametrize("text, schedule", [
    # The matmul (op 1): 384 rows split 12 ways; inside, 8 rows x 32 columns
    # of accumulators over 8 steps of the reduction; then V. Its fill (op 0):
    # the same split, 8 rows of 64 inside.
    (K.matmul(384, 768, 768), "1: TP(32,0,0) T(8,32,8) V; 0: TP(32,0) T(8,64) V"),
    # 1x64x56x56: the batch of 1 cannot split, 64 channels into 8 tiles,
    # the innermost 56 stays whole; inside, 8 rows of 56.
    (K.add([1, 64, 56, 56]), "0: TP(0,8,0,0) T(1,1,8,0) V"),
])
def test_the_heuristic_decides_as_documented(text, schedule):
    assert _decided(text, decisions="heuristic", **RULES_OFF) == schedule


def test_the_heuristic_and_random_decisions_load_no_policy(tmp_path):
    missing = str(tmp_path / "missing.onnx")
    for source in ("heuristic", "random"):
        assert _decided(K.matmul(64, 64, 64), model=missing, decisions=source)
    with pytest.raises(mlir_rl.ScheduleError, match="does not exist"):
        _decided(K.matmul(64, 64, 64), model=missing)


def test_random_decisions_are_drawn_from_the_seed():
    text = K.matmul_bias_relu(64, 128, 256)
    draws = [_decided(text, decisions="random", seed=s) for s in range(6)]
    assert draws[2] == _decided(text, decisions="random", seed=2)
    assert len(set(draws)) > 1
    # Greedy sources ignore the seed.
    assert _decided(text, decisions="heuristic", seed=1) == \
        _decided(text, decisions="heuristic", seed=2)


def test_an_unknown_source_is_an_error_that_names_the_sources():
    with pytest.raises(mlir_rl.ScheduleError,
                       match=r"unknown decisions 'learned' \(valid: policy, heuristic, random\)"):
        _decided(K.add([8, 8]), decisions="learned")


@pytest.mark.parametrize("name, text", [
    ("matmul_bias_relu", K.matmul_bias_relu(64, 128, 256)),
    ("conv_nchw", K.conv2d_nchw(1, 8, 18, 18, 16, 3, 3)),
    ("maxpool", K.maxpool_nchw(1, 8, 16, 16, 3, 2)),
    ("softmax", K.softmax_rows(32, 128)),
    ("batch_matmul", K.batch_matmul(4, 32, 64, 16)),
])
@pytest.mark.parametrize("source, seed", [("heuristic", 0), ("random", 0), ("random", 1)])
def test_every_source_keeps_the_outputs(name, text, source, seed):
    reference = mlir_rl.Module.parse(text, name).time(runs=1, warmup=0, threads=2, seed=5)
    m = mlir_rl.Module.parse(text, name)
    m.schedule_with_policy(decisions=source, seed=seed)
    got = m.time(runs=1, warmup=0, threads=2, seed=5)
    ok, err = mlir_rl.outputs_match(got.outputs, reference.outputs)
    assert ok, f"{name} {source}:{seed} {m.schedule}: max abs error {err}"


def test_the_fuzzer_draws_both_baselines():
    from mlir_rl.fuzz.runner import FuzzConfig, specs_for
    from mlir_rl.fuzz.worker import DECISIONS
    sources = [s.source for s in specs_for(FuzzConfig(), 3)]
    assert {"heuristic", "uniform"} <= set(sources)
    assert set(DECISIONS.values()) == {"heuristic", "random"}
    assert not {"heuristic", "uniform"} & {s.source for s in specs_for(
        FuzzConfig(no_baselines=True), 3)}
