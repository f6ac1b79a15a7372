#!/usr/bin/env python3
"""Imported models prepared with two values of one mlir-rl-prepare pass
option, scheduled by the shipped policy (or --model), timed in alternating
rounds in one process, outputs compared (a developer's aid).

  .venv/bin/python scripts/compare_prepare_option.py \
      --models vgg11,mobilenet_v2 --option mlir-rl-fuse-elementwise:thin-matmul-rows=0,16

Models are imported with torch-mlir on first use (cached in runs/models, as
`mlir-rl bench --suite models` does).
"""
import argparse
import statistics
import subprocess

import mlir_rl
from mlir_rl.bench.peers import model_file
from mlir_rl.core import Module
from mlir_rl.passes import run_pass
from mlir_rl.paths import opt_path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--option", required=True, help="PASS:NAME=A,B")
    ap.add_argument("--model", default="")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    pass_name, rest = args.option.split(":", 1)
    name, values = rest.split("=", 1)
    values = values.split(",")
    pipe = mlir_rl.prepare_pipeline()
    assert pass_name in pipe, f"{pass_name} is not in {pipe}"
    for model in args.models.split(","):
        text = model_file(model).read_text()
        irs = {}
        for v in values:
            p = pipe.replace(pass_name, f"{pass_name}{{{name}={v}}}", 1)
            prepared = subprocess.run([str(opt_path()), "-p", p], input=text,
                                      capture_output=True, text=True, check=True).stdout
            irs[v] = run_pass(prepared, model=args.model, name=model).ir
        times = {v: [] for v in values}
        outs = {}
        for r in range(args.rounds):
            for v in (values if r % 2 == 0 else values[::-1]):
                t = Module.parse(irs[v], model).time(runs=args.runs, warmup=1, threads=args.threads)
                times[v].append(statistics.median(t.seconds) * 1e3)
                outs[v] = t.outputs[0]
        ok, err = mlir_rl.outputs_match(outs[values[1]], outs[values[0]])
        print(model, " ".join(f"{name}={v}: {statistics.median(times[v]):.2f} ms "
                              f"({', '.join(f'{x:.1f}' for x in times[v])})" for v in values),
              "outputs equal" if ok else f"OUTPUTS DIFFER: {err}", flush=True)


if __name__ == "__main__":
    main()
