"""The roofline (bench/roofline.py): the host's peaks measured by kernels
that compute what they say, the work a kernel must do, and the fraction of
the bound a time reaches, in the result documents and the report."""
from __future__ import annotations

import numpy as np
import pytest

import mlir_rl
from mlir_rl.bench import report as R
from mlir_rl.bench import roofline
from mlir_rl.data import kernels as K


def _run(text: str, *inputs: np.ndarray) -> list[np.ndarray]:
    from mlir_rl.bench.timing import output_buffers
    fn = mlir_rl.Module.parse(text, "roofline").compile(2)
    outs = output_buffers(fn)
    fn.time(list(inputs), outs, 1, 0)
    return outs


def test_the_peak_kernels_compute_what_they_count():
    """FMA chains converge to c / (1 - m) = 1 each (12 accumulators summed);
    the read kernel sums its chunk `repeats` times (per lane, over blocks of
    8 vectors); the copy kernel leaves x + (repeats - 1). So no load, store
    or FMA is optimized away."""
    threads, lanes = 2, 16
    x = np.full((threads, lanes), 0.5, np.float32)
    (out,) = _run(roofline.fma_kernel(threads, lanes, 20_000), x)
    np.testing.assert_allclose(out, 12.0, rtol=1e-3)

    chunk, repeats = 8 * lanes * 3, 4
    x = np.random.default_rng(0).standard_normal((threads, chunk)).astype(np.float32)
    (out,) = _run(roofline.read_kernel(threads, lanes, chunk, repeats), x)
    expect = repeats * x.reshape(threads, -1, lanes).sum(axis=1)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-4)

    (out,) = _run(roofline.copy_kernel(threads, lanes, chunk, repeats), x)
    np.testing.assert_allclose(out, x + (repeats - 1), rtol=1e-6)


def test_peaks_are_measured_once_per_host_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_RL_CACHE_DIR", str(tmp_path))
    peaks = roofline.host_peaks(2)
    assert peaks["fma_gflops"] > 0 and peaks["threads"] == 2
    assert set(peaks["bandwidth_gbs"]) == set(roofline.LEVELS)
    assert all(v > 0 for v in peaks["bandwidth_gbs"].values())
    assert list(tmp_path.glob("roofline-*.json"))

    def fail(*a, **k):
        raise AssertionError("measured again")
    monkeypatch.setattr(roofline, "measure_peaks", fail)
    assert roofline.host_peaks(2) == peaks
    with pytest.raises(AssertionError, match="measured again"):
        roofline.host_peaks(2, refresh=True)


def test_work_counts_arithmetic_and_compulsory_bytes():
    """A matmul: 2*m*n*k operations (a fill has no arithmetic), its two
    arguments and result; this row softmax: a max, then subtract, exp and
    add, then subtract, exp and divide per element (7: it computes exp
    twice); a 1-D convolution: a multiply-add per tap."""
    m, n, k = 64, 48, 32
    assert roofline.work(K.matmul(m, n, k)) == (2 * m * n * k, 4 * (m * k + k * n + m * n))
    flops, nbytes = roofline.work(K.softmax_rows(16, 256))
    assert (flops, nbytes) == (7 * 16 * 256, 8 * 16 * 256)
    flops, nbytes = roofline.work(K.conv1d_ncw(1, 8, 35, 16, 3, 2))
    assert flops == 2 * 16 * 17 * 8 * 3
    assert nbytes == 4 * (8 * 35 + 16 * 8 * 3 + 16 * 17)


PEAKS = {"threads": 2, "fma_gflops": 100.0, "caches_bytes": {"L2": 1 << 20, "L3": 32 << 20},
         "bandwidth_gbs": {"L2": 200.0, "L3": 100.0, "DRAM": 20.0}, "vector_lanes": 16}


def test_the_bound_is_the_slower_of_compute_and_the_working_sets_level():
    # 1 GFLOP on 1 MB (fits L2 of two cores): 10 ms at the FMA peak.
    a = roofline.attainment(0.02, 10**9, 10**6, PEAKS)
    assert a["bound"] == "compute" and a["fraction"] == pytest.approx(0.5)
    assert a["gflops"] == pytest.approx(50.0)
    # 100 MB (DRAM) with little arithmetic: 5 ms at 20 GB/s.
    a = roofline.attainment(0.01, 10**6, 10**8, PEAKS)
    assert a["bound"] == "DRAM" and a["fraction"] == pytest.approx(0.5)
    assert roofline.level_of(3 << 20, PEAKS) == "L3"
    assert roofline.attainment(0.0, 1, 1, PEAKS) is None


def test_documents_carry_the_roofline_into_the_table():
    kernel = {"name": "mm", "figures": {
        "unscheduled": R.figure("ok", [0.1]), "mlir-rl": R.figure("ok", [0.02]),
        "torch": R.figure("ok", [0.04])}}
    doc = R.new_result("ops", "unscheduled", ["unscheduled", "mlir-rl", "torch"], [kernel], 2,
                       settings={})
    roofline.annotate(doc, PEAKS, {"mm": (10**9, 10**6)})
    R.validate(doc)
    f = doc["kernels"][0]["figures"]["mlir-rl"]
    assert f["bound"] == "compute" and f["fraction"] == pytest.approx(0.5)
    assert doc["kernels"][0]["work"] == {"flops": 10**9, "bytes": 10**6, "level": "L2"}
    table = R.markdown_table(doc)
    assert "mlir-rl of bound" in table and "| 50% compute | 25% |" in table
    assert "FMA 100 GFLOP/s" in table
