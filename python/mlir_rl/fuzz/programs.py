"""Random valid linalg-on-tensors programs for the differential fuzzer.

A program is a list of nodes, each one construct (a matmul with its fill, a
strided convolution, a softmax of six linalg ops, a reshape, ...) reading
function arguments or earlier nodes' results. The structure is kept, not
just the text, so that a failure can be shrunk by removing nodes (their
results become function arguments) while the op ids of the schedule that
failed are renumbered.

Coverage: every op kind the features name (matmul, batch matmul, 1-D and
2-D convolutions plain and depthwise, pooling, add, fill, generic) and named ops
the classifier calls unknown (reduce, broadcast, transpose, map, copy,
matvec, sub/mul/max/min); chains, results used twice (by two consumers, or
returned and consumed), multi-result ops and functions; sizes that are odd,
prime, 1 and, in some programs, 0; the element types the JIT accepts
(f32, f64, i32, i64); non-linalg tensor ops between them (collapse/expand
shape, extract_slice, pad).
"""
from __future__ import annotations

import dataclasses
import math
import random
import zlib
from dataclasses import dataclass, field
from typing import Optional, Union

DTYPES = ("f32", "f64", "i32", "i64")
DTYPE_WEIGHTS = (0.7, 0.1, 0.1, 0.1)
# With GenConfig.bf16, one f32 program in BF16_EVERY is drawn as the same
# program on bf16 data (chosen by its origin, not the stream's draws: the
# other programs stay as they were).
BF16_EVERY = 8
# Odd, prime and power-of-two sizes; 1 often (a degenerate loop). 67, 100
# and 197 (ViT's tokens): contractions whose rows or columns, 64 or more and
# not a multiple of 32, the front end splits (mlir-rl-pad-to-tiles).
SIZES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 19, 23, 24, 29, 31, 32, 33, 37, 48, 64,
         67, 100, 197)
SIZE_WEIGHTS = (6, 3, 4, 3, 4, 2, 4, 3, 2, 3, 2, 3, 3, 3, 2, 2, 1, 2, 1, 1, 1, 1, 1, 1,
                2, 2, 2)
MAX_ELEMENTS = 24_000     # per tensor
MAX_ITERATIONS = 1_500_000  # per op's iteration space


def _is_float(dtype: str) -> bool:
    return dtype.startswith("f") or dtype == "bf16"


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: str

    def __str__(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.dtype + ">"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


Ref = tuple  # ("arg", k) or ("node", j, result)


@dataclass
class Node:
    kind: str
    inputs: list[Ref]
    attrs: dict
    results: list[TensorType]
    linalg_ops: int          # linalg ops it emits (op ids, in order)


@dataclass
class FuzzProgram:
    dtype: str
    args: list[TensorType]
    nodes: list[Node]
    returns: list[Ref]
    origin: str = ""         # "seed/index"
    zero_size: bool = False

    # -- Text --------------------------------------------------------------
    def type_of(self, ref: Ref) -> TensorType:
        if ref[0] == "arg":
            return self.args[ref[1]]
        return self.nodes[ref[1]].results[ref[2]]

    def text(self) -> str:
        names: dict[Ref, str] = {("arg", k): f"%arg{k}" for k in range(len(self.args))}
        body: list[str] = []
        for j, node in enumerate(self.nodes):
            ins = [names[r] for r in node.inputs]
            tys = [self.type_of(r) for r in node.inputs]
            lines, outs = _render(node, ins, tys, f"n{j}", self.dtype)
            body += lines
            for r, name in enumerate(outs):
                names[("node", j, r)] = name
        args = ", ".join(f"%arg{k}: {t}" for k, t in enumerate(self.args))
        rets = [self.type_of(r) for r in self.returns]
        sig = ", ".join(str(t) for t in rets)
        header = f"// mlir-rl fuzz program {self.origin}: {self.describe()}\n" if self.origin else ""
        return (header + f"func.func @main({args}) -> ({sig}) {{\n"
                + "".join("  " + line + "\n" for line in body)
                + f"  return {', '.join(names[r] for r in self.returns)} : {sig}\n}}\n")

    def describe(self) -> str:
        kinds = " -> ".join(n.kind for n in self.nodes)
        extra = ", zero-size" if self.zero_size else ""
        return f"{self.dtype}, {len(self.nodes)} nodes ({kinds}), {len(self.returns)} results{extra}"

    @property
    def num_linalg_ops(self) -> int:
        return sum(n.linalg_ops for n in self.nodes)

    def first_op_id(self, j: int) -> int:
        return sum(n.linalg_ops for n in self.nodes[:j])

    def node_of_op(self, op_id: int) -> int:
        start = 0
        for j, n in enumerate(self.nodes):
            if op_id < start + n.linalg_ops:
                return j
            start += n.linalg_ops
        raise IndexError(op_id)

    # -- Shrinking -----------------------------------------------------------
    def without_node(self, j: int) -> Optional[tuple["FuzzProgram", dict[int, int]]]:
        """The program without node ``j``: its results become function
        arguments. Returns it and the map of op ids (old -> new; the removed
        node's ops are absent), or None when nothing would be returned."""
        returns = [r for r in self.returns if not (r[0] == "node" and r[1] == j)]
        if not returns:
            return None
        args = list(self.args)
        replace: dict[Ref, Ref] = {}
        for r, t in enumerate(self.nodes[j].results):
            replace[("node", j, r)] = ("arg", len(args))
            args.append(t)

        def fix(ref: Ref) -> Ref:
            ref = replace.get(ref, ref)
            if ref[0] == "node" and ref[1] > j:
                return ("node", ref[1] - 1, ref[2])
            return ref
        nodes = [dataclasses.replace(n, inputs=[fix(r) for r in n.inputs])
                 for k, n in enumerate(self.nodes) if k != j]
        prog = FuzzProgram(self.dtype, args, nodes, [fix(r) for r in returns],
                           self.origin, self.zero_size)
        prog = prog._without_unused_args()
        first, count = self.first_op_id(j), self.nodes[j].linalg_ops
        ids = {}
        for old in range(self.num_linalg_ops):
            if old < first:
                ids[old] = old
            elif old >= first + count:
                ids[old] = old - count
        return prog, ids

    def without_return(self, k: int) -> Optional["FuzzProgram"]:
        """The program returning one result fewer (None if it is the last, or
        if the node would be left without a use)."""
        if len(self.returns) <= 1:
            return None
        ref = self.returns[k]
        rest = self.returns[:k] + self.returns[k + 1:]
        used = ref in rest or any(ref in n.inputs for n in self.nodes)
        if not used:
            return None
        return dataclasses.replace(self, returns=rest)

    def _without_unused_args(self) -> "FuzzProgram":
        used = sorted({r[1] for n in self.nodes for r in n.inputs if r[0] == "arg"}
                      | {r[1] for r in self.returns if r[0] == "arg"})
        renum = {old: new for new, old in enumerate(used)}

        def fix(ref: Ref) -> Ref:
            return ("arg", renum[ref[1]]) if ref[0] == "arg" else ref
        nodes = [dataclasses.replace(n, inputs=[fix(r) for r in n.inputs]) for n in self.nodes]
        return FuzzProgram(self.dtype, [self.args[k] for k in used], nodes,
                           [fix(r) for r in self.returns], self.origin, self.zero_size)

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "args": [[list(t.shape), t.dtype] for t in self.args],
                "nodes": [{"kind": n.kind, "inputs": [list(r) for r in n.inputs],
                           "attrs": n.attrs, "results": [[list(t.shape), t.dtype] for t in n.results],
                           "linalg_ops": n.linalg_ops} for n in self.nodes],
                "returns": [list(r) for r in self.returns], "origin": self.origin,
                "zero_size": self.zero_size}

    @staticmethod
    def from_json(d: dict) -> "FuzzProgram":
        def t(x):
            return TensorType(tuple(x[0]), x[1])
        nodes = [Node(n["kind"], [tuple(r) for r in n["inputs"]], n["attrs"],
                      [t(x) for x in n["results"]], n["linalg_ops"]) for n in d["nodes"]]
        return FuzzProgram(d["dtype"], [t(x) for x in d["args"]], nodes,
                           [tuple(r) for r in d["returns"]], d.get("origin", ""),
                           d.get("zero_size", False))


