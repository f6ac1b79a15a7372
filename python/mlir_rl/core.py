"""Thin Python wrappers over the native core.

Everything here comes from C++ (``mlir_rl._core``): the feature layout, the
features, the masks, the action kinds, the schedule grammar and the decoder.
The bound classes (:class:`Action`, :class:`Step`, :class:`Masks`,
:class:`OpInfo`, the enums) are used as they are; :class:`Module` only turns
status codes into exceptions and numpy arrays into the shapes the layout
gives them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import numpy as np

from mlir_rl import _core
from mlir_rl._core import (  # noqa: F401  (re-exported)
    Action,
    ActionKind,
    ActionKindInfo,
    ActionParams,
    ApplyStatus,
    DecisionPhase,
    DemonstrationStep,
    Masks,
    OpInfo,
    Step,
    StepOutcome,
)

ActionLike = Union[Action, str]


class ScheduleError(RuntimeError):
    """A schedule or action could not be parsed, lowered or run."""


class IllegalActionError(ScheduleError):
    """The action is masked out for the op in its current state."""


@dataclass(frozen=True)
class Layout:
    """The C++ ``FeatureLayout`` (what the policy sees): limits, sizes,
    offsets, names and its hash; ``raw`` holds every field by name."""

    max_loops: int
    num_tile_sizes: int
    history_length: int
    op_feature_size: int
    observation_size: int
    mask_size: int
    max_steps_per_op: int
    tile_candidates: tuple[int, ...]
    op_kinds: tuple[str, ...]
    hash: str
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def num_actions(self) -> int:
        return len(ActionKind.__members__)

    @property
    def num_tiled_kinds(self) -> int:
        return self.raw["num_tiled_kinds"]

    @property
    def step_size(self) -> int:
        """Length of one decision's indices: [kind, tile per loop, pointer]."""
        return 2 + self.max_loops


@functools.lru_cache(maxsize=1)
def layout() -> Layout:
    """The observation layout compiled into the native core."""
    d = _core.layout()
    return Layout(
        max_loops=d["max_loops"], num_tile_sizes=d["num_tile_sizes"],
        history_length=d["history_length"], op_feature_size=d["op_feature_size"],
        observation_size=d["observation_size"], mask_size=d["mask_size"],
        max_steps_per_op=d["max_steps_per_op"],
        tile_candidates=tuple(d["tile_candidates"]), op_kinds=tuple(d["op_kinds"]),
        hash=d["hash"], raw=dict(d))


@functools.lru_cache(maxsize=1)
def legality() -> dict:
    """The legality config (the action space's limits, versioned apart from
    the layout): limits, description and hash."""
    return dict(_core.legality())


@functools.lru_cache(maxsize=1)
def action_kinds() -> tuple[ActionKindInfo, ...]:
    """Every action kind's properties (ActionKinds.def), in index order."""
    return tuple(_core.action_kinds())


def kind_info(kind: ActionKind) -> ActionKindInfo:
    return action_kinds()[int(kind)]


def parse_action(text: str) -> Action:
    """``'TP(32,64,0)'`` -> Action (the C++ grammar; ScheduleError if malformed)."""
    try:
        return Action.parse(text)
    except ValueError as e:
        raise ScheduleError(str(e)) from None


def parse_schedule(text: str, with_choices: bool = False) -> list[tuple]:
    """The C++ schedule grammar: ``[(op id or None, [Action, ...]), ...]``;
    ``with_choices``: each entry with its rule choices as a third element,
    ``{"pack": 0, ...}`` (the ``{...}`` after its actions). Without it, a
    schedule that has choices raises ScheduleError rather than lose them."""
    try:
        entries = _core.parse_schedule(text)
    except ValueError as e:
        raise ScheduleError(str(e)) from None
    if with_choices:
        return [(i, a, dict(c)) for i, a, c in entries]
    if any(c for _, _, c in entries):
        raise ScheduleError(f"the schedule {text!r} has rule choices: "
                            "parse_schedule(text, with_choices=True) keeps them")
    return [(i, a) for i, a, _ in entries]


def format_schedule(entries: Sequence[tuple], prelude: Optional[str] = None) -> str:
    """:func:`parse_schedule`'s inverse (the grammar is C++'s): entries
    ``(op id or None, actions)`` or ``(op id or None, actions, choices)``;
    with ``prelude``, a trace (``[passes] entries``)."""
    try:
        return _core.format_schedule(
            [(e[0], list(e[1]), sorted(dict(e[2]).items()) if len(e) > 2 else [])
             for e in entries], prelude)
    except ValueError as e:
        raise ScheduleError(str(e)) from None


