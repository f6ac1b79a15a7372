"""Benchmark results: one JSON schema, and the report rendered from it.

Every benchmark ``mlir-rl bench`` runs (a file, a suite against its peers,
whole models through torch.compile) is written as one *result document*::

    {"schema": "mlir-rl-result/1",
     "suite": "ops",                       # or "torch-compile", "file:NAME"
     "version": "0.3.0", "commit": "1a2b3c4", "date": "2026-11-28T12:00:00Z",
     "command": "mlir-rl bench --suite ops --threads 2",
     "host": {"name": ..., "cpu": "AMD EPYC", "vector_isa": "avx512f",
              "cpus": 2, "machine": "x86_64", "legality": ...},
     "threads": 2,
     "policy": {"version": "2026-11-26", "layout_hash": ...},
     "baseline": "unscheduled",           # the contender speedups are over
     "contenders": ["unscheduled", "mlir-rl", "torch", ...],
     "settings": {...},                   # runs, warm-up, what the suite ran with
     "kernels": [{"name": ..., "schedule": ..., "runs": 5,
                  "figures": {"mlir-rl": {"status": "ok", "median_ms": 1.2,
                                          "min_ms": 1.1, "max_ms": 1.4,
                                          "detail": "..."}, ...}}]}

Suites and file benchmarks also carry the roofline (bench/roofline.py):
``"roofline"`` (the host's FMA peak, L2/L3/DRAM bandwidth and caches), each
kernel's ``"work"`` (``flops``, ``bytes`` of its arguments and results, the
``level`` they fit in) and, in each figure with times, ``gflops``, ``gbs``,
``bound`` and ``fraction`` (of the bound); older documents without them
render as before.

A figure's ``status`` is ``ok`` (then the three times are there),
``wrong_output``, ``failed`` or ``n/a``; a contender that failed is reported,
never dropped. ``mlir-rl report`` reads the current document of each suite
from docs/results/ and renders docs/results.md (one table per suite) and a
plot per suite; a document missing a field is an error that names the file
and the field. The history of figures is git's: a suite's document is
replaced, not accumulated.
"""
from __future__ import annotations

import base64
import datetime
import json
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from mlir_rl.stats import geomean

SCHEMA = "mlir-rl-result/1"

# Display names of contenders (others are shown as they are).
LABELS = {"unscheduled": "unscheduled", "mlir-rl": "mlir-rl", "mlir-rl-search": "mlir-rl search",
          "mlir-rl-heuristic": "heuristic", "mlir-rl-random": "random decisions",
          "torch": "PyTorch", "inductor": "torch.compile", "iree": "IREE", "numpy": "numpy",
          "iree-spec": "IREE + mlir-rl spec", "eager": "PyTorch eager"}

# Field -> type, for the document, its host, its kernels and their figures.
_TOP = {"schema": str, "suite": str, "version": str, "commit": str, "date": str,
        "command": str, "host": dict, "threads": int, "policy": dict, "baseline": str,
        "contenders": list, "settings": dict, "kernels": list}
_HOST = {"name": str, "cpu": str, "vector_isa": str, "cpus": int, "machine": str}
_POLICY = {"version": str, "layout_hash": str}
_KERNEL = {"name": str, "figures": dict}
_FIGURE_STATUSES = ("ok", "wrong_output", "failed", "n/a")
_TIMES = ("median_ms", "min_ms", "max_ms")


class ResultError(ValueError):
    """A result document that does not follow the schema."""


# -- What a document records about where it was measured ----------------------

