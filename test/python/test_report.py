"""Result documents (one schema for every benchmark) and `mlir-rl report`."""
import copy
import json
import re
import subprocess

import pytest

import mlir_rl
from mlir_rl.bench import report as R


def _doc(suite="ops", times=None):
    """A result document with known times: unscheduled 10 ms; mlir-rl and a
    peer as given (ms) per kernel."""
    times = times or {"matmul": (2.0, 4.0), "conv": (5.0, 2.5)}
    kernels = [{"name": name, "schedule": "1: V", "runs": 3,
                "figures": {"unscheduled": R.figure("ok", [0.010, 0.011, 0.009]),
                            "mlir-rl": R.figure("ok", [mine / 1e3] * 3),
                            "torch": R.figure("ok", [peer / 1e3] * 3),
                            "iree": {"status": "failed", "detail": "iree-compile failed"}}}
               for name, (mine, peer) in times.items()]
    return R.new_result(suite, "unscheduled", ["unscheduled", "mlir-rl", "torch", "iree"],
                        kernels, threads=2, settings={"runs": 3}, command="mlir-rl bench")


def test_a_new_result_records_where_and_how_it_was_measured():
    doc = _doc()
    assert doc["schema"] == R.SCHEMA and doc["version"] == mlir_rl.__version__
    assert doc["commit"] and doc["date"].endswith("Z") and doc["threads"] == 2
    assert doc["host"]["cpu"] and doc["host"]["cpus"] >= 1 and doc["host"]["vector_isa"]
    assert doc["policy"]["layout_hash"] == mlir_rl.layout().hash and doc["policy"]["version"]
    f = doc["kernels"][0]["figures"]["unscheduled"]
    assert (f["min_ms"], f["median_ms"], f["max_ms"]) == pytest.approx((9.0, 10.0, 11.0))


def test_speedups_and_geomeans_follow_the_figures():
    doc = _doc()
    sp = R.speedups(doc)
    assert sp["matmul"]["mlir-rl"] == pytest.approx(5.0) and sp["conv"]["torch"] == pytest.approx(4.0)
    assert sp["matmul"]["iree"] is None  # failed: no speedup
    g = R.geomeans(doc)
    # IREE failed everywhere, so it is not shown and every kernel counts.
    assert g.kernels == 2 and "iree" not in g.values and not g.partial
    assert g.values["mlir-rl"] == pytest.approx((5.0 * 2.0) ** 0.5)
    assert g.values["torch"] == pytest.approx((2.5 * 4.0) ** 0.5)
    table = R.markdown_table(doc)
    assert "| matmul | 10.00 | 5.00 | 2.50 | 2.00 |" in table  # mlir-rl 2x the best peer
    assert "| conv | 10.00 | 2.00 | 4.00 | 0.50 |" in table
    assert "**geomean** (2 of 2 kernels)" in table


def test_search_against_greedy_names_the_kernels_where_greedy_trails():
    """With a search contender the document says how search compares with
    greedy per kernel and over the kernels where greedy takes 1.3x the best
    peer's time or more (conv: 5 ms against 2.5 ms), and the report prints
    it; without one there is no such figure."""
    assert "search" not in _doc() and R.search_line(_doc()) == ""
    times = {"matmul": (2.0, 4.0, 2.2), "conv": (5.0, 2.5, 4.0), "add": (1.0, 0.9, 1.0)}
    kernels = [{"name": name, "schedule": "1: V", "runs": 3,
                "figures": {"unscheduled": R.figure("ok", [0.010] * 3),
                            "mlir-rl": R.figure("ok", [mine / 1e3] * 3),
                            "mlir-rl-search": R.figure("ok", [tuned / 1e3] * 3),
                            "torch": R.figure("ok", [peer / 1e3] * 3)}}
               for name, (mine, peer, tuned) in times.items()]
    doc = R.new_result("ops", "unscheduled", ["unscheduled", "mlir-rl", "mlir-rl-search", "torch"],
                       kernels, threads=2, settings={"runs": 3})
    f = doc["search"]
    assert f["trailing_kernels"] == ["conv"]  # add: 1.11x behind, not trailing
    assert f["trailing_geomean"] == pytest.approx(1.25)
    assert f["lowest_kernel"] == "matmul" and f["lowest"] == pytest.approx(2.0 / 2.2)
    assert f["geomean"] == pytest.approx((2.0 / 2.2 * 1.25 * 1.0) ** (1 / 3))
    assert "1 kernels where greedy trails the best peer by 1.3x or more (conv): 1.25x" \
        in R.summary(doc)


