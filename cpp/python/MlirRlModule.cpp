//===- MlirRlModule.cpp - mlir_rl._core (nanobind) ------------------------===//
//
// A thin, private extension: Python reaches the same C++ (features, masks,
// the action space, decoding, lowering, JIT timing) that the pass runs,
// through typed classes (Action, Step, Masks, OpInfo, ...). Only the facade
// of Program.h and the MLIR-free vocabulary of Support/Action.h cross the
// boundary.
//
//===----------------------------------------------------------------------===//
#include "Program.h"
#include "llvm/Config/llvm-config.h"
#include "mlir-rl/Runtime/BufferPool.h"
#include "mlir-rl/Transforms/FrontEnd.h"
#include "mlir-rl/Tuning/Measure.h"
#include "mlir-rl/Tuning/TuningDb.h"

#include <cstring>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <deque>

namespace nb = nanobind;
using namespace nb::literals;
using namespace mlir::rl;

namespace {

template <typename T>
nb::ndarray<nb::numpy, T> toNumpy(std::vector<T> values,
                                  std::vector<size_t> shape = {}) {
  auto *heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void *p) noexcept {
    delete static_cast<std::vector<T> *>(p);
  });
  if (shape.empty())
    shape = {heap->size()};
  return nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.data(),
                                   owner);
}

nb::ndarray<nb::numpy, bool> toBool(const std::vector<uint8_t> &v,
                                    std::vector<size_t> shape = {}) {
  auto *heap = new bool[v.size() ? v.size() : 1];
  for (size_t i = 0; i < v.size(); ++i)
    heap[i] = v[i] != 0;
  nb::capsule owner(heap, [](void *p) noexcept { delete[] static_cast<bool *>(p); });
  if (shape.empty())
    shape = {v.size()};
  return nb::ndarray<nb::numpy, bool>(heap, shape.size(), shape.data(), owner);
}