def _cpuinfo(key: str) -> Optional[str]:
    """The value of the first ``key`` line of /proc/cpuinfo, if any."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def vector_isa() -> str:
    """The widest x86 vector extension the CPU reports (avx512f, avx2, avx,
    sse2), else the machine: the same schedule runs 2-3x slower on an AVX2
    host than on an AVX-512 one (16 vector registers, 8 floats each: an 8x32
    matmul tile spills its accumulators), and "AMD EPYC" names both."""
    flags = set((_cpuinfo("flags") or "").split())
    for isa in ("avx512f", "avx2", "avx", "sse2"):
        if isa in flags:
            return isa
    return platform.machine()


def host_info() -> dict:
    import mlir_rl
    return {"name": platform.node(), "cpu": cpu_model(), "vector_isa": vector_isa(),
            "cpus": os.cpu_count() or 1, "machine": platform.machine(),
            # what the pass scheduled for (V's register file can be
            # overridden: MLIR_RL_VECTOR_REGISTERS), not the CPU
            "legality": mlir_rl.legality()["description"]}


# What a measurement depends on: a change elsewhere (docs) leaves it clean.
_CODE_PATHS = ("cpp", "python", "models/policy.onnx", "CMakeLists.txt", "pyproject.toml")


def git_commit(root: Optional[Path] = None) -> str:
    """The checkout's commit (with ``-dirty`` when its code has uncommitted
    changes), or ``unknown`` outside a git checkout (an installed wheel)."""
    root = root or Path(__file__).resolve().parents[3]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode:
            return "unknown"
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "--", *_CODE_PATHS],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def new_result(suite: str, baseline: str, contenders: Iterable[str], kernels: list[dict],
               threads: int, settings: dict, command: str = "", model: str = "") -> dict:
    """A result document for ``kernels`` (each ``{"name", "figures", ...}``),
    stamped with the package version, the commit, the date, the host and
    the policy; validated before it is returned."""
    import mlir_rl
    from mlir_rl.versions import policy_info
    policy = policy_info(model)
    doc = {"schema": SCHEMA, "suite": suite, "version": mlir_rl.__version__,
           "commit": git_commit(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": command, "host": host_info(), "threads": threads,
           "policy": {"version": policy["version"], "layout_hash": policy["layout_hash"],
                      "file": model or "(shipped)"},
           "baseline": baseline, "contenders": list(contenders), "settings": settings,
           "kernels": kernels}
    validate(doc)
    searched = search_figures(doc)
    if searched:
        doc["search"] = searched
    return doc


def figure(status: str, seconds: Optional[list[float]] = None, detail: str = "", **extra) -> dict:
    """A figure from the seconds of each timed call (median, min, max in ms)."""
    f = {"status": status, "detail": detail, **extra}
    if seconds:
        ms = sorted(s * 1e3 for s in seconds)
        n = len(ms)
        f.update(median_ms=(ms[n // 2] if n % 2 else (ms[n // 2 - 1] + ms[n // 2]) / 2),
                 min_ms=ms[0], max_ms=ms[-1])
    return f


# -- Validation ------------------------------------------------------------------

def _check_fields(obj, fields: dict, where: str, source: str) -> None:
    if not isinstance(obj, dict):
        raise ResultError(f"{source}: {where or 'the document'} is not an object")
    for key, typ in fields.items():
        path = f"{where}.{key}" if where else key
        if key not in obj:
            raise ResultError(f"{source}: missing field '{path}'")
        value = obj[key]
        ok = isinstance(value, typ) and not (typ is int and isinstance(value, bool))
        if typ is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise ResultError(f"{source}: field '{path}' should be {typ.__name__}, "
                              f"not {type(value).__name__}")


def validate(doc, source: str = "result") -> dict:
    """``doc`` if it follows the schema, else ResultError naming ``source``
    and the first field that is missing or of the wrong type."""
    _check_fields(doc, _TOP, "", source)
    if doc["schema"] != SCHEMA:
        raise ResultError(f"{source}: schema {doc['schema']!r} is not {SCHEMA!r}")
    _check_fields(doc["host"], _HOST, "host", source)
    _check_fields(doc["policy"], _POLICY, "policy", source)
    if doc["baseline"] not in doc["contenders"]:
        raise ResultError(f"{source}: the baseline {doc['baseline']!r} is not one of the "
                          f"contenders {doc['contenders']}")
    if not doc["kernels"]:
        raise ResultError(f"{source}: no kernels")
    for i, k in enumerate(doc["kernels"]):
        _check_fields(k, _KERNEL, f"kernels[{i}]", source)
        for c, f in k["figures"].items():
            where = f"kernels[{i}].figures.{c}"
            if c not in doc["contenders"]:
                raise ResultError(f"{source}: {where}: {c!r} is not a contender")
            _check_fields(f, {"status": str}, where, source)
            if f["status"] not in _FIGURE_STATUSES:
                raise ResultError(f"{source}: {where}.status {f['status']!r} is not one of "
                                  f"{', '.join(_FIGURE_STATUSES)}")
            if f["status"] == "ok":
                _check_fields(f, dict.fromkeys(_TIMES, float), where, source)
    return doc


def load(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ResultError(f"{path}: not JSON: {e}") from None
    return validate(doc, str(path))


def save(doc: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(validate(doc, str(path)), indent=2) + "\n")
    return path


# -- Figures derived from a document ----------------------------------------------

def _median(kernel: dict, contender: str) -> Optional[float]:
    f = kernel["figures"].get(contender)
    return f["median_ms"] if f and f["status"] == "ok" else None


def speedups(doc: dict) -> dict[str, dict[str, Optional[float]]]:
    """kernel -> contender -> speedup over the baseline (None: no figure)."""
    out = {}
    for k in doc["kernels"]:
        base = _median(k, doc["baseline"])
        out[k["name"]] = {c: (base / m if base and (m := _median(k, c)) else None)
                          for c in doc["contenders"]}
    return out


def peers(doc: dict) -> list[str]:
    """The contenders that are neither the baseline nor mlir-rl's own."""
    return [c for c in doc["contenders"] if c != doc["baseline"] and not c.startswith("mlir-rl")]


