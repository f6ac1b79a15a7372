"""mlir-rl-prepare, the front end for imported IR: what it does to the IR,
that it changes no output (on random programs too), and its entry points."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mlir_rl
from mlir_rl.fuzz.programs import program_for

TEST_DIR = Path(__file__).resolve().parents[1]

# A torch-mlir-style block: two convolutions share one fill; batch norm as
# one-op generics; relu; a broadcast bias add on a matmul accumulator.
BLOCK = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#v = affine_map<(d0) -> (d0)>
func.func @block(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %w2: tensor<8x4x3x3xf32>,
                 %mean: tensor<8xf32>, %var: tensor<8xf32>) -> tensor<1x8x7x7xf32> {
  %cst = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>)
         outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w2 : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>)
         outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
       ins(%var : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %m3 = tensor.expand_shape %mean [[0, 1, 2]] output_shape [8, 1, 1] : tensor<8xf32> into tensor<8x1x1xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [8, 1, 1] : tensor<8xf32> into tensor<8x1x1xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %m3 : tensor<1x8x7x7xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %a = arith.subf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<1x8x7x7xf32>
  %2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%1, %s3 : tensor<1x8x7x7xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %a = arith.mulf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<1x8x7x7xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%2 : tensor<1x8x7x7xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%in: f32, %o: f32):
    %p = arith.cmpf ugt, %in, %cst : f32
    %r = arith.select %p, %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<1x8x7x7xf32>
  %4 = linalg.add ins(%3, %c2 : tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>)
         outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  return %4 : tensor<1x8x7x7xf32>
}
"""

BIAS_MATMUL = """
func.func @linear(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %w2: tensor<32x24xf32>,
                  %b: tensor<24xf32>) -> (tensor<16x24xf32>, tensor<16x24xf32>) {
  %e = tensor.empty() : tensor<16x24xf32>
  %bb = linalg.broadcast ins(%b : tensor<24xf32>) outs(%e : tensor<16x24xf32>) dimensions = [0]
  %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x24xf32>)
         outs(%bb : tensor<16x24xf32>) -> tensor<16x24xf32>
  %m2 = linalg.matmul ins(%x, %w2 : tensor<16x32xf32>, tensor<32x24xf32>)
         outs(%bb : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %m, %m2 : tensor<16x24xf32>, tensor<16x24xf32>
}
"""


def _outputs(text: str, threads: int = 1):
    return mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=threads, seed=3).outputs


def _assert_same_outputs(text: str, after: str) -> None:
    """``after`` (``text`` rewritten) computes what ``text`` does, as it is
    and scheduled by the policy."""
    ref = _outputs(text)
    ok, err = mlir_rl.outputs_match(_outputs(after), ref)
    assert ok, err
    m = mlir_rl.Module.parse(after)
    m.schedule_with_policy()
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=1, seed=3).outputs, ref)
    assert ok, (m.schedule, err)


def _names(text: str) -> list[str]:
    return [o.name for o in mlir_rl.Module.parse(text).ops()]


def test_the_block_becomes_one_op_per_chain_with_its_own_fills():
    before, after = _names(BLOCK), _names(mlir_rl.prepare(BLOCK))
    assert before.count("linalg.generic") == 4 and "linalg.add" in before
    # sub, mul, relu and the add: one generic; the per-channel rsqrt apart;
    # the two convolutions' matmuls and the im2col copy of %x they share
    # (one copy per tap of the 3x3 filter).
    assert after.count("linalg.generic") == 4 + 9 and "linalg.add" not in after
    # One fill per convolution, and the zeros of the padded im2col tensor
    # (7x7 pixels are padded to 7x8, 4x3x3 taps to 4x3x4).
    assert after.count("linalg.fill") == 3 and before.count("linalg.fill") == 1
    # The convolutions became matmuls (im2col), each with its own fill.
    ops = mlir_rl.Module.parse(mlir_rl.prepare(BLOCK)).ops()
    convs = [o for o in ops if o.kind == "matmul"]
    assert len(convs) == 2 and len({o.producer for o in convs}) == 2
    assert all(ops[o.producer].name == "linalg.fill" for o in convs)


def test_preparing_changes_no_output():
    for text in (BLOCK, BIAS_MATMUL):
        ok, err = mlir_rl.outputs_match(_outputs(mlir_rl.prepare(text)), _outputs(text))
        assert ok, err


def test_a_broadcast_accumulator_is_given_to_each_matmul():
    after = mlir_rl.prepare(BIAS_MATMUL)
    ops = mlir_rl.Module.parse(after).ops()
    matmuls = [o for o in ops if o.name == "linalg.matmul"]
    producers = {o.producer for o in matmuls}
    assert len(producers) == 2 and None not in producers
    # Each matmul's schedule can then fuse its bias broadcast into its tiles.
    m = mlir_rl.Module.parse(after)
    for op in matmuls:
        m.apply_schedule(f"{op.id}: TF(8,8,0)")
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=1, seed=3).outputs,
                                    _outputs(BIAS_MATMUL))
    assert ok, err


@pytest.mark.slow
@pytest.mark.parametrize("seed", [31, 32])
def test_random_programs_prepared_and_scheduled_keep_their_outputs(seed):
    """The fuzzer's programs (every op kind, chains, results used twice,
    ints and floats) through prepare and the greedy policy: outputs equal to
    the programs as generated."""
    checked = 0
    for i in range(30):
        text = program_for(seed, i).text()
        try:
            ref = _outputs(text)
        except mlir_rl.ScheduleError:
            continue  # not lowerable as generated (the fuzzer skips these too)
        m = mlir_rl.Module.parse(mlir_rl.prepare(text))
        m.schedule_with_policy()
        ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=1, seed=3).outputs, ref)
        assert ok, (i, err, text)
        checked += 1
    assert checked >= 25


def test_bad_input_is_a_clean_error():
    with pytest.raises(mlir_rl.ScheduleError, match="cannot prepare"):
        mlir_rl.prepare("func.func @f( {", "bad.mlir")


