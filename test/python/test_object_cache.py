"""compile_function's object cache: the machine code written once, loaded by
a later compile (no lowering, no code generation) with equal outputs; a file
that does not load is compiled again and rewritten; a module whose code is
generated in parts is cached as an archive of them."""
import numpy as np

from mlir_rl import _core
from mlir_rl.passes import run_pass

MATMUL = """func.func @main(%A: tensor<64x96xf32>, %B: tensor<96x128xf32>) -> tensor<64x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %C = linalg.fill ins(%z : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%A, %B : tensor<64x96xf32>, tensor<96x128xf32>) outs(%C : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
"""


def _run(fn, inputs):
    out = np.empty((64, 128), np.float32)
    fn(inputs, [out])
    return out


def test_the_machine_code_is_written_once_and_loaded_after(tmp_path):
    ir = run_pass(MATMUL, name="mm").ir
    obj = tmp_path / f"mm-{_core.jit_target_tag()}.o"
    first = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert not first.from_object and obj.stat().st_size > 0
    inputs = first.random_inputs(3)
    expected = _run(first, inputs)
    assert np.allclose(expected, inputs[0] @ inputs[1], rtol=1e-4, atol=1e-4)
    written = obj.read_bytes()
    second = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert second.from_object
    assert np.array_equal(_run(second, inputs), expected)
    assert obj.read_bytes() == written
    # Not an object (truncated, another tool's): compiled again, rewritten.
    obj.write_bytes(written[:100])
    third = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    assert not third.from_object and obj.read_bytes() == written
    assert np.array_equal(_run(third, inputs), expected)


def test_the_target_tag_is_a_stable_short_hash():
    tag = _core.jit_target_tag()
    assert tag == _core.jit_target_tag() and len(tag) == 16
    int(tag, 16)


def _mlp(batch, dims):
    """A chain of matmul + tanh layers: large enough that its code is
    generated in parts."""
    args = [f"%x: tensor<{batch}x{dims[0]}xf32>"] + [
        f"%w{i}: tensor<{a}x{b}xf32>" for i, (a, b) in enumerate(zip(dims, dims[1:]))]
    body, cur = ["  %z = arith.constant 0.0 : f32"], "%x"
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        t = f"tensor<{batch}x{b}xf32>"
        body += [
            f"  %e{i} = tensor.empty() : {t}",
            f"  %c{i} = linalg.fill ins(%z : f32) outs(%e{i} : {t}) -> {t}",
            f"  %m{i} = linalg.matmul ins({cur}, %w{i} : tensor<{batch}x{a}xf32>, "
            f"tensor<{a}x{b}xf32>) outs(%c{i} : {t}) -> {t}",
            f"  %r{i} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
            f"affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%m{i} : {t}) outs(%e{i} : {t}) {{\n"
            f"  ^bb0(%in: f32, %o: f32):\n    %h = math.tanh %in : f32\n    linalg.yield %h : f32\n"
            f"  }} -> {t}"]
        cur = f"%r{i}"
    return (f"func.func @main({', '.join(args)}) -> tensor<{batch}x{dims[-1]}xf32> {{\n"
            + "\n".join(body) + f"\n  return {cur} : tensor<{batch}x{dims[-1]}xf32>\n}}\n")


def _archive_members(data: bytes) -> list[str]:
    """The member names of a GNU ar archive."""
    assert data.startswith(b"!<arch>\n")
    names, pos = [], 8
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        size = int(header[48:58])
        names.append(header[:16].decode().strip().rstrip("/"))
        pos += 60 + size + (size & 1)
    return names


def test_code_generated_in_parts_is_the_code_of_one_part(tmp_path, monkeypatch):
    # Code generation works function by function: the parts' code, linked,
    # computes bit for bit what one object computes; the cache holds the
    # parts as an archive, which a later compile loads.
    dims = [48, 80, 112, 64, 96, 40, 72, 56, 88, 104, 24]
    ir = run_pass(_mlp(32, dims), name="mlp").ir
    one, parts = tmp_path / "one.o", tmp_path / "parts.o"
    monkeypatch.setenv("MLIR_RL_JIT_THREADS", "1")
    single = _core.compile_function(ir, "main", 2, object_cache=str(one))
    assert one.read_bytes().startswith(b"\x7fELF")
    monkeypatch.setenv("MLIR_RL_JIT_THREADS", "2")
    split = _core.compile_function(ir, "main", 2, object_cache=str(parts))
    members = _archive_members(parts.read_bytes())
    assert len(members) >= 2 and all(m.startswith("part") for m in members)
    inputs = single.random_inputs(5)
    outputs = []
    for fn in (single, split, _core.compile_function(ir, "main", 2, object_cache=str(parts))):
        out = np.empty((32, dims[-1]), np.float32)
        fn(inputs, [out])
        outputs.append(out)
    expected = inputs[0].astype(np.float64)
    for w in inputs[1:]:
        expected = np.tanh(expected @ w)
    # Ten layers of float32 sums and tanh: errors compound (3e-4 here).
    assert np.allclose(outputs[0], expected, rtol=1e-3, atol=1e-3)
    assert np.array_equal(outputs[1], outputs[0]) and np.array_equal(outputs[2], outputs[0])