@dataclass
class Geomeans:
    """Geomean speedups over the baseline, over the kernels where every
    contender that applies to every kernel has a figure (``kernels`` of
    them). A contender with no equivalent for some kernels (numpy has no
    convolution: ``n/a``) does not shrink that set: its geomean is over the
    part of it where it has figures, and ``partial`` says how many."""

    values: dict[str, float]
    kernels: int
    partial: dict[str, int]

    def complete(self, contender: str) -> bool:
        return contender in self.values and contender not in self.partial


def geomeans(doc: dict) -> Geomeans:
    sp = speedups(doc)
    shown = [c for c in doc["contenders"] if any(sp[k][c] for k in sp)]
    not_applicable = {c for c in shown for k in doc["kernels"]
                      if k["figures"].get(c, {}).get("status") == "n/a"}
    usable = [k for k in sp if all(sp[k][c] for c in shown if c not in not_applicable)]
    values, partial = {}, {}
    for c in shown:
        have = [sp[k][c] for k in usable if sp[k][c]]
        values[c] = geomean(have)
        if c in not_applicable:
            partial[c] = len(have)
    return Geomeans(values, len(usable), partial)


def _label(c: str) -> str:
    return LABELS.get(c, c)


def _fmt(x: Optional[float]) -> str:
    """A speedup or ratio: two decimals below 10, fewer above."""
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def _fmt_ms(ms: float) -> str:
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def markdown_table(doc: dict) -> str:
    """Per kernel: the baseline's time, each contender's speedup over it,
    mlir-rl against the best peer; a geomean row."""
    sp = speedups(doc)
    base = doc["baseline"]
    shown = [c for c in doc["contenders"] if c != base and any(sp[k][c] for k in sp)]
    others = peers(doc)
    mine = "mlir-rl" if "mlir-rl" in shown else None
    head = [f"{_label(base)} ms"] + [f"{_label(c)} ×" for c in shown]
    if mine and others:
        head.append("mlir-rl vs best peer")
    # The roofline (bench/roofline.py): mlir-rl's rates and the fraction of
    # the host's bound it reaches, and the fastest peer's fraction.
    roof = bool(mine and doc.get("roofline") and any("work" in k for k in doc["kernels"]))
    if roof:
        head += ["mlir-rl GFLOP/s", "mlir-rl GB/s", "mlir-rl of bound"]
        if others:
            head.append("best peer of bound")
    # Compile times, where the document has them (the torch-compile suite):
    # each contender's first call, and mlir-rl's in a new process that
    # finds the disk cache.
    compiled = [c for c in shown
                if any("compile_s" in k["figures"].get(c, {}) for k in doc["kernels"])]
    fresh = mine in compiled and any("new_process_compile_s" in k["figures"].get(mine, {})
                                     for k in doc["kernels"])
    head += [f"{_label(c)} compile s" for c in compiled]
    if fresh:
        head.append("mlir-rl compile s, new process")
    lines = ["| kernel | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for k in doc["kernels"]:
        row = sp[k["name"]]
        base_ms = _median(k, base)
        cells = [_fmt_ms(base_ms) if base_ms else k["figures"].get(base, {}).get("status", "-")]
        for c in shown:
            f = k["figures"].get(c)
            cells.append(_fmt(row[c]) if row[c] else (f["status"] if f else "-"))
        if mine and others:
            best = [row[c] for c in others if row[c]]
            cells.append(f"{row[mine] / max(best):.2f}" if best and row[mine] else "-")
        if roof:
            f = k["figures"].get(mine, {})
            if "fraction" in f:
                cells += [f"{f['gflops']:.1f}", f"{f['gbs']:.1f}",
                          f"{100 * f['fraction']:.0f}% {f['bound']}"]
            else:
                cells += ["-"] * 3
            if others:
                fastest = min((k["figures"][c] for c in others
                               if "fraction" in k["figures"].get(c, {})),
                              key=lambda f: f["median_ms"], default=None)
                cells.append(f"{100 * fastest['fraction']:.0f}%" if fastest else "-")
        for c in compiled:
            t = k["figures"].get(c, {}).get("compile_s")
            cells.append(f"{t:.1f}" if t is not None else "-")
        if fresh:
            t = k["figures"][mine].get("new_process_compile_s")
            cells.append(f"{t:.1f}" if t is not None else "-")
        lines.append(f"| {k['name']} | " + " | ".join(cells) + " |")
    g = geomeans(doc)
    cells = [""]
    for c in shown:
        value = _fmt(g.values.get(c)) if g.values.get(c) else "-"
        cells.append(f"{value} (on {g.partial[c]})" if c in g.partial else value)
    if mine and others:
        best = [g.values[c] for c in others if g.complete(c) and g.values[c]]
        cells.append(f"{g.values[mine] / max(best):.2f}"
                     if best and g.values.get(mine) else "-")
    if roof:
        cells += [""] * (4 if others else 3)
    cells += [""] * (len(compiled) + fresh)
    lines.append(f"| **geomean** ({g.kernels} of {len(doc['kernels'])} kernels) | "
                 + " | ".join(cells) + " |")
    if roof:
        from mlir_rl.bench.roofline import describe
        lines += ["", f"Of bound: the time at the host's limit for the kernel's work (its "
                  f"arithmetic at the FMA peak, or its arguments' and results' bytes at the "
                  f"bandwidth of the level they fit in, whichever is longer) over the measured "
                  f"time; {describe(doc['roofline'])}."]
    return "\n".join(lines)


def plot(doc: dict, path: str | Path) -> Path:
    """Speedup over the baseline per kernel and contender, log scale (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    sp = speedups(doc)
    names = [k["name"] for k in doc["kernels"]]
    shown = [c for c in doc["contenders"] if c != doc["baseline"] and any(sp[k][c] for k in sp)]
    roof = doc.get("roofline") and any("work" in k for k in doc["kernels"])
    width_in = max(8.0, 0.9 * len(names) + 3)
    if roof:
        fig, (ax, rax) = plt.subplots(1, 2, figsize=(width_in + 5, 4.8),
                                      gridspec_kw={"width_ratios": [width_in, 5]})
        _roofline_axes(doc, rax, shown)
    else:
        fig, ax = plt.subplots(figsize=(width_in, 4.8))
    width = 0.8 / max(1, len(shown))
    for i, c in enumerate(shown):
        vals = [sp[n][c] or 0.0 for n in names]
        ax.bar(np.arange(len(names)) + i * width, vals, width, label=_label(c))
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel(f"speedup over {_label(doc['baseline'])} (log)")
    ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2)
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.legend(fontsize=8, ncol=min(len(shown), 4))
    h = doc["host"]
    ax.set_title(f"{doc['suite']}: mlir-rl {doc['version']}, {doc['date'][:10]}, {h['cpu']} "
                 f"({h['vector_isa']}), {doc['threads']} threads", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _roofline_axes(doc: dict, ax, shown: list[str]) -> None:
    """Log-log roofline: GFLOP/s against arithmetic intensity (FLOP per byte
    of arguments and results), the host's FMA peak and each level's
    bandwidth as roofs, a point per kernel for mlir-rl and the fastest
    peer."""
    import numpy as np
    r = doc["roofline"]
    works = [k["work"] for k in doc["kernels"] if "work" in k and k["work"]["bytes"]]
    if not works:
        return
    ai = [w["flops"] / w["bytes"] for w in works if w["flops"]] or [1.0]
    x = np.logspace(np.log10(max(min(ai) / 4, 1e-3)), np.log10(max(ai) * 4), 200)
    for level, bw in r["bandwidth_gbs"].items():
        ax.plot(x, np.minimum(r["fma_gflops"], bw * x), linewidth=0.8, label=f"{level} roof")
    others = [c for c in shown if not c.startswith("mlir-rl")]
    for c, marker in (("mlir-rl", "o"), ("best peer", "x")):
        pts = []
        for k in doc["kernels"]:
            w = k.get("work")
            if not w or not w["flops"] or not w["bytes"]:
                continue
            if c == "mlir-rl":
                f = k["figures"].get("mlir-rl", {})
            else:
                f = min((k["figures"][o] for o in others if "gflops" in k["figures"].get(o, {})),
                        key=lambda f: f["median_ms"], default={})
            if "gflops" in f:
                pts.append((w["flops"] / w["bytes"], f["gflops"]))
        if pts:
            ax.scatter(*zip(*pts), marker=marker, s=22, label=c)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per byte of arguments and results")
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=7)
    ax.set_title(f"roofline ({r['threads']} threads)", fontsize=9)


# -- The report --------------------------------------------------------------------

SUITE_TITLES = {
    "ops": "Operator suite: the paper's operators at real-model shapes",
    "unseen": "Unseen kernels: ops of real models outside the training data",
    "fresh": "A second unseen set, at shapes no other suite or split uses",
    "models": "Whole models imported with torch-mlir, through the pass (its default pipeline) and the lowering",
    "torch-compile": "Whole models through torch.compile(backend=\"mlir_rl\")",
    "torch-compile-bf16": "Whole models in bfloat16 through torch.compile(backend=\"mlir_rl\")",
    "torch-compile-f16": "Whole models in float16 through torch.compile(backend=\"mlir_rl\")",
}


# Short names for the README's overview table.
SUITE_NAMES = {"ops": "operator suite", "unseen": "unseen kernels",
               "fresh": "second unseen set", "models": "whole models (torch-mlir, the pass)",
               "torch-compile": "torch.compile(backend=\"mlir_rl\")",
               "torch-compile-bf16": "torch.compile(backend=\"mlir_rl\"), bf16",
               "torch-compile-f16": "torch.compile(backend=\"mlir_rl\"), f16"}


def suite_title(suite: str) -> str:
    """A section's title: SUITE_TITLES's, or a random suite's by its seed."""
    if suite.startswith("random:"):
        return (f"Random kernels drawn from seed {suite.split(':', 1)[1]} (reserved for "
                "evaluation: no training data comes from it)")
    return SUITE_TITLES.get(suite, suite)


def suite_name(suite: str) -> str:
    """A suite's short name in the overview table."""
    if suite.startswith("random:"):
        return f"random kernels, seed {suite.split(':', 1)[1]}"
    return SUITE_NAMES.get(suite, suite)


def _order(doc: dict) -> tuple[int, str]:
    keys = list(SUITE_TITLES)
    return (keys.index(doc["suite"]) if doc["suite"] in keys else len(keys), doc["suite"])


def _stem(doc: dict) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in doc["suite"])


