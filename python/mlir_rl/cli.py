"""The ``mlir-rl`` command line.

  mlir-rl ops FILE                       list the linalg ops and their ids
  mlir-rl optimize FILE --schedule S     apply a schedule, print the IR
  mlir-rl bench FILE [--schedule S]      time baseline vs scheduled (default: by the policy)
  mlir-rl bench --suite ops --compare torch,inductor,iree,numpy   against peers
  mlir-rl init-policy -o CKPT            a freshly initialised actor-critic
  mlir-rl export CKPT -o models/policy.onnx   the actor, for the pass
  mlir-rl overhead --suite all           policy inference / transformation cost per op
  mlir-rl dataset -o runs/dataset        seeded training/validation programs
  mlir-rl train configs/ppo.toml         PPO; writes runs/ppo/{checkpoint.pt,policy.onnx,tb/}
  mlir-rl evaluate --model M             per-kind geomean speedups vs random and best-of-N search
  mlir-rl plugin-path | opt-path         where the plugin / driver are
  mlir-rl layout                         the feature layout (JSON)
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

SCHEDULE_HELP = (
    "explicit schedule: '<op id>: <actions>; ...' with actions T(sizes) "
    "(tiling), TP(sizes) (tiled parallelization, scf.forall), TF(sizes) "
    "(tiled fusion of the last producer), I(permutation) (interchange), V "
    "(vectorization), NT (no transformation); one tile size per loop, 0 = "
    "not tiled. Example: '1: TP(32,64,0) T(8,32,1) V'. An entry without "
    "'<id>:' applies to the first op visited (the last consumer).")


def _add_dataclass_args(parser: argparse.ArgumentParser, cls) -> None:
    for f in dataclasses.fields(cls):
        default = f.default
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(default),
                            default=default,
                            help=f"{f.metadata.get('help', '')} (default: {default!r})")


def _dataclass_from_args(cls, args: argparse.Namespace):
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


def cmd_ops(args: argparse.Namespace) -> int:
    from mlir_rl.core import Module, describe_op
    module = Module.load(args.file)
    ops = module.ops()
    if args.json:
        print(json.dumps([dataclasses.asdict(o) for o in ops], indent=2))
        return 0
    print(" id  op                               kind               loops")
    for op in ops:
        print(describe_op(op))
    order = module.traversal_order()
    print(f"traversal order (consumer -> producer): {' '.join(map(str, order))}")
    return 0


def cmd_optimize(args: argparse.Namespace) -> int:
    from mlir_rl.core import ApplyStatus, Module
    module = Module.load(args.file)
    status = module.apply_schedule(args.schedule)
    if status == ApplyStatus.FAILED:
        print(f"warning: {module.last_message}", file=sys.stderr)
    text = module.lowered() if args.lower else module.ir()
    if args.dump_schedule:
        Path(args.dump_schedule).write_text(
            f"// Schedule: {module.schedule}\n{module.transform_script}")
    if args.output and args.output != "-":
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.suite:
        from mlir_rl import peers
        if args.suite not in peers.SUITES:
            print(f"mlir-rl: error: no suite {args.suite!r}; available: "
                  f"{', '.join(s for s in peers.SUITES if s != 'smoke')}", file=sys.stderr)
            return 2
        compare = tuple(c for c in args.compare.split(",") if c)
        bad = [c for c in compare if c not in peers.COMPARATORS]
        if bad:
            print(f"mlir-rl: error: unknown comparators {bad}; valid: "
                  f"{', '.join(peers.COMPARATORS)}", file=sys.stderr)
            return 2
        report = peers.run_suite(compare, model=args.model, runs=args.runs,
                                 warmup=args.warmup, threads=args.threads,
                                 suite_name=args.suite)
        out = peers.save(report, args.out)
        print(peers.markdown(report))
        print(f"\nfigures: {out / 'bench.json'}, {out / 'bench.md'}, {out / 'bench.png'}")
        return 0
    if not args.file:
        print("mlir-rl: error: bench needs FILE or --suite", file=sys.stderr)
        return 2
    from mlir_rl.bench import BenchConfig, bench_file
    config = _dataclass_from_args(BenchConfig, args)
    result = bench_file(args.file, args.schedule or "", config, model=args.model)
    print(result.summary())
    if args.json:
        Path(args.json).write_text(result.to_json() + "\n")
    return 0 if result.outputs_match else 3


def cmd_init_policy(args: argparse.Namespace) -> int:
    import torch
    from mlir_rl.policy import PolicyConfig, new_checkpoint
    ckpt = new_checkpoint(seed=args.seed, cfg=PolicyConfig())
    if args.head_scale != 1.0:
        for k in ("kind_head.weight", "tile_head.weight", "pointer_head.weight"):
            ckpt["actor"][k] = ckpt["actor"][k] * args.head_scale
        ckpt["provenance"]["note"] = f"untrained, heads scaled x{args.head_scale}"
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, args.output)
    print(f"untrained actor-critic (seed {args.seed}) written to {args.output}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from mlir_rl.export import export_checkpoint
    card = export_checkpoint(args.checkpoint, args.output,
                             fp16_weights=not args.fp32)
    print(f"{args.output}: {card['bytes'] / 1e6:.2f} MB, layout {card['layout_hash']}, "
          f"trained={card['trained']}")
    return 0


def cmd_overhead(args: argparse.Namespace) -> int:
    from mlir_rl import kernels
    from mlir_rl.bench import OVERHEAD_HEADER, measure_overhead
    modules: dict[str, str] = {}
    if args.suite in ("ops", "all"):
        modules.update(kernels.operator_suite())
    if args.suite in ("resnet18", "all"):
        modules["resnet18_layers"] = kernels.resnet18_layers()
    for f in args.files:
        modules[Path(f).stem] = Path(f).read_text()
    if not modules:
        print("mlir-rl: error: give files or --suite", file=sys.stderr)
        return 2
    print(f"policy: {args.model or '(shipped) ' + str(__import__('mlir_rl').default_model_path())}")
    print(OVERHEAD_HEADER)
    results = []
    for name, text in modules.items():
        r = measure_overhead(name, text, model=args.model, repeat=args.repeat,
                             sample=args.sample)
        results.append(r)
        print(r.row(), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(
            [dataclasses.asdict(r) for r in results], indent=2) + "\n")
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    from mlir_rl.data import make_dataset
    manifest = make_dataset(args.output, seed=args.seed, sequences=args.sequences,
                            lqcd=args.lqcd, val_fraction=args.val_fraction)
    parts: dict[str, int] = {}
    for e in manifest["programs"]:
        key = f"{e['split']}/{e['family']}"
        parts[key] = parts.get(key, 0) + 1
    print(f"{len(manifest['programs'])} programs in {args.output}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(parts.items())))
    return 0


def _parse_overrides(pairs: list[str]) -> dict:
    import tomllib
    out = {}
    for pair in pairs or []:
        key, _, value = pair.partition("=")
        try:
            out[key] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            out[key] = value
    return out


def cmd_train(args: argparse.Namespace) -> int:
    from mlir_rl.export import export_checkpoint
    from mlir_rl.ppo import Args, train
    overrides = _parse_overrides(args.set)
    if args.workers is not None:
        overrides["rollout_workers"] = args.workers
    if args.ray_address:
        overrides["ray_address"] = args.ray_address
        overrides.setdefault("rollout_workers", overrides.get("rollout_workers") or 2)
    cfg = Args.from_toml(args.config, **overrides)
    run_dir = train(cfg, resume=args.resume, progress=not args.no_progress)
    card = export_checkpoint(run_dir / "checkpoint.pt", run_dir / "policy.onnx")
    print(f"trained policy: {run_dir / 'policy.onnx'} ({card['bytes'] / 1e6:.1f} MB); "
          f"TensorBoard logs in {run_dir / 'tb'}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from mlir_rl.evaluate import EvalConfig, evaluate
    cfg = EvalConfig(dataset=args.dataset, split=args.split, model=args.model,
                     search_budget=args.search_budget, random_budget=args.random_budget,
                     threads=args.threads, runs=args.runs, cache_path=args.cache,
                     limit=args.limit, seed=args.seed, baselines=args.baselines)
    report = evaluate(cfg, progress=not args.no_progress)
    print(report["table"])
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from mlir_rl.search import search_dataset
    res = search_dataset(args.dataset, args.split, args.budget, args.sampler, args.output,
                         args.cache, threads=args.threads, runs=args.runs, seed=args.seed,
                         progress=not args.no_progress, policy=args.policy)
    import numpy as np
    sp = [r["best_speedup"] for r in res]
    print(f"{len(res)} programs, best-of-{args.budget} {args.sampler} search: geomean "
          f"{float(np.exp(np.mean(np.log(sp)))):.2f}x; written to {args.output}")
    return 0


def cmd_check_policy(args: argparse.Namespace) -> int:
    import numpy as np

    from mlir_rl import kernels
    from mlir_rl.bench import check_policy_through_plugin
    rows = check_policy_through_plugin(kernels.unseen_suite(), model=args.model,
                                       runs=args.runs, threads=args.threads)
    print("| kernel | baseline ms | mlir-rl ms | speedup | outputs | schedule |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.name} | {r.baseline_ms:.3f} | {r.scheduled_ms:.3f} | {r.speedup:.2f}x | "
              f"{'equal' if r.outputs_match else 'DIFFERENT'} | `{r.schedule}` |")
    geo = float(np.exp(np.mean(np.log([r.speedup for r in rows]))))
    slower = sum(r.speedup < 1 for r in rows)
    print(f"\ngeomean speedup {geo:.2f}x over {len(rows)} kernels; {slower} slower than "
          f"unscheduled; outputs equal: {all(r.outputs_match for r in rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"geomean": geo, "slower": slower,
                                               "rows": [dataclasses.asdict(r) for r in rows]},
                                              indent=2) + "\n")
    return 0 if all(r.outputs_match for r in rows) else 3


def cmd_plugin_path(args: argparse.Namespace) -> int:
    from mlir_rl.paths import plugin_path
    print(plugin_path())
    return 0


def cmd_opt_path(args: argparse.Namespace) -> int:
    from mlir_rl.paths import opt_path
    print(opt_path())
    return 0


def cmd_layout(args: argparse.Namespace) -> int:
    from mlir_rl import _core
    print(json.dumps(_core.layout(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from mlir_rl.bench import BenchConfig
    parser = argparse.ArgumentParser(
        prog="mlir-rl", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ops", help="list the linalg ops of FILE with their ids")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_ops)

    p = sub.add_parser("optimize", help="apply a schedule to FILE and print the IR")
    p.add_argument("file")
    p.add_argument("--schedule", required=True, help=SCHEDULE_HELP)
    p.add_argument("-o", "--output", help="write the IR here (default: stdout)")
    p.add_argument("--lower", action="store_true",
                   help="print the LLVM-dialect IR after the lowering pipeline")
    p.add_argument("--dump-schedule", metavar="FILE",
                   help="write the replayable transform script here")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("bench", help="time FILE unscheduled and scheduled, compare outputs; "
                       "or a suite against peers")
    p.add_argument("file", nargs="?")
    p.add_argument("--schedule", help=SCHEDULE_HELP + " Without it: the policy (--model).")
    p.add_argument("--suite", choices=["ops", "models", "lqcd"],
                   help="run a suite: the unscheduled program, mlir-rl (the pass with the policy) "
                        "and the --compare peers")
    p.add_argument("--compare", default="torch,inductor,iree,numpy",
                   help="peers for --suite (torch, inductor, iree, numpy)")
    p.add_argument("--model", default="", help="policy used without --schedule, and for --suite "
                   "(default: the shipped one)")
    p.add_argument("--out", default="runs/bench", help="directory of the suite's JSON, Markdown, PNG")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    _add_dataclass_args(p, BenchConfig)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("overhead", help="compile-time cost of the policy: inference and "
                       "transformation per op")
    p.add_argument("files", nargs="*", help="modules to schedule")
    p.add_argument("--suite", choices=["ops", "resnet18", "all"], default=None,
                   help="built-in modules: the operator suite, a ResNet-18-sized module")
    p.add_argument("--model", default="", help="ONNX policy (default: the shipped one)")
    p.add_argument("--repeat", type=int, default=5, help="repetitions (median, min, max)")
    p.add_argument("--sample", action="store_true", help="sampled instead of greedy decoding")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.set_defaults(func=cmd_overhead)

    p = sub.add_parser("init-policy", help="write a freshly initialised (untrained) checkpoint")
    p.add_argument("-o", "--output", required=True, help="checkpoint file (.pt)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--head-scale", type=float, default=1.0,
                   help="multiply the actor's output-head weights (>1 makes an untrained "
                        "actor's choices vary with the input; for tests and overhead figures)")
    p.set_defaults(func=cmd_init_policy)

    p = sub.add_parser("export", help="export a checkpoint's actor to ONNX for the pass")
    p.add_argument("checkpoint")
    p.add_argument("-o", "--output", required=True, help="ONNX file (policy.json is written beside it)")
    p.add_argument("--fp32", action="store_true", help="store weights as float32 (default: float16)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("dataset", help="write a seeded dataset of linalg programs")
    p.add_argument("-o", "--output", default="runs/dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sequences", type=int, default=24, help="random 5-op sequences")
    p.add_argument("--lqcd", type=int, default=8, help="LQCD-style contractions")
    p.add_argument("--val-fraction", type=float, default=0.25)
    p.set_defaults(func=cmd_dataset)

    p = sub.add_parser("train", help="train a policy with PPO (see configs/ppo.toml)")
    p.add_argument("config", help="TOML file with mlir_rl.ppo.Args fields")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a setting, e.g. --set iterations=10")
    p.add_argument("--resume", action="store_true", help="continue from run_dir/checkpoint.pt")
    p.add_argument("--workers", type=int, default=None,
                   help="Ray rollout workers (0: in this process; default from the config)")
    p.add_argument("--ray-address", default=None,
                   help="join this Ray cluster (default: a local Ray on this machine's cores)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="policy vs random search vs best-of-N search, per op kind")
    p.add_argument("--dataset", default="runs/dataset")
    p.add_argument("--split", default="val")
    p.add_argument("--model", default="", help="ONNX policy (default: the shipped one)")
    p.add_argument("--random-budget", type=int, default=None,
                   help="measurements per program for random search (default: the "
                        "training's per-program budget recorded in the model, else 8)")
    p.add_argument("--search-budget", type=int, default=200, help="best-of-N search")
    p.add_argument("--baselines", default=None,
                   help="an earlier evaluate --json report with the same budgets: reuse its "
                        "random and search figures, measure only the policy")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cache", default="runs/measurements.sqlite")
    p.add_argument("--limit", type=int, default=None, help="first N programs only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("search", help="best-of-N schedule search per program (baseline, demonstrations)")
    p.add_argument("--dataset", default="runs/dataset")
    p.add_argument("--split", default="train")
    p.add_argument("--budget", type=int, default=16)
    p.add_argument("--sampler", choices=["structured", "random"], default="structured")
    p.add_argument("--runs", type=int, default=1, help="timed runs per measurement (median)")
    p.add_argument("--policy", default=None,
                   help="also measure this ONNX policy's schedule of each program "
                        "(demonstrations for fine-tuning it: the best of both)")
    p.add_argument("-o", "--output", default="runs/search.json")
    p.add_argument("--cache", default="runs/measurements.sqlite")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("check-policy", help="the policy through the plugin on unseen real-model "
                       "kernels: speedups and output checks")
    p.add_argument("--model", default="", help="ONNX policy (default: the shipped one)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", metavar="FILE")
    p.set_defaults(func=cmd_check_policy)

    p = sub.add_parser("plugin-path", help="print the path of libMlirRL.so")
    p.set_defaults(func=cmd_plugin_path)
    p = sub.add_parser("opt-path", help="print the path of mlir-rl-opt")
    p.set_defaults(func=cmd_opt_path)
    p = sub.add_parser("layout", help="print the feature layout as JSON")
    p.set_defaults(func=cmd_layout)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    from mlir_rl.core import ScheduleError
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ScheduleError, OSError, RuntimeError) as e:
        print(f"mlir-rl: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
