"""The torch.compile backend and mlir_rl.compile: PyTorch models through
torch-mlir, mlir-rl-prepare, the pass, mlir-rl-lower and the JIT, compared
with eager; the disk cache; fallbacks with a warning; the JIT's runtime
(JitFunction) on caller-owned buffers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch import nn

pytestmark = pytest.mark.slow  # PyTorch models through torch-mlir and the JIT

import mlir_rl
from mlir_rl import _core
from mlir_rl import dynamo as D
from mlir_rl.data.torch_models import randomize_batch_norm


class ConvBlock(nn.Module):
    """conv -> batch norm -> relu -> pool -> linear, two outputs."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.BatchNorm2d(8)
        self.l = nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.b(self.c(x)))
        return self.l(y.mean((2, 3))), y


class Attention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.n = nn.LayerNorm(d)

    def forward(self, x):
        a = torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) / 4.0, dim=-1)
        return self.n(x + nn.functional.gelu(a @ self.v(x)))


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_RL_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()
    D.stats.__init__()
    yield
    torch._dynamo.reset()


def _model(cls):
    torch.manual_seed(0)
    return randomize_batch_norm(cls().eval())


def test_jit_function_reads_inputs_in_place_and_writes_outputs():
    text = """
    func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>)
        -> (tensor<4x3xf32>, tensor<3x4xf32>) {
      %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>)
                         outs(%c : tensor<4x3xf32>) -> tensor<4x3xf32>
      %e = tensor.empty() : tensor<3x4xf32>
      %t = linalg.transpose ins(%r : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
      return %r, %t : tensor<4x3xf32>, tensor<3x4xf32>
    }"""
    f = _core.compile_function(text, "", 2)
    assert [o["shape"] for o in f.signature["outputs"]] == [[4, 3], [3, 4]]
    a, b, c = torch.randn(4, 8), torch.randn(8, 3), torch.randn(4, 3)
    c0 = c.clone()
    o1, o2 = torch.empty(4, 3), torch.empty(3, 4)
    f([a, b, c], [o1, o2])
    assert torch.allclose(o1, c0 + a @ b, atol=1e-5)
    assert torch.equal(o2, o1.T)
    # The accumulator is the caller's: the code must not write into it.
    assert torch.equal(c, c0)
    # numpy arrays work as well.
    n1, n2 = np.empty((4, 3), np.float32), np.empty((3, 4), np.float32)
    f([a.numpy(), b.numpy(), c.numpy()], [n1, n2])
    assert np.allclose(n1, o1.numpy())
    with pytest.raises(ValueError, match="takes 3 inputs"):
        f([a, b], [o1, o2])
    with pytest.raises(ValueError, match="input 0 must be a contiguous 4x8xf32"):
        f([a.double(), b, c], [o1, o2])
    # A strided input is read through a contiguous copy; a strided output
    # cannot take the results.
    f([a.T.contiguous().T, b, c], [o1, o2])
    assert torch.allclose(o1, c0 + a @ b, atol=1e-5)
    with pytest.raises(TypeError):
        f([a, b, c], [torch.empty(3, 4).T, o2])


@pytest.mark.parametrize("cls,shape", [(ConvBlock, (2, 3, 12, 12)), (Attention, (2, 10, 16))])
def test_torch_compile_backend_matches_eager_and_caches(cls, shape):
    m = _model(cls)
    x = torch.randn(*shape)
    with torch.no_grad():
        ref = m(x)
        out = torch.compile(m, backend="mlir_rl")(x)
    ref, out = (ref, out) if isinstance(ref, tuple) else ((ref,), (out,))
    for r, o in zip(ref, out):
        assert o.shape == r.shape
        assert torch.allclose(o, r, rtol=1e-4, atol=1e-4), (o - r).abs().max()
    assert D.stats.compiled >= 1 and D.stats.fallbacks == 0, D.stats
    # Another input, the same graph: the compiled code, not a recompile.
    x2 = torch.randn(*shape)
    with torch.no_grad():
        out2 = torch.compile(m, backend="mlir_rl")(x2)
        ref2 = m(x2)
    out2 = out2 if isinstance(out2, tuple) else (out2,)
    ref2 = ref2 if isinstance(ref2, tuple) else (ref2,)
    assert all(torch.allclose(o, r, rtol=1e-4, atol=1e-4) for o, r in zip(out2, ref2))
    # A fresh dynamo (as in a new process): served from the disk cache, the
    # scheduled IR and the machine code (loaded, not compiled), with eager's
    # outputs.
    compiled_before, objects_before = D.stats.compiled, D.stats.object_hits
    torch._dynamo.reset()
    with torch.no_grad():
        out3 = torch.compile(m, backend="mlir_rl")(x2)
    assert D.stats.compiled == compiled_before and D.stats.disk_hits >= 1, D.stats
    assert D.stats.object_hits > objects_before, D.stats
    # ... found by the graph index, without torch.export.
    assert D.stats.index_hits >= 1, D.stats
    out3 = out3 if isinstance(out3, tuple) else (out3,)
    assert all(torch.allclose(o, r, rtol=1e-4, atol=1e-4) for o, r in zip(out3, ref2))