def _header(doc: dict) -> str:
    h = doc["host"]
    return (f"mlir-rl {doc['version']} (commit `{doc['commit']}`), measured "
            f"{doc['date'][:10]} on {h['cpu']} ({h['vector_isa']}, {h['cpus']} cpus), "
            f"{doc['threads']} threads; policy {doc['policy']['version']}. "
            f"Reproduce: `{doc['command'] or 'mlir-rl bench --suite ' + doc['suite']}`.")


def _notes(doc: dict) -> list[str]:
    """Figures that are not ok, named, so that no failure hides in a dash."""
    notes = []
    for k in doc["kernels"]:
        for c, f in k["figures"].items():
            if f["status"] != "ok" and f["status"] != "n/a":
                notes.append(f"- {k['name']}, {_label(c)}: {f['status']}"
                             + (f" ({f.get('detail', '')[:160]})" if f.get("detail") else ""))
    return notes


def render(results_dir: str | Path, output: str | Path, html: Optional[str | Path] = None,
           intro: str = "", readme: Optional[str | Path] = None) -> list[Path]:
    """docs/results.md (``output``) and a PNG per suite beside the result
    documents, from every ``*.json`` in ``results_dir``; with ``html``, the
    same as one HTML page with the plots inline; with ``readme``, its
    overview table (between its markers). Returns the files written."""
    results_dir, output = Path(results_dir), Path(output)
    files = sorted(results_dir.glob("*.json"))
    if not files:
        raise ResultError(f"{results_dir}: no result files (*.json); write them with "
                          "`mlir-rl bench --suite NAME --json {results_dir}/NAME.json`")
    docs = sorted((load(f) for f in files), key=_order)
    suites = [d["suite"] for d in docs]
    dup = {s for s in suites if suites.count(s) > 1}
    if dup:
        raise ResultError(f"{results_dir}: more than one result file for {sorted(dup)}: keep "
                          "the current one per suite (the history is git's)")
    written = []
    md = ["# Results", "",
          "<!-- Generated by `mlir-rl report` from docs/results/*.json: edit those "
          "(by running the benchmarks), not this file. -->", ""]
    if intro:
        md += [intro, ""]
    md += [overview_table(docs), ""]
    sections = []
    for doc in docs:
        png = plot(doc, results_dir / f"{_stem(doc)}.png")
        written.append(png)
        title = suite_title(doc["suite"])
        body = [_header(doc), "", markdown_table(doc)]
        searched = search_line(doc)
        if searched:
            body += ["", searched + "."]
        notes = _notes(doc)
        if notes:
            body += ["", "Not ok:"] + notes
        sections.append((doc, title, body, png))
        rel = os.path.relpath(png, output.parent)
        md += [f"## {title} (`{doc['suite']}`)", "", *body, "", f"![{doc['suite']}]({rel})", ""]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(md))
    written.insert(0, output)
    if html:
        written.append(_render_html(sections, Path(html), intro))
    if readme and update_readme(readme, docs):
        written.append(Path(readme))
    return written


