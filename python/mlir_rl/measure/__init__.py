"""Measurements: a worker process per measurer, the SQLite memo, and the
measurer that holds the measurement policy (baselines, output checks,
slowdown limits, a search's cut)."""
