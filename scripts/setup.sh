#!/usr/bin/env bash
# Installs everything mlir-rl needs on Debian bookworm / Ubuntu and builds it
# into ./.venv (plugin, driver and Python package). Safe to run again: it only
# installs what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PKGS="mlir-22-tools libmlir-22-dev llvm-22-dev libomp-22-dev clang-22 libsqlite3-dev cmake ninja-build python3-venv python3-dev"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing apt packages:$missing"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4"
# Before the build: CMake records the library of this onnxruntime as the
# pass's default, and compiles against ONNX Runtime's C API headers.
.venv/bin/python -m pip install -q "onnxruntime>=1.17"
scripts/fetch-ort-headers.sh
echo "setup: building mlir-rl (libMlirRL.so, mlir-rl-opt, mlir_rl._core)"
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
  .venv/bin/python -m pip install -q --no-build-isolation -e ".[test]"
echo "setup: done; plugin at $(.venv/bin/mlir-rl plugin-path)"
