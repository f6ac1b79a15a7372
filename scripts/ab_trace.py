#!/usr/bin/env python3
"""The pass's schedule against an edited copy of it, in one process (a
developer's aid: is a rule's choice worth changing?).

  .venv/bin/python scripts/ab_trace.py "T(0,0,0,4) V" "T(0,0,0,8) V" \\
      runs/models/bert_layer.mlir linear:128x768x3072

Each program (an MLIR file, or `linear:MxNxK`: nn.Linear as torch-mlir
imports it, seeded constant weights) is scheduled by the pass with the
shipped policy (`--prepare`, as imported models run); the trace it printed
gets every OLD replaced by NEW and is replayed on the front end's module.
Both are compiled and timed in alternating rounds in one process
(`time_compiled`); the edited program's outputs are checked against the
pass's. Prints the medians and NEW/OLD per program.
"""
import argparse

import numpy as np

from mlir_rl.bench.timing import time_compiled
from mlir_rl.core import Module
from mlir_rl.data import kernels
from mlir_rl.passes import run_pass


def program(spec: str) -> str:
    if spec.startswith("linear:"):
        m, n, k = map(int, spec[len("linear:"):].split("x"))
        return kernels.linear_torch(m, n, k, seed=1)
    with open(spec) as f:
        return f.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old", help="text in the pass's trace")
    ap.add_argument("new", help="its replacement")
    ap.add_argument("programs", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    for spec in a.programs:
        text = program(spec)
        passed = run_pass(text, prepare=True)
        if a.old not in passed.schedule:
            print(f"{spec}: the trace holds no {a.old!r}")
            continue
        edited = passed.schedule.replace(a.old, a.new)
        front = run_pass(text, prepare=True, extra=["policy=false"]).ir
        other = run_pass(front, schedule=edited)
        fns = [Module.parse(ir).compile(a.threads) for ir in (passed.ir, other.ir)]
        base, alt = time_compiled(fns, a.rounds, a.runs)
        equal = all(np.allclose(x, y, rtol=1e-4, atol=1e-5)
                    for x, y in zip(base.outputs, alt.outputs))
        mb, ma = np.median(base.seconds), np.median(alt.seconds)
        print(f"{spec}: {passed.schedule.count(a.old)} replaced; pass {mb * 1e3:.3f} ms "
              f"({min(base.seconds) * 1e3:.3f}-{max(base.seconds) * 1e3:.3f}), edited "
              f"{ma * 1e3:.3f} ms ({min(alt.seconds) * 1e3:.3f}-{max(alt.seconds) * 1e3:.3f}), "
              f"edited/pass {ma / mb:.3f}, outputs {'equal' if equal else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
