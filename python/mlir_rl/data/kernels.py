"""Small linalg-on-tensors kernels as MLIR text, for tests, demos and data.

Each function returns a module with one public function ``@main`` taking the
inputs and returning the output, accumulators initialised by ``linalg.fill``.
"""
from __future__ import annotations

from typing import Optional, Sequence


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
              fill: str = "0.0", window: Sequence[int] = (), spatial: int = 2) -> str:
    """A strided convolution or pooling op ``op`` (``spatial`` window dimensions) on function arguments
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
            f"  %r = linalg.{op} {{dilations = dense<1> : tensor<{spatial}xi64>, "
            f"strides = dense<{stride}> : tensor<{spatial}xi64>}} ins({', '.join(names)} : "
            f"{', '.join(types)}) outs(%O : {o}) -> {o}\n"
            f"  return %r : {o}\n}}\n")


def conv2d_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int,
                stride: int = 1) -> str:
    oh, ow = _out_size(h, kh, stride), _out_size(w, kw, stride)
    return _windowed("conv_2d_nchw_fchw", [[n, c, h, w], [f, c, kh, kw]], [n, f, oh, ow], stride)


def conv1d_ncw(n: int, c: int, w: int, f: int, k: int, stride: int = 1) -> str:
    """A 1-D convolution as torch-mlir imports ``nn.Conv1d`` (NCW, FCW)."""
    return _windowed("conv_1d_ncw_fcw", [[n, c, w], [f, c, k]], [n, f, _out_size(w, k, stride)],
                     stride, spatial=1)


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


def _dense_f32(values) -> str:
    """A dense f32 attribute of ``values`` (a numpy array) in hex form."""
    import numpy as np

    return 'dense<"0x' + np.ascontiguousarray(values, dtype="<f4").tobytes().hex().upper() + '">'


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


def elementwise_generic(name: str, var: str, src: str, t: str, rank: int, body: str) -> str:
    idm = _identity_map(rank)
    its = ", ".join(['"parallel"'] * rank)
    return (f"  %e_{var} = tensor.empty() : {t}\n"
            f"  %{var} = linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = [{its}]}} "
            f"ins({src} : {t}) outs(%e_{var} : {t}) {{\n"
            f"  ^bb0(%x: f32, %o: f32):\n{body}"
            f"  }} -> {t}\n")


RELU_BODY = ("    %z = arith.constant 0.0 : f32\n    %m = arith.maximumf %x, %z : f32\n"
             "    linalg.yield %m : f32\n")
SIGMOID_BODY = ("    %one = arith.constant 1.0 : f32\n    %n = arith.negf %x : f32\n"
                "    %ex = math.exp %n : f32\n    %d = arith.addf %one, %ex : f32\n"
                "    %s = arith.divf %one, %d : f32\n    linalg.yield %s : f32\n")


def softmax_rows_body(var: str, src: str, m: int, n: int) -> str:
    """Row softmax as three linalg ops: max-reduce, exp-sum, normalise."""
    t, r = _t([m, n]), _t([m])
    row = "affine_map<(d0, d1) -> (d0)>"
    idm = _identity_map(2)
    return (f"  %mx_i_{var} = arith.constant -3.40282347E+38 : f32\n"
            f"  %mx_e_{var} = tensor.empty() : {r}\n"
            f"  %mx_f_{var} = linalg.fill ins(%mx_i_{var} : f32) outs(%mx_e_{var} : {r}) -> {r}\n"
            f"  %mx_{var} = linalg.generic {{indexing_maps = [{idm}, {row}], iterator_types = "
            f"[\"parallel\", \"reduction\"]}} ins({src} : {t}) outs(%mx_f_{var} : {r}) {{\n"
            f"  ^bb0(%x: f32, %a: f32):\n    %y = arith.maximumf %x, %a : f32\n    linalg.yield %y : f32\n"
            f"  }} -> {r}\n"
            f"  %sm_z_{var} = arith.constant 0.0 : f32\n"
            f"  %sm_e_{var} = tensor.empty() : {r}\n"
            f"  %sm_f_{var} = linalg.fill ins(%sm_z_{var} : f32) outs(%sm_e_{var} : {r}) -> {r}\n"
            f"  %sm_{var} = linalg.generic {{indexing_maps = [{idm}, {row}, {row}], iterator_types = "
            f"[\"parallel\", \"reduction\"]}} ins({src}, %mx_{var} : {t}, {r}) outs(%sm_f_{var} : {r}) {{\n"
            f"  ^bb0(%x: f32, %mm: f32, %a: f32):\n    %d = arith.subf %x, %mm : f32\n"
            f"    %ex = math.exp %d : f32\n    %y = arith.addf %ex, %a : f32\n    linalg.yield %y : f32\n"
            f"  }} -> {r}\n"
            f"  %e_{var} = tensor.empty() : {t}\n"
            f"  %{var} = linalg.generic {{indexing_maps = [{idm}, {row}, {row}, {idm}], iterator_types = "
            f"[\"parallel\", \"parallel\"]}} ins({src}, %mx_{var}, %sm_{var} : {t}, {r}, {r}) "
            f"outs(%e_{var} : {t}) {{\n"
            f"  ^bb0(%x: f32, %mm: f32, %s: f32, %o: f32):\n    %d = arith.subf %x, %mm : f32\n"
            f"    %ex = math.exp %d : f32\n    %y = arith.divf %ex, %s : f32\n    linalg.yield %y : f32\n"
            f"  }} -> {t}\n")


def lqcd_contraction(n_y: int, L: int, shift: int) -> str:
    """An LQCD-style contraction (9 loops, a reduction over spin/colour and a
    shifted site access):
    out[y, t, x, a, b, i, j] = sum_{k, l} P[y, t, x + shift, a, k, i, l] * Q[y, t, x, k, b, l, j]."""
    s, c = 4, 3
    dims = "d0, d1, d2, d3, d4, d5, d6, d7, d8"
    p_map = f"affine_map<({dims}) -> (d0, d1, d2 + {shift}, d3, d7, d5, d8)>"
    q_map = f"affine_map<({dims}) -> (d0, d1, d2, d7, d4, d8, d6)>"
    o_map = f"affine_map<({dims}) -> (d0, d1, d2, d3, d4, d5, d6)>"
    pt = _t([n_y, L, L + shift, s, s, c, c])
    qt = _t([n_y, L, L, s, s, c, c])
    ot = _t([n_y, L, L, s, s, c, c])
    its = ", ".join(['"parallel"'] * 7 + ['"reduction"'] * 2)
    text = (f"func.func @main(%P: {pt}, %Q: {qt}) -> {ot} {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : {ot}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {ot}) -> {ot}\n"
            f"  %r = linalg.generic {{indexing_maps = [{p_map}, {q_map}, {o_map}], "
            f"iterator_types = [{its}]}} ins(%P, %Q : {pt}, {qt}) outs(%f : {ot}) {{\n"
            f"  ^bb0(%p: f32, %q: f32, %o: f32):\n    %m = arith.mulf %p, %q : f32\n"
            f"    %a = arith.addf %o, %m : f32\n    linalg.yield %a : f32\n"
            f"  }} -> {ot}\n  return %r : {ot}\n}}\n")
    return text


def softmax_rows(m: int, n: int) -> str:
    """Row softmax (max-reduce, exp-sum, normalise: three linalg ops)."""
    t = _t([m, n])
    return (f"func.func @main(%in: {t}) -> {t} {{\n" + softmax_rows_body("sm", "%in", m, n)
            + f"  return %sm : {t}\n}}\n")


def depthwise_conv2d_nchw(n: int, c: int, h: int, w: int, kh: int, kw: int,
                          stride: int = 1) -> str:
    """A depthwise convolution as torch-mlir imports one (NCHW)."""
    oh, ow = _out_size(h, kh, stride), _out_size(w, kw, stride)
    return _windowed("depthwise_conv_2d_nchw_chw", [[n, c, h, w], [c, kh, kw]],
                     [n, c, oh, ow], stride)


def conv_bn_relu_nchw(c: int, size: int, f: int, k: int, stride: int) -> str:
    """A convolution followed by batch norm (inference: a per-channel scale
    and shift) and relu, as torch-mlir imports ``Conv2d, BatchNorm2d, ReLU``
    once its one-op generics are fused."""
    out = _out_size(size, k, stride)
    x, w, o, ch = _t([1, c, size, size]), _t([f, c, k, k]), _t([1, f, out, out]), _t([f])
    idm = _identity_map(4)
    chm = "affine_map<(d0, d1, d2, d3) -> (d1)>"
    its = ", ".join(['"parallel"'] * 4)
    return (f"func.func @main(%x: {x}, %w: {w}, %scale: {ch}, %shift: {ch}) -> {o} {{\n"
            + _filled("O", [1, f, out, out]) +
            f"  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, "
            f"strides = dense<{stride}> : tensor<2xi64>}} ins(%x, %w : {x}, {w}) "
            f"outs(%O : {o}) -> {o}\n"
            f"  %e = tensor.empty() : {o}\n"
            f"  %r = linalg.generic {{indexing_maps = [{idm}, {chm}, {chm}, {idm}], "
            f"iterator_types = [{its}]}} ins(%c, %scale, %shift : {o}, {ch}, {ch}) "
            f"outs(%e : {o}) {{\n"
            f"  ^bb0(%v: f32, %s: f32, %b: f32, %u: f32):\n"
            f"    %m = arith.mulf %v, %s : f32\n    %a = arith.addf %m, %b : f32\n"
            f"    %z = arith.constant 0.0 : f32\n    %y = arith.maximumf %a, %z : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {o}\n"
            f"  return %r : {o}\n}}\n")


def linear_gelu(m: int, n: int, k: int) -> str:
    """nn.Linear then GELU (tanh approximation), as torch-mlir imports them:
    the bias broadcast into the matmul's accumulator."""
    a, b, c, bias = _t([m, k]), _t([k, n]), _t([m, n]), _t([n])
    idm = _identity_map(2)
    return (f"func.func @main(%A: {a}, %B: {b}, %bias: {bias}) -> {c} {{\n"
            f"  %e0 = tensor.empty() : {c}\n"
            f"  %bb = linalg.broadcast ins(%bias : {bias}) outs(%e0 : {c}) dimensions = [0]\n"
            f"  %mm = linalg.matmul ins(%A, %B : {a}, {b}) outs(%bb : {c}) -> {c}\n"
            f"  %e1 = tensor.empty() : {c}\n"
            f"  %r = linalg.generic {{indexing_maps = [{idm}, {idm}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%mm : {c}) outs(%e1 : {c}) {{\n"
            f"  ^bb0(%x: f32, %o: f32):\n"
            f"    %h = arith.constant 0.5 : f32\n    %one = arith.constant 1.0 : f32\n"
            f"    %k0 = arith.constant 0.7978845608 : f32\n    %k1 = arith.constant 0.044715 : f32\n"
            f"    %x2 = arith.mulf %x, %x : f32\n    %x3 = arith.mulf %x2, %x : f32\n"
            f"    %t0 = arith.mulf %x3, %k1 : f32\n    %t1 = arith.addf %x, %t0 : f32\n"
            f"    %t2 = arith.mulf %t1, %k0 : f32\n    %th = math.tanh %t2 : f32\n"
            f"    %t3 = arith.addf %th, %one : f32\n    %t4 = arith.mulf %x, %h : f32\n"
            f"    %y = arith.mulf %t4, %t3 : f32\n    linalg.yield %y : f32\n  }} -> {c}\n"
            f"  return %r : {c}\n}}\n")


