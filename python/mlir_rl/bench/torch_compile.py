"""Whole models through ``torch.compile(model, backend="mlir_rl")`` against
eager PyTorch and ``torch.compile`` (inductor), in one process, one model at
a time (``mlir-rl bench --suite torch-compile``).

Per model: eager's output is the reference; each contender's compile time
is its first call; mlir_rl's second compile (dynamo reset, as in a new
process) is served from the disk cache, and that is checked; then the
median of ``runs`` calls after ``warmup``. Threads: ``torch.set_num_threads``
(mlir_rl follows it).
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Sequence


def default_models() -> tuple[str, ...]:
    """Every model of ``mlir_rl.data.torch_models.MODELS``."""
    from mlir_rl.data import torch_models as TM
    return tuple(TM.MODELS)


def _time(fn, xs, warmup: int, runs: int) -> list[float]:
    for _ in range(warmup):
        fn(*xs)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(*xs)
        ts.append(time.perf_counter() - t)
    return ts


def _flat(out):
    from torch.utils._pytree import tree_flatten
    return tree_flatten(out)[0]


#: --dtype: the type the models' weights and floating-point inputs are cast
#: to (their outputs' tolerance against eager's: core.output_rtol; eager
#: rounds after every op, the compilers in between).
DTYPES = ("float32", "bfloat16", "float16")


def _element_type(dtype: str) -> str:
    """The JIT's name of a torch dtype's name ("bfloat16": "bf16")."""
    import torch

    from mlir_rl import dynamo as D
    return D._dtypes()[getattr(torch, dtype)]


def suite_of(dtype: str) -> str:
    """The result document's suite: one per dtype (``mlir-rl report`` keeps
    one document per suite): torch-compile, torch-compile-bf16, ..."""
    element = _element_type(dtype)
    return "torch-compile" if element == "f32" else f"torch-compile-{element}"


def run(models: Sequence[str] = (), runs: int = 5, warmup: int = 2, threads: int = 2,
        cache_dir: str = "", search: int = 0, tuning_db: str = "",
        progress: bool = True, command: str = "", processes: int = 1,
        dtype: str = "float32") -> dict:
    """The models' rows in this process, or, with ``processes`` > 1, the
    median of each figure over that many fresh processes (each figure's
    samples are the processes' medians: one process's steady state varies
    by more than its runs do). The processes share one disk cache: the
    first compiles cold, the compile figure is its; the others load it
    (the second's is the new-process figure).
    Inductor's caches live in the same directory (cold in the first
    process too). ``dtype``: one of DTYPES, for weights and inputs alike."""
    if dtype not in DTYPES:
        raise ValueError(f"no dtype {dtype!r}; available: {', '.join(DTYPES)}")
    if processes > 1:
        return _run_processes(models, runs, warmup, threads, cache_dir, search, tuning_db,
                              progress, command, processes, dtype)
    rows = _run_rows(models, runs, warmup, threads, cache_dir, search, tuning_db, progress,
                     dtype)
    return result_document(rows, runs=runs, warmup=warmup, threads=threads, search=search,
                           command=command, dtype=dtype)


def _run_processes(models, runs, warmup, threads, cache_dir, search, tuning_db, progress,
                   command, processes, dtype) -> dict:
    import json
    import subprocess
    import sys
    tmp = None
    if not cache_dir:
        tmp = tempfile.TemporaryDirectory(prefix="mlir-rl-tc-cache-")
        cache_dir = tmp.name
    per_process = []
    for p in range(processes):
        args = {"models": list(models), "runs": runs, "warmup": warmup, "threads": threads,
                "cache_dir": cache_dir, "search": search, "tuning_db": tuning_db,
                "dtype": dtype}
        r = subprocess.run([sys.executable, "-m", "mlir_rl.bench.torch_compile",
                            json.dumps(args)], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"torch-compile process {p + 1} of {processes} failed:\n"
                               f"{r.stderr[-3000:]}")
        rows = json.loads(r.stdout.strip().splitlines()[-1])
        per_process.append(rows)
        if progress:
            for row in rows:
                print(f"[process {p + 1}/{processes}] {_line(row)}", flush=True)
    if tmp:
        tmp.cleanup()
    rows = merge_processes(per_process)
    return result_document(rows, runs=runs, warmup=warmup, threads=threads, search=search,
                           command=command, processes=processes, dtype=dtype)


def merge_processes(per_process: list[list[dict]]) -> list[dict]:
    """One row per model from each process's rows: each timing list
    becomes the processes' medians, the outputs equal only if equal in
    every process, the compile figures the first (cold) process's."""
    merged = []
    for i, first in enumerate(per_process[0]):
        rows = [rows[i] for rows in per_process]
        row = dict(first)
        for key in ("eager_ms", "inductor_ms", "mlir_rl_ms"):
            row[key] = [_med(r[key]) for r in rows]
        for label in ("inductor", "mlir_rl"):
            row[f"{label}_outputs_equal"] = all(r[f"{label}_outputs_equal"] for r in rows)
            row[f"{label}_max_abs_error"] = max(r[f"{label}_max_abs_error"] for r in rows)
        row["fallbacks"] = max(r["fallbacks"] for r in rows)
        if len(rows) > 1:
            # The second process found the first's disk cache: its first
            # call is what a new process pays for a graph compiled before.
            row["mlir_rl_new_process_compile_s"] = rows[1]["mlir_rl_compile_s"]
        merged.append(row)
    return merged


