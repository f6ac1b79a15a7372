#!/usr/bin/env bash
# Reproduces the README's figures on this machine:
#   runs/bench/        mlir-rl vs unscheduled vs PyTorch, torch.compile, IREE, numpy
#                      on the operator suite (bench.json, bench.md, bench.png)
#   runs/bench-models/ the same for ResNet-18, MobileNetV2, VGG-11 (torch-mlir import)
#   runs/bench-lqcd/   the same for LQCD-style contractions
#   runs/check-policy.json   the shipped policy through the plugin on unseen kernels
#   runs/overhead.json       the policy's compile-time cost per op
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs
scripts/setup.sh >runs/setup.log 2>&1 || { cat runs/setup.log; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python -m pip install -q "iree-base-compiler==3.13.0" "iree-base-runtime==3.13.0" "matplotlib>=3.7" "torch-mlir==20261001"
THREADS="$(nproc)"
mlir-rl bench --suite ops --compare torch,inductor,iree,numpy --threads "$THREADS" --runs 5 --out runs/bench
# A failure here (e.g. a lowering that runs out of memory, as MobileNetV2's once
# did) is reported and the other suites still run.
mlir-rl bench --suite models --compare torch,inductor,iree --threads "$THREADS" --runs 5 --warmup 1 --out runs/bench-models \
  || echo "bench.sh: the models suite failed (see README, known issues)" >&2
mlir-rl bench --suite lqcd --compare torch,inductor,iree,numpy --threads "$THREADS" --runs 5 --out runs/bench-lqcd
mlir-rl check-policy --threads "$THREADS" --runs 5 --json runs/check-policy.json
mlir-rl overhead --suite all --repeat 5 --json runs/overhead.json