def test_the_pipeline_is_registered_for_mlir_opt(mlir_opt, plugin):
    r = subprocess.run([mlir_opt, f"--load-pass-plugin={plugin}", "-p",
                        "builtin.module(mlir-rl-prepare,linalg-rl-schedule,mlir-rl-lower)", "-"],
                       input=BLOCK, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "llvm.func @block" in r.stdout
    assert mlir_rl.prepare_pipeline() == "builtin.module(mlir-rl-prepare)"


@pytest.mark.slow
def test_cli_prepare_and_bench_prepare(mlir_rl_cli, tmp_path):
    src = tmp_path / "block.mlir"
    src.write_text(BLOCK)
    r = subprocess.run([mlir_rl_cli, "prepare", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _names(r.stdout) == _names(mlir_rl.prepare(BLOCK))
    r = subprocess.run([mlir_rl_cli, "bench", str(src), "--prepare", "--runs", "1",
                        "--threads", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outputs:    equal" in r.stdout


def _linear(rows: int, weight: str = "dense") -> str:
    """nn.Linear as torch-mlir imports it: the [N, K] = [2, 3] weight (a
    dense constant, a dense_resource constant or an argument) transposed at
    run time, then a matmul with ``rows`` rows."""
    k, n = 3, 2
    wtype = f"tensor<{n}x{k}xf32>"
    args = f"%x: tensor<{rows}x{k}xf32>" + (f", %w: {wtype}" if weight == "argument" else "")
    value = {"dense": "dense<[[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]>",
             "resource": "dense_resource<blob>"}.get(weight)
    cst = f"  %w = arith.constant {value} : {wtype}\n" if value else ""
    out = f"tensor<{rows}x{n}xf32>"
    return f"""
func.func @linear({args}) -> {out} {{
{cst}  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{k}x{n}xf32>
  %wt = linalg.transpose ins(%w : {wtype}) outs(%e : tensor<{k}x{n}xf32>) permutation = [1, 0]
  %o = tensor.empty() : {out}
  %f = linalg.fill ins(%zero : f32) outs(%o : {out}) -> {out}
  %y = linalg.matmul ins(%x, %wt : tensor<{rows}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : {out}) -> {out}
  return %y : {out}
}}
""" + ("""{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
""" if weight == "resource" else "")


@pytest.mark.parametrize("rows", [2, 16, 17])
@pytest.mark.parametrize("weight", ["dense", "resource"])
def test_constant_weights_are_transposed_at_compile_time(weight, rows):
    """torch-mlir transposes every nn.Linear weight at run time; prepared,
    dense and dense_resource weights of a matmul with more than one row are
    transposed once, by the compiler, to [K, N] (which the rules pack into
    panels: a GRU cell's 16 rows ran 2.8x faster so than reading [N, K])."""
    text = _linear(rows, weight)
    after = mlir_rl.prepare(text)
    assert "linalg.transpose" not in after and "linalg.generic" not in after
    assert _names(after) == ["linalg.fill", "linalg.matmul"]
    constants = re.findall(r"arith.constant dense\S*.* : (tensor<\w+>)", after)
    assert constants == ["tensor<3x2xf32>"], after
    ok, err = mlir_rl.outputs_match(_outputs(after), _outputs(text))
    assert ok, err


@pytest.mark.parametrize("weight, rows", [("dense", 1), ("resource", 1), ("argument", 1),
                                          ("argument", 4), ("argument", 16)])
def test_a_thin_matmul_reads_its_transposed_weight_in_place(rows, weight):
    """A matrix-vector product over a constant weight, and a matmul with at
    most 16 rows over a weight transposed at run time, read the [N, K]
    weight as it is, one weight row per output column, instead of a [K, N]
    transpose (made at compile time for constants, at run time for
    arguments): no transpose is left, the matmul is a contraction generic
    over the untransposed weight, and the outputs are equal, unscheduled and
    scheduled by the policy."""
    text = _linear(rows, weight)
    after = mlir_rl.prepare(text)
    assert "linalg.transpose" not in after and "linalg.matmul" not in after
    assert _names(after) == ["linalg.fill", "linalg.generic"]
    assert "affine_map<(d0, d1, d2) -> (d1, d2)>" in after
    assert "tensor<3x2xf32>" not in after
    op = mlir_rl.Module.parse(after).ops()[-1]
    assert op.kind == "matmul" and list(op.iterators) == ["parallel", "parallel", "reduction"]
    _assert_same_outputs(text, after)


def test_a_thin_matmul_with_a_constant_k_by_n_weight_reads_it_by_row():
    """A [K, N] constant weight of a thin matmul is transposed at compile
    time to [N, K] and read with the map (m, n, k) -> (n, k); an argument
    weight [K, N] stays as it is (a run-time transpose would read it twice)."""
    const = """
func.func @mv(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, -4.0], [5.0, 6.5]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x3xf32>, tensor<3x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}
"""
    after = mlir_rl.prepare(const)
    assert _names(after) == ["linalg.fill", "linalg.generic"]
    assert "tensor<3x2xf32>" not in after and "linalg.transpose" not in after
    _assert_same_outputs(const, after)
    argument = const.replace("%x: tensor<1x3xf32>)", "%x: tensor<1x3xf32>, %w: tensor<3x2xf32>)").replace(
        "  %w = arith.constant dense<[[1.0, 2.0], [3.0, -4.0], [5.0, 6.5]]> : tensor<3x2xf32>\n", "")
    assert "arith.constant dense" not in argument
    assert _names(mlir_rl.prepare(argument)) == ["linalg.fill", "linalg.matmul"]


@pytest.mark.parametrize("option, rows, kn", [("thin-matmul-rows=0", 1, True),
                                              ("thin-constant-rows=4", 4, False),
                                              ("thin-constant-bytes=16", 1, False)])
def test_the_thin_matmul_bounds_are_pass_options(mlir_rl_opt, option, rows, kn):
    """thin-matmul-rows=0 keeps every transposed weight a [K, N] operand;
    thin-constant-rows raises the rows up to which a constant weight is
    read [N, K]; a constant weight larger than thin-constant-bytes (here 24
    bytes) is still read [N, K] where its 2 columns are no whole vector of
    16 (test/prepare-thin-matmul.mlir has one of 16 columns, read [K, N])."""
    pipe = f"builtin.module(func.func(mlir-rl-fuse-elementwise{{{option}}},canonicalize,cse))"
    after = subprocess.run([mlir_rl_opt, "-p", pipe], input=_linear(rows), capture_output=True,
                           text=True, check=True).stdout
    is_kn = _names(after) == ["linalg.fill", "linalg.matmul"] and "tensor<3x2xf32>" in after
    assert is_kn == kn, after


def _conv(layout: str, n: int, c: int, size: int, f: int, k: int, stride: int,
          dilation: int, elt: str = "f32") -> str:
    out = (size - dilation * (k - 1) - 1) // stride + 1
    shapes = {"nchw_fchw": ([n, c, size, size], [f, c, k, k], [n, f, out, out]),
              "nhwc_hwcf": ([n, size, size, c], [k, k, c, f], [n, out, out, f]),
              "nhwc_fhwc": ([n, size, size, c], [f, k, k, c], [n, out, out, f])}[layout]
    return _conv_text(f"conv_2d_{layout}", shapes, stride, dilation, elt, "tensor<2xi64>")


def _conv_text(op: str, shapes, stride: int, dilation: int, elt: str, attr_type: str) -> str:
    """A function computing the convolution ``op`` of its two arguments into
    a zero-filled output, ``shapes`` being those of the input, the filter
    and the output."""
    x, w, o = ("tensor<" + "x".join(map(str, s)) + f"x{elt}>" for s in shapes)
    zero = "0.0" if elt.startswith("f") else "0"
    return (f"func.func @main(%x: {x}, %w: {w}) -> {o} {{\n"
            f"  %z = arith.constant {zero} : {elt}\n  %e = tensor.empty() : {o}\n"
            f"  %f = linalg.fill ins(%z : {elt}) outs(%e : {o}) -> {o}\n"
            f"  %r = linalg.{op} {{dilations = dense<{dilation}> : {attr_type}, "
            f"strides = dense<{stride}> : {attr_type}}} ins(%x, %w : {x}, {w}) outs(%f : {o}) -> {o}\n"
            f"  return %r : {o}\n}}\n")


CONVS = [  # layout, n, c, size, f, kernel, stride, dilation, element type
    ("nchw_fchw", 1, 4, 9, 8, 3, 1, 1, "f32"), ("nchw_fchw", 2, 3, 11, 5, 3, 2, 1, "f32"),
    ("nchw_fchw", 1, 6, 8, 4, 1, 1, 1, "f32"), ("nchw_fchw", 1, 3, 13, 4, 3, 2, 2, "f32"),
    ("nchw_fchw", 2, 4, 7, 3, 1, 2, 1, "f64"), ("nhwc_hwcf", 1, 5, 10, 6, 3, 1, 1, "f32"),
    ("nchw_fchw", 1, 16, 4, 8, 1, 1, 1, "f32"), ("nchw_fchw", 1, 3, 19, 8, 7, 2, 1, "f32"),
    ("nhwc_hwcf", 2, 3, 9, 4, 2, 2, 1, "i32"), ("nhwc_hwcf", 1, 8, 6, 8, 1, 1, 1, "f32"),
    ("nhwc_fhwc", 1, 4, 12, 6, 5, 2, 1, "f32"), ("nhwc_fhwc", 2, 2, 9, 3, 3, 1, 3, "f32"),
]


def _check_im2col(conv, text: str, after: str, copies_per_conv) -> None:
    """``after`` (``text`` rewritten) has no convolution, the expected number
    of all-parallel copies, and equal outputs, unscheduled and scheduled by
    the policy."""
    assert "linalg.conv_2d" not in after
    ops = mlir_rl.Module.parse(after).ops()
    copies = [o for o in ops if o.kind == "generic" and "r" not in o.iterators]
    _, _, c, size, _, k, stride, dilation, _ = conv
    out = (size - dilation * (k - 1) - 1) // stride + 1
    # No copy for a 1x1 stride-1 convolution, unless its C*KH*KW or OH*OW
    # is padded to a multiple of 8.
    copy_free = k == 1 and stride == 1 and (c * k * k) % 8 == 0 and (out * out) % 8 == 0
    assert len(copies) == (0 if copy_free else copies_per_conv(k))
    _assert_same_outputs(text, after)


@pytest.mark.slow
@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "-".join(map(str, c)))
def test_convolutions_become_im2col_and_a_matmul_with_equal_outputs(conv):
    """The default: the im2col copy as one identity generic per filter tap."""
    text = _conv(*conv)
    _check_im2col(conv, text, mlir_rl.prepare(text), lambda k: k * k)


@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "-".join(map(str, c)))
def test_one_generic_im2col_copy_gives_equal_outputs(conv, mlir_rl_opt):
    """max-tap-copies=0: the im2col copy as one generic with window maps."""
    text = _conv(*conv)
    after = subprocess.run(
        [mlir_rl_opt, "-p", "builtin.module(mlir-rl-conv-to-matmul{max-tap-copies=0},"
         "canonicalize,cse)"], input=text, capture_output=True, text=True, check=True).stdout
    _check_im2col(conv, text, after, lambda k: 1)


SHIFTED_CONVS = [  # stride 1, one image, channels of whole vectors, an output at least
    # 4x as wide as the window's extra columns: shifted-window matmuls
    ("nhwc_hwcf", 1, 8, 10, 6, 3, 1, 1, "f32"), ("nhwc_fhwc", 1, 16, 11, 8, 3, 1, 1, "f32"),
    ("nhwc_hwcf", 1, 8, 20, 4, 3, 1, 2, "f32"), ("nhwc_hwcf", 1, 8, 11, 3, 2, 1, 1, "f64"),
    ("nhwc_fhwc", 1, 8, 21, 5, 5, 1, 1, "i32"), ("nchw_fchw", 1, 8, 10, 16, 3, 1, 1, "f32"),
]


@pytest.mark.parametrize("constant", [False, True], ids=["argument", "constant"])
@pytest.mark.parametrize("conv", SHIFTED_CONVS, ids=lambda c: "-".join(map(str, c)))
def test_convolutions_as_shifted_window_matmuls_keep_their_outputs(conv, constant, mlir_rl_opt):
    """shifted-min-bytes=0: a stride-1 convolution of one image (NHWC, or
    NCHW as NHWC pixel rows) becomes one matmul per filter tap over shifted
    rows of its input, no im2col copy; a constant filter becomes one [C, F]
    constant per tap. Outputs equal, unscheduled and scheduled by the
    policy; with the default threshold these small ones keep im2col."""
    text = _conv(*conv)
    _, n, c, size, f, k, stride, dilation, elt = conv
    if constant:
        wtype = re.search(r"%w: (tensor<[^>]+>)", text).group(1)
        dims = [int(d) for d in wtype[7:-1].split("x")[:-1]]
        values = np.arange(np.prod(dims)) * 7919 % 101 - 50  # no two taps alike
        lit = ", ".join(f"{v}.0" if elt.startswith("f") else str(v) for v in values)
        text = text.replace(f", %w: {wtype})", ")").replace(
            "  %z = ", f"  %w = arith.constant dense<[{lit}]> : tensor<{np.prod(dims)}x{elt}>\n  %z = ")
        flat_w = f"tensor<{np.prod(dims)}x{elt}>"
        text = text.replace("  %z = ", f"  %w4 = tensor.expand_shape %w [[0, 1, 2, 3]] output_shape "
                            f"[{', '.join(map(str, dims))}] : {flat_w} into {wtype}\n  %z = ", 1)
        text = text.replace("ins(%x, %w :", "ins(%x, %w4 :")
    def prepared(option):
        return subprocess.run(
            [mlir_rl_opt, "-p", f"builtin.module(mlir-rl-fuse-elementwise,canonicalize,cse,"
             f"mlir-rl-conv-to-matmul{{{option}}},canonicalize,cse)"],
            input=text, capture_output=True, text=True, check=True).stdout
    after = prepared("shifted-min-bytes=0")
    assert "linalg.conv_2d" not in after
    names = _names(after)
    assert names.count("linalg.matmul") == k * k, after
    # No im2col: only the layout's transposes are copies (NCHW: input,
    # result; and the filter when it is not a constant).
    copies = [o for o in mlir_rl.Module.parse(after).ops()
              if o.kind == "generic" and "r" not in o.iterators]
    layout_copies = (2 if conv[0] == "nchw_fchw" else 0) + (
        0 if constant or conv[0] == "nhwc_hwcf" else 1)
    assert len(copies) == layout_copies, after
    if constant:
        assert len(re.findall(rf"arith.constant dense<.*> : tensor<{c}x{f}x{elt}>", after)) == k * k
    _assert_same_outputs(text, after)
    assert "linalg.matmul" not in prepared("")


@pytest.mark.slow
def test_random_shifted_window_convolutions_keep_their_outputs_under_random_schedules():
    """Seeded random convolutions that take shifted-window matmuls (layouts,
    windows of 2 to 5 taps a side, dilations, 8 to 24 channels, 1 to 64
    filters, a bias init), prepared with the fuzzer's any-size steps,
    scheduled by mask-legal random decisions and by the policy: every
    output equal to the unscheduled program's (the fuzzer's programs rarely
    qualify: stride 1, one image, channels of whole vectors, a wide
    output)."""
    import random
    from mlir_rl.fuzz.worker import Spec, prepare_steps
    steps = prepare_steps(Spec("prepared", 1))
    rng = random.Random(11)
    for trial in range(6):
        layout = rng.choice(["nhwc_hwcf", "nhwc_fhwc", "nchw_fchw"])
        k, d = rng.randint(2, 5), rng.choice([1, 1, 2])
        c, f = rng.choice([8, 16, 24]), rng.randint(1, 64)
        size = (k - 1) * d * 5 + rng.randint(0, 6)
        text = _conv(layout, 1, c, size, f, k, 1, d)
        if trial % 2:  # a bias broadcast as the init, not a fill
            o = re.search(r"-> (tensor<[^>]+>) \{", text).group(1)
            text = text.replace("  %f = linalg.fill ins(%z : f32) outs(%e : " + o + ") -> " + o,
                                "  %f = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> "
                                "(a, b, c, d)>], iterator_types = [\"parallel\", \"parallel\", "
                                "\"parallel\", \"parallel\"]} outs(%e : " + o + ") {\n"
                                "  ^bb0(%out: f32):\n    %i = linalg.index 1 : index\n"
                                "    %ii = arith.index_cast %i : index to i32\n"
                                "    %v = arith.sitofp %ii : i32 to f32\n    linalg.yield %v : f32\n"
                                "  } -> " + o)
        after = mlir_rl.prepare(text, steps=steps)
        # One matmul per tap (pad-to-tiles may split each in two where F is odd).
        matmuls = _names(after).count("linalg.matmul")
        assert matmuls in (k * k, 2 * k * k), (layout, k, d, c, f, size, matmuls)
        ref = _outputs(text)
        for seed in (1, 2):
            m = mlir_rl.Module.parse(after)
            m.schedule_with_policy(decisions="random", seed=seed)
            ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2, seed=3).outputs, ref)
            assert ok, (layout, k, d, c, f, size, m.schedule, err)
        m = mlir_rl.Module.parse(after)
        m.schedule_with_policy()
        ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2, seed=3).outputs, ref)
        assert ok, (layout, k, d, c, f, size, m.schedule, err)


