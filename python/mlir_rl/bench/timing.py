"""Baseline-versus-scheduled timing of one module, with a numerical check.

The baseline is the unscheduled program through the same lowering pipeline
(the paper's baseline). Both run in this process, one after the other, with
the same seeded inputs and thread count; the scheduled outputs must equal the
baseline's within ``outputs_match``'s tolerance.
"""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mlir_rl.core import Module, ScheduleError, Timing, outputs_match
from mlir_rl.stats import speedup


@dataclass
class BenchConfig:
    """How to time (the ``mlir-rl bench`` options are generated from this)."""

    runs: int = field(default=5, metadata={"help": "timed runs per program (the median is reported)"})
    warmup: int = field(default=1, metadata={"help": "untimed runs before timing"})
    threads: int = field(default=os.cpu_count() or 1, metadata={"help": "OpenMP threads for both programs"})
    seed: int = field(default=0, metadata={"help": "seed of the random inputs"})
    function: str = field(default="", metadata={"help": "function to time (default: the first public one)"})
    decisions: str = field(default="policy", metadata={
        "help": "without a schedule: the pass's decision source (policy, heuristic, random)"})
    prepare: bool = field(default=False, metadata={
        "help": "run mlir-rl-prepare before scheduling (imported models; with --suite: "
                "for every suite, the models suite always prepares); the baseline stays "
                "the program as given"})


@dataclass
class BenchResult:
    file: str
    schedule: str
    baseline_median_s: float
    baseline_min_s: float
    baseline_max_s: float
    scheduled_median_s: float
    scheduled_min_s: float
    scheduled_max_s: float
    speedup: float
    outputs_match: bool
    max_abs_error: float
    threads: int
    runs: int
    host: str
    # The host's peaks (bench/roofline.py) and the function's (flops, bytes).
    peaks: Optional[dict] = None
    work: Optional[tuple[int, int]] = None

    def to_result(self, command: str = "", model: str = "") -> dict:
        """This benchmark as a result document (bench/report.py's schema):
        the file is the one kernel, unscheduled the baseline."""
        from mlir_rl.bench import report as R

        def fig(status, median, lo, hi, detail=""):
            return {"status": status, "median_ms": median * 1e3, "min_ms": lo * 1e3,
                    "max_ms": hi * 1e3, "detail": detail}

        figures = {
            "unscheduled": fig("ok", self.baseline_median_s, self.baseline_min_s,
                               self.baseline_max_s),
            "mlir-rl": fig("ok" if self.outputs_match else "wrong_output",
                           self.scheduled_median_s, self.scheduled_min_s, self.scheduled_max_s,
                           f"max abs error {self.max_abs_error:.3g}")}
        kernel = {"name": Path(self.file).name, "schedule": self.schedule, "runs": self.runs,
                  "figures": figures}
        doc = R.new_result(f"file:{Path(self.file).name}", "unscheduled",
                           ["unscheduled", "mlir-rl"], [kernel], self.threads,
                           settings={"runs": self.runs}, command=command, model=model)
        if self.peaks and self.work:
            from mlir_rl.bench import roofline
            roofline.annotate(doc, self.peaks, {kernel["name"]: self.work})
        return doc

    def summary(self) -> str:
        check = "equal" if self.outputs_match else "DIFFERENT"
        return "\n".join([
            f"file:       {self.file}",
            f"schedule:   {self.schedule or '(none)'}",
            f"baseline:   median {self.baseline_median_s * 1e3:10.3f} ms  "
            f"(min {self.baseline_min_s * 1e3:.3f}, max {self.baseline_max_s * 1e3:.3f})",
            f"scheduled:  median {self.scheduled_median_s * 1e3:10.3f} ms  "
            f"(min {self.scheduled_min_s * 1e3:.3f}, max {self.scheduled_max_s * 1e3:.3f})",
            f"speedup:    {self.speedup:.2f}x  ({self.runs} runs, {self.threads} threads)",
            f"outputs:    {check} (max abs error {self.max_abs_error:.3g})",
        ] + self._roofline_lines())

    def _roofline_lines(self) -> list[str]:
        if not (self.peaks and self.work):
            return []
        from mlir_rl.bench import roofline
        flops, nbytes = self.work
        lines = [f"work:       {flops / 1e9:.3g} GFLOP, {nbytes / 1e6:.3g} MB of arguments "
                 f"and results (fits {roofline.level_of(nbytes, self.peaks)})"]
        for label, seconds in (("baseline", self.baseline_median_s),
                               ("scheduled", self.scheduled_median_s)):
            a = roofline.attainment(seconds, flops, nbytes, self.peaks)
            if a:
                lines.append(f"{label + ':':11s} {a['gflops']:.1f} GFLOP/s, {a['gbs']:.1f} GB/s: "
                             f"{100 * a['fraction']:.0f}% of the {a['bound']} bound")
        lines.append(roofline.describe(self.peaks))
        return lines


def host_description() -> str:
    return f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus"


