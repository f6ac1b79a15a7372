"""Seeded datasets of linalg programs for training and evaluation.

Five families, three as in MLIR RL's data:
  * single ops with shapes from real models (BERT/GPT matmuls, ResNet and
    MobileNet convolutions with strides, depthwise convs, pooling,
    elementwise ops);
  * random sequences of 5 ops (add, matmul, relu, conv_2d, pooling, sigmoid,
    softmax), each consuming the previous one's result;
  * deep LQCD-style contractions (8+ loops, offset accesses);
  * "prepared": what imported networks look like after ``mlir-rl-prepare``
    (convolutions as im2col copies and matmuls, with their batch norm and
    relu after them; depthwise convolutions and max pooling in NCHW, as
    elementwise ops over strided views; linear layers
    with a bias and GELU; layer norm; attention softmax), at the sizes of
    ResNet, VGG, MobileNet and BERT;
  * "thin" (``make_dataset(thin=True)``, ``mlir-rl dataset --thin``): layers
    with few rows or columns (matrix-vector products of batch-1 linear
    layers, tall-skinny projections), NHWC pooling and layer norm as
    written, and batch-1 linear layers as networks import them (the weight
    read by row, after mlir-rl-prepare); split on its own, so that adding
    it leaves the other programs' split as it was.

``make_dataset`` writes ``<name>.mlir`` files and a ``manifest.json``; the
train/validation split keeps every shape signature on one side only.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from mlir_rl.data import kernels as K

# Shapes taken from real models (batch 1 unless stated).
MATMUL_SHAPES = [  # (M, N, K)
    (128, 768, 768), (128, 3072, 768), (128, 768, 3072), (256, 256, 512),
    (64, 1024, 1024), (384, 768, 768), (128, 512, 512), (256, 1024, 256),
    (64, 4096, 512), (512, 512, 128), (196, 768, 768), (49, 1024, 512),
]
BATCH_MATMUL_SHAPES = [  # (B, M, N, K): attention heads
    (12, 128, 128, 64), (12, 128, 64, 128), (8, 64, 64, 64), (16, 64, 64, 32),
    (12, 64, 64, 64), (4, 256, 256, 64),
]
CONV_SHAPES = [  # (C, F, output size, kernel, stride): ResNet / VGG layers
    (64, 64, 56, 3, 1), (64, 128, 28, 3, 2), (128, 128, 28, 3, 1),
    (128, 256, 14, 3, 2), (256, 256, 14, 3, 1), (256, 512, 7, 3, 2),
    (512, 512, 7, 3, 1), (64, 64, 56, 1, 1), (256, 64, 56, 1, 1),
    (3, 32, 56, 3, 2), (32, 64, 28, 3, 1), (128, 32, 28, 1, 1),
]
DEPTHWISE_SHAPES = [  # (C, output size, kernel, stride): MobileNet
    (32, 56, 3, 1), (96, 28, 3, 2), (144, 28, 3, 1), (192, 14, 3, 2),
    (384, 14, 3, 1), (576, 7, 3, 2), (64, 56, 3, 2), (960, 7, 3, 1),
]
POOL_SHAPES = [  # (C, input size, kernel, stride)
    (64, 112, 3, 2), (64, 56, 2, 2), (128, 28, 2, 2), (256, 28, 3, 2),
    (32, 112, 2, 2), (512, 14, 2, 2),
]
ELEMENTWISE_SHAPES = [
    (1, 64, 56, 56), (1, 128, 28, 28), (1, 256, 14, 14), (128, 768),
    (128, 3072), (1, 512, 7, 7), (384, 768), (1, 32, 112, 112),
]


# (C, F, output size, kernel, stride) of convolutions followed by batch norm
# and relu, as imported from ResNet-18, VGG-11 and MobileNetV2.
CONV_BN_SHAPES = [
    (3, 64, 112, 7, 2), (64, 64, 56, 3, 1), (64, 128, 28, 3, 2), (128, 128, 28, 3, 1),
    (128, 256, 14, 3, 2), (256, 256, 14, 3, 1), (256, 512, 7, 3, 2), (512, 512, 7, 3, 1),
    (64, 128, 28, 1, 2), (128, 256, 56, 3, 1), (256, 512, 28, 3, 1), (3, 32, 112, 3, 2),
    (32, 16, 112, 1, 1), (96, 24, 56, 1, 1), (144, 32, 28, 1, 1), (384, 96, 14, 1, 1),
    (16, 96, 112, 1, 1), (960, 320, 7, 1, 1),
]
DEPTHWISE_NCHW_SHAPES = [  # (C, output size, kernel, stride): MobileNetV2
    (32, 112, 3, 1), (96, 56, 3, 2), (144, 56, 3, 1), (192, 14, 3, 2), (576, 14, 3, 1),
]
LINEAR_GELU_SHAPES = [(128, 3072, 768), (128, 768, 3072), (197, 3072, 768)]  # (M, N, K)
ROWS_SHAPES = [(128, 768), (197, 768), (384, 1024)]  # layer norm (tokens, hidden)
ATTENTION_SHAPES = [(12, 128, 128), (12, 197, 197)]  # softmax (heads, queries, keys)
# Thin layers (the "thin" family): few rows or few columns, as networks run
# them at batch 1 -- classifiers and decoding steps are matrix-vector
# products, attention heads project to 64 columns -- and NHWC pooling and
# layer norm as written (not prepared). The first training data had no
# matmul below 49 rows or 256 columns, and the policy scheduled such
# layers up to 3x slower than PyTorch (docs/results.md; `mlir-rl bench
# --suite shapes` holds other shapes of the same layers).
THIN_MATMUL_SHAPES = [  # (M, N, K)
    (1, 768, 768), (1, 768, 3072), (1, 4096, 1024), (1, 2048, 512), (2, 1024, 1024),
    (8, 3072, 768), (16, 1024, 1024), (2048, 64, 64), (1024, 32, 128), (512, 64, 256),
    (8192, 32, 64),
    # Matrix-vector products with a long reduction (VGG's classifier reads
    # 25088 inputs): the first thin shapes stopped at 3072.
    (1, 1024, 16384), (4, 2048, 8192),
]
THIN_LINEAR_GELU_SHAPES = [(1, 768, 3072), (4, 3072, 768)]  # (M, N, K)
# nn.Linear at batch 1 as networks import it (``kernels.linear_torch``, then
# mlir-rl-prepare): the matmul reads the [N, K] weight by row. The [K, N]
# programs above do not show this form, and a schedule good for one is not
# for the other (VGG-11's 1x1024x25088 classifier: the [K, N] programs'
# T(0,64,64) tile runs 2.5x slower on [N, K] than T(0,8,64)). Classifiers
# of ResNet, MobileNetV2 and VGG, and other widths. (M, N, K, relu)
THIN_LINEAR_TORCH_SHAPES = [
    (1, 1024, 25088, True), (1, 1000, 1024, False), (1, 1000, 1280, False),
    (1, 1000, 512, False), (1, 4096, 4096, True), (1, 768, 768, False),
    (1, 3072, 768, True), (2, 768, 3072, False), (4, 2048, 512, True), (1, 512, 8192, False),
]
THIN_POOL_NHWC_SHAPES = [(128, 57, 3, 2), (256, 29, 3, 2)]  # (C, input size, kernel, stride)
THIN_LAYER_NORM_SHAPES = [(256, 1024), (64, 768), (1024, 512)]  # (rows, hidden)
POOL_NCHW_SHAPES = [  # (C, output size, kernel, stride): ResNet and VGG max pooling
    (64, 56, 3, 2), (64, 112, 2, 2), (128, 56, 2, 2), (256, 28, 2, 2), (512, 14, 2, 2), (512, 7, 2, 2),
]


@dataclass
class Program:
    name: str
    family: str      # "single", "sequence", "lqcd", "prepared", "thin", "networks", "random"
    kind: str        # the main op kind (for per-kind reports)
    signature: str   # shape signature (the split keeps it on one side)
    text: str


def _sig(*parts) -> str:
    return "|".join(str(p) for p in parts)


def single_ops() -> list[Program]:
    progs = []
    for (m, n, k) in MATMUL_SHAPES:
        progs.append(Program(f"matmul_{m}x{n}x{k}", "single", "matmul",
                             _sig("mm", m, n, k), K.matmul(m, n, k)))
    for (b, m, n, k) in BATCH_MATMUL_SHAPES:
        progs.append(Program(f"batch_matmul_{b}x{m}x{n}x{k}", "single", "batch_matmul",
                             _sig("bmm", b, m, n, k), K.batch_matmul(b, m, n, k)))
    for i, (c, f, out, k, s) in enumerate(CONV_SHAPES):
        size = (out - 1) * s + k
        if i % 2 == 0:
            progs.append(Program(f"conv2d_nchw_{c}x{f}x{out}_k{k}s{s}", "single", "conv_2d",
                                 _sig("conv", c, f, out, k, s),
                                 K.conv2d_nchw(1, c, size, size, f, k, k, s)))
        else:
            progs.append(Program(f"conv2d_nhwc_{c}x{f}x{out}_k{k}s{s}", "single", "conv_2d",
                                 _sig("conv", c, f, out, k, s),
                                 K.conv2d_nhwc(1, size, size, c, k, k, f, s)))
    for (c, out, k, s) in DEPTHWISE_SHAPES:
        size = (out - 1) * s + k
        progs.append(Program(f"depthwise_{c}x{out}_k{k}s{s}", "single", "depthwise_conv_2d",
                             _sig("dw", c, out, k, s),
                             K.depthwise_conv2d_nhwc(1, size, size, c, k, k, s)))
    for i, (c, size, k, s) in enumerate(POOL_SHAPES):
        gen = K.maxpool_nchw if i % 2 == 0 else K.maxpool_nhwc
        args = (1, c, size, size, k, s) if i % 2 == 0 else (1, size, size, c, k, s)
        progs.append(Program(f"maxpool_{c}x{size}_k{k}s{s}", "single", "pooling",
                             _sig("pool", c, size, k, s), gen(*args)))
    for shape in ELEMENTWISE_SHAPES:
        tag = "x".join(map(str, shape))
        progs.append(Program(f"add_{tag}", "single", "add", _sig("add", tag), K.add(shape)))
        progs.append(Program(f"relu_{tag}", "single", "generic", _sig("relu", tag), K.relu(shape)))
    return progs


# --- Random sequences of 5 ops ---------------------------------------------

def random_sequence(rng: random.Random, index: int) -> Program:
    """Five ops on a 2-D (matrix) or 4-D (image) value, each using the last."""
    if rng.random() < 0.5:
        m, n = rng.choice([(64, 256), (128, 256), (128, 512), (256, 128), (96, 384)])
        t = K._t([m, n])
        args = [f"%in: {t}"]
        body, cur, cols = "", "%in", n
        ops = []
        for i in range(5):
            op = rng.choice(["add", "matmul", "relu", "sigmoid", "softmax"])
            ops.append(op)
            v = f"v{i}"
            tc = K._t([m, cols])
            if op == "add":
                args.append(f"%b{i}: {tc}")
                body += (f"  %e_{v} = tensor.empty() : {tc}\n"
                         f"  %{v} = linalg.add ins({cur}, %b{i} : {tc}, {tc}) outs(%e_{v} : {tc}) -> {tc}\n")
            elif op == "matmul":
                k2 = rng.choice([128, 256])
                wt, ot = K._t([cols, k2]), K._t([m, k2])
                args.append(f"%w{i}: {wt}")
                body += (f"  %z_{v} = arith.constant 0.0 : f32\n  %e_{v} = tensor.empty() : {ot}\n"
                         f"  %f_{v} = linalg.fill ins(%z_{v} : f32) outs(%e_{v} : {ot}) -> {ot}\n"
                         f"  %{v} = linalg.matmul ins({cur}, %w{i} : {tc}, {wt}) outs(%f_{v} : {ot}) -> {ot}\n")
                cols = k2
            elif op == "relu":
                body += K.elementwise_generic(op, v, cur, tc, 2, K.RELU_BODY)
            elif op == "sigmoid":
                body += K.elementwise_generic(op, v, cur, tc, 2, K.SIGMOID_BODY)
            else:
                body += K.softmax_rows_body(v, cur, m, cols)
            cur = f"%{v}"
        out = K._t([m, cols])
        sig = _sig("seq2d", m, n, *ops)
    else:
        c, hw = rng.choice([(16, 32), (32, 16), (8, 64), (32, 32)])
        shape = [1, c, hw, hw]
        args = [f"%in: {K._t(shape)}"]
        body, cur = "", "%in"
        ops = []
        for i in range(5):
            op = rng.choice(["add", "relu", "conv_2d", "pooling", "sigmoid"])
            ops.append(op)
            v = f"v{i}"
            t = K._t(shape)
            if op == "add":
                args.append(f"%b{i}: {t}")
                body += (f"  %e_{v} = tensor.empty() : {t}\n"
                         f"  %{v} = linalg.add ins({cur}, %b{i} : {t}, {t}) outs(%e_{v} : {t}) -> {t}\n")
            elif op in ("relu", "sigmoid"):
                body += K.elementwise_generic(op, v, cur, t, 4, K.RELU_BODY if op == "relu" else K.SIGMOID_BODY)
            elif op == "conv_2d":  # 1x1 conv keeps the spatial size
                f = rng.choice([8, 16, 32])
                wt = K._t([f, shape[1], 1, 1])
                out_shape = [1, f, shape[2], shape[3]]
                ot = K._t(out_shape)
                args.append(f"%w{i}: {wt}")
                body += (f"  %z_{v} = arith.constant 0.0 : f32\n  %e_{v} = tensor.empty() : {ot}\n"
                         f"  %f_{v} = linalg.fill ins(%z_{v} : f32) outs(%e_{v} : {ot}) -> {ot}\n"
                         f"  %{v} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, "
                         f"strides = dense<1> : tensor<2xi64>}} ins({cur}, %w{i} : {t}, {wt}) "
                         f"outs(%f_{v} : {ot}) -> {ot}\n")
                shape = out_shape
            else:  # 2x2 max pooling, stride 2
                if shape[2] < 4:
                    body += K.elementwise_generic("relu", v, cur, t, 4, K.RELU_BODY)
                    cur = f"%{v}"
                    continue
                out_shape = [1, shape[1], shape[2] // 2, shape[3] // 2]
                ot = K._t(out_shape)
                body += (f"  %z_{v} = arith.constant -3.40282347E+38 : f32\n  %e_{v} = tensor.empty() : {ot}\n"
                         f"  %f_{v} = linalg.fill ins(%z_{v} : f32) outs(%e_{v} : {ot}) -> {ot}\n"
                         f"  %win_{v} = tensor.empty() : {K._t([2, 2])}\n"
                         f"  %{v} = linalg.pooling_nchw_max {{dilations = dense<1> : tensor<2xi64>, "
                         f"strides = dense<2> : tensor<2xi64>}} ins({cur}, %win_{v} : {t}, {K._t([2, 2])}) "
                         f"outs(%f_{v} : {ot}) -> {ot}\n")
                shape = out_shape
            cur = f"%{v}"
        out = K._t(shape)
        sig = _sig("seq4d", c, hw, *ops)
    text = (f"func.func @main({', '.join(args)}) -> {out} {{\n{body}"
            f"  return {cur} : {out}\n}}\n")
    return Program(f"sequence_{index:03d}", "sequence", "sequence", sig, text)


def lqcd_contraction(rng: random.Random, index: int) -> Program:
    """An LQCD-style contraction: 8-9 loops, a reduction over spin/colour
    indices and an offset (shifted) site access, as in quark propagators."""
    L = rng.choice([4, 6, 8])
    shift = rng.choice([1, 2])
    # Loops: t x a b i j k l (+ an outer site block y when deep=True).
    deep = rng.random() < 0.5
    n_y = 2 if deep else 1
    return Program(f"lqcd_{index:03d}", "lqcd", "lqcd", _sig("lqcd", n_y, L, shift),
                   K.lqcd_contraction(n_y, L, shift))


def prepared_ops() -> list[Program]:
    """Networks' ops as mlir-rl-prepare leaves them (see the module doc)."""
    from mlir_rl.core import prepare
    progs = []
    for (c, f, out, k, s) in CONV_BN_SHAPES:
        size = (out - 1) * s + k
        progs.append(Program(f"conv_bn_relu_{c}x{f}x{out}_k{k}s{s}", "prepared", "conv_2d",
                             _sig("pconv", c, f, out, k, s),
                             prepare(K.conv_bn_relu_nchw(c, size, f, k, s))))
    for (c, out, k, s) in DEPTHWISE_NCHW_SHAPES:
        size = (out - 1) * s + k
        progs.append(Program(f"depthwise_nchw_{c}x{out}_k{k}s{s}", "prepared",
                             "depthwise_conv_2d", _sig("pdw", c, out, k, s),
                             prepare(K.depthwise_conv2d_nchw(1, c, size, size, k, k, s))))
    for (c, out, k, s) in POOL_NCHW_SHAPES:
        size = (out - 1) * s + k
        progs.append(Program(f"maxpool_nchw_{c}x{out}_k{k}s{s}", "prepared", "pooling",
                             _sig("ppool", c, out, k, s),
                             prepare(K.maxpool_nchw(1, c, size, size, k, s))))
    for (m, n, k) in LINEAR_GELU_SHAPES:
        progs.append(Program(f"linear_gelu_{m}x{n}x{k}", "prepared", "matmul",
                             _sig("plin", m, n, k), prepare(K.linear_gelu(m, n, k))))
    for (m, n) in ROWS_SHAPES:
        progs.append(Program(f"layer_norm_{m}x{n}", "prepared", "generic",
                             _sig("pln", m, n), prepare(K.layer_norm(m, n))))
    for (h, m, n) in ATTENTION_SHAPES:
        progs.append(Program(f"softmax_{h}x{m}x{n}", "prepared", "generic",
                             _sig("psm", h, m, n), prepare(K.softmax_rows(h * m, n))))
    return progs