@pytest.mark.parametrize("conv", [("nhwc_hwcf", 1, 8, 9, 6, 3, 1, 1, "f32"),
                                  ("nhwc_hwcf", 1, 8, 20, 6, 3, 2, 1, "f32"),
                                  ("nhwc_hwcf", 2, 8, 20, 6, 3, 1, 1, "f32"),
                                  ("nhwc_hwcf", 1, 4, 20, 6, 3, 1, 1, "f32"),
                                  ("nhwc_hwcf", 1, 8, 20, 80, 3, 1, 1, "f32")],
                         ids=["narrow", "stride-2", "batch-2", "4-channels", "80-filters"])
def test_convolutions_that_shifted_windows_do_not_serve_keep_im2col(conv, mlir_rl_opt):
    """Whatever the threshold: a 7-wide output of a 3x3 window (2 extra
    columns of 9 computed), a stride of 2, a batch of 2, channels that are
    no whole vector, and more than shifted-max-filters (64) filters keep
    the im2col copy and one matmul."""
    after = subprocess.run(
        [mlir_rl_opt, "-p", "builtin.module(mlir-rl-conv-to-matmul{shifted-min-bytes=0},"
         "canonicalize,cse)"], input=_conv(*conv), capture_output=True, text=True,
        check=True).stdout
    assert "linalg.matmul" not in after and "linalg.conv_2d" not in after, after