def overview_table(docs: list[dict]) -> str:
    """One row per suite: mlir-rl's geomean speedup over the baseline, the
    heuristic decisions' through the same pipeline (where the suite ran
    them), the best peer's, and mlir-rl over the best peer (the README's
    table)."""
    lines = ["| suite | kernels | mlir-rl × | heuristic × | best peer × | mlir-rl vs best peer |",
             "|---|---|---|---|---|---|"]
    for doc in sorted(docs, key=_order):
        g = geomeans(doc)
        best = max(((g.values[c], c) for c in peers(doc) if g.complete(c) and g.values[c]),
                   default=None)
        mine = g.values.get("mlir-rl")
        lines.append(
            f"| {suite_name(doc['suite'])} (`{doc['suite']}`, "
            f"over {_label(doc['baseline'])}) | {g.kernels} | {_fmt(mine)} | "
            f"{_fmt(g.values.get('mlir-rl-heuristic'))} | "
            + (f"{_fmt(best[0])} ({_label(best[1])})" if best else "-") + " | "
            + (f"{mine / best[0]:.2f}" if best and mine else "-") + " |")
    hosts = sorted({f"{d['host']['cpu']} ({d['host']['vector_isa']}), {d['threads']} threads"
                    for d in docs})
    versions = sorted({f"{d['version']} ({d['date'][:10]})" for d in docs})
    lines += ["", f"mlir-rl {', '.join(versions)}; {'; '.join(hosts)}; geomeans over the "
                  "kernels where every peer that has an equivalent ran."]
    return "\n".join(lines)