# -- Rendering -----------------------------------------------------------------

def _map(dims: int, results) -> str:
    ds = ", ".join(f"d{i}" for i in range(dims))
    return f"affine_map<({ds}) -> ({', '.join(results)})>"


def _identity(rank: int) -> str:
    return _map(rank, [f"d{i}" for i in range(rank)])


def _const(value: str, dtype: str) -> str:
    if dtype == "bf16" and value in ("lowest", "highest"):
        return "0xFF7F" if value == "lowest" else "0x7F7F"  # bf16's finite extremes
    if _is_float(dtype):
        return {"zero": "0.0", "one": "1.0", "two": "2.0", "half": "0.5",
                "lowest": "-3.40282347E+38" if dtype == "f32" else "-1.7976931348623157E+308",
                "highest": "3.40282347E+38" if dtype == "f32" else "1.7976931348623157E+308",
                }[value]
    bits = int(dtype[1:])
    return {"zero": "0", "one": "1", "two": "2", "half": "3",
            "lowest": str(-(1 << (bits - 1))), "highest": str((1 << (bits - 1)) - 1)}[value]


# The named binary ops (linalg.<op>) and their arith bodies (linalg.map).
BINARY_OPS = ("add", "sub", "mul", "max", "min")


def _arith(op: str, dtype: str) -> str:
    f = _is_float(dtype)
    return {"add": "arith.addf" if f else "arith.addi",
            "sub": "arith.subf" if f else "arith.subi",
            "mul": "arith.mulf" if f else "arith.muli",
            "max": "arith.maximumf" if f else "arith.maxsi",
            "min": "arith.minimumf" if f else "arith.minsi"}[op]


def _fill(p: str, name: str, t: TensorType, value: str) -> list[str]:
    return [f"%{p}_c{name} = arith.constant {_const(value, t.dtype)} : {t.dtype}",
            f"%{p}_e{name} = tensor.empty() : {t}",
            f"%{p}_{name} = linalg.fill ins(%{p}_c{name} : {t.dtype}) outs(%{p}_e{name} : {t}) -> {t}"]


