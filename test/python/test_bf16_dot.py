"""The front end's bf16-dot stage (mlir-rl-bf16-dot): a matmul or batch matmul
of bf16 values multiplies with vdpbf16ps on hosts with AVX-512 BF16.
Its outputs against the same program without the stage (the f32 path) and
against a float64 reference, on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

import mlir_rl
from mlir_rl import _core

needs_bf16_dot = pytest.mark.skipif(
    not _core.host_has_bf16_dot(), reason="the host has no AVX-512 BF16")

EXTEND = """  %e_{n} = tensor.empty() : tensor<{s}xf32>
  %{n} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins({src} : tensor<{s}xbf16>) outs(%e_{n} : tensor<{s}xf32>) {{
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  }} -> tensor<{s}xf32>
"""


def _bf16(x: np.ndarray) -> np.ndarray:
    """`x` rounded to bf16 (nearest even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def _program(m: int, k: int, n: int, transposed: bool, fill: bool, seed: int):
    """torch-mlir's form of a bf16 linear layer: the weight (W [N, K]
    transposed, or B [K, N]) and the activation extended to f32, a matmul
    into an f32 fill (or into the function's third argument)."""
    rng = np.random.default_rng(seed)
    w = _bf16(rng.standard_normal((n, k) if transposed else (k, n)))
    rows = ", ".join("[" + ", ".join(repr(float(v)) for v in r) + "]" for r in w)
    wt = f"tensor<{n}x{k}xbf16>" if transposed else f"tensor<{k}x{n}xbf16>"
    text = (f"#id = affine_map<(i, j) -> (i, j)>\n"
            f"func.func @main(%a: tensor<{m}x{k}xbf16>, %c: tensor<{m}x{n}xf32>)"
            f" -> tensor<{m}x{n}xf32> {{\n  %w = arith.constant dense<[{rows}]> : {wt}\n")
    src = "%w"
    if transposed:
        text += (f"  %e0 = tensor.empty() : tensor<{k}x{n}xbf16>\n"
                 f"  %t = linalg.transpose ins(%w : {wt}) outs(%e0 : tensor<{k}x{n}xbf16>)"
                 f" permutation = [1, 0]\n")
        src = "%t"
    text += EXTEND.format(n="b", s=f"{k}x{n}", src=src)
    text += EXTEND.format(n="af", s=f"{m}x{k}", src="%a")
    init = "%c"
    if fill:
        text += (f"  %z = arith.constant 0.0 : f32\n"
                 f"  %e = tensor.empty() : tensor<{m}x{n}xf32>\n"
                 f"  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{m}x{n}xf32>)"
                 f" -> tensor<{m}x{n}xf32>\n")
        init = "%f"
    text += (f"  %r = linalg.matmul ins(%af, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>)"
             f" outs({init} : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
             f"  return %r : tensor<{m}x{n}xf32>\n}}\n")
    return text, (w.T if transposed else w).astype(np.float64)


def _run(text: str, bf16_dot: bool):
    prepared = mlir_rl.front_end(text, bf16_dot=bf16_dot)
    m = mlir_rl.Module.parse(prepared)
    m.schedule_with_policy()
    return prepared, m.time(runs=1, warmup=0, threads=2, seed=5)


@needs_bf16_dot
@pytest.mark.parametrize("m,k,n,transposed,fill", [
    (1, 96, 32, True, True),     # one row (a batch-1 linear layer)
    (13, 64, 48, False, True),   # a tile of 8 and one of 5; panels of 16
    (64, 96, 96, True, False),   # accumulating into an argument
    (37, 2, 64, False, False),
    (13, 64, 40, True, True),    # a panel of 32, then 8 columns on f32 FMAs
    (5, 32, 24, False, False),   # a plain constant's 16 columns read as rows
    (9, 33, 32, False, True),    # K odd: 32 steps packed, the last in f32
    (9, 33, 40, True, False),    # a weight's 32 steps read as rows, then both
])
def test_bf16_dot_matches_the_f32_path_and_a_float64_reference(m, k, n, transposed, fill):
    text, b = _program(m, k, n, transposed, fill, seed=m + k + n)
    prepared, dot = _run(text, bf16_dot=True)
    assert "x86vector.avx512.dot" in prepared
    assert ("linalg.matmul" in prepared) == (n % 16 != 0 or k % 2 != 0)
    plain, f32 = _run(text, bf16_dot=False)
    assert "x86vector" not in plain
    # Same inputs (the seed); products exact in f32, sums in another order.
    ok, err = mlir_rl.outputs_match(dot.outputs, f32.outputs, rtol=1e-5, atol_scale=1e-5)
    assert ok, err
    if fill:
        a = np.asarray(dot.inputs[0], np.float64)
        ok, err = mlir_rl.outputs_match(dot.outputs, [a @ b], rtol=1e-5, atol_scale=1e-5)
        assert ok, err


def _program_of_arguments(batch: int, m: int, k: int, n: int) -> str:
    """A bf16 (batch) matmul of two arguments as torch-mlir imports one (bf16
    inputs, an f32 accumulator), which mlir-rl-compute-in-f32 gives
    extended inputs."""
    lead = f"{batch}x" if batch else ""
    op = "batch_matmul" if batch else "matmul"
    return (f"func.func @main(%a: tensor<{lead}{m}x{k}xbf16>, %b: tensor<{lead}{k}x{n}xbf16>)"
            f" -> tensor<{lead}{m}x{n}xf32> {{\n"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : tensor<{lead}{m}x{n}xf32>\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{lead}{m}x{n}xf32>)"
            f" -> tensor<{lead}{m}x{n}xf32>\n"
            f"  %r = linalg.{op} ins(%a, %b : tensor<{lead}{m}x{k}xbf16>, tensor<{lead}{k}x{n}xbf16>)"
            f" outs(%f : tensor<{lead}{m}x{n}xf32>) -> tensor<{lead}{m}x{n}xf32>\n"
            f"  return %r : tensor<{lead}{m}x{n}xf32>\n}}\n")


