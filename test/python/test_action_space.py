"""C++ owns the action space: kinds, grammar, masks, decoding, encoding.

Python reaches them through typed bindings; the decode-parity test is the
contract between training and deployment: the environment executes exactly
what the pass's decoder picks.
"""
import io
import random
import tokenize
from pathlib import Path

import numpy as np
import pytest

import mlir_rl
from cases import KERNELS
from mlir_rl.data import dataset
from mlir_rl.data import kernels as K

A = mlir_rl.ActionKind


def test_kind_table_is_complete():
    kinds = mlir_rl.action_kinds()
    assert [int(k.kind) for k in kinds] == list(range(len(A.__members__)))
    assert len({k.mnemonic for k in kinds}) == len(kinds)
    lay = mlir_rl.layout()
    tiled = [k for k in kinds if k.is_tiled]
    # Tiled kinds come first: a tiled kind's index is its tile-mask row.
    assert [int(k.kind) for k in tiled] == list(range(lay.num_tiled_kinds))
    assert lay.raw["tile_mask_size"] == lay.num_tiled_kinds * lay.max_loops * lay.num_tile_sizes
    assert lay.mask_size == (lay.raw["kind_mask_size"] + lay.raw["tile_mask_size"]
                             + lay.raw["pointer_mask_size"])
    assert [k.mnemonic for k in kinds if k.terminal] == ["V", "NT"]
    assert [k.mnemonic for k in kinds if k.needs_split] == ["TP", "TF"]


def test_grammar_round_trips():
    a = mlir_rl.parse_action("TP(32, 64,0)")
    assert a.kind == A.TILED_PARALLELIZATION and a.sizes == [32, 64, 0] and str(a) == "TP(32,64,0)"
    assert mlir_rl.Action(A.VECTORIZATION) == mlir_rl.parse_action("V")
    entries = mlir_rl.parse_schedule("1: TP(8,8,0) V; T(4,4)")
    assert [(op, [str(x) for x in acts]) for op, acts in entries] == [
        (1, ["TP(8,8,0)", "V"]), (None, ["T(4,4)"])]
    for bad, why in [("X(8)", "unknown action"), ("TP(8,", "unbalanced"),
                     ("V(1)", "takes no arguments"), ("-1: V", "not a non-negative")]:
        with pytest.raises(mlir_rl.ScheduleError, match=why):
            mlir_rl.parse_schedule(bad)
    # A trace's prelude: split off and put back by C++'s grammar.
    trace = "[mlir-rl-fuse-elementwise,canonicalize] 1: TP(8,8,0) V {pack=0}"
    assert mlir_rl.core.schedule_prelude(trace) == "mlir-rl-fuse-elementwise,canonicalize"
    assert mlir_rl.core.schedule_prelude("1: V") is None
    assert mlir_rl.core.schedule_prelude("[] 1: V") == ""
    assert mlir_rl.format_schedule(mlir_rl.parse_schedule(trace, with_choices=True),
                                   prelude="mlir-rl-fuse-elementwise,canonicalize") == trace
    header = mlir_rl.core.schedule_header("1: V")
    assert mlir_rl.core.read_schedule_header(header + "module {}\n") == "1: V"
    assert mlir_rl.core.read_schedule_header("module {}\n") is None


def test_masks_have_named_parts():
    lay = mlir_rl.layout()
    m = mlir_rl.Module.parse(KERNELS["matmul"][0])
    masks = m.masks(1)
    assert masks.kind.shape == (len(A.__members__),)
    assert masks.tile.shape == (lay.num_tiled_kinds, lay.max_loops, lay.num_tile_sizes)
    assert masks.pointer.shape == (lay.max_loops,)
    assert masks.flat().shape == (lay.mask_size,)
    assert masks.allowed_sizes(A.TILED_PARALLELIZATION, 2) == [0]  # the reduction loop
    k = m.op(1).loop_bounds[2]
    assert masks.allowed_sizes(A.TILING, 2) == [0] + [t for t in lay.tile_candidates
                                                      if t and k % t == 0]
    assert masks.allowed_pointers() == [0, 1, 2]


def test_tile_sizes_must_divide_their_loop():
    """Legality v3: a size that does not divide its loop's extent is masked
    (it would leave dynamic extents that neither tiling nor vectorization
    takes), and applying one is refused with the reason."""
    assert "divide=1" in mlir_rl.legality()["description"]
    text = KERNELS["matmul"][0]
    m = mlir_rl.Module.parse(text)
    bounds = m.op(1).loop_bounds
    lay = mlir_rl.layout()
    for kind in (A.TILING, A.TILED_PARALLELIZATION):
        for loop, extent in enumerate(bounds):
            for t in m.masks(1).allowed_sizes(kind, loop):
                assert t == 0 or extent % t == 0
    odd = next((l, t) for l, e in enumerate(bounds) for t in lay.tile_candidates
               if t and t < e and e % t)
    sizes = [0] * len(bounds)
    sizes[odd[0]] = odd[1]
    with pytest.raises(mlir_rl.IllegalActionError, match="does not divide the extent"):
        m.apply(1, f"T({','.join(map(str, sizes))})")


def test_op_info_carries_the_phase():
    m = mlir_rl.Module.parse(KERNELS["matmul"][0])
    assert m.op(1).phase == mlir_rl.DecisionPhase.TRANSFORMATION
    m.apply_pointer(1, 2)
    assert m.op(1).phase == mlir_rl.DecisionPhase.INTERCHANGE_POINTER and m.op(1).in_interchange
    m.apply_pointer(1, 0)
    m.apply_pointer(1, 1)
    assert [str(a) for a in m.op(1).history] == ["I(2,0,1)"]