def _unary_body(fn: str, x: str, p: str, dt: str) -> tuple[list[str], str]:
    """Lines computing fn(x) in a linalg body, and the result's name."""
    if fn == "relu":
        return [f"%{p}_z = arith.constant {_const('zero', dt)} : {dt}",
                f"%{p}_y = {_arith('max', dt)} {x}, %{p}_z : {dt}"], f"%{p}_y"
    if fn == "sigmoid":
        return [f"%{p}_one = arith.constant 1.0 : {dt}",
                f"%{p}_n = arith.negf {x} : {dt}",
                f"%{p}_x = math.exp %{p}_n : {dt}",
                f"%{p}_d = arith.addf %{p}_one, %{p}_x : {dt}",
                f"%{p}_y = arith.divf %{p}_one, %{p}_d : {dt}"], f"%{p}_y"
    if fn == "tanh":
        return [f"%{p}_y = math.tanh {x} : {dt}"], f"%{p}_y"
    if fn == "gelu":  # x * (1 + erf(x / sqrt 2)) / 2, erf through libm
        return [f"%{p}_h = arith.constant 0.5 : {dt}",
                f"%{p}_r = arith.constant 0.70710678 : {dt}",
                f"%{p}_one = arith.constant 1.0 : {dt}",
                f"%{p}_s = arith.mulf {x}, %{p}_r : {dt}",
                f"%{p}_e = math.erf %{p}_s : {dt}",
                f"%{p}_a = arith.addf %{p}_e, %{p}_one : {dt}",
                f"%{p}_m = arith.mulf {x}, %{p}_a : {dt}",
                f"%{p}_y = arith.mulf %{p}_m, %{p}_h : {dt}"], f"%{p}_y"
    if fn == "gelu_tanh":  # x (1 + tanh(0.79788456 (x + 0.044715 x^3))) / 2, x^3 by fpowi
        return [f"%{p}_h = arith.constant 0.5 : {dt}",
                f"%{p}_k = arith.constant 0.044715 : {dt}",
                f"%{p}_r = arith.constant 0.79788456 : {dt}",
                f"%{p}_one = arith.constant 1.0 : {dt}",
                f"%{p}_three = arith.constant 3 : i32",
                f"%{p}_c = math.fpowi {x}, %{p}_three : {dt}, i32",
                f"%{p}_kc = arith.mulf %{p}_c, %{p}_k : {dt}",
                f"%{p}_s = arith.addf {x}, %{p}_kc : {dt}",
                f"%{p}_rs = arith.mulf %{p}_s, %{p}_r : {dt}",
                f"%{p}_t = math.tanh %{p}_rs : {dt}",
                f"%{p}_a = arith.addf %{p}_t, %{p}_one : {dt}",
                f"%{p}_m = arith.mulf {x}, %{p}_a : {dt}",
                f"%{p}_y = arith.mulf %{p}_m, %{p}_h : {dt}"], f"%{p}_y"
    if fn == "ipow2":  # x^2 by ipowi (wraps like x*x)
        return [f"%{p}_two = arith.constant 2 : {dt}",
                f"%{p}_y = math.ipowi {x}, %{p}_two : {dt}"], f"%{p}_y"
    if fn == "affine":
        return [f"%{p}_a = arith.constant {_const('two', dt)} : {dt}",
                f"%{p}_b = arith.constant {_const('half', dt)} : {dt}",
                f"%{p}_m = {_arith('mul', dt)} {x}, %{p}_a : {dt}",
                f"%{p}_y = {_arith('add', dt)} %{p}_m, %{p}_b : {dt}"], f"%{p}_y"
    if fn == "square":
        return [f"%{p}_y = {_arith('mul', dt)} {x}, {x} : {dt}"], f"%{p}_y"
    if fn == "neg":
        if _is_float(dt):
            return [f"%{p}_y = arith.negf {x} : {dt}"], f"%{p}_y"
        return [f"%{p}_z = arith.constant 0 : {dt}",
                f"%{p}_y = arith.subi %{p}_z, {x} : {dt}"], f"%{p}_y"
    if fn == "abs":
        return [f"%{p}_y = {'math.absf' if _is_float(dt) else 'math.absi'} {x} : {dt}"], f"%{p}_y"
    if fn == "rational":  # x / (1 + x*x): bounded, no division by 0
        return [f"%{p}_one = arith.constant 1.0 : {dt}",
                f"%{p}_s = arith.mulf {x}, {x} : {dt}",
                f"%{p}_d = arith.addf %{p}_one, %{p}_s : {dt}",
                f"%{p}_y = arith.divf {x}, %{p}_d : {dt}"], f"%{p}_y"
    raise ValueError(fn)


# No unbounded growth in floats (a square of a square of a matmul overflows).
FLOAT_UNARY = ("relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "affine", "neg", "abs",
               "rational")
INT_UNARY = ("relu", "affine", "square", "ipow2", "neg", "abs")


def _generic(p: str, maps: list[str], iterators: list[str], ins: list[str], in_tys,
             outs: list[str], out_tys, body: list[str], yields: list[str], dt: str) -> list[str]:
    args = [f"%{p}_i{k}: {t.dtype}" for k, t in enumerate(in_tys)] + \
           [f"%{p}_o{k}: {t.dtype}" for k, t in enumerate(out_tys)]
    its = ", ".join(f'"{i}"' for i in iterators)
    res = ", ".join(str(t) for t in out_tys)
    head = (f"linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{its}]}} "
            f"ins({', '.join(ins)} : {', '.join(str(t) for t in in_tys)}) "
            f"outs({', '.join(outs)} : {res}) {{")
    tys = ", ".join(t.dtype for t in out_tys)
    ret = res if len(out_tys) == 1 else f"({res})"
    return ([head, f"^bb0({', '.join(args)}):"] + ["  " + b for b in body]
            + [f"  linalg.yield {', '.join(yields)} : {tys}", f"}} -> {ret}"])


