"""Export the actor of a checkpoint to ONNX for the pass.

The ONNX model takes ``observation`` (B, observation_size) and ``mask``
(B, mask_size, 1.0 = allowed) and returns ``kind_logits`` (B, A),
``tile_logits`` (B, 3, N, M) and ``pointer_logits`` (B, N), masked. Its
metadata carries the feature-layout hash (the pass refuses a model whose hash
differs), the limits, the action names and the training provenance;
``policy.json`` beside it mirrors the metadata for people.

Weights are rounded to float16 in the PyTorch actor before export and stored
as float16 with a Cast to float32 (folded by ONNX Runtime when it loads the
model): the file is half the size, and the exported model computes exactly
what the rounded PyTorch actor computes.
"""
from __future__ import annotations

import datetime as _dt
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mlir_rl.core import layout
from mlir_rl.policy import Actor, load_actor

INPUT_NAMES = ["observation", "mask"]
OUTPUT_NAMES = ["kind_logits", "tile_logits", "pointer_logits"]
OPSET = 17
META_PREFIX = "mlir_rl."


def round_to_fp16(actor: Actor) -> Actor:
    """Round the actor's weights to float16 precision (kept as float32)."""
    with torch.no_grad():
        for p in actor.parameters():
            p.copy_(p.half().float())
    return actor


def _store_initializers_as_fp16(model) -> None:
    import onnx
    from onnx import helper, numpy_helper
    graph = model.graph
    new_inits, casts = [], []
    for init in graph.initializer:
        arr = numpy_helper.to_array(init)
        if arr.dtype != np.float32 or arr.size < 16:
            new_inits.append(init)
            continue
        half_name = init.name + "_fp16"
        new_inits.append(numpy_helper.from_array(arr.astype(np.float16), half_name))
        casts.append(helper.make_node("Cast", [half_name], [init.name],
                                      to=onnx.TensorProto.FLOAT,
                                      name=init.name + "_cast"))
    del graph.initializer[:]
    graph.initializer.extend(new_inits)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)


def metadata_for(checkpoint: dict) -> dict[str, str]:
    lay = layout()
    prov = checkpoint.get("provenance", {})
    return {
        "layout_hash": lay.hash,
        "layout": lay.raw["description"],
        "limits": json.dumps({k: lay.raw[k] for k in (
            "max_loops", "num_tile_sizes", "max_rank", "max_operands",
            "history_length", "observation_size", "mask_size")}),
        "tile_candidates": json.dumps(list(lay.tile_candidates)),
        "action_names": json.dumps(list(lay.action_names)),
        "action_mnemonics": json.dumps(list(lay.action_mnemonics)),
        "config": json.dumps(checkpoint.get("config", {})),
        "trained": "true" if prov.get("trained") else "false",
        "provenance": json.dumps(prov, sort_keys=True),
        "exported": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "format": "1",
    }


def export_checkpoint(checkpoint: dict | str | Path, out: str | Path,
                      fp16_weights: bool = True) -> dict[str, Any]:
    """Export the actor of ``checkpoint`` to ``out`` (and ``out``.json)."""
    import onnx
    if not isinstance(checkpoint, dict):
        checkpoint = torch.load(checkpoint, map_location="cpu", weights_only=False)
    actor = load_actor(checkpoint)
    if fp16_weights:
        round_to_fp16(actor)
    lay = layout()
    obs = torch.zeros(1, lay.observation_size)
    mask = torch.ones(1, lay.mask_size)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # The tracer's notes on the LSTM and on constant tensors do not apply:
        # the sequence length (consumer, producer) is fixed.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            actor, (obs, mask), str(out), input_names=INPUT_NAMES,
            output_names=OUTPUT_NAMES, opset_version=OPSET, dynamo=False,
            dynamic_axes={n: {0: "batch"} for n in INPUT_NAMES + OUTPUT_NAMES})
    model = onnx.load(str(out))
    if fp16_weights:
        _store_initializers_as_fp16(model)
    meta = metadata_for(checkpoint)
    del model.metadata_props[:]
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = META_PREFIX + k, v
    model.producer_name = "mlir-rl"
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    card = {"file": out.name, "bytes": out.stat().st_size,
            "inputs": INPUT_NAMES, "outputs": OUTPUT_NAMES, "opset": OPSET,
            "fp16_weights": fp16_weights,
            **{k: (json.loads(v) if k in ("limits", "tile_candidates", "action_names",
                                           "action_mnemonics", "config", "provenance")
                   else v) for k, v in meta.items()}}
    out.with_suffix(".json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return card
