# -*- Python -*-
# lit configuration for mlir-rl's IR tests (test/*.mlir).
#
# Runs against the installed package by default (`pip install .` then
# `lit -sv test`); a CMake build dir's lit.site.cfg.py points it at the build
# tree instead. FileCheck, not and mlir-opt come from the LLVM 22 install.
import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "mlir-rl"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "python", "Output", "build", "cpp", "models", "scripts",
                   "bad-inputs"]  # the corpus of test/python/test_bad_inputs.py
# The suite root is the repository; run it on the test/ directory: `lit test`.
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Outputs land beside each test in Output/ (ignored by git); a CMake build
# directory's lit.site.cfg.py puts them in the build tree instead.
if not getattr(config, "test_exec_root", None):
    config.test_exec_root = config.test_source_root
test_dir = os.path.join(config.test_source_root, "test")


def llvm_bindir():
    for tool in ("llvm-config-22", "llvm-config"):
        exe = shutil.which(tool)
        if exe:
            return subprocess.check_output([exe, "--bindir"], text=True).strip()
    return "/usr/lib/llvm-22/bin"


bindir = getattr(config, "llvm_tools_dir", None) or llvm_bindir()

libs_dir = getattr(config, "mlir_rl_libs_dir", None)
opt_path = getattr(config, "mlir_rl_opt", None)
if not libs_dir:
    # The installed package: its plugin and driver.
    out = subprocess.check_output(
        [sys.executable, "-c",
         "import mlir_rl.paths as p; print(p.plugin_path()); print(p.opt_path())"],
        text=True).split("\n")
    libs_dir = os.path.dirname(out[0])
    opt_path = out[1]

config.substitutions.append(("%mlir_rl_libs", libs_dir))
config.substitutions.append(("%shlibext", ".so"))
config.substitutions.append(("%mlir_rl_opt", opt_path))
config.substitutions.append(("%mlir_opt", os.path.join(bindir, "mlir-opt")))
config.substitutions.append(("%mlir_runner", os.path.join(bindir, "mlir-runner")))
libdir = os.path.join(os.path.dirname(bindir), "lib")
config.substitutions.append(
    ("%runner_libs", ",".join(os.path.join(libdir, f) for f in (
        "libmlir_runner_utils.so", "libmlir_c_runner_utils.so", "libomp.so"))))
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%inputs", os.path.join(test_dir, "Inputs")))

config.environment["PATH"] = os.pathsep.join(
    [bindir, os.path.dirname(opt_path), config.environment.get("PATH", "")])
# The vector register file that V fits a contraction's accumulator into is
# the host's by default; the tests pin one (AVX-512's, where the tiles they
# check fit as written) so that their IR does not depend on the machine.
# test/register-tile.mlir sets others.
config.environment["MLIR_RL_VECTOR_REGISTERS"] = "32x512"
