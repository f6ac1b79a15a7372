"""The mlir-rl CLI, the plugin in mlir-opt-22 and the mlir-rl-opt driver."""
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mlir_rl
from cases import KERNELS


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def test_plugin_path_points_at_the_plugin(mlir_rl_cli):
    out = run(mlir_rl_cli, "plugin-path", check=True).stdout.strip()
    assert Path(out).is_absolute() and Path(out).name == "libMlirRL.so"
    assert Path(out).exists()


def test_ops_lists_ids(mlir_rl_cli, tmp_path):
    f = tmp_path / "chain.mlir"
    f.write_text(KERNELS["chain"][0])
    out = run(mlir_rl_cli, "ops", str(f), check=True).stdout
    assert "linalg.matmul" in out and "traversal order (consumer -> producer): 3 2 1 0" in out
    ops = json.loads(run(mlir_rl_cli, "ops", str(f), "--json", check=True).stdout)
    assert [o["name"] for o in ops] == ["linalg.fill", "linalg.matmul", "linalg.generic", "linalg.generic"]
    assert [o["producer"] for o in ops] == [-1, 0, 1, 2]


def test_optimize_writes_ir_and_script(mlir_rl_cli, tmp_path):
    f = tmp_path / "mm.mlir"
    f.write_text(KERNELS["matmul"][0])
    out, script = tmp_path / "out.mlir", tmp_path / "script.mlir"
    run(mlir_rl_cli, "optimize", str(f), "--schedule", "1: TP(16,32,0) T(8,32,1) V",
        "-o", str(out), "--dump-schedule", str(script), check=True)
    assert "scf.forall" in out.read_text() and "vector." in out.read_text()
    assert "transform.structured.vectorize" in script.read_text()
    r = run(mlir_rl_cli, "optimize", str(f), "--schedule", "1: TP(8,8,8)")
    assert r.returncode == 2 and "reduction loop" in r.stderr


def test_bench_reports_speedup_and_check(mlir_rl_cli, tmp_path):
    f = tmp_path / "mm.mlir"
    f.write_text(KERNELS["matmul"][0])
    js = tmp_path / "bench.json"
    r = run(mlir_rl_cli, "bench", str(f), "--schedule", "1: TP(16,32,0) T(8,32,1) V",
            "--runs", "3", "--threads", "2", "--json", str(js), check=True)
    assert "speedup:" in r.stdout and "outputs:    equal" in r.stdout
    # The result document of every benchmark (mlir_rl.bench.report's schema).
    from mlir_rl.bench import report as R
    data = R.load(js)
    assert data["suite"] == "file:mm.mlir" and data["threads"] == 2
    assert data["baseline"] == "unscheduled" and data["contenders"] == ["unscheduled", "mlir-rl"]
    assert data["command"].startswith("mlir-rl bench ") and "--json" in data["command"]
    assert data["policy"]["layout_hash"] == mlir_rl.layout().hash
    [k] = data["kernels"]
    assert k["runs"] == 3 and k["schedule"] == "1: TP(16,32,0) T(8,32,1) V"
    base, mine = k["figures"]["unscheduled"], k["figures"]["mlir-rl"]
    assert mine["status"] == "ok"  # outputs equal
    assert base["min_ms"] <= base["median_ms"] <= base["max_ms"]
    speedup = float(re.search(r"speedup:\s+([0-9.]+)x", r.stdout)[1])
    assert speedup == pytest.approx(base["median_ms"] / mine["median_ms"], rel=0.01)


def _run_scheduled_ir(ir: str, reference: mlir_rl.Module):
    """IR produced by an external tool runs and equals the unscheduled program."""
    got = mlir_rl.Module.parse(ir).time(runs=1, warmup=0, threads=2, seed=5)
    ref = reference.time(runs=1, warmup=0, threads=2, seed=5)
    ok, err = mlir_rl.outputs_match(got.outputs, ref.outputs)
    assert ok, err
    assert np.abs(ref.outputs[0]).max() > 0


def test_plugin_in_mlir_opt_schedules_and_runs(mlir_opt, plugin):
    text = KERNELS["chain"][0]
    sched = "3: TF(16,64) V; 2: V; 1: TF(32,32,0) T(8,32,1) V"
    r = run(mlir_opt, f"--load-pass-plugin={plugin}", "-p",
            f'builtin.module(linalg-rl-schedule{{schedule="{sched}"}})', "-",
            input=text, check=True)
    assert "scf.forall" in r.stdout and "linalg.matmul" not in r.stdout
    _run_scheduled_ir(r.stdout, mlir_rl.Module.parse(text))


