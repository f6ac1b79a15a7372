"""The policy's tile sizes for IREE: an IREE tuning spec (``mlir-rl
iree-spec``).

IREE (3.13, llvm-cpu) runs a transform-dialect library given with
``iree-compile --iree-codegen-tuning-spec-path=spec.mlir`` on each
dispatch before choosing its own configuration; an op the spec annotates
with ``compilation_info`` keeps that configuration. The spec written here has
one matcher per contraction the policy scheduled (``transform.iree.match.
contraction`` with the op's element types and its batch, m, n and k sizes:
IREE folds transposes into a dispatch's operands, so the layout is not
matched) and
gives it:

- ``distribution`` = the sizes of the policy's ``TP``/``TF`` (IREE's
  workgroups; 0 = not distributed);
- ``vector_common_parallel`` / ``vector_reduction`` = the sizes of the first
  ``T`` after it on parallel / reduction loops (the tile the policy
  vectorizes; without a ``T``, the distributed tile);
- ``translation_info`` = ``DoubleTilingExpert`` (IREE's tile-and-vectorize
  pipeline): only for ops the policy vectorized (``V``).

The schedule comes from the pass on the program as IREE sees it
(``rewrite-windows=false pad-to-tiles=false pack-rhs=false
register-tiles=false copies-by-rule=false``: IREE does its own dispatch
formation). Left to
IREE, with the reason in the report: ops the policy did not vectorize or
interchanged, elementwise ops (IREE collapses their
loops, so the loop order differs), convolutions (IREE 3.13 drops a spec's
configuration of a batch-1 convolution when it reinserts the batch
dimension, and then fails), and vector tiles above IREE's limit (32 KiB).
Every matched op is marked ``__mlir_rl_tuned__``: counting the marker in
``--iree-hal-dump-executable-configurations-to`` gives the dispatches the
spec matched.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

MARKER = "__mlir_rl_tuned__"
MAX_VECTOR_BYTES = 32 * 1024  # IREE's large-vector check (512 native vectors of 64 B)
_ELEM_BYTES = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "i8": 1}


@dataclass
class SpecEntry:
    op_id: int
    op: str
    schedule: str
    config: Optional[dict] = None   # distribution, vector_common_parallel, vector_reduction
    skipped: str = ""               # why the op is left to IREE


@dataclass
class Spec:
    text: str
    entries: list[SpecEntry] = field(default_factory=list)

    @property
    def matched(self) -> list[SpecEntry]:
        return [e for e in self.entries if e.config]

    def report(self) -> str:
        lines = []
        for e in self.entries:
            if e.config:
                lines.append(f"op {e.op_id} ({e.op}): {e.schedule} -> distribution "
                             f"{e.config['distribution']}, vector_common_parallel "
                             f"{e.config['vector_common_parallel']}, vector_reduction "
                             f"{e.config['vector_reduction']}")
            elif e.skipped.startswith("same signature"):
                lines.append(f"op {e.op_id} ({e.op}): {e.schedule}: {e.skipped}")
            else:
                lines.append(f"op {e.op_id} ({e.op}): left to IREE: {e.skipped}")
        return "\n".join(lines)


def _map_results(text: str) -> list[int]:
    """'affine_map<(d0, d1, d2) -> (d0, d2)>' -> [0, 2] (dims only; a
    constant or an expression gives -1)."""
    m = re.match(r"affine_map<\(([^)]*)\)(?:\[[^\]]*\])? -> \((.*)\)>", text)
    if not m:
        return [-1]
    out = []
    for r in [x.strip() for x in m.group(2).split(",") if x.strip()]:
        d = re.fullmatch(r"d(\d+)", r)
        out.append(int(d.group(1)) if d else -1)
    return out


def _element(type_text: str) -> str:
    m = re.search(r"x([a-z]+\d+)>$", type_text) or re.search(r"<([a-z]+\d+)>$", type_text)
    return m.group(1) if m else type_text


def _roles(info) -> Optional[dict]:
    """Loops of a contraction by role (batch, m, n, k: the dims of
    transform.iree.match.contraction), or None when the op is not a plain
    contraction of two inputs into one output."""
    if len(info.indexing_maps) != 3:
        return None
    lhs, rhs, out = (_map_results(m) for m in info.indexing_maps)
    if -1 in lhs + rhs + out:
        return None
    loops = range(len(info.loop_bounds))
    par = [i for i in loops if info.iterators[i] == "parallel"]
    red = [i for i in loops if info.iterators[i] == "reduction"]
    if not red or set(out) != set(par):
        return None
    roles = {"batch": [i for i in par if i in lhs and i in rhs],
             "m": [i for i in par if i in lhs and i not in rhs],
             "n": [i for i in par if i in rhs and i not in lhs],
             "k": [i for i in red if i in lhs and i in rhs]}
    if not roles["m"] or not roles["n"] or len(roles["k"]) != len(red):
        return None
    # IREE matches by role and size, whatever layout its dispatch gives the
    # operands (it folds transposes into them); the configuration is in
    # loop order, so ours must be the canonical one: batch, m, n, k.
    if roles["batch"] + roles["m"] + roles["n"] + roles["k"] != list(loops):
        return None
    return roles


def config_for(info, actions) -> tuple[Optional[dict], str]:
    """The lowering_config of one op from its actions; (None, why) when it
    is left to IREE."""
    from mlir_rl.core import ActionKind
    kinds = [a.kind for a in actions]
    if ActionKind.VECTORIZATION not in kinds:
        return None, "the policy did not vectorize it"
    if ActionKind.INTERCHANGE in kinds:
        return None, "the policy interchanged its loops"
    if _roles(info) is None:
        kind = info.kind
        return None, (f"not a contraction in batch, m, n, k loop order ({kind})"
                      if kind == "contraction" else f"not a contraction ({kind})")
    n = len(info.loop_bounds)
    dist = [0] * n
    inner = None
    for a in actions:
        # The parallelizing tiling (TP, TF) distributes; the first plain
        # tiling after it is the tile the policy vectorizes.
        if a.info.parallelizes and not any(dist):
            dist = list(a.sizes)
        elif a.kind == ActionKind.TILING and inner is None:
            inner = list(a.sizes)
    if inner is None:
        inner = list(dist)
    # Each vector level holds the tile it vectorizes: 0 means the whole
    # enclosing tile (the distributed one, else the loop).
    vcp = [inner[i] if info.iterators[i] == "parallel" else 0 for i in range(n)]
    vr = [inner[i] if info.iterators[i] == "reduction" else 0 for i in range(n)]
    points = 1
    for i in range(n):
        size = vcp[i] or vr[i] or dist[i] or info.loop_bounds[i]
        points *= size
    elem = _ELEM_BYTES.get(_element(info.operand_types[-1]), 4)
    if points * elem > MAX_VECTOR_BYTES:
        return None, (f"its vector tile ({points} elements) is above IREE's limit of "
                      f"{MAX_VECTOR_BYTES} bytes")
    return {"distribution": dist, "vector_common_parallel": vcp, "vector_reduction": vr}, ""


def _matcher(name: str, info, config: dict) -> str:
    roles = _roles(info)
    sizes = {r: [info.loop_bounds[i] for i in roles[r]] for r in roles}
    lt, rt, ot = (_element(t) for t in info.operand_types[:3])

    def lst(v):
        return "[" + ", ".join(str(x) for x in v) + "]"

    return f"""
  // op {info.id} ({info.name}): loops {lst(info.loop_bounds)}
  transform.named_sequence @{name}(%op: !transform.any_op {{transform.readonly}})
      -> (!transform.any_op, !transform.any_param) {{
    transform.match.operation_name %op ["linalg.generic", "linalg.matmul", "linalg.batch_matmul"] : !transform.any_op
    %batch, %m, %n, %k = transform.iree.match.contraction %op,
        lhs_type = {lt}, rhs_type = {rt}, output_type = {ot}
        : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %batch, {lst(sizes['batch'])} : !transform.param<i64>
    transform.iree.match.dims_equal %m, {lst(sizes['m'])} : !transform.param<i64>
    transform.iree.match.dims_equal %n, {lst(sizes['n'])} : !transform.param<i64>
    transform.iree.match.dims_equal %k, {lst(sizes['k'])} : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<
      lowering_config = #iree_cpu.lowering_config<
        distribution = {lst(config['distribution'])},
        vector_common_parallel = {lst(config['vector_common_parallel'])},
        vector_reduction = {lst(config['vector_reduction'])}>,
      translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
    > -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }}