PIXEL_ROW_CONVS = [  # NCHW with channels in whole vectors (8; a 1x1 stride-1 one and one
    # with 3 channels are left NCHW)
    ("nchw_fchw", 1, 8, 10, 16, 3, 1, 1, "f32"), ("nchw_fchw", 2, 16, 9, 8, 3, 2, 1, "f32"),
    ("nchw_fchw", 1, 8, 8, 24, 1, 1, 1, "f32"), ("nchw_fchw", 1, 16, 13, 4, 3, 2, 2, "f32"),
    ("nchw_fchw", 1, 8, 9, 8, 3, 1, 1, "f64"), ("nchw_fchw", 1, 3, 11, 8, 3, 1, 1, "f32"),
]


def _pixel_rows(text: str, mlir_rl_opt: str) -> str:
    return subprocess.run(
        [mlir_rl_opt, "-p", "builtin.module(mlir-rl-conv-to-matmul{nchw-pixel-rows=true},"
         "canonicalize,cse)"], input=text, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize("conv", PIXEL_ROW_CONVS, ids=lambda c: "-".join(map(str, c)))
def test_nchw_convolutions_as_pixel_rows_keep_their_outputs(conv, mlir_rl_opt):
    """nchw-pixel-rows (the default): the matmul has a row per output pixel
    ([OH*OW, K] x [K, F], the filter as its right-hand side) between
    transposes, unless the channels are not a multiple of 8 or the
    convolution is 1x1 with stride 1 (no im2col copy in NCHW)."""
    text = _conv(*conv)
    after = _pixel_rows(text, mlir_rl_opt)
    _, n, c, size, f, k, stride, dilation, elt = conv
    if c % 8 != 0 or (k == 1 and stride == 1):
        assert after == subprocess.run(
            [mlir_rl_opt, "-p", "builtin.module(mlir-rl-conv-to-matmul{nchw-pixel-rows=false},"
             "canonicalize,cse)"], input=text, capture_output=True, text=True, check=True).stdout
        return
    assert "linalg.conv_2d" not in after
    # The filter [K, F] as the matmul's right-hand side.
    assert f"<{c * k * k}x{f}x{elt}>" in after, after
    copies = [o for o in mlir_rl.Module.parse(after).ops()
              if o.kind == "generic" and "r" not in o.iterators]
    # Transposes of the input, the filter and the result; a copy per tap.
    assert len(copies) == 3 + k * k
    _assert_same_outputs(text, after)


def test_pixel_rows_transpose_a_constant_filter_at_compile_time_and_fuse_the_epilogue(mlir_rl_opt):
    """A constant filter becomes a constant in HWCF order (no transpose at
    run time; canonicalization collapses it to [K, F]); the transpose back to NCHW goes into the relu after the
    convolution; outputs equal."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    dense = "[" + ", ".join("%.6e" % v for v in w.ravel()) + "]"
    w_t, o_t = "tensor<16x8x3x3xf32>", "tensor<1x16x8x8xf32>"
    text = (f"func.func @main(%x: tensor<1x8x10x10xf32>) -> {o_t} {{\n"
            f"  %w = arith.constant dense<{dense}> : tensor<1152xf32>\n"
            f"  %w4 = tensor.expand_shape %w [[0, 1, 2, 3]] output_shape [16, 8, 3, 3] "
            f": tensor<1152xf32> into {w_t}\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : {o_t}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {o_t}) -> {o_t}\n"
            f"  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, "
            f"strides = dense<1> : tensor<2xi64>}} ins(%x, %w4 : tensor<1x8x10x10xf32>, {w_t}) "
            f"outs(%f : {o_t}) -> {o_t}\n"
            f"  %e2 = tensor.empty() : {o_t}\n"
            f"  %y = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, "
            f"affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = [\"parallel\", "
            f"\"parallel\", \"parallel\", \"parallel\"]}} ins(%r : {o_t}) outs(%e2 : {o_t}) {{\n"
            f"  ^bb0(%i: f32, %o: f32):\n    %m = arith.maximumf %i, %z : f32\n"
            f"    linalg.yield %m : f32\n  }} -> {o_t}\n  return %y : {o_t}\n}}\n")
    text = subprocess.run([mlir_rl_opt, "-p", "builtin.module(canonicalize)"], input=text,
                          capture_output=True, text=True, check=True).stdout
    assert "dense<" in text and "tensor<16x8x3x3xf32>" in text
    after = _pixel_rows(text, mlir_rl_opt)
    assert "linalg.conv_2d" not in after
    # The filter as [KH*KW*C, F] (transposed to HWCF, then collapsed).
    assert re.search(r"arith.constant dense<.*> : tensor<72x16xf32>", after), after
    # Generics: the input's transpose, nine tap copies, the matmul, the relu
    # (which took the transpose back to NCHW).
    assert _names(after).count("linalg.generic") == 12, _names(after)
    _assert_same_outputs(text, after)


def _two_convs(pad: str, also_return: bool = False) -> str:
    """conv -> per-channel scale -> relu -> padding (``pad``: "pad" for a
    tensor.pad, "insert" for an insert_slice into a filled tensor, the form
    imported models reach the pass in) -> conv, all NCHW with 8 channels;
    ``also_return``: the relu's result is returned too."""
    a, p, w = "tensor<1x8x10x10xf32>", "tensor<1x8x12x12xf32>", "tensor<8x8x3x3xf32>"
    par4 = '"parallel", "parallel", "parallel", "parallel"'
    ident = "affine_map<(a, b, c, d) -> (a, b, c, d)>"
    if pad == "pad":
        padded = (f"  %p = tensor.pad %y low[0, 0, 1, 1] high[0, 0, 1, 1] {{\n"
                  f"  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
                  f"    tensor.yield %z : f32\n  }} : {a} to {p}\n")
    else:
        padded = (f"  %pe = tensor.empty() : {p}\n"
                  f"  %pf = linalg.fill ins(%z : f32) outs(%pe : {p}) -> {p}\n"
                  f"  %p = tensor.insert_slice %y into %pf[0, 0, 1, 1] [1, 8, 10, 10] "
                  f"[1, 1, 1, 1] : {a} into {p}\n")
    conv = ("linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, "
            "strides = dense<1> : tensor<2xi64>}")
    results = f"%r2, %y : {a}, {a}" if also_return else f"%r2 : {a}"
    types = f"{a}, {a}" if also_return else a
    return (f"func.func @main(%x: {p}, %w1: {w}, %s: tensor<8xf32>, %w2: {w}) -> ({types}) {{\n"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {a}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {a}) -> {a}\n"
            f"  %r = {conv} ins(%x, %w1 : {p}, {w}) outs(%f : {a}) -> {a}\n"
            f"  %e2 = tensor.empty() : {a}\n"
            f"  %y = linalg.generic {{indexing_maps = [{ident}, "
            f"affine_map<(a, b, c, d) -> (b)>, {ident}], iterator_types = [{par4}]}} "
            f"ins(%r, %s : {a}, tensor<8xf32>) outs(%e2 : {a}) {{\n"
            f"  ^bb0(%i: f32, %c: f32, %o: f32):\n    %m = arith.mulf %i, %c : f32\n"
            f"    %q = arith.maximumf %m, %z : f32\n    linalg.yield %q : f32\n  }} -> {a}\n"
            + padded +
            f"  %e3 = tensor.empty() : {a}\n"
            f"  %f3 = linalg.fill ins(%z : f32) outs(%e3 : {a}) -> {a}\n"
            f"  %r2 = {conv} ins(%p, %w2 : {p}, {w}) outs(%f3 : {a}) -> {a}\n"
            f"  return {results}\n}}\n")


