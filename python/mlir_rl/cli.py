"""The ``mlir-rl`` command line.

  mlir-rl ops FILE                       list the linalg ops and their ids
  mlir-rl optimize FILE --schedule S     apply a schedule, print the IR
  mlir-rl bench FILE --schedule S        time baseline vs scheduled, check outputs
  mlir-rl plugin-path | opt-path         where the plugin / driver are
  mlir-rl layout                         the feature layout (JSON)
"""
from __future__ import annotations

import argparse
import dataclasses
import json
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
    from mlir_rl.bench import BenchConfig, bench_file
    config = _dataclass_from_args(BenchConfig, args)
    result = bench_file(args.file, args.schedule, config)
    print(result.summary())
    if args.json:
        Path(args.json).write_text(result.to_json() + "\n")
    return 0 if result.outputs_match else 3


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

    p = sub.add_parser("bench", help="time FILE unscheduled and scheduled, compare outputs")
    p.add_argument("file")
    p.add_argument("--schedule", required=True, help=SCHEDULE_HELP)
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    _add_dataclass_args(p, BenchConfig)
    p.set_defaults(func=cmd_bench)

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