"""


def write_spec(text: str, model: str = "", extra: tuple[str, ...] = (),
               name: str = "<input>") -> Spec:
    """The tuning spec of ``text`` (linalg on tensors, as given to IREE)
    with the policy ``model`` (default: the shipped one); ``extra``: more
    pass options (``search=8``, ``tuning-db=...``)."""
    from mlir_rl.core import Module, parse_schedule
    from mlir_rl.passes import run_pass

    # IREE compiles the ops as given: the policy's decisions on them, not
    # on rewritten (fused, windows, padding, flattened) or packed ones: the
    # pipeline's stages off.
    result = run_pass(text, model=model, name=name,
                      extra=["bf16-dot=false", "fuse-elementwise=false", "rewrite-windows=false",
                             "pad-to-tiles=false", "flatten-elementwise=false", "pack-rhs=false",
                             "register-tiles=false", "copies-by-rule=false", *extra])
    infos = {o.id: o for o in Module.parse(text, name).ops()}
    entries, matchers, seen = [], [], {}
    for op_id, actions in parse_schedule(result.schedule):
        info = infos.get(op_id)
        if info is None:
            continue
        sched = " ".join(str(a) for a in actions)
        config, why = config_for(info, actions)
        entry = SpecEntry(op_id, info.name, sched, config, why)
        entries.append(entry)
        if not config:
            continue
        # Two ops of the same sizes match the same dispatches: the first
        # (in the pass's order) gives the configuration.
        roles = _roles(info)
        key = (tuple(tuple(info.loop_bounds[i] for i in roles[r]) for r in roles),
               tuple(_element(t) for t in info.operand_types[:3]))
        if key in seen:
            entry.skipped = f"same signature as op {seen[key]}, whose configuration it gets"
            entry.config = None
            continue
        seen[key] = op_id
        matchers.append((f"match_op{op_id}", _matcher(f"match_op{op_id}", info, config)))
    entries.sort(key=lambda e: e.op_id)
    body = "".join(m for _, m in matchers)
    if matchers:
        cases = ",\n        ".join(f"@{n} -> @apply_op_config" for n, _ in matchers)
        entry_seq = f"""
  transform.named_sequence @__kernel_config(%variant_op: !transform.any_op {{transform.consumed}})
      -> !transform.any_op attributes {{ iree_codegen.tuning_spec_entrypoint }} {{
    %res = transform.foreach_match in %variant_op
        {cases}
      : (!transform.any_op) -> !transform.any_op
    transform.yield %res : !transform.any_op
  }}
"""
    else:
        entry_seq = """
  transform.named_sequence @__kernel_config(%variant_op: !transform.any_op {transform.consumed})
      -> !transform.any_op attributes { iree_codegen.tuning_spec_entrypoint } {
    transform.yield %variant_op : !transform.any_op
  }
"""
    spec = f"""// IREE tuning spec written by mlir-rl iree-spec: the policy's tile sizes.
// iree-compile ... --iree-codegen-tuning-spec-path=THIS_FILE
module @mlir_rl_spec attributes {{ transform.with_named_sequence }} {{
  transform.named_sequence @apply_op_config(%op: !transform.any_op {{transform.readonly}},
                                            %config: !transform.any_param {{transform.readonly}}) {{
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.annotate %op "{MARKER}" : !transform.any_op
    transform.yield
  }}
{body}{entry_seq}}}
"""
    return Spec(spec, entries)


def count_matches(config_dump_dir) -> tuple[int, int]:
    """(dispatches the spec configured, dispatches) in an
    ``--iree-hal-dump-executable-configurations-to`` directory."""
    from pathlib import Path
    files = sorted(Path(config_dump_dir).glob("*.mlir"))
    matched = sum(1 for f in files if MARKER in f.read_text())
    return matched, len(files)
