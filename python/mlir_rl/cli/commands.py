"""The commands of ``mlir-rl``: one config dataclass and one function each."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from mlir_rl.cli.args import option

SCHEDULE_HELP = (
    "explicit schedule: '<op id>: <actions>; ...' with actions T(sizes) "
    "(tiling), TP(sizes) (tiled parallelization, scf.forall), TF(sizes) "
    "(tiled fusion of the last producer), I(permutation) (interchange), V "
    "(vectorization), NT (no transformation); one tile size per loop, 0 = "
    "not tiled. Example: '1: TP(32,64,0) T(8,32,1) V'. An entry without "
    "'<id>:' applies to the first op visited (the last consumer).")
CPUS = os.cpu_count() or 1


# -- Programs ------------------------------------------------------------------

def _write_output(text: str, output: Optional[str]) -> None:
    """IR to the -o file, or to stdout (no file, or '-')."""
    if output and output != "-":
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


@dataclass
class OpsConfig:
    """List the linalg ops of a file with their ids, kinds and loops."""

    file: str = option(help="MLIR file", flags=("file",))
    json: bool = option(False, help="print JSON")


def cmd_ops(c: OpsConfig) -> int:
    from mlir_rl.core import Module, describe_op
    module = Module.load(c.file)
    ops = module.ops()
    if c.json:
        print(json.dumps([{"id": o.id, "name": o.name, "kind": o.kind, "function": o.function,
                           "supported": o.supported, "reason": o.reason,
                           "producer": o.producer, "consumers": list(o.consumers),
                           "loop_bounds": list(o.loop_bounds),
                           "iterators": list(o.iterators)} for o in ops], indent=2))
        return 0
    print(" id  op                               kind               loops")
    for op in ops:
        print(describe_op(op))
    order = module.traversal_order()
    print(f"traversal order (consumer -> producer): {' '.join(map(str, order))}")
    return 0


@dataclass
class OptimizeConfig:
    """Schedule a file (by --schedule, else by the policy) and print the IR."""

    file: str = option(help="MLIR file", flags=("file",))
    schedule: Optional[str] = option(None, help=SCHEDULE_HELP + " Without it: the policy "
                                     "(--model), as the pass does.")
    model: str = option("", help="policy used without --schedule (default: the shipped one; "
                                 "$MLIR_RL_ORT_LIB picks the ONNX Runtime library)")
    output: Optional[str] = option(None, help="write the IR here (default: stdout)",
                                   flags=("-o", "--output"))
    lower: bool = option(False, help="print the LLVM-dialect IR after the lowering pipeline")
    dump_schedule: Optional[str] = option(None, help="write the replayable transform script here")
    prepare: bool = option(False, help="run mlir-rl-prepare first (imported models: fuses "
                                       "elementwise chains; op ids are those after it)")


def cmd_optimize(c: OptimizeConfig) -> int:
    from mlir_rl.core import ApplyStatus, Module
    module = Module.load(c.file, prepare=c.prepare)
    if c.schedule is None:
        for warning in module.schedule_with_policy(c.model)["warnings"]:
            print(f"warning: {warning}", file=sys.stderr)
    elif module.apply_schedule(c.schedule) == ApplyStatus.FAILED:
        print(f"warning: {module.last_message}", file=sys.stderr)
    text = module.lowered() if c.lower else module.ir()
    if c.dump_schedule:
        Path(c.dump_schedule).write_text(module.dump())
    _write_output(text, c.output)
    return 0


@dataclass
class PrepareConfig:
    """Run the front end for imported IR (mlir-rl-prepare) on a file."""

    file: str = option(help="MLIR file", flags=("file",))
    output: Optional[str] = option(None, help="write the IR here (default: stdout)",
                                   flags=("-o", "--output"))


def cmd_prepare(c: PrepareConfig) -> int:
    from mlir_rl.core import prepare, read_text
    text = prepare(read_text(c.file), c.file)
    _write_output(text, c.output)
    return 0


# -- Benchmarks ----------------------------------------------------------------

@dataclass
class BenchCommand:
    """Time FILE unscheduled and scheduled (by --schedule, else by the
    policy) and compare outputs; or, with --suite, mlir-rl against peers."""

    file: Optional[str] = option(None, help="MLIR file", flags=("file",))
    schedule: Optional[str] = option(None, help=SCHEDULE_HELP + " Without it: the policy (--model).")
    suite: Optional[str] = option(None, help="run a suite (ops, unseen, fresh, odd, shapes, models, lqcd; random: "
                                  "a fresh draw per --suite-seed): the unscheduled "
                                  "program, mlir-rl (the pass with the policy) and the --compare peers; "
                                  "torch-compile: whole models through torch.compile(backend="
                                  "'mlir_rl') vs eager and inductor")
    compare: str = option("torch,inductor,iree,numpy",
                          help="peers for --suite (torch, inductor, iree, numpy)")
    model: str = option("", help="policy used without --schedule, and for --suite "
                        "(default: the shipped one)")
    out: str = option("runs/bench", help="directory of the suite's JSON, Markdown, PNG")
    json: Optional[str] = option(None, help="also write the result document (JSON, the schema "
                                 "of mlir_rl.bench.report; `mlir-rl report` renders "
                                 "docs/results/*.json)")
    runs: int = option(5, help="timed runs per program (the median is reported)")
    warmup: int = option(1, help="untimed runs before timing")
    threads: int = option(CPUS, help="OpenMP threads for every contender")
    seed: int = option(0, help="seed of the random inputs")
    function: str = option("", help="function to time (default: the first public one)")
    decisions: str = option("policy", help="where the pass's decisions come from: policy, "
                            "heuristic, random (decisions=; random draws with --seed). With "
                            "--suite, a comma-separated list: the policy is always timed "
                            "(mlir-rl), each other source is one more contender "
                            "(mlir-rl-heuristic, mlir-rl-random): the ablation")
    prepare: bool = option(False, help="run mlir-rl-prepare before scheduling FILE (imported "
                                       "models); the baseline is FILE as given")
    search: int = option(0, help="--suite: also the pass with compile-time tuning "
                                 "(search=K per op), as the contender mlir-rl-search")
    tuning_db: str = option("", help="--suite with --search: the tuning database to use "
                                     "and fill")
    kernels: str = option("", help="--suite: only these kernels (comma-separated names; "
                                   "with torch-compile, these models)")
    suite_seed: int = option(1000, help="--suite random: the seed its kernels are drawn from "
                                        "(seeds from 1000 up are reserved for evaluation: "
                                        "training data never draws them)")
    min_time: float = option(0.2, help="--suite: seconds of timed calls per contender at least: "
                                       "a short kernel gets more than --runs calls (at most "
                                       "100x), the same for every contender")
    processes: int = option(1, help="--suite torch-compile: medians over this many fresh "
                                    "processes (one disk cache: the first compiles cold)")
    dtype: str = option("float32", help="--suite torch-compile: the models' weights and "
                                        "inputs in this type (float32, bfloat16, float16)")


def _copy_suite_json(c: BenchCommand, out: Path) -> str:
    """With --json, the suite's bench.json copied there; the ", PATH" to
    print after the figures' other files ("" without --json)."""
    if not c.json:
        return ""
    Path(c.json).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out / "bench.json", c.json)
    return f", {c.json}"