def schedule_prelude(text: str) -> Optional[str]:
    """A trace's prelude, the passes that ran before its decisions (the text
    between its brackets; None for a schedule without them)."""
    try:
        return _core.schedule_prelude(text)
    except ValueError as e:
        raise ScheduleError(str(e)) from None


def schedule_header(schedule: str) -> str:
    """The first line of a ``dump-schedule`` file."""
    return _core.schedule_header(schedule)


def read_schedule_header(text: str) -> Optional[str]:
    """The schedule recorded in a ``dump-schedule`` file (None if absent)."""
    return _core.read_schedule_header(text)


def prior_logits(name: str, observations: np.ndarray):
    """The prior ``name``'s logits (``"heuristic"``: the heuristic's, each at
    least the C++ ``kPriorFloor``) for observations (B, observation size):
    kind (B, A), tile (B, T*N*M) and pointer (B, N), the values the pass
    adds to a residual policy's logits. Raises ValueError for an unknown
    prior or a wrong observation size."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    if obs.ndim == 1:
        obs = obs[None, :]
    return _core.prior_logits(name, obs)


def default_model_path() -> Path:
    """The policy the pass uses when ``model=`` is not given."""
    return Path(_core.default_model_path())


def lowering_pipeline() -> str:
    """The lowering pipeline (also the ``mlir-rl-lower`` pass pipeline)."""
    return _core.lowering_pipeline()


def read_text(path: str | Path) -> str:
    """A file's text; not UTF-8 is a ScheduleError, not a traceback."""
    path = Path(path)
    try:
        return path.read_text()
    except UnicodeDecodeError as e:
        raise ScheduleError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def prepare_pipeline() -> str:
    """The front end for imported IR (also the ``mlir-rl-prepare`` pipeline)."""
    return _core.prepare_pipeline()


def prepare(text: str, name: str = "<input>", steps: Optional[str] = None) -> str:
    """``text`` through ``mlir-rl-prepare``: elementwise chains fused into one
    op, pads folded into their producers, one init per consumer. Run it on
    imported models before scheduling. ``steps``: the front end's passes as
    pipeline text instead (``front_end_steps()`` with options changed); the
    module is marked as prepared all the same. Raises ScheduleError if the
    text does not parse or the pipeline fails."""
    if steps is not None:
        try:
            return _core.prepare_with(text, steps, name)
        except ValueError as e:
            raise ScheduleError(str(e)) from None
    return _prepare_text(text, name)


def front_end_steps() -> str:
    """The passes ``mlir-rl-prepare`` runs, as pipeline text."""
    return _core.front_end_steps()


#: The schedule pipeline's stages, as linalg-rl-schedule's options of the
#: same names (with ``_`` for ``-``): the front end's, then the rules'.
PIPELINE_STAGES = ("compute_in_f32", "bf16_dot", "fuse_elementwise", "rewrite_windows",
                   "pad_to_tiles", "flatten_elementwise", "pack_rhs", "min_rows_to_copy",
                   "register_tiles", "copies_by_rule")


def pipeline_settings(pipeline: Optional["_core.PipelineSettings | str"] = None,
                      **stages) -> "_core.PipelineSettings":
    """The schedule pipeline's settings: the pass's defaults (held in C++,
    every stage on), or ``pipeline`` (settings, or ``"none"``: every stage
    off, decisions on the module as given), with ``stages`` changed
    (``rewrite_windows=False``, ...; None keeps a stage as it is)."""
    if pipeline is None or pipeline == "default":
        settings = _core.PipelineSettings()
    elif pipeline == "none":
        settings = _core.PipelineSettings.none()
    elif isinstance(pipeline, _core.PipelineSettings):
        settings = _core.PipelineSettings()
        for name in PIPELINE_STAGES:
            setattr(settings, name, getattr(pipeline, name))
    else:
        raise ValueError(f"unknown pipeline {pipeline!r} (settings, 'default' or 'none')")
    for name, value in stages.items():
        if name not in PIPELINE_STAGES:
            raise TypeError(f"unknown pipeline stage {name!r} (stages: {', '.join(PIPELINE_STAGES)})")
        if value is not None:
            setattr(settings, name, value)
    return settings


