#!/usr/bin/env python3
"""Where a scheduled program spends its time, op by op (a developer's aid).

    scripts/profile_ops.py FILE [--prepare] [--schedule S | --scheduled] [--iters N] [--threads T] [--no-perf]

FILE is scheduled (by the shipped policy, or --schedule) and its first public
function is compiled ahead of time with line tables that point into the
scheduled IR: mlir-rl-lower, ensure-debug-info-scope-on-llvm-func,
mlir-translate-22, clang-22 -O3 -g. The executable calls the function --iters
times on constant inputs under `perf record`; samples are attributed to the
top-level op of the scheduled function whose text holds their source line
(an scf.forall of a tiled op, a linalg op, a copy). The table lists ops by
share of samples, with the op's first line.

Timing is by sampling, not by the harness: use it to see where time goes, and
`mlir-rl bench` for figures.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlir_rl.paths import llvm_lib_dir, llvm_tool_path, mlir_opt_path, plugin_path


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)[:300]}\n{r.stderr[-3000:]}")
    return r


def top_level_ops(lines: list[str], fn: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each op in @fn's body (1-based)."""
    start = next(i for i, l in enumerate(lines) if re.search(rf"func\.func @{fn}\(", l))
    ops, depth, first = [], 0, None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if depth == 0:
            if line.strip() == "}":
                break
            first = i
        depth += line.count("{") - line.count("}")
        if depth == 0 and first is not None:
            ops.append((first + 1, i + 1, lines[first].strip()))
            first = None
    return ops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--schedule")
    ap.add_argument("--model")
    ap.add_argument("--scheduled", action="store_true",
                    help="FILE is already scheduled (e.g. by mlir-opt with pass options)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--keep", help="directory for the intermediate files")
    ap.add_argument("--no-perf", action="store_true",
                    help="only compile and run the executable once (wall time per call)")
    a = ap.parse_args()

    work = Path(a.keep or tempfile.mkdtemp(prefix="mlir-rl-prof-"))
    work.mkdir(parents=True, exist_ok=True)
    sched = work / "scheduled.mlir"
    cmd = ["mlir-rl", "optimize", a.file, "-o", str(sched)]
    if a.prepare:
        cmd.append("--prepare")
    if a.schedule:
        cmd += ["--schedule", a.schedule]
    if a.model:
        cmd += ["--model", a.model]
    if a.scheduled:
        sched.write_text(Path(a.file).read_text())
    else:
        run(cmd)

    text = sched.read_text()
    # The executable has its own main: rename a function of that name.
    text = re.sub(r"@main\b", "@mlir_rl_main", text)
    m = re.search(r"func\.func @(\w+)\(([^)]*)\)", text)
    fn, params = m.group(1), m.group(2)
    types = re.findall(r"%\w+: (tensor<[^>]*>)", params)
    # A driver function: constant inputs, the function called --iters times.
    consts = "\n".join(f"    %in{i} = arith.constant dense<0.5> : {t}" for i, t in enumerate(types))
    args = ", ".join(f"%in{i}" for i in range(len(types)))
    sig = ", ".join(types)
    res = re.search(rf"func\.func @{fn}\([^)]*\)\s*->\s*\(?([^{{]*?)\)?\s*\{{", text).group(1)
    driver = (f"  func.func @mlir_rl_profile() {{\n{consts}\n"
              f"    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
              f"    %n = arith.constant {a.iters} : index\n"
              f"    scf.for %i = %c0 to %n step %c1 {{\n"
              f"      %r = func.call @{fn}({args}) : ({sig}) -> ({res})\n    }}\n"
              f"    return\n  }}\n")
    # The driver goes right before the function (a module may end with
    # dialect resources); ops are then located in this text.
    at = m.start()
    at = text.rfind("\n", 0, at) + 1
    text = text[:at] + driver + text[at:]
    full = work / "profiled.mlir"
    full.write_text(text)

    llvm_mlir = work / "lowered.mlir"
    run([str(mlir_opt_path()), f"--load-pass-plugin={plugin_path()}", "-p",
         "builtin.module(mlir-rl-lower,ensure-debug-info-scope-on-llvm-func)",
         "--mlir-print-debuginfo", str(full), "-o", str(llvm_mlir)])
    ll = work / "profiled.ll"
    run([str(llvm_tool_path("mlir-translate")), "--mlir-to-llvmir", str(llvm_mlir), "-o", str(ll)])
    drv = work / "main.c"
    # glibc's defaults return freed buffers of a few MB to the kernel, and
    # every call then page-faults them in again: ResNet-18 spent 40 % of its
    # samples in the kernel so (1.8 s vs 1.1 s for 30 calls). The JIT in the
    # harness and the backend does not see this; keep the heap as it does.
    drv.write_text("#include <malloc.h>\nvoid mlir_rl_profile(void);\n"
                   "int main(void) {\n"
                   "  mallopt(M_MMAP_THRESHOLD, 32 << 20);\n"
                   "  mallopt(M_TRIM_THRESHOLD, 1 << 30);\n"
                   "  mlir_rl_profile();\n  return 0;\n}\n")
    exe = work / "profiled"
    lib = llvm_lib_dir()
    run([str(llvm_tool_path("clang")), "-O3", "-g", "-march=native", "-Wno-override-module",
         str(ll), str(drv), "-o", str(exe), f"-L{lib}", f"-Wl,-rpath,{lib}",
         "-lomp", "-lmlir_c_runner_utils", "-lm"])
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if a.no_perf:
        t0 = time.perf_counter()
        run([str(exe)], env=env)
        secs = time.perf_counter() - t0
        print(f"{fn}: {a.iters} calls in {secs:.3f} s, {secs / a.iters * 1e3:.3f} ms per call "
              f"including start-up ({a.threads} threads; files in {work})")
        return
    if shutil.which("perf") is None:
        sys.exit("perf is missing (Debian: linux-perf); --no-perf only compiles and runs")
    data = work / "perf.data"
    run(["perf", "record", "-q", "-o", str(data), str(exe)], env=env)
    rep = run(["perf", "report", "-i", str(data), "--no-children", "--sort", "srcline",
               "--stdio", "-q"]).stdout

    lines = text.splitlines()
    ops = top_level_ops(lines, fn)
    share: dict[int, float] = collections.Counter()
    other = 0.0
    for row in rep.splitlines():
        mm = re.match(r"\s*([\d.]+)%\s+(\S+?):(\d+)", row)
        if not mm:
            mo = re.match(r"\s*([\d.]+)%", row)
            if mo:
                other += float(mo.group(1))
            continue
        pct, src, ln = float(mm.group(1)), mm.group(2), int(mm.group(3))
        idx = next((k for k, (f, l, _) in enumerate(ops) if f <= ln <= l), None)
        if Path(src).name != full.name or idx is None:
            other += pct
        else:
            share[idx] += pct
    print(f"{fn}: {len(ops)} top-level ops; samples by op ({a.iters} calls, "
          f"{a.threads} threads; files in {work})")
    for idx, pct in share.most_common(a.top):
        f, l, t = ops[idx]
        print(f"{pct:6.2f}%  line {f:5d}  {t[:110]}")
    print(f"{other:6.2f}%  elsewhere (runtime, allocation, OpenMP, unattributed)")
    syms = run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,sym",
                "--stdio", "-q"]).stdout
    print("top symbols (OpenMP spinning = a thread waiting on serial code; "
          "memrefCopy/memmove = bufferization copies; page faults = fresh buffers):")
    for row in [r for r in syms.splitlines() if re.match(r"\s*[\d.]+%", r)][:8]:
        print("  " + " ".join(row.split())[:120])


if __name__ == "__main__":
    main()