def thin_ops() -> list[Program]:
    """Layers with few rows or columns (see ``THIN_MATMUL_SHAPES``)."""
    progs = []
    for (m, n, k) in THIN_MATMUL_SHAPES:
        progs.append(Program(f"thin_matmul_{m}x{n}x{k}", "thin", "matmul",
                             _sig("tmm", m, n, k), K.matmul(m, n, k)))
    for (m, n, k) in THIN_LINEAR_GELU_SHAPES:
        progs.append(Program(f"thin_linear_gelu_{m}x{n}x{k}", "thin", "matmul",
                             _sig("tlin", m, n, k), K.linear_gelu(m, n, k)))
    for (c, size, k, s) in THIN_POOL_NHWC_SHAPES:
        progs.append(Program(f"thin_maxpool_nhwc_{c}x{size}_k{k}s{s}", "thin", "pooling",
                             _sig("tpool", c, size, k, s),
                             K.maxpool_nhwc(1, size, size, c, k, s)))
    for (m, n) in THIN_LAYER_NORM_SHAPES:
        progs.append(Program(f"thin_layer_norm_{m}x{n}", "thin", "generic",
                             _sig("tln", m, n), K.layer_norm(m, n)))
    return progs


def thin_linear_ops() -> list[Program]:
    """Batch-1 linear layers in the networks' form (see
    ``THIN_LINEAR_TORCH_SHAPES``), through mlir-rl-prepare."""
    from mlir_rl.core import prepare
    progs = []
    for (m, n, k, relu) in THIN_LINEAR_TORCH_SHAPES:
        name = f"thin_linear_torch_{m}x{n}x{k}" + ("_relu" if relu else "")
        progs.append(Program(name, "thin", "matmul", _sig("tlt", m, n, k, relu),
                             prepare(K.linear_torch(m, n, k, relu), name)))
    return progs