def _render(node: Node, ins: list[str], tys: list[TensorType], p: str,
            dt: str) -> tuple[list[str], list[str]]:
    """MLIR lines of a node (SSA names prefixed by ``p``) and its results' names."""
    k, a = node.kind, node.attrs
    out = node.results[0] if node.results else None
    lines: list[str] = []
    if k in ("matmul", "batch_matmul", "matvec"):
        if a.get("acc"):
            acc = ins[2]
        else:
            lines += _fill(p, "acc", out, "zero")
            acc = f"%{p}_acc"
        op = {"matmul": "linalg.matmul", "batch_matmul": "linalg.batch_matmul",
              "matvec": "linalg.matvec"}[k]
        maps = ""
        if a.get("transpose_b"):
            maps = (" indexing_maps = [" + ", ".join([_map(3, ["d0", "d2"]), _map(3, ["d1", "d2"]),
                                                      _map(3, ["d0", "d1"])]) + "]")
        lines.append(f"%{p} = {op}{maps} ins({ins[0]}, {ins[1]} : {tys[0]}, {tys[1]}) "
                     f"outs({acc} : {out}) -> {out}")
        return lines, [f"%{p}"]
    if k in ("conv1d", "depthwise1d"):
        lines += _fill(p, "acc", out, "zero")
        nwc = a["layout"] == "nwc"
        if k == "conv1d":
            op = "conv_1d_nwc_wcf" if nwc else "conv_1d_ncw_fcw"
        else:
            op = "depthwise_conv_1d_nwc_wc" if nwc else "depthwise_conv_1d_ncw_cw"
        (s,), (d,) = a["strides"], a["dilations"]
        lines.append(f"%{p} = linalg.{op} {{dilations = dense<{d}> : tensor<1xi64>, "
                     f"strides = dense<{s}> : tensor<1xi64>}} "
                     f"ins({ins[0]}, {ins[1]} : {tys[0]}, {tys[1]}) "
                     f"outs(%{p}_acc : {out}) -> {out}")
        return lines, [f"%{p}"]
    if k in ("conv", "depthwise", "pool"):
        init = "zero"
        if k == "pool" and a["reduce"] == "max":
            init = "lowest"
        if k == "pool" and a["reduce"] == "min":
            init = "highest"
        lines += _fill(p, "acc", out, init)
        if k == "conv":
            op = "conv_2d_nhwc_hwcf" if a["layout"] == "nhwc" else "conv_2d_nchw_fchw"
            operands, types = ins[:2], tys[:2]
        elif k == "depthwise":
            op = "depthwise_conv_2d_nhwc_hwc"
            operands, types = ins[:2], tys[:2]
        else:
            op = f"pooling_{a['layout']}_{a['reduce']}"
            win = TensorType(tuple(a["window"]), dt)
            lines.append(f"%{p}_win = tensor.empty() : {win}")
            operands, types = [ins[0], f"%{p}_win"], [tys[0], win]
        s, d = a["strides"], a["dilations"]
        lines.append(f"%{p} = linalg.{op} {{dilations = dense<[{d[0]}, {d[1]}]> : tensor<2xi64>, "
                     f"strides = dense<[{s[0]}, {s[1]}]> : tensor<2xi64>}} "
                     f"ins({', '.join(operands)} : {', '.join(map(str, types))}) "
                     f"outs(%{p}_acc : {out}) -> {out}")
        return lines, [f"%{p}"]
    if k == "binary":
        op = a["op"]
        if op not in BINARY_OPS:
            raise KeyError(op)
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p} = linalg.{op} ins({ins[0]}, {ins[1]} : {tys[0]}, {tys[1]}) "
                     f"outs(%{p}_e : {out}) -> {out}")
        return lines, [f"%{p}"]
    if k == "map":
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p} = linalg.map {{ {_arith(a['op'], dt)} }} ins({ins[0]}, {ins[1]} : "
                     f"{tys[0]}, {tys[1]}) outs(%{p}_e : {out})")
        return lines, [f"%{p}"]
    if k == "unary":
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        body, y = _unary_body(a["fn"], f"%{p}_i0", f"{p}b", dt)
        g = _generic(p, [_identity(out.rank)] * 2, ["parallel"] * out.rank,
                     ins[:1], tys[:1], [f"%{p}_e"], [out], body, [y], dt)
        lines += [f"%{p} = " + g[0]] + g[1:]
        return lines, [f"%{p}"]
    if k == "bias":
        r, dim = out.rank, a["dim"]
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        g = _generic(p, [_identity(r), _map(r, [f"d{dim}"]), _identity(r)], ["parallel"] * r,
                     ins[:2], tys[:2], [f"%{p}_e"], [out],
                     [f"%{p}_s = {_arith('add', dt)} %{p}_i0, %{p}_i1 : {dt}"], [f"%{p}_s"], dt)
        lines += [f"%{p} = " + g[0]] + g[1:]
        return lines, [f"%{p}"]
    if k == "two_results":
        r = out.rank
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p}_f = tensor.empty() : {out}")
        g = _generic(p, [_identity(r)] * 4, ["parallel"] * r, ins[:2], tys[:2],
                     [f"%{p}_e", f"%{p}_f"], [out, out],
                     [f"%{p}_s = {_arith('add', dt)} %{p}_i0, %{p}_i1 : {dt}",
                      f"%{p}_m = {_arith('mul', dt)} %{p}_i0, %{p}_i1 : {dt}"],
                     [f"%{p}_s", f"%{p}_m"], dt)
        lines += [f"%{p}:2 = " + g[0]] + g[1:]
        return lines, [f"%{p}#0", f"%{p}#1"]
    if k == "broadcast":
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p} = linalg.broadcast ins({ins[0]} : {tys[0]}) outs(%{p}_e : {out}) "
                     f"dimensions = [{a['dim']}]")
        return lines, [f"%{p}"]
    if k == "transpose":
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p} = linalg.transpose ins({ins[0]} : {tys[0]}) outs(%{p}_e : {out}) "
                     f"permutation = [{', '.join(map(str, a['perm']))}]")
        return lines, [f"%{p}"]
    if k == "copy":
        lines.append(f"%{p}_e = tensor.empty() : {out}")
        lines.append(f"%{p} = linalg.copy ins({ins[0]} : {tys[0]}) outs(%{p}_e : {out}) -> {out}")
        return lines, [f"%{p}"]
    if k == "reduce":
        red = a["reduce"]
        lines += _fill(p, "acc", out, "zero" if red == "add" else "lowest")
        lines += [f"%{p} = linalg.reduce ins({ins[0]} : {tys[0]}) outs(%{p}_acc : {out}) "
                  f"dimensions = [{', '.join(map(str, a['dims']))}]",
                  f"  (%{p}_x: {dt}, %{p}_y: {dt}) {{",
                  f"    %{p}_r = {_arith(red, dt)} %{p}_x, %{p}_y : {dt}",
                  f"    linalg.yield %{p}_r : {dt}",
                  "  }"]
        return lines, [f"%{p}"]
    if k == "reduce_generic":  # sum of squares over one dimension
        src = tys[0]
        r, dim = src.rank, a["dim"]
        lines += _fill(p, "acc", out, "zero")
        its = ["reduction" if i == dim else "parallel" for i in range(r)]
        g = _generic(p, [_identity(r), _map(r, [f"d{i}" for i in range(r) if i != dim])], its,
                     ins[:1], tys[:1], [f"%{p}_acc"], [out],
                     [f"%{p}_q = {_arith('mul', dt)} %{p}_i0, %{p}_i0 : {dt}",
                      f"%{p}_s = {_arith('add', dt)} %{p}_q, %{p}_o0 : {dt}"], [f"%{p}_s"], dt)
        lines += [f"%{p} = " + g[0]] + g[1:]
        return lines, [f"%{p}"]
    if k == "softmax":  # over the last dimension, six linalg ops
        src = tys[0]
        r = src.rank
        row = TensorType(src.shape[:-1], dt)
        keep = [f"d{i}" for i in range(r - 1)]
        red_its = ["parallel"] * (r - 1) + ["reduction"]
        lines += _fill(p, "mx", row, "lowest")
        g = _generic(p + "a", [_identity(r), _map(r, keep)], red_its, ins[:1], tys[:1],
                     [f"%{p}_mx"], [row], [f"%{p}a_m = arith.maximumf %{p}a_i0, %{p}a_o0 : {dt}"],
                     [f"%{p}a_m"], dt)
        lines += [f"%{p}_max = " + g[0]] + g[1:]
        lines.append(f"%{p}_e = tensor.empty() : {src}")
        g = _generic(p + "b", [_identity(r), _map(r, keep), _identity(r)], ["parallel"] * r,
                     [ins[0], f"%{p}_max"], [src, row], [f"%{p}_e"], [src],
                     [f"%{p}b_d = arith.subf %{p}b_i0, %{p}b_i1 : {dt}",
                      f"%{p}b_x = math.exp %{p}b_d : {dt}"], [f"%{p}b_x"], dt)
        lines += [f"%{p}_exp = " + g[0]] + g[1:]
        lines += _fill(p, "sm", row, "zero")
        g = _generic(p + "c", [_identity(r), _map(r, keep)], red_its, [f"%{p}_exp"], [src],
                     [f"%{p}_sm"], [row], [f"%{p}c_s = arith.addf %{p}c_i0, %{p}c_o0 : {dt}"],
                     [f"%{p}c_s"], dt)
        lines += [f"%{p}_sum = " + g[0]] + g[1:]
        lines.append(f"%{p}_f = tensor.empty() : {src}")
        g = _generic(p + "d", [_identity(r), _map(r, keep), _identity(r)], ["parallel"] * r,
                     [f"%{p}_exp", f"%{p}_sum"], [src, row], [f"%{p}_f"], [src],
                     [f"%{p}d_q = arith.divf %{p}d_i0, %{p}d_i1 : {dt}"], [f"%{p}d_q"], dt)
        lines += [f"%{p} = " + g[0]] + g[1:]
        return lines, [f"%{p}"]
    if k == "collapse":
        groups = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in a["groups"])
        lines.append(f"%{p} = tensor.collapse_shape {ins[0]} [{groups}] : {tys[0]} into {out}")
        return lines, [f"%{p}"]
    if k == "expand":
        groups = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in a["groups"])
        lines.append(f"%{p} = tensor.expand_shape {ins[0]} [{groups}] output_shape "
                     f"[{', '.join(map(str, out.shape))}] : {tys[0]} into {out}")
        return lines, [f"%{p}"]
    if k == "slice":
        offs = ", ".join(map(str, a["offsets"]))
        sizes = ", ".join(map(str, out.shape))
        ones = ", ".join("1" for _ in out.shape)
        lines.append(f"%{p} = tensor.extract_slice {ins[0]}[{offs}] [{sizes}] [{ones}] : "
                     f"{tys[0]} to {out}")
        return lines, [f"%{p}"]
    if k == "pad":
        idx = ", ".join(f"%{p}_x{i}: index" for i in range(out.rank))
        lines += [f"%{p}_c = arith.constant {_const('zero', dt)} : {dt}",
                  f"%{p} = tensor.pad {ins[0]} low[{', '.join(map(str, a['low']))}] "
                  f"high[{', '.join(map(str, a['high']))}] {{",
                  f"^bb0({idx}):",
                  f"  tensor.yield %{p}_c : {dt}",
                  f"}} : {tys[0]} to {out}"]
        return lines, [f"%{p}"]
    raise ValueError(f"unknown node kind {k}")


