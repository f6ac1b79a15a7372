"""PyTorch models through mlir-rl: the ``mlir_rl`` torch.compile backend and
:func:`compile`.

    compiled = torch.compile(model, backend="mlir_rl")   # registered entry point
    compiled = mlir_rl.compile(model, example_inputs)     # one graph, weights frozen

The path of a graph: ``torch.export`` (the FX graph) -> torch-mlir's FX
importer, in a worker process that serves every graph of this one (its MLIR
is not ours) -> linalg on tensors
-> ``mlir-rl-prepare`` -> ``linalg-rl-schedule`` (the shipped policy, or
``search=K`` with a tuning database) in stock ``mlir-opt-22`` with the plugin
(a wheel's ``mlir-rl-opt`` where LLVM 22 is not installed) -> ``mlir-rl-lower``
-> the JIT (``_core.compile_function``) -> a callable on torch tensors: inputs
are read in place when contiguous, results are written into fresh tensors.

Rules:
- A graph that cannot be compiled (an op torch-mlir or the pass does not
  handle, a dtype the JIT does not take, autograd, mutation) runs eagerly,
  with one warning that says why and names the op where one is to blame.
- Every compiled graph is run once on its example inputs and compared with
  eager; a mismatch falls back to eager. It never returns a wrong result.
- A graph of symbolic sizes (dynamo makes one when a module is called with
  a second shape) is compiled for each shape it runs with, its sizes bound:
  at most ``shape_limit`` (8) shapes, then new ones run eagerly, with one
  warning.
- The scheduled IR is cached on disk by a hash of the graph, its input
  specs (and frozen weights), the policy and the options
  (``$MLIR_RL_CACHE_DIR`` or ``~/.cache/mlir-rl/torch``): a second compile
  of the same graph, in any process, skips import and scheduling; its
  machine code too (an object file keyed also by the LLVM version and the
  host CPU), so that it skips lowering and code generation. The backend
  also keys the graph dynamo hands it (its nodes, the modules it calls,
  its tensors and frozen weights by value, the inputs' specs): an index
  from that key to the exported graph's skips ``torch.export`` as well.
- The compiled code runs at ``torch.get_num_threads()`` OpenMP threads, read
  when the graph is compiled.
"""
from __future__ import annotations

import hashlib
import json
import operator
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence


_DTYPES = None  # torch dtype -> the JIT's element type name


def _dtypes():
    global _DTYPES
    if _DTYPES is None:
        import torch
        _DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16",
                   torch.float16: "f16", torch.int32: "i32", torch.int64: "i64"}
    return _DTYPES


@dataclass
class Options:
    search: int = 0              # >0: linalg-rl-schedule search=K (measured per op)
    tuning_db: str = ""          # the tuning database (with search, or alone: lookups)
    model: str = ""              # ONNX policy (default: the shipped one)
    threads: int = 0             # 0: torch.get_num_threads()
    cache_dir: str = ""          # "": $MLIR_RL_CACHE_DIR or ~/.cache/mlir-rl/torch
    check: bool = True           # compare with eager once, on the example inputs
    freeze: bool = True          # backend: the module's weights as constants (guarded)
    shape_limit: int = 8         # backend, dynamic shapes: shapes compiled per graph
    rtol: float = 1e-3           # the check's tolerance (outputs_match's rule)

    def resolved_threads(self) -> int:
        import torch
        return self.threads or torch.get_num_threads()

    def resolved_cache(self) -> Path:
        return Path(self.cache_dir or os.environ.get("MLIR_RL_CACHE_DIR")
                    or Path.home() / ".cache" / "mlir-rl" / "torch")


