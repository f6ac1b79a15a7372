#!/usr/bin/env python3
"""Imported models prepared with two values of one mlir-rl-prepare pass
option (or scheduled with two values of a linalg-rl-schedule option),
scheduled by the shipped policy (or --model), timed in alternating rounds in
one process, outputs compared (a developer's aid).

  .venv/bin/python scripts/compare_prepare_option.py \
      --models vgg11,mobilenet_v2 --option mlir-rl-fuse-elementwise:thin-matmul-rows=0,16
  .venv/bin/python scripts/compare_prepare_option.py \
      --models bert_layer --option linalg-rl-schedule:pack-constant-rhs=false,true
  .venv/bin/python scripts/compare_prepare_option.py \
      --models gru_cell --option mlir-rl-fuse-elementwise:thin-constant-rows=1,16

An option of one of mlir-rl-prepare's steps runs those steps with the option
set, then the pass with its front-end stages off.

--models also takes .mlir files (kernels; prepared the same way).

Models are imported with torch-mlir on first use (cached in runs/models, as
`mlir-rl bench --suite models` does).
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

import mlir_rl
from mlir_rl.bench.peers import model_file
from mlir_rl.bench.timing import time_alternating
from mlir_rl import _core
from mlir_rl.core import PIPELINE_STAGES, Module
from mlir_rl.passes import run_pass
from mlir_rl.paths import opt_path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--option", required=True, help="PASS:NAME=A,B")
    ap.add_argument("--model", default="")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    pass_name, rest = args.option.split(":", 1)
    name, values = rest.split("=", 1)
    values = values.split(",")
    pipe = mlir_rl.prepare_pipeline()
    of_schedule = pass_name == "linalg-rl-schedule"
    # An option of one of mlir-rl-prepare's steps: those steps as a pipeline,
    # and the pass told not to run the front end again (its stages off).
    front_end_off = []
    if not of_schedule and pass_name not in pipe:
        pipe = _core.front_end_steps()
        front_end_off = [f"{s.replace('_', '-')}=false" for s in PIPELINE_STAGES[:4]]
    assert of_schedule or pass_name in pipe, f"{pass_name} is not in {pipe}"
    for model in args.models.split(","):
        text = (Path(model).read_text() if model.endswith(".mlir")
                else model_file(model).read_text())
        irs = {}
        t0 = time.time()
        for v in values:
            p = pipe if of_schedule else pipe.replace(pass_name, f"{pass_name}{{{name}={v}}}", 1)
            prepared = subprocess.run([str(opt_path()), "-p", p], input=text,
                                      capture_output=True, text=True, check=True).stdout
            extra = [f"{name}={v}"] if of_schedule else front_end_off
            irs[v] = run_pass(prepared, model=args.model, name=model, extra=extra).ir
            print(f"  {model}: {name}={v} prepared and scheduled ({time.time() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
        print(f"  {model}: timing {len(values)} variants, {args.rounds} rounds",
              file=sys.stderr, flush=True)
        timed = time_alternating([Module.parse(irs[v], model) for v in values],
                                 rounds=args.rounds, runs=args.runs, threads=args.threads)
        # Every value's outputs against the first value's.
        differ = []
        for v, t in zip(values[1:], timed[1:]):
            ok, err = mlir_rl.outputs_match(t.outputs, timed[0].outputs)
            if not ok:
                differ.append(f"{name}={v} max abs error {err:.3g}")
        print(model, " ".join(f"{name}={v}: {t.median * 1e3:.2f} ms "
                              f"(min {min(t.seconds) * 1e3:.1f}, max {max(t.seconds) * 1e3:.1f})"
                              for v, t in zip(values, timed)),
              f"OUTPUTS DIFFER from {name}={values[0]}: {'; '.join(differ)}" if differ
              else "outputs equal", f"({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
