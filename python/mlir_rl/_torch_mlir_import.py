"""Run as a script, never imported by mlir_rl: an exported program (a
``torch.export.save`` file) to linalg-on-tensors MLIR text with torch-mlir's
FX importer.

    python _torch_mlir_import.py PROGRAM.pt2 OUT.mlir
    python _torch_mlir_import.py --serve

torch-mlir carries its own, newer MLIR; it must not meet ``mlir_rl._core``
in one process. On failure the last line of stderr says why, naming the
operation torch-mlir could not lower where it can.

``--serve`` imports one program per request, for the life of the process
that started it (most of a one-shot import is Python importing torch and
torch-mlir): each line on stdin is a JSON object ``{"program": PATH, "out":
PATH}``, answered by one JSON line on stdout, ``{"ok": true}`` or ``{"ok":
false, "failed": WHAT, "detail": TEXT}``. It exits at the end of its input,
or after ``IDLE_SECONDS`` without a request.

Weights become literals from their bytes (see ``_fast_literals``);
``MLIR_RL_SLOW_LITERALS=1`` leaves them to torch-mlir's own path, which the
tests compare against.
"""
from __future__ import annotations

import json
import os
import re
import select
import sys
import warnings
from pathlib import Path

IDLE_SECONDS = 600


_INT_OF_WIDTH = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def _tensor_to_numpy(tensor, npy_dtype):
    """``tensor``'s elements as a new numpy array of ``npy_dtype`` (one
    copy of the bytes), or None where it is not a plain CPU tensor; dtypes
    numpy lacks (bf16, fp8: ml_dtypes') travel as integers of their width."""
    import torch
    if type(tensor) not in (torch.Tensor, torch.nn.Parameter) or tensor.device.type != "cpu" \
            or tensor.is_sparse or tensor.is_quantized or tensor.numel() <= 1:
        return None
    t = tensor.detach().contiguous()
    try:
        return t.numpy().astype(npy_dtype, copy=True)
    except TypeError:  # a dtype numpy lacks: its bytes as integers of its width
        pass
    try:
        width = _INT_OF_WIDTH[t.element_size()]
        return t.view(getattr(torch, width)).numpy().copy().view(npy_dtype)
    except (TypeError, RuntimeError, KeyError, ValueError):
        return None


def _fast_literals(fx_importer) -> None:
    """torch-mlir (20261001) turns every weight into a Python list and back
    (``np.array(tensor.tolist())``: the importer may see fake tensors): 15 s
    of VGG-11's 20 s import, a list of 8 bytes per element plus a float
    object each. The weights of an exported program are real tensors: their
    bytes become the same DenseResourceElementsAttr, named as torch-mlir
    names it, by one copy; the importer's own function then finds the
    attribute made and builds the op. Anything else takes its path."""
    original = fx_importer._make_vtensor_literal_op
    if getattr(original, "_mlir_rl_fast", False):
        return

    def make(tensor, vtensor_type, py_attr_tracker):
        mapping = py_attr_tracker.track(tensor)
        npy_dtype = fx_importer.TORCH_DTYPE_TO_NPY_TYPE.get(tensor.dtype)
        if mapping.is_empty and npy_dtype is not None:
            array = _tensor_to_numpy(tensor, npy_dtype)
            if array is not None:
                shape = "_".join(str(d) for d in tensor.shape)
                mapping.value = fx_importer.DenseResourceElementsAttr.get_from_buffer(
                    array, f"torch_tensor_{shape}_{tensor.dtype}",
                    fx_importer.create_mlir_tensor_type(tensor))
        return original(tensor, vtensor_type, py_attr_tracker)

    make._mlir_rl_fast = True
    fx_importer._make_vtensor_literal_op = make


def convert(program: str, out: str) -> tuple[bool, str, str]:
    """Imports ``program`` into ``out``: (ok, what failed, torch-mlir's
    message)."""
    import torch
    from torch_mlir import fx
    from torch_mlir.extras import fx_importer
    if os.environ.get("MLIR_RL_SLOW_LITERALS") != "1":
        _fast_literals(fx_importer)

    ep = torch.export.load(program)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = fx.export_and_import(ep, output_type="linalg-on-tensors",
                                          func_name="forward")
    except Exception as e:  # torch-mlir raises plain Exceptions with MLIR diagnostics
        text = str(e)
        op = re.search(r"failed to legalize operation '([\w.]+)'", text) or \
            re.search(r"'(torch\.aten\.[\w.]+)'", text) or re.search(r"(aten\.[\w.]+)", text)
        return False, op.group(1) if op else type(e).__name__, text[-3000:]
    tmp = Path(out + ".tmp")
    tmp.write_text(str(module))
    tmp.replace(out)
    return True, "", ""


def main(program: str, out: str) -> int:
    ok, failed, detail = convert(program, out)
    if not ok:
        print(detail, file=sys.stderr)
        print(f"MLIR_RL_IMPORT_FAILED: {failed}", file=sys.stderr)
        return 1
    return 0


def serve() -> int:
    # Answers go to the stdout we were given; anything torch or torch-mlir
    # prints goes to stderr, so that it cannot break a reply.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import torch  # noqa: F401  (imported before the first request: that is the point)
    from torch_mlir import fx  # noqa: F401
    import torch.export.pt2_archive  # noqa: F401  (torch.export.load's imports)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], IDLE_SECONDS)
        if not ready:
            return 0
        line = sys.stdin.readline()
        if not line:
            return 0
        try:
            request = json.loads(line)
            ok, failed, detail = convert(request["program"], request["out"])
        except Exception as e:  # a bad request or an unloadable program
            ok, failed, detail = False, type(e).__name__, str(e)[-3000:]
        replies.write(json.dumps({"ok": ok, "failed": failed, "detail": detail}) + "\n")
        replies.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve())
    sys.exit(main(sys.argv[1], sys.argv[2]))
