"""The Python features and masks are the pass's: compare with dump-features."""
import re
import subprocess

import numpy as np
import pytest

import mlir_rl
from cases import KERNELS

OBS = re.compile(r"^// mlir-rl observation op=(\d+) size=(\d+):(.*)$")
MASK = re.compile(r"^// mlir-rl mask op=(\d+) size=(\d+):(.*)$")


def dump(tool_args, text):
    out = subprocess.run(tool_args, input=text, capture_output=True, text=True,
                         check=True).stdout
    obs, masks = {}, {}
    for line in out.splitlines():
        if m := OBS.match(line):
            vec = np.zeros(int(m[2]), dtype=np.float32)
            for item in m[3].split():
                i, v = item.split(":")
                vec[int(i)] = float(v)
            obs[int(m[1])] = vec
        elif m := MASK.match(line):
            vec = np.zeros(int(m[2]), dtype=np.uint8)
            for i in m[3].split():
                vec[int(i)] = 1
            masks[int(m[1])] = vec
    return obs, masks


@pytest.mark.parametrize("name", ["matmul", "conv2d_nchw", "maxpool_nhwc", "chain", "relu"])
def test_python_features_equal_dump_features(name, mlir_opt, plugin):
    text = KERNELS[name][0]
    obs, masks = dump([mlir_opt, f"--load-pass-plugin={plugin}", "-p",
                       "builtin.module(linalg-rl-schedule{dump-features policy=false})",
                       "-o", "/dev/null", "-"], text)
    m = mlir_rl.Module.parse(text)
    assert sorted(obs) == sorted(m.traversal_order())
    for op_id, vec in obs.items():
        np.testing.assert_allclose(m.observation(op_id), vec, rtol=1e-6)
        np.testing.assert_array_equal(m.masks(op_id).flat(), masks[op_id])


def test_layout_sizes_are_consistent():
    lay = mlir_rl.layout()
    text, op, _ = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    assert m.observation(op).shape == (lay.observation_size,)
    assert m.op_features(op).shape == (lay.op_feature_size,)
    assert m.masks(op).flat().shape == (lay.mask_size,)
    assert lay.observation_size == 2 * lay.op_feature_size
    assert len(lay.tile_candidates) == lay.num_tile_sizes
    assert re.fullmatch(r"[0-9a-f]{16}", lay.hash)


def test_features_track_the_schedule():
    lay = mlir_rl.layout()
    raw = lay.raw
    text, op, _ = KERNELS["matmul"]
    m = mlir_rl.Module.parse(text)
    before = m.op_features(op)
    m.apply(op, "TP(16,32,0)")
    after = m.op_features(op)
    n, mm = lay.max_loops, lay.num_tile_sizes
    hist = after[raw["tile_history_offset"]:raw["tile_history_offset"] + n * mm].reshape(n, mm)
    c = lay.tile_candidates
    assert hist[0, c.index(16)] == 1 and hist[1, c.index(32)] == 1 and hist[2, 0] == 1
    assert after[raw["action_history_offset"] + 1] == 1  # TP at step 0
    # The tiled op's bounds are the tile sizes now.
    b = raw["loop_bounds_offset"]
    np.testing.assert_allclose(after[b:b + 3], np.log2(1 + np.array([16, 32, 96])), rtol=1e-6)
    assert not np.array_equal(before, after)
