"""The host's own limits, and how far a kernel is from them (a roofline).

``host_peaks(threads)`` measures, once per host and thread count (cached on
disk), what the machine can do through the same JIT and lowering the
benchmarks use:

- **FMA throughput**: independent chains of vector fused multiply-adds held
  in registers (12 accumulators of one vector register each, per thread).
- **Bandwidth of L2, L3 and DRAM**: per thread, a streaming read (a sum of
  vector loads into 8 accumulators) and a streaming copy (``y = x + r``,
  bytes read plus bytes written) over a working set that fits the level
  (half of a core's L2, half of the L3, or eight times the L3), repeated
  until each call moves about 200 MB; the level's figure is the faster of
  the two.

Each peak is the best of several calls (a peak is what the host reaches,
not its typical rate).

``work(text)`` counts what a kernel must do: its arithmetic operations
(the linalg ops' iterations times the arithmetic ops of their bodies,
counted in C++: ``OpInfo.flops``) and its compulsory traffic (the bytes of
its arguments and results). ``attainment`` turns a time into GFLOP/s, GB/s
and the fraction of the bound that applies: the larger of the compute time
at the FMA peak and the traffic time at the bandwidth of the level the
working set fits in.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Optional

# Vector lanes (f32) the kernels use per ISA: one register.
_LANES = {"avx512f": 16, "avx2": 8, "avx": 8, "neon": 4, "sse": 4}
_ACCUMULATORS = 12
_TARGET_BYTES = 200e6
_ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4,
                  "i64": 8, "i1": 1}
LEVELS = ("L2", "L3", "DRAM")


def _cache_bytes() -> dict:
    """Per-core L2 and shared L3 sizes in bytes (Linux sysfs; 1 MiB and
    32 MiB where it says nothing)."""
    out = {"L2": 1 << 20, "L3": 32 << 20}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", size)
        if not m or kind == "Instruction" or level not in (2, 3):
            continue
        out[f"L{level}"] = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]
    return out


def _store_sum(count: int, lanes: int, threads: int, shared: str) -> str:
    """The lines that add a thread's ``count`` accumulators ``%r#i`` and
    write the sum into its row of ``shared`` (a [threads, lanes] tensor),
    ending its forall body."""
    v, t = f"vector<{lanes}xf32>", f"tensor<{threads}x{lanes}xf32>"
    lines, prev = [], "%r#0"
    for i in range(1, count):
        lines.append(f"    %s{i} = arith.addf {prev}, %r#{i} : {v}")
        prev = f"%s{i}"
    row = f"tensor<1x{lanes}xf32>"
    return "\n".join(lines + [
        f"    %row = tensor.empty() : {row}",
        f"    %w = vector.transfer_write {prev}, %row[%c0, %c0] {{in_bounds = [true]}} : {v}, {row}",
        "    scf.forall.in_parallel {",
        f"      tensor.parallel_insert_slice %w into {shared}[%t, 0] [1, {lanes}] [1, 1] : {row} into {t}",
        "    }"])


def fma_kernel(threads: int, lanes: int, iterations: int) -> str:
    """Each thread: ``_ACCUMULATORS`` chains ``a = a * m + c`` of
    ``iterations`` vector FMAs (2 * lanes operations each)."""
    a, v = _ACCUMULATORS, f"vector<{lanes}xf32>"
    types = ", ".join([v] * a)
    inits = ", ".join(f"%a{i} = %v" for i in range(a))
    body = "\n".join(f"      %n{i} = vector.fma %a{i}, %m, %c : {v}" for i in range(a))
    t = f"tensor<{threads}x{lanes}xf32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %out = scf.forall (%t) in ({threads}) shared_outs(%o = %e) -> {t} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant {iterations} : index
    %pad = arith.constant 0.0 : f32
    %v = vector.transfer_read %x[%t, %c0], %pad {{in_bounds = [true]}} : {t}, {v}
    %m = arith.constant dense<0.999> : {v}
    %c = arith.constant dense<0.001> : {v}
    %r:{a} = scf.for %i = %c0 to %cn step %c1 iter_args({inits}) -> ({types}) {{
{body}
      scf.yield {", ".join(f"%n{i}" for i in range(a))} : {types}
    }}
{_store_sum(a, lanes, threads, "%o")}
  }}
  return %out : {t}
}}
"""


