//===- MlirRlModule.cpp - mlir_rl._core (nanobind) ------------------------===//
//
// A thin, private extension: Python reaches the same C++ (features, masks,
// actions, lowering, JIT timing) that the pass runs. Only standard types cross
// the boundary (see mlir-rl/Program.h).
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Program.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace nb::literals;
using mlir::rl::Program;

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

nb::dict tensorDict(const mlir::rl::HostTensor &t) {
  nb::dict d;
  d["shape"] = t.shape;
  d["dtype"] = t.elementType;
  return d;
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "mlir-rl native core: features, masks, actions, lowering, JIT";

  m.def("layout", []() {
    mlir::rl::LayoutInfo info = mlir::rl::getLayoutInfo();
    nb::dict d;
    for (auto &[k, v] : info.sizes)
      d[k.c_str()] = v;
    d["tile_candidates"] = info.tileCandidates;
    d["op_kinds"] = info.opKinds;
    d["action_names"] = info.actionNames;
    d["action_mnemonics"] = info.actionMnemonics;
    d["hash"] = info.hash;
    d["description"] = info.description;
    return d;
  }, "The feature layout: limits, sizes, offsets, names and its hash.");

  m.def("default_model_path", &mlir::rl::getDefaultModelPath,
        "Where the pass looks for the policy when model= is not given.");
  m.def("default_ort_library", &mlir::rl::getDefaultOrtLibrary,
        "The ONNX Runtime library the pass loads when ort-lib= is not given.");

  m.def("lowering_pipeline", &mlir::rl::getLoweringPipelineText,
        "The textual lowering pipeline (registered as mlir-rl-lower).");

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
      .def("ops",
           [](const Program &p) {
             nb::list out;
             for (const mlir::rl::OpInfo &o : p.getOps()) {
               nb::dict d;
               d["id"] = o.id;
               d["name"] = o.name;
               d["kind"] = o.kind;
               d["function"] = o.function;
               d["supported"] = o.supported;
               d["reason"] = o.reason;
               d["producer"] = o.producer;
               d["consumers"] = o.consumers;
               d["loop_bounds"] = o.loopBounds;
               d["iterators"] = o.iterators;
               d["history"] = o.history;
               d["done"] = o.done;
               d["in_interchange"] = o.inInterchange;
               out.append(d);
             }
             return out;
           })
      .def("traversal_order", &Program::getTraversalOrder)
      .def("observation",
           [](Program &p, int64_t id) { return toNumpy(p.getObservation(id)); })
      .def("op_features",
           [](Program &p, int64_t id) { return toNumpy(p.getOpFeatures(id)); })
      .def("masks",
           [](Program &p, int64_t id) { return toNumpy(p.getMasks(id)); })
      .def("apply",
           [](Program &p, int64_t id, const std::string &action) {
             std::string message;
             int status = p.apply(id, action, message);
             return std::make_pair(status, message);
           }, "op_id"_a, "action"_a)
      .def("apply_pointer",
           [](Program &p, int64_t id, int64_t loop) {
             std::string message;
             int status = p.applyPointer(id, loop, message);
             return std::make_pair(status, message);
           }, "op_id"_a, "loop"_a)
      .def("apply_schedule",
           [](Program &p, const std::string &schedule) {
             std::string message;
             int status = p.applySchedule(schedule, message);
             return std::make_pair(status, message);
           }, "schedule"_a)
      .def("schedule_with_policy",
           [](Program &p, const std::string &model, const std::string &ortLib,
              bool sample, uint64_t seed) {
             mlir::rl::PolicyRunInfo info;
             std::string error;
             if (!p.scheduleWithPolicy(model, ortLib, sample, seed, info,
                                       error))
               throw std::runtime_error(error);
             nb::dict d;
             d["ops"] = info.ops;
             d["inferences"] = info.inferences;
             d["inference_seconds"] = info.inferenceSeconds;
             d["applications"] = info.applications;
             d["apply_seconds"] = info.applySeconds;
             d["warnings"] = info.warnings;
             return d;
           },
           "model"_a = "", "ort_lib"_a = "", "sample"_a = false, "seed"_a = 0)
      .def("policy_logits",
           [](Program &p, int64_t id, const std::string &model,
              const std::string &ortLib) {
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
      .def("decode_and_apply",
           [](Program &p, int64_t id, const std::vector<float> &kind,
              const std::vector<float> &tile, const std::vector<float> &pointer,
              bool sample, uint64_t seed) {
             std::string step, message;
             int status = p.decodeAndApply(id, kind, tile, pointer, sample,
                                           seed, step, message);
             return nb::make_tuple(status, step, message);
           },
           "op_id"_a, "kind"_a, "tile"_a, "pointer"_a, "sample"_a = false,
           "seed"_a = 0)
      .def("schedule_text", &Program::getScheduleText)
      .def("transform_script", &Program::getTransformScript)
      .def("ir", &Program::str, "with_tags"_a = false)
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
             mlir::rl::FunctionSignature sig = p.getSignature(function, error);
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
             mlir::rl::TimingOptions options;
             options.runs = runs;
             options.warmup = warmup;
             options.threads = threads;
             options.seed = seed;
             options.function = function;
             options.keepOutputs = keepOutputs;
             options.abortAfterSeconds = abortAfter;
             mlir::rl::TimingResult result;
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
             auto toList = [](std::vector<mlir::rl::HostTensor> &tensors) {
               nb::list out;
               for (mlir::rl::HostTensor &t : tensors) {
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
