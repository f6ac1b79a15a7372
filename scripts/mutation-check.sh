#!/usr/bin/env bash
# Breaks one rule of the action space on purpose, rebuilds, and shows that
# the short fuzz run of scripts/test.sh catches it; then restores the source
# and rebuilds. Exits 0 when the fuzzer caught the mutation.
#
#   scripts/mutation-check.sh [test/mutations/needs-split.patch]
#
# needs-split.patch lets TP/TF take tile sizes that split no loop (the whole
# extent), the rule that keeps single-iteration scf.forall loops with a
# fused producer used elsewhere away from upstream canonicalization
# (llvm-project#222143).
set -euo pipefail
cd "$(dirname "$0")/.."
patch="${1:-test/mutations/needs-split.patch}"
export PATH="$PWD/.venv/bin:$PATH"

rebuild() {
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    .venv/bin/python -m pip install -q --no-build-isolation -e ".[test]"
}
git apply --check "$patch"
git apply "$patch"
trap 'git apply -R "$patch"; echo "mutation-check: restored the source; rebuilding"; rebuild' EXIT
echo "mutation-check: applied $patch; rebuilding"
rebuild

out="$(mktemp -d)"
set +e
scripts/fuzz-short.sh "$out"
rc=$?
set -e
if [ "$rc" -eq 1 ]; then
  echo "mutation-check: the fuzzer caught the mutation ($(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['failures'])" "$out/report.json") failures; reproducers in $out/failures)"
  exit 0
fi
echo "mutation-check: the fuzzer did NOT catch the mutation (exit $rc)" >&2
exit 1