def read_kernel(threads: int, lanes: int, chunk: int, repeats: int) -> str:
    """Each thread sums its ``chunk`` f32 (a multiple of 8 * lanes),
    ``repeats`` times, with vector loads into 8 accumulators."""
    v, t = f"vector<{lanes}xf32>", f"tensor<{threads}x{chunk}xf32>"
    step = 8 * lanes
    types = ", ".join([v] * 8)
    loads = []
    for i in range(8):
        loads.append(f"        %j{i} = arith.addi %j, %o{i} : index")
        loads.append(f"        %l{i} = vector.transfer_read %x[%t, %j{i}], %pad {{in_bounds = [true]}} : {t}, {v}")
        loads.append(f"        %n{i} = arith.addf %b{i}, %l{i} : {v}")
    offsets = "\n".join(f"    %o{i} = arith.constant {i * lanes} : index" for i in range(8))
    out = f"tensor<{threads}x{lanes}xf32>"
    return f"""func.func @main(%x: {t}) -> {out} {{
  %e = tensor.empty() : {out}
  %res = scf.forall (%t) in ({threads}) shared_outs(%oo = %e) -> {out} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cr = arith.constant {repeats} : index
    %cc = arith.constant {chunk} : index
    %cs = arith.constant {step} : index
    %pad = arith.constant 0.0 : f32
    %z = arith.constant dense<0.0> : {v}
{offsets}
    %r:8 = scf.for %rep = %c0 to %cr step %c1 iter_args({", ".join(f"%a{i} = %z" for i in range(8))}) -> ({types}) {{
      %q:8 = scf.for %j = %c0 to %cc step %cs iter_args({", ".join(f"%b{i} = %a{i}" for i in range(8))}) -> ({types}) {{
{chr(10).join(loads)}
        scf.yield {", ".join(f"%n{i}" for i in range(8))} : {types}
      }}
      scf.yield {", ".join(f"%q#{i}" for i in range(8))} : {types}
    }}
{_store_sum(8, lanes, threads, "%oo")}
  }}
  return %res : {out}
}}
"""


