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


def convert(program: str, out: str) -> tuple[bool, str, str]:
    """Imports ``program`` into ``out``: (ok, what failed, torch-mlir's
    message)."""
    import torch
    from torch_mlir import fx

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