def _command_line() -> str:
    """How this command was run, for the result document."""
    import shlex
    return shlex.join(["mlir-rl", *sys.argv[1:]])


def cmd_bench(c: BenchCommand) -> int:
    if c.suite == "torch-compile":
        from mlir_rl.bench import torch_compile as tc
        report = tc.run(models=tuple(k for k in c.kernels.split(",") if k),
                        runs=c.runs, warmup=c.warmup, threads=c.threads, search=c.search,
                        tuning_db=c.tuning_db, command=_command_line(),
                        processes=c.processes, dtype=c.dtype)
        out = tc.save(report, c.out)
        print(tc.markdown(report))
        print(f"\nfigures: {out / 'bench.json'}, {out / 'bench.md'}{_copy_suite_json(c, out)}")
        return 0 if all(k["figures"]["mlir-rl"]["status"] == "ok" for k in report["kernels"]) else 3
    if c.suite:
        from mlir_rl.bench import peers
        if c.suite not in peers.SUITES or c.suite == "smoke":
            raise ValueError(f"no suite {c.suite!r}; available: "
                             f"{', '.join(s for s in peers.SUITES if s != 'smoke')}")
        suite_name = f"random:{c.suite_seed}" if c.suite == "random" else c.suite
        compare = tuple(x for x in c.compare.split(",") if x)
        bad = [x for x in compare if x not in peers.COMPARATORS]
        if bad:
            raise ValueError(f"unknown comparators {bad}; valid: {', '.join(peers.COMPARATORS)}")
        report = peers.run_suite(compare, model=c.model, runs=c.runs, warmup=c.warmup,
                                 threads=c.threads, suite_name=suite_name, prepare=c.prepare,
                                 search=c.search, tuning_db=c.tuning_db,
                                 only=tuple(k for k in c.kernels.split(",") if k),
                                 min_time=c.min_time, command=_command_line(),
                                 decisions=tuple(d for d in c.decisions.split(",") if d))
        out = peers.save(report, c.out)
        from mlir_rl.bench import report as R
        print(R.markdown_table(report))
        print(peers.summary(report))
        print(f"\nfigures: {out / 'bench.json'}, {out / 'bench.md'}, {out / 'bench.png'}"
              f"{_copy_suite_json(c, out)}")
        return 0
    if not c.file:
        raise ValueError("bench needs FILE or --suite")
    from mlir_rl.bench.timing import BenchConfig, bench_file
    config = BenchConfig(runs=c.runs, warmup=c.warmup, threads=c.threads, seed=c.seed,
                         function=c.function, prepare=c.prepare, decisions=c.decisions)
    result = bench_file(c.file, c.schedule or "", config, model=c.model)
    print(result.summary())
    if c.json:
        from mlir_rl.bench import report as R
        R.save(result.to_result(_command_line(), c.model), c.json)
    return 0 if result.outputs_match else 3