def test_graph_index_serves_the_same_graph_and_weights_only(monkeypatch):
    # A fresh dynamo finds the graph it compiled before through the index
    # (torch.export is not called); other weights, or another graph of the
    # same module's code at another shape, are exported and compiled anew.
    m = _model(ConvBlock)
    x = torch.randn(1, 3, 10, 10)
    with torch.no_grad():
        torch.compile(m, backend="mlir_rl")(x)
    assert D.stats.compiled == 1 and D.stats.index_hits == 0, D.stats
    exports = []
    real_export = torch.export.export
    monkeypatch.setattr(torch.export, "export",
                        lambda *a, **k: exports.append(1) or real_export(*a, **k))
    torch._dynamo.reset()
    with torch.no_grad():
        a, _ = torch.compile(m, backend="mlir_rl")(x)
        assert torch.allclose(a, m(x)[0], rtol=1e-4, atol=1e-4)
    assert D.stats.index_hits == 1 and D.stats.compiled == 1 and not exports, D.stats
    with torch.no_grad():
        m.l.weight.mul_(2.0)
    torch._dynamo.reset()
    with torch.no_grad():
        b, _ = torch.compile(m, backend="mlir_rl")(x)
        assert torch.allclose(b, m(x)[0], rtol=1e-4, atol=1e-4)
    assert D.stats.index_hits == 1 and D.stats.compiled == 2 and exports, D.stats
    torch._dynamo.reset()
    x2 = torch.randn(1, 3, 12, 12)
    with torch.no_grad():
        c, _ = torch.compile(m, backend="mlir_rl")(x2)
        assert torch.allclose(c, m(x2)[0], rtol=1e-4, atol=1e-4)
    assert D.stats.index_hits == 1 and D.stats.compiled == 3, D.stats


def test_backend_freezes_weights_and_notices_when_they_change():
    m = _model(ConvBlock)
    x = torch.randn(1, 3, 10, 10)
    f = torch.compile(m, backend="mlir_rl")
    with torch.no_grad():
        a, _ = f(x)
        assert torch.allclose(a, m(x)[0], rtol=1e-4, atol=1e-4)
        m.l.weight.mul_(2.0)                 # an in-place update of a weight
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a2, _ = f(x)
        assert torch.allclose(a2, m(x)[0], rtol=1e-4, atol=1e-4)
        assert not torch.allclose(a2, a)
        assert any("weights changed" in str(i.message) for i in w)
    # Unfrozen, the weights are inputs: an update is simply used.
    torch._dynamo.reset()
    g = torch.compile(m, backend=D.make_backend(freeze=False))
    with torch.no_grad():
        b, _ = g(x)
        m.l.weight.mul_(0.5)
        b2, _ = g(x)
        assert torch.allclose(b2, m(x)[0], rtol=1e-4, atol=1e-4)
        assert not torch.allclose(b, b2)


def test_compile_freezes_weights_and_matches_eager():
    m = _model(ConvBlock)
    x = torch.randn(1, 3, 10, 10)
    f = mlir_rl.compile(m, [x])
    assert isinstance(f, D.CompiledGraph) and f.schedule
    with torch.no_grad():
        ra, ry = m(x)
    a, y = f(x)
    assert torch.allclose(a, ra, rtol=1e-4, atol=1e-4)
    assert torch.allclose(y, ry, rtol=1e-4, atol=1e-4)