def bench_module(module: Module, schedule: str,
                 config: Optional[BenchConfig] = None, model: str = "") -> BenchResult:
    """Time ``module`` unscheduled and with ``schedule`` (empty: with the
    policy ``model``, default the shipped one, as the pass would); compare
    outputs."""
    from mlir_rl.bench import roofline
    config = config or BenchConfig()
    peaks = roofline.host_peaks(config.threads)
    work = roofline.work(module.source, config.function)
    baseline = module.fresh()
    if config.prepare:
        from mlir_rl.core import prepare
        scheduled = Module.parse(prepare(module.source, module.name), module.name)
    else:
        scheduled = module.fresh()
    if schedule:
        scheduled.apply_schedule(schedule)
    else:
        scheduled.schedule_with_policy(model, decisions=config.decisions, seed=config.seed)

    # Compiled once each and timed in alternating rounds (the machine's
    # speed drifts between one program's runs and the other's).
    rounds, per_round = alternating_rounds(config.runs)
    base_t, sched_t = time_compiled(
        [m.compile(config.threads, config.function) for m in (baseline, scheduled)],
        rounds=rounds, runs=per_round, warmup=min(config.warmup, 1), seed=config.seed)
    from mlir_rl.core import output_rtol
    rtol = output_rtol([o["dtype"] for o in baseline.signature(config.function)["outputs"]])
    match, err = outputs_match(sched_t.outputs, base_t.outputs, rtol=rtol, atol_scale=rtol)
    return BenchResult(
        file=module.name, schedule=scheduled.schedule,
        baseline_median_s=base_t.median, baseline_min_s=base_t.spread[0],
        baseline_max_s=base_t.spread[1],
        scheduled_median_s=sched_t.median, scheduled_min_s=sched_t.spread[0],
        scheduled_max_s=sched_t.spread[1],
        speedup=speedup(base_t.median, sched_t.median),
        outputs_match=match, max_abs_error=err, threads=config.threads,
        runs=config.runs, host=host_description(), peaks=peaks, work=work)


def wait_for_openmp_spin() -> None:
    """Sleep until another process's (or runtime's) OpenMP threads have
    stopped spinning: they spin for KMP_BLOCKTIME (200 ms) after each
    parallel region and take this machine's cores. Right after the
    measurer's worker ran, a small parallel op measured here ran 5-10x
    slower without this wait; PyTorch's depthwise convolution 100x."""
    import time
    time.sleep(0.3)


def alternating_rounds(runs: int, most: int = 5) -> tuple[int, int]:
    """``runs`` timed calls as (rounds, calls per round) for
    ``time_compiled``: up to ``most`` rounds, at least one."""
    rounds = max(1, min(runs, most))
    return rounds, -(-runs // rounds)


def time_alternating(modules: list[Module], rounds: int = 2, runs: int = 5,
                     threads: int = 2, warmup: int = 1, seed: int = 0) -> list[Timing]:
    """Time ``modules`` (each as scheduled) against each other in one
    process: each is lowered and compiled once (``Module.compile``), then
    timed by ``time_compiled``. Compare the results with each other, not
    with figures from another run."""
    return time_compiled([m.compile(threads) for m in modules], rounds, runs, warmup, seed)


def output_buffers(fn) -> list:
    """Empty numpy arrays for a compiled function's (``Module.compile``)
    results, to pass to its ``time``."""
    import numpy as np
    # bf16 as uint16 arrays of its bits (numpy has no bf16; the function
    # takes them so).
    dtypes = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
              "bf16": np.uint16, "f16": np.float16}
    return [np.empty(o["shape"], dtype=dtypes[o["dtype"]]) for o in fn.signature["outputs"]]


def time_compiled(fns: list, rounds: int = 2, runs: int = 5, warmup: int = 1,
                  seed: int = 0) -> list[Timing]:
    """Time compiled functions of one signature (``Module.compile``)
    against each other: ``rounds`` rounds of ``warmup`` untimed and
    ``runs`` timed calls each (one loop in C++, as ``Module.time`` makes
    them), the order reversed every other round (in one process the program
    timed second tends to run faster, and the machine's load drifts in
    stretches of about a second: many short rounds cancel it). Each Timing
    holds every timed run and the last call's outputs and inputs (the
    inputs ``Module.time`` uses for ``seed``, outputs as float64 like its).
    The arguments are read-only: a program that writes into one computes
    the same on every call, and its timing includes that argument's copy."""
    import numpy as np

    inputs = [fn.random_inputs(seed) for fn in fns]
    outputs = [output_buffers(fn) for fn in fns]
    out = [Timing(seconds=[], outputs=[]) for _ in fns]
    order = list(range(len(fns)))
    try:
        for r in range(rounds):
            for i in (order if r % 2 == 0 else order[::-1]):
                out[i].seconds += fns[i].time(inputs[i], outputs[i], runs, warmup)
    except (RuntimeError, ValueError) as e:
        raise ScheduleError(str(e)) from None

    def host(a):  # as Module.time returns tensors: float64, rank 0 as [1]
        if a.dtype == np.uint16:  # bf16 bits
            a = (a.astype(np.uint32) << 16).view(np.float32)
        return np.asarray(a, dtype=np.float64).reshape(a.shape or (1,))

    for t, ins, outs in zip(out, inputs, outputs):
        t.outputs = [host(o) for o in outs]
        t.inputs = [host(x) for x in ins]
    return out


