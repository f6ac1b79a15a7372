#!/usr/bin/env python3
"""Adds the licences of the libraries a repaired mlir-rl wheel bundles (for
scripts/build-wheel.sh): python scripts/wheel_licenses.py WHEEL

auditwheel copies libMLIR, libLLVM, libz3, ICU, libxml2 and the rest into
``mlir_rl.libs/`` (renamed ``libNAME-<hash>.so.N``), and wheel_runtime.py
adds the OpenMP runtime and the MLIR runner utilities to ``mlir_rl/lib/``:
their licences must travel with them. For each, this finds the library the
build machine has (by its soname, in the linker's cache or LLVM's library
directory), the Debian package that installed it (``dpkg -S``) and that
package's ``/usr/share/doc/PACKAGE/copyright``, and writes it to the wheel
as ``<dist-info>/licenses/PACKAGE.copyright`` (PEP 639's place), with a
``BUNDLED.txt`` that names the package of each bundled file. The wheel is
rewritten in place; a library whose licence is not found is an error.
"""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wheel_runtime import add_files, dist_info  # noqa: E402

# A grafted name: libNAME-<8 hex>.so[.N...] (auditwheel's hash of the file).
_GRAFTED = re.compile(r"^(?P<stem>.+)-[0-9a-f]{8}(?P<suffix>\.so(\..*)?)$")


def original_soname(bundled: str) -> str:
    """The soname a bundled file was copied from."""
    m = _GRAFTED.match(bundled)
    return m["stem"] + m["suffix"] if m else bundled


def find_library(soname: str, search: list[Path]) -> Path:
    for d in search:
        if (d / soname).exists():
            return (d / soname).resolve()
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2 and parts[0].split()[0] == soname and "x86-64" in parts[0]:
            return Path(parts[1]).resolve()
    raise SystemExit(f"wheel_licenses: cannot find {soname} on this machine")


def debian_package(path: Path) -> str:
    """The package that installed `path` (dpkg -S; the name without :arch)."""
    for candidate in (path, Path(str(path).replace("/usr/lib/", "/lib/", 1))):
        r = subprocess.run(["dpkg", "-S", str(candidate)], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":", 1)[0].split(",")[0].strip()
    raise SystemExit(f"wheel_licenses: no Debian package owns {path}")


def add_licenses(wheel: Path, lib_dir: Path) -> list[str]:
    """Rewrites `wheel` with the licences; returns the packages named."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    licenses = f"{dist_info(wheel)}/licenses"
    bundled = sorted(n for n in names
                     if (n.startswith("mlir_rl.libs/") or n.startswith("mlir_rl/lib/"))
                     and ".so" in n)
    search = [lib_dir, Path("/usr/lib/x86_64-linux-gnu"), Path("/lib/x86_64-linux-gnu")]
    owners: dict[str, str] = {}
    for name in bundled:
        soname = original_soname(name.rsplit("/", 1)[1])
        owners[name] = debian_package(find_library(soname, search))
    added = {}
    for package in sorted(set(owners.values())):
        copyright_file = Path("/usr/share/doc") / package / "copyright"
        if not copyright_file.is_file():
            raise SystemExit(f"wheel_licenses: {copyright_file} is missing")
        added[f"{licenses}/{package}.copyright"] = copyright_file.read_bytes()
    lines = ["The shared libraries this wheel bundles, each with the Debian package it was",
             "built from; that package's copyright file (its licence) is beside this one.", ""]
    lines += [f"{name}: {owners[name]} ({package_version(owners[name])})" for name in bundled]
    added[f"{licenses}/BUNDLED.txt"] = ("\n".join(lines) + "\n").encode()
    add_files(wheel, wheel, added, 0o644)
    return sorted(set(owners.values()))


def package_version(package: str) -> str:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                       capture_output=True, text=True)
    return r.stdout.strip() or "version unknown"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    from mlir_rl.paths import llvm_lib_dir
    packages = add_licenses(Path(argv[1]), llvm_lib_dir())
    print(f"wheel_licenses: {len(packages)} packages' licences: {', '.join(packages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
