"""Where the installed native pieces are: the pass plugin and the driver."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path


def package_native_dir() -> Path:
    """Directory holding ``_core``, ``libMlirRL.so`` and ``bin/mlir-rl-opt``.

    Found through the import system without loading ``_core``, so it is right
    for regular and editable installs alike.
    """
    spec = importlib.util.find_spec("mlir_rl._core")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "mlir_rl._core is not installed; build it with `pip install .` "
            "(see README.md)")
    return Path(spec.origin).resolve().parent


def plugin_path() -> Path:
    """Absolute path of ``libMlirRL.so`` (for ``mlir-opt --load-pass-plugin``)."""
    path = package_native_dir() / "libMlirRL.so"
    if not path.exists():
        raise RuntimeError(f"the pass plugin is missing: {path}")
    return path


def opt_path() -> Path:
    """Absolute path of the ``mlir-rl-opt`` driver (the package's own; the
    ``mlir-rl-opt`` on PATH is a script that runs it)."""
    path = package_native_dir() / "bin" / "mlir-rl-opt"
    if not path.exists():
        raise RuntimeError(f"mlir-rl-opt is missing: {path}")
    return path


def run_opt() -> None:
    """The ``mlir-rl-opt`` command: the package's driver with this command's
    arguments (a script, so that a wheel's PATH entry finds the libraries
    the wheel carries beside the driver)."""
    import os
    import sys
    path = opt_path()
    os.execv(path, [str(path), *sys.argv[1:]])


def pass_driver() -> list[str]:
    """The command that runs the passes, before its options: stock
    ``mlir-opt-22`` with the plugin where Debian's LLVM 22 is installed (the
    way users run the pass), else the package's ``mlir-rl-opt``, which has
    the passes built in (a wheel on a machine without LLVM).
    ``$MLIR_RL_PASS_DRIVER`` (``mlir-opt`` or ``mlir-rl-opt``) chooses."""
    import os
    choice = os.environ.get("MLIR_RL_PASS_DRIVER", "")
    if choice not in ("", "mlir-opt", "mlir-rl-opt"):
        raise RuntimeError(f"MLIR_RL_PASS_DRIVER={choice!r}: expected mlir-opt or mlir-rl-opt")
    if choice != "mlir-rl-opt":
        try:
            return [str(mlir_opt_path()), f"--load-pass-plugin={plugin_path()}"]
        except RuntimeError:
            if choice == "mlir-opt":
                raise
    return [str(opt_path())]


def iree_compile_path() -> Path:
    """IREE's ``iree-compile`` (the ``iree-base-compiler`` wheel's script):
    on PATH, else next to this Python (a virtual environment's ``bin``, which
    a user running ``.venv/bin/mlir-rl`` has not put on PATH)."""
    import sys
    found = shutil.which("iree-compile")
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / "iree-compile"
    if beside.exists():
        return beside
    raise RuntimeError("iree-compile not found: pip install iree-base-compiler "
                       "(the IREE peer of mlir-rl bench)")


def llvm_tool_path(name: str) -> Path:
    """An LLVM 22 tool (``mlir-opt``, ``mlir-translate``, ``clang``): Debian's
    ``NAME-22`` on PATH, else ``NAME`` on PATH, else
    ``/usr/lib/llvm-22/bin/NAME``."""
    for candidate in (f"{name}-22", name):
        found = shutil.which(candidate)
        if found:
            return Path(found)
    fallback = Path("/usr/lib/llvm-22/bin") / name
    if fallback.exists():
        return fallback
    raise RuntimeError(f"{name}-22 not found; install Debian's LLVM 22 packages "
                       "(mlir-22-tools, clang-22)")


def llvm_lib_dir() -> Path:
    """The library directory of the LLVM 22 whose tools ``llvm_tool_path``
    finds (libomp, the MLIR runner utilities): ``lib`` next to their ``bin``."""
    lib = llvm_tool_path("mlir-opt").resolve().parent.parent / "lib"
    if not lib.is_dir():
        raise RuntimeError(f"LLVM 22's library directory is missing: {lib}")
    return lib


def mlir_opt_path() -> Path:
    """Upstream ``mlir-opt`` of LLVM 22 (Debian's ``mlir-opt-22``)."""
    return llvm_tool_path("mlir-opt")
