"""The shipped policy's decisions are pinned: a refactoring that changes what
it chooses on the dataset (training and validation splits) or the unseen
kernels of `mlir-rl check-policy` fails here. Retraining the policy
regenerates the file: `python test/python/test_shipped_policy.py --record`.

The masks depend on the register file (legality: `vregs`), so the decisions
are made, and recorded, with the register file the fixture names (in a
process of their own, as the legality is read once per process), whatever
the host has."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mlir_rl

FIXTURE = Path(__file__).parent / "data" / "shipped_schedules.json"


def _programs() -> dict[str, str]:
    from mlir_rl.data import dataset, suites
    texts = {f"data/{p.name}": p.text for p in dataset.all_programs()}
    texts.update({f"unseen/{n}": t for n, t in suites.unseen_suite().items()})
    return texts


def _schedules() -> dict[str, str]:
    out = {}
    for name, text in _programs().items():
        m = mlir_rl.Module.parse(text, name)
        # The policy's decisions on the pipeline's front end (the rules then
        # translate them; packing decides on plain matmuls).
        m.schedule_with_policy(rules=False)
        out[name] = m.decisions
    return out


def _schedules_with(vregs: str) -> dict[str, str]:
    """_schedules in a process whose register file is `vregs`."""
    env = dict(os.environ, MLIR_RL_VECTOR_REGISTERS=vregs)
    r = subprocess.run([sys.executable, __file__, "--print"], env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


@pytest.mark.slow
def test_shipped_policy_chooses_the_recorded_schedules():
    fixture = json.loads(FIXTURE.read_text())
    recorded = fixture["schedules"]
    now = _schedules_with(fixture["vregs"])
    assert set(now) == set(recorded)
    changed = {k: (recorded[k], now[k]) for k in now if now[k] != recorded[k]}
    assert not changed, changed


if __name__ == "__main__" and "--print" in sys.argv:
    print(json.dumps(_schedules()))
elif __name__ == "__main__" and "--record" in sys.argv:
    fixture = json.loads(FIXTURE.read_text())
    vregs = fixture.get("vregs", "32x512")
    FIXTURE.write_text(json.dumps({"note": fixture["note"], "vregs": vregs,
                                   "schedules": _schedules_with(vregs)},
                                  indent=1, sort_keys=True) + "\n")
