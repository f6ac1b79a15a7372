"""Measurements: the worker process, the SQLite memo, the measurer's policy."""
import os
import signal
import subprocess
import sys
import time

import pytest

from mlir_rl.data import kernels as K
from mlir_rl.measure.executor import ExecConfig, Executor
from mlir_rl.measure.measurer import MeasureConfig, Measurer, measurement_context
from mlir_rl.measure.memo import Measurement, MeasurementMemo, module_hash


def test_memo_survives_sigkill(tmp_path):
    """A writer killed with SIGKILL loses no committed measurement."""
    path = tmp_path / "c.sqlite"
    code = (f"from mlir_rl.measure.memo import *; c = MeasurementMemo({str(path)!r});\n"
            "import os, signal\n"
            "for i in range(20): c.put('h', f's{i}', 'host', 'ctx', Measurement('ok', i * 1.0, 0, 0))\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, "-c", code])
    assert r.returncode == -signal.SIGKILL
    c = MeasurementMemo(path)
    assert len(c) == 20 and c.get("h", "s19", "host", "ctx").median_s == 19.0
    assert c.get("h", "nope", "host", "ctx") is None and c.hit_rate == 0.5


def test_memo_key_holds_the_measurement_context(tmp_path):
    """Runs, warm-up, seed, threads and the compiler are part of the key: a
    measurement made one way is not reused for another."""
    a = measurement_context(ExecConfig(runs=1))
    assert a != measurement_context(ExecConfig(runs=3))
    assert a != measurement_context(ExecConfig(warmup=2))
    assert a != measurement_context(ExecConfig(seed=1))
    assert a != measurement_context(ExecConfig(threads=1))
    assert "compiler=" in a
    text = K.add([8, 8])
    path = str(tmp_path / "m.sqlite")
    with Measurer(MeasureConfig(exec=ExecConfig(runs=1), memo_path=path)) as one:
        one.measure(text, "0: T(4,4)")
        assert one.measurements == 2  # the baseline and the schedule
    with Measurer(MeasureConfig(exec=ExecConfig(runs=1), memo_path=path)) as same:
        same.measure(text, "0: T(4,4)")
        assert same.measurements == 0
    with Measurer(MeasureConfig(exec=ExecConfig(runs=2), memo_path=path)) as other:
        other.measure(text, "0: T(4,4)")
        assert other.measurements == 2


def test_executor_isolates_crashes_and_hangs():
    with Executor(ExecConfig()) as ex:
        m, out = ex.measure(K.add([8, 8]), "0: T(4,4)", timeout_s=60)
        assert m.ok and out is not None
        m, _ = ex.measure("this is not MLIR", "", timeout_s=60)
        assert m.status == "compile_failed"
        m, _ = ex.measure(K.matmul(64, 256, 128), "", timeout_s=0.001)
        assert m.status == "timeout"
        m, _ = ex.measure(K.add([8, 8]), "", timeout_s=60)  # restarted
        assert m.ok


@pytest.mark.slow
def test_worker_ends_with_its_parent(tmp_path):
    """A worker whose parent is killed (no atexit, daemon children not
    reaped) stops instead of running its kernel on."""
    pidfile = tmp_path / "worker.pid"
    code = ("import os, signal, threading, time\n"
            "from mlir_rl.data import kernels as K\n"
            "from mlir_rl.measure.executor import ExecConfig, Executor\n"
            "ex = Executor(ExecConfig(runs=50))\n"
            "ex._start()\n"
            f"open({str(pidfile)!r}, 'w').write(str(ex._proc.pid))\n"
            "threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()\n"
            "ex.measure(K.matmul(512, 512, 512), '', timeout_s=600)\n")
    r = subprocess.run([sys.executable, "-c", code])
    assert r.returncode == -signal.SIGKILL
    pid = int(pidfile.read_text())
    # A patient deadline: a busy host can be slow to schedule the worker.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    os.kill(pid, signal.SIGKILL)
    pytest.fail("the worker outlived its parent")


class _ScriptedExecutor:
    """Stands in for the worker: each schedule takes a fixed time per call,
    and a call slower than ``abort_after_s`` aborts the measurement, as the
    worker's does. The measurer's decisions then depend on no clock."""

    def __init__(self, seconds: dict):
        self.seconds = seconds
        self.runs = []

    def measure(self, text, schedule, timeout_s, reference=None, abort_after_s=0.0):
        s = self.seconds[schedule]
        self.runs.append(schedule)
        if abort_after_s and s > abort_after_s:
            return Measurement("timeout", s, s, s, detail="aborted"), None
        return Measurement("ok", s, s, s), [0.0]

    def close(self):
        pass


def test_search_cut_is_a_memoized_lower_bound(tmp_path):
    """A search stops a candidate slower than its cut (here 1/1000 of the
    unscheduled time, floored at MIN_LIMIT_S); the memo keeps the cut as a
    lower bound that only searches use."""
    from mlir_rl.measure.measurer import MIN_LIMIT_S
    text = K.matmul(384, 384, 384)
    slow = "1: T(1,1,1)"
    with Measurer(MeasureConfig(memo_path=str(tmp_path / "m.sqlite"))) as e:
        e.executor = fake = _ScriptedExecutor({"": 0.1, slow: 0.5})
        assert e.baseline(text).median_s == 0.1
        n = len(e.memo)
        cut = e.measure(text, slow, cut_at=1e-3)
        assert cut.status == "cut" and cut.median_s == 0.5, cut
        assert len(e.memo) == n + 1  # memoized as a lower bound...
        runs = len(fake.runs)
        assert e.measure(text, slow, cut_at=1e-3) == cut  # ...for searches
        assert len(fake.runs) == runs
        full = e.measure(text, slow)  # not for a full verdict
        assert full.status == "ok" and full.median_s == 0.5 and len(e.memo) == n + 1
        assert len(fake.runs) == runs + 1
        assert e.measure(text, slow, cut_at=1e-3).status == "ok"
        # A cut below the floor waits for the floor: 1e-3 x 0.1 s is under it.
        fake.seconds["1: T(2,2,2)"] = MIN_LIMIT_S / 2
        assert e.measure(text, "1: T(2,2,2)", cut_at=1e-3).status == "ok"
    # The real worker aborts a call slower than abort_after_s.
    with Executor(ExecConfig()) as ex:
        m, out = ex.measure(text, "", timeout_s=120, abort_after_s=1e-6)
        assert m.status == "timeout" and out is None, m


def test_wrong_outputs_are_caught(tmp_path):
    """Every scheduled measurement is checked against the unscheduled
    program: a 'schedule' that changes the program is wrong_output, never a
    speedup."""
    text = K.add([8, 8])
    changed = text.replace("linalg.add", "linalg.sub")
    with Measurer() as e:
        base = e.baseline(text)
        h = module_hash(text)
        assert base.ok and h in e._references
        # Measure the changed program against the original's reference.
        m, _ = e._executor().measure(changed, "", 60, reference=e._references[h])
        assert m.status == "wrong_output"


def test_large_vector_tiles_run():
    """Regression: vectorized 4x8x64 tiles once overflowed the stack (allocas
    in loops from vector-to-scf); measured in the worker, so a crash is a
    status, not a dead test run."""
    with Executor(ExecConfig()) as ex:
        text = K.matmul(64, 256, 128)
        ref, out = ex.measure(text, "", timeout_s=120)
        m, _ = ex.measure(text, "1: T(4,8,64) V", timeout_s=120, reference=out)
        assert m.status == "ok", m.detail


def test_the_compiler_fingerprint_covers_the_compiled_code(monkeypatch):
    """A pass's code can change without the pipeline's text: the memo must
    not hand back times measured through the old code."""
    from mlir_rl.measure import measurer
    before = measurer.compiler_fingerprint()
    monkeypatch.setattr(measurer, "build_fingerprint", lambda: "another build")
    assert measurer.compiler_fingerprint() != before


def test_time_alternating_compiles_once_and_computes_what_time_computes():
    """Alternating rounds time compiled handles: the inputs are Module.time's
    for the seed, a program that writes into its argument computes the same
    on every call (its arguments are read-only), and bad buffers are refused."""
    import numpy as np

    from mlir_rl.bench.timing import time_alternating
    from mlir_rl.core import Module, outputs_match

    text = """func.func @f(%a: tensor<4x16x8xf32>, %b: tensor<4x8x12xf32>, %c: tensor<4x16x12xf32>)
        -> tensor<4x16x12xf32> {
      %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x8xf32>, tensor<4x8x12xf32>)
                               outs(%c : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
      return %r : tensor<4x16x12xf32>
    }"""
    mod = Module.parse(text, "bmm")
    base = mod.fresh().time(runs=1, warmup=0, threads=1, seed=3)
    tiled = mod.fresh()
    tiled.apply_schedule("0: T(1,4,4,0)")
    timed = time_alternating([mod.fresh(), tiled], rounds=3, runs=2, threads=1, seed=3)
    for t in timed:
        assert len(t.seconds) == 6 and all(s > 0 for s in t.seconds)
        # Three rounds of three calls each: an accumulation into %c would
        # have added a@b nine times.
        assert outputs_match(t.outputs, base.outputs)[0]
        assert np.array_equal(t.inputs[0], base.inputs[0])
        assert np.array_equal(t.inputs[1], base.inputs[1])
    fn = mod.compile(threads=1)
    a, b, c = fn.random_inputs(3)
    out = np.empty((4, 16, 12), np.float32)
    assert len(fn.time([a, b, c], [out], 4, warmup=2)) == 4
    assert np.allclose(out, c + a @ b, atol=1e-5)
    with pytest.raises(ValueError, match="input 1 must be a contiguous 4x8x12xf32"):
        fn.time([a, a, c], [out], 1)
