#!/usr/bin/env bash
# The recipe of the shipped policy (about 90 minutes on 2 cores):
#   1. a seeded dataset (runs/dataset),
#   2. demonstrations: best-of-12 structured search per training program,
#   3. PPO warm-started by behaviour cloning (configs/ppo-bc.toml),
#      exported to runs/stage1.onnx,
#   4. expert iteration: per training program the best of that policy's own
#      schedule and a best-of-48 structured search, cloned into it, then PPO
#      with a warmed-up critic (configs/ppo-finetune.toml),
#   5. export to models/policy.onnx (+ policy.json),
#   6. evaluation on the validation split against random search with the
#      training's budget and best-of-200 search (runs/eval.json, printed table).
# Measurements are memoized in runs/*.sqlite; a rerun reuses them, and
# `mlir-rl train CONFIG --resume` continues a killed training.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export PATH="$PWD/.venv/bin:$PATH"
mlir-rl dataset -o runs/dataset --seed 0
mlir-rl search --split train --budget 12 -o runs/demos.json --memo runs/train-measurements.sqlite
mlir-rl train configs/ppo-bc.toml
mlir-rl export runs/ppo-bc/checkpoint.pt -o runs/stage1.onnx
mlir-rl search --split train --budget 48 --policy runs/stage1.onnx \
  --memo runs/train-measurements.sqlite -o runs/demos-ft.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/stage1.onnx
mlir-rl export runs/ppo-ft/checkpoint.pt -o models/policy.onnx
mlir-rl evaluate --model models/policy.onnx --random-budget 82 --search-budget 200 \
  --json runs/eval.json