def _transposes_to_nhwc(text: str) -> int:
    """Generics that copy an NCHW tensor into NHWC order."""
    return len(re.findall(r"indexing_maps = \[affine_map<\(d0, d1, d2, d3\) -> "
                          r"\(d0, d3, d1, d2\)>, affine_map<\(d0, d1, d2, d3\) -> "
                          r"\(d0, d1, d2, d3\)>\]", text))


@pytest.mark.slow
@pytest.mark.parametrize("pad", ["pad", "insert"])
def test_an_epilogue_between_pixel_row_convolutions_writes_nhwc(pad, mlir_rl_opt):
    """nhwc-between-convs (the default): the second convolution's input
    transpose takes in the epilogue of the first (which took the first's
    transpose back in) through the padding: the epilogue writes NHWC, and
    only the program's input is transposed at run time. Where the
    epilogue's result is also returned, it stays NCHW. Outputs equal."""
    def prepared(text: str, option: str) -> str:
        return subprocess.run(
            [mlir_rl_opt, "--mlir-print-local-scope", "-p",
             "builtin.module(mlir-rl-conv-to-matmul{" + option + "},canonicalize,cse)"],
            input=text, capture_output=True, text=True, check=True).stdout
    text = _two_convs(pad)
    off = prepared(text, "nhwc-between-convs=false")
    on = prepared(text, "nhwc-between-convs=true")
    assert _transposes_to_nhwc(off) == 2, off
    assert _transposes_to_nhwc(on) == 1, on
    # The epilogue reads the first matmul's [pixels, filters] result in its
    # own order, and the padding is in NHWC.
    assert "tensor<1x12x12x8xf32>" in on
    assert _names(on).count("linalg.generic") == _names(off).count("linalg.generic") - 1
    _assert_same_outputs(text, on)
    # The relu's result returned too: the transpose stays.
    both = _two_convs(pad, also_return=True)
    assert _transposes_to_nhwc(prepared(both, "nhwc-between-convs=true")) == 2
    _assert_same_outputs(both, prepared(both, "nhwc-between-convs=true"))


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["max", "sum"])
def test_a_pooling_between_pixel_row_convolutions_becomes_nhwc(pool, mlir_rl_opt):
    """conv -> relu -> NCHW pooling -> pad -> conv (VGG's form): the pooling
    becomes an NHWC one and the relu writes NHWC into it; only the
    program's input is transposed at run time. Outputs equal."""
    a, q = "tensor<1x8x10x10xf32>", "tensor<1x8x5x5xf32>"
    w = "tensor<8x8x3x3xf32>"
    conv = ("linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, "
            "strides = dense<1> : tensor<2xi64>}")
    init = "-3.0e38" if pool == "max" else "0.0"
    text = (f"func.func @main(%x: tensor<1x8x12x12xf32>, %w1: {w}, %w2: {w}) -> {q} {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %i = arith.constant {init} : f32\n"
            f"  %e = tensor.empty() : {a}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {a}) -> {a}\n"
            f"  %r = {conv} ins(%x, %w1 : tensor<1x8x12x12xf32>, {w}) outs(%f : {a}) -> {a}\n"
            f"  %e2 = tensor.empty() : {a}\n"
            f"  %y = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, "
            f"affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = [\"parallel\", "
            f"\"parallel\", \"parallel\", \"parallel\"]}} ins(%r : {a}) outs(%e2 : {a}) {{\n"
            f"  ^bb0(%v: f32, %o: f32):\n    %m = arith.maximumf %v, %z : f32\n"
            f"    linalg.yield %m : f32\n  }} -> {a}\n"
            f"  %pe = tensor.empty() : {q}\n"
            f"  %pf = linalg.fill ins(%i : f32) outs(%pe : {q}) -> {q}\n"
            f"  %win = tensor.empty() : tensor<2x2xf32>\n"
            f"  %p = linalg.pooling_nchw_{pool} {{dilations = dense<1> : vector<2xi64>, "
            f"strides = dense<2> : vector<2xi64>}} ins(%y, %win : {a}, tensor<2x2xf32>) "
            f"outs(%pf : {q}) -> {q}\n"
            f"  %padded = tensor.pad %p low[0, 0, 1, 1] high[0, 0, 1, 1] {{\n"
            f"  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
            f"    tensor.yield %z : f32\n  }} : {q} to tensor<1x8x7x7xf32>\n"
            f"  %e3 = tensor.empty() : {q}\n"
            f"  %f3 = linalg.fill ins(%z : f32) outs(%e3 : {q}) -> {q}\n"
            f"  %r2 = {conv} ins(%padded, %w2 : tensor<1x8x7x7xf32>, {w}) outs(%f3 : {q}) -> {q}\n"
            f"  return %r2 : {q}\n}}\n")
    after = subprocess.run(
        [mlir_rl_opt, "--mlir-print-local-scope", "-p",
         "builtin.module(mlir-rl-conv-to-matmul,canonicalize,cse)"],
        input=text, capture_output=True, text=True, check=True).stdout
    assert f"linalg.pooling_nhwc_{pool}" in after and "pooling_nchw" not in after, after
    assert _transposes_to_nhwc(after) == 1, after
    _assert_same_outputs(text, after)


