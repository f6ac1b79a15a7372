"""mlir-rl iree-spec: the policy's tile sizes as an IREE tuning spec that
iree-compile (3.13, llvm-cpu) accepts and keeps; outputs unchanged."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlir_rl.iree_spec import MARKER, count_matches, write_spec
from mlir_rl.paths import mlir_opt_path

IREE = shutil.which("iree-compile") or str(Path(sys.executable).with_name("iree-compile"))
pytestmark = pytest.mark.skipif(not Path(IREE).exists(), reason="iree-compile is not installed")

# A matmul with a transposed right-hand side and a batch matmul without a
# fill (it accumulates into its argument): the forms torch-mlir brings.
PROGRAM = """
func.func @main(%a: tensor<64x256xf32>, %w: tensor<128x256xf32>,
                %x: tensor<4x32x64xf32>, %y: tensor<4x64x48xf32>, %acc: tensor<4x32x48xf32>)
    -> (tensor<64x128xf32>, tensor<4x32x48xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                        affine_map<(d0, d1, d2) -> (d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<64x256xf32>, tensor<128x256xf32>) outs(%f : tensor<64x128xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<64x128xf32>
  %b = linalg.batch_matmul ins(%x, %y : tensor<4x32x64xf32>, tensor<4x64x48xf32>)
                           outs(%acc : tensor<4x32x48xf32>) -> tensor<4x32x48xf32>
  return %m, %b : tensor<64x128xf32>, tensor<4x32x48xf32>
}
"""


def _compile(tmp: Path, spec: str | None) -> tuple[Path, Path]:
    gen = tmp / "generic.mlir"
    subprocess.run([str(mlir_opt_path()), "-p",
                    "builtin.module(func.func(linalg-generalize-named-ops))", "-", "-o", str(gen)],
                   input=PROGRAM, text=True, check=True)
    out = tmp / ("spec" if spec else "stock")
    args = [IREE, str(gen), "-o", str(out.with_suffix(".vmfb")), "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
            f"--iree-hal-dump-executable-configurations-to={out}"]
    if spec:
        (tmp / "spec.mlir").write_text(spec)
        args.append(f"--iree-codegen-tuning-spec-path={tmp / 'spec.mlir'}")
    r = _run_iree_compile(args)
    assert r.returncode == 0, r.stderr[-2000:]
    return out.with_suffix(".vmfb"), out


def _run_iree_compile(args: list[str], timeout_s: float = 300) -> subprocess.CompletedProcess:
    """iree-compile once more if it hangs: a CI run saw it sit in a futex
    wait with no CPU time for 12 minutes on this test's small program (it
    compiles in seconds), a deadlock in IREE that no retry had shown twice."""
    for attempt in (1, 2):
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            if attempt == 2:
                pytest.fail(f"iree-compile hung twice (over {timeout_s:.0f} s each): {' '.join(args)}")
    raise AssertionError("unreachable")


def test_spec_maps_the_schedule_to_lowering_configs():
    spec = write_spec(PROGRAM)
    by_op = {e.op: e for e in spec.entries}
    assert "linalg.fill" in by_op and by_op["linalg.fill"].config is None
    assert len(spec.matched) == 2, spec.report()
    for e in spec.matched:
        actions = e.schedule.split()
        tp = next(a for a in actions if a.startswith(("TP(", "TF(")))
        assert e.config["distribution"] == [int(x) for x in tp[tp.index("(") + 1:-1].split(",")]
        # Reductions are never distributed; each loop is a vector tile of
        # one kind only.
        assert e.config["distribution"][-1] == 0
        for p, r in zip(e.config["vector_common_parallel"], e.config["vector_reduction"]):
            assert p == 0 or r == 0
    assert spec.text.count("transform.iree.match.contraction") == 2
    assert "@__kernel_config" in spec.text and MARKER in spec.text


@pytest.mark.slow
def test_iree_compile_keeps_the_policys_tiles_and_outputs(tmp_path):
    iree_rt = pytest.importorskip("iree.runtime")
    spec = write_spec(PROGRAM)
    vmfb_spec, dump_spec = _compile(tmp_path, spec.text)
    vmfb_stock, dump_stock = _compile(tmp_path, None)
    matched, total = count_matches(dump_spec)
    assert matched == 2 and total >= 2, (matched, total)
    assert count_matches(dump_stock)[0] == 0
    configs = "\n".join(p.read_text() for p in sorted(dump_spec.glob("*.mlir")))
    for e in spec.matched:
        want = (f"distribution = {e.config['distribution']}, vector_common_parallel = "
                f"{e.config['vector_common_parallel']}, vector_reduction = "
                f"{e.config['vector_reduction']}")
        assert want in configs, (want, re.findall(r"lowering_config = [^>]*>", configs))

    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32)
              for s in ((64, 256), (128, 256), (4, 32, 64), (4, 64, 48), (4, 32, 48))]
    expected = [inputs[0] @ inputs[1].T, inputs[4] + inputs[2] @ inputs[3]]

    def run(vmfb):
        ctx = iree_rt.SystemContext(config=iree_rt.Config("local-task"))
        ctx.add_vm_module(iree_rt.VmModule.copy_buffer(ctx.instance, vmfb.read_bytes()))
        outs = ctx.modules.module["main"](*inputs)
        return [np.asarray(o.to_host()) for o in outs]

    for got in (run(vmfb_spec), run(vmfb_stock)):
        for g, e in zip(got, expected):
            assert np.allclose(g, e, rtol=1e-4, atol=1e-4)


def test_cli_writes_the_spec_and_reports(tmp_path):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    out = tmp_path / "spec.mlir"
    r = subprocess.run([sys.executable, "-m", "mlir_rl", "iree-spec", str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "2 ops configured for IREE" in r.stderr
    assert "left to IREE: not a contraction (fill)" in r.stderr
    assert out.read_text().count("transform.iree.match.contraction") == 2
