"""Thin Python wrappers over the native core.

Every number here comes from C++ (``mlir_rl._core``): the feature layout, the
features, the masks and the action semantics. Python only reshapes arrays and
turns status codes into exceptions.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from mlir_rl import _core


class ScheduleError(RuntimeError):
    """A schedule or action could not be parsed, lowered or run."""


class IllegalActionError(ScheduleError):
    """The action is masked out for the op in its current state."""


class ApplyStatus(enum.IntEnum):
    """Outcome of applying an action (mirrors C++ ``ApplyStatus``)."""

    APPLIED = 0
    ILLEGAL = 1
    FAILED = 2  # the transformation did not apply; the IR was restored


@dataclass(frozen=True)
class Layout:
    """The C++ ``FeatureLayout``: limits, sizes, offsets and names."""

    max_loops: int
    num_tile_sizes: int
    max_rank: int
    max_operands: int
    history_length: int
    op_feature_size: int
    observation_size: int
    mask_size: int
    tile_candidates: tuple[int, ...]
    op_kinds: tuple[str, ...]
    action_names: tuple[str, ...]
    action_mnemonics: tuple[str, ...]
    hash: str
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def num_actions(self) -> int:
        return len(self.action_names)


@functools.lru_cache(maxsize=1)
def layout() -> Layout:
    """The feature layout compiled into the native core."""
    d = _core.layout()
    return Layout(
        max_loops=d["max_loops"],
        num_tile_sizes=d["num_tile_sizes"],
        max_rank=d["max_rank"],
        max_operands=d["max_operands"],
        history_length=d["history_length"],
        op_feature_size=d["op_feature_size"],
        observation_size=d["observation_size"],
        mask_size=d["mask_size"],
        tile_candidates=tuple(d["tile_candidates"]),
        op_kinds=tuple(d["op_kinds"]),
        action_names=tuple(d["action_names"]),
        action_mnemonics=tuple(d["action_mnemonics"]),
        hash=d["hash"],
        raw=dict(d),
    )


def default_model_path() -> Path:
    """The policy the pass uses when ``model=`` is not given."""
    return Path(_core.default_model_path())


def lowering_pipeline() -> str:
    """The lowering pipeline (also the ``mlir-rl-lower`` pass pipeline)."""
    return _core.lowering_pipeline()


@dataclass(frozen=True)
class OpInfo:
    """One linalg op of a module, as numbered by the pass."""

    id: int
    name: str
    kind: str
    function: str
    supported: bool
    reason: str
    producer: int
    consumers: tuple[int, ...]
    loop_bounds: tuple[int, ...]
    iterators: tuple[str, ...]
    history: tuple[str, ...]
    done: bool


@dataclass(frozen=True)
class Masks:
    """Legal actions now (True = allowed), shaped by the layout.

    ``kind[a]`` for the transformation; ``tile[t, l, c]`` for tiled action
    t (0 = T, 1 = TP, 2 = TF), loop l and tile candidate c; ``pointer[l]`` for
    the next interchange level pointer.
    """

    kind: np.ndarray
    tile: np.ndarray
    pointer: np.ndarray

    @classmethod
    def from_flat(cls, flat: np.ndarray) -> "Masks":
        lay = layout()
        a, n, m = lay.num_actions, lay.max_loops, lay.num_tile_sizes
        flat = flat.astype(bool)
        return cls(kind=flat[:a], tile=flat[a:a + 3 * n * m].reshape(3, n, m),
                   pointer=flat[a + 3 * n * m:])

    def allowed_kinds(self) -> list[str]:
        return [k for k, ok in zip(layout().action_mnemonics, self.kind) if ok]


@dataclass
class Timing:
    """Median-of-k timing of one program (seconds) and its outputs."""

    seconds: list[float]
    outputs: list[np.ndarray]
    inputs: list[np.ndarray] = field(default_factory=list)
    aborted: bool = False  # a call exceeded abort_after_s

    @property
    def median(self) -> float:
        return float(np.median(self.seconds))

    @property
    def spread(self) -> tuple[float, float]:
        return float(np.min(self.seconds)), float(np.max(self.seconds))


def outputs_match(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                  rtol: float = 1e-4, atol_scale: float = 1e-4) -> tuple[bool, float]:
    """Compare outputs with a tolerance for reassociated float sums.

    Returns (match, max absolute error). The absolute tolerance scales with
    the largest reference magnitude: ``atol = atol_scale * max(1, max|ref|)``.
    """
    if len(actual) != len(expected):
        return False, float("inf")
    worst = 0.0
    ok = True
    for a, e in zip(actual, expected):
        if a.shape != e.shape:
            return False, float("inf")
        if a.size == 0:
            continue
        err = float(np.max(np.abs(a - e)))
        worst = max(worst, err)
        atol = atol_scale * max(1.0, float(np.max(np.abs(e))))
        ok &= bool(np.allclose(a, e, rtol=rtol, atol=atol))
    return ok, worst


class Module:
    """A linalg-on-tensors module under scheduling (native ``Program``)."""

    def __init__(self, program: "_core.Program", source: str, name: str):
        self._program = program
        self.source = source
        self.name = name
        self.last_message = ""  # why the last action failed to apply, if it did

    @classmethod
    def parse(cls, text: str, name: str = "<input>") -> "Module":
        try:
            return cls(_core.Program.parse(text, name), text, name)
        except ValueError as e:
            raise ScheduleError(str(e)) from None

    @classmethod
    def load(cls, path: str | Path) -> "Module":
        path = Path(path)
        return cls.parse(path.read_text(), str(path))

    def fresh(self) -> "Module":
        """The same module, unscheduled."""
        return Module.parse(self.source, self.name)

    # Ops, features and masks ---------------------------------------------
    def ops(self) -> list[OpInfo]:
        return [OpInfo(id=o["id"], name=o["name"], kind=o["kind"],
                       function=o["function"], supported=o["supported"],
                       reason=o["reason"], producer=o["producer"],
                       consumers=tuple(o["consumers"]),
                       loop_bounds=tuple(o["loop_bounds"]),
                       iterators=tuple(o["iterators"]),
                       history=tuple(o["history"]), done=o["done"])
                for o in self._program.ops()]

    def traversal_order(self) -> list[int]:
        """Supported op ids, consumers before producers."""
        return list(self._program.traversal_order())

    def observation(self, op_id: int) -> np.ndarray:
        """Features of the op followed by its last producer's (float32)."""
        return self._program.observation(op_id)

    def op_features(self, op_id: int) -> np.ndarray:
        return self._program.op_features(op_id)

    def masks(self, op_id: int) -> Masks:
        return Masks.from_flat(self._program.masks(op_id))

    def flat_masks(self, op_id: int) -> np.ndarray:
        return self._program.masks(op_id)

    # Actions ---------------------------------------------------------------
    def _check(self, status: int, message: str) -> ApplyStatus:
        st = ApplyStatus(status)
        if st == ApplyStatus.ILLEGAL:
            raise IllegalActionError(message)
        return st

    def apply(self, op_id: int, action: str) -> ApplyStatus:
        """Apply one action (e.g. ``"TP(32,64,0)"``) to op ``op_id``.

        Raises IllegalActionError when the masks forbid it; returns FAILED
        when the transformation did not apply (the IR is unchanged).
        """
        return self._check(*self._program.apply(op_id, action))

    def apply_pointer(self, op_id: int, loop: int) -> ApplyStatus:
        """One interchange level-pointer sub-step."""
        return self._check(*self._program.apply_pointer(op_id, loop))

    def apply_schedule(self, schedule: str) -> ApplyStatus:
        """Apply an explicit schedule, e.g. ``"1: TP(32,64,0) T(8,32,1) V"``."""
        status, message = self._program.apply_schedule(schedule)
        self.last_message = message
        return self._check(status, message)

    def decode_and_apply(self, op_id: int, kind, tile, pointer,
                         sample: bool = False, seed: int = 0) -> tuple[ApplyStatus, str]:
        """Decode an actor's logits with the C++ decoder and apply the step.

        Returns (status, decoded step). Decoding only yields legal steps;
        FAILED means the transformation did not apply (the IR is unchanged).
        """
        status, step, message = self._program.decode_and_apply(
            op_id, [float(x) for x in kind], [float(x) for x in tile],
            [float(x) for x in pointer], sample, seed)
        self.last_message = message
        return self._check(status, message), step

    def schedule_with_policy(self, model: str | Path = "", ort_lib: str = "",
                             sample: bool = False, seed: int = 0) -> dict:
        """Schedule every op with an ONNX policy, exactly as the pass does.

        Returns the cost: ops, inferences and their seconds, applications of
        the transform interpreter and their seconds, warnings.
        """
        try:
            return self._program.schedule_with_policy(str(model), ort_lib, sample, seed)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def policy_logits(self, op_id: int, model: str | Path = "",
                      ort_lib: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ONNX policy's (kind, tile, pointer) logits for op ``op_id`` now."""
        try:
            return self._program.policy_logits(op_id, str(model), ort_lib)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    @property
    def schedule(self) -> str:
        """The applied schedule in textual form."""
        return self._program.schedule_text()

    @property
    def transform_script(self) -> str:
        """Transform script that replays the schedule on the original IR."""
        return self._program.transform_script()

    # IR, lowering, timing ----------------------------------------------------
    def ir(self, with_tags: bool = False) -> str:
        return self._program.ir(with_tags)

    def lowered(self) -> str:
        try:
            return self._program.lowered()
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def signature(self, function: str = "") -> dict:
        return self._program.signature(function)

    def time(self, runs: int = 5, warmup: int = 1, threads: int = 1,
             seed: int = 0, function: str = "",
             keep_outputs: bool = True, abort_after_s: float = 0.0) -> Timing:
        """Lower a copy, JIT it, and time ``runs`` calls after ``warmup``.

        ``abort_after_s``: stop after the first call slower than this (the
        result is then ``aborted``, its outputs absent)."""
        try:
            d = self._program.time(runs, warmup, threads, seed, function,
                                   keep_outputs, abort_after_s)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None
        return Timing(seconds=list(d["seconds"]), outputs=list(d["outputs"]),
                      inputs=list(d["inputs"]), aborted=bool(d["aborted"]))


def parse_schedule_entries(schedule: str) -> dict[int, list[str]]:
    """'1: TP(8,8,0) V; 0: NT' -> {1: ['TP(8,8,0)', 'V'], 0: ['NT']} (the
    canonical text the C++ prints; malformed text is the C++ parser's job)."""
    out: dict[int, list[str]] = {}
    for entry in filter(None, (e.strip() for e in schedule.split(";"))):
        op, _, actions = entry.partition(":")
        out.setdefault(int(op), []).extend(actions.split())
    return out


def describe_op(op: OpInfo) -> str:
    loops = "x".join(str(b) for b in op.loop_bounds)
    its = "".join("p" if i == "parallel" else "r" for i in op.iterators)
    prod = f" producer={op.producer}" if op.producer >= 0 else ""
    status = "" if op.supported else f"  [skipped: {op.reason}]"
    return f"{op.id:3d}  {op.name:32s} {op.kind:18s} loops={loops} ({its}){prod}{status}"