def test_one_import_worker_serves_every_graph_and_a_dead_one_is_replaced(tmp_path):
    # torch-mlir runs in a worker process that outlives a graph: the second
    # graph is imported by the first graph's worker; a request it cannot
    # carry out is answered (and the worker lives on); a worker that died
    # is started again.
    def check(m, x):
        f = mlir_rl.compile(m, [x])
        assert isinstance(f, D.CompiledGraph)
        with torch.no_grad():
            expected = m(x)
        for got, want in zip(f(x), expected):
            assert torch.allclose(got, want, rtol=1e-4, atol=1e-4)

    check(_model(ConvBlock), torch.randn(1, 3, 10, 10))
    worker = D._Importer._proc
    assert worker is not None and worker.poll() is None
    check(_model(ConvBlock), torch.randn(1, 3, 12, 12))
    assert D._Importer._proc is worker and D.stats.compiled == 2
    ok, failed = D._Importer.convert(tmp_path / "missing.pt2", tmp_path / "out.mlir")
    assert not ok and failed and D._Importer._proc is worker and worker.poll() is None
    worker.kill()
    worker.wait()
    check(_model(ConvBlock), torch.randn(1, 3, 14, 14))
    assert D._Importer._proc is not worker and D._Importer._proc.poll() is None
    assert D.stats.compiled == 3 and D.stats.fallbacks == 0


class _Literals(nn.Module):
    """Weights and tensor constants of several dtypes (f32, f64, i64, bool,
    bf16, a one-element tensor) for the importer's literals."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(12, 7)
        self.register_buffer("scale", torch.randn(7, dtype=torch.float64))
        self.register_buffer("index", torch.tensor([6, 0, 3, 1], dtype=torch.int64))
        self.register_buffer("mask", torch.rand(4, 7) > 0.5)
        self.register_buffer("shift", torch.randn(7).to(torch.bfloat16))
        self.register_buffer("one", torch.tensor([0.25]))

    def forward(self, x):
        y = (self.lin(x).double() * self.scale).float() + self.shift.float() * self.one
        y = torch.where(self.mask, y, 0.0)
        return y.index_select(1, self.index)


def test_fast_weight_literals_import_to_the_text_torch_mlir_writes(tmp_path):
    # The worker's weights bypass torch-mlir's tensor -> list -> numpy path
    # (the bulk of a large model's import); the text must be byte for byte
    # what that path writes, over every dtype the importer takes.
    import os
    import subprocess
    import sys
    from pathlib import Path
    with torch.no_grad():
        ep = torch.export.export(_model(_Literals), (torch.randn(4, 12),))
    torch.export.save(ep, tmp_path / "p.pt2")
    script = Path(D.__file__).with_name("_torch_mlir_import.py")
    texts = []
    for slow in ("0", "1"):
        out = tmp_path / f"out{slow}.mlir"
        r = subprocess.run([sys.executable, str(script), str(tmp_path / "p.pt2"), str(out)],
                           env={**os.environ, "MLIR_RL_SLOW_LITERALS": slow},
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        texts.append(out.read_text())
    for name in ("7_12_torch.float32", "7_torch.float64", "4_torch.int64",
                 "4_7_torch.uint8", "7_torch.bfloat16"):  # (the mask: bytes)
        assert f"torch_tensor_{name}:" in texts[0], name
    assert texts[0] == texts[1]


def test_unsupported_dtype_falls_back_with_one_warning():
    def f(x):
        return x * 2 + 1

    x = torch.randint(-5, 5, (8, 8), dtype=torch.int16)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = torch.compile(f, backend="mlir_rl")(x)
    assert torch.equal(out, f(x))
    msgs = [str(i.message) for i in w if "mlir_rl" in str(i.message)]
    assert len(msgs) == 1 and "int16" in msgs[0], msgs
    assert D.stats.fallbacks == 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("cls,shape", [(ConvBlock, (2, 3, 12, 12)), (Attention, (2, 10, 16))])
def test_bf16_and_f16_models_compile_and_match_eager(cls, shape, dtype):
    """Weights and inputs in the type, compiled (no fallback): eager's
    outputs within torch.testing's relative tolerance for the type (the
    absolute one scaled by the largest output), and no farther from the
    float32 model's outputs than eager's are."""
    m32 = _model(cls)
    m = _model(cls).to(dtype)
    x = torch.randn(*shape).to(dtype)
    with torch.no_grad():
        ref32 = m32(x.float())
        ref = m(x)
        out = torch.compile(m, backend="mlir_rl")(x)
    ref, out, ref32 = ((ref, out, ref32) if isinstance(ref, tuple)
                       else ((ref,), (out,), (ref32,)))
    assert D.stats.compiled >= 1 and D.stats.fallbacks == 0, D.stats
    rtol = {torch.bfloat16: 1.6e-2, torch.float16: 1e-3}[dtype]
    for r, o, f in zip(ref, out, ref32):
        assert o.dtype == dtype and o.shape == r.shape
        ok, err = mlir_rl.outputs_match([o.double().numpy()], [r.double().numpy()],
                                        rtol=rtol, atol_scale=rtol)
        assert ok, err
        ours, eagers = ((t.float() - f).abs().max().item() for t in (o, r))
        assert ours <= 2 * eagers + 1e-6, (ours, eagers)


def test_dynamic_shapes_are_compiled_per_shape_up_to_the_limit():
    """From a module's second shape on dynamo hands over a graph of
    symbolic sizes: each shape is compiled (bound, exported static), a shape
    seen before reuses its code, and past shape_limit new shapes run
    eagerly with one warning."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).eval()
    f = torch.compile(m, backend=D.make_backend(shape_limit=2))
    with warnings.catch_warnings(record=True) as w, torch.no_grad():
        warnings.simplefilter("always")
        for rows in (4, 8, 16, 8, 32, 16, 64):
            x = torch.randn(rows, 16)
            assert torch.allclose(f(x), m(x), rtol=1e-4, atol=1e-5), rows
    msgs = [str(i.message) for i in w if "mlir_rl" in str(i.message)]
    # 4 as a static graph; 8 and 16 through the dynamic one; 32, 64 eager.
    assert D.stats.compiled == 3 and D.stats.fallbacks == 0, D.stats
    assert len(msgs) == 1 and "2 shapes" in msgs[0], msgs