@dataclass
class Stats:
    """What the backend did in this process."""
    compiled: int = 0        # graphs imported and scheduled
    disk_hits: int = 0       # graphs whose scheduled IR came from the cache
    object_hits: int = 0     # graphs whose machine code came from the cache
    index_hits: int = 0      # graphs found by the graph index, not exported
    fallbacks: int = 0       # graphs left to eager
    reasons: list[str] = field(default_factory=list)  # why, one per fallback
    seconds: float = 0.0     # spent compiling (import, pass, JIT, check)


stats = Stats()


class CompileFailure(RuntimeError):
    """Why a graph is left to eager (the message of the warning)."""


@dataclass
class CompiledGraph:
    """A graph compiled by mlir-rl: call it like the graph."""
    function: Any                 # _core.JitFunction
    out_spec: Any                 # pytree spec of the graph's outputs
    schedule: str                 # what the pass applied
    key: str                      # the cache key
    from_cache: bool

    def __call__(self, *args):
        import torch
        from torch.utils._pytree import tree_unflatten
        sig = self.function.signature
        flat = []
        for i, (a, spec) in enumerate(zip(args, sig["inputs"])):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"mlir_rl: input {i} is {type(a).__name__}, not a tensor")
            flat.append(a.detach().contiguous())
        outs = [torch.empty(o["shape"], dtype=_torch_dtype(o["dtype"])) for o in sig["outputs"]]
        self.function(flat, outs)
        return tree_unflatten(outs, self.out_spec)


def _check_rtol(options: "Options", expected) -> float:
    """The check's tolerance: the option's, or torch.testing's for bf16 and
    f16 outputs (eager rounds after every op, the compiled graph where it
    stores, in f32 between: a few units in the last place apart)."""
    from mlir_rl.core import output_rtol
    return output_rtol([_dtypes().get(e.dtype, "") for e in expected], options.rtol)


def _torch_dtype(name: str):
    return {v: k for k, v in _dtypes().items()}[name]


