"""Small shared helpers of the Python tests."""
import json

import numpy as np

import mlir_rl
from mlir_rl.data import kernels as K
from mlir_rl.data.dataset import make_dataset

SMALL = [("mm", K.matmul(32, 64, 48)), ("relu", K.relu([16, 64]))]


def indices(kind: mlir_rl.ActionKind, sizes=(), ptr=0) -> np.ndarray:
    """A step's indices [kind, tile candidate per loop, pointer], from sizes."""
    lay = mlir_rl.layout()
    a = np.zeros(lay.step_size, dtype=np.int64)
    a[0] = int(kind)
    for i, s in enumerate(sizes):
        a[1 + i] = lay.tile_candidates.index(s)
    a[-1] = ptr
    return a


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
