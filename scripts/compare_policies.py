#!/usr/bin/env python3
"""Two ONNX policies on the same programs, in one run: per program, per
kind and per suite, the geomean speedup over unscheduled of each policy's
greedy schedule through the pass's pipeline (front end, decisions, rules;
2 threads, median of --rounds x --runs timed runs in alternating order,
outputs checked against the unscheduled program; exit 1 if any differs).
Where both policies give the same code, it is one program, timed once.

  .venv/bin/python scripts/compare_policies.py OLD.onnx NEW.onnx \
      [--programs SUITE[,SUITE...]] [--dataset DIR] [--gate]

SUITE: val, prepared, thin (of --dataset), a bench suite (ops, unseen,
fresh, shapes, models, random:S), or ``gate``: the suites a retrained policy
must not lose on before it ships (ops, unseen, fresh, models, random:1000,
random:1001; docs/learning.md). With --gate, exit 2 unless the new policy's
geomean is at least the old one's on every suite.
"""
import argparse
import collections
import json
import re
from pathlib import Path

from mlir_rl.bench.timing import time_alternating
from mlir_rl.core import Module, outputs_match
from mlir_rl.stats import geomean


GATE = ("ops", "unseen", "fresh", "models", "random:1000", "random:1001")
BENCH = ("ops", "unseen", "fresh", "shapes", "models", "odd", "lqcd", "smoke")
DATASET = ("val", "prepared", "thin")


def suites(spec: str) -> list[str]:
    """The suites named by ``--programs`` (``gate`` expands to GATE)."""
    out: list[str] = []
    for s in (x.strip() for x in spec.split(",") if x.strip()):
        names = GATE if s == "gate" else (s,)
        for n in names:
            if n not in BENCH + DATASET and not re.fullmatch(r"random:\d+", n):
                raise SystemExit(f"--programs: no suite {n!r} (valid: {', '.join(BENCH + DATASET)}, "
                                 "random:S, gate)")
            if n not in out:
                out.append(n)
    return out


def _programs(suite: str, args):
    """(name, split, group, text) of suite ``suite``'s programs: bench
    suites as the bench gives them to the pass (the models imported with
    torch-mlir, cached in runs/models; the pass's own front end prepares
    them)."""
    from mlir_rl.bench import peers
    if suite in BENCH or suite.startswith("random:"):
        kernels = peers.get_suite(suite)
        if suite == "models" and args.models:
            kernels = [k for k in kernels if k.name in args.models.split(",")]
        return [(k.name, suite, suite, k.text) for k in kernels]
    manifest = json.loads((Path(args.dataset) / "manifest.json").read_text())
    out = []
    for p in manifest["programs"]:
        if suite == "val" and p["split"] != "val":
            continue
        if suite in ("prepared", "thin") and p["family"] != suite:
            continue
        key = p["family"] if p["family"] in ("prepared", "thin") else p["kind"]
        out.append((p["name"], p["split"], key,
                    (Path(args.dataset) / p["file"]).read_text()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--programs", default="val",
                    help="comma-separated suites: val (the validation split), prepared or thin "
                         "(that family of --dataset, train and validation; thin needs a dataset "
                         "made with --thin), a bench suite (ops, unseen, fresh, shapes, models, "
                         "odd, lqcd, smoke, random:S), or gate (" + ", ".join(GATE) + ")")
    ap.add_argument("--gate", action="store_true",
                    help="exit 2 unless NEW's geomean is at least OLD's on every suite")
    ap.add_argument("--models", default="", help="models suite: these only (comma-separated)")
    ap.add_argument("--base-runs", type=int, default=0,
                    help="timed runs of the unscheduled program (default: --runs)")
    ap.add_argument("--dataset", default="runs/dataset")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10,
                    help="rounds of --runs per policy, the order alternating (each schedule is "
                         "compiled once: many short rounds cost little and cancel the drift)")
    ap.add_argument("--json", default="", help="also write the rows and the verdict here")
    args = ap.parse_args()
    wrong = 0
    per_suite: dict[str, list[tuple[float, float]]] = {}
    records = []
    for suite in suites(args.programs):
        rows: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
        print(f"== {suite}", flush=True)
        for name, split, key, text in _programs(suite, args):
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
            # Both policies' code identical: one program, timed once (as the
            # bench does). Timed apart, the same code differed by 22% on a
            # depthwise convolution (gate of 2026-11-29), noise a verdict
            # would count as a policy's win or loss.
            same = scheduled[0].ir() == scheduled[1].ir()
            timed = time_alternating(scheduled[:1] if same else scheduled, rounds=args.rounds,
                                     runs=args.runs, threads=args.threads)
            if same:
                timed *= 2
            bad = [not outputs_match(t.outputs, base.outputs)[0] for t in timed]
            wrong += sum(bad)
            old, new = (base.median / t.median for t in timed)
            rows[key].append((old, new))
            so, sn = (s.schedule for s in scheduled)
            records.append({"suite": suite, "name": name, "old": old, "new": new,
                            "old_schedule": so, "new_schedule": sn, "outputs_differ": any(bad)})
            print(f"{name:40s} {split:6s} old {old:7.2f}x new {new:7.2f}x | "
                  + (sn[:100] if so == sn else f"old {so[:60]} | new {sn[:60]}"), flush=True)
        flat = []
        for kind, v in sorted(rows.items()):
            if len(rows) > 1:
                print(f"  {kind:20s} n={len(v):3d} old {geomean([a for a, _ in v]):7.2f}x "
                      f"new {geomean([b for _, b in v]):7.2f}x")
            flat += v
        per_suite[suite] = flat
    verdict = {}
    print("\nsuite                 n      old      new  new/old")
    for suite, v in per_suite.items():
        old, new = geomean([a for a, _ in v]), geomean([b for _, b in v])
        verdict[suite] = {"n": len(v), "old": old, "new": new, "ratio": new / old,
                          "slower_than_unscheduled": {"old": sum(a < 1 for a, _ in v),
                                                      "new": sum(b < 1 for _, b in v)}}
        print(f"{suite:18s} {len(v):4d} {old:7.2f}x {new:7.2f}x  {new / old:6.3f}"
              f"{'' if new >= old else '  NEW LOSES'}")
    wins = all(s["new"] >= s["old"] for s in verdict.values())
    print(f"new >= old on every suite: {'yes' if wins else 'no'}; outputs differing: {wrong}")
    if args.json:
        Path(args.json).write_text(json.dumps({"old": args.old, "new": args.new,
                                               "programs": args.programs, "runs": args.runs,
                                               "rounds": args.rounds, "threads": args.threads,
                                               "suites": verdict, "new_wins_everywhere": wins,
                                               "rows": records}, indent=2) + "\n")
    if wrong:
        return 1
    return 2 if args.gate and not wins else 0


if __name__ == "__main__":
    raise SystemExit(main())