def test_driver_schedules_and_runs(mlir_rl_opt):
    text = KERNELS["conv2d_nhwc"][0]
    sched = KERNELS["conv2d_nhwc"][2]["V"]
    # The driver's own flag form (the pass is registered statically).
    r = run(mlir_rl_opt, f'--linalg-rl-schedule=schedule="{sched}"', "-",
            input=text, check=True)
    assert "vector.contract" in r.stdout
    _run_scheduled_ir(r.stdout, mlir_rl.Module.parse(text))


def test_lowering_pipeline_is_registered(mlir_rl_opt):
    text = KERNELS["add"][0]
    r = run(mlir_rl_opt, "-p", "builtin.module(mlir-rl-lower)", "-", input=text, check=True)
    assert "llvm.func @main" in r.stdout
    assert "one-shot-bufferize" in mlir_rl.lowering_pipeline()


@pytest.mark.slow
def test_every_command_parses_its_options(mlir_rl_cli):
    """The options are generated from each command's dataclass."""
    from mlir_rl.cli import build_parser
    from mlir_rl.cli.commands import COMMANDS
    for name in COMMANDS:
        assert run(mlir_rl_cli, name, "--help").returncode == 0, name
    args = build_parser().parse_args(["bench", "--suite", "models", "--compare", ""])
    assert args.file is None and args.suite == "models" and args.compare == ""
    args = build_parser().parse_args(["train", "c.toml", "--set", "a=1", "--set", "b=2"])
    assert args.set == ["a=1", "b=2"] and args.workers is None
    # Every command's config builds from its parsed arguments (train's
    # positional `config` once shadowed the command's dataclass).
    from mlir_rl.cli.args import dataclass_from_args
    c = dataclass_from_args(args.command_config, args)
    assert c.config == "c.toml" and c.set == ["a=1", "b=2"]
    args = build_parser().parse_args(["overhead", "a.mlir", "b.mlir", "--repeat", "2"])
    assert args.files == ["a.mlir", "b.mlir"] and args.repeat == 2
    r = run(mlir_rl_cli, "bench", "--suite", "nope")
    assert r.returncode == 2 and "no suite 'nope'" in r.stderr


def test_layout_command_prints_layout_legality_and_kinds(mlir_rl_cli):
    out = json.loads(run(mlir_rl_cli, "layout", check=True).stdout)
    assert out["layout"]["hash"] == mlir_rl.layout().hash
    assert out["legality"]["hash"] == mlir_rl.legality()["hash"]
    assert [k["mnemonic"] for k in out["action_kinds"]] == [k.mnemonic for k in mlir_rl.action_kinds()]


