#!/usr/bin/env bash
# Builds mlir-rl (scripts/setup.sh) and runs every test: lit (IR in, IR out),
# pytest (outputs, features, CLI, bad inputs) and a short seeded fuzz run.
# Fails if lit or pytest finds no tests, or the fuzzer finds a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== lit: test/*.mlir"
lit -sv test

echo "== pytest: test/python"
set +e
pytest -q test/python
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  exit "$rc"
fi

echo "== fuzz: a short seeded differential run (scripts/fuzz-short.sh)"
scripts/fuzz-short.sh "$(mktemp -d)"