def copy_kernel(threads: int, lanes: int, chunk: int, repeats: int) -> str:
    """Each thread writes ``y = x + r`` over its ``chunk`` f32 for
    ``r`` in 0..``repeats`` (the last one stays), with vector loads and
    stores."""
    v, t = f"vector<{lanes}xf32>", f"tensor<{threads}x{chunk}xf32>"
    row = f"tensor<1x{chunk}xf32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %res = scf.forall (%t) in ({threads}) shared_outs(%oo = %e) -> {t} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cr = arith.constant {repeats} : index
    %cc = arith.constant {chunk} : index
    %cs = arith.constant {lanes} : index
    %pad = arith.constant 0.0 : f32
    %slice = tensor.extract_slice %oo[%t, 0] [1, {chunk}] [1, 1] : {t} to {row}
    %r = scf.for %rep = %c0 to %cr step %c1 iter_args(%s = %slice) -> ({row}) {{
      %ri = arith.index_cast %rep : index to i32
      %rf = arith.sitofp %ri : i32 to f32
      %rv = vector.broadcast %rf : f32 to {v}
      %q = scf.for %j = %c0 to %cc step %cs iter_args(%s2 = %s) -> ({row}) {{
        %l = vector.transfer_read %x[%t, %j], %pad {{in_bounds = [true]}} : {t}, {v}
        %y = arith.addf %l, %rv : {v}
        %w = vector.transfer_write %y, %s2[%c0, %j] {{in_bounds = [true]}} : {v}, {row}
        scf.yield %w : {row}
      }}
      scf.yield %q : {row}
    }}
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %r into %oo[%t, 0] [1, {chunk}] [1, 1] : {row} into {t}
    }}
  }}
  return %res : {t}
}}
"""


def _best_seconds(text: str, threads: int, runs: int) -> float:
    """The fastest of ``runs`` calls, compiled once and called on buffers
    allocated once (as the benchmarks call kernels: a fresh 128 MB output
    per call would time the kernel's page faults)."""
    from mlir_rl.bench.timing import time_compiled
    from mlir_rl.core import Module
    fn = Module.parse(text, "roofline").compile(threads)
    return min(time_compiled([fn], rounds=1, runs=runs, warmup=1)[0].seconds)


def measure_peaks(threads: int, vector_isa: str, runs: int = 7) -> dict:
    """The host's FMA peak (GFLOP/s) and the bandwidth (GB/s) of L2, L3 and
    DRAM at ``threads`` threads, measured now."""
    lanes = _LANES.get(vector_isa, 4)
    caches = _cache_bytes()
    iterations = 400_000
    fma = fma_kernel(threads, lanes, iterations)
    fma_s = _best_seconds(fma, threads, runs)
    peaks = {"threads": threads, "vector_lanes": lanes, "caches_bytes": caches,
             "bandwidth_gbs": {}, "read_gbs": {}, "copy_gbs": {}}
    # Working sets: half a core's L2 per thread, half the L3 over all
    # threads, eight times the L3 (at least 256 MB).
    total = {"L2": caches["L2"] // 2 * threads, "L3": caches["L3"] // 2,
             "DRAM": max(8 * caches["L3"], 256 << 20)}
    block = 8 * lanes * 4
    for level, working in total.items():
        figures = {}
        for kind, make, per_element in (("read", read_kernel, 4), ("copy", copy_kernel, 8)):
            # The copy's working set is its input and its output.
            chunk_bytes = working // threads // (per_element // 4)
            chunk = max(block, chunk_bytes // block * block) // 4
            moved = threads * chunk * per_element
            repeats = max(1, math.ceil(_TARGET_BYTES / moved))
            s = _best_seconds(make(threads, lanes, chunk, repeats), threads,
                              runs if level != "DRAM" else max(3, runs // 2))
            figures[kind] = moved * repeats / s / 1e9
            peaks[f"{kind}_gbs"][level] = figures[kind]
        peaks["bandwidth_gbs"][level] = max(figures.values())
    # The FMA peak again after the streams, the faster of the two: a peak
    # cached for the host should not be one moment's (on a shared 2-core VM
    # one measurement gave 238 GFLOP/s, the next ones 470-476, 2026-12-02).
    fma_s = min(fma_s, _best_seconds(fma, threads, runs))
    peaks["fma_gflops"] = threads * iterations * _ACCUMULATORS * lanes * 2 / fma_s / 1e9
    peaks["working_set_bytes"] = total
    return peaks


def _cache_path(threads: int, cpu: str, isa: str) -> Path:
    root = Path(os.environ.get("MLIR_RL_CACHE_DIR") or
                Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlir-rl")
    key = hashlib.sha256(f"{cpu}|{isa}|{os.cpu_count()}|{threads}".encode()).hexdigest()[:12]
    return root / f"roofline-{key}.json"


def host_peaks(threads: int, refresh: bool = False) -> dict:
    """``measure_peaks`` for this host (CPU model, ISA, CPU count) and
    ``threads``, measured once and then read from the cache
    (``$MLIR_RL_CACHE_DIR`` or ``~/.cache/mlir-rl``); ``refresh`` measures
    again."""
    from mlir_rl.bench.report import cpu_model, vector_isa
    cpu, isa = cpu_model(), vector_isa()
    path = _cache_path(threads, cpu, isa)
    if not refresh and path.exists():
        try:
            peaks = json.loads(path.read_text())
            if peaks.get("cpu") == cpu and peaks.get("threads") == threads:
                return peaks
        except (OSError, ValueError):
            pass
    import datetime
    peaks = measure_peaks(threads, isa)
    peaks.update(cpu=cpu, vector_isa=isa,
                 measured=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(peaks, indent=1))
    tmp.replace(path)
    return peaks


def work(text: str, function: str = "") -> tuple[int, int]:
    """(arithmetic operations, compulsory bytes) of ``text``'s function
    (the first public one by default): the sum of its linalg ops' flops as
    given, and the bytes of its tensor arguments and results."""
    from mlir_rl.core import Module
    m = Module.parse(text, "work")
    sig = m.signature(function)
    flops = sum(o.flops for o in m.ops() if o.function == sig["name"])
    nbytes = sum(math.prod(t["shape"]) * _ELEMENT_BYTES.get(t["dtype"], 4)
                 for t in sig["inputs"] + sig["outputs"])
    return flops, nbytes


def level_of(nbytes: int, peaks: dict) -> str:
    """The level a working set of ``nbytes`` fits in (L2 over the threads'
    cores, L3, else DRAM)."""
    caches = peaks["caches_bytes"]
    if nbytes <= caches["L2"] * peaks["threads"]:
        return "L2"
    if nbytes <= caches["L3"]:
        return "L3"
    return "DRAM"


def attainment(seconds: float, flops: int, nbytes: int, peaks: dict) -> Optional[dict]:
    """GFLOP/s, GB/s, the bound that applies (``compute``, or the level
    whose bandwidth limits) and the fraction of it reached in ``seconds``."""
    if not seconds or seconds <= 0 or (not flops and not nbytes):
        return None
    level = level_of(nbytes, peaks)
    compute_s = flops / (peaks["fma_gflops"] * 1e9)
    memory_s = nbytes / (peaks["bandwidth_gbs"][level] * 1e9)
    bound = "compute" if compute_s >= memory_s else level
    return {"gflops": flops / seconds / 1e9, "gbs": nbytes / seconds / 1e9,
            "bound": bound, "fraction": max(compute_s, memory_s) / seconds}


def annotate(doc: dict, peaks: dict, works: dict[str, tuple[int, int]]) -> dict:
    """Adds the roofline to a result document (bench/report.py's schema):
    ``doc["roofline"]`` (the host's peaks), and for each kernel named in
    ``works`` (name -> (flops, bytes)) its ``work`` (flops, bytes, the
    level its working set fits in) and, in each figure with times, its
    ``gflops``, ``gbs``, ``bound`` and ``fraction`` of the bound."""
    doc["roofline"] = {k: peaks[k] for k in ("fma_gflops", "bandwidth_gbs", "caches_bytes",
                                             "threads", "vector_lanes") if k in peaks}
    for k in doc["kernels"]:
        if k["name"] not in works:
            continue
        flops, nbytes = works[k["name"]]
        k["work"] = {"flops": flops, "bytes": nbytes, "level": level_of(nbytes, peaks)}
        for f in k["figures"].values():
            if f.get("status") == "ok" and f.get("median_ms"):
                a = attainment(f["median_ms"] / 1e3, flops, nbytes, peaks)
                if a:
                    f.update(a)
    return doc


def describe(peaks: dict) -> str:
    """One line: the peaks a document's fractions are of."""
    bw = ", ".join(f"{level} {peaks['bandwidth_gbs'][level]:.0f}" for level in LEVELS
                   if level in peaks["bandwidth_gbs"])
    return (f"host peaks at {peaks['threads']} threads: FMA {peaks['fma_gflops']:.0f} GFLOP/s; "
            f"bandwidth GB/s {bw}")


def _main(argv: Optional[list[str]] = None) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m mlir_rl.bench.roofline",
                                description="The host's peaks the benchmarks' fractions are of.")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--refresh", action="store_true", help="measure again (not the cached figures)")
    a = p.parse_args(argv)
    peaks = host_peaks(a.threads, refresh=a.refresh)
    print(describe(peaks))
    print(json.dumps(peaks, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
