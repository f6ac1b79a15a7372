"""What ``mlir-rl --version`` prints: the versions a result depends on.

The package, the LLVM/MLIR release the native core was built against, the
ONNX Runtime library the pass loads (asked of the library itself), and the
policy: its version (the date it was trained, as the model card names it)
and the feature-layout hash it was exported for.
"""
from __future__ import annotations

import functools
import json


@functools.lru_cache(maxsize=None)
def policy_info(model: str = "") -> dict:
    """The policy the pass would load for ``model`` ("" = the shipped one):
    ``version``, ``layout_hash``, ``path``, ``ort_version``, ``ort_library``.
    A policy that cannot be loaded is a ValueError naming the file."""
    from mlir_rl import _core
    meta = _core.policy_info(model, "")
    prov = json.loads(meta.get("mlir_rl.provenance", "{}") or "{}")
    version = (meta.get("mlir_rl.version") or prov.get("date")
               or meta.get("mlir_rl.exported", "")[:10] or "unversioned")
    return {"version": version, "layout_hash": meta.get("mlir_rl.layout_hash", ""),
            "path": meta["model_path"], "ort_version": meta["ort_version"],
            "ort_library": meta["ort_library"]}


def versions(model: str = "") -> dict:
    import mlir_rl
    from mlir_rl import _core
    info = policy_info(model)
    return {"mlir-rl": mlir_rl.__version__, "llvm": _core.llvm_version(),
            "onnxruntime": info["ort_version"], "policy": info["version"],
            "layout_hash": info["layout_hash"], "policy_path": info["path"],
            "ort_library": info["ort_library"]}


def version_text(model: str = "") -> str:
    v = versions(model)
    return "\n".join([
        f"mlir-rl {v['mlir-rl']}",
        f"LLVM/MLIR {v['llvm']}",
        f"ONNX Runtime {v['onnxruntime']} ({v['ort_library']})",
        f"policy {v['policy']} ({v['policy_path']})",
        f"feature layout {v['layout_hash']}",
    ])