@dataclass
class ReportConfig:
    """Render docs/results.md and a plot per suite (speedup over the baseline
    per kernel against every peer, log scale) from the result documents in
    --results (one current JSON per suite, written by `mlir-rl bench --suite
    NAME --json docs/results/NAME.json`). A document that does not follow
    the schema is an error naming the file and the field."""

    results: str = option("docs/results", help="directory of the result documents (*.json); "
                          "the plots are written there")
    output: str = option("docs/results.md", help="the Markdown report",
                         flags=("-o", "--output"))
    html: Optional[str] = option(None, help="also one HTML page with the plots inline")
    readme: str = option("", help="also regenerate this README's overview table (between "
                         "its 'results:begin' and 'results:end' markers; scripts/bench.sh "
                         "passes README.md)")


REPORT_INTRO = (
    "Every figure is a median over timed calls at a fixed thread count, with every "
    "output checked against the unscheduled program (or PyTorch eager, for whole "
    "models); a contender whose output differs is reported as such, never as a "
    "speedup. Speedups are over the suite's baseline (×: higher is faster); "
    "\"mlir-rl vs best peer\" is mlir-rl's speedup over the fastest of the others "
    "(> 1: mlir-rl is faster). \"heuristic\" and \"random decisions\" are the same "
    "pass, front end, rules and lowering with decisions=heuristic or decisions=random "
    "instead of the policy: what the policy's decisions add. Timing on a shared 2-core "
    "machine is noisy: compare figures within one table, not across tables.")


def cmd_report(c: ReportConfig) -> int:
    from mlir_rl.bench import report as R
    if c.readme and not Path(c.readme).exists():
        raise ValueError(f"no README {c.readme!r}")
    for path in R.render(c.results, c.output, html=c.html, intro=REPORT_INTRO,
                         readme=c.readme or None):
        print(path)
    return 0


@dataclass
class CheckPolicyConfig:
    """The policy through the plugin (stock mlir-opt-22) on unseen real-model
    kernels: speedups over unscheduled, output checks."""

    model: str = option("", help="ONNX policy (default: the shipped one)")
    runs: int = option(5, help="timed runs per program")
    threads: int = option(CPUS, help="OpenMP threads")
    json: Optional[str] = option(None, help="also write the result document (JSON, the "
                                 "schema of mlir_rl.bench.report)")
    prepare: bool = option(False, help="run mlir-rl-prepare before the pass (the pipeline "
                           "for imported models); the baseline is the kernel as given")


