#!/usr/bin/env python3
"""Time to the first result of `torch.compile(model, backend="mlir_rl")` in a
fresh process: once with an empty cache (import, schedule, lower, JIT), then
in new processes with the cache the first one left (the scheduled IR and the
machine code are loaded). Each run is its own Python process, as a user's
next session would be; the model is one of mlir_rl.data.torch_models.

  .venv/bin/python scripts/warm_start.py resnet18 [--warm 2] [--api compile]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
torch.set_num_threads(2)
import mlir_rl
from mlir_rl import dynamo as D
from mlir_rl.data import torch_models as TM
name, api = sys.argv[1], sys.argv[2]
model, x = TM.build(name), TM.example_input(name)
t1 = time.perf_counter()
with torch.no_grad():
    f = torch.compile(model, backend="mlir_rl") if api == "torch.compile" else mlir_rl.compile(model, [x])
    f(x)
t2 = time.perf_counter()
print(json.dumps({"setup_s": t1 - t0, "first_result_s": t2 - t1, "compiled": D.stats.compiled,
                  "ir_hits": D.stats.disk_hits, "object_hits": D.stats.object_hits}))
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--warm", type=int, default=2, help="warm-cache processes after the cold one")
    p.add_argument("--api", choices=("torch.compile", "compile"), default="torch.compile")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlir-rl-warm-") as cache:
        env = dict(os.environ, MLIR_RL_CACHE_DIR=cache)
        for i in range(1 + a.warm):
            r = subprocess.run([sys.executable, "-c", CHILD, a.model, a.api], env=env,
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stderr[-2000:], file=sys.stderr)
                return 1
            d = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"{a.model} {'cold' if i == 0 else 'warm'} ({a.api}): first result "
                  f"{d['first_result_s']:.2f} s after {d['setup_s']:.1f} s of imports and model; "
                  f"graphs compiled {d['compiled']}, IR from cache {d['ir_hits']}, "
                  f"machine code from cache {d['object_hits']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