def linear_torch(m: int, n: int, k: int, relu: bool = False,
                 seed: Optional[int] = None) -> str:
    """nn.Linear (then ReLU) as torch-mlir imports it: the [N, K] weight
    transposed by ``linalg.transpose``, a matmul into a fill, the bias added
    by a broadcasting generic. ``mlir-rl-prepare`` folds the transpose into
    the matmul where it pays (a batch-1 layer then reads its weight by row)
    and fuses bias and activation. With a ``seed``, weight and bias are
    constants in the program (seeded values), as in an imported model,
    instead of arguments."""
    x, w, wt, c, bias = _t([m, k]), _t([n, k]), _t([k, n]), _t([m, n]), _t([n])
    args, consts = f"%x: {x}, %w: {w}, %bias: {bias}", ""
    if seed is not None:
        import numpy as np

        rng = np.random.default_rng(seed)
        wv = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        bv = rng.standard_normal(n).astype(np.float32)
        args = f"%x: {x}"
        consts = (f"  %w = arith.constant {_dense_f32(wv)} : {w}\n"
                  f"  %bias = arith.constant {_dense_f32(bv)} : {bias}\n")
    idm = _identity_map(2)
    col = "affine_map<(d0, d1) -> (d1)>"
    act = ""
    out = "%b"
    if relu:
        act = (f"  %r = linalg.generic {{indexing_maps = [{idm}, {idm}], "
               f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%b : {c}) outs(%e1 : {c}) {{\n"
               f"  ^bb0(%v: f32, %o: f32):\n    %z = arith.constant 0.0 : f32\n"
               f"    %gt = arith.cmpf ugt, %v, %z : f32\n    %y = arith.select %gt, %v, %z : f32\n"
               f"    linalg.yield %y : f32\n  }} -> {c}\n")
        out = "%r"
    return (f"func.func @main({args}) -> {c} {{\n" + consts +
            f"  %et = tensor.empty() : {wt}\n"
            f"  %wt = linalg.transpose ins(%w : {w}) outs(%et : {wt}) permutation = [1, 0]\n"
            + _filled("C", [m, n]) +
            f"  %mm = linalg.matmul ins(%x, %wt : {x}, {wt}) outs(%C : {c}) -> {c}\n"
            f"  %e1 = tensor.empty() : {c}\n"
            f"  %b = linalg.generic {{indexing_maps = [{idm}, {col}, {idm}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%mm, %bias : {c}, {bias}) "
            f"outs(%e1 : {c}) {{\n"
            f"  ^bb0(%a: f32, %bb: f32, %o: f32):\n    %y = arith.addf %a, %bb : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {c}\n"
            + act +
            f"  return {out} : {c}\n}}\n")


def layer_norm(m: int, n: int) -> str:
    """Layer norm over rows: mean, variance, normalise with gamma and beta."""
    t, r, v = _t([m, n]), _t([m]), _t([n])
    idm = _identity_map(2)
    row = "affine_map<(d0, d1) -> (d0)>"
    col = "affine_map<(d0, d1) -> (d1)>"
    inv = 1.0 / n
    return (f"func.func @main(%x: {t}, %g: {v}, %b: {v}) -> {t} {{\n"
            + _filled("S", [m]) +
            f"  %sum = linalg.generic {{indexing_maps = [{idm}, {row}], "
            f"iterator_types = [\"parallel\", \"reduction\"]}} ins(%x : {t}) outs(%S : {r}) {{\n"
            f"  ^bb0(%a: f32, %acc: f32):\n    %y = arith.addf %a, %acc : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {r}\n"
            + _filled("Q", [m]) +
            f"  %sq = linalg.generic {{indexing_maps = [{idm}, {row}, {row}], "
            f"iterator_types = [\"parallel\", \"reduction\"]}} ins(%x, %sum : {t}, {r}) "
            f"outs(%Q : {r}) {{\n"
            f"  ^bb0(%a: f32, %s: f32, %acc: f32):\n    %inv = arith.constant {inv:e} : f32\n"
            f"    %mu = arith.mulf %s, %inv : f32\n    %d = arith.subf %a, %mu : f32\n"
            f"    %d2 = arith.mulf %d, %d : f32\n    %y = arith.addf %d2, %acc : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {r}\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %r = linalg.generic {{indexing_maps = [{idm}, {row}, {row}, {col}, {col}, {idm}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%x, %sum, %sq, %g, %b : {t}, {r}, {r}, {v}, {v}) outs(%e : {t}) {{\n"
            f"  ^bb0(%a: f32, %s: f32, %q: f32, %gg: f32, %bb: f32, %o: f32):\n"
            f"    %inv = arith.constant {inv:e} : f32\n    %eps = arith.constant 1.0e-5 : f32\n"
            f"    %mu = arith.mulf %s, %inv : f32\n    %var = arith.mulf %q, %inv : f32\n"
            f"    %ve = arith.addf %var, %eps : f32\n    %rs = math.rsqrt %ve : f32\n"
            f"    %d = arith.subf %a, %mu : f32\n    %nrm = arith.mulf %d, %rs : f32\n"
            f"    %sc = arith.mulf %nrm, %gg : f32\n    %y = arith.addf %sc, %bb : f32\n"
            f"    linalg.yield %y : f32\n  }} -> {t}\n"
            f"  return %r : {t}\n}}\n")