def front_end(text: str, name: str = "<input>", pipeline=None, **stages) -> str:
    """``text`` as the decisions see it: the schedule pipeline's front end
    without the scheduling (every stage of :func:`pipeline_settings` that is
    on: elementwise chains fused, 2-D convolutions as im2col + matmul,
    poolings and NCHW depthwise convolutions as elementwise ops over strided
    views, odd extents padded to full tiles, elementwise ops flattened).
    Raises ScheduleError if the text does not parse or a step fails."""
    try:
        return _core.front_end(text, name, pipeline_settings(pipeline, **stages))
    except ValueError as e:
        raise ScheduleError(str(e)) from None


def _prepare_text(text: str, name: str) -> str:
    # Module.load's `prepare` flag shadows prepare() there.
    try:
        return _core.prepare(text, name)
    except ValueError as e:
        raise ScheduleError(str(e)) from None


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


#: The relative tolerance of outputs of these element types (torch.testing's):
#: a bf16 or f16 program computed in f32 in another order, rounded where it
#: stores, is a few units in the last place from the reference.
LOW_PRECISION_RTOL = {"bf16": 1.6e-2, "f16": 1e-3}


def output_rtol(element_types: Sequence[str], default: float = 1e-4) -> float:
    """outputs_match's tolerance for outputs of ``element_types`` (the JIT's
    names: "f32", "bf16", ...): ``default``, or the loosest low-precision
    type's."""
    return max([default] + [LOW_PRECISION_RTOL.get(t, 0.0) for t in element_types])


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


