"""mlir-rl side by side with its peers on the operator suite.

For each kernel: the unscheduled program (the paper's baseline: same lowering,
no schedule), mlir-rl (the pass with the shipped policy, through the plugin in
stock mlir-opt-22), PyTorch eager, torch.compile (inductor), IREE (llvm-cpu,
host) and numpy where it applies. All get the same seeded inputs and the same
thread count; each is warmed up and timed ``runs`` times (median, min, max);
every output is checked against PyTorch's. A comparator that fails is
reported as failed with its reason, never dropped.

Run ``mlir-rl bench --suite ops --compare torch,inductor,iree,numpy``.
"""
from __future__ import annotations

import math
import os
import platform
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from mlir_rl.data import kernels as K

COMPARATORS = ("torch", "inductor", "iree", "numpy", "iree-spec")
# The pass's decision sources (decisions=); the policy is the contender mlir-rl.
DECISION_SOURCES = ("policy", "heuristic", "random")


@dataclass
class PeerKernel:
    name: str
    text: str
    torch_fn: Callable     # (*tensors) -> tensor, same math as the MLIR
    numpy_fn: Optional[Callable] = None


# PyTorch's and numpy's code for a matmul kernel.
_MATMUL = (lambda a, b: a @ b, lambda a, b: a @ b)


def _conv_nhwc(i, k, stride):
    import torch.nn.functional as F
    return F.conv2d(i.permute(0, 3, 1, 2), k.permute(3, 2, 0, 1), stride=stride).permute(0, 2, 3, 1)


def _dw_nhwc(i, k, stride):
    import torch.nn.functional as F
    c = i.shape[3]
    return F.conv2d(i.permute(0, 3, 1, 2), k.permute(2, 0, 1)[:, None], stride=stride,
                    groups=c).permute(0, 2, 3, 1)


def operator_suite() -> list[PeerKernel]:
    """The paper's Figure 5 ops (matmul, conv_2d, max pooling, add, relu) with
    shapes from real models, plus batch_matmul, depthwise conv and softmax."""
    import torch
    import torch.nn.functional as F
    return [
        PeerKernel("matmul_bert_384x768x768", K.matmul(384, 768, 768),
                   lambda a, b: a @ b, lambda a, b: a @ b),
        PeerKernel("batch_matmul_bert_12x384x384x64", K.batch_matmul(12, 384, 384, 64),
                   torch.bmm, np.matmul),
        PeerKernel("conv2d_nchw_resnet_64x56x56_3x3", K.conv2d_nchw(1, 64, 58, 58, 64, 3, 3),
                   lambda i, k: F.conv2d(i, k)),
        PeerKernel("conv2d_nhwc_resnet_128x28x28_3x3", K.conv2d_nhwc(1, 30, 30, 128, 3, 3, 128),
                   lambda i, k: _conv_nhwc(i, k, 1)),
        PeerKernel("depthwise_nhwc_mobilenet_144x56x56", K.depthwise_conv2d_nhwc(1, 58, 58, 144, 3, 3),
                   lambda i, k: _dw_nhwc(i, k, 1)),
        PeerKernel("maxpool_nchw_resnet_64x112x112", K.maxpool_nchw(1, 64, 112, 112, 3, 2),
                   lambda i: F.max_pool2d(i, 3, 2)),
        PeerKernel("add_resnet_1x64x56x56", K.add([1, 64, 56, 56]),
                   lambda x, y: x + y, lambda x, y: x + y),
        PeerKernel("relu_resnet_1x64x56x56", K.relu([1, 64, 56, 56]),
                   torch.relu, lambda x: np.maximum(x, 0)),
        PeerKernel("softmax_bert_384x384", K.softmax_rows(384, 384),
                   lambda x: torch.softmax(x, -1),
                   lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max(-1, keepdims=True)))),
    ]


def smoke_suite() -> list[PeerKernel]:
    """Three small kernels, for the harness's own tests."""
    import torch
    import torch.nn.functional as F
    return [
        PeerKernel("matmul_64x128x96", K.matmul(64, 128, 96), lambda a, b: a @ b, lambda a, b: a @ b),
        PeerKernel("maxpool_nchw_8x16x16", K.maxpool_nchw(1, 8, 16, 16, 2, 2),
                   lambda i: F.max_pool2d(i, 2, 2)),
        PeerKernel("softmax_16x32", K.softmax_rows(16, 32), lambda x: torch.softmax(x, -1)),
    ]


MODELS_DIR = Path(os.environ.get("MLIR_RL_MODELS_DIR", "runs/models"))


def model_file(name: str) -> Path:
    """The MLIR file of ``name`` (one of ``torch_models.MODELS``) imported
    with torch-mlir into MODELS_DIR, importing it on first use."""
    from mlir_rl.data import torch_models
    return torch_models.import_to_linalg(name, MODELS_DIR / f"{name}.mlir")


def models_suite() -> list[PeerKernel]:
    """Every network of ``torch_models.MODELS`` (ResNet-18, MobileNetV2,
    VGG-11, BERT-base, GPT-2, ViT-B/16 and the blocks no rule was tuned on:
    ConvNeXt-T, ViT-S/16, MLP-Mixer, UNet, wav2vec2, GRU, EfficientNet-B0,
    Llama): self-written, seeded weights, imported to linalg with torch-mlir,
    each timed whole."""
    import torch

    from mlir_rl.data import torch_models as models
    out = []
    for name in models.MODELS:
        net = models.build(name)
        out.append(PeerKernel(name, model_file(name).read_text(),
                              (lambda n: lambda *xs: n(*xs))(net)))
    del torch
    return out


