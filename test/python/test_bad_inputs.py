"""The bad-input corpus (test/bad-inputs) through all four entry points.

Every case runs through mlir-opt-22 with the plugin, mlir-rl-opt, the
``mlir-rl optimize`` command and the Python API (each in its own process).
Whatever the input, each must end with a clean result: success (ops it
cannot schedule skipped with a remark) or an error message and a non-zero
exit; never a signal, a stack dump, an LLVM fatal error or a Python
traceback.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

import mlir_rl

CORPUS = Path(__file__).resolve().parents[1] / "bad-inputs"
ENTRIES = ("mlir-opt", "mlir-rl-opt", "cli", "python")
CRASH_SIGNS = ("Traceback (most recent call last)", "Stack dump", "LLVM ERROR",
               "PLEASE submit a bug report", "Assertion", "Segmentation fault",
               "core dumped", "double free", "terminate called")

PYTHON_API = r"""
import sys
import mlir_rl
path, schedule, model, ort = sys.argv[1:5]
try:
    m = mlir_rl.Module.load(path)
    if schedule:
        m.apply_schedule(schedule)
    else:
        m.schedule_with_policy(model, ort)
    ok, messages = m.verify()
    assert ok, messages
    m.ir()
except mlir_rl.ScheduleError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
"""


@dataclass
class Case:
    name: str
    file: str
    expect: str                       # "ok" or "error"
    schedule: Optional[str] = None    # None: the policy
    model: str = ""                   # a key of the `models` fixture, or ""
    ort: str = ""                     # a key of the `ort_libs` fixture, or ""
    says: dict = field(default_factory=dict)   # entry ("*" = all) -> expected text


GARBAGE_SCHEDULES = {
    "no-entries": ";;;",
    "unknown-action": "1: X(3)",
    "unclosed": "1: T(3,",
    "unknown-op": "99: V",
    "negative-op": "-1: V",
    "too-many-sizes": "1: T(1,2,3,4,5,6,7,8,9,10,11,12,13)",
    "overflowing-size": "1: T(99999999999999999999,0,0)",
    "short-permutation": "1: I(0,1)",
    "twice-parallel": "1: TP(8,8,0) TP(4,4,0)",
    "empty-entry": "1:",
    "lone-colon": ":",
    "after-terminal": "1: V V",
    "not-a-candidate": "1: T(3,0,0)",
    "brace": "1: T(4}",
    "split-nothing": "1: TP(32,48,0)",
}

CASES = [
    Case("syntax-error", "syntax-error.mlir", "error", says={"*": "expected ')'"}),
    Case("non-utf8", "non-utf8.mlir", "error",
         says={"mlir-opt": "unexpected character", "mlir-rl-opt": "unexpected character",
               "cli": "not UTF-8", "python": "not UTF-8"}),
    Case("empty", "empty.mlir", "ok"),
    Case("verifier-error", "verifier-error.mlir", "error", says={"*": "'linalg.matmul' op"}),
    Case("unregistered-dialect", "unregistered-dialect.mlir", "error",
         says={"*": "unregistered dialect"}),
    Case("dynamic-shapes", "dynamic-shapes.mlir", "ok"),
    Case("dynamic-shapes-scheduled", "dynamic-shapes.mlir", "error", schedule="0: T(4,4,0)",
         says={"*": "dynamic shape"}),
    Case("zero-extent", "zero-extent.mlir", "ok"),
    Case("zero-extent-scheduled", "zero-extent.mlir", "error", schedule="1: TP(1,4,0)",
         says={"*": "extent 0"}),
    Case("memref", "memref.mlir", "ok"),
    Case("memref-scheduled", "memref.mlir", "error", schedule="0: T(4,4,4)",
         says={"*": "memref semantics"}),
    Case("element-types", "element-types.mlir", "ok"),
    Case("element-types-scheduled", "element-types.mlir", "ok",
         schedule="0: TP(4,0) V; 1: T(2,2) V; 2: TP(2,8); 3: T(4,0)"),
    Case("beyond-layout", "beyond-layout.mlir", "ok"),
    Case("beyond-layout-scheduled", "beyond-layout.mlir", "error", schedule="0: V",
         says={"*": "more than the 12"}),
    Case("no-linalg", "no-linalg.mlir", "ok"),
    Case("no-linalg-scheduled", "no-linalg.mlir", "error", schedule="0: V",
         says={"*": "unknown op id 0"}),
    Case("nested-module", "nested-module.mlir", "ok"),
    Case("huge-shapes", "huge-shapes.mlir", "ok"),
    Case("huge-shapes-scheduled", "huge-shapes.mlir", "ok", schedule="0: TP(64,64,0) T(8,8,8)"),
    Case("in-loops", "in-loops.mlir", "ok"),
    Case("transform-ir", "transform-ir.mlir", "ok"),
] + [Case(f"schedule-{k}", "matmul.mlir", "error", schedule=v)
     for k, v in GARBAGE_SCHEDULES.items()] + [
    Case("model-missing", "matmul.mlir", "error", model="missing", says={"*": "does not exist"}),
    Case("model-junk", "matmul.mlir", "error", model="junk",
         says={"*": "cannot load it as an ONNX model"}),
    Case("model-truncated", "matmul.mlir", "error", model="truncated"),
    Case("model-other-layout", "matmul.mlir", "error", model="other_layout",
         says={"*": "was exported for feature layout 0123456789abcdef"}),
    Case("model-empty", "matmul.mlir", "error", model="empty"),
    Case("ort-missing", "matmul.mlir", "error", ort="missing",
         says={"*": "cannot load the ONNX Runtime library"}),
    Case("ort-not-ort", "matmul.mlir", "error", ort="libm", says={"*": "not an ONNX Runtime library"}),
    Case("ort-text-file", "matmul.mlir", "error", ort="text"),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    import onnx
    d = tmp_path_factory.mktemp("bad-models")
    shipped = mlir_rl.default_model_path()
    (d / "junk.onnx").write_bytes(b"not a model at all")
    (d / "truncated.onnx").write_bytes(shipped.read_bytes()[:4096])
    (d / "empty.onnx").write_bytes(b"")
    model = onnx.load(str(shipped))
    for p in model.metadata_props:
        if p.key == "mlir_rl.layout_hash":
            p.value = "0123456789abcdef"
    onnx.save(model, str(d / "other.onnx"))
    return {"missing": str(d / "missing.onnx"), "junk": str(d / "junk.onnx"),
            "truncated": str(d / "truncated.onnx"), "empty": str(d / "empty.onnx"),
            "other_layout": str(d / "other.onnx")}


@pytest.fixture(scope="module")
def ort_libs(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("bad-ort")
    (d / "libonnxruntime.so").write_text("not a shared library\n")
    return {"missing": "/nonexistent/libonnxruntime.so", "libm": "libm.so.6",
            "text": str(d / "libonnxruntime.so")}


def _command(entry: str, case: Case, model: str, ort: str, tools: dict) -> tuple[list, dict]:
    path = str(CORPUS / case.file)
    env = dict(os.environ)
    if entry in ("mlir-opt", "mlir-rl-opt"):
        opts = []
        if case.schedule is not None:
            opts.append(f'schedule="{case.schedule}"')
        if model:
            opts.append(f"model={model}")
        if ort:
            opts.append(f"ort-lib={ort}")
        pipeline = f"builtin.module(linalg-rl-schedule{{{' '.join(opts)}}})"
        if entry == "mlir-opt":
            return [tools["mlir_opt"], f"--load-pass-plugin={tools['plugin']}", "-p", pipeline,
                    path, "-o", os.devnull], env
        return [tools["mlir_rl_opt"], "-p", pipeline, path, "-o", os.devnull], env
    if entry == "cli":
        cmd = [tools["cli"], "optimize", path, "-o", os.devnull]
        cmd += ["--schedule", case.schedule] if case.schedule is not None else []
        cmd += ["--model", model] if model else []
        if ort:
            env["MLIR_RL_ORT_LIB"] = ort
        return cmd, env
    return [sys.executable, "-c", PYTHON_API, path, case.schedule or "", model, ort], env


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gets_a_clean_result_everywhere(case, models, ort_libs, mlir_opt, mlir_rl_opt,
                                                  plugin, mlir_rl_cli):
    tools = {"mlir_opt": mlir_opt, "mlir_rl_opt": mlir_rl_opt, "plugin": plugin,
             "cli": mlir_rl_cli}
    model = models[case.model] if case.model else ""
    ort = ort_libs[case.ort] if case.ort else ""
    problems = []
    for entry in ENTRIES:
        cmd, env = _command(entry, case, model, ort, tools)
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=300)
        out = (r.stdout + r.stderr).decode("utf-8", errors="replace")
        where = f"{entry} (exit {r.returncode}): {out[-600:]!r}"
        if r.returncode < 0:
            problems.append(f"killed by signal {-r.returncode}: {where}")
            continue
        signs = [s for s in CRASH_SIGNS if s in out]
        if signs:
            problems.append(f"{signs}: {where}")
        if case.expect == "ok" and r.returncode != 0:
            problems.append(f"expected success: {where}")
        if case.expect == "error":
            if r.returncode == 0:
                problems.append(f"expected an error: {where}")
            elif "error" not in out.lower():
                problems.append(f"no error message: {where}")
        text = case.says.get(entry, case.says.get("*"))
        if text and text not in out:
            problems.append(f"expected {text!r}: {where}")
    assert not problems, "\n".join(problems)


def test_the_corpus_is_all_used():
    used = {c.file for c in CASES}
    assert used == {p.name for p in CORPUS.glob("*.mlir")}
