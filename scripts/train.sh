#!/usr/bin/env bash
# The recipe of the shipped policy (about 2.5 hours on 2 cores):
#   1. a seeded dataset (runs/dataset), with the prepared family (imported
#      networks' ops after mlir-rl-prepare),
#   2. demonstrations: best-of-12 structured search per training program,
#   3. PPO warm-started by behaviour cloning (configs/ppo-bc.toml),
#      exported to runs/stage1.onnx,
#   4. expert iteration, three rounds: per training program the best of the
#      current policy's own schedule and a best-of-48 structured search
#      (from the third round on, also the previous round's search), cloned
#      into it, then PPO with a warmed-up critic (configs/ppo-finetune.toml);
#      exported to runs/round1.onnx, runs/round2.onnx, then
#      models/policy.onnx (+ policy.json),
#   5. evaluation on the validation split against random search with the
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
search() { # POLICY OUT
  mlir-rl search --split train --budget 48 --policy "$1" \
    --memo runs/train-measurements.sqlite -o "$2"
}
search runs/stage1.onnx runs/demos-r1.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/stage1.onnx \
  --set demonstrations=runs/demos-r1.json --set run_dir=runs/ppo-r1
mlir-rl export runs/ppo-r1/checkpoint.pt -o runs/round1.onnx
search runs/round1.onnx runs/demos-r2.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round1.onnx \
  --set demonstrations=runs/demos-r2.json --set run_dir=runs/ppo-r2
mlir-rl export runs/ppo-r2/checkpoint.pt -o runs/round2.onnx
search runs/round2.onnx runs/demos-r3.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round2.onnx \
  --set demonstrations=runs/demos-r3.json,runs/demos-r2.json --set run_dir=runs/ppo-r3
mlir-rl export runs/ppo-r3/checkpoint.pt -o models/policy.onnx
mlir-rl evaluate --model models/policy.onnx --random-budget 82 --search-budget 200 \
  --json runs/eval.json
