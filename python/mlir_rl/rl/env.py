"""A Gymnasium environment for scheduling linalg programs (MLIR RL).

Everything the agent sees and does is C++: the features, the masks, and
what an action means (an index-based step decodes exactly as the pass's
decoder does). This module only sequences the episode and asks the
:class:`~mlir_rl.measure.measurer.Measurer` for rewards.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mlir_rl import _core
from mlir_rl.core import Action, ActionKind, ApplyStatus, DecisionPhase, Module, layout
from mlir_rl.measure.measurer import MeasureConfig, Measurer
from mlir_rl.measure.memo import Measurement


@dataclass
class EnvConfig:
    """Environment options."""

    reward: str = "final"
    """'final': log speedup of the whole program at the end (paper default);
    'immediate': after each op's schedule completes, log(previous time / new time)."""
    penalty: float = -3.0
    """Reward of a schedule that fails to apply, compile, gives wrong output or
    exceeds the measurement's slowdown limit."""
    fallback_penalty: float = 0.0
    """Extra reward for indices that are not legal as given (the step then
    falls back as the decoder does)."""
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    """How rewards are measured (runs, threads, limits, the memo)."""


class LinalgScheduleEnv(gym.Env):
    """Schedule a linalg-on-tensors program, op by op, consumer to producer.

    ## Description
    Each episode is one program of the dataset. Its supported linalg ops are
    visited consumer -> producer; for the current op the agent picks
    transformations until the op's schedule is complete (vectorization, no
    transformation, or tau actions), then the next op comes. The schedule
    is applied with the transform dialect by the same C++ as the
    ``linalg-rl-schedule`` pass.

    ## Action Space
    ``MultiDiscrete([A] + [M] * N + [N])`` (A transformations, N loops, M tile
    candidates; sizes from the C++ layout):

    | index | meaning |
    |-------|---------|
    | 0 | transformation (``mlir_rl.ActionKind`` order) |
    | 1..N | for tiled kinds: the tile candidate of loop i-1 (0 = not tiled) |
    | N+1 | for interchange, and while one is being chosen: the next level pointer |

    A step means what the pass's decoder (C++ ``decodeStep``) makes of
    indicator logits at these indices: a legal choice is executed as given;
    an illegal one falls back as decoding does (the next allowed kind, the
    first allowed size or pointer). ``info["executed"]`` holds the indices of
    what was executed and ``info["fallback"]`` whether they differ.

    ## Observation Space
    ``Dict(observation=Box(observation_size), action_mask=MultiBinary(mask_size),
    phase=Discrete(3), unsplit=MultiBinary(T * N * M))``: the op's features
    then its last producer's (C++ ``FeatureLayout``), the flat masks, which
    decision is asked for (``mlir_rl.DecisionPhase``: a transformation, an
    interchange level pointer, or none: the episode is over), and the tile
    choices that split no loop (what decoding's skipping of a kind that needs
    a split is computed from: ``action_log_prob``). ``decode(logits)`` turns a
    policy's logits into an action with the C++ decoder.

    ## Rewards
    ``final`` (default): 0 until the last step, then
    ``log(baseline time / scheduled time)`` of the whole program, or
    ``penalty`` if the schedule fails to apply or compile, gives outputs that
    differ from the unscheduled program's, or runs past the slowdown limit.
    ``immediate``: the log speedup gained by each op's schedule, when it
    completes. Measurements are memoized.

    ## Starting State
    A program drawn from the dataset with ``self.np_random`` (or
    ``options={"index": i}``), unscheduled, at its last consumer.

    ## Episode End
    ``terminated``: every op's schedule is complete. ``truncated``: the step
    budget (C++ ``getStepBudget``) ran out.

    ## Arguments
    ``programs``: (name, MLIR text) pairs; ``config``: :class:`EnvConfig`.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, programs: Sequence[tuple[str, str]],
                 config: Optional[EnvConfig] = None, render_mode: Optional[str] = None):
        super().__init__()
        if not programs:
            raise ValueError("the environment needs at least one program")
        self.programs = list(programs)
        self.config = config or EnvConfig()
        self.render_mode = render_mode
        lay = self.lay = layout()
        self.action_space = spaces.MultiDiscrete(
            [lay.num_actions] + [lay.num_tile_sizes] * lay.max_loops + [lay.max_loops])
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(-1e9, 1e9, (lay.observation_size,), np.float32),
            "action_mask": spaces.MultiBinary(lay.mask_size),
            "phase": spaces.Discrete(len(DecisionPhase.__members__)),
            "unsplit": spaces.MultiBinary(lay.raw["tile_mask_size"]),
        })
        self.measurer = Measurer(self.config.measure)
        self.module: Optional[Module] = None
        self.stats = {"failures": 0, "fallbacks": 0}

    # -- Episode -----------------------------------------------------------
    def _observe(self) -> dict[str, Any]:
        op = self.module.next_op()
        if op is None:
            return {"observation": np.zeros(self.lay.observation_size, np.float32),
                    "action_mask": _core.terminal_mask().astype(np.int8),
                    "phase": int(DecisionPhase.DONE),
                    "unsplit": np.ones(self.lay.raw["tile_mask_size"], np.int8)}
        masks = self.module.masks(op)
        return {"observation": self.module.observation(op).astype(np.float32),
                "action_mask": masks.flat().astype(np.int8),
                "phase": int(masks.phase),
                "unsplit": masks.unsplit.reshape(-1).astype(np.int8)}

    def decode(self, logits, sample: bool = False, seed: int = 0) -> np.ndarray:
        """What the C++ decoder makes of a policy's logits for the current op,
        as this environment's action (greedy, or sampled with ``seed``)."""
        op = self.module.next_op()
        if op is None:
            raise RuntimeError("the episode is over: no op to decide for")
        return self.module.encode(self.module.decode(op, logits, sample, seed))

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        super().reset(seed=seed)
        options = options or {}
        index = options.get("index")
        if index is None:
            index = int(self.np_random.integers(len(self.programs)))
        self.program_index = index
        self.name, self.text = self.programs[index]
        # The decisions are taken on what the pass decides on: the module
        # after the schedule pipeline's front end (the measurer adds the
        # rules after them, as the pass does).
        self.module = Module.parse(self.text, self.name,
                                   front_end=self.config.measure.exec.pipeline != "none")
        self._steps = 0
        self._max_steps = self.module.step_budget()
        self._last_time: Optional[float] = None
        return self._observe(), {"program": self.name, "op": self.module.next_op()}

    def _final(self) -> tuple[float, Measurement]:
        """Reward of the whole schedule, from one measurement."""
        m = self.measurer.measure(self.text, self.module.decisions)
        s = self.measurer.speedup(self.text, m)
        if s <= 0:
            self.stats["failures"] += 1
            return self.config.penalty, m
        return math.log(s), m

    def step(self, action):
        op = self.module.next_op()
        reward = 0.0
        info: dict[str, Any] = {"program": self.name}
        if op is not None:
            self._steps += 1
            outcome = self.module.step(op, np.asarray(action, dtype=np.int64))
            info.update(executed=np.asarray(outcome.indices), fallback=outcome.fallback,
                        step=str(outcome.step),
                        failed_to_apply=outcome.status == ApplyStatus.FAILED)
            if outcome.status == ApplyStatus.FAILED:
                # As the pass: an action that does not apply ends the op.
                self.module.apply(op, Action(ActionKind.NO_TRANSFORMATION))
            if outcome.fallback:
                self.stats["fallbacks"] += 1
                reward += self.config.fallback_penalty
        finished_op = op is not None and self.module.op(op).done
        nxt = self.module.next_op()
        terminated = nxt is None
        truncated = not terminated and self._steps >= self._max_steps
        info["op"] = nxt
        m: Optional[Measurement] = None
        if self.config.reward == "immediate" and finished_op:
            m = self.measurer.measure(self.text, self.module.decisions)
            base = self.measurer.baseline(self.text)
            if m.ok and base.ok:
                prev = self._last_time or base.median_s
                reward += math.log(prev / m.median_s)
                self._last_time = m.median_s
            else:
                self.stats["failures"] += 1
                reward += self.config.penalty
        if terminated or truncated:
            if self.config.reward == "immediate":
                m = m or self.measurer.measure(self.text, self.module.decisions)
            else:
                r, m = self._final()
                reward += r
            info.update(schedule=self.module.decisions, status=m.status,
                        speedup=self.measurer.speedup(self.text, m))
        return self._observe(), float(reward), terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi" and self.module is not None:
            return f"{self.name}: {self.module.schedule or '(nothing yet)'}"
        return None

    def close(self):
        self.measurer.close()


def register() -> None:
    """Register ``mlir_rl/LinalgSchedule-v0`` with Gymnasium."""
    if "mlir_rl/LinalgSchedule-v0" not in gym.registry:
        gym.register(id="mlir_rl/LinalgSchedule-v0",
                     entry_point="mlir_rl.rl.env:LinalgScheduleEnv")


register()
