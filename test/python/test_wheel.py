"""The wheel carries what it runs: scripts/build-wheel.sh's wheel, installed
in a fresh virtual environment (its dependencies from the package index),
runs torch.compile(backend="mlir_rl") on a ResNet block with Debian's LLVM
22 out of sight (a mount namespace hides /usr/lib/llvm-22, libLLVM and the
libraries only LLVM brings), and gives eager's output."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a wheel, installs torch in a new venv

ROOT = Path(__file__).resolve().parents[2]

# What a machine with Python but without Debian's LLVM lacks: LLVM 22 itself
# and the libraries its packages pull in. Python's own (libz, libffi, liblzma,
# libsqlite3, libtinfo) stay: a Python install has them.
HIDDEN_LIBRARIES = ("libLLVM", "libMLIR", "libz3", "libxml2", "libicu", "libedit",
                    "libbsd", "libmd.", "libomp", "libmlir")

CHECK = r'''
import json, os, shutil, subprocess, sys
import torch
import mlir_rl
from mlir_rl import dynamo as D, paths
from mlir_rl.data.torch_models import BasicBlock, randomize_batch_norm

venv = sys.argv[1]
report = {"package": mlir_rl.__file__, "mlir_opt": shutil.which("mlir-opt-22"),
          "llvm_dir": os.path.exists("/usr/lib/llvm-22/lib/libMLIR.so.22.1"),
          "driver": paths.pass_driver(), "ort": mlir_rl._core.default_ort_library()}
torch.manual_seed(0)
m = randomize_batch_norm(BasicBlock(16, 32, 2).eval())
x = torch.randn(1, 16, 28, 28)
with torch.no_grad():
    ref = m(x)
    y = torch.compile(m, backend="mlir_rl")(x)
report.update(compiled=D.stats.compiled, fallbacks=D.stats.fallbacks, reasons=D.stats.reasons,
              max_error=float((y - ref).abs().max()), ref_max=float(ref.abs().max()))
report["loaded"] = sorted({line.split()[-1] for line in open("/proc/self/maps")
                           if any(k in line for k in ("libMLIR", "libLLVM", "libomp",
                                                      "runner_utils"))})
matmul = """func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>)
    -> tensor<64x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}"""
r = subprocess.run([os.path.join(venv, "bin", "mlir-rl-opt"), "-p",
                    "builtin.module(linalg-rl-schedule)", "-"],
                   input=matmul, capture_output=True, text=True)
report.update(opt_rc=r.returncode, opt_out=r.stdout[-2000:], opt_err=r.stderr[-2000:])
print("REPORT " + json.dumps(report))
'''


def _hide_commands() -> list[str]:
    """Shell commands (run in a new mount namespace) that hide LLVM 22."""
    cmds = ["mount -t tmpfs none /usr/lib/llvm-22"]
    for d in ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"):
        for f in sorted(glob.glob(f"{d}/lib*.so*")):
            if Path(f).name.startswith(HIDDEN_LIBRARIES) and not os.path.islink(f):
                cmds.append(f"mount --bind /dev/null {f}")
    return cmds


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(["bash", str(ROOT / "scripts/build-wheel.sh"), str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = list(out.glob("mlir_rl-*manylinux*.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


def test_wheel_carries_llvm_mlir_and_the_jit_runtime(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("mlir_rl/_core", "mlir_rl/libMlirRL.so", "mlir_rl/bin/mlir-rl-opt",
                   "mlir_rl/lib/libomp.so", "mlir_rl/lib/libmlir_c_runner_utils.so",
                   "mlir_rl/models/policy.onnx", "mlir_rl.libs/libMLIR", "mlir_rl.libs/libLLVM"):
        assert any(n.startswith(needed) for n in names), needed
    # No ELF binary among the scripts: a script's copy could not find the
    # libraries the wheel carries.
    assert not [n for n in names if ".data/scripts/" in n]


def test_wheel_carries_the_licences_of_what_it_bundles(wheel):
    z = zipfile.ZipFile(wheel)
    names = z.namelist()
    bundled = sorted(n for n in names if n.startswith(("mlir_rl.libs/", "mlir_rl/lib/"))
                     and ".so" in n)
    listing = next(n for n in names if n.endswith(".dist-info/licenses/BUNDLED.txt"))
    lines = dict(line.split(": ", 1) for line in z.read(listing).decode().splitlines()
                 if line.startswith("mlir_rl"))
    # Every bundled library is named with the package it came from ...
    assert sorted(lines) == bundled and len(bundled) >= 8, (sorted(lines), bundled)
    packages = {v.split(" (")[0] for v in lines.values()}
    assert {"libllvm22", "libmlir-22"} <= packages, packages
    # ... and that package's licence is in the wheel, recorded.
    record = z.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
    for p in packages:
        name = listing.replace("BUNDLED.txt", f"{p}.copyright")
        text = z.read(name).decode(errors="replace")
        assert re.search(r"(?i)copyright|license", text), p
        assert name + ",sha256=" in record, name
    llvm = z.read(listing.replace("BUNDLED.txt", "libllvm22.copyright")).decode()
    assert "Apache" in llvm


def test_wheel_alone_runs_torch_compile_without_llvm(wheel, tmp_path):
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespaces here (unshare -m needs root): cannot hide LLVM 22")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(venv / "bin/pip"), "install", "-q", f"{wheel}[torch]"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "MLIR_RL_PASS_DRIVER", "MLIR_RL_ORT_LIB")}
    env.update(PATH=f"{venv}/bin:/usr/bin:/bin", MLIR_RL_CACHE_DIR=str(tmp_path / "cache"),
               HOME=str(tmp_path))
    shell = " && ".join(_hide_commands() + [f"exec {venv}/bin/python {script} {venv}"])
    r = subprocess.run(["unshare", "-m", "sh", "-c", shell], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("REPORT ")]
    assert r.returncode == 0 and lines, r.stdout[-3000:] + r.stderr[-3000:]
    rep = json.loads(lines[-1][len("REPORT "):])
    site = str(venv)
    assert rep["package"].startswith(site)
    # LLVM 22 is out of sight: the passes run in the wheel's driver.
    assert rep["mlir_opt"] is None and not rep["llvm_dir"]
    assert len(rep["driver"]) == 1 and rep["driver"][0].startswith(site)
    # ONNX Runtime: the onnxruntime package pip installed beside the wheel.
    assert rep["ort"].startswith(site), rep["ort"]
    assert rep["compiled"] >= 1 and rep["fallbacks"] == 0, rep["reasons"]
    assert rep["max_error"] <= 1e-4 * max(1.0, rep["ref_max"]), rep
    # Every MLIR/LLVM library and runtime in the process is the wheel's.
    assert rep["loaded"] and all(p.startswith(site) for p in rep["loaded"]), rep["loaded"]
    assert any("libomp" in p for p in rep["loaded"]), rep["loaded"]
    # The driver on PATH schedules with the shipped policy.
    assert rep["opt_rc"] == 0, rep["opt_err"]
    assert re.search(r"scf\.forall|vector\.", rep["opt_out"]), rep["opt_out"]
