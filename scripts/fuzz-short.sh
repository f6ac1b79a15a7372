#!/usr/bin/env bash
# The short seeded fuzz run of scripts/test.sh (80 programs: about 1.5 minutes
# on 2 cores; $FUZZ_PROGRAMS sets how many): a fixed set of programs, each
# scheduled 6 random ways, 2 sampled, 1 greedy and 1 greedy after mlir-rl-prepare. Exits 1 if any output differs, any IR is invalid, anything crashes
# or hangs. The report (and shrunk reproducers) go to $1.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-$(mktemp -d)}"
exec mlir-rl fuzz --seed 1 --programs "${FUZZ_PROGRAMS:-80}" --minutes 6 --jobs 2 --shrink-seconds 60 \
  --max-shrinks 3 --out "$out"