# -- Generation ----------------------------------------------------------------

@dataclass
class GenConfig:
    min_nodes: int = 1
    max_nodes: int = 6
    zero_size_probability: float = 0.04
    dtypes: tuple[str, ...] = DTYPES
    # program_for draws some f32 programs as bf16 ones (the fuzzer's runs;
    # off by default: a bf16 program's reference is not the IR as written,
    # see fuzz/worker.computed_in_f32)
    bf16: bool = False


class _Builder:
    def __init__(self, rng: random.Random, dtype: str, zero: bool):
        self.rng = rng
        self.dtype = dtype
        self.zero = zero
        # Half the programs have power-of-two sizes (as networks mostly do:
        # whole-extent tiles, single-iteration loops), half any size.
        self.pow2 = rng.random() < 0.5
        self.args: list[TensorType] = []
        self.nodes: list[Node] = []

    def dim(self, limit: int = 197) -> int:
        choices = [(s, w) for s, w in zip(SIZES, SIZE_WEIGHTS)
                   if s <= limit and (not self.pow2 or s & (s - 1) == 0)]
        sizes, weights = zip(*choices)
        return self.rng.choices(sizes, weights)[0]

    def shape(self, rank: int) -> tuple[int, ...]:
        # Now and then a matrix of many rows and a reduction to match (a
        # matmul on it has rows the front end splits).
        if rank == 2 and not self.pow2 and self.rng.random() < 0.3:
            return (self.rng.choice((67, 100, 197)), self.rng.choice((16, 24, 33, 48, 64)))
        # Now and then rows wider than one vector tile and not whole
        # registers (a 1-D convolution's 3199 samples): the front end
        # splits elementwise ops over them (mlir-rl-pad-to-tiles).
        if rank in (2, 3) and not self.pow2 and self.rng.random() < 0.06:
            wide = (self.rng.choice((1, 3, 7, 16)), self.rng.choice((515, 777, 1021)))
            return wide if rank == 2 else (1,) + wide
        for _ in range(50):
            s = tuple(self.dim() for _ in range(rank))
            if math.prod(s) <= MAX_ELEMENTS:
                return s
        return (1,) * rank

    def arg(self, t: TensorType) -> Ref:
        self.args.append(t)
        return ("arg", len(self.args) - 1)

    def type_of(self, ref: Ref) -> TensorType:
        return self.args[ref[1]] if ref[0] == "arg" else self.nodes[ref[1]].results[ref[2]]

    def values(self) -> list[Ref]:
        return [("arg", k) for k in range(len(self.args))] + \
               [("node", j, r) for j, n in enumerate(self.nodes) for r in range(len(n.results))]

    def same_type(self, t: TensorType, exclude: Ref) -> Optional[Ref]:
        pool = [v for v in self.values() if v != exclude and self.type_of(v) == t]
        return self.rng.choice(pool) if pool else None

    def operand(self, t: TensorType, x: Ref) -> Ref:
        """A second operand of type t: x itself (used twice), another value of
        that type, or a new argument."""
        roll = self.rng.random()
        if roll < 0.2 and self.type_of(x) == t:
            return x
        if roll < 0.55:
            other = self.same_type(t, x)
            if other is not None:
                return other
        return self.arg(t)

    def add(self, kind: str, inputs: list[Ref], attrs: dict, results: list[TensorType],
            linalg_ops: int) -> Ref:
        self.nodes.append(Node(kind, inputs, attrs, results, linalg_ops))
        return ("node", len(self.nodes) - 1, 0)