def _main_kind(kinds: list[str]) -> str:
    """A program's kind for per-kind reports: its first op that is not a
    fill, copy or generic, else ``generic``."""
    return next((k for k in kinds if k not in ("fill", "copy", "generic")), "generic")


def network_ops(limit: int) -> list[Program]:
    """Ops of the imported networks at their real sizes (the models suite's
    torch-mlir imports), each cut out as the tuner cuts it
    (``Module.op_unit``), distinct, at most ``limit``, every model in turn;
    units of nothing but fills and copies (the rules schedule those) left out.
    The kind is the op's class (matmul, conv_2d, generic, ...), the
    signature its text's hash (the same op in two models is one program)."""
    from mlir_rl.core import Module
    from mlir_rl.fuzz.parity import model_ops
    progs = []
    # Lone fills and copies are scheduled by rule, not decided: not taken.
    for name, text in model_ops(1 << 30):
        if len(progs) >= limit:
            break
        model, op_id = name.split("/")[1:]
        kinds = [o.kind for o in Module.parse(text, name).ops()]
        if all(k in ("fill", "copy") for k in kinds):
            continue
        progs.append(Program(f"net_{model}_{op_id}", "networks", _main_kind(kinds),
                             _sig("net", hashlib.sha256(text.encode()).hexdigest()[:16]), text))
    return progs