def test_a_peer_without_an_equivalent_does_not_shrink_the_geomean():
    """numpy has no convolution (n/a): the geomeans are over every kernel,
    numpy's over the ones it applies to, and it is not the best peer of the
    geomean row; a failure still counts against every contender."""
    doc = _doc(times={"matmul": (2.0, 4.0), "conv": (5.0, 2.5), "add": (1.0, 1.0)})
    fig = doc["kernels"][0]["figures"]
    fig["numpy"] = R.figure("ok", [0.0005] * 3)  # 20x on matmul
    for k in doc["kernels"][1:]:
        k["figures"]["numpy"] = {"status": "n/a", "detail": "no numpy equivalent"}
    doc["contenders"].append("numpy")
    g = R.geomeans(R.validate(doc))
    assert g.kernels == 3 and g.partial == {"numpy": 1}
    assert g.values["numpy"] == pytest.approx(20.0)
    assert g.values["mlir-rl"] == pytest.approx((5.0 * 2.0 * 10.0) ** (1 / 3))
    table = R.markdown_table(doc)
    assert "| **geomean** (3 of 3 kernels) |" in table and "20.0 (on 1)" in table
    # mlir-rl vs the best complete peer (PyTorch), not numpy's one kernel.
    assert table.rstrip().endswith(f"| {g.values['mlir-rl'] / g.values['torch']:.2f} |")


