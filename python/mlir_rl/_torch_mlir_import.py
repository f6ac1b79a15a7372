"""Run as a script, never imported by mlir_rl: an exported program (a
``torch.export.save`` file) to linalg-on-tensors MLIR text with torch-mlir's
FX importer.

    python _torch_mlir_import.py PROGRAM.pt2 OUT.mlir

torch-mlir carries its own, newer MLIR; it must not meet ``mlir_rl._core``
in one process. On failure the last line of stderr says why, naming the
operation torch-mlir could not lower where it can.
"""
from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path


def main(program: str, out: str) -> int:
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
        print(text[-3000:], file=sys.stderr)
        print(f"MLIR_RL_IMPORT_FAILED: {op.group(1) if op else type(e).__name__}",
              file=sys.stderr)
        return 1
    tmp = Path(out + ".tmp")
    tmp.write_text(str(module))
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