def random_kernels(count: int, first_seed: int = 0) -> list[Program]:
    """``count`` kernels of the random suite's generator
    (``mlir_rl.bench.peers.random_suite``) drawn from seeds ``first_seed``,
    ``first_seed + 1``, ...: never a seed reserved for evaluation
    (``RESERVED_SEEDS``: ValueError if one would be needed). Kernels drawn
    twice (same name) are kept once."""
    from mlir_rl.bench.peers import RESERVED_SEEDS, random_suite
    from mlir_rl.core import Module
    progs: list[Program] = []
    names: set[str] = set()
    seed = first_seed
    while len(progs) < count:
        if seed in RESERVED_SEEDS:
            raise ValueError(f"random kernels: seed {seed} is reserved for evaluation "
                             f"(seeds {RESERVED_SEEDS.start} and up); ask for fewer kernels")
        for k in random_suite(seed):
            if k.name not in names and len(progs) < count:
                names.add(k.name)
                kind = _main_kind([o.kind for o in Module.parse(k.text, k.name).ops()])
                progs.append(Program(f"rand_{k.name}", "random", kind, _sig("rand", k.name), k.text))
        seed += 1
    return progs


def all_programs(seed: int = 0, sequences: int = 24, lqcd: int = 8,
                 prepared: bool = True) -> list[Program]:
    rng = random.Random(seed)
    progs = single_ops()
    if prepared:
        progs += prepared_ops()
    progs += [random_sequence(rng, i) for i in range(sequences)]
    progs += [lqcd_contraction(rng, i) for i in range(lqcd)]
    return progs


