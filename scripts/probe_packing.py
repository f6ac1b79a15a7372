#!/usr/bin/env python3
"""A matmul with its B operand packed into panels, against the plain matmul
(a developer's aid for the packing item of the networks issue).

  .venv/bin/python scripts/probe_packing.py --m 512 --k 4608 --n 896 \
      "TP(64,2,0,0) T(4,1,0,8) V" "TP(32,4,0,0) T(4,1,0,8) V"

Plain: C[M, N] = A[M, K] x B[K, N] (VGG-11's largest im2col matmul by
default: filter [512, 4608] by windows [4608, 896]). Packed: B stored as
[N/NB, K, NB] panels, C as [M, N/NB, NB], a generic over loops (m, j, i, k)
(`C[m, j, i] += A[m, k] * Bp[j, k, i]`): a tile's B slice is then one
contiguous run per reduction step instead of rows N floats apart. Timed in
alternating rounds in one process: the plain matmul with the shipped policy's
decisions (`pack-rhs=false`), as the pass schedules it (`pass`: B packed after
the decisions) and with `--plain` schedules, the packed one with the policy
and with each schedule given (op 1 is the matmul, op 0 its fill). Every output is checked
against numpy on its own inputs. `--no-huge-pages`: numpy's inputs on 4 KiB
pages (numpy asks for transparent huge pages for arrays of 4 MiB or more, a
network's intermediate buffers do not get them).
"""
import argparse

import numpy as np

from mlir_rl.bench.timing import time_compiled
from mlir_rl.core import Module
from mlir_rl.data import kernels
from mlir_rl.passes import run_pass


def packed_text(m: int, k: int, n: int, nb: int) -> str:
    j = n // nb
    out = f"tensor<{m}x{j}x{nb}xf32>"
    return f"""
#a = affine_map<(m, j, i, k) -> (m, k)>
#b = affine_map<(m, j, i, k) -> (j, k, i)>
#c = affine_map<(m, j, i, k) -> (m, j, i)>
func.func @f(%A: tensor<{m}x{k}xf32>, %B: tensor<{j}x{k}x{nb}xf32>) -> {out} {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : {out}
  %c = linalg.fill ins(%z : f32) outs(%e : {out}) -> {out}
  %r = linalg.generic {{indexing_maps = [#a, #b, #c],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%A, %B : tensor<{m}x{k}xf32>, tensor<{j}x{k}x{nb}xf32>) outs(%c : {out}) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }} -> {out}
  return %r : {out}
}}"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("schedules", nargs="*", help="schedules of the packed matmul (op 1)")
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--k", type=int, default=4608)
    ap.add_argument("--n", type=int, default=896)
    ap.add_argument("--nb", type=int, default=16, help="panel width (divides N)")
    ap.add_argument("--plain", action="append", default=[],
                    help="a schedule of the plain matmul (op 1), repeatable")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-huge-pages", action="store_true")
    args = ap.parse_args()
    if args.n % args.nb:
        ap.error("--nb must divide --n")
    if args.no_huge_pages:
        from numpy._core.multiarray import _set_madvise_hugepage
        _set_madvise_hugepage(False)
    plain, packed = kernels.matmul(args.m, args.n, args.k), packed_text(args.m, args.k, args.n, args.nb)
    # "policy": the policy's decisions on each form as given (pack-rhs=false);
    # "pass": the pass as users run it (the plain matmul packed after them).
    variants = [("plain", plain, ""), ("pass", plain, "")]
    variants += [("plain", plain, f"1: {s}") for s in args.plain]
    variants += [("packed", packed, "")] + [("packed", packed, f"1: {s}") for s in args.schedules]
    fns, rows = [], []
    for form, text, schedule in variants:
        r = run_pass(text, schedule=schedule,
                     extra=([] if form == "pass"
                            else ["pack-rhs=false", "register-tiles=false",
                                  "copies-by-rule=false"]))
        fns.append(Module.parse(r.ir).compile(args.threads))
        rows.append((form, ("policy: " if not schedule else "") + r.schedule.split(";")[0]))
    timings = time_compiled(fns, args.rounds, args.runs)
    flops = 2 * args.m * args.k * args.n
    print(f"M={args.m} K={args.k} N={args.n} NB={args.nb}, {args.threads} threads, "
          f"{args.rounds} rounds of {args.runs} runs")
    print(f"{'form':7s} {'schedule':48s} {'median ms':>10s} {'min':>8s} {'GFLOP/s':>8s}  output")
    for (form, schedule), t in zip(rows, timings):
        a, b = t.inputs
        if form == "packed":  # Bp[j, k, i] = B[k, j * NB + i]
            b = b.transpose(1, 0, 2).reshape(args.k, args.n)
        want = a @ b
        got = t.outputs[0].reshape(args.m, args.n)
        ok = np.allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(args.k))
        med = float(np.median(t.seconds))
        print(f"{form:7s} {schedule:48s} {med * 1e3:10.2f} {min(t.seconds) * 1e3:8.2f} "
              f"{flops / med / 1e9:8.1f}  {'= numpy' if ok else 'DIFFERS'}")


if __name__ == "__main__":
    main()
