#!/usr/bin/env python3
"""Two ONNX policies on the same programs, in one run: per program and per
kind, the geomean speedup over unscheduled of each policy's greedy schedule
(2 threads, median of --rounds x --runs timed runs in alternating order,
outputs checked against the unscheduled program; exit 1 if any differs).

  .venv/bin/python scripts/compare_policies.py OLD.onnx NEW.onnx \
      [--programs val|prepared|thin|ops|unseen|shapes|models] [--dataset DIR]
"""
import argparse
import collections
import json
from pathlib import Path

from mlir_rl.bench.timing import time_alternating
from mlir_rl.core import Module, outputs_match, prepare
from mlir_rl.stats import geomean


def _programs(args):
    """(name, split, group, text) of the programs to compare on."""
    from mlir_rl.bench import peers
    if args.programs == "models":
        # Imported with torch-mlir (cached in runs/models), through mlir-rl-prepare.
        return [(k.name, "models", "models", prepare(k.text, k.name))
                for k in peers.models_suite()
                if not args.models or k.name in args.models.split(",")]
    if args.programs in ("ops", "unseen", "shapes"):
        suite = {"ops": peers.operator_suite, "unseen": peers.unseen_suite,
                 "shapes": peers.shapes_suite}[args.programs]()
        return [(k.name, args.programs, args.programs, k.text) for k in suite]
    manifest = json.loads((Path(args.dataset) / "manifest.json").read_text())
    out = []
    for p in manifest["programs"]:
        if args.programs == "val" and p["split"] != "val":
            continue
        if args.programs in ("prepared", "thin") and p["family"] != args.programs:
            continue
        key = p["family"] if p["family"] in ("prepared", "thin") else p["kind"]
        out.append((p["name"], p["split"], key,
                    (Path(args.dataset) / p["file"]).read_text()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--programs", choices=["val", "prepared", "thin", "ops", "unseen", "shapes",
                                            "models"],
                    default="val",
                    help="the validation split; the prepared or thin family (train and "
                         "validation; thin needs a dataset made with --thin); or a bench suite "
                         "(models: imported networks after mlir-rl-prepare)")
    ap.add_argument("--models", default="", help="--programs models: these only (comma-separated)")
    ap.add_argument("--base-runs", type=int, default=0,
                    help="timed runs of the unscheduled program (default: --runs)")
    ap.add_argument("--dataset", default="runs/dataset")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10,
                    help="rounds of --runs per policy, the order alternating (each schedule is "
                         "compiled once: many short rounds cost little and cancel the drift)")
    args = ap.parse_args()
    rows: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    wrong = 0
    for name, split, key, text in _programs(args):
        mod = Module.parse(text, name)
        # Timed like the schedules (compiled, arguments read-only): a program
        # that writes into an argument computes the same on every call.
        base = time_alternating([mod.fresh()], rounds=1, runs=args.base_runs or args.runs,
                                warmup=0 if args.base_runs else 1, threads=args.threads)[0]
        scheduled = []
        for model in (args.old, args.new):
            s = mod.fresh()
            s.schedule_with_policy(model)
            scheduled.append(s)
        timed = time_alternating(scheduled, rounds=args.rounds, runs=args.runs,
                                 threads=args.threads)
        wrong += sum(not outputs_match(t.outputs, base.outputs)[0] for t in timed)
        old, new = (base.median / t.median for t in timed)
        rows[key].append((old, new))
        so, sn = (s.schedule for s in scheduled)
        print(f"{name:40s} {split:6s} old {old:7.2f}x new {new:7.2f}x | "
              + (sn[:100] if so == sn else f"old {so[:60]} | new {sn[:60]}"), flush=True)
    old_all, new_all = [], []
    for kind, v in sorted(rows.items()):
        print(f"{kind:20s} n={len(v):3d} old {geomean([a for a, _ in v]):7.2f}x "
              f"new {geomean([b for _, b in v]):7.2f}x")
        old_all += [a for a, _ in v]
        new_all += [b for _, b in v]
    print(f"{'all':20s} n={len(old_all):3d} old {geomean(old_all):7.2f}x new {geomean(new_all):7.2f}x  "
          f"slower than unscheduled: old {sum(a < 1 for a in old_all)} new {sum(b < 1 for b in new_all)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
