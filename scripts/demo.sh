#!/usr/bin/env bash
# The main job: schedule a 384x768x768 matmul with mlir-rl and time it against
# the unscheduled program, checking that the outputs are equal. Writes
# runs/demo.json. (Until a trained policy ships, the schedule is explicit.)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs
scripts/setup.sh >runs/setup.log 2>&1 || { cat runs/setup.log; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
SCHEDULE="1: TP(32,64,0) T(8,32,1) V"

echo "== ops of the example"
mlir-rl ops examples/matmul_384x768x768.mlir

echo "== the pass in stock mlir-opt-22, through the plugin"
mlir-opt-22 --load-pass-plugin="$(mlir-rl plugin-path)" \
  -p "builtin.module(linalg-rl-schedule{schedule=\"$SCHEDULE\" dump-schedule=runs/demo-schedule.mlir})" \
  examples/matmul_384x768x768.mlir -o runs/demo-scheduled.mlir
echo "scheduled IR: runs/demo-scheduled.mlir; replayable transform script: runs/demo-schedule.mlir"

echo "== baseline vs scheduled (median of 10 runs, $(nproc) threads)"
mlir-rl bench examples/matmul_384x768x768.mlir --schedule "$SCHEDULE" \
  --runs 10 --threads "$(nproc)" --json runs/demo.json