def cmd_check_policy(c: CheckPolicyConfig) -> int:
    from mlir_rl.bench.timing import check_policy_through_plugin
    from mlir_rl.data.suites import unseen_suite
    from mlir_rl.stats import geomean
    rows = check_policy_through_plugin(unseen_suite(), model=c.model, runs=c.runs,
                                       threads=c.threads, prepare=c.prepare)
    print("| kernel | baseline ms | mlir-rl ms | speedup | outputs | schedule |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.name} | {r.baseline_ms:.3f} | {r.scheduled_ms:.3f} | {r.speedup:.2f}x | "
              f"{'equal' if r.outputs_match else 'DIFFERENT'} | `{r.schedule}` |")
    geo = geomean(r.speedup for r in rows)
    slower = sum(r.speedup < 1 for r in rows)
    print(f"\ngeomean speedup {geo:.2f}x over {len(rows)} kernels; {slower} slower than "
          f"unscheduled; outputs equal: {all(r.outputs_match for r in rows)}")
    if c.json:
        from mlir_rl.bench import report as R
        kernels = [{"name": r.name, "schedule": r.schedule, "runs": c.runs, "figures": {
            "unscheduled": R.figure("ok", r.baseline_seconds),
            "mlir-rl": R.figure("ok" if r.outputs_match else "wrong_output", r.scheduled_seconds,
                                f"max abs error {r.max_abs_error:.3g}")}} for r in rows]
        R.save(R.new_result("check-policy", "unscheduled", ["unscheduled", "mlir-rl"], kernels,
                            c.threads, settings={"runs": c.runs, "prepared": c.prepare},
                            command=_command_line(), model=c.model), c.json)
    return 0 if all(r.outputs_match for r in rows) else 3


@dataclass
class OverheadConfig:
    """Compile-time cost of the policy: inference and transformation per op."""

    files: list[str] = option([], help="modules to schedule", flags=("files",))
    suite: Optional[str] = option(None, help="built-in modules: ops (the operator suite), "
                                  "resnet18 (a ResNet-18-sized module), models (the models "
                                  "suite's imported networks, imported on first use), all")
    model: str = option("", help="ONNX policy (default: the shipped one)")
    repeat: int = option(5, help="repetitions (median, min, max)")
    sample: bool = option(False, help="sampled instead of greedy decoding")
    json: Optional[str] = option(None, help="also write the figures as JSON")


def cmd_overhead(c: OverheadConfig) -> int:
    from mlir_rl.bench.timing import OVERHEAD_HEADER, measure_overhead
    from mlir_rl.data import kernels, suites
    from mlir_rl.core import default_model_path
    modules: dict[str, str] = {}
    if c.suite not in (None, "ops", "resnet18", "models", "all"):
        raise ValueError(f"no suite {c.suite!r}; available: ops, resnet18, models, all")
    if c.suite in ("ops", "all"):
        modules.update(suites.operator_suite())
    if c.suite in ("resnet18", "all"):
        modules["resnet18_layers"] = kernels.resnet18_layers()
    if c.suite in ("models", "all"):
        from mlir_rl.bench.peers import model_file
        from mlir_rl.data.torch_models import MODELS
        for name in MODELS:
            modules[name] = model_file(name).read_text()
    for f in c.files:
        modules[Path(f).stem] = Path(f).read_text()
    if not modules:
        raise ValueError("give files or --suite")
    print(f"policy: {c.model or '(shipped) ' + str(default_model_path())}")
    print(OVERHEAD_HEADER)
    results = []
    for name, text in modules.items():
        r = measure_overhead(name, text, model=c.model, repeat=c.repeat, sample=c.sample)
        results.append(r)
        print(r.row(), flush=True)
    if c.json:
        Path(c.json).write_text(json.dumps([dataclasses.asdict(r) for r in results],
                                           indent=2) + "\n")
    return 0


# -- Policies ------------------------------------------------------------------

@dataclass
class InitPolicyConfig:
    """Write a freshly initialised (untrained) actor-critic checkpoint."""

    output: str = option(help="checkpoint file (.pt)", flags=("-o", "--output"))
    seed: int = option(0, help="seed of the initialisation")
    head_scale: float = option(1.0, help="multiply the actor's output-head weights (>1 makes an "
                               "untrained actor's choices vary with the input; for tests and "
                               "overhead figures)")