def _lqcd_fns(signature: str) -> tuple[Callable, Callable]:
    """PyTorch's and numpy's code for an LQCD contraction of the training
    data's generator (``lqcd_contraction``), from its signature."""
    _, _, size, shift = signature.split("|")
    size, shift = int(size), int(shift)

    def contract(p, q):
        import torch
        return torch.einsum("ytxakil,ytxkblj->ytxabij", p[:, :, shift:shift + size], q)

    def contract_np(p, q):
        return np.einsum("ytxakil,ytxkblj->ytxabij", p[:, :, shift:shift + size], q,
                         optimize=True)
    return contract, contract_np


def lqcd_suite() -> list[PeerKernel]:
    """LQCD-style contractions (9 loops, a shifted site access): the
    generator of the training data with seeds it never used."""
    import random

    from mlir_rl.data.dataset import lqcd_contraction
    out = []
    for seed in (101, 202, 303, 404):
        prog = lqcd_contraction(random.Random(seed), seed)
        _, n_y, size, shift = prog.signature.split("|")
        out.append(PeerKernel(f"lqcd_y{n_y}_L{size}_shift{shift}_s{seed}", prog.text,
                              *_lqcd_fns(prog.signature)))
    return out


def unseen_suite() -> list[PeerKernel]:
    """The unseen kernels of ``mlir-rl check-policy``
    (``mlir_rl.data.suites.unseen_suite``), with the peers' code for each."""
    import random

    import torch
    import torch.nn.functional as F

    from mlir_rl.data.dataset import lqcd_contraction
    from mlir_rl.data.suites import unseen_suite as texts
    softmax_np = (lambda x: (lambda e: e / e.sum(-1, keepdims=True))(
        np.exp(x - x.max(-1, keepdims=True))))
    fns = {
        "bert_matmul_256x768x768": (lambda a, b: a @ b, lambda a, b: a @ b),
        "bert_ffn_matmul_256x3072x768": (lambda a, b: a @ b, lambda a, b: a @ b),
        "bert_attention_bmm_12x256x256x64": (torch.bmm, np.matmul),
        "resnet_conv_nchw_128x28x28": (lambda i, k: F.conv2d(i, k), None),
        "resnet_conv_nhwc_64x56x56": (lambda i, k: _conv_nhwc(i, k, 1), None),
        "resnet_maxpool_nchw_64x112": (lambda i: F.max_pool2d(i, 3, 2), None),
        "mobilenet_depthwise_nhwc_144x56": (lambda i, k: _dw_nhwc(i, k, 1), None),
        "elementwise_add_1x128x56x56": (lambda x, y: x + y, lambda x, y: x + y),
        "elementwise_relu_1x256x28x28": (torch.relu, lambda x: np.maximum(x, 0)),
        "softmax_256x512": (lambda x: torch.softmax(x, -1), softmax_np),
        # suites.unseen_suite's contraction: the generator's seed 1234.
        "lqcd_contraction_9_loops": _lqcd_fns(
            lqcd_contraction(random.Random(1234), 0).signature),
    }
    return [PeerKernel(name, text, *fns[name]) for name, text in texts().items()]


def odd_suite() -> list[PeerKernel]:
    """Matmul-like kernels whose extents no power-of-two tile divides:
    ViT-B/16's 197 tokens, and sizes with large prime factors."""
    import torch
    return [
        PeerKernel("vit_qkv_matmul_197x2304x768", K.matmul(197, 2304, 768),
                   lambda a, b: a @ b, lambda a, b: a @ b),
        PeerKernel("vit_mlp_matmul_197x3072x768", K.matmul(197, 3072, 768),
                   lambda a, b: a @ b, lambda a, b: a @ b),
        PeerKernel("vit_attention_bmm_12x197x197x64", K.batch_matmul(12, 197, 197, 64),
                   torch.bmm, np.matmul),
        PeerKernel("matmul_131x1000x509", K.matmul(131, 1000, 509),
                   lambda a, b: a @ b, lambda a, b: a @ b),
    ]


def shapes_suite() -> list[PeerKernel]:
    """Layers of real networks at shapes the training data lacks
    (``mlir_rl.data.dataset`` has no matmul below 49 rows or 256 columns):
    batch-1 linear layers (matrix-vector products: VGG's and MobileNetV2's
    classifiers, a GPT-2 MLP decoding 4 tokens, a BERT linear + GELU for one
    token), a tall-skinny attention projection, a pointwise convolution,
    NHWC max pooling and a layer norm over 512 rows. Where a policy
    generalizes poorly, which compile-time tuning is for."""
    import torch
    import torch.nn.functional as F

    def layer_norm(x, g, b):
        return F.layer_norm(x, x.shape[-1:], g, b, eps=1e-5)

    def maxpool_nhwc(i):
        return F.max_pool2d(i.permute(0, 3, 1, 2), 3, 2).permute(0, 2, 3, 1)

    mm = _MATMUL
    return [
        PeerKernel("vgg_classifier_1x1024x25088", K.matmul(1, 1024, 25088), *mm),
        PeerKernel("mobilenet_classifier_1x1000x1280", K.matmul(1, 1000, 1280), *mm),
        PeerKernel("gpt2_decode_mlp_4x3072x768", K.matmul(4, 3072, 768), *mm),
        PeerKernel("bert_linear_gelu_1x3072x768", K.linear_gelu(1, 3072, 768),
                   lambda a, b, bias: F.gelu(a @ b + bias, approximate="tanh")),
        PeerKernel("attention_projection_4096x64x64", K.matmul(4096, 64, 64), *mm),
        PeerKernel("resnet_pointwise_conv_nchw_256x14x14_512",
                   K.conv2d_nchw(1, 256, 14, 14, 512, 1, 1), lambda i, k: F.conv2d(i, k)),
        PeerKernel("maxpool_nhwc_64x112_k3s2", K.maxpool_nhwc(1, 112, 112, 64, 3, 2),
                   maxpool_nhwc),
        PeerKernel("layer_norm_512x768", K.layer_norm(512, 768), layer_norm),
    ]


