#!/usr/bin/env python3
"""Finds tests that cannot fail: run by scripts/test.sh in every tier.

- A pytest test function (``test_*`` in test/python) must assert something:
  an ``assert`` statement, a ``pytest.raises``/``warns``/``fail``, a call of
  an ``assert*`` function (``np.testing.assert_allclose``) or of a checker
  that raises on failure (Gymnasium's ``check_env``), directly or through a
  helper function of test/python that does.
- A lit test (test/*.mlir) must have a RUN line that checks what it runs:
  FileCheck, ``-verify-diagnostics`` or a ``diff``/``cmp`` of two outputs.

Prints each offender and exits 1 if there is any. ``--self-test`` shows that
the checker flags what it should.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Calls that fail the test when their condition does not hold.
CHECKING_ATTRS = {"raises", "warns", "fail", "deprecated_call"}
CHECKING_NAMES = {"check_env"}


def _call_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def _checks_directly(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name.startswith("assert") or name in CHECKING_NAMES:
                return True
            if isinstance(node.func, ast.Attribute) and name in CHECKING_ATTRS and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest":
                return True
    return False


def _called(fn: ast.AST) -> set[str]:
    return {_call_name(n) for n in ast.walk(fn) if isinstance(n, ast.Call)} - {""}


def tests_without_assertions(files: list[Path]) -> list[str]:
    """``file::test`` for every test function of ``files`` that checks
    nothing, directly or through the files' helper functions."""
    functions: dict[str, list[ast.AST]] = {}
    tests: list[tuple[Path, ast.FunctionDef]] = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, []).append(node)
                if node.name.startswith("test"):
                    tests.append((f, node))
    # Helpers that check, to a fixpoint (a helper calling a checking helper checks).
    checking = {name for name, defs in functions.items() if any(map(_checks_directly, defs))}
    changed = True
    while changed:
        changed = False
        for name, defs in functions.items():
            if name not in checking and any(_called(d) & checking for d in defs):
                checking.add(name)
                changed = True
    return [f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}::{t.name}"
            for f, t in tests if not (_checks_directly(t) or _called(t) & checking)]


_LIT_CHECK = re.compile(r"\bFileCheck\b|-verify-diagnostics|\b(diff|cmp)\s")


def lit_tests_without_checks(files: list[Path]) -> list[str]:
    bad = []
    for f in files:
        run = "\n".join(line.split("RUN:", 1)[1] for line in f.read_text().splitlines()
                        if "RUN:" in line)
        if not _LIT_CHECK.search(run):
            bad.append(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f))
    return bad


def _self_test(tmp: Path) -> None:
    (tmp / "test_x.py").write_text(
        "import pytest\n"
        "def _helper(x):\n    assert x\n"
        "def _outer(x):\n    _helper(x)\n"
        "def test_asserts():\n    assert 1\n"
        "def test_through_helper():\n    _outer(1)\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        int('x')\n"
        "def test_np():\n    import numpy as np\n    np.testing.assert_allclose(1, 1)\n"
        "def test_nothing():\n    x = 1 + 1\n"
        "def test_only_calls():\n    print('ok')\n")
    found = tests_without_assertions([tmp / "test_x.py"])
    assert [s.split("::")[1] for s in found] == ["test_nothing", "test_only_calls"], found
    (tmp / "good.mlir").write_text("// RUN: mlir-opt %s | FileCheck %s\n// CHECK: func\n")
    (tmp / "bad.mlir").write_text("// RUN: mlir-opt %s\n// CHECK: func\nfunc.func @f() { return }\n")
    assert [Path(p).name for p in lit_tests_without_checks(
        [tmp / "good.mlir", tmp / "bad.mlir"])] == ["bad.mlir"]


def main(argv: list[str]) -> int:
    if "--self-test" in argv:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            _self_test(Path(d))
        print("check_tests: self-test passed")
        return 0
    py = sorted((ROOT / "test" / "python").glob("*.py"))
    lit = sorted((ROOT / "test").glob("*.mlir"))
    bad_py = tests_without_assertions(py)
    bad_lit = lit_tests_without_checks(lit)
    for b in bad_py:
        print(f"check_tests: {b} asserts nothing", file=sys.stderr)
    for b in bad_lit:
        print(f"check_tests: {b} has no RUN line or checks nothing (no FileCheck, -verify-diagnostics or diff)",
              file=sys.stderr)
    n_tests = sum(1 for f in py for n in ast.walk(ast.parse(f.read_text()))
                  if isinstance(n, ast.FunctionDef) and n.name.startswith("test"))
    print(f"check_tests: {n_tests} test functions in {len(py)} files, {len(lit)} lit tests; "
          f"{len(bad_py) + len(bad_lit)} check nothing")
    return 1 if bad_py or bad_lit else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
