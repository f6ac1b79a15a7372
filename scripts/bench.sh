#!/usr/bin/env bash
# Measures the figures of docs/results.md on this machine and regenerates it:
# each suite's result document goes to docs/results/SUITE.json (replacing the
# last one: the history is git's), then `mlir-rl report` renders
# docs/results.md, the plots and the README's overview table.
#
#   scripts/bench.sh                 every suite below (about 1.5 hours on 2 cores)
#   scripts/bench.sh ops unseen      only these
#
# ops, unseen, fresh: kernels vs PyTorch, torch.compile, IREE, numpy, and the
#   pass's other decision sources (the heuristic, random decisions): the ablation
# models: whole networks imported with torch-mlir, mlir-rl-prepare -> pass -> lowering, vs torch.compile
#   and the pass's other decision sources
# torch-compile: the same networks through torch.compile(backend="mlir_rl") vs eager and inductor
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs docs/results
scripts/setup.sh >runs/setup.log 2>&1 || { cat runs/setup.log; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
THREADS="${THREADS:-2}"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(ops unseen fresh models torch-compile)
for suite in "${suites[@]}"; do
  case "$suite" in
    ops|unseen|fresh) args=(--compare torch,inductor,iree,numpy --decisions policy,heuristic,random --runs 5) ;;
    models) args=(--compare inductor --decisions policy,heuristic,random --runs 5 --warmup 1) ;;
    torch-compile) args=(--runs 5) ;;
    *) echo "bench.sh: no suite '$suite' here (ops, unseen, fresh, models, torch-compile)" >&2; exit 2 ;;
  esac
  echo "== $suite"
  # A failing suite is reported and the others still run.
  mlir-rl bench --suite "$suite" "${args[@]}" --threads "$THREADS" --out "runs/bench-$suite" \
    --json "docs/results/$suite.json" || echo "bench.sh: the $suite suite failed" >&2
done
mlir-rl report --readme README.md