@pytest.mark.slow
def test_a_bias_accumulator_of_a_pixel_row_convolution_is_broadcast_into_nhwc(mlir_rl_opt):
    """An NCHW convolution whose accumulator is a bias broadcast (VGG's
    form): the broadcast writes NHWC directly, not NCHW and then a
    transpose. Outputs equal."""
    o = "tensor<1x16x8x8xf32>"
    text = (f"func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, "
            f"%b: tensor<16xf32>) -> {o} {{\n"
            f"  %e = tensor.empty() : {o}\n"
            f"  %i = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (b)>, "
            f"affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = [\"parallel\", "
            f"\"parallel\", \"parallel\", \"parallel\"]}} ins(%b : tensor<16xf32>) outs(%e : {o}) {{\n"
            f"  ^bb0(%v: f32, %u: f32):\n    linalg.yield %v : f32\n  }} -> {o}\n"
            f"  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, "
            f"strides = dense<1> : tensor<2xi64>}} ins(%x, %w : tensor<1x8x10x10xf32>, "
            f"tensor<16x8x3x3xf32>) outs(%i : {o}) -> {o}\n"
            f"  return %r : {o}\n}}\n")
    after = _pixel_rows(text, mlir_rl_opt)
    assert re.search(r"ins\(%\w+ : tensor<16xf32>\) outs\(%\w+ : tensor<1x8x8x16xf32>\)",
                     after), after
    assert not re.search(r"ins\(%\w+ : tensor<16xf32>\) outs\(%\w+ : tensor<1x16x8x8xf32>\)",
                         after), after
    _assert_same_outputs(text, after)


