#!/usr/bin/env bash
# The main job: the pass schedules a 384x768x768 matmul with the shipped policy
# (in stock mlir-opt-22, through the plugin), and mlir-rl times it against the
# unscheduled program with an output check; then the same with an explicit,
# hand-written schedule for comparison. Writes runs/demo*.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs
scripts/setup.sh >runs/setup.log 2>&1 || { cat runs/setup.log; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
EXAMPLE=examples/matmul_384x768x768.mlir

echo "== ops of the example"
mlir-rl ops "$EXAMPLE"

echo "== the pass with the shipped policy, in stock mlir-opt-22 through the plugin"
mlir-opt-22 --load-pass-plugin="$(mlir-rl plugin-path)" \
  -p "builtin.module(linalg-rl-schedule{dump-schedule=runs/demo-schedule.mlir})" \
  "$EXAMPLE" -o runs/demo-scheduled.mlir
head -1 runs/demo-schedule.mlir
echo "scheduled IR: runs/demo-scheduled.mlir; replayable transform script: runs/demo-schedule.mlir"

echo "== unscheduled vs the policy's schedule (median of 10 runs, $(nproc) threads)"
mlir-rl bench "$EXAMPLE" --runs 10 --threads "$(nproc)" --json runs/demo.json

echo "== unscheduled vs a hand-written schedule"
mlir-rl bench "$EXAMPLE" --schedule "1: TP(32,64,0) T(8,32,1) V" \
  --runs 10 --threads "$(nproc)" --json runs/demo-explicit.json