def fresh_suite() -> list[PeerKernel]:
    """A second set of unseen kernels (2026-11-26): the kinds of the unseen
    suite at shapes no suite or training split uses: matmuls with a
    1024-wide B and a 3072-long reduction, batch matmuls, stride-2 and 1x1
    convolutions, NHWC and stride-1 poolings, depthwise convolutions with
    stride 1 and 2, elementwise ops, softmax over long and short rows and an
    LQCD contraction from a new seed. Where the unseen suite's results may
    hold by chance of its shapes."""
    import random

    import torch
    import torch.nn.functional as F

    from mlir_rl.data.dataset import lqcd_contraction
    mm = _MATMUL
    out = [
        PeerKernel("matmul_512x1024x512", K.matmul(512, 1024, 512), *mm),
        PeerKernel("matmul_128x768x3072", K.matmul(128, 768, 3072), *mm),
        PeerKernel("bmm_16x128x128x64", K.batch_matmul(16, 128, 128, 64), torch.bmm, np.matmul),
        PeerKernel("bmm_12x128x64x128", K.batch_matmul(12, 128, 64, 128), torch.bmm, np.matmul),
        PeerKernel("conv_nchw_256x14x14", K.conv2d_nchw(1, 256, 16, 16, 256, 3, 3),
                   lambda i, k: F.conv2d(i, k)),
        PeerKernel("conv_nchw_s2_64x56", K.conv2d_nchw(1, 64, 113, 113, 128, 3, 3, 2),
                   lambda i, k: F.conv2d(i, k, stride=2)),
        PeerKernel("conv_nhwc_512x7x7", K.conv2d_nhwc(1, 9, 9, 512, 3, 3, 512),
                   lambda i, k: _conv_nhwc(i, k, 1)),
        PeerKernel("conv_nhwc_1x1_256x28", K.conv2d_nhwc(1, 28, 28, 256, 1, 1, 128),
                   lambda i, k: _conv_nhwc(i, k, 1)),
        PeerKernel("maxpool_nhwc_128x56_k2s2", K.maxpool_nhwc(1, 56, 56, 128, 2, 2),
                   lambda i: F.max_pool2d(i.permute(0, 3, 1, 2), 2, 2).permute(0, 2, 3, 1)),
        PeerKernel("maxpool_nchw_32x64_k3s1", K.maxpool_nchw(1, 32, 64, 64, 3, 1),
                   lambda i: F.max_pool2d(i, 3, 1)),
        PeerKernel("depthwise_nhwc_32x112", K.depthwise_conv2d_nhwc(1, 114, 114, 32, 3, 3),
                   lambda i, k: _dw_nhwc(i, k, 1)),
        PeerKernel("depthwise_nhwc_s2_96x112", K.depthwise_conv2d_nhwc(1, 113, 113, 96, 3, 3, 2),
                   lambda i, k: _dw_nhwc(i, k, 2)),
        PeerKernel("add_1x512x14x14", K.add([1, 512, 14, 14]),
                   lambda x, y: x + y, lambda x, y: x + y),
        PeerKernel("relu_1x64x112x112", K.relu([1, 64, 112, 112]),
                   torch.relu, lambda x: np.maximum(x, 0)),
        PeerKernel("softmax_128x1024", K.softmax_rows(128, 1024), lambda x: torch.softmax(x, -1)),
        PeerKernel("softmax_1024x128", K.softmax_rows(1024, 128), lambda x: torch.softmax(x, -1)),
    ]
    prog = lqcd_contraction(random.Random(77), 77)
    out.append(PeerKernel("lqcd_contraction_seed77", prog.text, *_lqcd_fns(prog.signature)))
    return out


# Seeds of the random suite that training data never uses: evaluation only
# (documented in docs/learning.md). A seed below 1000 is free for training.
RESERVED_SEEDS = range(1000, 1_000_000)


def _reduce_sum(m: int, n: int, axis: int) -> str:
    """A sum over one axis of an m x n tensor (a generic, as imported)."""
    out = [n] if axis == 0 else [m]
    t, r = f"tensor<{m}x{n}xf32>", f"tensor<{out[0]}xf32>"
    keep = "d1" if axis == 0 else "d0"
    iterators = '"reduction", "parallel"' if axis == 0 else '"parallel", "reduction"'
    return (f"func.func @main(%x: {t}) -> {r} {{\n"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {r}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {r}) -> {r}\n"
            f"  %s = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
            f"affine_map<(d0, d1) -> ({keep})>], iterator_types = "
            f"[{iterators}]}}"
            f" ins(%x : {t}) outs(%f : {r}) {{\n"
            f"  ^bb0(%a: f32, %acc: f32):\n    %y = arith.addf %a, %acc : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {r}\n"
            f"  return %s : {r}\n}}\n")


