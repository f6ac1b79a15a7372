"""mlir-rl-pad-to-tiles: odd extents padded to full tiles change no output,
alone, through prepare, and as the front end of the policy's schedule."""
from __future__ import annotations

import subprocess

import pytest

import mlir_rl


def _outputs(text: str):
    return mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=1, seed=5).outputs


def _matmul(m: int, k: int, n: int, elt: str = "f32", init: str = "fill") -> str:
    a, b, c = (f"tensor<{x}x{y}x{elt}>" for x, y in ((m, k), (k, n), (m, n)))
    zero = "0.0" if elt.startswith("f") else "0"
    if init == "fill":
        args, acc = f"%a: {a}, %b: {b}", "%f"
        pre = (f"  %z = arith.constant {zero} : {elt}\n  %e = tensor.empty() : {c}\n"
               f"  %f = linalg.fill ins(%z : {elt}) outs(%e : {c}) -> {c}\n")
    elif init == "argument":
        args, acc, pre = f"%a: {a}, %b: {b}, %c: {c}", "%c", ""
    else:  # a broadcast bias
        args, acc = f"%a: {a}, %b: {b}, %bias: tensor<{n}x{elt}>", "%bb"
        pre = (f"  %e = tensor.empty() : {c}\n"
               f"  %bb = linalg.broadcast ins(%bias : tensor<{n}x{elt}>) outs(%e : {c}) dimensions = [0]\n")
    return (f"func.func @main({args}) -> {c} {{\n{pre}"
            f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs({acc} : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


def _bmm_transposed(batch: int, m: int, k: int, n: int) -> str:
    """A batch matmul against a transposed operand, as a generic, into its
    argument (attention's scores, no fill)."""
    a, b, c = (f"tensor<{batch}x{x}x{y}xf32>" for x, y in ((m, k), (n, k), (m, n)))
    return (
        "#a = affine_map<(b, i, j, k) -> (b, i, k)>\n"
        "#b = affine_map<(b, i, j, k) -> (b, j, k)>\n"
        "#c = affine_map<(b, i, j, k) -> (b, i, j)>\n"
        f"func.func @main(%a: {a}, %b: {b}, %c: {c}) -> {c} {{\n"
        "  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = "
        "[\"parallel\", \"parallel\", \"parallel\", \"reduction\"]}\n"
        f"       ins(%a, %b : {a}, {b}) outs(%c : {c}) {{\n"
        "  ^bb0(%x: f32, %y: f32, %o: f32):\n"
        "    %p = arith.mulf %x, %y : f32\n    %s = arith.addf %o, %p : f32\n"
        "    linalg.yield %s : f32\n"
        f"  }} -> {c}\n  return %r : {c}\n}}\n")


def _max_plus(m: int, k: int, n: int) -> str:
    """A reduction that is not a contraction: its reduction is not padded."""
    return (
        "#a = affine_map<(i, j, k) -> (i, k)>\n#b = affine_map<(i, j, k) -> (k, j)>\n"
        "#c = affine_map<(i, j, k) -> (i, j)>\n"
        f"func.func @main(%x: tensor<{m}x{k}xf32>, %y: tensor<{k}x{n}xf32>, %o: tensor<{m}x{n}xf32>)"
        f" -> tensor<{m}x{n}xf32> {{\n"
        "  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = "
        "[\"parallel\", \"parallel\", \"reduction\"]}\n"
        f"       ins(%x, %y : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%o : tensor<{m}x{n}xf32>) {{\n"
        "  ^bb0(%p: f32, %q: f32, %acc: f32):\n"
        "    %s = arith.addf %p, %q : f32\n    %mx = arith.maximumf %s, %acc : f32\n"
        "    linalg.yield %mx : f32\n"
        f"  }} -> tensor<{m}x{n}xf32>\n  return %r : tensor<{m}x{n}xf32>\n}}\n")


PROGRAMS = {
    "matmul-37x29x45": _matmul(37, 29, 45),
    "matmul-197x64x96": _matmul(197, 64, 96),
    "matmul-i32": _matmul(50, 21, 40, "i32"),
    "matmul-f64-into-argument": _matmul(23, 19, 70, "f64", init="argument"),
    "matmul-bias": _matmul(50, 48, 100, init="bias"),
    # Rows split (96 + 4): into an argument read by both parts, onto a bias.
    "split-into-argument": _matmul(100, 64, 100, init="argument"),
    "split-bias": _matmul(100, 48, 100, init="bias"),
    # Columns split (992 + 8; 96 + 4 in each row part above).
    "split-columns": _matmul(197, 128, 1000),
    "bmm-transposed": _bmm_transposed(3, 49, 24, 49),
    "max-plus": _max_plus(50, 36, 20),
}


def _padded(text: str, opt: str) -> str:
    return subprocess.run([opt, "-p", "builtin.module(func.func(mlir-rl-pad-to-tiles))"],
                          input=text, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_padding_changes_no_output(name, mlir_rl_opt):
    text = PROGRAMS[name]
    after = _padded(text, mlir_rl_opt)
    # Padded, or split (into slices of an argument: no new tensor).
    assert any(op in after for op in ("tensor.pad", "tensor.empty", "tensor.insert_slice"))
    assert "tensor.extract_slice" in after, after
    ref = _outputs(text)
    ok, err = mlir_rl.outputs_match(_outputs(after), ref)
    assert ok, err
    # Scheduled by the policy, as the pass does (the front end pads again:
    # nothing left to pad), and through prepare.
    for m in (mlir_rl.Module.parse(text), mlir_rl.Module.parse(mlir_rl.prepare(text))):
        m.schedule_with_policy()
        ok, err = mlir_rl.outputs_match(m.time(runs=1, warmup=0, threads=2, seed=5).outputs, ref)
        assert ok, (m.schedule, err)


def test_rows_then_columns_are_split_and_the_reduction_padded(mlir_rl_opt):
    """A contraction's rows of 64 or more that 32 does not divide are split
    (197 -> 192 + 5: no padded row computed, nothing copied for them); then
    a part's columns that would be padded (197 -> 256) are split too
    (192 + 5); the reduction goes to a multiple of 8 where 4 does not divide
    it (197 -> 200) where that pays. The part of 5 rows is left whole (B
    would be copied for 5 uses of each element). Outputs equal."""
    text = _matmul(197, 197, 197)
    after = _padded(text, mlir_rl_opt)
    assert "tensor<192x200xf32>, tensor<200x192xf32>) outs(" in after, after
    assert "tensor<192x197xf32>, tensor<197x5xf32>) outs(" in after, after
    assert "tensor<5x197xf32>, tensor<197x197xf32>) outs(" in after, after
    assert "x256xf32>" not in after and "tensor<224x" not in after
    assert mlir_rl.outputs_match(_outputs(after), _outputs(text))[0]
    bmm = _bmm_transposed(12, 197, 64, 197)
    after = _padded(bmm, mlir_rl_opt)
    for shape in ("12x192x192", "12x192x5", "12x5x197"):  # the parts' results
        assert f"tensor<{shape}xf32>" in after, (shape, after)
    assert "tensor.pad" not in after and "x256xf32>" not in after, after
    assert mlir_rl.outputs_match(_outputs(after), _outputs(bmm))[0]


def test_a_reduction_that_4_divides_is_not_padded(mlir_rl_opt):
    """196 stays (the register tile's step of 4 divides it): padding it to
    200 copied both inputs of a 12x197x196x128 batch matmul."""
    after = _padded(_matmul(64, 196, 64), mlir_rl_opt)
    assert "tensor.pad" not in after, after


def test_the_policy_sees_the_padded_extents():
    text = PROGRAMS["matmul-197x64x96"]
    m = mlir_rl.Module.parse(text)
    m.schedule_with_policy()
    assert "tensor<192x64xf32>" in m.ir() and "tensor<197x96xf32>" in m.ir()
    assert m.schedule.count("V") >= 2, m.schedule  # both parts scheduled
    kept = mlir_rl.Module.parse(text)
    kept.schedule_with_policy(pad_to_tiles=False)
    assert "tensor.pad" not in kept.ir() and "192x" not in kept.ir()


@pytest.mark.parametrize("text", [
    _matmul(1, 512, 1000),            # a matrix-vector product: B read once
    _matmul(64, 40, 96),              # extents that tiles already divide
    _matmul(12, 7, 10),               # loops under 16 iterations
    _matmul(64, 40, 24),              # 8 divides 24: 32 would cost 1/3 more
], ids=["gemv", "divisible", "small", "eight-divides"])
def test_what_padding_would_not_pay_for_is_left_alone(text, mlir_rl_opt):
    after = _padded(text, mlir_rl_opt)
    assert "tensor.pad" not in after and "tensor.extract_slice" not in after, after


def test_an_extent_8_divides_is_padded_only_where_cheap(mlir_rl_opt):
    """56 columns go to 64 (1/7 more); 48 stay (64 would be 1/3 more, and
    tiles of 16 divide 48); 50, which 8 does not divide, still goes to 64."""
    for n, padded in ((56, 64), (48, 48), (50, 64)):
        after = _padded(_matmul(64, 40, n), mlir_rl_opt)
        assert f"tensor<40x{padded}xf32>) outs(" in after, (n, after)
