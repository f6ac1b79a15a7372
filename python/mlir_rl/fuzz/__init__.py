"""mlir-rl's differential fuzzer (``mlir-rl fuzz``): random linalg programs
(``programs``), scheduled in worker processes that survive crashes and hangs
(``worker``), every output checked against the unscheduled program, each
failure shrunk to a reproducer, everything in a JSON report (``runner``)."""
