"""Small linalg-on-tensors kernels as MLIR text, for tests, demos and data.

Each function returns a module with one public function ``@main`` taking the
inputs and returning the output, accumulators initialised by ``linalg.fill``.
"""
from __future__ import annotations

from typing import Sequence


def _t(shape: Sequence[int], dtype: str = "f32") -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def _filled(var: str, shape: Sequence[int], value: str = "0.0") -> str:
    return (f"  %cst_{var} = arith.constant {value} : f32\n"
            f"  %e_{var} = tensor.empty() : {_t(shape)}\n"
            f"  %{var} = linalg.fill ins(%cst_{var} : f32) outs(%e_{var} : {_t(shape)}) -> {_t(shape)}\n")


def matmul(m: int, n: int, k: int) -> str:
    a, b, c = _t([m, k]), _t([k, n]), _t([m, n])
    return (f"func.func @main(%A: {a}, %B: {b}) -> {c} {{\n"
            + _filled("C", [m, n]) +
            f"  %r = linalg.matmul ins(%A, %B : {a}, {b}) outs(%C : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


def batch_matmul(bt: int, m: int, n: int, k: int) -> str:
    a, b, c = _t([bt, m, k]), _t([bt, k, n]), _t([bt, m, n])
    return (f"func.func @main(%A: {a}, %B: {b}) -> {c} {{\n"
            + _filled("C", [bt, m, n]) +
            f"  %r = linalg.batch_matmul ins(%A, %B : {a}, {b}) outs(%C : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


def _out_size(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


def _windowed(op: str, inputs: Sequence[Sequence[int]], out: Sequence[int], stride: int,
              fill: str = "0.0", window: Sequence[int] = ()) -> str:
    """A strided 2-D convolution or pooling op ``op`` on function arguments
    (%I and, for convolutions, %K), accumulating into a filled output; a
    pooling op's window is a ``tensor.empty`` of shape ``window``."""
    types = [_t(shape) for shape in inputs]
    names = ["%I", "%K"][:len(types)]
    args = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    o = _t(out)
    body = _filled("O", out, fill)
    if window:
        body += f"  %win = tensor.empty() : {_t(window)}\n"
        names, types = names + ["%win"], types + [_t(window)]
    return (f"func.func @main({args}) -> {o} {{\n" + body +
            f"  %r = linalg.{op} {{dilations = dense<1> : tensor<2xi64>, "
            f"strides = dense<{stride}> : tensor<2xi64>}} ins({', '.join(names)} : "
            f"{', '.join(types)}) outs(%O : {o}) -> {o}\n"
            f"  return %r : {o}\n}}\n")


def conv2d_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int,
                stride: int = 1) -> str:
    oh, ow = _out_size(h, kh, stride), _out_size(w, kw, stride)
    return _windowed("conv_2d_nchw_fchw", [[n, c, h, w], [f, c, kh, kw]], [n, f, oh, ow], stride)


def conv2d_nhwc(n: int, h: int, w: int, c: int, kh: int, kw: int, f: int,
                stride: int = 1) -> str:
    oh, ow = _out_size(h, kh, stride), _out_size(w, kw, stride)
    return _windowed("conv_2d_nhwc_hwcf", [[n, h, w, c], [kh, kw, c, f]], [n, oh, ow, f], stride)


def depthwise_conv2d_nhwc(n: int, h: int, w: int, c: int, kh: int, kw: int,
                          stride: int = 1) -> str:
    oh, ow = _out_size(h, kh, stride), _out_size(w, kw, stride)
    return _windowed("depthwise_conv_2d_nhwc_hwc", [[n, h, w, c], [kh, kw, c]],
                     [n, oh, ow, c], stride)


MAX_POOL_INIT = "-3.40282347E+38"


def maxpool_nchw(n: int, c: int, h: int, w: int, k: int, stride: int) -> str:
    oh, ow = _out_size(h, k, stride), _out_size(w, k, stride)
    return _windowed("pooling_nchw_max", [[n, c, h, w]], [n, c, oh, ow], stride,
                     MAX_POOL_INIT, [k, k])


def maxpool_nhwc(n: int, h: int, w: int, c: int, k: int, stride: int) -> str:
    oh, ow = _out_size(h, k, stride), _out_size(w, k, stride)
    return _windowed("pooling_nhwc_max", [[n, h, w, c]], [n, oh, ow, c], stride,
                     MAX_POOL_INIT, [k, k])


def add(shape: Sequence[int]) -> str:
    t = _t(shape)
    return (f"func.func @main(%X: {t}, %Y: {t}) -> {t} {{\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %r = linalg.add ins(%X, %Y : {t}, {t}) outs(%e : {t}) -> {t}\n"
            f"  return %r : {t}\n}}\n")


def _identity_map(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


def relu(shape: Sequence[int]) -> str:
    t, rank = _t(shape), len(shape)
    its = ", ".join(['"parallel"'] * rank)
    idm = _identity_map(rank)
    return (f"func.func @main(%X: {t}) -> {t} {{\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %r = linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = [{its}]}} "
            f"ins(%X : {t}) outs(%e : {t}) {{\n"
            f"  ^bb0(%x: f32, %o: f32):\n"
            f"    %z = arith.constant 0.0 : f32\n"
            f"    %m = arith.maximumf %x, %z : f32\n"
            f"    linalg.yield %m : f32\n"
            f"  }} -> {t}\n"
            f"  return %r : {t}\n}}\n")


def matmul_bias_relu(m: int, n: int, k: int) -> str:
    """matmul -> bias add (broadcast over rows) -> relu: a producer chain."""
    a, b, c, bias = _t([m, k]), _t([k, n]), _t([m, n]), _t([n])
    idm = _identity_map(2)
    row = "affine_map<(d0, d1) -> (d1)>"
    return (f"func.func @main(%A: {a}, %B: {b}, %bias: {bias}) -> {c} {{\n"
            + _filled("C", [m, n]) +
            f"  %mm = linalg.matmul ins(%A, %B : {a}, {b}) outs(%C : {c}) -> {c}\n"
            f"  %e1 = tensor.empty() : {c}\n"
            f"  %biased = linalg.generic {{indexing_maps = [{idm}, {row}, {idm}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%mm, %bias : {c}, {bias}) "
            f"outs(%e1 : {c}) {{\n"
            f"  ^bb0(%x: f32, %y: f32, %o: f32):\n"
            f"    %s = arith.addf %x, %y : f32\n"
            f"    linalg.yield %s : f32\n"
            f"  }} -> {c}\n"
            f"  %e2 = tensor.empty() : {c}\n"
            f"  %r = linalg.generic {{indexing_maps = [{idm}, {idm}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%biased : {c}) outs(%e2 : {c}) {{\n"
            f"  ^bb0(%x: f32, %o: f32):\n"
            f"    %z = arith.constant 0.0 : f32\n"
            f"    %mx = arith.maximumf %x, %z : f32\n"
            f"    linalg.yield %mx : f32\n"
            f"  }} -> {c}\n"
            f"  return %r : {c}\n}}\n")


# ResNet-18's convolutions (NCHW, batch 1): (in channels, out channels,
# output size, kernel, stride), one per conv layer, in order.
RESNET18_CONVS = (
    [(3, 64, 112, 7, 2)]
    + [(64, 64, 56, 3, 1)] * 4
    + [(64, 128, 28, 3, 2), (128, 128, 28, 3, 1), (64, 128, 28, 1, 2),
       (128, 128, 28, 3, 1), (128, 128, 28, 3, 1)]
    + [(128, 256, 14, 3, 2), (256, 256, 14, 3, 1), (128, 256, 14, 1, 2),
       (256, 256, 14, 3, 1), (256, 256, 14, 3, 1)]
    + [(256, 512, 7, 3, 2), (512, 512, 7, 3, 1), (256, 512, 7, 1, 2),
       (512, 512, 7, 3, 1), (512, 512, 7, 3, 1)]
)


def resnet18_layers(batch: int = 1) -> str:
    """A ResNet-18-sized module: every conv layer of ResNet-18 (its input
    pre-padded, taken as an argument), each followed by a relu, residual adds
    on the block outputs, the stem's max pooling and the classifier matmul.
    About 70 linalg ops; the layers are independent so every shape is exact."""
    lines, args, results, types = [], [], [], []
    idm = _identity_map(4)
    for i, (cin, cout, out, k, stride) in enumerate(RESNET18_CONVS):
        size = (out - 1) * stride + k
        it, kt, ot = _t([batch, cin, size, size]), _t([cout, cin, k, k]), _t([batch, cout, out, out])
        args += [f"%in{i}: {it}", f"%w{i}: {kt}"]
        lines.append(f"  %cst{i} = arith.constant 0.0 : f32\n"
                     f"  %e{i} = tensor.empty() : {ot}\n"
                     f"  %f{i} = linalg.fill ins(%cst{i} : f32) outs(%e{i} : {ot}) -> {ot}\n"
                     f"  %c{i} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, "
                     f"strides = dense<{stride}> : tensor<2xi64>}} ins(%in{i}, %w{i} : {it}, {kt}) "
                     f"outs(%f{i} : {ot}) -> {ot}\n"
                     f"  %r{i} = linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = "
                     f"[\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}} ins(%c{i} : {ot}) "
                     f"outs(%e{i} : {ot}) {{\n"
                     f"  ^bb0(%x: f32, %o: f32):\n"
                     f"    %z = arith.constant 0.0 : f32\n"
                     f"    %m = arith.maximumf %x, %z : f32\n"
                     f"    linalg.yield %m : f32\n"
                     f"  }} -> {ot}\n")
        if i % 2 == 0 and i > 0:  # residual add of two block outputs
            prev = RESNET18_CONVS[i - 1]
            if (prev[1], prev[2]) == (cout, out):
                lines.append(f"  %ea{i} = tensor.empty() : {ot}\n"
                             f"  %a{i} = linalg.add ins(%r{i}, %r{i - 1} : {ot}, {ot}) "
                             f"outs(%ea{i} : {ot}) -> {ot}\n")
                results.append(f"%a{i}")
                types.append(ot)
                continue
        results.append(f"%r{i}")
        types.append(ot)
    # Stem max pooling 3x3 stride 2 on the first relu, and the classifier.
    pt = _t([batch, 64, 55, 55])
    lines.append(f"  %pinit = arith.constant -3.40282347E+38 : f32\n"
                 f"  %pe = tensor.empty() : {pt}\n"
                 f"  %pf = linalg.fill ins(%pinit : f32) outs(%pe : {pt}) -> {pt}\n"
                 f"  %win = tensor.empty() : {_t([3, 3])}\n"
                 f"  %pool = linalg.pooling_nchw_max {{dilations = dense<1> : tensor<2xi64>, "
                 f"strides = dense<2> : tensor<2xi64>}} ins(%r0, %win : {_t([batch, 64, 112, 112])}, "
                 f"{_t([3, 3])}) outs(%pf : {pt}) -> {pt}\n")
    results.append("%pool")
    types.append(pt)
    ft, wt, ct = _t([batch, 512]), _t([512, 1000]), _t([batch, 1000])
    args += [f"%feat: {ft}", f"%fcw: {wt}"]
    lines.append(f"  %fz = arith.constant 0.0 : f32\n"
                 f"  %fe = tensor.empty() : {ct}\n"
                 f"  %ff = linalg.fill ins(%fz : f32) outs(%fe : {ct}) -> {ct}\n"
                 f"  %fc = linalg.matmul ins(%feat, %fcw : {ft}, {wt}) outs(%ff : {ct}) -> {ct}\n")
    results.append("%fc")
    types.append(ct)
    return (f"func.func @main({', '.join(args)}) -> ({', '.join(types)}) {{\n"
            + "".join(lines)
            + f"  return {', '.join(results)} : {', '.join(types)}\n}}\n")


def operator_suite() -> dict[str, str]:
    """Single ops with shapes from real models (BERT, ResNet-18), plus a chain."""
    return {
        "matmul_bert_384x768x768": matmul(384, 768, 768),
        "batch_matmul_bert_12x384x64x384": batch_matmul(12, 384, 384, 64),
        "conv2d_nchw_resnet_64x56x56": conv2d_nchw(1, 64, 58, 58, 64, 3, 3),
        "conv2d_nhwc_resnet_128x28x28": conv2d_nhwc(1, 30, 30, 128, 3, 3, 128),
        "maxpool_nchw_resnet_64x112x112": maxpool_nchw(1, 64, 112, 112, 3, 2),
        "add_resnet_64x56x56": add([1, 64, 56, 56]),
        "relu_resnet_64x56x56": relu([1, 64, 56, 56]),
        "matmul_bias_relu_256x512x512": matmul_bias_relu(256, 512, 512),
    }


def softmax_rows(m: int, n: int) -> str:
    """Row softmax (max-reduce, exp-sum, normalise: three linalg ops)."""
    from mlir_rl.data import _softmax_rows
    t = _t([m, n])
    return (f"func.func @main(%in: {t}) -> {t} {{\n" + _softmax_rows("sm", "%in", m, n)
            + f"  return %sm : {t}\n}}\n")


def unseen_suite() -> dict[str, str]:
    """Kernels from real models whose shapes are not in the training data
    (``mlir_rl.data``): the policy-quality check of the README."""
    import random

    from mlir_rl.data import lqcd_contraction
    lq = lqcd_contraction(random.Random(1234), 0).text
    return {
        "bert_matmul_256x768x768": matmul(256, 768, 768),
        "bert_ffn_matmul_256x3072x768": matmul(256, 3072, 768),
        "bert_attention_bmm_12x256x256x64": batch_matmul(12, 256, 256, 64),
        "resnet_conv_nchw_128x28x28": conv2d_nchw(1, 128, 30, 30, 128, 3, 3),
        "resnet_conv_nhwc_64x56x56": conv2d_nhwc(1, 58, 58, 64, 3, 3, 64),
        "resnet_maxpool_nchw_64x112": maxpool_nchw(1, 64, 113, 113, 3, 2),
        "mobilenet_depthwise_nhwc_144x56": depthwise_conv2d_nhwc(1, 58, 58, 144, 3, 3),
        "elementwise_add_1x128x56x56": add([1, 128, 56, 56]),
        "elementwise_relu_1x256x28x28": relu([1, 256, 28, 28]),
        "softmax_256x512": softmax_rows(256, 512),
        "lqcd_contraction_9_loops": lq,
    }
