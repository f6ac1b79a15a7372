#!/usr/bin/env bash
# Builds mlir-rl (scripts/setup.sh) and runs every test: lit (IR in, IR out)
# and pytest (outputs, features, CLI). Fails if either finds no tests.
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
exit "$rc"