def test_ops_on_non_utf8_input_is_an_error_not_a_traceback(mlir_rl_cli, tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_bytes(b"func.func @f() {\xff\xfe}\n")
    r = run(mlir_rl_cli, "ops", str(f))
    assert r.returncode == 2 and "not UTF-8" in r.stderr and "Traceback" not in r.stderr


def test_readme_python_example_runs():
    """The README's Python example is code a user can paste."""
    import re
    root = Path(__file__).parents[2]
    code = re.search(r"```python\n(.*?)```", (root / "README.md").read_text(), re.S)[1]
    cwd = os.getcwd()
    names = {}
    try:
        os.chdir(root)
        exec(compile(code, "README.md", "exec"), names)
    finally:
        os.chdir(cwd)
    # What the example shows a user, checked: the timing ran and computed
    # outputs, the policy scheduled the second module, prepare returned IR.
    assert names["t"].median > 0 and names["t"].outputs
    assert "linalg." in names["text"]
    assert names["lay"].raw["kind_mask_size"] == len(mlir_rl.action_kinds())
    assert names["step"] is not None


@pytest.mark.slow
def test_profile_ops_compiles_the_scheduled_function_ahead_of_time(mlir_rl_cli, tmp_path):
    """scripts/profile_ops.py finds LLVM 22's tools through mlir_rl.paths and
    builds an executable that runs the scheduled function (perf aside)."""
    import sys
    f = tmp_path / "chain.mlir"
    f.write_text(KERNELS["chain"][0])
    script = Path(__file__).resolve().parents[2] / "scripts" / "profile_ops.py"
    env = dict(os.environ, PATH=f"{Path(mlir_rl_cli).parent}:{os.environ['PATH']}")
    r = run(sys.executable, str(script), str(f), "--no-perf", "--iters", "3",
            "--keep", str(tmp_path / "prof"), env=env)
    assert r.returncode == 0, r.stderr
    assert "3 calls in" in r.stdout
    assert (tmp_path / "prof" / "profiled").exists()
    assert "omp" in (tmp_path / "prof" / "profiled.ll").read_text()


def test_llvm_tools_are_found():
    from mlir_rl.paths import llvm_lib_dir, llvm_tool_path
    for tool in ("mlir-opt", "mlir-translate", "clang"):
        assert llvm_tool_path(tool).exists()
    assert list(llvm_lib_dir().glob("libomp.so*"))


def test_iree_compile_is_found_without_the_environment_on_path(monkeypatch):
    """`.venv/bin/mlir-rl bench --compare iree` without .venv/bin on PATH
    still finds the wheel's iree-compile (next to this Python)."""
    import sys

    from mlir_rl.paths import iree_compile_path
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    path = iree_compile_path()
    assert path.exists() and path.parent == Path(sys.executable).parent


@pytest.mark.slow
def test_bench_suite_writes_a_result_document(mlir_rl_cli, tmp_path):
    """`mlir-rl bench --suite` prints its table and geomeans and writes the
    result document that `mlir-rl report` renders."""
    from mlir_rl.bench import report as R
    out = tmp_path / "ops.json"
    r = run(mlir_rl_cli, "bench", "--suite", "ops", "--kernels", "add_resnet_1x64x56x56",
            "--compare", "numpy", "--runs", "2", "--threads", "2", "--out", str(tmp_path / "b"),
            "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "| add_resnet_1x64x56x56 |" in r.stdout and "geomean speedup over" in r.stdout
    doc = R.load(out)
    assert doc["suite"] == "ops" and doc["contenders"] == ["unscheduled", "mlir-rl", "numpy"]
    [k] = doc["kernels"]
    assert k["figures"]["mlir-rl"]["status"] == "ok" and k["figures"]["numpy"]["status"] == "ok"
    R.render(tmp_path, tmp_path / "results.md")
    assert "add_resnet_1x64x56x56" in (tmp_path / "results.md").read_text()


@pytest.mark.slow
def test_check_policy_writes_a_result_document(mlir_rl_cli, tmp_path):
    from mlir_rl.bench import report as R
    from mlir_rl.data.suites import unseen_suite
    out = tmp_path / "check.json"
    r = run(mlir_rl_cli, "check-policy", "--runs", "1", "--threads", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = R.load(out)
    assert doc["suite"] == "check-policy" and doc["baseline"] == "unscheduled"
    assert [k["name"] for k in doc["kernels"]] == list(unseen_suite())
    assert all(k["figures"]["mlir-rl"]["status"] == "ok" for k in doc["kernels"])


@pytest.mark.slow
def test_compare_policies_gives_a_verdict_per_suite(mlir_rl_cli, tmp_path):
    """scripts/compare_policies.py times two policies through the pass's
    pipeline on each suite named and says, per suite, whether the new one's
    geomean is at least the old one's (the gate a retrained policy passes
    before it ships); the same policy twice gives the same schedules, each
    timed once."""
    import json
    import sys
    root = Path(__file__).resolve().parents[2]
    policy = root / "models" / "policy.onnx"
    out = tmp_path / "cmp.json"
    r = run(sys.executable, str(root / "scripts" / "compare_policies.py"), str(policy),
            str(policy), "--programs", "smoke,random:7", "--runs", "1", "--rounds", "2",
            "--json", str(out))
    assert r.returncode == 0, r.stderr + r.stdout
    doc = json.loads(out.read_text())
    assert list(doc["suites"]) == ["smoke", "random:7"]
    assert doc["suites"]["smoke"]["n"] == 3 and doc["suites"]["random:7"]["n"] == 12
    assert all(row["old_schedule"] == row["new_schedule"] and not row["outputs_differ"]
               for row in doc["rows"])
    # The same code is one program, timed once: no noise enters the verdict.
    assert all(row["old"] == row["new"] for row in doc["rows"]) and doc["new_wins_everywhere"]
    assert "new >= old on every suite:" in r.stdout
    bad = run(sys.executable, str(root / "scripts" / "compare_policies.py"), str(policy),
              str(policy), "--programs", "nope")
    assert bad.returncode != 0 and "no suite 'nope'" in bad.stderr