def bench_file(path: str | Path, schedule: str,
               config: Optional[BenchConfig] = None, model: str = "") -> BenchResult:
    return bench_module(Module.load(path), schedule, config, model)


@dataclass
class OverheadResult:
    """Compile-time cost of scheduling one module with a policy, per op."""

    name: str
    ops: int
    inferences_per_op: float
    inference_ms_per_op: tuple[float, float, float]  # median, min, max
    apply_ms_per_op: tuple[float, float, float]
    pass_ms_per_op: tuple[float, float, float]
    schedule: str
    first_call_ms: float = 0.0  # includes loading the model (once per process)
    memo_hit_rate: float = 0.0  # decisions answered by the policy's memo

    def row(self) -> str:
        def f(x):
            return f"{x[0]:7.3f} [{x[1]:.3f}, {x[2]:.3f}]"
        return (f"{self.name:36s} {self.ops:4d} {self.inferences_per_op:5.2f} "
                f"{self.memo_hit_rate:5.2f}  "
                f"{f(self.inference_ms_per_op)}  {f(self.apply_ms_per_op)}  "
                f"{f(self.pass_ms_per_op)}  {self.first_call_ms:8.1f}")


OVERHEAD_HEADER = (f"{'module':36s} {'ops':>4s} {'inf/op':>5s} {'memo':>5s}  "
                   f"{'inference ms/op [min, max]':26s}  {'transform ms/op [min, max]':26s}  "
                   f"{'pass ms/op [min, max]':26s}  {'1st call ms':>11s}")


def _stats(xs: list[float]) -> tuple[float, float, float]:
    import numpy as np
    return float(np.median(xs)), float(np.min(xs)), float(np.max(xs))


def measure_overhead(name: str, text: str, model: str = "", repeat: int = 5,
                     sample: bool = False) -> OverheadResult:
    """Schedule ``text`` with the policy ``repeat`` times (fresh each time).

    Inference: ONNX Runtime calls (each repetition starts with the policy's
    memo empty, as a pass instance in mlir-opt does); transform: applying
    the actions; pass: the whole scheduling call (features, masks,
    inference, decoding, application), all divided by the number of ops.
    """
    import time

    from mlir_rl import _core
    base = Module.parse(text, name)
    # Load the ONNX session once (the pass loads it once per pass instance).
    t0 = time.perf_counter()
    base.fresh().policy_logits(base.traversal_order()[0], model)
    load_ms = (time.perf_counter() - t0) * 1e3
    inf, app, total = [], [], []
    stats, m = {}, base
    for _ in range(repeat):
        m = base.fresh()
        _core.clear_policy_memos()
        t0 = time.perf_counter()
        stats = m.schedule_with_policy(model, sample=sample)
        elapsed = time.perf_counter() - t0
        n = max(1, stats["ops"])
        inf.append(stats["inference_seconds"] / n * 1e3)
        app.append(stats["apply_seconds"] / n * 1e3)
        total.append(elapsed / n * 1e3)
    return OverheadResult(name=name, ops=stats["ops"],
                          inferences_per_op=stats["inferences"] / max(1, stats["ops"]),
                          memo_hit_rate=stats["memo_hits"] / max(1, stats["inferences"]),
                          inference_ms_per_op=_stats(inf), apply_ms_per_op=_stats(app),
                          pass_ms_per_op=_stats(total), schedule=m.schedule,
                          first_call_ms=load_ms)


@dataclass
class PolicyCheckRow:
    name: str
    schedule: str
    baseline_ms: float
    scheduled_ms: float
    speedup: float
    outputs_match: bool
    max_abs_error: float
    baseline_seconds: list = field(default_factory=list)   # each timed call
    scheduled_seconds: list = field(default_factory=list)


def check_policy_through_plugin(suite: dict[str, str], model: str = "", runs: int = 5,
                                threads: int = 2, prepare: bool = False) -> list[PolicyCheckRow]:
    """Schedule each kernel with the pass in stock mlir-opt-22 (plugin, the
    policy, no schedule given; after ``mlir-rl-prepare`` with ``prepare``),
    then time the scheduled IR against the unscheduled program as given in
    one process and compare their outputs."""
    from mlir_rl.passes import run_pass
    rows = []
    for name, text in suite.items():
        result = run_pass(text, model=model, name=name, prepare=prepare)
        base = Module.parse(text, name).time(runs=runs, warmup=1, threads=threads)
        sched = Module.parse(result.ir, name).time(runs=runs, warmup=1, threads=threads)
        ok, err = outputs_match(sched.outputs, base.outputs)
        rows.append(PolicyCheckRow(name, result.schedule, base.median * 1e3,
                                   sched.median * 1e3, speedup(base.median, sched.median),
                                   ok, err, list(base.seconds), list(sched.seconds)))
    return rows


__all__ = ["PolicyCheckRow", "check_policy_through_plugin", "OverheadResult", "measure_overhead", "BenchConfig", "BenchResult", "bench_file", "bench_module",
           "ScheduleError"]
