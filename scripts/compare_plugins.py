#!/usr/bin/env python3
"""Two builds of the pass plugin on the same kernels, in one run: how a
change to the front end or the rules (not the policy: compare_policies.py)
moves each kernel. Each kernel goes through stock mlir-opt-22 with the old
and the new libMlirRL.so (the shipped policy, the pass's defaults); where
the two IRs differ, both are compiled by this build's JIT and timed in
alternating rounds in this process (2 threads), outputs checked against
each other (exit 1 if any differs). Kernels from separate processes moved
by up to 1.7x with identical code; in one process the same comparison holds
to a few percent.

  # the old plugin: build the old commit, copy its libMlirRL.so aside
  cp .venv/lib/python3.11/site-packages/mlir_rl/libMlirRL.so /tmp/old.so
  # ... change, rebuild (scripts/setup.sh), then:
  .venv/bin/python scripts/compare_plugins.py /tmp/old.so \\
      .venv/lib/python3.11/site-packages/mlir_rl/libMlirRL.so \\
      --programs ops,unseen,random:1000,models [--files a.mlir,b.mlir] [--json OUT]
"""
import argparse
import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import mlir_rl.passes as passes
from mlir_rl.bench import peers
from mlir_rl.bench.timing import time_compiled
from mlir_rl.core import Module, ScheduleError, outputs_match


def scheduled(text: str, plugin: str, name: str):
    """The pass's result for ``text`` with the plugin at ``plugin``."""
    passes.plugin_path = lambda: Path(plugin)
    return passes.run_pass(text, name=name)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the old libMlirRL.so")
    p.add_argument("new", help="the new libMlirRL.so")
    p.add_argument("--programs", default="ops,unseen",
                   help="comma-separated bench suites (ops, unseen, fresh, models, random:S, ...)")
    p.add_argument("--files", default="", help="comma-separated MLIR files, as one more suite")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", default="", help="write kernel -> new/old speedup here")
    a = p.parse_args()
    groups = [(s, peers.get_suite(s)) for s in a.programs.split(",") if s]
    if a.files:
        groups.append(("files", [SimpleNamespace(name=Path(f).stem, text=Path(f).read_text())
                                 for f in a.files.split(",")]))
    ratios, differ = {}, False
    for suite, kernels in groups:
        mine = []
        for k in kernels:
            try:
                old, new = scheduled(k.text, a.old, k.name), scheduled(k.text, a.new, k.name)
            except ScheduleError as e:
                print(f"{suite} {k.name}: the pass failed: {str(e)[-300:]}", flush=True)
                differ = True
                continue
            if old.ir == new.ir:
                ratio = 1.0
                print(f"{suite} {k.name}: the same IR", flush=True)
            else:
                fns = [Module.parse(r.ir, k.name).compile(2) for r in (old, new)]
                t_old, t_new = time_compiled(fns, rounds=a.rounds, runs=a.runs, warmup=1)
                ok, err = outputs_match(t_new.outputs, t_old.outputs)
                differ |= not ok
                ratio = t_old.median / t_new.median
                print(f"{suite} {k.name}: old {t_old.median * 1e3:.3f} ms, new "
                      f"{t_new.median * 1e3:.3f} ms: new {ratio:.3f}x"
                      + ("" if ok else f"; OUTPUTS DIFFER ({err})"), flush=True)
            ratios[f"{suite}/{k.name}"] = ratio
            mine.append(ratio)
        if mine:
            print(f"== {suite}: new over old, geomean {statistics.geometric_mean(mine):.3f}, "
                  f"lowest {min(mine):.3f} ({len(mine)} kernels)", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(ratios, indent=1) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