def _window(b: _Builder, size: int) -> Optional[tuple[int, int, int]]:
    """(kernel, stride, dilation) that fit an input extent, or None."""
    for _ in range(20):
        k = b.rng.choice((1, 1, 2, 3, 3, 5))
        s = b.rng.choice((1, 1, 2, 3))
        d = b.rng.choice((1, 1, 1, 2))
        if size >= d * (k - 1) + 1:
            return k, s, d
    return None


def _out(size: int, k: int, s: int, d: int) -> int:
    return (size - d * (k - 1) - 1) // s + 1


def _iterations(*dims) -> int:
    return math.prod(dims)


def _try_node(b: _Builder, x: Ref) -> Optional[Ref]:
    """One random node consuming x, or None if the chosen kind does not fit."""
    rng, dt = b.rng, b.dtype
    t = b.type_of(x)
    r = t.rank
    fl = _is_float(dt)
    kinds = ["unary", "binary", "copy", "map", "two_results", "bias"]
    if r == 1:
        kinds += ["broadcast", "expand", "matvec_vec"]
    if r == 2:
        kinds += ["matmul"] * 4 + ["matvec", "transpose", "reduce", "reduce_generic", "broadcast",
                                   "expand", "collapse", "slice", "pad"]
    if r == 3:
        kinds += ["batch_matmul"] * 3 + ["transpose", "reduce", "reduce_generic", "broadcast",
                                         "collapse", "expand", "slice"] + \
                 ["conv1d"] * 2 + ["depthwise1d"]
    if r == 4:
        kinds += ["conv"] * 4 + ["depthwise"] * 3 + ["pool"] * 3 + \
                 ["transpose", "reduce", "collapse", "pad", "slice"]
    if r >= 5:
        kinds += ["reduce", "collapse", "transpose"] * 2
    if fl and r >= 1:
        kinds += ["softmax"] * 2
    kind = rng.choice(kinds)
    new = TensorType

    if kind == "unary":
        fn = rng.choice(FLOAT_UNARY if fl else INT_UNARY)
        return b.add("unary", [x], {"fn": fn}, [t], 1)
    if kind in ("binary", "map"):
        y = b.operand(t, x)
        op = rng.choice(BINARY_OPS)
        return b.add(kind, [x, y], {"op": op}, [t], 1)
    if kind == "copy":
        return b.add("copy", [x], {}, [t], 1)
    if kind == "two_results":
        y = b.operand(t, x)
        return b.add("two_results", [x, y], {}, [t, t], 1)
    if kind == "bias":
        dim = rng.randrange(r)
        bt = new((t.shape[dim],), dt)
        bias = b.same_type(bt, x) if rng.random() < 0.3 else None
        return b.add("bias", [x, bias or b.arg(bt)], {"dim": dim}, [t], 1)
    if kind == "broadcast":
        if r >= 4:
            return None
        dim = rng.randrange(r + 1)
        size = b.dim(16)
        shape = t.shape[:dim] + (size,) + t.shape[dim:]
        if math.prod(shape) > MAX_ELEMENTS:
            return None
        return b.add("broadcast", [x], {"dim": dim}, [new(shape, dt)], 1)
    if kind == "transpose":
        perm = list(range(r))
        while perm == list(range(r)):
            rng.shuffle(perm)
        return b.add("transpose", [x], {"perm": perm},
                     [new(tuple(t.shape[i] for i in perm), dt)], 1)
    if kind in ("matmul", "matvec", "batch_matmul"):
        if kind == "batch_matmul":
            bt_, m, k = t.shape
            n = b.dim()
            if _iterations(bt_, m, n, k) > MAX_ITERATIONS or bt_ * m * n > MAX_ELEMENTS:
                return None
            rhs, res = new((bt_, k, n), dt), new((bt_, m, n), dt)
            attrs: dict = {}
        elif kind == "matmul":
            m, k = t.shape
            # Often columns that the front end splits (not a multiple of 32),
            # mostly where the rows are many too.
            big = rng.random() < (0.5 if m >= 64 else 0.1)
            n = rng.choice((67, 100, 197)) if big else b.dim()
            if _iterations(m, n, k) > MAX_ITERATIONS or m * n > MAX_ELEMENTS:
                return None
            tb = rng.random() < 0.25
            rhs, res = new((n, k) if tb else (k, n), dt), new((m, n), dt)
            attrs = {"transpose_b": tb}
        else:
            m, k = t.shape
            rhs, res = new((k,), dt), new((m,), dt)
            attrs = {}
        w = b.operand(rhs, x) if rng.random() < 0.5 else b.arg(rhs)
        inputs = [x, w]
        if rng.random() < 0.25:  # accumulate into an existing value (no fill)
            attrs["acc"] = True
            inputs.append(b.operand(res, x))
        return b.add(kind, inputs, attrs, [res], 1 if attrs.get("acc") else 2)
    if kind == "matvec_vec":  # x is the vector
        (k,) = t.shape
        m = b.dim()
        a = b.arg(new((m, k), dt))
        return b.add("matvec", [a, x], {}, [new((m,), dt)], 2)
    if kind in ("conv1d", "depthwise1d"):
        layout = rng.choice(("nwc", "ncw"))
        nwc = layout == "nwc"
        n, w, c = t.shape if nwc else (t.shape[0], t.shape[2], t.shape[1])
        win = _window(b, w)
        if win is None:
            return None
        k, s, d = win
        ow = _out(w, k, s, d)
        attrs = {"layout": layout, "strides": [s], "dilations": [d]}
        if kind == "conv1d":
            f = b.dim(32)
            if _iterations(n, ow, f, c, k) > MAX_ITERATIONS or n * ow * f > MAX_ELEMENTS:
                return None
            kt = new((k, c, f) if nwc else (f, c, k), dt)
            res = new((n, ow, f) if nwc else (n, f, ow), dt)
            return b.add("conv1d", [x, b.arg(kt)], attrs, [res], 2)
        if _iterations(n, ow, c, k) > MAX_ITERATIONS:
            return None
        kt = new((k, c) if nwc else (c, k), dt)
        res = new((n, ow, c) if nwc else (n, c, ow), dt)
        return b.add("depthwise1d", [x, b.arg(kt)], attrs, [res], 2)
    if kind in ("conv", "depthwise", "pool"):
        layout = "nhwc" if kind == "depthwise" else rng.choice(("nhwc", "nchw"))
        if layout == "nhwc":
            n, h, w, c = t.shape
        else:
            n, c, h, w = t.shape
        wh, ww = _window(b, h), _window(b, w)
        if wh is None or ww is None:
            return None
        (kh, sh, dh), (kw, sw, dw) = wh, ww
        oh, ow = _out(h, kh, sh, dh), _out(w, kw, sw, dw)
        attrs = {"layout": layout, "strides": [sh, sw], "dilations": [dh, dw]}
        if kind == "conv":
            f = b.dim(32)
            if _iterations(n, oh, ow, f, c, kh, kw) > MAX_ITERATIONS or n * oh * ow * f > MAX_ELEMENTS:
                return None
            kt = new((kh, kw, c, f) if layout == "nhwc" else (f, c, kh, kw), dt)
            res = new((n, oh, ow, f) if layout == "nhwc" else (n, f, oh, ow), dt)
            return b.add("conv", [x, b.arg(kt)], attrs, [res], 2)
        if kind == "depthwise":
            if _iterations(n, oh, ow, c, kh, kw) > MAX_ITERATIONS:
                return None
            return b.add("depthwise", [x, b.arg(new((kh, kw, c), dt))], attrs,
                         [new((n, oh, ow, c), dt)], 2)
        reduce = rng.choice(("max", "sum", "max", "min")) if fl else rng.choice(("max", "sum"))
        if layout == "nchw" and reduce == "min":
            reduce = "max"  # no pooling_nchw_min upstream
        attrs.update(reduce=reduce, window=[kh, kw])
        res = new((n, oh, ow, c) if layout == "nhwc" else (n, c, oh, ow), dt)
        return b.add("pool", [x], attrs, [res], 2)
    if kind == "reduce":
        if r < 2:
            return None
        count = 1 if r == 2 or rng.random() < 0.7 else 2
        dims = sorted(rng.sample(range(r), count))
        red = rng.choice(("add", "max"))
        shape = tuple(s for i, s in enumerate(t.shape) if i not in dims)
        return b.add("reduce", [x], {"dims": dims, "reduce": red}, [new(shape, dt)], 2)
    if kind == "reduce_generic":
        dim = rng.randrange(r)
        shape = tuple(s for i, s in enumerate(t.shape) if i != dim)
        return b.add("reduce_generic", [x], {"dim": dim}, [new(shape, dt)], 2)
    if kind == "softmax":
        if r < 2 and rng.random() < 0.5:
            return None
        if r == 1:
            return None  # rows of a vector: a 0-d max; kept to rank >= 2
        return b.add("softmax", [x], {}, [t], 6)
    if kind == "collapse":
        cut = rng.randrange(r - 1)
        groups = [[i] for i in range(cut)] + [[cut, cut + 1]] + [[i] for i in range(cut + 2, r)]
        shape = t.shape[:cut] + (t.shape[cut] * t.shape[cut + 1],) + t.shape[cut + 2:]
        return b.add("collapse", [x], {"groups": groups}, [new(shape, dt)], 0)
    if kind == "expand":
        if r >= 4:
            return None
        dim = rng.randrange(r)
        size = t.shape[dim]
        divisors = [d for d in range(2, size) if size % d == 0]
        if not divisors:
            return None
        d = rng.choice(divisors)
        groups = [[i] for i in range(dim)] + [[dim, dim + 1]] + [[i + 1] for i in range(dim + 1, r)]
        shape = t.shape[:dim] + (d, size // d) + t.shape[dim + 1:]
        return b.add("expand", [x], {"groups": groups}, [new(shape, dt)], 0)
    if kind == "slice":
        if 0 in t.shape:
            return None
        shape, offs = [], []
        for s in t.shape:
            size = rng.randint(1, s) if s > 0 else 0
            shape.append(size)
            offs.append(rng.randint(0, s - size) if s > 0 else 0)
        if tuple(shape) == t.shape:
            return None
        return b.add("slice", [x], {"offsets": offs}, [new(tuple(shape), dt)], 0)
    if kind == "pad":
        low = [rng.choice((0, 0, 1, 2)) for _ in range(r)]
        high = [rng.choice((0, 0, 1, 3)) for _ in range(r)]
        if r == 4:  # spatial padding only, as a convolution's
            spatial = (1, 2) if rng.random() < 0.5 else (2, 3)
            low = [v if i in spatial else 0 for i, v in enumerate(low)]
            high = [v if i in spatial else 0 for i, v in enumerate(high)]
        shape = tuple(s + lo + hi for s, lo, hi in zip(t.shape, low, high))
        if shape == t.shape or math.prod(shape) > MAX_ELEMENTS:
            return None
        return b.add("pad", [x], {"low": low, "high": high}, [new(shape, dt)], 0)
    return None


def random_program(rng: random.Random, cfg: Optional[GenConfig] = None,
                   origin: str = "") -> FuzzProgram:
    """A random valid program: a chain of nodes (sometimes restarting from a
    new argument), results used more than once, every value that no node
    consumes returned, plus a few intermediate results."""
    cfg = cfg or GenConfig()
    dtype = rng.choices(cfg.dtypes, [DTYPE_WEIGHTS[DTYPES.index(d)] for d in cfg.dtypes])[0]
    zero = rng.random() < cfg.zero_size_probability
    b = _Builder(rng, dtype, zero)
    first_rank = rng.choices((1, 2, 3, 4), (1, 5, 3, 4))[0]
    shape = list(b.shape(first_rank))
    if zero:
        shape[0] = 0
    x = b.arg(TensorType(tuple(shape), dtype))
    target = rng.randint(cfg.min_nodes, cfg.max_nodes)
    attempts = 0
    while len(b.nodes) < target and attempts < 60:
        attempts += 1
        if b.nodes and rng.random() < 0.12:  # a second chain, or a branch
            if rng.random() < 0.5:
                x = rng.choice(b.values())
            else:
                x = b.arg(TensorType(b.shape(rng.choice((2, 3, 4))), dtype))
        nxt = _try_node(b, x)
        if nxt is not None:
            x = nxt
            if b.nodes[-1].kind == "two_results" and rng.random() < 0.5:
                x = ("node", len(b.nodes) - 1, 1)
    if not b.nodes:
        b.add("copy", [x], {}, [b.type_of(x)], 1)
    # Every result no node reads is returned; some read ones too.
    used = {r for n in b.nodes for r in n.inputs}
    returns = [v for v in b.values() if v[0] == "node" and v not in used]
    for v in b.values():
        if v[0] == "node" and v in used and rng.random() < 0.3:
            returns.append(v)
    if rng.random() < 0.1:
        returns.append(returns[0])  # the same value returned twice
    rng.shuffle(returns)
    prog = FuzzProgram(dtype, b.args, b.nodes, returns, origin, zero)
    return prog._without_unused_args()


def with_dtype(program: FuzzProgram, dtype: str) -> FuzzProgram:
    """``program`` with its float tensors of another type (the same ops)."""
    d = program.to_json()
    swap = (lambda t: dtype if t == program.dtype else t)
    d["dtype"] = dtype
    d["args"] = [[shape, swap(t)] for shape, t in d["args"]]
    for n in d["nodes"]:
        n["results"] = [[shape, swap(t)] for shape, t in n["results"]]
    return FuzzProgram.from_json(d)


def program_for(seed: int, index: int, cfg: Optional[GenConfig] = None) -> FuzzProgram:
    """Program ``index`` of the stream seeded ``seed`` (reproducible alone);
    one f32 program in BF16_EVERY (by its origin) on bf16 data."""
    origin = f"{seed}/{index}"
    program = random_program(random.Random(f"mlir-rl-fuzz/{origin}"), cfg, origin=origin)
    cfg = cfg or GenConfig()
    if (program.dtype == "f32" and cfg.bf16
            and zlib.crc32(origin.encode()) % BF16_EVERY == 0):
        program = with_dtype(program, "bf16")
    return program
