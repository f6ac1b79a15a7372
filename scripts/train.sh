#!/usr/bin/env bash
# The recipe of the shipped policy (about 45 minutes on 2 cores):
#   1. a seeded dataset (runs/dataset),
#   2. demonstrations: best-of-12 structured search per training program,
#   3. PPO warm-started by behaviour cloning (configs/ppo-bc.toml),
#   4. export to models/policy.onnx (+ policy.json),
#   5. evaluation on the validation split (runs/eval.json, printed table).
# Measurements are memoized in runs/*.sqlite; a rerun reuses them, and
# `mlir-rl train configs/ppo-bc.toml --resume` continues a killed training.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export PATH="$PWD/.venv/bin:$PATH"
mlir-rl dataset -o runs/dataset --seed 0
mlir-rl search --split train --budget 12 -o runs/demos.json
mlir-rl train configs/ppo-bc.toml
mlir-rl export runs/ppo-bc/checkpoint.pt -o models/policy.onnx
mlir-rl evaluate --model models/policy.onnx --search-budget 24 --json runs/eval.json