def _run_rows(models: Sequence[str], runs: int, warmup: int, threads: int, cache_dir: str,
              search: int, tuning_db: str, progress: bool,
              dtype: str = "float32") -> list[dict]:
    import os

    import torch

    from mlir_rl import dynamo as D
    from mlir_rl.core import outputs_match
    from mlir_rl.data import torch_models as TM

    models = tuple(models) or default_models()
    unknown = [m for m in models if m not in TM.MODELS]
    if unknown:
        raise ValueError(f"no model {', '.join(unknown)}; available: {', '.join(TM.MODELS)}")
    torch.set_num_threads(threads)
    tmp = None
    if not cache_dir:
        tmp = tempfile.TemporaryDirectory(prefix="mlir-rl-tc-cache-")
        cache_dir = tmp.name
    os.environ["MLIR_RL_CACHE_DIR"] = cache_dir
    # Inductor's caches beside ours, as fresh: its compile figure was a
    # warm one (0.2-2.6 s) from the caches earlier runs left in /tmp.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cache_dir) / "inductor")
    backend = D.make_backend(search=search, tuning_db=tuning_db, cache_dir=cache_dir)
    rows = []
    from mlir_rl.core import output_rtol
    torch_dtype, rtol = getattr(torch, dtype), output_rtol([_element_type(dtype)], 1e-3)
    for name in models:
        model = TM.build(name).to(torch_dtype)
        xs = tuple(x.to(torch_dtype) if x.is_floating_point() else x
                   for x in TM.example_inputs(name))
        row = {"name": name, "input": list(xs[0].shape) if len(xs) == 1
               else [list(x.shape) for x in xs]}
        with torch.no_grad():
            ref = [r.double().numpy() for r in _flat(model(*xs))]
            time.sleep(0.5)  # the JIT's OpenMP threads of the last model stop spinning
            row["eager_ms"] = [t * 1e3 for t in _time(model, xs, warmup, runs)]
            for label, make in (("inductor", lambda: torch.compile(model)),
                                ("mlir_rl", lambda: torch.compile(model, backend=backend))):
                torch._dynamo.reset()
                before = (D.stats.compiled, D.stats.disk_hits, D.stats.fallbacks)
                f = make()
                t = time.perf_counter()
                out = f(*xs)
                row[f"{label}_compile_s"] = time.perf_counter() - t
                ok, err = outputs_match([o.double().numpy() for o in _flat(out)], ref,
                                        rtol=rtol, atol_scale=rtol)
                row[f"{label}_outputs_equal"] = ok
                row[f"{label}_max_abs_error"] = err
                if label == "mlir_rl":
                    row["graphs"] = D.stats.compiled - before[0] + D.stats.disk_hits - before[1]
                    row["fallbacks"] = D.stats.fallbacks - before[2]
                    row["fallback_reasons"] = D.stats.reasons[before[2]:]
                    torch._dynamo.reset()
                    hits = D.stats.disk_hits
                    f = make()
                    t = time.perf_counter()
                    f(*xs)
                    row["mlir_rl_cached_compile_s"] = time.perf_counter() - t
                    row["mlir_rl_cache_hits"] = D.stats.disk_hits - hits
                row[f"{label}_ms"] = [t * 1e3 for t in _time(f, xs, warmup, runs)]
                time.sleep(0.5)
        torch._dynamo.reset()
        rows.append(row)
        if progress:
            print(_line(row), flush=True)
    if tmp:
        tmp.cleanup()
    return rows


