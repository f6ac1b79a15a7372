#!/usr/bin/env bash
# Builds mlir-rl (scripts/setup.sh) and runs the tests, in two tiers:
#
#   scripts/test.sh         lit (IR in, IR out), the unit tests (pytest -m "not
#                           slow") and a short seeded fuzz run of 48 programs:
#                           about 3 minutes, after every change
#   scripts/test.sh --all   the above with 80 fuzzed programs, and the slow
#                           tier (pytest -m slow: training, whole models, the
#                           shipped-schedule fixture, peers, the torch.compile
#                           backend): what CI runs
#
# Both first check that every test asserts something (scripts/check_tests.py).
# Fails if lit or pytest finds no tests, or the fuzzer finds a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

tier=unit
fuzz_programs=48
case "${1:-}" in
  "") ;;
  --all) tier=all; fuzz_programs=80 ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown option '$1' (use --all for every test)" >&2; exit 2 ;;
esac

scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

# Each banner says how long the run has taken so far.
banner() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }

banner "tests that cannot fail: scripts/check_tests.py"
python scripts/check_tests.py --self-test
python scripts/check_tests.py

banner "lit: test/*.mlir"
lit -sv test

# pytest_tier LABEL MARKER: exit 5 (no tests collected) is a failure.
pytest_tier() {
  banner "pytest ($1): test/python -m \"$2\""
  set +e
  pytest -q test/python -m "$2"
  local rc=$?
  set -e
  if [ "$rc" -eq 5 ]; then
    echo "pytest collected no $1 tests: that is a failure" >&2
    exit 1
  fi
  if [ "$rc" -ne 0 ]; then
    exit "$rc"
  fi
}

pytest_tier "unit tests" "not slow"

banner "fuzz: a short seeded differential run of $fuzz_programs programs (scripts/fuzz-short.sh)"
FUZZ_PROGRAMS="$fuzz_programs" scripts/fuzz-short.sh "$(mktemp -d)"

if [ "$tier" = all ]; then
  pytest_tier "slow tier" "slow"
fi
banner "done: the $tier tier passed"