std::vector<int64_t> toInt64(const std::vector<int> &v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// Checks `inputs`/`outputs` against `sig` (count, dtype, shape; a
/// ValueError otherwise) and collects their data pointers.
void checkBuffers(const FunctionSignature &sig, std::vector<Array> &inputs,
                  std::vector<Array> &outputs, std::vector<const void *> &in,
                  std::vector<void *> &out) {
  auto check = [](const Array &a, const HostTensor &t, const std::string &what) {
    // bf16 and f16 by their DLPack codes (torch tensors; numpy's float16).
    nb::dlpack::dtype want =
        t.elementType == "f32"    ? nb::dtype<float>()
        : t.elementType == "f64"  ? nb::dtype<double>()
        : t.elementType == "i32"  ? nb::dtype<int32_t>()
        : t.elementType == "bf16" ? nb::dlpack::dtype{
                                        (uint8_t)nb::dlpack::dtype_code::Bfloat,
                                        16, 1}
        : t.elementType == "f16"  ? nb::dlpack::dtype{
                                       (uint8_t)nb::dlpack::dtype_code::Float,
                                       16, 1}
                                  : nb::dtype<int64_t>();
    // numpy has no bf16: a uint16 array holds a bf16 tensor's bits.
    bool ok = (a.dtype() == want ||
               (t.elementType == "bf16" && a.dtype() == nb::dtype<uint16_t>())) &&
              a.ndim() == t.shape.size();
    for (size_t i = 0; ok && i < t.shape.size(); ++i)
      ok = (int64_t)a.shape(i) == t.shape[i];
    if (!ok) {
      std::string shape;
      for (int64_t d : t.shape)
        shape += std::to_string(d) + "x";
      throw nb::value_error(
          (what + " must be a contiguous " + shape + t.elementType + " array")
              .c_str());
    }
  };
  if (inputs.size() != sig.inputs.size() || outputs.size() != sig.outputs.size())
    throw nb::value_error((sig.name + " takes " +
                           std::to_string(sig.inputs.size()) + " inputs and " +
                           std::to_string(sig.outputs.size()) + " outputs")
                              .c_str());
  for (size_t i = 0; i < inputs.size(); ++i) {
    check(inputs[i], sig.inputs[i], "input " + std::to_string(i));
    in.push_back(inputs[i].data());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check(outputs[i], sig.outputs[i], "output " + std::to_string(i));
    out.push_back(outputs[i].data());
  }
}

nb::dict tensorDict(const HostTensor &t) {
  nb::dict d;
  d["shape"] = t.shape;
  d["dtype"] = t.elementType;
  return d;
}

/// What scheduling with a policy cost and did, for Python.
nb::dict runInfoDict(const PolicyRunInfo &info) {
  nb::dict d;
  d["ops"] = info.ops;
  d["inferences"] = info.inferences;
  d["memo_hits"] = info.memoHits;
  d["inference_seconds"] = info.inferenceSeconds;
  d["applications"] = info.applications;
  d["apply_seconds"] = info.applySeconds;
  d["warnings"] = info.warnings;
  d["packed"] = info.packed;
  d["register_tiled"] = info.registerTiled;
  d["copies_by_rule"] = info.copiesByRule;
  d["not_rescheduled"] = info.notRescheduled;
  return d;
}

int64_t layoutSize(const char *key) {
  static LayoutInfo info = getLayoutInfo();
  for (auto &[k, v] : info.sizes)
    if (k == key)
      return v;
  return 0;
}

/// Masks with the layout's shapes, as numpy arrays.
struct Masks {
  MaskInfo info;
  DecisionPhase phase() const { return info.phase; }
  nb::ndarray<nb::numpy, bool> kind() const { return toBool(info.kind); }
  nb::ndarray<nb::numpy, bool> tile() const {
    return toBool(info.tile, {(size_t)kNumTiledKinds,
                              (size_t)layoutSize("max_loops"),
                              (size_t)layoutSize("num_tile_sizes")});
  }
  nb::ndarray<nb::numpy, bool> pointer() const { return toBool(info.pointer); }
  nb::ndarray<nb::numpy, bool> unsplit() const {
    return toBool(info.unsplit, {(size_t)kNumTiledKinds,
                                 (size_t)layoutSize("max_loops"),
                                 (size_t)layoutSize("num_tile_sizes")});
  }
  nb::ndarray<nb::numpy, uint8_t> flat() const {
    std::vector<uint8_t> out(info.kind);
    out.insert(out.end(), info.tile.begin(), info.tile.end());
    out.insert(out.end(), info.pointer.begin(), info.pointer.end());
    return toNumpy(std::move(out));
  }
  bool allowed(ActionKind k) const { return info.kind[(int)k]; }
  std::vector<ActionKind> allowedKinds() const {
    std::vector<ActionKind> out;
    for (int k = 0; k < kNumActionKinds; ++k)
      if (info.kind[k])
        out.push_back((ActionKind)k);
    return out;
  }
  /// The tile sizes allowed for loop `loop` of tiled kind `k`.
  std::vector<int64_t> allowedSizes(ActionKind k, int loop) const {
    static LayoutInfo layout = getLayoutInfo();
    if (!getActionKindInfo(k).isTiled())
      throw nb::value_error("allowed_sizes: the kind takes no tile sizes");
    int n = layoutSize("max_loops"), m = layoutSize("num_tile_sizes");
    if (loop < 0 || loop >= n)
      throw nb::index_error("allowed_sizes: loop out of range");
    std::vector<int64_t> out;
    for (int c = 0; c < m; ++c)
      if (info.tile[((int)k * n + loop) * m + c])
        out.push_back(layout.tileCandidates[c]);
    return out;
  }
  std::vector<int64_t> allowedPointers() const {
    std::vector<int64_t> out;
    for (size_t l = 0; l < info.pointer.size(); ++l)
      if (info.pointer[l])
        out.push_back(l);
    return out;
  }
};

void checkOp(const Program &p, int64_t id) {
  if (!p.hasOp(id))
    throw nb::index_error(("no op " + std::to_string(id) +
                           " in the module (ids are numbered from 0; `mlir-rl "
                           "ops FILE` lists them)")
                              .c_str());
}

std::string upperName(const char *name) {
  std::string s(name);
  for (char &c : s)
    c = std::toupper(static_cast<unsigned char>(c));
  return s;
}

Action parseActionOrThrow(const std::string &text) {
  std::string error;
  std::optional<Action> a = parseActionText(text, error);
  if (!a)
    throw nb::value_error(error.c_str());
  return *a;
}

/// Accepts an Action or its text.
Action toAction(nb::handle h) {
  if (nb::isinstance<Action>(h))
    return nb::cast<Action>(h);
  if (nb::isinstance<nb::str>(h))
    return parseActionOrThrow(nb::cast<std::string>(h));
  throw nb::type_error("expected an Action or its text, e.g. 'TP(32,64,0)'");
}

/// A Python on_step(op_id, step, schedule_so_far) as a StepObserver (none
/// for None). Its exception is kept for after the run: none may unwind
/// through the C++ scheduler.
StepObserver makeObserver(Program &p, nb::object fn,
                          std::optional<nb::python_error> &pending) {
  if (fn.is_none())
    return nullptr;
  return [&p, fn, &pending](int64_t id, const Step &step) {
    if (pending)
      return;
    try {
      fn(id, step, p.getScheduleText());
    } catch (nb::python_error &e) {
      pending.emplace(std::move(e));
    }
  };
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "mlir-rl native core: features, masks, the action space, "
            "lowering, JIT";

  // -- The vocabulary --------------------------------------------------------
  {
    // Names must outlive the enum's creation; derived from ActionKinds.def.
    static std::deque<std::string> names;
    auto kinds = nb::enum_<ActionKind>(m, "ActionKind",
                                       "The transformations (ActionKinds.def).",
                                       nb::is_arithmetic());
    for (const ActionKindInfo &info : kActionKinds)
      kinds.value(names.emplace_back(upperName(info.name)).c_str(), info.kind);
  }
  nb::enum_<ActionParams>(m, "ActionParams", nb::is_arithmetic())
      .value("TILE_SIZES", ActionParams::TileSizes)
      .value("PERMUTATION", ActionParams::Permutation)
      .value("NONE", ActionParams::None);
  nb::enum_<DecisionPhase>(m, "DecisionPhase",
                           "Which decision an op waits for.", nb::is_arithmetic())
      .value("TRANSFORMATION", DecisionPhase::Transformation)
      .value("INTERCHANGE_POINTER", DecisionPhase::InterchangePointer)
      .value("DONE", DecisionPhase::Done);
  nb::enum_<StepStatus>(m, "ApplyStatus", "Outcome of applying a decision.",
                        nb::is_arithmetic())
      .value("APPLIED", StepStatus::Applied)
      .value("ILLEGAL", StepStatus::Illegal)
      .value("FAILED", StepStatus::Failed);

  nb::class_<ActionKindInfo>(m, "ActionKindInfo",
                             "Properties of an action kind (ActionKinds.def).")
      .def_ro("kind", &ActionKindInfo::kind)
      .def_prop_ro("mnemonic",
                   [](const ActionKindInfo &i) { return std::string(i.mnemonic); })
      .def_prop_ro("name",
                   [](const ActionKindInfo &i) { return std::string(i.name); })
      .def_ro("params", &ActionKindInfo::params)
      .def_prop_ro("is_tiled", &ActionKindInfo::isTiled,
                   "takes one tile size per loop; its index is its row of "
                   "the tile head")
      .def_prop_ro("parallel_only",
                   [](const ActionKindInfo &i) { return i.has(kParallelOnly); })
      .def_prop_ro("needs_split", [](const ActionKindInfo &i) {
        return i.has(kNeedsSplit);
      }, "illegal when no loop gets a size above 0 and below its extent; "
         "decoding then skips this kind")
      .def_prop_ro("parallelizes",
                   [](const ActionKindInfo &i) { return i.has(kParallelizes); })
      .def_prop_ro("fuses_producer",
                   [](const ActionKindInfo &i) { return i.has(kFusesProducer); })
      .def_prop_ro("terminal",
                   [](const ActionKindInfo &i) { return i.has(kTerminal); })
      .def("__repr__", [](const ActionKindInfo &i) {
        return std::string("ActionKindInfo(") + i.name + ", " + i.mnemonic + ")";
      });
  m.def("action_kinds", []() {
    return std::vector<ActionKindInfo>(std::begin(kActionKinds),
                                       std::end(kActionKinds));
  }, "Every action kind's properties, in index order.");
  m.def("kind_info", &getActionKindInfo, nb::rv_policy::copy, "kind"_a);

  nb::class_<Action>(m, "Action", "One action on one op.")
      .def("__init__",
           [](Action *self, ActionKind kind, std::vector<int64_t> sizes) {
             new (self) Action{kind, std::move(sizes)};
           },
           "kind"_a, "sizes"_a = std::vector<int64_t>{})
      .def_rw("kind", &Action::kind)
      .def_rw("sizes", &Action::sizes,
              "tile sizes (tiled kinds) or the permutation (interchange)")
      .def_static("parse", &parseActionOrThrow, "text"_a,
                  "Parses 'TP(32,64,0)', 'V', ... (ValueError if malformed).")
      .def_prop_ro("info", [](const Action &a) { return a.info(); })
      .def("__str__", &Action::str)
      .def("__repr__", [](const Action &a) { return "Action(" + a.str() + ")"; })
      .def("__eq__", [](const Action &a, const Action &b) { return a == b; })
      .def("__hash__", [](const Action &a) { return std::hash<std::string>()(a.str()); });

  nb::class_<Step>(m, "Step",
                   "One decision: an action, or an interchange level pointer.")
      .def_ro("is_pointer", &Step::isPointer)
      .def_ro("pointer", &Step::pointer)
      .def_ro("action", &Step::action)
      .def("__str__", &Step::str)
      .def("__repr__", [](const Step &s) { return "Step(" + s.str() + ")"; })
      .def("__eq__", [](const Step &a, const Step &b) { return a == b; });

  nb::class_<Masks>(m, "Masks",
                    "Legal choices now: kind [A], tile [T, N, M] (T = tiled "
                    "kinds, in ActionKind order), pointer [N].")
      .def_prop_ro("phase", &Masks::phase)
      .def_prop_ro("kind", &Masks::kind, nb::rv_policy::move)
      .def_prop_ro("tile", &Masks::tile, nb::rv_policy::move)
      .def_prop_ro("pointer", &Masks::pointer, nb::rv_policy::move)
      .def_prop_ro("unsplit", &Masks::unsplit, nb::rv_policy::move,
                   "[T, N, M]: choices that split no loop (size 0 or the "
                   "loop's extent); a kind that needs a split is illegal "
                   "when every loop's choice is one")
      .def("flat", &Masks::flat,
           "[kind, tile, pointer] flattened, as the policy's mask input")
      .def("allowed", &Masks::allowed, "kind"_a)
      .def("allowed_kinds", &Masks::allowedKinds)
      .def("allowed_sizes", &Masks::allowedSizes, "kind"_a, "loop"_a)
      .def("allowed_pointers", &Masks::allowedPointers);

  nb::class_<OpInfo>(m, "OpInfo", "One linalg op of a module, as numbered by "
                                  "the pass, and its schedule so far.")
      .def_ro("id", &OpInfo::id)
      .def_ro("name", &OpInfo::name)
      .def_ro("kind", &OpInfo::kind)
      .def_ro("function", &OpInfo::function)
      .def_ro("supported", &OpInfo::supported)
      .def_ro("reason", &OpInfo::reason)
      .def_ro("producer", &OpInfo::producer)
      .def_ro("consumers", &OpInfo::consumers)
      .def_ro("loop_bounds", &OpInfo::loopBounds)
      .def_ro("iterators", &OpInfo::iterators)
      .def_ro("indexing_maps", &OpInfo::indexingMaps)
      .def_ro("operand_types", &OpInfo::operandTypes)
      .def_ro("flops", &OpInfo::flops,
              "arithmetic operations of the op in its current form "
              "(iterations x arithmetic ops of the body; 0 once "
              "transformed or where a loop is dynamic)")
      .def_ro("history", &OpInfo::history)
      .def_ro("phase", &OpInfo::phase)
      .def_prop_ro("done",
                   [](const OpInfo &o) { return o.phase == DecisionPhase::Done; })
      .def_prop_ro("in_interchange", [](const OpInfo &o) {
        return o.phase == DecisionPhase::InterchangePointer;
      })
      .def("__repr__", [](const OpInfo &o) {
        return "OpInfo(" + std::to_string(o.id) + ", " + o.name + ", " + o.kind +
               (o.supported ? "" : ", unsupported: " + o.reason) + ")";
      });

  nb::class_<StepOutcome>(m, "StepOutcome", "What an index-based step did.")
      .def_ro("status", &StepOutcome::status)
      .def_ro("step", &StepOutcome::step, "the decision executed")
      .def_prop_ro("indices",
                   [](const StepOutcome &o) { return toNumpy(toInt64(o.indices)); },
                   nb::rv_policy::move,
                   "the executed decision's indices [kind, tiles..., pointer]")
      .def_ro("fallback", &StepOutcome::fallback,
              "the chosen indices were not legal as given; decoding fell back")
      .def_ro("message", &StepOutcome::message);

  nb::class_<DemonstrationStep>(m, "DemonstrationStep")
      .def_ro("op", &DemonstrationStep::op)
      .def_ro("phase", &DemonstrationStep::phase)
      .def_prop_ro("observation", [](const DemonstrationStep &d) {
        return toNumpy(d.observation);
      }, nb::rv_policy::move)
      .def_prop_ro("mask", [](const DemonstrationStep &d) { return toNumpy(d.mask); },
                   nb::rv_policy::move)
      .def_prop_ro("unsplit", [](const DemonstrationStep &d) { return toNumpy(d.unsplit); },
                   nb::rv_policy::move)
      .def_prop_ro("indices", [](const DemonstrationStep &d) {
        return toNumpy(toInt64(d.indices));
      }, nb::rv_policy::move);

  // -- Layout, legality, grammar ---------------------------------------------
  m.def("layout", []() {
    LayoutInfo info = getLayoutInfo();
    nb::dict d;
    for (auto &[k, v] : info.sizes)
      d[k.c_str()] = v;
    d["tile_candidates"] = info.tileCandidates;
    d["op_kinds"] = info.opKinds;
    d["hash"] = info.hash;
    d["description"] = info.description;
    return d;
  }, "The observation layout: limits, sizes, offsets, names and its hash.");
  m.def("legality", []() {
    LegalityInfo info = getLegalityInfo();
    nb::dict d;
    for (auto &[k, v] : info.limits)
      d[k.c_str()] = v;
    d["hash"] = info.hash;
    d["description"] = info.description;
    return d;
  }, "The legality config: the action space's limits, versioned apart "
     "from the layout.");
  m.def("parse_schedule", [](const std::string &text) {
    std::vector<ScheduleEntryText> out;
    std::string error;
    if (!parseScheduleText(text, out, error))
      throw nb::value_error(("malformed schedule '" + text + "': " + error).c_str());
    return out;
  }, "text"_a,
        "The schedule grammar: [(op id or None, [Action, ...], [(choice, "
        "value), ...]), ...].");
  m.def("schedule_prelude", [](const std::string &text) {
    std::vector<ScheduleEntryText> entries;
    std::optional<std::string> prelude;
    std::string error;
    if (!parseScheduleText(text, entries, error, &prelude))
      throw nb::value_error(("malformed schedule '" + text + "': " + error).c_str());
    return prelude;
  }, "text"_a,
        "A trace's prelude: the passes between its brackets (None without "
        "brackets).");
  m.def("format_schedule",
        [](const std::vector<ScheduleEntryText> &entries,
           std::optional<std::string> prelude) {
          std::string out, error;
          if (!formatScheduleText(entries, out, error, prelude))
            throw nb::value_error(error.c_str());
          return out;
        }, "entries"_a, "prelude"_a = nb::none(),
        "parse_schedule's inverse (a trace where `prelude` is given).");
  m.def("schedule_header", &formatScheduleHeaderText, "schedule"_a,
        "The first line of a dump-schedule file.");
  m.def("read_schedule_header", &readScheduleHeaderText, "text"_a,
        "The schedule of a dump-schedule file (None without its header).");
  m.def("clear_policy_memos", &clearPolicyMemos,
        "Forget what the ONNX policies memoized (for cold-start timings).");
  m.def("terminal_mask", []() { return toNumpy(getTerminalMask()); },
        "The flat mask when no decision is left (only NT).");
  m.def("policy_input_names", &getPolicyInputNames);
  m.def("policy_output_names", &getPolicyOutputNames);
  m.def("policy_layout_hash_key", &getPolicyLayoutHashKey);
  m.def("policy_prior_key", &getPolicyPriorKey);
  m.def(
      "prior_logits",
      [](const std::string &name,
         nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>
             observations) {
        size_t rows = observations.shape(0);
        std::vector<float> kind, tile, pointer;
        std::string error;
        if (!computePriorLogitsBatch(name, observations.data(), rows,
                                     observations.shape(1), kind, tile,
                                     pointer, error))
          throw nb::value_error(error.c_str());
        size_t k = rows ? kind.size() / rows : 0, t = rows ? tile.size() / rows : 0,
               p = rows ? pointer.size() / rows : 0;
        return nb::make_tuple(toNumpy(std::move(kind), {rows, k}),
                              toNumpy(std::move(tile), {rows, t}),
                              toNumpy(std::move(pointer), {rows, p}));
      },
      "name"_a, "observations"_a,
      "The prior `name`'s logits for observations (B, observation size): "
      "kind (B, A), tile (B, T*N*M) and pointer (B, N), as the pass adds "
      "them to a residual policy's.");
  m.def("default_model_path", &getDefaultModelPath,
        "Where the pass looks for the policy when model= is not given.");
  m.def("default_ort_library", &getDefaultOrtLibrary,
        "The ONNX Runtime library the pass loads when ort-lib= is not given.");
  m.def(
      "policy_info",
      [](const std::string &model, const std::string &ortLib) {
        std::string error;
        std::map<std::string, std::string> info =
            getPolicyInfo(model, ortLib, error);
        if (info.empty())
          throw nb::value_error(error.c_str());
        return info;
      },
      "model"_a = "", "ort_lib"_a = "",
      "The policy the pass would load (\"\" = the shipped one): its ONNX "
      "metadata, model_path, ort_library and ort_version.");
  m.def("llvm_version", []() { return std::string(LLVM_VERSION_STRING); },
        "The LLVM/MLIR release mlir-rl was built against.");
  m.def(
      "tuning_db_export",
      [](const std::string &path, bool withUnits) {
        std::string error;
        std::unique_ptr<mlir::rl::TuningDb> db =
            mlir::rl::TuningDb::open(path, error);
        if (!db)
          throw nb::value_error(error.c_str());
        return db->exportJson(withUnits);
      },
      "path"_a, "with_units"_a = false,
      "The winners of a tuning database as a JSON array (signature, host, "
      "context, op, schedule, median_s, baseline_s, candidates, "
      "measurements; unit: the op's unit text).");
  m.def(
      "tuning_db_merge",
      [](const std::string &into, const std::string &from) {
        std::string error;
        std::unique_ptr<mlir::rl::TuningDb> db =
            mlir::rl::TuningDb::open(into, error);
        if (!db)
          throw nb::value_error(error.c_str());
        mlir::FailureOr<int64_t> n = db->merge(from, error);
        if (mlir::failed(n))
          throw nb::value_error(
              ("merging " + from + " into " + into + ": " + error).c_str());
        return *n;
      },
      "into"_a, "other"_a,
      "Copies another tuning database's entries in (each host's apart; on "
      "a conflict the faster winner stays); returns the winners added or "
      "replaced.");
  m.def("tuning_host", &mlir::rl::getTuningHost,
        "The host part of the tuning database's keys.");
  m.def("tuning_context", &mlir::rl::getTuningContext, "threads"_a,
        "The context part of the tuning database's keys.");
  m.def("measure_tool", &mlir::rl::findMeasureTool,
        "The measurement helper (mlir-rl-measure) search=K runs.");
  m.def("buffer_pool_cached_bytes", &mlir::rl::getPoolCachedBytes,
        "Bytes the JIT'd code's buffer pool holds for reuse (freed blocks "
        "of 64 KiB and more, kept for the next call).");
  m.def("lowering_pipeline", &getLoweringPipelineText,
        "The textual lowering pipeline (registered as mlir-rl-lower).");
  m.def("prepare_pipeline", &getPreparePipelineText,
        "The textual front end for imported IR (registered as "
        "mlir-rl-prepare).");
  m.def("front_end_steps", &getFrontEndStepsText,
        "The passes mlir-rl-prepare runs, as pipeline text (without its "
        "mark on the module).");
  m.def(
      "prepare",
      [](const std::string &text, const std::string &name) {
        std::string out, error;
        bool ok;
        {
          nb::gil_scoped_release release;
          ok = prepareText(text, name, out, error);
        }
        if (!ok)
          throw nb::value_error(("cannot prepare " + name + ":\n" + error)
                                    .c_str());
        return out;
      },
      "text"_a, "name"_a = "<input>",
      "`text` (a module) through mlir-rl-prepare: elementwise chains fused, "
      "pads folded into their producers, one init per consumer.");
  m.def(
      "prepare_with",
      [](const std::string &text, const std::string &steps,
         const std::string &name) {
        std::string out, error;
        bool ok;
        {
          nb::gil_scoped_release release;
          ok = prepareTextWith(text, name, steps, out, error);
        }
        if (!ok)
          throw nb::value_error(("cannot prepare " + name + ":\n" + error)
                                    .c_str());
        return out;
      },
      "text"_a, "steps"_a, "name"_a = "<input>",
      "`text` through `steps` (front_end_steps() with options changed) "
      "instead of mlir-rl-prepare, marked as prepared all the same.");
  m.def(
      "front_end",
      [](const std::string &text, const std::string &name,
         const PipelineSettings &settings) {
        std::string out, error;
        bool ok;
        {
          nb::gil_scoped_release release;
          ok = frontEndText(text, name, settings, out, error);
        }
        if (!ok)
          throw nb::value_error(
              ("cannot run the front end on " + name + ":\n" + error)
                  .c_str());
        return out;
      },
      "text"_a, "name"_a = "<input>", "settings"_a,
      "`text` (a module) through the schedule pipeline's front end only "
      "(the stages `settings` enables), as the decisions see it.");

  // -- Compiled functions (the torch.compile backend's runtime) -------------
  nb::class_<JitFunction>(m, "JitFunction",
                          "A lowered, JIT-compiled tensor function, called "
                          "on the caller's buffers.")
      .def_prop_ro("signature",
                   [](const JitFunction &f) {
                     nb::dict d;
                     nb::list ins, outs;
                     for (auto &t : f.getSignature().inputs)
                       ins.append(tensorDict(t));
                     for (auto &t : f.getSignature().outputs)
                       outs.append(tensorDict(t));
                     d["name"] = f.getSignature().name;
                     d["inputs"] = ins;
                     d["outputs"] = outs;
                     return d;
                   })
      .def_prop_ro("from_object", &JitFunction::isLoaded,
                   "Whether the machine code was loaded from an object "
                   "file (compile_function's object_cache), not compiled.")
      .def(
          "__call__",
          [](JitFunction &f, std::vector<Array> inputs,
             std::vector<Array> outputs) {
            std::vector<const void *> in;
            std::vector<void *> out;
            checkBuffers(f.getSignature(), inputs, outputs, in, out);
            std::string error;
            bool ok;
            {
              nb::gil_scoped_release release;
              ok = mlir::succeeded(f.call(in, out, error));
            }
            if (!ok)
              throw std::runtime_error(error);
          },
          // Outputs are never converted: a converted copy would take the
          // results and be dropped. Inputs may be (a contiguous copy).
          "inputs"_a, nb::arg("outputs").noconvert(),
          "Runs the function: `inputs` are read in place (non-contiguous "
          "ones through a contiguous copy), the results are written into "
          "`outputs` (contiguous CPU arrays of the signature's shapes and "
          "dtypes: numpy arrays or torch tensors).")
      .def(
          "time",
          [](JitFunction &f, std::vector<Array> inputs,
             std::vector<Array> outputs, int runs, int warmup) {
            std::vector<const void *> in;
            std::vector<void *> out;
            checkBuffers(f.getSignature(), inputs, outputs, in, out);
            std::string error;
            std::vector<double> seconds;
            bool ok;
            {
              nb::gil_scoped_release release;
              ok = mlir::succeeded(
                  f.time(in, out, runs, warmup, seconds, error));
            }
            if (!ok)
              throw std::runtime_error(error);
            return seconds;
          },
          "inputs"_a, nb::arg("outputs").noconvert(), "runs"_a = 1,
          "warmup"_a = 0,
          "Calls the function `warmup` times, then `runs` times timed, in "
          "one loop on the same buffers, and returns each timed call's "
          "seconds, the compiled code alone (no copies); the last call's "
          "results are written into `outputs`.")
      .def(
          "random_inputs",
          [](const JitFunction &f, uint64_t seed) {
            nb::list out;
            for (HostTensor &t : makeRandomInputs(f.getSignature(), seed)) {
              std::vector<size_t> shape(t.shape.begin(), t.shape.end());
              auto cast = [&](auto tag) {
                using T = decltype(tag);
                return toNumpy(std::vector<T>(t.data.begin(), t.data.end()),
                               shape); // rank 0: [1], reshaped below
              };
              nb::object a;
              if (t.elementType == "f32") {
                a = nb::cast(cast(float{}));
              } else if (t.elementType == "bf16") {
                // As uint16 arrays of its bits (numpy has no bf16): the
                // high half of each value's f32 bits (its values are bf16's).
                std::vector<uint16_t> bits;
                for (double v : t.data) {
                  float f = (float)v;
                  uint32_t u;
                  std::memcpy(&u, &f, 4);
                  bits.push_back((uint16_t)(u >> 16));
                }
                a = nb::cast(toNumpy(std::move(bits), shape));
              } else if (t.elementType == "f16")
                a = nb::cast(cast(float{})).attr("astype")("float16");
              else if (t.elementType == "f64")
                a = nb::cast(cast(double{}));
              else if (t.elementType == "i32")
                a = nb::cast(cast(int32_t{}));
              else
                a = nb::cast(cast(int64_t{}));
              if (shape.empty())
                a = a.attr("reshape")(nb::tuple());
              out.append(a);
            }
            return out;
          },
          "seed"_a = 0,
          "The inputs Program.time gives this function for `seed` (numpy "
          "arrays of the signature's shapes and dtypes; a bf16 input as a "
          "uint16 array of its bits, which the function also takes, numpy "
          "having no bf16).");
  m.def(
      "compile_function",
      [](const std::string &text, const std::string &function, int threads,
         const std::string &objectCache) {
        std::string error;
        std::unique_ptr<JitFunction> fn;
        {
          nb::gil_scoped_release release;
          fn = compileTensorFunction(text, function, threads, error,
                                     objectCache);
        }
        if (!fn)
          throw nb::value_error(error.c_str());
        return fn;
      },
      "text"_a, "function"_a = "", "threads"_a = 1, "object_cache"_a = "",
      "Lowers `text` (linalg on tensors, scheduled or not) with mlir-rl-lower, "
      "its arguments read-only, and JIT-compiles `function` (default: the "
      "first public one) to run at `threads` OpenMP threads. With "
      "`object_cache` (a file path): the machine code there when it exists "
      "(loaded in milliseconds, not compiled), else compiled and written "
      "there; key it with jit_target_tag().");
  m.def("jit_target_tag", &getJitTargetTag,
        "What JIT-compiled machine code depends on besides its module (the "
        "LLVM version, the host CPU and its features), as a short hash.");
  m.def("host_has_bf16_dot", &mlir::rl::hostHasBf16Dot,
        "Whether the front end's bf16-dot stage runs on this host (AVX-512 "
        "BF16's vdpbf16ps; MLIR_RL_BF16_DOT=1 or =0 says so instead).");

  // -- Programs --------------------------------------------------------------
  nb::class_<PipelineSettings>(
      m, "PipelineSettings",
      "The schedule pipeline's stages, as linalg-rl-schedule's options of "
      "the same names; constructed with the pass's defaults.")
      .def("__init__",
           [](PipelineSettings *s) {
             new (s) PipelineSettings(getDefaultPipelineSettings());
           })
      .def_static("none", &getNoPipelineSettings,
                  "Every stage off: decisions on the module as given, "
                  "applied as decided.")
      .def_rw("compute_in_f32", &PipelineSettings::computeInF32)
      .def_rw("bf16_dot", &PipelineSettings::bf16Dot)
      .def_rw("fuse_elementwise", &PipelineSettings::fuseElementwise)
      .def_rw("rewrite_windows", &PipelineSettings::rewriteWindows)
      .def_rw("pad_to_tiles", &PipelineSettings::padToTiles)
      .def_rw("flatten_elementwise", &PipelineSettings::flattenElementwise)
      .def_rw("pack_rhs", &PipelineSettings::packRhs)
      .def_rw("min_rows_to_copy", &PipelineSettings::minRowsToCopy)
      .def_rw("register_tiles", &PipelineSettings::registerTiles)
      .def_rw("copies_by_rule", &PipelineSettings::copiesByRule)
      .def("__repr__", [](const PipelineSettings &s) {
        auto b = [](bool v) { return v ? "True" : "False"; };
        return std::string("PipelineSettings(compute_in_f32=") +
               b(s.computeInF32) + ", bf16_dot=" + b(s.bf16Dot) +
               ", fuse_elementwise=" +
               b(s.fuseElementwise) + ", rewrite_windows=" +
               b(s.rewriteWindows) + ", pad_to_tiles=" + b(s.padToTiles) +
               ", flatten_elementwise=" + b(s.flattenElementwise) +
               ", pack_rhs=" + b(s.packRhs) + ", min_rows_to_copy=" +
               std::to_string(s.minRowsToCopy) + ", register_tiles=" +
               b(s.registerTiles) + ", copies_by_rule=" + b(s.copiesByRule) +
               ")";
      });

  nb::class_<Program>(m, "Program",
                      "A linalg-on-tensors module with its schedule state.")
      .def_static(
          "parse",
          [](const std::string &text, const std::string &name) {
            std::string error;
            std::unique_ptr<Program> p = Program::parse(text, name, error);
            if (!p)
              throw nb::value_error(("cannot parse " + name + ":\n" + error)
                                        .c_str());
            return p;
          },
          "text"_a, "name"_a = "<input>")
      .def("ops", &Program::getOps)
      .def("traversal_order", &Program::getTraversalOrder)
      .def("next_op", &Program::getNextOp,
           "The op the next decision is for (-1: every op is done).")
      .def("step_budget", &Program::getStepBudget,
           "Decisions an episode over this program may take at most.")
      .def("observation",
           [](Program &p, int64_t id) {
             checkOp(p, id);
             return toNumpy(p.getObservation(id));
           }, "op_id"_a)
      .def("op_features",
           [](Program &p, int64_t id) {
             checkOp(p, id);
             return toNumpy(p.getOpFeatures(id));
           }, "op_id"_a)
      .def("op_unit",
           [](Program &p, int64_t id) {
             checkOp(p, id);
             std::string out, error;
             if (!p.getOpUnit(id, out, error))
               throw std::runtime_error(error);
             return out;
           }, "op_id"_a,
           "Op op_id cut out as a standalone function (a module of its "
           "own), as compile-time tuning measures it: the op, the producer "
           "fused into it and their fills; other values become arguments.")
      .def("masks",
           [](Program &p, int64_t id) {
             checkOp(p, id);
             return Masks{p.getMasks(id)};
           }, "op_id"_a)
      .def("apply",
           [](Program &p, int64_t id, nb::handle action) {
             Action a = toAction(action);
             std::string message;
             StepStatus status = p.apply(id, a, message);
             return std::make_pair(status, message);
           }, "op_id"_a, "action"_a)
      .def("apply_pointer",
           [](Program &p, int64_t id, int64_t loop) {
             std::string message;
             StepStatus status = p.applyPointer(id, loop, message);
             return std::make_pair(status, message);
           }, "op_id"_a, "loop"_a)
      .def("apply_schedule",
           [](Program &p, const std::string &schedule) {
             std::string message;
             StepStatus status = p.applySchedule(schedule, message);
             return std::make_pair(status, message);
           }, "schedule"_a)
      .def("step",
           [](Program &p, int64_t id, std::vector<int> indices) {
             checkOp(p, id);
             return p.step(id, indices);
           }, "op_id"_a, "indices"_a,
           "The decision with these indices [kind, tile per loop, pointer], "
           "as decodeStep reads them (an illegal choice falls back as "
           "decoding does), applied.")
      .def("decode",
           [](Program &p, int64_t id, std::vector<float> kind,
              std::vector<float> tile, std::vector<float> pointer, bool sample,
              uint64_t seed) {
             checkOp(p, id);
             Step step;
             std::string error;
             if (!p.decode(id, kind, tile, pointer, sample, seed, step, error))
               throw nb::value_error(error.c_str());
             return step;
           }, "op_id"_a, "kind"_a, "tile"_a, "pointer"_a, "sample"_a = false,
           "seed"_a = 0, "decodeStep() of the logits for op_id now (not applied).")
      .def("encode",
           [](const Program &p, const Step &step) {
             return toNumpy(toInt64(p.encode(step)));
           }, "step"_a, "The indices of a step.")
      .def("demonstrate",
           [](Program &p, const std::string &schedule) {
             std::vector<DemonstrationStep> steps;
             std::string error;
             if (!p.demonstrate(schedule, steps, error))
               throw nb::value_error(error.c_str());
             return steps;
           }, "schedule"_a,
           "Replays a schedule and returns each decision with its "
           "observation, mask and indices (the encoder for demonstrations).")
      .def("run_front_end",
           [](Program &p, const PipelineSettings &settings) {
             std::string error;
             if (!p.runFrontEnd(settings, error))
               throw std::runtime_error(error);
           },
           "settings"_a,
           "Stage 1 of the pipeline: the front end's stages `settings` "
           "enables, before the first decision, once (op ids renumbered).")
      .def("apply_rules",
           [](Program &p, const PipelineSettings &settings,
              const std::string &decisions, const std::string &model,
              const std::string &ortLib) {
             PolicyRunInfo info;
             std::string error;
             if (!p.applyRules(settings, decisions, model, ortLib, info,
                               error))
               throw std::runtime_error(error);
             return runInfoDict(info);
           },
           "settings"_a, "decisions"_a = "policy", "model"_a = "",
           "ort_lib"_a = "",
           "Stage 3: the post-decision rules `settings` enables, after the "
           "decisions, once; copies without a rule decided by `decisions`.")
      .def_prop_ro("rules_applied", &Program::hasAppliedRules)
      .def("schedule_with_policy",
           [](Program &p, const std::string &model, const std::string &ortLib,
              bool sample, uint64_t seed, nb::object onStep,
              const PipelineSettings &settings,
              const std::string &decisions) {
             std::optional<nb::python_error> pending;
             StepObserver observer = makeObserver(p, onStep, pending);
             PolicyRunInfo info;
             std::string error;
             bool ok = p.scheduleWithPolicy(model, ortLib, sample, seed, info,
                                            error, observer, settings,
                                            decisions);
             if (pending)
               throw *pending;
             if (!ok)
               throw std::runtime_error(error);
             return runInfoDict(info);
           },
           "model"_a = "", "ort_lib"_a = "", "sample"_a = false, "seed"_a = 0,
           "on_step"_a = nb::none(), "settings"_a, "decisions"_a = "policy",
           "The whole pipeline, as the pass without a schedule: the front "
           "end, every op decided by `decisions` (policy, heuristic, "
           "random), the rules. on_step(op_id, step, schedule_so_far), if "
           "given, is called before each decoded step is applied.")
      .def("schedule_with",
           [](Program &p, nb::callable fn, bool sample, uint64_t seed,
              nb::object onStep, const PipelineSettings &settings) {
             // Python exceptions must not unwind through the C++ scheduler
             // (built without exceptions): catch, stop it, rethrow here.
             std::optional<nb::python_error> pending;
             LogitsFn policy = [&](const std::vector<float> &obs,
                                   const std::vector<uint8_t> &mask,
                                   std::vector<float> &kind,
                                   std::vector<float> &tile,
                                   std::vector<float> &pointer,
                                   std::string &error) -> bool {
               try {
                 nb::object out = fn(toNumpy(obs), toNumpy(mask));
                 auto parts = nb::cast<nb::tuple>(out);
                 if (parts.size() != 3)
                   throw nb::value_error("a policy returns (kind, tile, pointer)");
                 kind = nb::cast<std::vector<float>>(parts[0]);
                 tile = nb::cast<std::vector<float>>(parts[1]);
                 pointer = nb::cast<std::vector<float>>(parts[2]);
                 return true;
               } catch (nb::python_error &e) {
                 pending.emplace(std::move(e));
               } catch (std::exception &e) {
                 error = e.what();
                 return false;
               }
               error = "the policy raised an exception";
               return false;
             };
             std::optional<nb::python_error> pendingStep;
             StepObserver observer = makeObserver(p, onStep, pendingStep);
             PolicyRunInfo info;
             std::string error;
             bool ok = p.scheduleWithLogits(policy, sample, seed, info, error,
                                            observer, settings);
             if (pending)
               throw *pending;
             if (pendingStep)
               throw *pendingStep;
             if (!ok)
               throw std::runtime_error(error);
             return runInfoDict(info);
           },
           "policy"_a, "sample"_a = false, "seed"_a = 0,
           "on_step"_a = nb::none(), "settings"_a,
           "The whole pipeline with a Python policy: policy(observation, "
           "mask) -> (kind, tile, pointer) logits.")
      .def("policy_logits",
           [](Program &p, int64_t id, const std::string &model,
              const std::string &ortLib) {
             checkOp(p, id);
             std::vector<float> kind, tile, pointer;
             std::string error;
             if (!p.getPolicyLogits(model, ortLib, id, kind, tile, pointer,
                                    error))
               throw std::runtime_error(error);
             return nb::make_tuple(toNumpy(std::move(kind)),
                                   toNumpy(std::move(tile)),
                                   toNumpy(std::move(pointer)));
           },
           "op_id"_a, "model"_a = "", "ort_lib"_a = "")
      .def("schedule_text", &Program::getScheduleText)
      .def("rule_choice_mask",
           [](Program &p, int64_t id) {
             checkOp(p, id);
             return p.getRuleChoiceMask(id);
           }, "op_id"_a,
           "The rules' choices op `op_id` offers: [(key, values)], each "
           "list ending with the rule's default.")
      .def("set_rule_choices",
           [](Program &p, int64_t id,
              std::vector<std::pair<std::string, int64_t>> choices) {
             checkOp(p, id);
             std::string message;
             StepStatus status = p.setRuleChoices(id, choices, message);
             return std::make_pair(status, message);
           }, "op_id"_a, "choices"_a)
      .def("rule_choices", &Program::getRuleChoices)
      .def("draw_rule_choices", &Program::drawRuleChoices, "seed"_a)
      .def("decision_text", &Program::getDecisionText)
      .def("provenance", &Program::getProvenance)
      .def("transform_script", &Program::getTransformScript)
      .def("ir", &Program::str, "with_tags"_a = false)
      .def("_inject_failure", &Program::injectFailure, "n"_a,
           "Tests only: fail the n-th transformation from now after it "
           "applied, so that the restore path runs.")
      .def("verify",
           [](const Program &p) {
             std::string error;
             bool ok = p.verify(error);
             return std::make_pair(ok, error);
           }, "Whether the current IR verifies, and why not.")
      .def("lowered",
           [](const Program &p) {
             std::string out, error;
             if (!p.getLowered(out, error))
               throw std::runtime_error("lowering failed:\n" + error);
             return out;
           })
      .def("signature",
           [](const Program &p, const std::string &function) {
             std::string error;
             FunctionSignature sig = p.getSignature(function, error);
             if (!error.empty())
               throw nb::value_error(error.c_str());
             nb::dict d;
             d["name"] = sig.name;
             nb::list ins, outs;
             for (auto &t : sig.inputs)
               ins.append(tensorDict(t));
             for (auto &t : sig.outputs)
               outs.append(tensorDict(t));
             d["inputs"] = ins;
             d["outputs"] = outs;
             return d;
           }, "function"_a = "")
      .def("time",
           [](const Program &p, int runs, int warmup, int threads,
              uint64_t seed, const std::string &function, bool keepOutputs,
              double abortAfter) {
             TimingOptions options;
             options.runs = runs;
             options.warmup = warmup;
             options.threads = threads;
             options.seed = seed;
             options.function = function;
             options.keepOutputs = keepOutputs;
             options.abortAfterSeconds = abortAfter;
             TimingResult result;
             std::string error;
             bool ok;
             {
               nb::gil_scoped_release release;
               ok = p.time(options, result, error);
             }
             if (!ok)
               throw std::runtime_error(error);
             nb::dict d;
             d["seconds"] = result.seconds;
             d["aborted"] = result.aborted;
             auto toList = [](std::vector<HostTensor> &tensors) {
               nb::list out;
               for (HostTensor &t : tensors) {
                 std::vector<size_t> shape(t.shape.begin(), t.shape.end());
                 if (shape.empty())
                   shape = {1};
                 out.append(toNumpy(std::move(t.data), shape));
               }
               return out;
             };
             d["outputs"] = toList(result.outputs);
             d["inputs"] = toList(result.inputs);
             return d;
           },
           "runs"_a = 5, "warmup"_a = 1, "threads"_a = 1, "seed"_a = 0,
           "function"_a = "", "keep_outputs"_a = true,
           "abort_after_s"_a = 0.0,
           "Lower a copy of the current IR, JIT it and time it.");
}