def cmd_init_policy(c: InitPolicyConfig) -> int:
    import torch

    from mlir_rl.rl.policy import PolicyConfig, new_checkpoint
    ckpt = new_checkpoint(seed=c.seed, cfg=PolicyConfig())
    if c.head_scale != 1.0:
        for k in ("kind_head.weight", "tile_head.weight", "pointer_head.weight"):
            ckpt["actor"][k] = ckpt["actor"][k] * c.head_scale
        ckpt["provenance"]["note"] = f"untrained, heads scaled x{c.head_scale}"
    Path(c.output).parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, c.output)
    print(f"untrained actor-critic (seed {c.seed}) written to {c.output}")
    return 0


@dataclass
class ExportConfig:
    """Export a checkpoint's actor to ONNX for the pass (and its card, .json)."""

    checkpoint: str = option(help="checkpoint (.pt)", flags=("checkpoint",))
    output: str = option(help="ONNX file (the card policy.json is written beside it)",
                         flags=("-o", "--output"))
    fp32: bool = option(False, help="store weights as float32 (default: float16)")


def cmd_export(c: ExportConfig) -> int:
    from mlir_rl.rl.export import export_checkpoint
    card = export_checkpoint(c.checkpoint, c.output, fp16_weights=not c.fp32)
    print(f"{c.output}: {card['bytes'] / 1e6:.2f} MB, layout {card['layout_hash']}, "
          f"trained={card['trained']}")
    return 0


@dataclass
class ReexportConfig:
    """Re-export an ONNX policy made for another layout of the same sizes
    (weights unchanged), for a layout whose meaning changed; the old hash and
    the note go into its provenance."""

    source: str = option(help="the ONNX policy", flags=("source",))
    output: str = option(help="the re-exported ONNX policy", flags=("-o", "--output"))
    accept_layout: str = option(help="the layout hash the source was exported for")
    note: str = option(help="why its decisions are unchanged (e.g. the evidence)")


def cmd_reexport(c: ReexportConfig) -> int:
    from mlir_rl.rl.export import reexport
    card = reexport(c.source, c.output, c.accept_layout, c.note)
    print(f"{c.output}: layout {c.accept_layout} -> {card['layout_hash']}")
    return 0


# -- Learning ------------------------------------------------------------------

@dataclass
class DatasetConfig:
    """Write a seeded dataset of linalg programs (train/validation split by shape)."""

    output: str = option("runs/dataset", help="directory", flags=("-o", "--output"))
    seed: int = option(0, help="seed of the generators and the split")
    sequences: int = option(24, help="random 5-op sequences")
    lqcd: int = option(8, help="LQCD-style contractions")
    val_fraction: float = option(0.25, help="fraction of shape signatures in the validation split")
    thin: bool = option(False, help="add the thin family (batch-1 linear layers, tall-skinny "
                                    "matmuls, NHWC pooling, layer norm; split on its own: the "
                                    "other programs' split is unchanged); the shipped policy "
                                    "was trained without it (one fine-tuning round on it: docs/learning.md)")
    front_end: bool = option(False, help="write each program as the pass's policy sees it "
                                         "(linalg-rl-schedule's front end: convolutions as "
                                         "im2col + matmul, poolings as strided elementwise ops, "
                                         "odd extents padded), so that training and evaluation "
                                         "schedule what users' programs become in the pass; "
                                         "the shipped policy was trained on programs as written")
    networks: int = option(0, help="add up to this many distinct ops of the imported networks "
                                   "(the models suite, at real sizes; the networks family)")
    random: int = option(0, help="add this many kernels of the random suite's generator, from "
                                 "its training seeds 0, 1, ... (never the seeds reserved for "
                                 "evaluation, 1000 and up; the random family)")