README_BEGIN = "<!-- results:begin (mlir-rl report) -->"
README_END = "<!-- results:end -->"


def update_readme(readme: str | Path, docs: list[dict]) -> bool:
    """Replace the README's overview table between its markers; False when
    it has none (nothing is written)."""
    path = Path(readme)
    text = path.read_text()
    if README_BEGIN not in text or README_END not in text:
        return False
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_BEGIN}\n{overview_table(docs)}\n{README_END}{tail}")
    return True


def _render_html(sections, path: Path, intro: str) -> Path:
    import html as H
    import re

    def cell_html(text: str) -> str:
        text = H.escape(text)
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", text)

    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>mlir-rl results</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;"
             "text-align:right}td:first-child{text-align:left}</style></head><body>",
             "<h1>mlir-rl results</h1>"]
    if intro:
        parts.append(f"<p>{cell_html(intro)}</p>")
    for doc, title, body, png in sections:
        parts.append(f"<h2>{H.escape(title)}</h2>")
        for line in body:
            if line.startswith("|---"):
                continue
            if line.startswith("| "):
                cells = [c.strip() for c in line.strip("|").split("|")]
                tag = "th" if line.startswith("| kernel |") else "td"
                parts.append("<tr>" + "".join(f"<{tag}>{cell_html(c)}</{tag}>" for c in cells)
                             + "</tr>")
            elif line:
                parts.append(f"<p>{cell_html(line)}</p>")
        data = base64.b64encode(png.read_bytes()).decode()
        parts.append(f"<img alt='{H.escape(doc['suite'])}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    html = "\n".join(parts)
    html = re.sub(r"(<tr>.*?</tr>\n?)+", lambda m: f"<table>{m.group(0)}</table>", html,
                  flags=re.S)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html)
    return path