def _with_resource_weight(w: np.ndarray) -> str:
    """x @ w with w a dense_resource constant, as torch-mlir imports weights
    (the blob: its alignment as 4 little-endian bytes, then the data)."""
    k, n = w.shape
    blob = (np.uint32(4).tobytes() + w.astype(np.float32).tobytes()).hex()
    return f"""func.func @main(%x: tensor<4x{k}xf32>) -> tensor<4x{n}xf32> {{
  %w = arith.constant dense_resource<weight> : tensor<{k}x{n}xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x{n}xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4x{n}xf32>) -> tensor<4x{n}xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<4x{n}xf32>) -> tensor<4x{n}xf32>
  return %r : tensor<4x{n}xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      weight: "0x{blob}"
    }}
  }}
#-}}
"""


def test_a_cached_object_is_loaded_without_its_weights_and_compiled_again_with_them(tmp_path):
    # The signature of a program whose object is cached is read from its
    # text without the resource section (the weights); where the object does
    # not load, the whole text is compiled again, weights included.
    w = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    ir = run_pass(_with_resource_weight(w), name="resource").ir
    assert "dialect_resources" in ir
    obj = tmp_path / "resource.o"
    first = _core.compile_function(ir, "main", 2, object_cache=str(obj))
    x = first.random_inputs(1)
    expected = x[0].astype(np.float64) @ w
    outputs = []
    for fresh in (False, True):
        if fresh:
            obj.write_bytes(obj.read_bytes()[:100])  # does not load: compiled again
        fn = _core.compile_function(ir, "main", 2, object_cache=str(obj))
        assert fn.from_object != fresh
        out = np.empty((4, 16), np.float32)
        fn(x, [out])
        outputs.append(out)
    for out in outputs:
        assert np.allclose(out, expected, rtol=1e-4, atol=1e-4)


# Found by `mlir-rl fuzz --seed 9404` (program 395): convert-math-to-funcs'
# helper for math.ipowi is a linkonce_odr definition; split into parts, the
# part holding it dropped it as unused while the part calling it had a
# declaration ("Symbols not found: __mlir_math_ipowi_i64").
IPOWI_CHAIN = """func.func @main(%arg0: tensor<100x48xi64>, %arg1: tensor<100x11xi64>) -> (tensor<100x11xi64>, tensor<100x11xi64>) {
  %n0_e = tensor.empty() : tensor<100x48xi64>
  %n0 = linalg.copy ins(%arg0 : tensor<100x48xi64>) outs(%n0_e : tensor<100x48xi64>) -> tensor<100x48xi64>
  %n1_cacc = arith.constant 0 : i64
  %n1_eacc = tensor.empty() : tensor<100xi64>
  %n1_acc = linalg.fill ins(%n1_cacc : i64) outs(%n1_eacc : tensor<100xi64>) -> tensor<100xi64>
  %n1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%n0 : tensor<100x48xi64>) outs(%n1_acc : tensor<100xi64>) {
  ^bb0(%n1_i0: i64, %n1_o0: i64):
    %n1_q = arith.muli %n1_i0, %n1_i0 : i64
    %n1_s = arith.addi %n1_q, %n1_o0 : i64
    linalg.yield %n1_s : i64
  } -> tensor<100xi64>
  %n2_e = tensor.empty() : tensor<100x11xi64>
  %n2 = linalg.broadcast ins(%n1 : tensor<100xi64>) outs(%n2_e : tensor<100x11xi64>) dimensions = [1]
  %n3_e = tensor.empty() : tensor<100x11xi64>
  %n3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n2 : tensor<100x11xi64>) outs(%n3_e : tensor<100x11xi64>) {
  ^bb0(%n3_i0: i64, %n3_o0: i64):
    %n3b_two = arith.constant 2 : i64
    %n3b_y = math.ipowi %n3_i0, %n3b_two : i64
    linalg.yield %n3b_y : i64
  } -> tensor<100x11xi64>
  %n4_e = tensor.empty() : tensor<100x11xi64>
  %n4 = linalg.map { arith.subi } ins(%n3, %arg1 : tensor<100x11xi64>, tensor<100x11xi64>) outs(%n4_e : tensor<100x11xi64>)
  return %n4, %n2 : tensor<100x11xi64>, tensor<100x11xi64>
}
"""


def test_a_helper_function_survives_the_split_into_parts(monkeypatch):
    monkeypatch.setenv("MLIR_RL_JIT_THREADS", "2")
    ir = run_pass(IPOWI_CHAIN, name="ipowi", schedule="[mlir-rl-fuse-elementwise,canonicalize,"
                  "cse,mlir-rl-untie-empties] 3: V").ir
    fn = _core.compile_function(ir, "main", 2)
    x, y = fn.random_inputs(7)
    out = [np.empty((100, 11), np.int64), np.empty((100, 11), np.int64)]
    fn([x, y], out)
    sums = np.broadcast_to((x * x).sum(axis=1)[:, None], (100, 11))
    assert np.array_equal(out[0], sums * sums - y) and np.array_equal(out[1], sums)
