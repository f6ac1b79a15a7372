#!/usr/bin/env python3
"""The policy with and without mlir-rl-pad-to-tiles, on the odd-extent
kernels (``bench --suite odd``) and the imported ViT-B/16 block (prepare
with and without its padding step), every output checked against the
unscheduled program. Usage: .venv/bin/python scripts/bench-padding.py [--runs N]"""
from __future__ import annotations

import argparse
import subprocess

import mlir_rl
from mlir_rl.bench.peers import model_file, odd_suite
from mlir_rl.core import Module
from mlir_rl.paths import opt_path

UNPADDED_PREPARE = ("builtin.module(mlir-rl-fuse-elementwise,canonicalize,cse,mlir-rl-conv-to-matmul,"
                    "mlir-rl-unroll-windows,canonicalize,cse,mlir-rl-untie-inits)")


def _row(name: str, variants: list[tuple[str, str, bool]], runs: int) -> None:
    ref = Module.parse(variants[0][1]).time(runs=1, warmup=0, threads=2, seed=3)
    cells = [name, f"unscheduled {ref.median * 1e3:.1f} ms"]
    for label, text, pad in variants:
        m = Module.parse(text)
        m.schedule_with_policy(pad_to_tiles=pad)
        r = m.time(runs=runs, warmup=1, threads=2, seed=3)
        ok, err = mlir_rl.outputs_match(r.outputs, ref.outputs)
        lo, hi = r.spread
        cells.append(f"{label} {r.median * 1e3:.2f} ms ({lo * 1e3:.2f}-{hi * 1e3:.2f})"
                     + ("" if ok else f" OUTPUTS DIFFER ({err})"))
    print(" | ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    for k in odd_suite():
        _row(k.name, [("unpadded", k.text, False), ("padded", k.text, True)], args.runs)
    text = model_file("vit_block").read_text()
    unpadded = subprocess.run([str(opt_path()), "-p", UNPADDED_PREPARE], input=text,
                              capture_output=True, text=True, check=True).stdout
    _row("vit_block (prepared)", [("unpadded", unpadded, False),
                                  ("padded", mlir_rl.prepare(text), True)], args.runs)


if __name__ == "__main__":
    main()
