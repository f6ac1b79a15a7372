"""A Gymnasium environment for scheduling linalg programs (MLIR RL).

Everything the agent sees comes from C++ (features, masks, action
semantics); this module only sequences the episode and measures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mlir_rl.cache import Measurement, MeasurementCache, host_fingerprint, module_hash
from mlir_rl.core import ApplyStatus, Module, layout
from mlir_rl.executor import ExecConfig, Executor


@dataclass
class EnvConfig:
    """Environment options."""

    reward: str = "final"
    """'final': log speedup of the whole program at the end (paper default);
    'immediate': after each op's schedule completes, log(previous time / new time)."""
    penalty: float = -3.0
    """Reward of a schedule that fails to apply, compile, gives wrong output or
    exceeds ``slowdown_limit`` x the baseline time."""
    illegal_penalty: float = 0.0
    """Extra reward for an action outside the masks (it is replaced by NT)."""
    exec: ExecConfig = field(default_factory=ExecConfig)
    cache_path: Optional[str] = None
    """SQLite memo of measurements (None: no cache)."""


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
    ``MultiDiscrete([A] + [M] * N + [N])`` (A = 6 transformations, N = 12
    loops, M = 8 tile candidates):

    | index | meaning |
    |-------|---------|
    | 0 | transformation: 0 T, 1 TP, 2 TF, 3 I, 4 V, 5 NT |
    | 1..N | for T/TP/TF: the tile candidate of loop i-1 (0 = not tiled) |
    | N+1 | for I, and while an interchange is being chosen: the next level pointer (loop) |

    While an interchange is incomplete, only index N+1 is read. An action
    outside ``action_mask`` is replaced by NT for the current op.

    ## Observation Space
    ``Dict(observation=Box(observation_size), action_mask=MultiBinary(mask_size))``:
    the op's features then its last producer's (C++ ``FeatureLayout``), and
    the masks ``[kind (A), tile (3 x N x M), pointer (N)]``.

    ## Rewards
    ``final`` (default): 0 until the last step, then
    ``log(baseline time / scheduled time)`` of the whole program, or
    ``penalty`` if the schedule fails to apply or compile, gives outputs that
    differ from the unscheduled program's, or runs past ``slowdown_limit`` x
    the baseline. ``immediate``: the log speedup gained by each op's schedule,
    when it completes. Measurements are memoized in SQLite.

    ## Starting State
    A program drawn from the dataset with ``self.np_random`` (or
    ``options={"index": i}``), unscheduled, at its last consumer.

    ## Episode End
    ``terminated``: every op's schedule is complete. ``truncated``: the step
    budget (tau x (N + 1) per op) ran out.

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
        })
        self.host = host_fingerprint(self.config.exec.threads)
        self.cache = MeasurementCache(self.config.cache_path) if self.config.cache_path else None
        self.executor: Optional[Executor] = None
        self._baselines: dict[str, Measurement] = {}
        self._references: dict[str, list] = {}
        self.module: Optional[Module] = None
        self.stats = {"measurements": 0, "failures": 0, "illegal": 0}

    # -- Measurements ------------------------------------------------------
    def _executor(self) -> Executor:
        if self.executor is None:
            self.executor = Executor(self.config.exec)
        return self.executor

    def _timeout(self, baseline: Optional[Measurement]) -> float:
        c = self.config.exec
        base = baseline.median_s if baseline and baseline.ok else 10.0
        return c.compile_budget_s + (c.warmup + c.runs) * c.slowdown_limit * base

    def baseline(self, text: str) -> Measurement:
        h = module_hash(text)
        if h in self._baselines:
            return self._baselines[h]
        m = self.cache.get(h, "", self.host) if self.cache is not None else None
        if m is None:
            m, outputs = self._executor().measure(text, "", self._timeout(None))
            self.stats["measurements"] += 1
            if outputs is not None:
                self._references[h] = outputs
            if self.cache is not None:
                self.cache.put(h, "", self.host, m)
        self._baselines[h] = m
        return m

    def measure(self, text: str, schedule: str,
                cut_at: Optional[float] = None) -> Measurement:
        """The scheduled program's time (memoized), its output checked.

        ``cut_at``: a search's shortcut — stop a candidate as soon as one call
        is slower than ``cut_at`` x the baseline (it cannot be the best); the
        result is then ``cut`` and its time a lower bound. The memo keeps it
        as such: a later search with a cut below that bound reuses it, a
        measurement without a cut (training, the policy) measures again."""
        h = module_hash(text)
        base = self.baseline(text)
        if not schedule:
            return base
        cached = self.cache.get(h, schedule, self.host) if self.cache is not None else None
        if cached is not None and cached.status == "cut":
            if cut_at is not None and base.ok and cached.median_s >= cut_at * base.median_s:
                return cached
            cached = None
        if cached is not None:
            return cached
        if h not in self._references:  # baseline came from the cache
            _, outputs = self._executor().measure(text, "", self._timeout(base))
            self._references[h] = outputs
        c = self.config.exec
        cutting = cut_at is not None and cut_at < c.slowdown_limit
        factor = cut_at if cutting else c.slowdown_limit
        # Microsecond kernels get a floor: timer noise is not a slowdown.
        full_limit = max(c.slowdown_limit * base.median_s, 0.02) if base.ok else 0.0
        limit = max(factor * base.median_s, 0.02) if base.ok else 0.0
        timeout = self._timeout(base)
        if cutting and base.ok:
            # A cut candidate's worker is also killed sooner when one call hangs.
            timeout = min(timeout, 20.0 + 3 * (c.warmup + c.runs) * limit)
        m, _ = self._executor().measure(text, schedule, timeout,
                                        reference=self._references.get(h),
                                        abort_after_s=limit)
        self.stats["measurements"] += 1
        if m.status == "timeout" and cutting:
            m = Measurement("cut", max(m.median_s or 0.0, limit), m.min_s, m.max_s,
                            detail=f"slower than {factor:g}x the baseline: {m.detail}")
        if m.ok and base.ok and m.median_s > full_limit:
            m = Measurement("timeout", m.median_s, m.min_s, m.max_s,
                            detail=f"{m.median_s / base.median_s:.1f}x slower than the baseline")
        if self.cache is not None:
            self.cache.put(h, schedule, self.host, m)
        return m

    def reward_for(self, text: str, schedule: str) -> tuple[float, Measurement]:
        base = self.baseline(text)
        m = self.measure(text, schedule)
        if not (m.ok and base.ok) or m.median_s <= 0:
            self.stats["failures"] += 1
            return self.config.penalty, m
        return math.log(base.median_s / m.median_s), m

    # -- Episode -----------------------------------------------------------
    def _observe(self) -> dict[str, np.ndarray]:
        if self._current() is None:
            mask = np.zeros(self.lay.mask_size, dtype=np.int8)
            mask[self.lay.action_mnemonics.index("NT")] = 1
            return {"observation": np.zeros(self.lay.observation_size, np.float32),
                    "action_mask": mask}
        op = self._current()
        return {"observation": self.module.observation(op).astype(np.float32),
                "action_mask": self.module.flat_masks(op).astype(np.int8)}

    def _current(self) -> Optional[int]:
        while self._k < len(self._order) and self.module.ops()[self._order[self._k]].done:
            self._k += 1
        return self._order[self._k] if self._k < len(self._order) else None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        super().reset(seed=seed)
        options = options or {}
        index = options.get("index")
        if index is None:
            index = int(self.np_random.integers(len(self.programs)))
        self.program_index = index
        self.name, self.text = self.programs[index]
        self.module = Module.parse(self.text, self.name)
        self._order = self.module.traversal_order()
        self._k = 0
        self._steps = 0
        self._max_steps = max(1, len(self._order)) * self.lay.history_length * (self.lay.max_loops + 1)
        self._last_time = None
        return self._observe(), {"program": self.name, "op": self._current()}

    def _decode(self, op: int, action: np.ndarray) -> tuple[str, Optional[int], bool]:
        """(action text, pointer, illegal) for ``action`` on ``op``. An action
        outside the masks becomes NT, or, while an interchange is being
        chosen, the first allowed pointer."""
        lay = self.lay
        masks = self.module.masks(op)
        n = lay.max_loops
        ptr = int(action[1 + n])
        if masks.allowed_kinds() == ["I"]:  # an interchange being chosen
            if masks.pointer[ptr]:
                return "", ptr, False
            return "", int(np.flatnonzero(masks.pointer)[0]), True
        kind = int(action[0])
        if not masks.kind[kind]:
            return "NT", None, True
        mnem = lay.action_mnemonics[kind]
        if mnem in ("T", "TP", "TF"):
            loops = len(self.module.ops()[op].loop_bounds)
            idx = [int(i) for i in action[1:1 + loops]]
            if not all(masks.tile[kind, l, c] for l, c in enumerate(idx)):
                return "NT", None, True
            sizes = [lay.tile_candidates[c] for c in idx]
            if mnem != "T" and not any(sizes):
                return "NT", None, True
            return f"{mnem}({','.join(map(str, sizes))})", None, False
        if mnem == "I":
            return ("", ptr, False) if masks.pointer[ptr] else ("NT", None, True)
        return mnem, None, False

    def step(self, action):
        op = self._current()
        reward, illegal, failed = 0.0, False, False
        if op is not None:
            self._steps += 1
            text, ptr, illegal = self._decode(op, np.asarray(action))
            if ptr is not None:
                status = self.module.apply_pointer(op, ptr)
            else:
                status = self.module.apply(op, text)
            if status == ApplyStatus.FAILED:
                failed = True
                self.module.apply(op, "NT")
            if illegal:
                self.stats["illegal"] += 1
                reward += self.config.illegal_penalty
        finished_op = op is not None and self.module.ops()[op].done
        nxt = self._current()
        terminated = nxt is None
        truncated = not terminated and self._steps >= self._max_steps
        info: dict[str, Any] = {"program": self.name, "op": nxt, "illegal": illegal,
                                "failed_to_apply": failed}
        if self.config.reward == "immediate" and finished_op:
            _, m = self.reward_for(self.text, self.module.schedule)
            if m.ok:
                prev = self._last_time or self.baseline(self.text).median_s
                reward += math.log(prev / m.median_s)
                self._last_time = m.median_s
            else:
                reward += self.config.penalty
        elif terminated or truncated:
            r, _ = self.reward_for(self.text, self.module.schedule)
            reward += r
        if terminated or truncated:
            base = self.baseline(self.text)
            m = self.measure(self.text, self.module.schedule)
            info.update(schedule=self.module.schedule, status=m.status,
                        speedup=(base.median_s / m.median_s) if (m.ok and base.ok) else 0.0)
        return self._observe(), float(reward), terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi" and self.module is not None:
            return f"{self.name}: {self.module.schedule or '(nothing yet)'}"
        return None

    def close(self):
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        if self.cache is not None:
            self.cache.close()
            self.cache = None


def register() -> None:
    """Register ``mlir_rl/LinalgSchedule-v0`` with Gymnasium."""
    if "mlir_rl/LinalgSchedule-v0" not in gym.registry:
        gym.register(id="mlir_rl/LinalgSchedule-v0",
                     entry_point="mlir_rl.env:LinalgScheduleEnv")


register()
