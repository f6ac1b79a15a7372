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

import dataclasses
import datetime as _dt
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mlir_rl import _core
from mlir_rl.core import action_kinds, layout, legality
from mlir_rl.rl.policy import Actor, load_actor

# The interface the pass's ONNX Runtime code expects (from C++).
INPUT_NAMES = list(_core.policy_input_names())
OUTPUT_NAMES = list(_core.policy_output_names())
OPSET = 17
LAYOUT_HASH_KEY = _core.policy_layout_hash_key()
META_PREFIX = LAYOUT_HASH_KEY[:LAYOUT_HASH_KEY.index(".") + 1]


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
        "legality_hash": legality()["hash"],
        "legality": legality()["description"],
        "limits": json.dumps({k: lay.raw[k] for k in (
            "max_loops", "num_tile_sizes", "max_rank", "max_operands",
            "history_length", "observation_size", "mask_size")}),
        "tile_candidates": json.dumps(list(lay.tile_candidates)),
        "action_names": json.dumps([k.name for k in action_kinds()]),
        "action_mnemonics": json.dumps([k.mnemonic for k in action_kinds()]),
        "config": json.dumps(checkpoint.get("config", {})),
        # The pass adds this prior's logits to the network's (C++ kPriorKey).
        "prior": checkpoint.get("config", {}).get("prior", ""),
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
    if actor.cfg.prior:
        # The network alone: the pass adds the prior (metadata "prior").
        net = Actor(actor.lay, dataclasses.replace(actor.cfg, prior=""))
        net.load_state_dict(actor.state_dict())
        net.eval()
        actor = net
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


def actor_from_onnx(path: str | Path, accept_layout: str | None = None) -> Actor:
    """The actor of an exported policy, back in PyTorch (to fine-tune a
    shipped policy whose training checkpoint is not at hand).

    Inverts ``export_checkpoint``: float16-stored weights become float32
    again, the input projection's MatMul weight is transposed back, and the
    ONNX LSTM's W/R/B (gates i, o, f, c) become PyTorch's weight_ih/weight_hh/
    biases (gates i, f, g, o). Refuses a model of another feature layout,
    unless its hash is ``accept_layout`` (re-exporting a policy for a layout
    whose meaning changed without changing its sizes; see ``reexport``)."""
    import onnx
    from onnx import numpy_helper

    from mlir_rl.rl.policy import PolicyConfig
    path = Path(path)
    try:
        model = onnx.load(str(path))
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"{path}: not a readable ONNX model ({e})") from e
    meta = _metadata(model)
    lay = layout()
    if meta.get("layout_hash") != lay.hash and meta.get("layout_hash") != accept_layout:
        raise ValueError(f"{path}: exported for feature layout {meta.get('layout_hash')}, "
                         f"this build has {lay.hash}")
    arrays = {}
    for init in model.graph.initializer:
        name = init.name[:-len("_fp16")] if init.name.endswith("_fp16") else init.name
        arrays[name] = numpy_helper.to_array(init).astype(np.float32)
    for node in model.graph.node:  # equal initializers are shared via Identity
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays[node.output[0]] = arrays[node.input[0]]
    actor = Actor(lay, PolicyConfig(**json.loads(meta.get("config", "{}"))))
    state = {}
    for node in model.graph.node:
        if node.op_type == "Gemm" and node.name.endswith("/Gemm"):
            # "/embed/backbone/backbone.2/Gemm" -> "embed.backbone.2" (equal
            # initializers, e.g. zero biases, may be shared between nodes).
            parts = []
            for c in node.name.strip("/").split("/")[:-1]:
                if parts and c.startswith(parts[-1] + "."):
                    c = c[len(parts[-1]) + 1:]
                parts.append(c)
            scope = ".".join(parts)
            state[scope + ".weight"] = arrays[node.input[1]]
            if len(node.input) > 2 and node.input[2]:
                state[scope + ".bias"] = arrays[node.input[2]]
        elif node.op_type == "MatMul" and node.input[1] in arrays:
            state["embed.project.weight"] = arrays[node.input[1]].T
        elif node.op_type == "LSTM":
            w, r, b = (arrays[n][0] for n in node.input[1:4])

            def order(x):  # ONNX gates i, o, f, c -> PyTorch's i, f, g (= c), o
                i, o, f, c = np.split(x, 4)
                return np.concatenate([i, f, c, o])
            state["embed.lstm.weight_ih_l0"] = order(w)
            state["embed.lstm.weight_hh_l0"] = order(r)
            bw, br = np.split(b, 2)
            state["embed.lstm.bias_ih_l0"] = order(bw)
            state["embed.lstm.bias_hh_l0"] = order(br)
    for name in actor.state_dict():
        if name not in state and name in arrays:
            state[name] = arrays[name]
    missing = set(actor.state_dict()) - set(state)
    if missing:
        raise ValueError(f"{path}: no weights for {sorted(missing)}: not an mlir-rl actor export")
    actor.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
    actor.eval()
    return actor


def reexport(source: str | Path, out: str | Path, accept_layout: str,
             note: str) -> dict[str, Any]:
    """Re-export the actor of an ONNX policy made for layout ``accept_layout``
    for this build's layout, weights unchanged. For a layout whose meaning
    changed without changing its sizes (the caller asserts, in ``note``,
    that the policy's decisions are unchanged); the old hash and the note go
    into the provenance."""
    actor = actor_from_onnx(source, accept_layout=accept_layout)
    prov = dict(onnx_provenance(source))
    prov.setdefault("relayouts", []).append(
        {"from_layout": accept_layout, "to_layout": layout().hash, "note": note,
         "date": _dt.date.today().isoformat()})
    import onnx
    model = onnx.load(str(source), load_external_data=False)
    config = json.loads(_metadata(model).get("config", "{}"))
    checkpoint = {"actor": actor.state_dict(), "config": config,
                  "layout_hash": layout().hash, "provenance": prov}
    # The weights already are float16 values: rounding them again is exact.
    return export_checkpoint(checkpoint, out, fp16_weights=True)


def _metadata(model) -> dict[str, str]:
    """An exported model's mlir-rl metadata, without the key prefix."""
    return {p.key[len(META_PREFIX):]: p.value for p in model.metadata_props
            if p.key.startswith(META_PREFIX)}


def onnx_provenance(path: str | Path) -> dict:
    """The training provenance recorded in an exported policy ({} if none)."""
    import onnx
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001
        return {}
    return json.loads(_metadata(model).get("provenance", "{}"))
