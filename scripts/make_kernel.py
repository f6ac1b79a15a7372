#!/usr/bin/env python3
"""One layer as torch-mlir imports it, with seeded constant weights, as an
MLIR file (a developer's aid: the kernels the front end's rules are
measured on, through scripts/compare_prepare_option.py).

    scripts/make_kernel.py linear MxKxN OUT.mlir   # nn.Linear without bias: the [N, K]
                                                   # weight transposed at run time, a matmul
    scripts/make_kernel.py conv CxFxS OUT.mlir     # nn.Conv2d(C, F, 3, padding=1), NCHW,
                                                   # one SxS image: a pad and conv_2d_nchw_fchw

For example, the front end's thin-matmul rule on a GRU cell's product and
the shifted-window convolutions on a UNet decoder's first convolution:

    scripts/make_kernel.py linear 16x512x3072 /tmp/l.mlir
    .venv/bin/python scripts/compare_prepare_option.py --models /tmp/l.mlir \\
        --option mlir-rl-fuse-elementwise:thin-constant-rows=1,16
    scripts/make_kernel.py conv 192x64x64 /tmp/c.mlir
    .venv/bin/python scripts/compare_prepare_option.py --models /tmp/c.mlir \\
        --option mlir-rl-conv-to-matmul:shifted-min-bytes=-1,8388608
"""
import argparse

import numpy as np


def resource(name: str, values: np.ndarray) -> str:
    """A dialect resource entry: the alignment (4) and the raw f32 data."""
    blob = np.array([4], dtype="<u4").tobytes() + values.astype("<f4").tobytes()
    return f'      {name}: "0x{blob.hex().upper()}"'


def resources(entries: list[str]) -> str:
    return "{-#\n  dialect_resources: {\n    builtin: {\n" + ",\n".join(entries) + \
        "\n    }\n  }\n#-}\n"


def linear(m: int, k: int, n: int, seed: int) -> str:
    w = np.random.default_rng(seed).standard_normal((n, k), dtype=np.float32) * 0.05
    return f"""module {{
  func.func @main(%x: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
    %w = arith.constant dense_resource<weight> : tensor<{n}x{k}xf32>
    %e = tensor.empty() : tensor<{k}x{n}xf32>
    %t = linalg.transpose ins(%w : tensor<{n}x{k}xf32>) outs(%e : tensor<{k}x{n}xf32>) permutation = [1, 0]
    %z = arith.constant 0.0 : f32
    %o = tensor.empty() : tensor<{m}x{n}xf32>
    %f = linalg.fill ins(%z : f32) outs(%o : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
    %r = linalg.matmul ins(%x, %t : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
    return %r : tensor<{m}x{n}xf32>
  }}
}}
""" + resources([resource("weight", w)])


def conv(c: int, f: int, s: int, seed: int) -> str:
    w = np.random.default_rng(seed).standard_normal((f, c, 3, 3), dtype=np.float32) * 0.05
    p = s + 2
    x, o = f"tensor<1x{c}x{s}x{s}xf32>", f"tensor<1x{f}x{s}x{s}xf32>"
    return f"""module {{
  func.func @main(%x: {x}) -> {o} {{
    %w = arith.constant dense_resource<filter> : tensor<{f}x{c}x3x3xf32>
    %z = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {{
    ^bb0(%a: index, %b: index, %c: index, %d: index):
      tensor.yield %z : f32
    }} : {x} to tensor<1x{c}x{p}x{p}xf32>
    %e = tensor.empty() : {o}
    %f = linalg.fill ins(%z : f32) outs(%e : {o}) -> {o}
    %r = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%p, %w : tensor<1x{c}x{p}x{p}xf32>, tensor<{f}x{c}x3x3xf32>) outs(%f : {o}) -> {o}
    return %r : {o}
  }}
}}
""" + resources([resource("filter", w)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=["linear", "conv"])
    ap.add_argument("shape", help="MxKxN (linear) or CxFxS (conv)")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    dims = [int(d) for d in a.shape.split("x")]
    if len(dims) != 3:
        ap.error("the shape is three sizes, AxBxC")
    text = linear(*dims, a.seed) if a.kind == "linear" else conv(*dims, a.seed)
    with open(a.out, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
