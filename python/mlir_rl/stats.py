"""Speedups and their summaries, defined once for every report."""
from __future__ import annotations

import math
from typing import Iterable, Optional


def speedup(baseline_s: Optional[float], scheduled_s: Optional[float]) -> float:
    """``baseline / scheduled``; 0.0 when either time is missing or not
    positive (a failed measurement counts as no speedup)."""
    if not baseline_s or not scheduled_s or baseline_s <= 0 or scheduled_s <= 0:
        return 0.0
    return baseline_s / scheduled_s


def geomean(values: Iterable[float]) -> float:
    """Geometric mean of the positive values (0.0 if there are none):
    failures (0.0) are left out, and counted by the caller."""
    logs = [math.log(v) for v in values if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else 0.0