def test_autograd_falls_back_rather_than_dropping_gradients():
    m = nn.Linear(4, 3)
    x = torch.randn(2, 4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = torch.compile(m, backend="mlir_rl")(x)
    out.sum().backward()          # gradients still flow: eager ran
    assert m.weight.grad is not None
    assert any("autograd" in str(i.message) for i in w)


def test_an_op_torch_mlir_cannot_import_is_named(monkeypatch):
    # Make the importer fail as it does on an unsupported op, and check the
    # warning names it; the result comes from eager.
    def fake_import(ep, workdir):
        raise D.CompileFailure("torch-mlir cannot import the graph: torch.aten.fancy_op")

    monkeypatch.setattr(D, "_import", fake_import)

    def f(x):
        return x.sin() + 1

    x = torch.randn(5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = torch.compile(f, backend="mlir_rl")(x)
    assert torch.equal(out, f(x))
    assert any("torch.aten.fancy_op" in str(i.message) for i in w)


def test_a_wrong_result_is_never_returned(monkeypatch):
    # A compiled graph whose outputs differ from eager (a broken schedule)
    # is caught by the check and left to eager.
    real = D._schedule

    def broken(text, options, threads):
        ir, schedule = real(text, options, threads)
        return ir.replace("arith.addf", "arith.subf", 1), schedule

    monkeypatch.setattr(D, "_schedule", broken)

    def f(x, y):
        return x + y

    x, y = torch.randn(6, 6), torch.randn(6, 6)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = torch.compile(f, backend="mlir_rl")(x, y)
    assert torch.equal(out, x + y)
    assert any("differ from eager" in str(i.message) for i in w), [str(i.message) for i in w]


def test_a_long_compile_says_so_once_and_a_short_one_stays_quiet(capsys):
    import time
    with D._progress("mlir_rl: compiling a graph", after=0.05):
        time.sleep(0.3)
    with D._progress("mlir_rl: a short one", after=5.0):
        pass
    with D._progress("mlir_rl: from the cache", quiet=True, after=0.0):
        time.sleep(0.1)
    err = capsys.readouterr().err
    assert err.count("mlir_rl: compiling a graph ...") == 1
    assert "short one" not in err and "from the cache" not in err