Logits = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(kind [A], tile [T*N*M] or [T, N, M], pointer [N]) logits of the policy heads."""

PolicyCallable = Callable[[np.ndarray, np.ndarray], Logits]
"""A policy: (observation, flat mask) -> logits."""

StepCallback = Callable[[int, "Step", str], None]
"""Told (op id, decoded step, the schedule so far) before a step is applied."""


class Module:
    """A linalg-on-tensors module under scheduling (native ``Program``)."""

    def __init__(self, program: "_core.Program", source: str, name: str):
        self._program = program
        self.source = source
        self.name = name
        self.last_message = ""  # why the last action failed to apply, if it did

    @classmethod
    def parse(cls, text: str, name: str = "<input>", front_end: bool = False) -> "Module":
        """``text`` as a module; ``front_end``: through the schedule
        pipeline's front end (:meth:`run_front_end`, the pass's defaults),
        the module the decisions are taken on."""
        try:
            module = cls(_core.Program.parse(text, name), text, name)
        except ValueError as e:
            raise ScheduleError(str(e)) from None
        if front_end:
            module.run_front_end()
        return module

    @classmethod
    def load(cls, path: str | Path, prepare: bool = False) -> "Module":
        """The module in ``path``; ``prepare``: through ``mlir-rl-prepare``
        first (imported models)."""
        text = read_text(path)
        if prepare:
            text = _prepare_text(text, str(path))
        return cls.parse(text, str(path))

    def fresh(self) -> "Module":
        """The same module, unscheduled."""
        return Module.parse(self.source, self.name)

    # Ops, features and masks ---------------------------------------------
    def ops(self) -> list[OpInfo]:
        return self._program.ops()

    def op(self, op_id: int) -> OpInfo:
        ops = self.ops()
        if not 0 <= op_id < len(ops):
            raise IndexError(f"no op {op_id} in {self.name} ({len(ops)} linalg ops)")
        return ops[op_id]

    def traversal_order(self) -> list[int]:
        """Supported op ids, consumers before producers."""
        return list(self._program.traversal_order())

    def next_op(self) -> Optional[int]:
        """The op the next decision is for (None when every op is done)."""
        op = self._program.next_op()
        return None if op < 0 else op

    def step_budget(self) -> int:
        """Decisions an episode over this module may take at most."""
        return self._program.step_budget()

    def observation(self, op_id: int) -> np.ndarray:
        """Features of the op followed by its last producer's (float32)."""
        return self._program.observation(op_id)

    def op_features(self, op_id: int) -> np.ndarray:
        return self._program.op_features(op_id)

    def op_unit(self, op_id: int) -> str:
        """The op cut out as a module of its own, as compile-time tuning
        measures it: the op, the producer fused into it and their fills;
        every other value it uses becomes an argument. ScheduleError where
        it cannot be cut out (a non-tensor operand, an op fused into its
        consumer's tiles)."""
        try:
            return self._program.op_unit(op_id)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def masks(self, op_id: int) -> Masks:
        """Legal choices for the op now (named parts; ``.flat()`` for a policy)."""
        return self._program.masks(op_id)

    # Actions ---------------------------------------------------------------
    def _check(self, status: ApplyStatus, message: str) -> ApplyStatus:
        self.last_message = message
        if status == ApplyStatus.ILLEGAL:
            raise IllegalActionError(message)
        return status

    def apply(self, op_id: int, action: ActionLike) -> ApplyStatus:
        """Apply one action (an :class:`Action` or its text, e.g. ``"TP(32,64,0)"``).

        Raises IllegalActionError when the masks forbid it; returns FAILED
        when the transformation did not apply (the IR is unchanged).
        """
        try:
            return self._check(*self._program.apply(op_id, action))
        except ValueError as e:  # malformed action text
            raise IllegalActionError(str(e)) from None

    def apply_pointer(self, op_id: int, loop: int) -> ApplyStatus:
        """One interchange level-pointer sub-step."""
        return self._check(*self._program.apply_pointer(op_id, loop))

    def apply_schedule(self, schedule: str) -> ApplyStatus:
        """Apply an explicit schedule, e.g. ``"1: TP(32,64,0) T(8,32,1) V"``,
        or a trace (:attr:`schedule`: its passes run first)."""
        return self._check(*self._program.apply_schedule(schedule))

    def apply_decisions(self, decisions: str) -> ApplyStatus:
        """The schedule pipeline around ``decisions`` (a schedule in the
        front end's op ids, as :attr:`decisions` gives them), as the pass
        ships them: the front end, the decisions, the rules. A trace
        (``[passes] ...``) is replayed as it is."""
        if decisions.lstrip().startswith("["):
            return self.apply_schedule(decisions)
        self.run_front_end()
        status = self.apply_schedule(decisions)
        if status != ApplyStatus.FAILED:
            self.apply_rules()
        return status

    def step(self, op_id: int, indices: Sequence[int]) -> StepOutcome:
        """Take the decision with these indices ``[kind, tile per loop,
        pointer]`` as the C++ decoder reads them (an illegal choice falls back
        as decoding does). ``outcome.step``/``outcome.indices`` say what was
        executed; FAILED means it did not apply (the IR is unchanged)."""
        outcome = self._program.step(op_id, [int(i) for i in indices])
        self._check(outcome.status, outcome.message)
        return outcome

    def decode(self, op_id: int, logits: Logits, sample: bool = False,
               seed: int = 0) -> Step:
        """The C++ decoder's step for these logits (not applied)."""
        kind, tile, pointer = (np.asarray(x, np.float32).reshape(-1) for x in logits)
        try:
            return self._program.decode(op_id, kind, tile, pointer, sample, seed)
        except ValueError as e:
            raise ScheduleError(str(e)) from None

    def encode(self, step: Step) -> np.ndarray:
        """A step's indices ``[kind, tile per loop, pointer]``."""
        return self._program.encode(step)

    def decode_and_apply(self, op_id: int, logits: Logits, sample: bool = False,
                         seed: int = 0) -> tuple[ApplyStatus, Step]:
        """Decode logits as the pass does and apply the step."""
        step = self.decode(op_id, logits, sample, seed)
        outcome = self.step(op_id, self.encode(step))
        return outcome.status, outcome.step

    def demonstrate(self, schedule: str) -> list[DemonstrationStep]:
        """Replay ``schedule`` on this (unscheduled) module; every decision
        with its observation, mask and indices (ops it leaves incomplete get
        NT). The encoder for demonstrations."""
        try:
            return self._program.demonstrate(schedule)
        except ValueError as e:
            raise ScheduleError(str(e)) from None

    def run_front_end(self, pipeline=None, **stages) -> None:
        """Stage 1 of the schedule pipeline on this module: the front end's
        stages (:func:`pipeline_settings`), before the first decision, once.
        Op ids are then those of the rewritten module. An environment does
        this before its decisions, so that they are taken on what the pass
        decides on."""
        try:
            self._program.run_front_end(pipeline_settings(pipeline, **stages))
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def apply_rules(self, pipeline=None, decisions: str = "policy",
                    model: str | Path = "", ort_lib: str = "", **stages) -> dict:
        """Stage 3 of the schedule pipeline, after the decisions (once): the
        post-decision rules (:func:`pipeline_settings`: ``pack_rhs``,
        ``register_tiles``, ``copies_by_rule``) schedule the module again from
        its state before the decisions, each op by its decision translated;
        copies of right-hand sides that no rule schedules are decided by
        ``decisions``. Returns ``packed``, ``register_tiled``,
        ``copies_by_rule`` and ``not_rescheduled`` (why not, when there were
        candidates)."""
        try:
            return self._program.apply_rules(pipeline_settings(pipeline, **stages),
                                             decisions, str(model), ort_lib)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def rule_choice_mask(self, op_id: int) -> dict[str, list[int]]:
        """The post-decision rules' choices op ``op_id`` offers (keys of the
        schedule grammar's ``{...}``: ``pack``, B packed into panels, 0/1;
        ``rt``, the register tile's rows at most, 0 none; ``rule``, a copy,
        fill or elementwise op by rule or by its decision, 0/1; ``fuse``, an
        accumulator's fill in its consumer's tiles, 0/1): each with the values
        it may take, the last the rule's default. Empty where no rule decides
        anything for the op, or once the rules ran."""
        return {k: list(v) for k, v in self._program.rule_choice_mask(op_id)}

    def choose(self, op_id: int, **choices: int) -> None:
        """Record rule choices for op ``op_id`` (``choose(3, pack=0)``), as a
        decision source does: the rules (:meth:`apply_rules`) follow them.
        Raises IllegalActionError for a value the mask does not offer."""
        self._check(*self._program.set_rule_choices(
            op_id, [(k, int(v)) for k, v in choices.items()]))

    @property
    def rule_choices(self) -> dict[int, dict[str, int]]:
        """Every op's rule choices so far (:meth:`choose`, a random draw, a
        ``{...}`` in an applied schedule): ``{op id: {key: value}}``."""
        out: dict[int, dict[str, int]] = {}
        for op, key, value in self._program.rule_choices():
            out.setdefault(op, {})[key] = value
        return out

    def draw_rule_choices(self, seed: int) -> None:
        """Every op's rule choices drawn uniformly from its mask (under the
        shipped rules), as ``decisions=random`` draws them."""
        self._program.draw_rule_choices(seed)

    @property
    def rules_applied(self) -> bool:
        """Whether the rules (:meth:`apply_rules`) rescheduled the module."""
        return self._program.rules_applied

    def schedule_with_policy(self, model: str | Path = "", ort_lib: str = "",
                             sample: bool = False, seed: int = 0,
                             on_step: Optional[StepCallback] = None,
                             decisions: str = "policy", pipeline=None,
                             rules: bool = True, **stages) -> dict:
        """Schedule the module exactly as the pass does without a schedule:
        the schedule pipeline's front end, every op decided, the rules.

        ``decisions`` (the pass's ``decisions=``): ``policy`` (the ONNX
        policy ``model``), ``heuristic`` (a documented non-learned default:
        the outer parallel loops split into at least 8 tiles, the inside
        tiled for vectors, vectorized) or ``random`` (mask-legal random
        decisions drawn with ``seed``); everything else is the same.

        ``pipeline``, ``stages``: the stages (:func:`pipeline_settings`;
        the pass's defaults: all on). The front end (``fuse_elementwise``,
        ``rewrite_windows``, ``pad_to_tiles``, ``flatten_elementwise``)
        runs before the first decision; op ids are then those of the
        rewritten module. The rules run after the decisions: ``pack_rhs``
        stores the B of matmuls as panels (constants at compile time,
        others by a copy where the matmul has at least ``min_rows_to_copy``
        rows), each op by its decision on the plain form; ``register_tiles``
        gives matmuls that stay plain a register tile under their decided
        tiling; ``copies_by_rule`` schedules copies whose rows are
        contiguous on both sides, fills and flattened elementwise ops by
        rule, and fuses a fill that only initialises an accumulator into its
        consumer's tiles (the consumer's TP becomes a TF).
        ``pipeline="none"``: the module as the decisions left it.
        ``rules=False``: the front end and the decisions, not the rules
        (what a measurer of decisions takes: :class:`ExecConfig` runs the
        rules itself).

        Returns the cost: ops, inferences and their seconds, applications of
        the transform interpreter and their seconds, warnings; ``packed``:
        the matmuls packed, ``register_tiled``: the plain ones given a
        register tile, ``copies_by_rule``: the copies and fills scheduled by rule,
        ``not_rescheduled``: why none of it happened, if there were
        candidates.
        ``on_step(op_id, step, schedule_so_far)`` is called before each step
        is applied.
        """
        settings = pipeline_settings(pipeline, **stages)
        if not rules:
            settings.pack_rhs = settings.register_tiles = settings.copies_by_rule = False
        try:
            return self._program.schedule_with_policy(str(model), ort_lib, sample, seed,
                                                      on_step, settings, decisions)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def schedule_with(self, policy: PolicyCallable, sample: bool = False,
                      seed: int = 0, on_step: Optional[StepCallback] = None,
                      pipeline=None, rules: bool = True, **stages) -> dict:
        """Schedule the module through the schedule pipeline with a Python
        policy (e.g. a PyTorch actor), driven by the same C++ loop as the
        pass: ``policy(observation, mask)`` returns (kind, tile, pointer)
        logits. ``pipeline``, ``rules``, ``stages``: as
        :meth:`schedule_with_policy`."""
        settings = pipeline_settings(pipeline, **stages)
        if not rules:
            settings.pack_rhs = settings.register_tiles = settings.copies_by_rule = False
        try:
            return self._program.schedule_with(policy, sample, seed, on_step, settings)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def policy_logits(self, op_id: int, model: str | Path = "",
                      ort_lib: str = "") -> Logits:
        """The ONNX policy's (kind, tile, pointer) logits for op ``op_id`` now."""
        try:
            return self._program.policy_logits(op_id, str(model), ort_lib)
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    @property
    def schedule(self) -> str:
        """The trace: the passes the pipeline ran before the decisions (its
        front end, the rules' packing) in brackets, then the applied
        schedule, ``"[pass,...] 1: TP(32,64,0) T(8,32,1) V; 0: NT"``
        (without passes, the schedule alone). :meth:`apply_schedule` and the
        pass's ``schedule=`` replay it on the same input."""
        return self._program.schedule_text()

    @property
    def provenance(self) -> list[tuple[int, str, str]]:
        """Every applied action with where it came from, in the traversal
        order: ``(op id, action, source)``; source ``policy`` (``, sampled``),
        ``heuristic``, ``random``, ``explicit``, ``environment``, ``search``,
        ``tuning database``, ``rule...`` or ``<decision>, translated by the
        rules`` (dump-schedule's comments show the same)."""
        return [tuple(p) for p in self._program.provenance()]

    @property
    def decisions(self) -> str:
        """The applied schedule alone, in the current module's op ids."""
        return self._program.decision_text()

    @property
    def transform_script(self) -> str:
        """Transform script that replays the schedule on the original IR."""
        return self._program.transform_script()

    def dump(self) -> str:
        """The ``dump-schedule`` file of the pass: header and replay script."""
        return schedule_header(self.schedule) + self.transform_script

    # IR, lowering, timing ----------------------------------------------------
    def ir(self, with_tags: bool = False) -> str:
        return self._program.ir(with_tags)

    def verify(self) -> tuple[bool, str]:
        """Whether the current IR verifies, and the verifier's messages."""
        return self._program.verify()

    def lowered(self) -> str:
        try:
            return self._program.lowered()
        except RuntimeError as e:
            raise ScheduleError(str(e)) from None

    def signature(self, function: str = "") -> dict:
        return self._program.signature(function)

    def compile(self, threads: int = 1, function: str = "") -> "_core.JitFunction":
        """Lower a copy (its arguments read-only) and JIT it once: a
        callable to time many times (``JitFunction.time``) on the inputs
        ``random_inputs(seed)`` gives, the inputs ``time`` uses."""
        try:
            return _core.compile_function(self.ir(), function, threads)
        except (ValueError, RuntimeError) as e:
            raise ScheduleError(str(e)) from None

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


def describe_op(op: OpInfo) -> str:
    loops = "x".join(str(b) for b in op.loop_bounds)
    its = "".join("p" if i == "parallel" else "r" for i in op.iterators)
    prod = f" producer={op.producer}" if op.producer >= 0 else ""
    status = "" if op.supported else f"  [skipped: {op.reason}]"
    return f"{op.id:3d}  {op.name:32s} {op.kind:18s} loops={loops} ({its}){prod}{status}"