def _window(op: str, n: int, c: int, size: int, k: int, stride: int, dilation: int,
            elt: str = "f32") -> str:
    """A depthwise convolution or pooling (``op`` names the linalg op)."""
    out = (size - dilation * (k - 1) - 1) // stride + 1
    nchw = "nchw" in op
    x = [n, c, size, size] if nchw else [n, size, size, c]
    o = [n, c, out, out] if nchw else [n, out, out, c]
    w = ([c, k, k] if nchw else [k, k, c]) if "depthwise" in op else [k, k]
    x, w, o = ("tensor<" + "x".join(map(str, s)) + f"x{elt}>" for s in (x, w, o))
    init = "-3.0e38" if "max" in op and elt.startswith("f") else ("0.0" if elt.startswith("f") else "0")
    args = f"%x: {x}, %w: {w}" if "depthwise" in op else f"%x: {x}"
    window = "" if "depthwise" in op else f"  %w = tensor.empty() : {w}\n"
    return (f"func.func @main({args}) -> {o} {{\n"
            f"  %z = arith.constant {init} : {elt}\n  %e = tensor.empty() : {o}\n{window}"
            f"  %f = linalg.fill ins(%z : {elt}) outs(%e : {o}) -> {o}\n"
            f"  %r = linalg.{op} {{dilations = dense<{dilation}> : tensor<2xi64>, "
            f"strides = dense<{stride}> : tensor<2xi64>}} ins(%x, %w : {x}, {w}) outs(%f : {o}) -> {o}\n"
            f"  return %r : {o}\n}}\n")


WINDOWS = [  # op, n, c, size, kernel, stride, dilation, element type
    ("depthwise_conv_2d_nchw_chw", 1, 8, 10, 3, 1, 1, "f32"),
    ("depthwise_conv_2d_nchw_chw", 2, 5, 11, 3, 2, 1, "f32"),
    ("depthwise_conv_2d_nchw_chw", 1, 4, 13, 5, 2, 2, "f64"),
    ("depthwise_conv_2d_nhwc_hwc", 1, 16, 9, 3, 1, 1, "f32"),
    ("depthwise_conv_2d_nhwc_hwc", 2, 8, 10, 2, 2, 1, "i32"),
    ("pooling_nchw_max", 1, 6, 12, 3, 2, 1, "f32"),
    ("pooling_nchw_max", 2, 4, 8, 2, 2, 1, "f32"),
    ("pooling_nchw_sum", 1, 3, 9, 3, 3, 1, "f32"),
    ("pooling_nhwc_max", 1, 10, 9, 3, 1, 2, "f32"),
    ("pooling_nhwc_sum", 2, 4, 7, 2, 1, 1, "i32"),
]


@pytest.mark.parametrize("window", WINDOWS, ids=lambda c: "-".join(map(str, c)))
def test_depthwise_and_pooling_become_elementwise_with_equal_outputs(window):
    text = _window(*window)
    after = mlir_rl.prepare(text)
    if window[0] == "depthwise_conv_2d_nhwc_hwc":
        # Kept by default (upstream vectorizes it along the channels).
        assert "linalg.depthwise_conv_2d_nhwc_hwc" in after
        return
    assert "linalg.depthwise" not in after and "linalg.pooling" not in after
    ops = mlir_rl.Module.parse(after).ops()
    assert all("r" not in o.iterators for o in ops), [o.iterators for o in ops]
    _assert_same_outputs(text, after)