def test_report_renders_every_suite_with_a_plot(tmp_path):
    results = tmp_path / "results"
    R.save(_doc("ops"), results / "ops.json")
    R.save(_doc("unseen", {"softmax": (1.0, 0.5)}), results / "unseen.json")
    out = tmp_path / "results.md"
    written = R.render(results, out, html=tmp_path / "results.html", intro="How we measure.")
    md = out.read_text()
    # One section per suite, in the report's order, each with its table and plot.
    assert md.index("(`ops`)") < md.index("(`unseen`)")
    assert "How we measure." in md and "Reproduce: `mlir-rl bench`" in md
    assert "![ops](results/ops.png)" in md and "![unseen](results/unseen.png)" in md
    assert "- matmul, IREE: failed (iree-compile failed)" in md  # failures are named
    for png in ("ops.png", "unseen.png"):
        assert (results / png).read_bytes()[:4] == b"\x89PNG"
    html = (tmp_path / "results.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "<table>" in html
    assert set(written) == {out, results / "ops.png", results / "unseen.png",
                            tmp_path / "results.html"}


@pytest.mark.parametrize("breaks, field", [
    (lambda d: d["host"].pop("cpu"), "host.cpu"),
    (lambda d: d.pop("commit"), "commit"),
    (lambda d: d["kernels"][1]["figures"]["mlir-rl"].pop("median_ms"),
     "kernels[1].figures.mlir-rl.median_ms"),
    (lambda d: d["kernels"][0].pop("figures"), "kernels[0].figures"),
])
def test_a_result_missing_a_field_is_a_clear_error(tmp_path, breaks, field):
    doc = copy.deepcopy(_doc())
    breaks(doc)
    (tmp_path / "ops.json").write_text(json.dumps(doc))
    with pytest.raises(R.ResultError, match=re.escape(f"ops.json: missing field '{field}'")):
        R.render(tmp_path, tmp_path / "results.md")


def test_a_result_of_another_kind_is_refused(tmp_path):
    doc = _doc()
    doc["threads"] = "two"
    with pytest.raises(R.ResultError, match="field 'threads' should be int"):
        R.validate(doc, "x.json")
    doc = _doc()
    doc["kernels"][0]["figures"]["inductor"] = {"status": "ok"}
    with pytest.raises(R.ResultError, match="'inductor' is not a contender"):
        R.validate(doc, "x.json")
    (tmp_path / "a.json").write_text(json.dumps(_doc()))
    (tmp_path / "b.json").write_text(json.dumps(_doc()))
    with pytest.raises(R.ResultError, match=r"more than one result file for \['ops'\]"):
        R.render(tmp_path, tmp_path / "results.md")


def test_report_command(mlir_rl_cli, tmp_path):
    from pathlib import Path
    readme = Path(__file__).parents[2] / "README.md"
    before = readme.read_text()
    R.save(_doc(), tmp_path / "ops.json")
    r = subprocess.run([mlir_rl_cli, "report", "--results", str(tmp_path), "-o",
                        str(tmp_path / "r.md")], capture_output=True, text=True,
                       cwd=readme.parent)
    assert r.returncode == 0, r.stderr
    assert "## Operator suite" in (tmp_path / "r.md").read_text()
    # Only --readme names a README to rewrite: the project's stays as it is.
    assert readme.read_text() == before
    doc = json.loads((tmp_path / "ops.json").read_text())
    del doc["host"]
    (tmp_path / "ops.json").write_text(json.dumps(doc))
    r = subprocess.run([mlir_rl_cli, "report", "--results", str(tmp_path), "-o",
                        str(tmp_path / "r.md")], capture_output=True, text=True)
    assert r.returncode == 2 and "ops.json: missing field 'host'" in r.stderr
    assert "Traceback" not in r.stderr


def test_version_names_the_five_versions(mlir_rl_cli):
    out = subprocess.run([mlir_rl_cli, "--version"], capture_output=True, text=True,
                         check=True).stdout
    lines = out.splitlines()
    assert lines[0] == f"mlir-rl {mlir_rl.__version__}"
    assert lines[1].startswith("LLVM/MLIR 22.")
    import onnxruntime
    assert lines[2].startswith(f"ONNX Runtime {onnxruntime.__version__} ")
    assert lines[3].startswith("policy 20")  # named by its date
    assert lines[4] == f"feature layout {mlir_rl.layout().hash}"


def test_report_regenerates_the_readme_overview_between_its_markers(tmp_path):
    R.save(_doc("ops"), tmp_path / "results" / "ops.json")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{R.README_BEGIN}\nstale table\n{R.README_END}\nafter\n")
    written = R.render(tmp_path / "results", tmp_path / "results.md", readme=readme)
    text = readme.read_text()
    assert readme in written and "stale table" not in text
    assert text.startswith("# x\n\nbefore\n") and text.endswith(f"{R.README_END}\nafter\n")
    # ops: mlir-rl 3.16x, PyTorch 3.16x over unscheduled (see _doc).
    assert "| operator suite (`ops`, over unscheduled) | 2 | 3.16 | - | 3.16 (PyTorch) | 1.00 |" in text
    plain = tmp_path / "PLAIN.md"
    plain.write_text("no markers\n")
    assert plain not in R.render(tmp_path / "results", tmp_path / "results.md", readme=plain)
    assert plain.read_text() == "no markers\n"


def test_torch_compile_rows_become_a_result_with_eager_as_baseline():
    from mlir_rl.bench import torch_compile as tc
    row = {"name": "resnet18", "input": [1, 3, 224, 224], "eager_ms": [10.0, 12.0, 11.0],
           "graphs": 1, "fallbacks": 0, "fallback_reasons": [],
           "mlir_rl_cached_compile_s": 0.5, "mlir_rl_cache_hits": 1}
    for label, ms, ok in (("inductor", [8.0, 8.0, 9.0], True), ("mlir_rl", [5.0, 6.0, 5.5], False)):
        row.update({f"{label}_ms": ms, f"{label}_compile_s": 20.0,
                    f"{label}_outputs_equal": ok, f"{label}_max_abs_error": 1e-5})
    doc = tc.result_document([row], runs=3, warmup=1, threads=2, search=0)
    assert doc["baseline"] == "eager" and doc["suite"] == "torch-compile"
    f = doc["kernels"][0]["figures"]
    assert f["eager"]["median_ms"] == 11.0 and f["inductor"]["min_ms"] == 8.0
    # A model whose outputs differ from eager is reported as such, never as a speedup.
    assert f["mlir-rl"]["status"] == "wrong_output" and R.speedups(doc)["resnet18"]["mlir-rl"] is None
    assert "| resnet18 | 11.00 | 8.00 | 5.50 |" in tc.markdown(doc)


def test_torch_compile_processes_merge_into_medians_of_medians():
    from mlir_rl.bench import torch_compile as tc

    def row(eager, mlir, ok=True, compile_s=20.0):
        return {"name": "bert_layer", "input": [1, 128, 768], "eager_ms": eager,
                "inductor_ms": [9.0], "mlir_rl_ms": mlir, "graphs": 1, "fallbacks": 0,
                "fallback_reasons": [], "mlir_rl_compile_s": compile_s,
                "inductor_compile_s": 30.0, "mlir_rl_cached_compile_s": 0.5,
                "mlir_rl_cache_hits": 1, "inductor_outputs_equal": True,
                "mlir_rl_outputs_equal": ok, "inductor_max_abs_error": 0.0,
                "mlir_rl_max_abs_error": 1e-6 if ok else 0.5}
    merged = tc.merge_processes([[row([10.0, 30.0, 11.0], [5.0, 5.0, 6.0])],
                                 [row([12.0], [7.0], compile_s=1.0)],
                                 [row([13.0, 14.0, 15.0], [4.0], ok=False, compile_s=1.0)]])
    assert len(merged) == 1
    m = merged[0]
    # One sample per process: its median.
    assert m["eager_ms"] == [11.0, 12.0, 14.0] and m["mlir_rl_ms"] == [5.0, 7.0, 4.0]
    # The first (cold) process's compile time; a difference in any process counts.
    assert m["mlir_rl_compile_s"] == 20.0
    assert not m["mlir_rl_outputs_equal"] and m["mlir_rl_max_abs_error"] == 0.5
    doc = tc.result_document(merged, runs=3, warmup=1, threads=2, search=0, processes=3)
    assert doc["settings"]["processes"] == 3
    assert doc["kernels"][0]["figures"]["eager"]["median_ms"] == 12.0
    # The second process's first call: what a new process pays with a warm
    # disk cache; the report shows it next to the cold compile times.
    mine = doc["kernels"][0]["figures"]["mlir-rl"]
    assert m["mlir_rl_new_process_compile_s"] == 1.0 and mine["new_process_compile_s"] == 1.0
    from mlir_rl.bench import report as R
    ok = tc.merge_processes([[row([10.0], [5.0])], [row([12.0], [7.0], compile_s=1.0)]])
    table = R.markdown_table(tc.result_document(ok, runs=1, warmup=1, threads=2, search=0,
                                                processes=2)).splitlines()
    assert table[0].endswith("| torch.compile compile s | mlir-rl compile s | "
                             "mlir-rl compile s, new process |")
    assert table[2].endswith("| 30.0 | 20.0 | 1.0 |")
    assert len(table[3].split("|")) == len(table[0].split("|"))  # the geomean row


def test_random_suites_are_named_by_their_seed():
    from mlir_rl.bench.report import suite_name, suite_title
    assert suite_name("random:1001") == "random kernels, seed 1001"
    assert "seed 1000" in suite_title("random:1000") and "reserved" in suite_title("random:1000")
    assert suite_name("ops") == "operator suite" and suite_title("nope") == "nope"