@needs_bf16_dot
@pytest.mark.parametrize("batch,m,k,n", [
    (0, 21, 64, 32),   # B read two rows at a time, interleaved
    (0, 8, 10, 48),    # panels of 16
    (12, 16, 64, 64),  # attention's scores: a batch per forall index
    (2, 3, 128, 16),
    (0, 9, 8, 40),     # 32 columns in a panel, 8 in an f32 matmul
    (3, 20, 6, 20),    # (ViT's 197 tokens: 192 and 5)
    (12, 20, 197, 64), # K odd (attention's values over 197 tokens)
])
def test_bf16_dot_of_arguments_matches_the_f32_path(batch, m, k, n):
    text = _program_of_arguments(batch, m, k, n)
    prepared, dot = _run(text, bf16_dot=True)
    assert "x86vector.avx512.dot" in prepared and "vector.interleave" in prepared
    assert ("matmul" in prepared) == (n % 16 != 0 or k % 2 != 0)
    _, f32 = _run(text, bf16_dot=False)
    ok, err = mlir_rl.outputs_match(dot.outputs, f32.outputs, rtol=1e-5, atol_scale=1e-5)
    assert ok, err
    a, b = (np.asarray(x, np.float64) for x in dot.inputs)
    ok, err = mlir_rl.outputs_match(dot.outputs, [a @ b], rtol=1e-5, atol_scale=1e-5)
    assert ok, err


def test_the_stage_follows_the_host_or_the_environment(monkeypatch):
    """MLIR_RL_BF16_DOT says whether the stage runs (else the host's
    features); the pass's option turns it off."""
    text, _ = _program(8, 4, 16, True, True, seed=0)
    monkeypatch.setenv("MLIR_RL_BF16_DOT", "0")
    assert not _core.host_has_bf16_dot()
    assert "x86vector" not in mlir_rl.front_end(text)
    monkeypatch.setenv("MLIR_RL_BF16_DOT", "1")
    assert _core.host_has_bf16_dot()
    assert "x86vector.avx512.dot" in mlir_rl.front_end(text)
    assert "x86vector" not in mlir_rl.front_end(text, bf16_dot=False)
    steps = mlir_rl.front_end_steps()
    assert steps.startswith("builtin.module(mlir-rl-compute-in-f32,mlir-rl-bf16-dot,"), steps


def test_an_f32_matmul_is_left_to_the_decisions(monkeypatch):
    """Only bf16 values extended: an f32 matmul by the same constant keeps
    its linalg.matmul (rounding its inputs would change its results)."""
    monkeypatch.setenv("MLIR_RL_BF16_DOT", "1")
    text, _ = _program(8, 4, 16, False, True, seed=1)
    f32 = text.replace("ins(%af,", "ins(%a32,").replace(
        "%a: tensor<8x4xbf16>", "%a: tensor<8x4xbf16>, %a32: tensor<8x4xf32>")
    out = mlir_rl.front_end(f32)
    assert "linalg.matmul" in out and "x86vector" not in out
