"""mlir-rl: learned loop-nest scheduling for MLIR linalg.

The native core (``mlir_rl._core``) computes features and masks, applies
actions through the transform dialect, lowers and JIT-times programs; this
package wraps it for Python (see :mod:`mlir_rl.core`).
"""
from mlir_rl.core import (  # noqa: F401
    ApplyStatus,
    IllegalActionError,
    Layout,
    Masks,
    Module,
    OpInfo,
    ScheduleError,
    Timing,
    default_model_path,
    layout,
    lowering_pipeline,
    outputs_match,
)
from mlir_rl.paths import opt_path, plugin_path  # noqa: F401

__version__ = "0.1.0"
