"""bf16 and f16 programs: the front end computes them in f32
(mlir-rl-compute-in-f32), the lowering takes what is left, and the JIT runs
them; outputs against a float64 reference on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

import mlir_rl

# A matmul with a bias and tanh, and a row sum of exp: both reduce over
# 1024 terms, which a bf16 accumulator gets wrong by far more than bf16's
# rounding of the result.
PROGRAM = """
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#red = affine_map<(i, j) -> (i, 0)>
func.func @main(%a: tensor<64x1024xT>, %b: tensor<1024x96xT>, %bias: tensor<96xT>)
    -> (tensor<64x96xT>, tensor<64x1xT>) {
  %c0 = arith.constant 0.0 : T
  %e = tensor.empty() : tensor<64x96xT>
  %f = linalg.fill ins(%c0 : T) outs(%e : tensor<64x96xT>) -> tensor<64x96xT>
  %m = linalg.matmul ins(%a, %b : tensor<64x1024xT>, tensor<1024x96xT>)
                     outs(%f : tensor<64x96xT>) -> tensor<64x96xT>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%m, %bias : tensor<64x96xT>, tensor<96xT>) outs(%e : tensor<64x96xT>) {
  ^bb0(%x: T, %y: T, %o: T):
    %s = arith.addf %x, %y : T
    %t = math.tanh %s : T
    linalg.yield %t : T
  } -> tensor<64x96xT>
  %e1 = tensor.empty() : tensor<64x1xT>
  %f1 = linalg.fill ins(%c0 : T) outs(%e1 : tensor<64x1xT>) -> tensor<64x1xT>
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
       ins(%a : tensor<64x1024xT>) outs(%f1 : tensor<64x1xT>) {
  ^bb0(%x: T, %acc: T):
    %p = math.exp %x : T
    %q = arith.addf %p, %acc : T
    linalg.yield %q : T
  } -> tensor<64x1xT>
  return %r, %s : tensor<64x96xT>, tensor<64x1xT>
}
"""

# torch.testing's relative tolerances for the types.
RTOL = {"bf16": 1.6e-2, "f16": 1e-3}


def _run(element: str, compute_in_f32: bool):
    text = mlir_rl.front_end(PROGRAM.replace("T", element), compute_in_f32=compute_in_f32)
    m = mlir_rl.Module.parse(text)
    m.schedule_with_policy()
    t = m.time(runs=1, warmup=0, threads=2, seed=3)
    a, b, bias = (np.asarray(x, dtype=np.float64) for x in t.inputs)
    return t.outputs, [np.tanh(a @ b + bias), np.exp(a).sum(1, keepdims=True)]


@pytest.mark.parametrize("element", ["bf16", "f16"])
def test_low_precision_program_matches_a_float64_reference(element):
    outputs, ref = _run(element, compute_in_f32=True)
    assert [o.shape for o in outputs] == [(64, 96), (64, 1)]
    ok, err = mlir_rl.outputs_match(outputs, ref, rtol=RTOL[element],
                                    atol_scale=RTOL[element])
    assert ok, err
    # The inputs were drawn in the type: values bf16 or f16 can hold.
    assert len(np.unique(outputs[0])) > 100


def test_without_compute_in_f32_a_bf16_accumulator_loses_the_sum():
    """What the stage is for: the same program accumulating in bf16 (the
    IR's own semantics) misses the reference by far more than rounding."""
    outputs, ref = _run("bf16", compute_in_f32=False)
    err = float(np.max(np.abs(outputs[0] - ref[0])))
    assert err > 0.1, err
    ok, _ = mlir_rl.outputs_match(outputs, ref, rtol=RTOL["bf16"], atol_scale=RTOL["bf16"])
    assert not ok


def test_the_front_end_runs_compute_in_f32_first():
    steps = mlir_rl.front_end_steps()
    assert steps.startswith("builtin.module(mlir-rl-compute-in-f32,"), steps
    # (Without bf16-dot, which makes the f32 matmul a vdpbf16ps kernel.)
    prepared = mlir_rl.front_end(PROGRAM.replace("T", "bf16"), bf16_dot=False)
    assert "outs(%" in prepared and "xf32>) -> tensor<64x96xf32>" in prepared
    # f32 programs are left as they were by the stage.
    f32 = PROGRAM.replace("T", "f32")
    assert mlir_rl.front_end(f32, compute_in_f32=True) == mlir_rl.front_end(
        f32, compute_in_f32=False)


def test_bf16_runs_on_numpy_arrays_of_its_bits():
    """numpy has no bf16: random_inputs gives a bf16 input as uint16 bits,
    the function takes such arrays (and writes its bf16 results so), and
    time_compiled's outputs equal Module.time's."""
    from mlir_rl.bench.timing import output_buffers, time_compiled
    m = mlir_rl.Module.parse(mlir_rl.prepare(PROGRAM.replace("T", "bf16")))
    m.schedule_with_policy()
    f = m.compile(threads=1)
    assert [i["dtype"] for i in f.signature["inputs"]] == ["bf16"] * 3
    xs = f.random_inputs(3)
    assert all(x.dtype == np.uint16 for x in xs)
    outs = output_buffers(f)
    assert [o.dtype for o in outs] == [np.uint16, np.uint16]
    f.time(xs, outs, 1, 0)
    [t] = time_compiled([f], rounds=1, runs=1, warmup=0, seed=3)
    ref = m.time(runs=1, warmup=0, threads=1, seed=3)
    ok, err = mlir_rl.outputs_match(t.outputs, ref.outputs, rtol=0, atol_scale=0)
    assert ok, err
    # The inputs decoded are the values Module.time used.
    assert all(np.array_equal(a, b) for a, b in zip(t.inputs, ref.inputs))


def test_the_fuzzer_draws_bf16_programs_and_checks_them():
    """One f32 program in BF16_EVERY of the fuzzer's stream is drawn on bf16
    data; the worker computes it in f32 (the front end's semantics) for the
    reference and every pair, and its schedules come out equal."""
    import time
    from multiprocessing.connection import wait

    from mlir_rl.fuzz.programs import GenConfig, program_for
    from mlir_rl.fuzz.worker import Spec, Worker, WorkerConfig
    cfg = GenConfig(bf16=True)
    programs = [program_for(5, i, cfg) for i in range(64)]
    bf16 = [p for p in programs if p.dtype == "bf16"]
    assert 2 <= len(bf16) <= 24, len(bf16)
    assert all("f32" not in p.text() for p in bf16[:4])
    # Without the option the stream is the f32 one it always was.
    assert [program_for(5, i).dtype for i in range(64)] == [
        "f32" if p.dtype == "bf16" else p.dtype for p in programs]
    program = next(p for p in bf16 if any(n.kind in ("matmul", "batch_matmul", "reduce",
                                                       "softmax", "conv") for n in p.nodes))
    w = Worker(120)
    try:
        specs = [Spec("random", s) for s in range(3)] + [Spec("greedy"), Spec("prepared")]
        w.submit(program.text(), specs, WorkerConfig(threads=1))
        deadline = time.monotonic() + 300
        while not w.pump() and time.monotonic() < deadline:
            wait([w.conn], timeout=0.5)
        assert w.outcome.program["status"] == "ok", w.outcome.program
        statuses = [w.outcome.results[i]["status"] for i in range(len(specs))]
        assert all(s in ("ok", "duplicate") for s in statuses), w.outcome.results
        assert statuses.count("ok") >= 2
    finally:
        w.close()


MOVES = """
func.func @main(%a: tensor<17x17xbf16>, %b: tensor<33xbf16>) -> (tensor<17x17xbf16>, tensor<9x33xbf16>) {
  %e = tensor.empty() : tensor<17x17xbf16>
  %t = linalg.transpose ins(%a : tensor<17x17xbf16>) outs(%e : tensor<17x17xbf16>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<9x33xbf16>
  %r = linalg.broadcast ins(%b : tensor<33xbf16>) outs(%e2 : tensor<9x33xbf16>) dimensions = [0]
  return %t, %r : tensor<17x17xbf16>, tensor<9x33xbf16>
}
"""


def test_bf16_moves_of_8k_plus_1_elements_run():
    """Vectors of 17 and 33 bf16 that are only moved (a transpose, a
    broadcast) aborted the process in LLVM's instruction selection on AVX-512
    BF16 hosts; mlir-rl-move-bf16-as-i16 moves them as i16. Run in a child
    process: an abort would take pytest with it."""
    import subprocess
    import sys
    code = f"""
import numpy as np, mlir_rl
m = mlir_rl.Module.parse(mlir_rl.front_end({MOVES!r}))
m.schedule_with_policy()
t = m.time(runs=1, warmup=0, threads=2, seed=3)
a, b = (np.asarray(x, np.float32) for x in t.inputs)
assert np.array_equal(np.asarray(t.outputs[0], np.float32), a.T)
assert np.array_equal(np.asarray(t.outputs[1], np.float32), np.broadcast_to(b, (9, 33)))
print("equal")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "equal" in r.stdout, r.stderr[-2000:]
