"""The Gymnasium environment: C++ steps, one measurement per reward."""
import math

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mlir_rl
from helpers import SMALL, indices
from mlir_rl.data import kernels as K
from mlir_rl.measure.measurer import MeasureConfig
from mlir_rl.rl.env import EnvConfig, LinalgScheduleEnv

A = mlir_rl.ActionKind
BIG = [("mm", K.matmul(128, 256, 128))]


@pytest.fixture
def env(tmp_path):
    e = LinalgScheduleEnv(SMALL, EnvConfig(measure=MeasureConfig(memo_path=str(tmp_path / "m.sqlite"))))
    yield e
    e.close()


def test_check_env(env):
    check_env(env.unwrapped, skip_render_check=True)


def test_registered():
    import gymnasium as gym
    assert "mlir_rl/LinalgSchedule-v0" in gym.registry
    assert gym.spec("mlir_rl/LinalgSchedule-v0").entry_point == "mlir_rl.rl.env:LinalgScheduleEnv"


def test_episode_reward_is_log_speedup_from_one_measurement(tmp_path):
    env = LinalgScheduleEnv(BIG, EnvConfig(measure=MeasureConfig(memo_path=str(tmp_path / "m.sqlite"))))
    try:
        env.reset(seed=0, options={"index": 0})
        for a in (indices(A.TILED_PARALLELIZATION, (16, 32, 0)), indices(A.TILING, (8, 32, 1)),
                  indices(A.VECTORIZATION)):
            _, r, term, trunc, info = env.step(a)
            assert r == 0.0 and not term and not info["fallback"]
        _, r, term, trunc, info = env.step(indices(A.NO_TRANSFORMATION))  # the fill
        assert term and not trunc
        assert info["schedule"] == "1: TP(16,32,0) T(8,32,1) V; 0: NT"
        assert info["status"] == "ok" and info["speedup"] > 1
        assert r == pytest.approx(math.log(info["speedup"]), rel=1e-6)
        # One measurement of the baseline and one of the schedule: the reward
        # and the reported speedup come from the same one.
        assert env.measurer.measurements == 2
    finally:
        env.close()


def test_steps_execute_what_the_decoder_makes_of_the_indices(env):
    obs, _ = env.reset(seed=0, options={"index": 0})
    assert obs["phase"] == int(mlir_rl.DecisionPhase.TRANSFORMATION)
    # TP on the reduction loop is not legal: the step falls back as decoding
    # does (that loop's first allowed size, 0), and says so.
    _, _, _, _, info = env.step(indices(A.TILED_PARALLELIZATION, (8, 8, 8)))
    assert info["fallback"] and info["step"] == "TP(8,8,0)"
    assert list(info["executed"]) == list(indices(A.TILED_PARALLELIZATION, (8, 8, 0)))
    # A TP with every size 0 is skipped for the next allowed kind (by index).
    _, _, _, _, info = env.step(indices(A.TILED_FUSION, (0, 0, 0)))
    assert info["fallback"] and info["step"] == "T(0,0,0)"


def test_interchange_by_pointers(env):
    env.reset(seed=0, options={"index": 1})
    obs, _, _, _, _ = env.step(indices(A.INTERCHANGE, ptr=1))
    assert obs["phase"] == int(mlir_rl.DecisionPhase.INTERCHANGE_POINTER)
    # Only the pointer is read now.
    _, _, term, _, info = env.step(indices(A.TILING, ptr=0))
    assert not term and env.module.decisions == "0: I(1,0)" and not info["fallback"]
    _, _, term, _, _ = env.step(indices(A.NO_TRANSFORMATION))
    assert term and env.module.decisions == "0: I(1,0) NT"


def test_decode_gives_legal_actions(env):
    obs, _ = env.reset(seed=0, options={"index": 0})
    lay = mlir_rl.layout()
    rng = np.random.default_rng(0)
    for _ in range(20):
        logits = (rng.normal(size=lay.raw["kind_mask_size"]),
                  rng.normal(size=lay.raw["tile_mask_size"]),
                  rng.normal(size=lay.raw["pointer_mask_size"]))
        a = env.decode(logits, sample=True, seed=int(rng.integers(1 << 30)))
        assert env.action_space.contains(a)
        op = env.module.next_op()
        outcome = env.module.step(op, a)
        assert not outcome.fallback
        if env.module.next_op() is None:
            break
