"""Benchmarks: baseline-versus-scheduled timing, the policy's compile-time
cost, the unseen-kernel check and the peer comparison."""