def cmd_dataset(c: DatasetConfig) -> int:
    from mlir_rl.data.dataset import make_dataset
    manifest = make_dataset(c.output, seed=c.seed, sequences=c.sequences, lqcd=c.lqcd,
                            val_fraction=c.val_fraction, thin=c.thin, front_end=c.front_end,
                            networks=c.networks, rand=c.random)
    parts: dict[str, int] = {}
    for e in manifest["programs"]:
        key = f"{e['split']}/{e['family']}"
        parts[key] = parts.get(key, 0) + 1
    print(f"{len(manifest['programs'])} programs in {c.output}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(parts.items())))
    return 0


@dataclass
class TrainConfig:
    """Train a policy with PPO (configs/*.toml hold mlir_rl.rl.ppo.Args)."""

    config: str = option(help="TOML file with mlir_rl.rl.ppo.Args fields", flags=("config",))
    set: list[str] = option([], help="override a setting, KEY=VALUE (repeatable), "
                            "e.g. --set iterations=10")
    resume: bool = option(False, help="continue from run_dir/checkpoint.pt")
    workers: Optional[int] = option(None, help="Ray rollout workers (0: in this process; "
                                    "default from the config)")
    ray_address: Optional[str] = option(None, help="join this Ray cluster (default: a local "
                                        "Ray on this machine's cores)")
    no_progress: bool = option(False, help="no progress bar")


def _parse_overrides(pairs: list[str]) -> dict:
    import tomllib
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {pair!r}")
        try:
            out[key] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            out[key] = value
    return out


def cmd_train(c: TrainConfig) -> int:
    from mlir_rl.rl.export import export_checkpoint
    from mlir_rl.rl.ppo import Args, train
    overrides = _parse_overrides(c.set)
    if c.workers is not None:
        overrides["rollout_workers"] = c.workers
    if c.ray_address:
        overrides["ray_address"] = c.ray_address
        overrides.setdefault("rollout_workers", overrides.get("rollout_workers") or 2)
    args = Args.from_toml(c.config, **overrides)
    run_dir = train(args, resume=c.resume, progress=not c.no_progress)
    card = export_checkpoint(run_dir / "checkpoint.pt", run_dir / "policy.onnx")
    print(f"trained policy: {run_dir / 'policy.onnx'} ({card['bytes'] / 1e6:.1f} MB); "
          f"TensorBoard logs in {run_dir / 'tb'}")
    return 0


def _search_command():
    from mlir_rl.rl.search import SearchConfig

    @dataclass
    class SearchCommand(SearchConfig):
        """Best-of-N schedule search per program of a split (baselines,
        demonstrations); every candidate measured, outputs checked."""

        no_progress: bool = option(False, help="no progress bar")
    return SearchCommand


def cmd_search(c) -> int:
    from mlir_rl.rl.search import SearchConfig, search_dataset, summary
    cfg = SearchConfig(**{f.name: getattr(c, f.name) for f in dataclasses.fields(SearchConfig)})
    res = search_dataset(cfg, progress=not c.no_progress)
    print(f"{len(res)} programs, best-of-{c.budget} {c.sampler} search: geomean "
          f"{summary(res):.2f}x; written to {c.output}")
    return 0


def _evaluate_command():
    from mlir_rl.rl.evaluate import EvalConfig

    @dataclass
    class EvaluateCommand(EvalConfig):
        """The policy against random search and best-of-N structured search on
        a split, per op kind (geomean speedups over unscheduled)."""

        no_progress: bool = option(False, help="no progress bar")
    return EvaluateCommand


def cmd_evaluate(c) -> int:
    from mlir_rl.rl.evaluate import EvalConfig, evaluate
    cfg = EvalConfig(**{f.name: getattr(c, f.name) for f in dataclasses.fields(EvalConfig)})
    report = evaluate(cfg, progress=not c.no_progress)
    print(report["table"])  # evaluate() writes --json, after every program
    return 0


# -- Trust ------------------------------------------------------------------------

def _fuzz_command():
    from mlir_rl.fuzz.runner import FuzzConfig
    return FuzzConfig


def cmd_fuzz(c) -> int:
    from mlir_rl.fuzz.runner import run_fuzz
    report = run_fuzz(c)
    print(f"report: {Path(c.out) / 'report.json'}")
    return 1 if report["failures"] else 0


# -- Where things are ----------------------------------------------------------

@dataclass
class NoOptions:
    """(no options)"""


def cmd_plugin_path(_: NoOptions) -> int:
    from mlir_rl.paths import plugin_path
    print(plugin_path())
    return 0


def cmd_opt_path(_: NoOptions) -> int:
    from mlir_rl.paths import opt_path
    print(opt_path())
    return 0


def cmd_layout(_: NoOptions) -> int:
    from mlir_rl.core import action_kinds, layout, legality
    print(json.dumps({"layout": layout().raw, "legality": legality(),
                      "action_kinds": [{"name": k.name, "mnemonic": k.mnemonic,
                                        "tiled": k.is_tiled, "terminal": k.terminal}
                                       for k in action_kinds()]}, indent=2))
    return 0


# -- Compile-time tuning -------------------------------------------------------

@dataclass
class TuneConfig:
    """Schedule FILE with the policy's K most likely schedules per op
    measured (linalg-rl-schedule{search=K}); winners go to a tuning
    database, so that a later compile (here, or mlir-opt with
    tuning-db=DB) measures nothing."""

    file: str = option(help="MLIR file", flags=("file",))
    output: Optional[str] = option(None, help="write the scheduled IR here (default: stdout)",
                                   flags=("-o", "--output"))
    db: Optional[str] = option(None, help="the tuning database (SQLite; created if missing)")
    search: int = option(8, help="schedules measured per op (0: the database only)")
    threads: int = option(CPUS, help="the thread count the code will run with")
    budget_ms: float = option(0.0, help="time for one op's candidates (0: no limit)")
    candidate_timeout_s: float = option(15.0, help="seconds one candidate may take to compile and "
                                                   "be measured; past it, it counts as a timeout "
                                                   "(0: no limit)")
    model: str = option("", help="the policy (default: the shipped one)")
    prepare: bool = option(False, help="run mlir-rl-prepare first (imported models)")
    lower: bool = option(False, help="print the LLVM-dialect IR after mlir-rl-lower")
    quiet: bool = option(False, help="no progress bar")


def cmd_tune(c: TuneConfig) -> int:
    from mlir_rl.core import read_text
    from mlir_rl.tuning import tune

    def progress(done: int, total: int, line: str) -> None:
        if c.quiet:
            return
        width = 24
        filled = width * done // max(total, 1)
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
              f"{line[:90]:<90}", end="", file=sys.stderr, flush=True)

    r = tune(read_text(c.file), search=c.search, db=c.db, threads=c.threads,
             budget_ms=c.budget_ms, model=c.model, prepare=c.prepare, lower=c.lower,
             progress=progress, name=c.file, candidate_timeout_s=c.candidate_timeout_s)
    if not c.quiet:
        print(file=sys.stderr)
    for line in r.lines:
        print(f"  {line}", file=sys.stderr)
    times = sorted(r.op_seconds)
    median = times[len(times) // 2] if times else 0.0
    print(f"tuned {len(r.lines)} ops in {r.seconds:.1f} s: {r.searched} searched "
          f"(median {median:.2f} s per op, max {max(times, default=0.0):.2f} s), "
          f"{r.from_db} from the database", file=sys.stderr)
    if r.module_check:
        print(f"  {r.module_check}", file=sys.stderr)
    _write_output(r.ir, c.output)
    return 0


@dataclass
class IreeSpecConfig:
    """Write an IREE tuning spec with the policy's tile sizes for FILE's
    contractions (distribution = the TP tiles, vector tiles = the inner T
    tiles): iree-compile FILE --iree-codegen-tuning-spec-path=SPEC. The
    report (stderr) says what each op gets, or why it is left to IREE."""

    file: str = option(help="MLIR file (linalg on tensors, as given to IREE)", flags=("file",))
    output: Optional[str] = option(None, help="write the spec here (default: stdout)",
                                   flags=("-o", "--output"))
    model: str = option("", help="the policy (default: the shipped one)")
    search: int = option(0, help="take the schedules from compile-time tuning (search=K)")
    db: Optional[str] = option(None, help="a tuning database to look schedules up in / fill")
    threads: int = option(CPUS, help="with --search/--db: the thread count of the key")


def cmd_iree_spec(c: IreeSpecConfig) -> int:
    from mlir_rl.core import read_text
    from mlir_rl.iree_spec import write_spec
    extra = []
    if c.search:
        extra += [f"search={c.search}", f"threads={c.threads}"]
    if c.db:
        extra += [f"tuning-db={c.db}"] + ([] if c.search else [f"threads={c.threads}"])
    spec = write_spec(read_text(c.file), model=c.model, extra=tuple(extra), name=c.file)
    print(spec.report(), file=sys.stderr)
    print(f"{len(spec.matched)} ops configured for IREE; the others are left to IREE's own "
          "choice", file=sys.stderr)
    _write_output(spec.text, c.output)
    return 0


@dataclass
class DbConfig:
    """Inspect and share tuning databases: `show DB` (per host and
    context, then each winner), `export DB [-o FILE]` (JSON), `merge INTO
    OTHER...` (each host's entries kept apart; on a conflict the faster
    winner stays)."""

    action: str = option(help="show, export or merge", flags=("action",))
    paths: list[str] = option(help="the database(s)", flags=("paths",))
    output: Optional[str] = option(None, help="export: write the JSON here (default: stdout)",
                                   flags=("-o", "--output"))
    units: bool = option(False, help="export: include each op's unit text")


def cmd_db(c: DbConfig) -> int:
    from mlir_rl.tuning import db_entries, db_merge, db_summary
    if c.action not in ("show", "export", "merge"):
        raise ValueError(f"db: unknown action {c.action!r} (show, export, merge)")
    if c.action == "merge":
        if len(c.paths) < 2:
            raise ValueError("db merge INTO OTHER...: at least two databases")
        for other in c.paths[1:]:
            n = db_merge(c.paths[0], other)
            print(f"{other}: {n} winners added or replaced in {c.paths[0]}")
        return 0
    if len(c.paths) != 1:
        raise ValueError(f"db {c.action} DB: one database")
    entries = db_entries(c.paths[0], with_units=c.units)
    if c.action == "export":
        _write_output(json.dumps(entries, indent=1) + "\n", c.output)
        return 0
    for g in db_summary(entries):
        print(f"host {g['host']}\n  context {g['context']}\n  {g['winners']} winners "
              f"({g['nt']} NT), {g['measurements']} measurements, geomean "
              f"{g['geomean_speedup']:.2f}x over unscheduled")
        for e in entries:
            if (e["host"], e["context"]) == (g["host"], g["context"]):
                speedup = e["baseline_s"] / e["median_s"] if e["median_s"] > 0 else 0.0
                print(f"    {e['signature'][:12]} {e['op']:<22} {e['median_s'] * 1e3:9.3f} ms "
                      f"{speedup:7.1f}x  {e['schedule']}")
    return 0


Command = tuple[str, type, Callable[..., int]]

COMMANDS: dict[str, Command] = {
    "ops": ("list the linalg ops of FILE with their ids", OpsConfig, cmd_ops),
    "optimize": ("apply a schedule to FILE and print the IR", OptimizeConfig, cmd_optimize),
    "prepare": ("run the front end for imported IR (mlir-rl-prepare) on FILE", PrepareConfig,
                cmd_prepare),
    "bench": ("time FILE unscheduled and scheduled, compare outputs; or a suite against peers",
              BenchCommand, cmd_bench),
    "check-policy": ("the policy through the plugin on unseen real-model kernels: speedups and "
                     "output checks", CheckPolicyConfig, cmd_check_policy),
    "overhead": ("compile-time cost of the policy: inference and transformation per op",
                 OverheadConfig, cmd_overhead),
    "init-policy": ("write a freshly initialised (untrained) checkpoint", InitPolicyConfig,
                    cmd_init_policy),
    "export": ("export a checkpoint's actor to ONNX for the pass", ExportConfig, cmd_export),
    "reexport": ("re-export an ONNX policy for this build's layout (same sizes)",
                 ReexportConfig, cmd_reexport),
    "dataset": ("write a seeded dataset of linalg programs", DatasetConfig, cmd_dataset),
    "search": ("best-of-N schedule search per program (baselines, demonstrations)",
               _search_command(), cmd_search),
    "train": ("train a policy with PPO (see configs/ppo.toml)", TrainConfig, cmd_train),
    "evaluate": ("policy vs random and best-of-N search, per op kind", _evaluate_command(),
                 cmd_evaluate),
    "fuzz": ("differential fuzzing: random programs and schedules, outputs checked against "
             "the unscheduled program; failures shrunk to reproducers", _fuzz_command(),
             cmd_fuzz),
    "tune": ("schedule FILE with the policy's proposals measured per op; a tuning database "
             "remembers the winners", TuneConfig, cmd_tune),
    "db": ("show, export or merge tuning databases", DbConfig, cmd_db),
    "iree-spec": ("write an IREE tuning spec with the policy's tile sizes (iree-compile "
                  "--iree-codegen-tuning-spec-path=SPEC)", IreeSpecConfig, cmd_iree_spec),
    "plugin-path": ("print the path of libMlirRL.so", NoOptions, cmd_plugin_path),
    "opt-path": ("print the path of mlir-rl-opt", NoOptions, cmd_opt_path),
    "layout": ("print the feature layout and the legality config as JSON", NoOptions, cmd_layout),
    "report": ("render docs/results.md and its plots from the result documents in docs/results",
               ReportConfig, cmd_report),
}
