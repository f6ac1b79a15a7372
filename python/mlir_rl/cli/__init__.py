"""The ``mlir-rl`` command line.

  mlir-rl ops FILE                       list the linalg ops and their ids
  mlir-rl optimize FILE [--schedule S]   schedule (default: by the policy), print the IR
  mlir-rl bench FILE [--schedule S]      time baseline vs scheduled (default: by the policy)
  mlir-rl bench --suite ops|unseen|shapes --compare torch,inductor,iree,numpy   against peers
  mlir-rl check-policy                   the policy through the plugin on unseen kernels
  mlir-rl overhead --suite all           policy inference / transformation cost per op
  mlir-rl init-policy -o CKPT            a freshly initialised actor-critic
  mlir-rl export CKPT -o models/policy.onnx   the actor, for the pass
  mlir-rl reexport OLD.onnx -o NEW.onnx --accept-layout HASH --note WHY
  mlir-rl dataset -o runs/dataset        seeded training/validation programs
  mlir-rl search --split train           best-of-N schedule search (baselines, demonstrations)
  mlir-rl train configs/ppo.toml         PPO; writes runs/ppo/{checkpoint.pt,policy.onnx,tb/}
  mlir-rl evaluate --model M             per-kind geomean speedups vs random and best-of-N search
  mlir-rl fuzz --minutes 30             differential fuzzing; failures shrunk to reproducers
  mlir-rl tune FILE --db DB --search 8   measure the policy's 8 best schedules per op, remember winners
  mlir-rl db show|export|merge DB...     inspect and share tuning databases
  mlir-rl iree-spec FILE -o spec.mlir    an IREE tuning spec with the policy's tile sizes
  mlir-rl plugin-path | opt-path         where the plugin / driver are
  mlir-rl layout                         the feature layout and the legality config (JSON)
  mlir-rl report                         docs/results.md and its plots from docs/results/*.json
  mlir-rl --version                      mlir-rl, LLVM/MLIR, ONNX Runtime, the policy, its layout

Every command's options are a dataclass (``mlir_rl.cli.commands``).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from mlir_rl.cli.args import add_dataclass_arguments, dataclass_from_args


class _VersionAction(argparse.Action):
    """``--version``: the versions a result depends on (loads the policy)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the versions of mlir-rl, LLVM/MLIR, ONNX Runtime and "
                              "the policy (with its feature-layout hash), then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from mlir_rl.versions import version_text
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from mlir_rl.cli.commands import COMMANDS
    parser = argparse.ArgumentParser(
        prog="mlir-rl", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, config, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=(config.__doc__ or help_text))
        add_dataclass_arguments(p, config)
        # Not `config`: `train` has a positional argument of that name.
        p.set_defaults(command_config=config, command_run=run)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    from mlir_rl.core import ScheduleError
    args = build_parser().parse_args(argv)
    try:
        return args.command_run(dataclass_from_args(args.command_config, args))
    except (ScheduleError, OSError, RuntimeError, ValueError) as e:
        print(f"mlir-rl: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
