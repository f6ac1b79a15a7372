"""dump-schedule's transform script replays the pass's schedule with the
upstream transform interpreter and gives the same IR: the in-process
application (handles bound directly, fusion by the TilingInterface) is the
transform ops' (matched by tag, fuse_into_containing_op); a script that
runs mlir-rl's passes also removes the tags at the end."""
import re
import subprocess

import pytest

from mlir_rl.core import prepare
from mlir_rl.data import dataset, kernels

TAG = [re.compile(p) for p in (r"mlir_rl\.op_id = \d+ : i64, ", r", mlir_rl\.op_id = \d+ : i64",
                               r" ?attrs =  \{mlir_rl\.op_id = \d+ : i64\}",
                               r" \{mlir_rl\.op_id = \d+ : i64\}",
                               # The front end's mark of a prepared input, which
                               # a script without mlir-rl's passes leaves too.
                               r" attributes \{mlir_rl\.front_end\}")]


def _untagged(text: str) -> str:
    for p in TAG:
        text = p.sub("", text)
    return text


def _programs() -> dict[str, str]:
    progs = {p.name: p.text for p in dataset.all_programs(seed=0, sequences=6, lqcd=2)}
    picked = {k: progs[k] for k in sorted(progs) if k.startswith(("sequence", "lqcd"))}
    picked["matmul_bias_relu"] = kernels.matmul_bias_relu(64, 128, 96)
    picked["resnet18_layers"] = kernels.resnet18_layers()
    # Its matmul is packed (mlir-rl-pack-constant-rhs in the script's prelude).
    picked["linear"] = prepare(kernels.linear_torch(64, 256, 128, seed=0))
    return picked


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_programs()))
@pytest.mark.parametrize("policy", ["shipped", "varied-sampled"])
def test_dumped_script_replays_to_the_same_ir(name, policy, mlir_opt, plugin, varied_model,
                                             tmp_path):
    """With the shipped policy (which fuses often) and a sampled test policy."""
    src = tmp_path / "in.mlir"
    src.write_text(_programs()[name])
    script = tmp_path / "schedule.mlir"
    options = "" if policy == "shipped" else f"model={varied_model} sample=true seed=3"
    scheduled = subprocess.run(
        [mlir_opt, str(src), f"--load-pass-plugin={plugin}", "-p",
         f"builtin.module(linalg-rl-schedule{{dump-schedule={script} {options}}})"],
        capture_output=True, text=True, check=True).stdout
    # The plugin: with convolutions or poolings the script first replays the
    # pass's rewrite-windows with apply_registered_pass of mlir-rl's passes.
    replayed = subprocess.run(
        [mlir_opt, str(src), f"--load-pass-plugin={plugin}", "-p",
         f"builtin.module(transform-preload-library{{transform-library-paths={script}}},"
         "transform-interpreter)"], capture_output=True, text=True, check=True).stdout
    if "apply_registered_pass" in script.read_text():
        # It runs mlir-rl's passes, so it ends by removing the tags too
        # (mlir-rl-strip-op-ids): the same IR exactly.
        assert replayed == scheduled
    else:
        # Replayable without the plugin: the tags stay.
        assert _untagged(replayed) == scheduled
