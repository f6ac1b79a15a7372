#!/usr/bin/env bash
# Fetches ONNX Runtime's official C API headers into .cache/onnxruntime/include
# (never committed). They come from the npm package com.github.asus4.onnxruntime
# (API 29; used with the onnxruntime Python package's library, 1.29 or newer).
# Skipped when the headers are already there or ONNXRUNTIME_INCLUDE_DIR /
# ONNXRUNTIME_ROOT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.cache/onnxruntime/include
PKG="com.github.asus4.onnxruntime@0.4.9"
HEADERS="package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers/"

if [ -n "${ONNXRUNTIME_INCLUDE_DIR:-}" ] || [ -n "${ONNXRUNTIME_ROOT:-}" ]; then
  exit 0
fi
if [ -f "$DEST/onnxruntime_c_api.h" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-ort-headers: npm pack $PKG"
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null 2>&1)
mkdir -p "$DEST"
tar xzf "$tmp"/*.tgz -C "$DEST" --strip-components=7 "$HEADERS"
test -f "$DEST/onnxruntime_c_api.h"
echo "fetch-ort-headers: headers in $DEST"
