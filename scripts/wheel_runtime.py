#!/usr/bin/env python3
"""Adds the JIT's runtime libraries to a built mlir-rl wheel (for
scripts/build-wheel.sh): python scripts/wheel_runtime.py WHEEL OUT_DIR

The lowered code calls into LLVM's OpenMP runtime and the MLIR C runner
utilities, which the JIT loads by path (``getRuntimeLibrary`` in Jit.cpp:
``mlir_rl/lib/`` first, then LLVM's library directory). No binary names
them as a dependency, so auditwheel would not carry them: this copies them
into ``mlir_rl/lib/`` and records them in the wheel's RECORD.
"""
from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

RUNTIME_LIBRARIES = ("libomp.so", "libmlir_c_runner_utils.so")


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def dist_info(wheel: Path) -> str:
    """The wheel's .dist-info directory."""
    with zipfile.ZipFile(wheel) as z:
        return next(n for n in z.namelist() if n.endswith(".dist-info/RECORD")).rsplit("/", 1)[0]


def add_files(wheel: Path, out: Path, files: dict[str, bytes], mode: int) -> Path:
    """``wheel`` written to ``out`` (which may be ``wheel`` itself) with
    ``files`` (name: contents, permissions ``mode``) added or replaced and
    recorded in its RECORD."""
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = f"{dist_info(wheel)}/RECORD"
        for info in src.infolist():
            if info.filename != record_name and info.filename not in files:
                dst.writestr(info, src.read(info.filename))
        record = [r for r in src.read(record_name).decode().rstrip("\n").split("\n")
                  if r.split(",", 1)[0] not in files]
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(info, data)
            record.insert(len(record) - 1, record_line(name, data))
        dst.writestr(record_name, "\n".join(record) + "\n")
    tmp.replace(out)
    return out


def add_runtime(wheel: Path, out_dir: Path, lib_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    added = {}
    for name in RUNTIME_LIBRARIES:
        path = (lib_dir / name).resolve()  # libomp.so is a link to libomp.so.5
        if not path.is_file():
            raise SystemExit(f"wheel_runtime: {lib_dir / name} is missing "
                             "(apt-get install libomp-22-dev libmlir-22-dev)")
        added[f"mlir_rl/lib/{name}"] = path.read_bytes()
    return add_files(wheel, out_dir / wheel.name, added, 0o755)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    from mlir_rl.paths import llvm_lib_dir
    out = add_runtime(Path(argv[1]), Path(argv[2]), llvm_lib_dir())
    print(f"wheel_runtime: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
