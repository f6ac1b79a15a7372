"""mlir-rl: learned loop-nest scheduling for MLIR linalg.

The native core (``mlir_rl._core``) computes features and masks, owns the
action space (kinds, grammar, decoding), applies actions through the
transform dialect, lowers and JIT-times programs; :mod:`mlir_rl.core` wraps
it. Subpackages: ``rl`` (environment, policy, PPO, export, search,
evaluation), ``measure`` (worker processes, the measurement memo, the
measurer), ``data`` (kernels, datasets, PyTorch models), ``bench`` (timing,
peers), ``cli``.
"""
from mlir_rl.core import (  # noqa: F401
    Action,
    ActionKind,
    ApplyStatus,
    DecisionPhase,
    IllegalActionError,
    Layout,
    Masks,
    Module,
    OpInfo,
    ScheduleError,
    Step,
    Timing,
    action_kinds,
    default_model_path,
    format_schedule,
    front_end,
    front_end_steps,
    layout,
    legality,
    lowering_pipeline,
    outputs_match,
    parse_action,
    parse_schedule,
    prepare,
    prepare_pipeline,
)
from mlir_rl.paths import opt_path, plugin_path  # noqa: F401

def _package_version() -> str:
    """The installed distribution's version (pyproject.toml's, set once)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("mlir-rl")
    except PackageNotFoundError:
        return "unknown"


__version__ = _package_version()


def compile(model, example_inputs, **options):
    """``model`` compiled by mlir-rl for ``example_inputs`` (weights frozen;
    see :func:`mlir_rl.dynamo.compile`). ``torch.compile(model,
    backend="mlir_rl")`` is the other way in."""
    from mlir_rl.dynamo import compile as _compile
    return _compile(model, example_inputs, **options)
