"""Test policies, generated (never committed): seeded actors exported to ONNX.

`varied_checkpoint` scales the output heads of a freshly initialised actor so
that its greedy choices depend on the observation and cover many actions (an
untrained actor with the usual small head initialisation picks one action
everywhere); the tests use it to exercise decoding, parity and correctness.
"""
from pathlib import Path

from mlir_rl.rl.export import export_checkpoint
from mlir_rl.rl.policy import new_checkpoint

HEADS = ("kind_head.weight", "tile_head.weight", "pointer_head.weight")


def varied_checkpoint(seed: int = 1, scale: float = 1000.0) -> dict:
    ck = new_checkpoint(seed=seed)
    for k in HEADS:
        ck["actor"][k] = ck["actor"][k] * scale
    ck["provenance"]["note"] = f"test fixture: heads scaled x{scale}"
    return ck


def export_varied(path: Path, seed: int = 1) -> Path:
    export_checkpoint(varied_checkpoint(seed), path)
    return path