def random_suite(seed: int, count: int = 12, max_flops: float = 2e9) -> list[PeerKernel]:
    """``count`` kernels drawn from ``seed``: the op kinds, shapes and chains
    of imported networks -- matmuls with odd and thin shapes (batch-1 and
    token-count rows, 197 and 1000 wide), batch matmuls with a fill (not
    yet without: a kernel that accumulates into its argument writes it in
    place, and the harness's inputs change under it), linear + GELU,
    NCHW/NHWC convolutions (3x3 and 1x1, stride 1 and 2), 1-D NCW
    convolutions (wav2vec2's feature encoder: 10 taps stride 5, 3 and 2
    taps stride 2), depthwise
    convolutions, max poolings, softmax and layer norm over rows of 64 to
    8,192, elementwise adds and ReLUs, sums over either axis -- each under
    about 2 GFLOP (``max_flops``) and 64 MB, with the peers' code. A fresh draw per seed, so
    that any seed can be the set nobody tuned to; seeds in
    ``RESERVED_SEEDS`` are for evaluation only (training never draws them)."""
    import random

    import torch
    import torch.nn.functional as F

    rng = random.Random(seed)
    channels = [16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512]
    spatial = [7, 14, 28, 56, 112]
    rows = [1, 2, 4, 16, 49, 64, 128, 196, 197, 256, 384, 512, 1024, 2048]
    widths = [64, 128, 256, 384, 512, 768, 1000, 1024, 1280, 2048, 3072]
    mm = _MATMUL

    def matmul():
        m, n, k = rng.choice(rows), rng.choice(widths), rng.choice(widths)
        return f"matmul_{m}x{n}x{k}", K.matmul(m, n, k), mm, 2 * m * n * k, 4 * (m * k + k * n + m * n)

    def bmm():
        b, m = rng.choice([4, 8, 12, 16]), rng.choice([64, 128, 196, 197, 256])
        n, k = rng.choice([64, 128, 196, 256]), rng.choice([32, 64, 128])
        if rng.random() < 0.5:
            n, k = k, n
        flops, nbytes = 2 * b * m * n * k, 4 * b * (m * k + k * n + m * n)
        return (f"bmm_{b}x{m}x{n}x{k}", K.batch_matmul(b, m, n, k), (torch.bmm, np.matmul),
                flops, nbytes)

    def linear_gelu():
        m, n, k = rng.choice(rows), rng.choice(widths), rng.choice(widths)
        return (f"linear_gelu_{m}x{n}x{k}", K.linear_gelu(m, n, k),
                (lambda a, b, bias: F.gelu(a @ b + bias, approximate="tanh"), None),
                2 * m * n * k, 4 * (m * k + k * n + m * n))

    def conv():
        c, f = rng.choice(channels), rng.choice(channels)
        size, kk = rng.choice(spatial[:4]), rng.choice([1, 3, 3])
        stride = rng.choice([1, 1, 2]) if kk == 3 else 1
        h = (size - 1) * stride + kk
        flops = 2 * size * size * f * c * kk * kk
        if rng.random() < 0.5:
            return (f"conv_nchw_{c}x{h}_{f}_k{kk}s{stride}", K.conv2d_nchw(1, c, h, h, f, kk, kk, stride),
                    (lambda i, w, s=stride: F.conv2d(i, w, stride=s), None), flops, 4 * (c * h * h + f * size * size))
        return (f"conv_nhwc_{c}x{h}_{f}_k{kk}s{stride}", K.conv2d_nhwc(1, h, h, c, kk, kk, f, stride),
                (lambda i, w, s=stride: _conv_nhwc(i, w, s), None), flops, 4 * (c * h * h + f * size * size))

    def conv1d():
        # Audio and sequence models: wav2vec2's feature encoder (a 10-tap
        # stride-5 first layer from one channel), 3- and 2-tap stride-2 layers.
        c, f = rng.choice([1] + channels), rng.choice(channels)
        size, (kk, stride) = rng.choice([49, 99, 199, 399, 799, 1599, 3199]), \
            rng.choice([(10, 5), (3, 2), (3, 1), (2, 2), (5, 1)])
        w = (size - 1) * stride + kk
        return (f"conv1d_ncw_{c}x{w}_{f}_k{kk}s{stride}", K.conv1d_ncw(1, c, w, f, kk, stride),
                (lambda i, k, s=stride: F.conv1d(i, k, stride=s), None),
                2 * size * f * c * kk, 4 * (c * w + f * c * kk + f * size))

    def depthwise():
        c, size, stride = rng.choice(channels), rng.choice(spatial), rng.choice([1, 2])
        h = (size - 1) * stride + 3
        return (f"depthwise_nhwc_{c}x{h}_s{stride}", K.depthwise_conv2d_nhwc(1, h, h, c, 3, 3, stride),
                (lambda i, w, s=stride: _dw_nhwc(i, w, s), None), 18 * size * size * c, 8 * c * h * h)

    def pool():
        c, size = rng.choice(channels), rng.choice(spatial)
        kk, stride = rng.choice([(2, 2), (3, 2), (3, 1)])
        h = (size - 1) * stride + kk
        if rng.random() < 0.5:
            return (f"maxpool_nchw_{c}x{h}_k{kk}s{stride}", K.maxpool_nchw(1, c, h, h, kk, stride),
                    (lambda i, k=kk, s=stride: F.max_pool2d(i, k, s), None), kk * kk * size * size * c, 8 * c * h * h)
        return (f"maxpool_nhwc_{c}x{h}_k{kk}s{stride}", K.maxpool_nhwc(1, h, h, c, kk, stride),
                (lambda i, k=kk, s=stride: F.max_pool2d(i.permute(0, 3, 1, 2), k, s).permute(0, 2, 3, 1), None),
                kk * kk * size * size * c, 8 * c * h * h)

    def softmax():
        n = rng.choice([64, 128, 256, 512, 1024, 2048, 4096, 8192])
        m = max(1, rng.choice([1 << 18, 1 << 19, 1 << 20]) // n)
        return (f"softmax_{m}x{n}", K.softmax_rows(m, n), (lambda x: torch.softmax(x, -1), None),
                5 * m * n, 8 * m * n)

    def layer_norm():
        m, n = rng.choice([49, 128, 196, 197, 256, 512]), rng.choice([256, 384, 512, 768, 1024])
        return (f"layer_norm_{m}x{n}", K.layer_norm(m, n),
                (lambda x, g, b: F.layer_norm(x, x.shape[-1:], g, b, eps=1e-5), None), 8 * m * n, 8 * m * n)

    def elementwise():
        shape = [1, rng.choice(channels), *([rng.choice(spatial[1:])] * 2)]
        name = "x".join(map(str, shape))
        n = shape[1] * shape[2] * shape[3]
        if rng.random() < 0.5:
            return f"add_{name}", K.add(shape), (lambda x, y: x + y, lambda x, y: x + y), n, 12 * n
        return f"relu_{name}", K.relu(shape), (torch.relu, lambda x: np.maximum(x, 0)), n, 8 * n

    def reduction():
        m, n, axis = rng.choice([64, 256, 1024, 4096]), rng.choice([64, 256, 1024, 4096]), rng.choice([0, 1])
        return (f"sum_axis{axis}_{m}x{n}", _reduce_sum(m, n, axis),
                (lambda x, a=axis: x.sum(a), lambda x, a=axis: x.sum(a)), m * n, 4 * m * n)

    kinds = [(matmul, 3), (bmm, 1.5), (linear_gelu, 1), (conv, 2.5), (conv1d, 1), (depthwise, 1), (pool, 1),
             (softmax, 1.5), (layer_norm, 1), (elementwise, 1), (reduction, 1)]
    out: list[PeerKernel] = []
    names: set[str] = set()
    while len(out) < count:
        make = rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
        name, text, (torch_fn, numpy_fn), flops, nbytes = make()
        if flops > max_flops or nbytes > 64 << 20 or name in names:
            continue
        names.add(name)
        out.append(PeerKernel(f"{name}", text, torch_fn, numpy_fn))
    return out


# Suites that run mlir-rl-prepare before the pass (none: the pass's own front
# end is the same; --prepare still does). The unscheduled baseline is always
# the input as it is.
PREPARED_SUITES: tuple[str, ...] = ()

SUITES = {"ops": operator_suite, "smoke": smoke_suite, "models": models_suite,
          "lqcd": lqcd_suite, "unseen": unseen_suite, "odd": odd_suite,
          "shapes": shapes_suite, "fresh": fresh_suite,
          "random": lambda: random_suite(RESERVED_SEEDS[0])}


def get_suite(name: str) -> list[PeerKernel]:
    """The kernels of suite ``name``: one of SUITES, or ``random:S``, the
    random suite drawn from seed S."""
    if name.startswith("random:"):
        try:
            seed = int(name.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"the random suite's seed must be an integer: {name!r}") from None
        return random_suite(seed)
    if name not in SUITES:
        raise ValueError(f"no suite {name!r}; available: {', '.join(SUITES)}")
    return SUITES[name]()


@dataclass
class Figure:
    status: str                       # ok, failed, wrong_output, n/a
    median_ms: Optional[float] = None
    min_ms: Optional[float] = None
    max_ms: Optional[float] = None
    detail: str = ""


@dataclass
class KernelResult:
    name: str
    schedule: str = ""
    figures: dict = field(default_factory=dict)   # comparator -> Figure
    tuning: dict = field(default_factory=dict)    # with search: time, schedule
    runs: int = 0                                 # timed calls per contender
    schedules: dict = field(default_factory=dict)  # other decision sources' schedules


def runs_for_min_time(fns: list, runs: int, min_time: float, most: int = 100) -> int:
    """Timed calls per contender so that the fastest of the compiled
    ``fns`` runs for at least ``min_time`` seconds (at least ``runs``, at
    most ``most`` times ``runs``). Ten calls of a 60 us kernel last 0.6 ms,
    less than one of the machine's slow stretches: the LQCD contraction
    measured 0.77x of unscheduled in a 10-run suite and 1.53x in 50 runs."""
    if min_time <= 0 or not fns:
        return runs
    from mlir_rl.bench.timing import output_buffers
    fastest = min(min(fn.time(fn.random_inputs(0), output_buffers(fn), 3, 1)) for fn in fns)
    return max(runs, min(runs * most, math.ceil(min_time / max(fastest, 1e-9))))


def _time(fn: Callable, warmup: int, runs: int) -> tuple[list[float], object]:
    out = None
    for _ in range(warmup):
        out = fn()
    secs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        secs.append(time.perf_counter() - t0)
    return secs, out


def _figure(secs: list[float], ok: bool = True, detail: str = "") -> Figure:
    ms = np.array(secs) * 1e3
    return Figure("ok" if ok else "wrong_output", float(np.median(ms)), float(ms.min()),
                  float(ms.max()), detail)


def _close(a: np.ndarray, ref: np.ndarray) -> tuple[bool, float]:
    from mlir_rl.core import outputs_match
    ok, err = outputs_match([np.asarray(a, dtype=np.float64)], [np.asarray(ref, dtype=np.float64)],
                            rtol=1e-3, atol_scale=1e-3)
    return ok, err


_POOL = None


def _peer_pool():
    global _POOL
    if _POOL is None:
        import multiprocessing as mp
        # This machine sets OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for old
        # OpenBLAS builds; they slow a current numpy, so the peer process
        # (which measures numpy and PyTorch) starts without them.
        saved = {k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                 if k in os.environ}
        try:
            _POOL = mp.get_context("spawn").Pool(1)
        finally:
            os.environ.update(saved)
        import atexit
        atexit.register(close_pool)
    return _POOL


def close_pool() -> None:
    """Stop the peer process (also at exit, before the interpreter tears down)."""
    global _POOL
    if _POOL is not None:
        _POOL.close()  # the worker is idle: let it exit cleanly
        _POOL.join()
        _POOL = None


def _run_peers(suite_name: str, name: str, inputs: list, ref, compare, runs: int,
               warmup: int, threads: int, spec: str = "") -> dict:
    """Time the peers on one kernel (in the peer process)."""
    import torch
    torch.set_num_threads(threads)
    k = next(k for k in get_suite(suite_name) if k.name == name)
    tin = [torch.from_numpy(x) for x in inputs]
    figures = {}
    for c in compare:
        try:
            detail = ""
            if c == "torch":
                with torch.no_grad():
                    secs, out = _time(lambda: k.torch_fn(*tin), warmup, runs)
                out = out.numpy()
            elif c == "inductor":
                torch._dynamo.reset()
                fn = torch.compile(k.torch_fn, backend="inductor")
                with torch.no_grad():
                    t0 = time.perf_counter()
                    fn(*tin)
                    detail = f"; compile {time.perf_counter() - t0:.1f} s"
                    secs, out = _time(lambda: fn(*tin), warmup, runs)
                out = out.numpy()
            elif c == "numpy":
                if k.numpy_fn is None:
                    figures[c] = Figure("n/a", detail="no numpy equivalent")
                    continue
                secs, out = _time(lambda: k.numpy_fn(*inputs), warmup, runs)
            elif c == "iree":
                with tempfile.TemporaryDirectory() as d:
                    fn = _iree_module(k.text, Path(d))
                    secs, out = _time(lambda: fn(*inputs), warmup, runs)
                    out = np.asarray(out.to_host() if hasattr(out, "to_host") else out)
            elif c == "iree-spec":
                if not spec:
                    figures[c] = Figure("n/a", detail="no op the spec configures")
                    continue
                with tempfile.TemporaryDirectory() as d:
                    fn, (matched, total) = _iree_module(k.text, Path(d), spec)
                    secs, out = _time(lambda: fn(*inputs), warmup, runs)
                    out = np.asarray(out.to_host() if hasattr(out, "to_host") else out)
                    detail = f"; the spec configured {matched} of {total} dispatches"
            else:
                raise ValueError(f"unknown comparator {c!r}; valid: {', '.join(COMPARATORS)}")
            ok, err = _close(out, ref)
            figures[c] = _figure(secs, ok, f"max abs error {err:.2g}{detail}")
        except Exception as e:  # noqa: BLE001 - a failing peer is a figure too
            figures[c] = Figure("failed", detail=f"{type(e).__name__}: {str(e)[-400:]}")
    return figures


def _iree_module(text: str, workdir: Path, spec: str = ""):
    """Compile with iree-compile (generic ops: IREE's MLIR is newer than 22);
    with ``spec``, an IREE tuning spec (mlir-rl iree-spec): then also
    returns (dispatches it configured, dispatches)."""
    import iree.runtime as ireert

    from mlir_rl.paths import iree_compile_path, mlir_opt_path
    src = workdir / "generic.mlir"
    r = subprocess.run([str(mlir_opt_path()), "-p",
                        "builtin.module(func.func(linalg-generalize-named-ops))", "-",
                        "-o", str(src)], input=text, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"generalization failed: {r.stderr[-500:]}")
    vmfb = workdir / "module.vmfb"
    args = [str(iree_compile_path()), str(src), "-o", str(vmfb), "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    if spec:
        (workdir / "spec.mlir").write_text(spec)
        args += [f"--iree-codegen-tuning-spec-path={workdir / 'spec.mlir'}",
                 f"--iree-hal-dump-executable-configurations-to={workdir / 'configs'}"]
    try:
        # A model compiles in minutes; a test's small program once sat in a
        # deadlock (futex wait, no CPU) for 12: a hang is a failed peer.
        r = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise RuntimeError("iree-compile did not finish in 1800 s") from None
    if r.returncode:
        raise RuntimeError(f"iree-compile failed: {r.stderr[:400]}")
    matched = None
    if spec:
        from mlir_rl.iree_spec import count_matches
        matched = count_matches(workdir / "configs")
    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    vm_module = ireert.VmModule.copy_buffer(ctx.instance, vmfb.read_bytes())
    ctx.add_vm_module(vm_module)
    fn = ctx.modules.module["main"]
    return (fn, matched) if spec else fn


def run_suite(compare: tuple[str, ...] = COMPARATORS, model: str = "", runs: int = 5,
              warmup: int = 2, threads: int = 2, progress: bool = True,
              suite_name: str = "ops", prepare: bool = False, search: int = 0,
              tuning_db: str = "", only: tuple[str, ...] = (),
              min_time: float = 0.0, command: str = "",
              decisions: tuple[str, ...] = ()) -> dict:
    """Run a suite (``only``: just the kernels of these names); returns its
    result document (bench/report.py's schema; ``command``: how it was run). mlir-rl's programs go
    through mlir-rl-prepare first with ``prepare`` and always for the
    models suite (imported models). ``search``: also the pass with
    compile-time tuning (``search=K``, measured at ``threads``; with
    ``tuning_db`` remembered there), as the contender ``mlir-rl-search``
    with its tuning time. ``min_time``: a kernel whose fastest program
    would be timed for less than this many seconds in ``runs`` calls gets
    more calls (at most 100 times ``runs``), every contender the same
    number; the kernel's ``runs`` in the report says how many.
    ``decisions``: the pass's other decision sources (``heuristic``,
    ``random``) as contenders too (``mlir-rl-heuristic``, ...), through
    the same front end, rules and lowering: the ablation of the policy. The peers run in a spawned process, which imports
    the calling script: a script must call this under
    ``if __name__ == "__main__":``."""
    import torch

    from mlir_rl.bench.timing import alternating_rounds, time_compiled, wait_for_openmp_spin
    from mlir_rl.core import Module, ScheduleError
    from mlir_rl.passes import run_pass
    from mlir_rl.tuning import MODULE_CHECK, TUNED_OP
    torch.set_num_threads(threads)
    sources = [d for d in decisions if d != "policy"]
    unknown = [d for d in sources if d not in DECISION_SOURCES]
    if unknown:
        raise ValueError(f"unknown decision sources {unknown}; valid: "
                         f"{', '.join(DECISION_SOURCES)}")
    # The host's limits first (measured once per host and thread count,
    # then cached), before PyTorch's or the JIT's threads are about.
    from mlir_rl.bench import roofline
    peaks = roofline.host_peaks(threads)
    suite = get_suite(suite_name)
    if only:
        unknown = set(only) - {k.name for k in suite}
        if unknown:
            raise ValueError(f"no kernels {sorted(unknown)} in suite {suite_name}; it has "
                             f"{', '.join(k.name for k in suite)}")
        suite = [k for k in suite if k.name in only]
    results = []
    items = suite
    if progress:
        from tqdm import tqdm
        items = tqdm(suite, desc=f"bench {suite_name}", unit="kernel")
    for k in items:
        res = KernelResult(k.name)
        # The unscheduled program and mlir-rl's are compiled once and timed
        # in alternating rounds: a kernel of tens of microseconds measured
        # 37.5 us unscheduled and 40.9 us scheduled timed one after the
        # other, 53.6 and 41.0 us alternated (the machine's speed drifts).
        compiled = {"unscheduled": Module.parse(k.text, k.name).compile(threads)}
        inputs = [np.ascontiguousarray(x, dtype=np.float32)
                  for x in compiled["unscheduled"].random_inputs(0)]
        with torch.no_grad():
            ref = k.torch_fn(*[torch.from_numpy(x) for x in inputs]).numpy()
        # mlir-rl: the pass with the policy in stock mlir-opt-22 (and with
        # compile-time tuning when `search`); their programs are timed in
        # alternating rounds, so that a slow moment of the machine does not
        # decide greedy against search.
        programs = {}
        prep = prepare or suite_name in PREPARED_SUITES
        try:
            # Imported models go through the front end a user runs first.
            result = run_pass(k.text, model=model, name=k.name, prepare=prep)
            res.schedule = result.schedule
            programs["mlir-rl"] = result.ir
        except ScheduleError as e:
            res.figures["mlir-rl"] = Figure("failed", detail=str(e)[-500:])
        for source in sources:
            try:
                other = run_pass(k.text, model=model, name=k.name, prepare=prep,
                                 extra=[f"decisions={source}"])
                res.schedules[f"mlir-rl-{source}"] = other.schedule
                programs[f"mlir-rl-{source}"] = other.ir
            except ScheduleError as e:
                res.figures[f"mlir-rl-{source}"] = Figure("failed", detail=str(e)[-500:])
        if search > 0:
            try:
                extra = [f"search={search}", f"threads={threads}"]
                if tuning_db:
                    extra.append(f"tuning-db={tuning_db}")
                start = time.perf_counter()
                tuned = run_pass(k.text, model=model, name=k.name, extra=extra, prepare=prep)
                res.tuning = {"seconds": time.perf_counter() - start,
                              "schedule": tuned.schedule,
                              "op_seconds": [float(x) for x in TUNED_OP.findall(tuned.stderr)],
                              "from_db": len(re.findall(r"\): from the tuning database:",
                                                        tuned.stderr)),
                              "module_check": (m.group(1).strip() if (
                                  m := MODULE_CHECK.search(tuned.stderr)) else "")}
                programs["mlir-rl-search"] = tuned.ir
            except ScheduleError as e:
                res.figures["mlir-rl-search"] = Figure("failed", detail=str(e)[-500:])
        # A contender whose IR is another's (search keeping the greedy
        # schedule, a source deciding as the policy) is that program: timed
        # once. Timed apart, the same code differed by 25% on a 0.06 ms
        # depthwise convolution (2026-11-28; not explained: each compiled
        # program allocates its own 1.8 MB output per call).
        same_as = {}
        first_with = {}
        for c, ir in programs.items():
            if ir in first_with:
                same_as[c] = first_with[ir]
                continue
            first_with[ir] = c
            try:
                compiled[c] = Module.parse(ir, k.name).compile(threads)
            except ScheduleError as e:
                res.figures[c] = Figure("failed", detail=str(e)[-500:])
        # Models too: VGG-11 timed once each gave greedy 125.3 ms and search
        # 126.9 ms, alternated with explicit schedules 124-125 against
        # 110-113 ms (the first program timed in a process pays for it).
        k_runs = runs_for_min_time(list(compiled.values()), runs, min_time)
        rounds, per_round = alternating_rounds(k_runs * (3 if search > 0 else 1))
        timed = time_compiled(list(compiled.values()), rounds=rounds, runs=per_round,
                              warmup=min(warmup, 1))
        for c, t in zip(compiled, timed):
            ok, err = _close(t.outputs[0], ref)
            res.figures[c] = _figure(t.seconds, ok, f"max abs error {err:.2g}; {rounds} "
                                     f"alternating rounds of {per_round} runs")
        for c, first in same_as.items():
            f = res.figures[first]
            res.figures[c] = Figure(f.status, f.median_ms, f.min_ms, f.max_ms,
                                    f"the IR of {first}" + (f"; {f.detail}" if f.detail else ""))
        # The peers run in a fresh process, once the JIT's OpenMP threads
        # have stopped spinning (they would take the cores of PyTorch's and
        # numpy's thread pools).
        spec = ""
        if "iree-spec" in compare:
            from mlir_rl.iree_spec import write_spec
            try:
                written = write_spec(k.text, model=model, name=k.name)
                spec = written.text if written.matched else ""
            except ScheduleError as e:
                res.figures["iree-spec"] = Figure("failed", detail=str(e)[-500:])
        wait_for_openmp_spin()
        res.figures.update(_peer_pool().apply(
            _run_peers, (suite_name, k.name, inputs, ref,
                         tuple(c for c in compare if c not in res.figures), k_runs, warmup,
                         threads, spec)))
        res.runs = k_runs
        results.append(res)
    close_pool()
    from mlir_rl.bench import report as R
    contenders = ["unscheduled", "mlir-rl", *(f"mlir-rl-{s}" for s in sources),
                  *(["mlir-rl-search"] if search > 0 else []), *compare]
    works = {k.name: roofline.work(k.text) for k in suite}
    kernels = [{"name": r.name, "schedule": r.schedule, "runs": r.runs,
                **({"tuning": r.tuning} if r.tuning else {}),
                **({"schedules": r.schedules} if r.schedules else {}),
                "figures": {c: _as_result_figure(f) for c, f in r.figures.items()}}
               for r in results]
    return roofline.annotate(R.new_result(
        suite_name, "unscheduled", contenders, kernels, threads, command=command, model=model,
        settings={"runs": runs, "warmup": warmup, "min_time": min_time, "search": search,
                  "decisions": ["policy", *sources],
                  "prepared": prepare or suite_name in PREPARED_SUITES,
                  "python": platform.python_version(), "torch": torch.__version__}),
        peaks, works)


def _as_result_figure(f: Figure) -> dict:
    """A Figure in the result schema (bench/report.py): times only when ok."""
    d = asdict(f)
    if d["status"] == "ok":
        return d
    return {k: v for k, v in d.items() if v is not None}


def summary(report: dict) -> str:
    """Geomean speedup over unscheduled per contender (over the kernels
    where every contender ran), and the tuning time per op with search."""
    from mlir_rl.bench import report as R
    kernels = report["kernels"]
    lines = [R.summary(report)]
    both = [k for k in kernels if k["figures"].get("iree-spec", {}).get("status") == "ok"
            and k["figures"].get("iree", {}).get("status") == "ok"]
    if both:
        ratios = [k["figures"]["iree"]["median_ms"] / k["figures"]["iree-spec"]["median_ms"]
                  for k in both]
        lines.append(f"IREE with mlir-rl's tuning spec vs stock IREE on the {len(both)} kernels "
                     f"it configured: geomean {statistics.geometric_mean(ratios):.2f}x"
                     + "".join(f"; {k['name']} {r:.2f}x ({k['figures']['iree-spec']['detail'].split('; ')[-1]})"
                               for k, r in zip(both, ratios)))
    ops = [s for k in kernels for s in k.get("tuning", {}).get("op_seconds", [])]
    if ops:
        q = statistics.quantiles(ops, n=10) if len(ops) > 1 else [ops[0]] * 9
        lines.append(f"tuning time per op ({len(ops)} ops): median {statistics.median(ops):.2f} s, "
                     f"p10 {q[0]:.2f} s, p90 {q[-1]:.2f} s, max {max(ops):.2f} s; per kernel "
                     f"total: median {statistics.median(k['tuning']['seconds'] for k in kernels if 'tuning' in k):.1f} s")
    return "\n".join(lines)


def save(report: dict, out_dir: str | Path) -> Path:
    """The suite's result document (bench.json), its table (bench.md) and
    its plot (bench.png) in ``out_dir``."""
    from mlir_rl.bench import report as R
    out = Path(out_dir)
    R.save(report, out / "bench.json")
    (out / "bench.md").write_text(R.markdown_table(report) + "\n")
    try:
        R.plot(report, out / "bench.png")
    except ImportError:
        pass
    return out