@pytest.mark.parametrize("text", [
    _window("depthwise_conv_2d_nhwc_hwc", 0, 1, 7, 3, 2, 1, "f64"),
    _window("pooling_nchw_max", 0, 4, 8, 2, 2, 1, "f32"),
    _conv("nchw_fchw", 0, 4, 9, 8, 3, 1, 1, "f32"),
    _conv("nchw_fchw", 1, 0, 9, 8, 3, 1, 1, "f32"),
], ids=["depthwise-n0", "pool-n0", "conv-n0", "conv-c0"])
def test_empty_tensors_are_left_alone(text):
    """Found by the fuzzer (seed 7): a depthwise convolution with a batch of
    0 became extract_slices at offset 0 of an empty dimension, which do not
    verify. Ops on empty tensors have nothing to compute: left as they are."""
    after = mlir_rl.prepare(text)
    m = mlir_rl.Module.parse(after)
    ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=1, seed=3).outputs,
                                    _outputs(text))
    assert ok, err


@pytest.mark.parametrize("window", [w for w in WINDOWS if w[0] == "depthwise_conv_2d_nhwc_hwc"],
                         ids=lambda c: "-".join(map(str, c)))
def test_unrolled_nhwc_depthwise_keeps_its_outputs(window, mlir_rl_opt):
    """nhwc-depthwise=true (not the default): the unrolled form computes the
    same as the direct op, alone and scheduled by the policy."""
    text = _window(*window)
    after = subprocess.run(
        [mlir_rl_opt, "-p", "builtin.module(mlir-rl-unroll-windows{nhwc-depthwise=true},"
         "canonicalize,cse)"], input=text, capture_output=True, text=True, check=True).stdout
    assert "linalg.depthwise" not in after
    _assert_same_outputs(text, after)


def _conv_1d(op: str, n: int, c: int, size: int, f: int, k: int, stride: int,
             dilation: int, elt: str = "f32") -> str:
    out = (size - dilation * (k - 1) - 1) // stride + 1
    shapes = {"conv_1d_ncw_fcw": ([n, c, size], [f, c, k], [n, f, out]),
              "conv_1d_nwc_wcf": ([n, size, c], [k, c, f], [n, out, f]),
              "depthwise_conv_1d_ncw_cw": ([n, c, size], [c, k], [n, c, out]),
              "depthwise_conv_1d_nwc_wc": ([n, size, c], [k, c], [n, out, c])}[op]
    return _conv_text(op, shapes, stride, dilation, elt, "vector<1xi64>")


CONVS_1D = [  # op, n, c, width, f, kernel, stride, dilation, element type
    ("conv_1d_ncw_fcw", 1, 16, 67, 24, 3, 2, 1, "f32"), ("conv_1d_ncw_fcw", 1, 1, 130, 32, 10, 5, 1, "f32"),
    ("conv_1d_ncw_fcw", 2, 8, 40, 8, 3, 1, 2, "f64"), ("conv_1d_nwc_wcf", 1, 12, 50, 16, 5, 1, 1, "f32"),
    ("conv_1d_nwc_wcf", 2, 3, 33, 4, 2, 2, 1, "i32"), ("depthwise_conv_1d_ncw_cw", 1, 16, 64, 16, 7, 1, 1, "f32"),
    ("depthwise_conv_1d_nwc_wc", 2, 24, 31, 24, 3, 2, 2, "f32"),
]


@pytest.mark.parametrize("conv", CONVS_1D, ids=lambda c: "-".join(map(str, c)))
def test_1d_convolutions_are_rewritten_as_2d_ones_with_equal_outputs(conv):
    """The front end lifts a 1-D convolution to the 2-D op of its layout
    (a unit height), which it then rewrites as it does 2-D ones: no 1-D
    convolution and no op of unknown kind is left; outputs equal, as
    prepared and scheduled by the policy."""
    text = _conv_1d(*conv)
    assert [o.kind for o in mlir_rl.Module.parse(text).ops()] == ["fill", "unknown"]
    after = mlir_rl.prepare(text)
    assert "conv_1d" not in after
    kinds = [o.kind for o in mlir_rl.Module.parse(after).ops()]
    assert "unknown" not in kinds, kinds
    if not conv[0].startswith("depthwise"):
        assert "linalg.conv_2d" not in after and "matmul" in kinds, kinds
    _assert_same_outputs(text, after)


# torch-mlir's layer-norm variance: the input widened to f64 once, read by a
# sum and by the squared deviations' sum.
WIDENED = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
func.func @main(%x: tensor<32x256xf32>) -> (tensor<32x1xf64>, tensor<32x1xf64>) {
  %z = arith.constant 0.0 : f64
  %n = arith.constant 256.0 : f64
  %e = tensor.empty() : tensor<32x256xf64>
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<32x256xf32>) outs(%e : tensor<32x256xf64>) {
  ^bb0(%in: f32, %out: f64):
    %c = arith.extf %in : f32 to f64
    linalg.yield %c : f64
  } -> tensor<32x256xf64>
  %e1 = tensor.empty() : tensor<32x1xf64>
  %f = linalg.fill ins(%z : f64) outs(%e1 : tensor<32x1xf64>) -> tensor<32x1xf64>
  %s = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]}
       ins(%w : tensor<32x256xf64>) outs(%f : tensor<32x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %a = arith.addf %in, %out : f64
    linalg.yield %a : f64
  } -> tensor<32x1xf64>
  %m = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
       ins(%s : tensor<32x1xf64>) outs(%e1 : tensor<32x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %d = arith.divf %in, %n : f64
    linalg.yield %d : f64
  } -> tensor<32x1xf64>
  %f2 = linalg.fill ins(%z : f64) outs(%e1 : tensor<32x1xf64>) -> tensor<32x1xf64>
  %v = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]}
       ins(%w, %m : tensor<32x256xf64>, tensor<32x1xf64>) outs(%f2 : tensor<32x1xf64>) {
  ^bb0(%in: f64, %mean: f64, %out: f64):
    %d = arith.subf %in, %mean : f64
    %q = arith.mulf %d, %d : f64
    %a = arith.addf %q, %out : f64
    linalg.yield %a : f64
  } -> tensor<32x1xf64>
  return %m, %v : tensor<32x1xf64>, tensor<32x1xf64>
}
"""


def test_a_cast_goes_into_each_consumer_instead_of_a_wider_copy():
    """The widening cast read by two reductions is fused into both (each
    casts as it reads): no 32x256 f64 tensor is left; outputs equal."""
    after = mlir_rl.prepare(WIDENED)
    assert "tensor<32x256xf64>" not in after, after
    assert after.count("arith.extf") == 2
    _assert_same_outputs(WIDENED, after)