def split(programs: list[Program], val_fraction: float, seed: int) -> tuple[list[Program], list[Program]]:
    """Train/validation split by shape signature: no signature on both sides."""
    sigs = sorted({p.signature for p in programs})
    rng = random.Random(seed)
    rng.shuffle(sigs)
    n_val = max(1, round(len(sigs) * val_fraction))
    val_sigs = set(sigs[:n_val])
    train = [p for p in programs if p.signature not in val_sigs]
    val = [p for p in programs if p.signature in val_sigs]
    return train, val


def make_dataset(out: str | Path, seed: int = 0, sequences: int = 24, lqcd: int = 8,
                 val_fraction: float = 0.25, thin: bool = False,
                 front_end: bool = False, networks: int = 0, rand: int = 0) -> dict:
    """Write the programs and a manifest; returns the manifest.

    ``front_end``: write each program as the pass's policy sees it
    (``mlir_rl.core.front_end``: windows rewritten, odd extents padded), so
    that training, search and evaluation, which schedule programs as given,
    schedule the form a user's program takes in ``linalg-rl-schedule``.
    Names, signatures and the split do not change.

    ``networks``: up to this many ops of the imported networks
    (:func:`network_ops`); ``rand``: this many kernels of the random
    suite's generator from its training seeds (:func:`random_kernels`).
    Each family is split on its own and placed after the others, so that
    the programs before it keep their split and places."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    progs = all_programs(seed, sequences, lqcd)
    # De-duplicate identical signatures (random sequences may repeat).
    seen, unique = set(), []
    for p in progs:
        if p.signature not in seen:
            seen.add(p.signature)
            unique.append(p)
    train, val = split(unique, val_fraction, seed)
    if thin:
        # Split on its own, so that adding the family left the first
        # families' split as it was (the shipped policy's validation set).
        thin_train, thin_val = split(thin_ops(), val_fraction, seed)
        # The networks' form of linear layers came later: split on its own
        # and placed last, for the same reason (and so that the programs
        # before it keep their places, which seed their searches).
        lin_train, lin_val = split(thin_linear_ops(), val_fraction, seed)
        train, val = train + thin_train + lin_train, val + thin_val + lin_val
    for extra in ((network_ops(networks) if networks > 0 else []),
                  (random_kernels(rand) if rand > 0 else [])):
        t, v = split(extra, val_fraction, seed)
        train, val = train + t, val + v
    if front_end:
        from mlir_rl.core import front_end as pass_front_end
        train, val = ([replace(p, text=pass_front_end(p.text, p.name)) for p in part]
                      for part in (train, val))
    entries = []
    for part, items in (("train", train), ("val", val)):
        for p in items:
            (out / f"{p.name}.mlir").write_text(p.text)
            d = asdict(p)
            del d["text"]
            d.update(split=part, file=f"{p.name}.mlir",
                     sha256=hashlib.sha256(p.text.encode()).hexdigest())
            entries.append(d)
    manifest = {"seed": seed, "sequences": sequences, "lqcd": lqcd,
                "val_fraction": val_fraction, "thin": thin, "front_end": front_end,
                "networks": networks, "random": rand,
                "programs": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_dataset(directory: str | Path, part: str | None = None) -> list[tuple[dict, str]]:
    """(manifest entry, text) pairs of a dataset, optionally one split."""
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    return [(e, (directory / e["file"]).read_text()) for e in manifest["programs"]
            if part is None or e["split"] == part]


GENERATORS: dict[str, Callable] = {"single": single_ops}
