"""Shared fixtures: the kernels and schedules of cases.py, and tool paths."""
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def mlir_opt() -> str:
    from mlir_rl.paths import mlir_opt_path
    return str(mlir_opt_path())


@pytest.fixture(scope="session")
def mlir_rl_opt() -> str:
    from mlir_rl.paths import opt_path
    return str(opt_path())


@pytest.fixture(scope="session")
def plugin() -> str:
    from mlir_rl.paths import plugin_path
    return str(plugin_path())


@pytest.fixture(scope="session")
def mlir_rl_cli() -> str:
    exe = shutil.which("mlir-rl")
    assert exe, "the mlir-rl console script is not installed"
    return exe


@pytest.fixture(scope="session")
def varied_model(tmp_path_factory):
    """An exported test policy whose greedy decisions vary (see policy_fixtures)."""
    from policy_fixtures import export_varied
    return export_varied(tmp_path_factory.mktemp("policy") / "varied.onnx")