def test_invalid_op_ids_are_errors():
    m = mlir_rl.Module.parse(KERNELS["matmul"][0])
    for bad in (99, -1):
        with pytest.raises(IndexError):
            m.masks(bad)
        with pytest.raises(IndexError):
            m.observation(bad)
    with pytest.raises(IndexError):
        m.policy_logits(99)


def _programs():
    progs = [p.text for p in dataset.all_programs(seed=0, sequences=10, lqcd=3)]
    progs += [K.matmul_bias_relu(64, 128, 96), K.resnet18_layers()]
    return progs


@pytest.mark.slow
def test_decode_parity_over_1000_random_pairs():
    """For >= 1,000 random (program, logits) pairs the environment's
    index-based step executes exactly what the C++ decoder (decodeStep, as
    the pass runs it) picks, greedy and sampled, and reports those indices.

    The two sides are independent programs: the pass's path decodes on one
    Module, the environment's steps on another, replaying the same
    decisions; their schedules and IR must stay equal."""
    rng = random.Random(0)
    lay = mlir_rl.layout()
    pairs = 0
    for text in _programs():
        for sample in (False, True):
            decoder = mlir_rl.Module.parse(text)     # the pass's path
            env_side = mlir_rl.Module.parse(text)    # the environment's path
            while (op := decoder.next_op()) is not None and pairs < 100_000:
                assert env_side.next_op() == op
                scale = rng.choice([0.1, 1.0, 10.0])
                logits = (np.float32(scale) * np.random.default_rng(pairs).normal(
                              size=lay.raw["kind_mask_size"]).astype(np.float32),
                          np.random.default_rng(pairs + 1).normal(
                              size=lay.raw["tile_mask_size"]).astype(np.float32),
                          np.random.default_rng(pairs + 2).normal(
                              size=lay.raw["pointer_mask_size"]).astype(np.float32))
                seed = rng.getrandbits(32)
                step = decoder.decode(op, logits, sample=sample, seed=seed)
                status, applied = decoder.decode_and_apply(op, logits, sample=sample, seed=seed)
                assert applied == step
                outcome = env_side.step(op, decoder.encode(step))
                assert outcome.step == step and not outcome.fallback
                assert list(outcome.indices) == list(decoder.encode(step))
                assert outcome.status == status
                if status == mlir_rl.ApplyStatus.FAILED:  # as the pass: the op ends
                    decoder.apply(op, "NT")
                    env_side.apply(op, "NT")
                pairs += 1
            assert env_side.schedule == decoder.schedule
            assert env_side.ir() == decoder.ir()
    assert pairs >= 1000, pairs


@pytest.mark.slow
def test_policy_loop_equals_step_by_step_decoding(varied_model):
    """The pass's scheduling loop (C++ scheduleWithPolicy) and stepping the
    environment with the decoder's choices give the same schedule."""
    for text in _programs()[:20]:
        a = mlir_rl.Module.parse(text)
        # The decisions alone (packing schedules a matmul again after them).
        a.schedule_with_policy(varied_model, sample=True, seed=11, rules=False)
        b = mlir_rl.Module.parse(text)
        b.schedule_with(lambda obs, mask: _onnx_logits(varied_model, obs, mask), sample=True,
                        seed=11, rules=False)
        assert a.decisions == b.decisions


_SESSIONS = {}


def _onnx_logits(model, obs, mask):
    import onnxruntime as ort
    sess = _SESSIONS.setdefault(str(model), ort.InferenceSession(str(model)))
    k, t, p = sess.run(None, {"observation": obs[None], "mask": mask[None].astype(np.float32)})
    return k[0], t[0].reshape(-1), p[0]


def test_index_steps_fall_back_as_decoding_does():
    m = mlir_rl.Module.parse(KERNELS["matmul"][0])
    lay = mlir_rl.layout()
    a = np.zeros(lay.step_size, dtype=np.int64)
    a[0] = int(A.VECTORIZATION)  # not allowed on the untiled matmul
    out = m.step(1, a)
    assert out.fallback and out.step.action.kind == A.TILING  # the first allowed kind
    a[0] = 77  # out of range: no kind chosen, the first allowed
    out = m.step(1, a)
    assert out.fallback and out.step.action.kind == A.TILING
    with pytest.raises(mlir_rl.IllegalActionError, match="indices"):
        m.step(1, a[:3])


def test_python_restates_no_action_space():
    """The package's sources hold no mnemonic, tile-size list or mask offset
    of their own: these come from the bindings."""
    root = Path(mlir_rl.__file__).parent
    mnemonics = {k.mnemonic for k in mlir_rl.action_kinds()}
    candidates = list(mlir_rl.layout().tile_candidates)
    offenders = []
    for path in root.rglob("*.py"):
        src = path.read_text()
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.STRING:
                try:
                    value = eval(tok.string)  # noqa: S307 - a literal from our own source
                except Exception:  # noqa: BLE001 - f-strings
                    continue
                if value in mnemonics:
                    offenders.append(f"{path.name}:{tok.start[0]}: {tok.string}")
        if str(candidates)[1:-1] in src:
            offenders.append(f"{path.name}: the tile candidates")
        for needle in ("// Schedule:", "action_mnemonics.index", "3 * n * m"):
            if needle in src:
                offenders.append(f"{path.name}: {needle!r}")
    assert not offenders, offenders