def result_document(rows: list[dict], runs: int, warmup: int, threads: int, search: int,
                    command: str = "", processes: int = 1, dtype: str = "float32") -> dict:
    """The models' rows as a result document (bench/report.py's schema):
    eager is the baseline; compile times and the disk cache's figures stay
    with each model's figures."""
    import torch

    from mlir_rl.bench import report as R
    kernels = []
    for r in rows:
        figures = {"eager": R.figure("ok", [t / 1e3 for t in r["eager_ms"]])}
        for label, name in (("inductor", "inductor"), ("mlir_rl", "mlir-rl")):
            extra = {"compile_s": r[f"{label}_compile_s"]}
            if label == "mlir_rl":
                extra.update(cached_compile_s=r["mlir_rl_cached_compile_s"],
                             cache_hits=r["mlir_rl_cache_hits"])
                if "mlir_rl_new_process_compile_s" in r:
                    extra["new_process_compile_s"] = r["mlir_rl_new_process_compile_s"]
            figures[name] = R.figure("ok" if r[f"{label}_outputs_equal"] else "wrong_output",
                                     [t / 1e3 for t in r[f"{label}_ms"]],
                                     f"max abs error {r[f'{label}_max_abs_error']:.2g}", **extra)
        kernels.append({"name": r["name"], "input": r["input"], "runs": runs,
                        "graphs": r["graphs"], "fallbacks": r["fallbacks"],
                        "fallback_reasons": r["fallback_reasons"], "figures": figures})
    return R.new_result(suite_of(dtype), "eager", ["eager", "inductor", "mlir-rl"], kernels,
                        threads, command=command,
                        settings={"runs": runs, "warmup": warmup, "search": search,
                                  "processes": processes, "dtype": dtype,
                                  "torch": torch.__version__})


def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def _line(r: dict) -> str:
    e, i, m = _med(r["eager_ms"]), _med(r["inductor_ms"]), _med(r["mlir_rl_ms"])
    return (f"{r['name']:<13} eager {e:8.2f} ms  inductor {i:8.2f} ms  mlir_rl {m:8.2f} ms  "
            f"vs eager {e / m:5.2f}x  vs inductor {i / m:5.2f}x  "
            f"compile {r['mlir_rl_compile_s']:.0f} s (cached {r['mlir_rl_cached_compile_s']:.1f} s, "
            f"{r['mlir_rl_cache_hits']} hits)  outputs "
            f"{'equal' if r['mlir_rl_outputs_equal'] else 'DIFFER'}  fallbacks {r['fallbacks']}")


def markdown(report: dict) -> str:
    lines = ["| model | eager ms | inductor ms | mlir_rl ms | vs eager | vs inductor | "
             "mlir_rl compile s | cached s | outputs |",
             "|---|---|---|---|---|---|---|---|---|"]
    for k in report["kernels"]:
        f = k["figures"]
        e, i, m = (f[c].get("median_ms", float("nan")) for c in ("eager", "inductor", "mlir-rl"))
        lines.append(f"| {k['name']} | {e:.2f} | {i:.2f} | {m:.2f} | {e / m:.2f}x | {i / m:.2f}x | "
                     f"{f['mlir-rl']['compile_s']:.0f} | {f['mlir-rl']['cached_compile_s']:.1f} | "
                     f"{'equal' if f['mlir-rl']['status'] == 'ok' else 'differ'}"
                     f"{'' if not k['fallbacks'] else ', %d eager' % k['fallbacks']} |")
    return "\n".join(lines)


def save(report: dict, out_dir: str | Path) -> Path:
    from mlir_rl.bench import report as R
    out = Path(out_dir)
    R.save(report, out / "bench.json")
    (out / "bench.md").write_text(markdown(report) + "\n")
    return out


if __name__ == "__main__":
    # One process of run(processes=N): the rows as JSON on the last line.
    import json
    import sys
    _args = json.loads(sys.argv[1])
    _rows = _run_rows(_args["models"], _args["runs"], _args["warmup"], _args["threads"],
                      _args["cache_dir"], _args["search"], _args["tuning_db"], progress=False,
                      dtype=_args.get("dtype", "float32"))
    print(json.dumps(_rows))
