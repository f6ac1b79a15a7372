#!/usr/bin/env python3
"""Two ONNX policies on the same programs, in one run: per program and per
kind, the geomean speedup over unscheduled of each policy's greedy schedule
(2 threads, median of --runs timed runs, outputs checked against the
unscheduled program).

  .venv/bin/python scripts/compare_policies.py OLD.onnx NEW.onnx [--programs val|prepared]
"""
import argparse
import collections
import json
import math
from pathlib import Path

from mlir_rl.core import Module, outputs_match


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--programs", choices=["val", "prepared"], default="val",
                    help="the validation split, or the prepared family (train and validation)")
    ap.add_argument("--dataset", default="runs/dataset")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    manifest = json.loads((Path(args.dataset) / "manifest.json").read_text())
    rows: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    wrong = 0
    for p in manifest["programs"]:
        if args.programs == "val" and p["split"] != "val":
            continue
        if args.programs == "prepared" and p["family"] != "prepared":
            continue
        mod = Module.load(str(Path(args.dataset) / p["file"]))
        base = mod.fresh().time(runs=args.runs, warmup=1, threads=args.threads)
        result = []
        for model in (args.old, args.new):
            s = mod.fresh()
            s.schedule_with_policy(model)
            t = s.time(runs=args.runs, warmup=1, threads=args.threads)
            ok, _ = outputs_match(t.outputs, base.outputs)
            wrong += not ok
            result.append((base.median / t.median, ok, s.schedule))
        key = p["family"] if p["family"] == "prepared" else p["kind"]
        rows[key].append((result[0][0], result[1][0]))
        print(f"{p['name']:40s} {p['split']:5s} old {result[0][0]:7.2f}x new {result[1][0]:7.2f}x "
              f"ok={result[0][1] and result[1][1]} | {result[1][2][:100]}", flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    old_all, new_all = [], []
    for kind, v in sorted(rows.items()):
        print(f"{kind:20s} n={len(v):3d} old {geo([a for a, _ in v]):7.2f}x new {geo([b for _, b in v]):7.2f}x")
        old_all += [a for a, _ in v]
        new_all += [b for _, b in v]
    print(f"{'all':20s} n={len(old_all):3d} old {geo(old_all):7.2f}x new {geo(new_all):7.2f}x  "
          f"slower than unscheduled: old {sum(a < 1 for a in old_all)} new {sum(b < 1 for b in new_all)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