# A kernel on which mlir-rl's greedy schedule takes this many times the best
# peer's time or more "trails": where search has most to find.
TRAILING = 1.3


def search_figures(doc: dict) -> Optional[dict]:
    """Search (``mlir-rl-search``) against the greedy policy (``mlir-rl``),
    from the figures: per kernel the greedy time over the search's (> 1:
    search is faster), the lowest, the geomean over every kernel with both,
    and the same geomean over the kernels where greedy trails the best peer
    by TRAILING or more (named). None without both contenders."""
    if "mlir-rl-search" not in doc["contenders"] or "mlir-rl" not in doc["contenders"]:
        return None
    others = peers(doc)
    ratios, trailing = {}, []
    for k in doc["kernels"]:
        greedy, tuned = _median(k, "mlir-rl"), _median(k, "mlir-rl-search")
        if not (greedy and tuned):
            continue
        ratios[k["name"]] = greedy / tuned
        best = [m for c in others if (m := _median(k, c))]
        if best and greedy >= TRAILING * min(best):
            trailing.append(k["name"])
    if not ratios:
        return None
    low = min(ratios, key=ratios.get)
    return {"over_greedy": ratios, "geomean": geomean(list(ratios.values())),
            "lowest": ratios[low], "lowest_kernel": low,
            "trailing_by": TRAILING, "trailing_kernels": trailing,
            "trailing_geomean": (geomean([ratios[n] for n in trailing]) if trailing else None)}


def search_line(doc: dict) -> str:
    """One line on search against greedy ("" without search)."""
    f = doc.get("search") or search_figures(doc)
    if not f:
        return ""
    line = (f"search over greedy: geomean {f['geomean']:.2f}x, lowest {f['lowest']:.2f}x "
            f"({f['lowest_kernel']})")
    if f["trailing_kernels"]:
        line += (f"; on the {len(f['trailing_kernels'])} kernels where greedy trails the best "
                 f"peer by {f['trailing_by']}x or more ({', '.join(f['trailing_kernels'])}): "
                 f"{f['trailing_geomean']:.2f}x")
    else:
        line += f"; greedy trails the best peer by {f['trailing_by']}x or more on no kernel"
    return line


def summary(doc: dict) -> str:
    """Geomean speedups over the baseline, one line per contender."""
    g = geomeans(doc)
    lines = [f"geomean speedup over {_label(doc['baseline'])} ({g.kernels} of "
             f"{len(doc['kernels'])} kernels where every contender that applies ran):"]
    sp = speedups(doc)
    for c, value in g.values.items():
        if c == doc["baseline"]:
            continue
        lowest = min((s[c] for s in sp.values() if s[c]), default=0.0)
        lines.append(f"  {_label(c):<20} {value:7.2f}x (lowest {lowest:.2f}x)"
                     + (f" on the {g.partial[c]} it applies to" if c in g.partial else ""))
    searched = search_line(doc)
    if searched:
        lines.append(searched)
    return "\n".join(lines)