def _sha(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _tensor_bytes(t) -> bytes:
    import torch
    t = t.detach().contiguous().cpu()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def _check_inputs(inputs: Sequence[Any]) -> None:
    import torch
    for i, a in enumerate(inputs):
        if not isinstance(a, torch.Tensor):
            raise CompileFailure(f"input {i} is a {type(a).__name__}, not a tensor "
                                 "(dynamic shapes and Python scalars are not supported)")
        if a.device.type != "cpu":
            raise CompileFailure(f"input {i} is on {a.device} (mlir-rl compiles for the CPU)")
        if a.dtype not in _dtypes():
            raise CompileFailure(f"input {i} has dtype {a.dtype} (the JIT takes float32, "
                                 "float64, bfloat16, float16, int32 and int64)")
    if torch.is_grad_enabled() and any(a.requires_grad for a in inputs):
        raise CompileFailure("the graph needs autograd (mlir-rl compiles inference: run it "
                             "under torch.no_grad() or torch.inference_mode())")


class _Importer:
    """torch-mlir's FX importer in one worker process for the life of this
    one (``_torch_mlir_import.py --serve``): a one-shot import spends most
    of its time importing torch and torch-mlir (BERT layer: 7 s of 10), a
    worker pays that once. Requests go one at a time. A worker that dies
    (or was never started) is started again at the next request; a request
    it cannot answer is made again by a one-shot process, whose error
    output says why."""

    _lock = threading.Lock()
    _proc = None

    @classmethod
    def convert(cls, program: Path, out: Path) -> Optional[tuple[bool, str]]:
        """(ok, what failed) from the worker, or None where it gave no answer."""
        with cls._lock:
            proc = cls._proc
            if proc is None or proc.poll() is not None:
                script = Path(__file__).with_name("_torch_mlir_import.py")
                proc = cls._proc = subprocess.Popen(
                    [sys.executable, str(script), "--serve"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                proc.stdin.write(json.dumps({"program": str(program), "out": str(out)}) + "\n")
                proc.stdin.flush()
                reply = json.loads(proc.stdout.readline())
            except (OSError, ValueError):  # it died: EOF, a broken pipe
                proc.kill()
                cls._proc = None
                return None
        return bool(reply["ok"]), reply.get("failed", "")


def _import(ep, workdir: Path) -> str:
    """The exported program as linalg-on-tensors text (torch-mlir, in the
    worker process, or in a process of its own where the worker gave no
    answer)."""
    import torch
    program = workdir / "program.pt2"
    torch.export.save(ep, program)
    out = workdir / "imported.mlir"
    answer = _Importer.convert(program, out)
    if answer is not None and answer[0]:
        return out.read_text()
    if answer is not None:
        raise CompileFailure(f"torch-mlir cannot import the graph: {answer[1] or '(no reason given)'}")
    script = Path(__file__).with_name("_torch_mlir_import.py")
    r = subprocess.run([sys.executable, str(script), str(program), str(out)],
                       capture_output=True, text=True)
    if r.returncode:
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("MLIR_RL_IMPORT_FAILED:")]
        what = lines[-1].split(":", 1)[1].strip() if lines else "(no reason given)"
        if "No module named 'torch_mlir'" in r.stderr:
            raise CompileFailure("torch-mlir is not installed (pip install torch-mlir)")
        raise CompileFailure(f"torch-mlir cannot import the graph: {what}")
    return out.read_text()


def _schedule(text: str, options: Options, threads: int) -> tuple[str, str]:
    """The imported text through mlir-rl-prepare and linalg-rl-schedule, the
    way users run them (stock mlir-opt-22 with the plugin; without LLVM 22,
    a wheel's mlir-rl-opt: ``paths.pass_driver``)."""
    from mlir_rl.core import ScheduleError
    from mlir_rl.passes import run_pass
    extra = []
    if options.search:
        extra += [f"search={options.search}", f"threads={threads}"]
    if options.tuning_db:
        extra += [f"tuning-db={options.tuning_db}", f"threads={threads}"]
    try:
        r = run_pass(text, model=options.model, extra=list(dict.fromkeys(extra)),
                     name="graph", prepare=True)
    except ScheduleError as e:
        msg = str(e).strip().splitlines()
        errors = [ln for ln in msg if "error:" in ln] or msg[-1:]
        raise CompileFailure(f"the pass failed: {errors[0].strip()[:300]}") from e
    return r.ir, r.schedule


def _policy_id(options: Options) -> str:
    from mlir_rl.core import default_model_path
    path = Path(options.model) if options.model else default_model_path()
    return _file_sha(path) if path.exists() else str(path)


def _compiler_key_parts(options: Options, threads: int) -> tuple[str, ...]:
    """What a cache key holds besides the graph: the versions, the policy
    and the options the scheduled code depends on (both keys: the export
    key and the graph index's)."""
    import torch
    import mlir_rl
    from mlir_rl import _core
    # The host too: the front end and the rules choose by its vector
    # registers and features (register tiles, vdpbf16ps).
    return (mlir_rl.__version__, torch.__version__, _policy_id(options),
            _core.jit_target_tag(), f"search={options.search}", f"db={options.tuning_db}",
            f"threads={threads if options.search else 0}")


def _cache_files(cache: Path, key: str) -> tuple[Path, Path, Path]:
    """The cached scheduled IR, its meta file and its machine code."""
    from mlir_rl import _core
    return (cache / f"{key}.mlir", cache / f"{key}.json",
            cache / f"{key}-{_core.jit_target_tag()}.o")


def _compile_cached(ep, options: Options, threads: int, specs: list, ir_file: Path,
                    meta_file: Path, obj_file: Path, from_cache: bool):
    """The JitFunction of ``ep``, its scheduled IR and schedule: the IR from
    the cache when ``from_cache``, else imported and scheduled (and cached);
    the machine code from ``obj_file`` when it is there, else compiled (and
    written there)."""
    from mlir_rl import _core
    cache = ir_file.parent
    if from_cache:
        ir = ir_file.read_text()
        schedule = json.loads(meta_file.read_text()).get("schedule", "")
    else:
        with tempfile.TemporaryDirectory(prefix="mlir-rl-torch-") as tmp:
            text = _import(ep, Path(tmp))
        ir, schedule = _schedule(text, options, threads)
        cache.mkdir(parents=True, exist_ok=True)
        tmp_ir = ir_file.with_suffix(".tmp")
        tmp_ir.write_text(ir)
        tmp_ir.replace(ir_file)
        meta_file.write_text(json.dumps({"schedule": schedule, "inputs": specs,
                                         "created": time.strftime("%Y-%m-%dT%H:%M:%S")}))
    # The machine code too, keyed by the IR's key and what the code depends
    # on besides (LLVM, the host CPU): a new process loads it instead of
    # lowering and compiling again.
    try:
        fn = _core.compile_function(ir, "forward", threads, object_cache=str(obj_file))
    except ValueError as e:
        raise CompileFailure(f"lowering or JIT compilation failed: {str(e)[:300]}") from e
    return fn, ir, schedule


class _progress:
    """One line on stderr when what it wraps takes more than ``after``
    seconds (a cold compile of a network takes minutes), none when quiet."""

    def __init__(self, message: str, quiet: bool = False, after: float = 5.0):
        self.timer = None if quiet else threading.Timer(
            after, lambda: print(message + " ...", file=sys.stderr, flush=True))

    def __enter__(self):
        if self.timer:
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc):
        if self.timer:
            self.timer.cancel()
        return False


def compile_exported(ep, example_inputs: Sequence[Any], reference: Callable,
                     options: Optional[Options] = None) -> CompiledGraph:
    """Compile an exported program whose user inputs are
    ``example_inputs``; ``reference`` (eager) gives the outputs the check
    compares with. Raises CompileFailure when it cannot be compiled."""
    import torch

    options = options or Options()
    _check_inputs(example_inputs)
    sig = ep.graph_signature
    if sig.buffers_to_mutate or sig.user_inputs_to_mutate:
        raise CompileFailure("the graph mutates its inputs or buffers")
    threads = options.resolved_threads()
    specs = [f"{tuple(a.shape)}:{a.dtype}" for a in example_inputs]
    # What torch-mlir freezes into the IR: the weights (mlir_rl.compile) and
    # the tensor constants a graph makes (a causal mask), by value.
    h = hashlib.sha256()
    for name, t in sorted({**ep.state_dict, **ep.constants}.items()):
        if isinstance(t, torch.Tensor):
            h.update(name.encode())
            h.update(_tensor_bytes(t))
    weights = h.digest()
    key = _sha(ep.graph_module.code, ",".join(specs), weights,
               *_compiler_key_parts(options, threads))
    cache = options.resolved_cache()
    ir_file, meta_file, obj_file = _cache_files(cache, key)
    from_cache = ir_file.exists() and meta_file.exists()
    with _progress(f"mlir_rl: compiling a graph of {len(ep.graph.nodes)} nodes "
                   f"({'from its cached IR' if from_cache else 'import, schedule, JIT'}); "
                   f"cached afterwards in {cache}",
                   quiet=from_cache and obj_file.exists()):
        fn, ir, schedule = _compile_cached(ep, options, threads, specs, ir_file, meta_file,
                                           obj_file, from_cache)
    compiled = CompiledGraph(fn, ep.call_spec.out_spec, schedule, key, from_cache)
    _check_and_count(compiled, example_inputs, reference, options)
    return compiled


def _check_and_count(compiled: CompiledGraph, example_inputs, reference, options) -> None:
    """The check against eager on the example inputs (CompileFailure where
    the outputs differ), and the counts in ``stats``."""
    import torch
    from mlir_rl.core import outputs_match
    from torch.utils._pytree import tree_flatten
    fn = compiled.function
    n_out = len(fn.signature["outputs"])
    if options.check:
        with torch.no_grad():
            expected, _ = tree_flatten(reference(*example_inputs))
            if len(expected) != n_out or not all(isinstance(e, torch.Tensor) for e in expected):
                raise CompileFailure("the graph returns something other than tensors")
            got, _ = tree_flatten(compiled(*example_inputs))
        rtol = _check_rtol(options, expected)
        ok, err = outputs_match([g.double().numpy() for g in got],
                                [e.double().numpy() for e in expected],
                                rtol=rtol, atol_scale=rtol)
        if not ok:
            raise CompileFailure(f"the compiled graph's outputs differ from eager "
                                 f"(max abs error {err:.3g})")
    stats.object_hits += fn.from_object
    if compiled.from_cache:
        stats.disk_hits += 1
    else:
        stats.compiled += 1


def _graph_key(gm, example_inputs, weights: Sequence[int], options: Options) -> Optional[str]:
    """A key of what dynamo hands the backend, computed without exporting
    it: the graph (its nodes, the modules it calls, its own tensors by
    value), the inputs' specs, the weights' values where they are frozen,
    and what the export key holds besides. The graph index maps it to the
    export key of an earlier compile (torch.export is most of a warm
    compile: MobileNetV2 2.3 s of 2.7). None where the graph holds
    something this key does not see (a non-tensor attribute)."""
    import torch
    h = hashlib.sha256()
    h.update(b"graph-index-v1\0")
    h.update(str(gm.graph).encode())
    for node in gm.graph.nodes:
        if node.op == "call_module":
            h.update(repr(gm.get_submodule(node.target)).encode())
        elif node.op == "get_attr":
            try:
                value = operator.attrgetter(str(node.target))(gm)
            except AttributeError:
                return None
            if not isinstance(value, torch.Tensor):
                return None
            h.update(f"{node.target}:{tuple(value.shape)}:{value.dtype}".encode())
            h.update(_tensor_bytes(value))
    for name, t in sorted(gm.state_dict(keep_vars=True).items()):
        h.update(name.encode())
        h.update(f"{tuple(t.shape)}:{t.dtype}".encode())
        h.update(_tensor_bytes(t))
    frozen = set(weights)
    for i, a in enumerate(example_inputs):
        h.update(f"{i}:{tuple(a.shape)}:{tuple(a.stride())}:{a.dtype}:{i in frozen}".encode())
        if i in frozen:
            h.update(_tensor_bytes(a))
    return _sha(h.hexdigest(), *_compiler_key_parts(options, options.resolved_threads()),
                f"freeze={options.freeze}")


def _from_graph_index(gkey: str, example_inputs, reference, options) -> Optional[CompiledGraph]:
    """The compiled graph the index names for ``gkey``, from the cached IR
    and machine code, checked like any other; None where the index, the IR
    or the object is missing or unreadable (then the graph is exported)."""
    from torch.utils._pytree import treespec_loads
    cache = options.resolved_cache()
    try:
        entry = json.loads((cache / f"graph-{gkey}.json").read_text())
        key, out_spec = entry["key"], treespec_loads(entry["out_spec"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ir_file, meta_file, obj_file = _cache_files(cache, key)
    if not (ir_file.exists() and meta_file.exists() and obj_file.exists()):
        return None
    threads = options.resolved_threads()
    fn, _, schedule = _compile_cached(None, options, threads, [], ir_file, meta_file,
                                      obj_file, from_cache=True)
    compiled = CompiledGraph(fn, out_spec, schedule, key, True)
    _check_and_count(compiled, example_inputs, reference, options)
    stats.index_hits += 1
    return compiled


def _write_graph_index(gkey: str, compiled: CompiledGraph, options: Options) -> None:
    from torch.utils._pytree import treespec_dumps
    cache = options.resolved_cache()
    try:
        text = json.dumps({"key": compiled.key, "out_spec": treespec_dumps(compiled.out_spec)})
        tmp = cache / f"graph-{gkey}.tmp"
        tmp.write_text(text)
        tmp.replace(cache / f"graph-{gkey}.json")
    except (OSError, TypeError, ValueError, NotImplementedError):
        pass  # an output structure treespec_dumps cannot write: no index


def _fallback(reason: str, eager: Callable) -> Callable:
    stats.fallbacks += 1
    stats.reasons.append(reason)
    warnings.warn(f"mlir_rl: running this graph eagerly: {reason}", RuntimeWarning, stacklevel=4)
    return eager


def _weight_inputs(gm, example_inputs) -> list[int]:
    """The graph inputs that are the module's parameters and buffers (dynamo
    passes them as inputs: placeholders named ``..._parameters_...`` and
    ``..._buffers_...``)."""
    import torch
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    if len(names) != len(example_inputs):
        return []
    return [i for i, (n, a) in enumerate(zip(names, example_inputs))
            if isinstance(a, torch.nn.Parameter) or "_parameters_" in n or "_buffers_" in n]


def _Frozen(gm, example_inputs, weights, scalars=()):
    """``gm`` with its weight inputs bound as buffers (torch.export lifts
    them, torch-mlir freezes them into the IR) and its ``scalars`` inputs
    (the sizes of a dynamic graph) bound to their values: a module of the
    other inputs."""
    import torch

    class Frozen(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gm = gm
            self.count = len(example_inputs)
            self.index = {i: j for j, i in enumerate(weights)}
            self.scalars = {i: int(example_inputs[i]) for i in scalars}
            self.tensors = [example_inputs[i] for i in weights]
            self.versions = [t._version for t in self.tensors]
            for j, i in enumerate(weights):
                self.register_buffer(f"w{j}", example_inputs[i].detach())

        def forward(self, *user):
            it = iter(user)
            args = [getattr(self, f"w{self.index[i]}") if i in self.index
                    else self.scalars[i] if i in self.scalars else next(it)
                    for i in range(self.count)]
            return self.gm(*args)

        def user_inputs(self, args):
            return [a for i, a in enumerate(args)
                    if i not in self.index and i not in self.scalars]

    return Frozen()


class _Guarded:
    """A graph compiled with its weights frozen: runs the compiled code
    while the weights passed are the tensors it was compiled with, unchanged
    (same storage, same version); otherwise eager, with one warning."""

    def __init__(self, compiled: CompiledGraph, frozen, gm):
        self.compiled, self.frozen, self.gm = compiled, frozen, gm
        self.warned = False
        self.from_cache = compiled.from_cache
        self.schedule = compiled.schedule

    def __call__(self, *args):
        f = self.frozen
        for j, i in enumerate(f.index):
            a = args[i]
            if a is not f.tensors[j] and a.data_ptr() != f.tensors[j].data_ptr() \
                    or a._version != f.versions[j]:
                if not self.warned:
                    self.warned = True
                    warnings.warn("mlir_rl: the module's weights changed since this graph was "
                                  "compiled with them frozen: running it eagerly (compile again, "
                                  "or use make_backend(freeze=False))", RuntimeWarning,
                                  stacklevel=2)
                return self.gm(*args)
        return self.compiled(*f.user_inputs(args))


def _is_dynamic(example_inputs) -> bool:
    """Whether dynamo hands over a graph of symbolic sizes (it does from a
    module's second shape on: automatic dynamic shapes)."""
    import torch
    return any(isinstance(a, torch.SymInt) or
               (isinstance(a, torch.Tensor) and not all(isinstance(d, int) for d in a.shape))
               for a in example_inputs)


class _PerShape:
    """A graph of symbolic sizes, compiled for each shape it is called with:
    at most ``options.shape_limit`` shapes (one warning at the limit; the
    shapes after it run eagerly). The sizes dynamo passes as integer inputs
    are bound to their values, each shape's graph is exported with static
    shapes and compiled as any other (the disk caches included)."""

    def __init__(self, gm, options: Options):
        self.gm, self.options = gm, options
        self.graphs: dict = {}
        self.warned = False

    def __call__(self, *args):
        import torch
        key = tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else ("int", int(a))
                    for a in args)
        fn = self.graphs.get(key)
        if fn is None:
            if len(self.graphs) >= self.options.shape_limit:
                if not self.warned:
                    self.warned = True
                    warnings.warn(f"mlir_rl: this graph has been compiled for "
                                  f"{len(self.graphs)} shapes (the limit, "
                                  "make_backend(shape_limit=N)): other shapes run eagerly",
                                  RuntimeWarning, stacklevel=2)
                return self.gm(*args)
            scalars = [i for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]
            fn = self.graphs[key] = _compile_graph(self.gm, list(args), self.options, scalars)
        return fn(*args)


def _compile_graph(gm, example_inputs, options: Options, scalars=()) -> Callable:
    """``gm`` compiled for ``example_inputs`` (its ``scalars`` positions
    bound to their values), or ``gm`` itself with a warning saying why not."""
    import torch
    start = time.perf_counter()
    try:
        _check_inputs([a for i, a in enumerate(example_inputs) if i not in scalars])
        weights = _weight_inputs(gm, example_inputs) if options.freeze else []
        gkey = None if scalars else _graph_key(gm, example_inputs, weights, options)
        if weights or scalars:
            frozen = _Frozen(gm, example_inputs, weights, scalars)
            user = frozen.user_inputs(example_inputs)
            reference = frozen
        else:
            frozen, user, reference = None, list(example_inputs), gm
        graph = _from_graph_index(gkey, user, reference, options) if gkey else None
        if graph is None:
            if frozen is not None:
                with torch.no_grad():
                    ep = torch.export.export(frozen, tuple(user), strict=False)
            else:
                ep = torch.export.export(gm, tuple(user), strict=False)
            graph = compile_exported(ep, user, reference, options)
            if gkey:
                _write_graph_index(gkey, graph, options)
        return _Guarded(graph, frozen, gm) if frozen is not None else graph
    except CompileFailure as e:
        return _fallback(str(e), gm.forward)
    except Exception as e:  # export errors: the graph is not ours to judge
        return _fallback(f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                         gm.forward)
    finally:
        stats.seconds += time.perf_counter() - start


def make_backend(**kwargs) -> Callable:
    """A torch.compile backend with options (see :class:`Options`):
    ``torch.compile(m, backend=mlir_rl.dynamo.make_backend(search=8))``."""
    options = Options(**kwargs)

    def backend(gm, example_inputs):
        if _is_dynamic(example_inputs):
            return _PerShape(gm, options)
        return _compile_graph(gm, example_inputs, options)

    return backend


def backend(gm, example_inputs):
    """The ``mlir_rl`` dynamo backend (entry point ``torch_dynamo_backends``)
    with the default options."""
    return make_backend()(gm, example_inputs)


def compile(model, example_inputs: Sequence[Any], **kwargs) -> Callable:
    """``model`` (an nn.Module or function of tensors) exported once with
    ``example_inputs`` and compiled with its weights frozen as constants
    (batch norm folds, the policy sees constant weights). Returns a callable
    of the same inputs; it runs ``model`` eagerly, with a warning, when the
    graph cannot be compiled. Weights changed later are not seen: compile
    again."""
    import torch
    options = Options(**kwargs)
    example_inputs = tuple(example_inputs)
    start = time.perf_counter()
    try:
        _check_inputs(example_inputs)
        with torch.no_grad():
            ep = torch.export.export(model, example_inputs)
        compiled = compile_exported(ep, example_inputs, model, options)
    except CompileFailure as e:
        return _fallback(str(e), model)
    finally:
        stats.seconds += time.perf_counter() - start
    return compiled
