//===- Jit.cpp - JIT execution and timing ---------------------------------===//
#include "mlir-rl/Runtime/Jit.h"
#include "mlir-rl/Runtime/BufferPool.h"
#include "mlir-rl/Policy/OnnxPolicy.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <random>
#include <thread>
#include <unistd.h>

#ifndef MLIR_RL_LLVM_LIBDIR
#define MLIR_RL_LLVM_LIBDIR "/usr/lib/llvm-22/lib"
#endif

namespace mlir::rl {

double TimingResult::median() const {
  if (seconds.empty())
    return 0.0;
  std::vector<double> s(seconds);
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static std::string getElementTypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  return "";
}

static size_t getElementBytes(const std::string &t) {
  if (t == "bf16" || t == "f16")
    return 2;
  return (t == "f64" || t == "i64") ? 8 : 4;
}

/// `v` as a bf16 bit pattern, rounded to nearest even (no NaNs here).
static uint16_t toBFloat16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return (uint16_t)(bits >> 16);
}

static float fromBFloat16Bits(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

static uint16_t toHalfBits(float v) {
  bool lost;
  llvm::APFloat f(v);
  f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return (uint16_t)f.bitcastToAPInt().getZExtValue();
}

static float fromHalfBits(uint16_t b) {
  return llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, b))
      .convertToFloat();
}

static LogicalResult describe(Type type, HostTensor &out, std::string &error,
                              const std::string &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape()) {
    error = what + " must be a statically shaped tensor";
    return failure();
  }
  out.elementType = getElementTypeName(shaped.getElementType());
  if (out.elementType.empty()) {
    error = what + " has an unsupported element type (f32, f64, bf16, f16, "
            "i32, i64)";
    return failure();
  }
  out.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
  return success();
}

FailureOr<FunctionSignature> getFunctionSignature(ModuleOp module,
                                                  const std::string &function,
                                                  std::string &error) {
  func::FuncOp fn;
  // Functions of the module itself: those of nested modules are not the
  // JIT's entry points.
  for (func::FuncOp f : module.getOps<func::FuncOp>()) {
    if (fn || f.isExternal())
      continue;
    if (function.empty() ? f.isPublic() : f.getName() == function)
      fn = f;
  }
  if (!fn) {
    error = function.empty()
                ? "the module has no public function with a body at its top "
                  "level"
                : "no function named '" + function + "' at the module's top level";
    return failure();
  }
  FunctionSignature sig;
  sig.name = fn.getName().str();
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    HostTensor h;
    if (failed(describe(t, h, error, "argument #" + std::to_string(i))))
      return failure();
    sig.inputs.push_back(h);
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    HostTensor h;
    if (failed(describe(t, h, error, "result #" + std::to_string(i))))
      return failure();
    sig.outputs.push_back(h);
  }
  return sig;
}

namespace {
/// A memref descriptor as a run of 8-byte words:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
size_t getDescriptorWords(size_t rank) { return 3 + 2 * rank; }

int64_t getNumElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void fillRandom(void *data, const HostTensor &t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int64_t n = getNumElements(t.shape);
  const std::string &e = t.elementType;
  if (e == "f32" || e == "f64" || e == "bf16" || e == "f16") {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < n; ++i) {
      double v = dist(rng);
      if (e == "f32")
        static_cast<float *>(data)[i] = (float)v;
      else if (e == "f64")
        static_cast<double *>(data)[i] = v;
      else if (e == "bf16")
        static_cast<uint16_t *>(data)[i] = toBFloat16Bits((float)v);
      else
        static_cast<uint16_t *>(data)[i] = toHalfBits((float)v);
    }
  } else {
    std::uniform_int_distribution<int64_t> dist(-4, 4);
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = dist(rng);
      if (t.elementType == "i32")
        static_cast<int32_t *>(data)[i] = (int32_t)v;
      else
        static_cast<int64_t *>(data)[i] = v;
    }
  }
}

double loadElement(const char *base, int64_t index, const std::string &type) {
  if (type == "f32")
    return reinterpret_cast<const float *>(base)[index];
  if (type == "f64")
    return reinterpret_cast<const double *>(base)[index];
  if (type == "i32")
    return reinterpret_cast<const int32_t *>(base)[index];
  if (type == "bf16")
    return fromBFloat16Bits(reinterpret_cast<const uint16_t *>(base)[index]);
  if (type == "f16")
    return fromHalfBits(reinterpret_cast<const uint16_t *>(base)[index]);
  return (double)reinterpret_cast<const int64_t *>(base)[index];
}

/// Calls `fn(linear, position)` for each element of the strided memref of
/// descriptor words `d` (rank `rank`) in row-major order: its index in a
/// dense copy and its element offset from the aligned pointer.
template <typename Fn>
void forEachElement(const int64_t *d, size_t rank, Fn fn) {
  const int64_t *sizes = d + 3, *strides = d + 3 + rank;
  int64_t n = 1;
  for (size_t r = 0; r < rank; ++r)
    n *= sizes[r];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t pos = d[2];
    for (size_t r = 0; r < rank; ++r)
      pos += idx[r] * strides[r];
    fn(linear, pos);
    for (int r = (int)rank - 1; r >= 0; --r) {
      if (++idx[r] < sizes[r])
        break;
      idx[r] = 0;
    }
  }
}

/// Copies a strided memref (descriptor words `d`) into `out.data`.
void copyOut(const int64_t *d, HostTensor &out) {
  const char *aligned = reinterpret_cast<const char *>(d[1]);
  out.data.resize(getNumElements(out.shape));
  forEachElement(d, out.shape.size(), [&](int64_t linear, int64_t pos) {
    out.data[linear] = loadElement(aligned, pos, out.elementType);
  });
}

/// The descriptor words of a dense row-major buffer of `shape`.
std::vector<int64_t> makeDescriptor(const std::vector<int64_t> &shape,
                                    const void *data) {
  size_t rank = shape.size();
  std::vector<int64_t> d(getDescriptorWords(rank), 0);
  d[0] = d[1] = reinterpret_cast<int64_t>(data);
  int64_t stride = 1;
  for (int r = (int)rank - 1; r >= 0; --r) {
    d[3 + r] = shape[r];
    d[3 + rank + r] = stride;
    stride *= shape[r];
  }
  return d;
}

/// The arguments of a packed call of a `_mlir_ciface_` function: one
/// descriptor per input, room for the results' descriptors. Refers to
/// itself: not copyable.
struct PackedCall {
  std::vector<std::vector<int64_t>> inputs; // descriptors
  std::vector<int64_t> result;              // the results' descriptors
  std::vector<void *> argPtrs;
  void *resultPtr = nullptr;
  SmallVector<void *> packed;

  PackedCall(const FunctionSignature &sig, ArrayRef<const void *> data) {
    for (auto [in, ptr] : llvm::zip(sig.inputs, data))
      inputs.push_back(makeDescriptor(in.shape, ptr));
    size_t resultWords = 0;
    for (const HostTensor &out : sig.outputs)
      resultWords += getDescriptorWords(out.shape.size());
    result.assign(std::max<size_t>(resultWords, 1), 0);
    for (auto &d : inputs)
      argPtrs.push_back(d.data());
    resultPtr = result.data();
    if (!sig.outputs.empty())
      packed.push_back(&resultPtr);
    for (void *&p : argPtrs)
      packed.push_back(&p);
  }
  PackedCall(const PackedCall &) = delete;
  PackedCall &operator=(const PackedCall &) = delete;

  /// Frees the results' allocations (by the lowered code's malloc, the
  /// buffer pool's), except
  /// those that are (views of) an input, a global (upstream's 0xdeadbeef
  /// marker), or a buffer returned twice: each allocation once.
  void releaseResults(const FunctionSignature &sig,
                      ArrayRef<const void *> inputData) {
    size_t w = 0;
    llvm::SmallPtrSet<void *, 4> released;
    void *globalMarker = reinterpret_cast<void *>(0xdeadbeef);
    for (const HostTensor &out : sig.outputs) {
      void *allocated = reinterpret_cast<void *>(result[w]);
      w += getDescriptorWords(out.shape.size());
      if (!allocated || allocated == globalMarker ||
          llvm::is_contained(inputData, allocated) ||
          !released.insert(allocated).second)
        continue;
      poolFree(allocated);
    }
  }
};

/// The machine scheduler builds its dependence graph in time quadratic in
/// a region's memory operations until they number -dag-maps-huge-region
/// (1000 by default), then in linear time with coarser dependences. The
/// fully unrolled vector code of a network has blocks of thousands of
/// loads and stores: building those graphs was half of VGG-11's and
/// ResNet-18's code generation (perf: SUnit::addPred 38%). At 100, their
/// code generation takes half the time; a kernel's code (a matmul, a
/// convolution: regions of fewer) is byte for byte the same. Left alone
/// where the process set it (an -mllvm option of a tool).
constexpr const char *kHugeRegionOption = "dag-maps-huge-region";
constexpr const char *kHugeRegionValue = "100";

void initializeLLVMOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // $MLIR_RL_LLVM_OPTIONS: LLVM's own options (-post-RA-scheduler=false)
    // for code generation in this process, as a tool's -mllvm gives them.
    if (const char *env = std::getenv("MLIR_RL_LLVM_OPTIONS")) {
      llvm::SmallVector<const char *> argv{"mlir-rl"};
      static llvm::BumpPtrAllocator alloc; // (option values may point here)
      llvm::StringSaver saver(alloc);
      llvm::cl::TokenizeGNUCommandLine(env, saver, argv);
      llvm::cl::ParseCommandLineOptions(argv.size(), argv.data(), "", &llvm::errs());
    }
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find(kHugeRegionOption);
    if (it != options.end() && it->second->getNumOccurrences() == 0)
      (void)it->second->addOccurrence(0, kHugeRegionOption, kHugeRegionValue);
  });
}

/// A runtime library the lowered code calls into: the copy a wheel carries
/// (mlir_rl/lib/, beside the extension or above mlir_rl/bin/), else LLVM's.
std::string getRuntimeLibrary(llvm::StringRef name) {
  std::string dir = getOwnBinaryDirectory();
  if (!dir.empty())
    for (const char *rel : {"/lib/", "/../lib/"})
      if (std::string p = dir + rel + name.str(); llvm::sys::fs::exists(p))
        return p;
  return std::string(MLIR_RL_LLVM_LIBDIR) + "/" + name.str();
}

std::string getOpenMPLibrary() { return getRuntimeLibrary("libomp.so"); }

/// The shared libraries the lowered code calls into: the runner utils and
/// the OpenMP runtime (the compiled and the loaded code resolve the same).
std::vector<std::string> getRuntimeLibraries() {
  return {getRuntimeLibrary("libmlir_c_runner_utils.so"), getOpenMPLibrary()};
}

/// The lowered code's malloc and free: the buffer pool (BufferPool.h).
llvm::orc::SymbolMap getPoolSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap map;
  auto define = [&](const char *name, auto *fn) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                           llvm::JITSymbolFlags::Exported};
  };
  define("malloc", &poolMalloc);
  define("free", &poolFree);
  return map;
}

/// Defines `_mlir_<fn>(void **args)`, which calls `fn` with the values
/// args[0..n) point to and stores its result, if any, where args[n] points:
/// the packed convention of ExecutionEngine::invokePacked (PackedCall builds
/// the array), for the one function we call.
void addPackedWrapper(llvm::Module &module, llvm::Function &fn) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()},
                                       /*isVarArg=*/false);
  auto *wrapper =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                             "_mlir_" + fn.getName(), module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::Value *args = wrapper->getArg(0);
  SmallVector<llvm::Value *> values;
  for (auto [i, arg] : llvm::enumerate(fn.args())) {
    llvm::Value *slot = b.CreateConstGEP1_64(b.getPtrTy(), args, i);
    values.push_back(
        b.CreateLoad(arg.getType(), b.CreateLoad(b.getPtrTy(), slot)));
  }
  llvm::Value *result = b.CreateCall(&fn, values);
  if (!result->getType()->isVoidTy()) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(b.getPtrTy(), args, fn.arg_size());
    b.CreateStore(result, b.CreateLoad(b.getPtrTy(), slot));
  }
  b.CreateRetVoid();
}

/// The JIT's target: the host CPU and its features, -O3 code generation.
/// The target machines that emit objects and the LLJIT that links them are
/// built from it.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> getHostMachineBuilder() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (jtmb)
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return jtmb;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine() {
  auto jtmb = getHostMachineBuilder();
  if (!jtmb)
    return jtmb.takeError();
  return jtmb->createTargetMachine();
}

/// `module`'s object code, generated by `tm`; empty with `error` set when
/// the target cannot emit objects.
std::unique_ptr<llvm::MemoryBuffer>
emitObject(llvm::Module &module, llvm::TargetMachine &tm, std::string &error) {
  SmallVector<char, 0> buffer;
  {
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr,
                               llvm::CodeGenFileType::ObjectFile)) {
      error = "the host target cannot emit object files";
      return nullptr;
    }
    pm.run(module);
  }
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(
      std::move(buffer), module.getModuleIdentifier(),
      /*RequiresNullTerminator=*/false);
}

/// Constant globals of nested arrays (a weight of shape [64, 3, 7, 7]) as
/// flat arrays of their elements, the same bytes: translated, a nested
/// array is a tree of arrays, one leaf per innermost row (EfficientNet-B0's
/// weights: millions), which every later walk over constants visits one by
/// one (module splitting, the inliner's call graph, the asm printer); a
/// flat one is one array. Users address a global through a pointer and
/// their own element types, so they are unchanged.
void flattenConstantArrays(ModuleOp module) {
  module.walk([](LLVM::GlobalOp global) {
    auto outer = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
    auto value = dyn_cast_or_null<ElementsAttr>(global.getValueOrNull());
    if (!outer || !isa<LLVM::LLVMArrayType>(outer.getElementType()) || !value)
      return;
    Type element = outer;
    int64_t count = 1;
    while (auto array = dyn_cast<LLVM::LLVMArrayType>(element)) {
      count *= array.getNumElements();
      element = array.getElementType();
    }
    if (element != value.getElementType() || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() % 8 != 0 ||
        count != value.getNumElements())
      return;
    auto flatType = RankedTensorType::get({count}, element);
    Attribute flat;
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      flat = dense.reshape(flatType);
    else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
      flat = DenseResourceElementsAttr::get(flatType, resource.getRawHandle());
    else
      return;
    global.setGlobalType(LLVM::LLVMArrayType::get(element, count));
    global.setValueAttr(flat);
  });
}

/// Modules smaller than this many instructions are not split: a thread's
/// start and a bitcode round trip cost more than their code generation.
constexpr size_t kSplitMinInstructions = 4000;

/// How many threads generate code: the CPUs this process may run on
/// (affinity respected), or $MLIR_RL_JIT_THREADS.
unsigned getCodegenThreads() {
  if (const char *env = std::getenv("MLIR_RL_JIT_THREADS"))
    if (int n = std::atoi(env); n > 0)
      return n;
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

/// Machine code for the lowered `module` whose entry point is `entry` (with
/// its packed wrapper): translated to LLVM IR, then, where it is large,
/// split into parts optimized at -O3 and compiled on `getCodegenThreads()`
/// threads, one object each; a small module is optimized and compiled
/// whole. The split loses only inlining across parts: the lowered code's
/// calls between its functions are to its parallel regions (noinline, see
/// mlir-rl-outline-parallel-loops) and from its C interface and packed
/// wrappers. Null with `error` on failure.
FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
compileToObjects(ModuleOp module, const std::string &entry,
                 std::string &error) {
  initializeLLVMOnce();
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  registerOpenMPDialectTranslation(*ctx);
  auto fail = [&](llvm::Error err) {
    error = "JIT compilation failed: " + llvm::toString(std::move(err));
    return failure();
  };
  auto tm = createHostTargetMachine();
  if (!tm)
    return fail(tm.takeError());
  flattenConstantArrays(module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error = "JIT compilation failed: the module does not translate to LLVM IR";
    return failure();
  }
  // Objects in an LLJIT without the ORC runtime run no constructors.
  if (llvmModule->getNamedGlobal("llvm.global_ctors") ||
      llvmModule->getNamedGlobal("llvm.global_dtors")) {
    error = "JIT compilation failed: the module has global constructors or "
            "destructors, which the JIT does not run";
    return failure();
  }
  llvmModule->setDataLayout((*tm)->createDataLayout());
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvm::Function *fn = llvmModule->getFunction(entry);
  if (!fn || fn->isDeclaration()) {
    error = "cannot find " + entry + " in the lowered module";
    return failure();
  }
  addPackedWrapper(*llvmModule, *fn);
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                            nullptr);

  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  size_t instructions = 0;
  for (llvm::Function &f : *llvmModule)
    instructions += f.getInstructionCount();
  unsigned threads = getCodegenThreads();
  if (threads <= 1 || instructions < kSplitMinInstructions) {
    if (llvm::Error err = optimize(llvmModule.get()))
      return fail(std::move(err));
    objects.push_back(emitObject(*llvmModule, **tm, error));
    if (!objects.back())
      return failure();
    return objects;
  }
  // Two parts a thread: SplitModule balances the parts by size, not by
  // compile time, and a thread that finishes early takes the next. Each
  // part travels as bitcode into an LLVMContext of its own (a context is
  // not shared between threads), where it is optimized and compiled.
  // A part's -O3 drops the discardable definitions it does not call
  // (linkonce_odr: convert-math-to-funcs' helpers, __mlir_math_ipowi_i64)
  // while the parts that call them hold only declarations: such
  // definitions are made external first (found by the fuzzer).
  for (llvm::GlobalValue &gv : llvmModule->global_values())
    if (!gv.isDeclaration() && (gv.hasLinkOnceLinkage() || gv.hasWeakLinkage())) {
      gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
      gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  std::vector<SmallVector<char, 0>> bitcode;
  llvm::SplitModule(
      *llvmModule, 2 * threads,
      [&](std::unique_ptr<llvm::Module> part) {
        bitcode.emplace_back();
        llvm::raw_svector_ostream os(bitcode.back());
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false);
  llvmModule.reset();
  objects.resize(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  std::atomic<size_t> next{0};
  auto work = [&]() {
    auto partTm = createHostTargetMachine();
    std::string tmError = partTm ? "" : llvm::toString(partTm.takeError());
    for (size_t i; (i = next++) < bitcode.size();) {
      if (!tmError.empty()) {
        errors[i] = tmError;
        continue;
      }
      llvm::LLVMContext partContext;
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(
                  StringRef(bitcode[i].data(), bitcode[i].size()),
                  "part" + std::to_string(i)),
              partContext);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        continue;
      }
      (*part)->setModuleIdentifier("part" + std::to_string(i));
      if (llvm::Error err = optimize(part->get())) {
        errors[i] = llvm::toString(std::move(err));
        continue;
      }
      objects[i] = emitObject(**part, **partTm, errors[i]);
      bitcode[i] = {};
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  for (auto [object, err] : llvm::zip(objects, errors))
    if (!object) {
      error = "JIT compilation failed: " + err;
      return failure();
    }
  return objects;
}

/// An LLJIT for the host holding `objects`, their undefined symbols
/// resolved as ExecutionEngine resolves them: the buffer pool's malloc and
/// free first, then the runner utils and the OpenMP runtime, then the
/// process; the packed entry of function `name` (addPackedWrapper) in
/// `packed`. `what` names the objects in errors.
FailureOr<std::unique_ptr<llvm::orc::LLJIT>>
createLinkedJit(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
                const std::string &name, void (*&packed)(void **),
                const std::string &what, std::string &error) {
  initializeLLVMOnce();
  auto fail = [&](llvm::Error err) {
    error = "cannot load " + what + ": " + llvm::toString(std::move(err));
    return failure();
  };
  auto jtmb = getHostMachineBuilder();
  if (!jtmb)
    return fail(jtmb.takeError());
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .create();
  if (!jit)
    return fail(jit.takeError());
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  if (llvm::Error err = main.define(llvm::orc::absoluteSymbols(getPoolSymbols(
          llvm::orc::MangleAndInterner((*jit)->getExecutionSession(),
                                       (*jit)->getDataLayout())))))
    return fail(std::move(err));
  for (const std::string &lib : getRuntimeLibraries()) {
    auto gen =
        llvm::orc::DynamicLibrarySearchGenerator::Load(lib.c_str(), prefix);
    if (!gen)
      return fail(gen.takeError());
    main.addGenerator(std::move(*gen));
  }
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return fail(process.takeError());
  main.addGenerator(std::move(*process));
  for (std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    if (llvm::Error err = (*jit)->addObjectFile(std::move(object)))
      return fail(std::move(err));
  auto sym = (*jit)->lookup("_mlir__mlir_ciface_" + name);
  if (!sym)
    return fail(sym.takeError());
  packed = sym->toPtr<void (*)(void **)>();
  return std::move(*jit);
}

/// The magic an archive of objects starts with (a cache file of several
/// objects); a cache file of one object is the object itself.
constexpr llvm::StringLiteral kArchiveMagic = "!<arch>\n";

/// Writes `objects` to `path` (one object as itself, several as an
/// archive of them), aside and renamed so that a reader never sees half a
/// file. A failure to write leaves no file: the cache is an optimization.
void writeObjects(const std::vector<std::unique_ptr<llvm::MemoryBuffer>> &objects,
                  const std::string &path) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return;
    if (objects.size() == 1) {
      os << objects.front()->getBuffer();
    } else {
      std::vector<llvm::NewArchiveMember> members;
      std::vector<std::string> names;
      for (size_t i = 0; i < objects.size(); ++i)
        names.push_back("part" + std::to_string(i) + ".o");
      for (size_t i = 0; i < objects.size(); ++i) {
        llvm::NewArchiveMember m;
        m.Buf = llvm::MemoryBuffer::getMemBuffer(objects[i]->getMemBufferRef(),
                                                 false);
        m.MemberName = names[i];
        members.push_back(std::move(m));
      }
      if (llvm::Error err = llvm::writeArchiveToStream(
              os, members, llvm::SymtabWritingMode::NoSymtab,
              llvm::object::Archive::K_GNU, /*Deterministic=*/true,
              /*Thin=*/false)) {
        llvm::consumeError(std::move(err));
        os.close();
        (void)llvm::sys::fs::remove(tmp);
        return;
      }
    }
  }
  if (llvm::sys::fs::rename(tmp, path))
    (void)llvm::sys::fs::remove(tmp);
}

/// The objects of a cache file `writeObjects` wrote.
FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
readObjects(const std::string &path, std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = "cannot read " + path + ": " + file.getError().message();
    return failure();
  }
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  if (!(*file)->getBuffer().starts_with(kArchiveMagic)) {
    objects.push_back(std::move(*file));
    return objects;
  }
  auto archive = llvm::object::Archive::create((*file)->getMemBufferRef());
  if (!archive) {
    error = "cannot read " + path + ": " + llvm::toString(archive.takeError());
    return failure();
  }
  llvm::Error err = llvm::Error::success();
  for (const llvm::object::Archive::Child &child : (*archive)->children(err)) {
    llvm::Expected<llvm::MemoryBufferRef> ref = child.getMemoryBufferRef();
    if (!ref) {
      error = "cannot read " + path + ": " + llvm::toString(ref.takeError());
      llvm::consumeError(std::move(err));
      return failure();
    }
    objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(
        ref->getBuffer(), ref->getBufferIdentifier()));
  }
  if (err) {
    error = "cannot read " + path + ": " + llvm::toString(std::move(err));
    return failure();
  }
  return objects;
}

/// The lowered `module`'s function `name` compiled (compileToObjects) and
/// linked (createLinkedJit): its packed entry in `packed`, the JIT that
/// holds it returned; the objects are handed to `keep` first when given.
FailureOr<std::unique_ptr<llvm::orc::LLJIT>> compileAndLink(
    ModuleOp module, const std::string &name, void (*&packed)(void **),
    std::string &error,
    llvm::function_ref<void(const std::vector<std::unique_ptr<llvm::MemoryBuffer>> &)>
        keep = nullptr) {
  std::string entry = "_mlir_ciface_" + name;
  FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>> objects =
      compileToObjects(module, entry, error);
  if (failed(objects))
    return failure();
  if (keep)
    keep(*objects);
  return createLinkedJit(std::move(*objects), name, packed, "the compiled code",
                         error);
}

using SetThreadsFn = void (*)(int);
/// omp_set_num_threads of the OpenMP runtime the JIT loaded (null if it is
/// not loaded); the engine's own reference keeps it loaded.
SetThreadsFn getSetThreads() {
  SetThreadsFn set = nullptr;
  if (void *handle = dlopen(getOpenMPLibrary().c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    set = reinterpret_cast<SetThreadsFn>(dlsym(handle, "omp_set_num_threads"));
    dlclose(handle);
  }
  return set;
}
} // namespace

FailureOr<TimingResult> timeFunction(ModuleOp llvmModule,
                                     const FunctionSignature &sig,
                                     const TimingOptions &options,
                                     std::string &error) {
  void (*packed)(void **) = nullptr;
  // Compiled now, so that the first timed or warm-up call measures
  // execution only.
  FailureOr<std::unique_ptr<llvm::orc::LLJIT>> jit =
      compileAndLink(llvmModule, sig.name, packed, error);
  if (failed(jit))
    return failure();
  // The OpenMP runtime the JIT loaded: fix its thread count.
  if (SetThreadsFn set = getSetThreads())
    set(std::max(1, options.threads));

  // Inputs: aligned buffers with seeded random values.
  std::vector<const void *> buffers;
  auto freeAll = [&]() {
    for (const void *b : buffers)
      std::free(const_cast<void *>(b));
  };
  for (auto [i, in] : llvm::enumerate(sig.inputs)) {
    size_t bytes = std::max<size_t>(
        64, getNumElements(in.shape) * getElementBytes(in.elementType));
    bytes = (bytes + 63) / 64 * 64;
    void *data = std::aligned_alloc(64, bytes);
    buffers.push_back(data);
    fillRandom(data, in, options.seed * 1000003ull + i);
  }
  PackedCall call(sig, buffers);
  auto releaseOutputs = [&]() { call.releaseResults(sig, buffers); };

  TimingResult timing;
  int total = std::max(0, options.warmup) + std::max(1, options.runs);
  int limitRuns = std::max(0, options.warmup) +
                  std::max(std::max(1, options.runs), options.maxRuns);
  double timedSum = 0;
  for (int run = 0; run < total; ++run) {
    auto start = std::chrono::steady_clock::now();
    packed(call.packed.data());
    auto stop = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(stop - start).count();
    if (run >= options.warmup) {
      timing.seconds.push_back(elapsed);
      timedSum += elapsed;
    }
    // Short functions: more calls until they add up to minTimedSeconds.
    if (run == total - 1 && timedSum < options.minTimedSeconds &&
        total < limitRuns)
      ++total;
    // The first call of a warmed-up timing carries one-time costs (OpenMP
    // threads, first touch of the outputs): it is held to a looser limit.
    bool warmupCall = run == 0 && options.warmup > 0;
    double limit = warmupCall ? 2 * options.abortAfterSeconds + 0.05
                              : options.abortAfterSeconds;
    if (options.abortAfterSeconds > 0 && elapsed > limit) {
      if (timing.seconds.empty())
        timing.seconds.push_back(elapsed);
      timing.aborted = true;
      releaseOutputs();
      break;
    }
    if (run == total - 1 && options.keepOutputs) {
      for (size_t i = 0; i < sig.inputs.size(); ++i) {
        HostTensor h = sig.inputs[i];
        copyOut(call.inputs[i].data(), h);
        timing.inputs.push_back(std::move(h));
      }
      size_t w = 0;
      for (const HostTensor &out : sig.outputs) {
        HostTensor h = out;
        copyOut(call.result.data() + w, h);
        timing.outputs.push_back(std::move(h));
        w += getDescriptorWords(out.shape.size());
      }
    }
    releaseOutputs();
  }
  freeAll();
  return timing;
}

size_t getElementTypeBytes(const std::string &elementType) {
  return getElementBytes(elementType);
}

void markArgumentsReadOnly(ModuleOp module) {
  Builder b(module.getContext());
  module.walk([&](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(fn.getArgument(i).getType()))
        fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      b.getBoolAttr(false));
  });
}

struct JitFunction::Engine {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  bool fromObject = false; // loaded from a cache file, not compiled here
  void (*packed)(void **) = nullptr;
  SetThreadsFn setThreads = nullptr;
};

JitFunction::~JitFunction() = default;

bool JitFunction::isLoaded() const { return engine && engine->fromObject; }

std::string getJitTargetTag() {
  // What the machine code depends on besides the module: the LLVM that
  // compiled it and the host CPU it was compiled for (the JIT targets the
  // host's CPU and features).
  std::string text = std::string(LLVM_VERSION_STRING) + ";" +
                     llvm::sys::getProcessTriple() + ";" +
                     llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> on;
  for (const auto &f : features)
    if (f.getValue())
      on.push_back(f.getKey().str());
  std::sort(on.begin(), on.end());
  for (const std::string &f : on)
    text += "," + f;
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()),
                        text.size()));
  return llvm::toHex(ArrayRef<uint8_t>(hash).take_front(8),
                     /*LowerCase=*/true);
}

FailureOr<std::unique_ptr<JitFunction>>
JitFunction::compile(ModuleOp llvmModule, const FunctionSignature &sig,
                     int threads, std::string &error,
                     const std::string &objectPath) {
  std::unique_ptr<JitFunction> fn(new JitFunction());
  fn->engine = std::make_unique<Engine>();
  FailureOr<std::unique_ptr<llvm::orc::LLJIT>> jit = compileAndLink(
      llvmModule, sig.name, fn->engine->packed, error,
      [&](const std::vector<std::unique_ptr<llvm::MemoryBuffer>> &objects) {
        if (!objectPath.empty())
          writeObjects(objects, objectPath);
      });
  if (failed(jit))
    return failure();
  fn->engine->jit = std::move(*jit);
  fn->engine->setThreads = getSetThreads();
  fn->signature = sig;
  fn->threads = std::max(1, threads);
  return fn;
}

FailureOr<std::unique_ptr<JitFunction>>
JitFunction::load(const std::string &objectPath, const FunctionSignature &sig,
                  int threads, std::string &error) {
  FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>> objects =
      readObjects(objectPath, error);
  if (failed(objects))
    return failure();
  std::unique_ptr<JitFunction> fn(new JitFunction());
  fn->engine = std::make_unique<Engine>();
  FailureOr<std::unique_ptr<llvm::orc::LLJIT>> jit = createLinkedJit(
      std::move(*objects), sig.name, fn->engine->packed, objectPath, error);
  if (failed(jit))
    return failure();
  fn->engine->jit = std::move(*jit);
  fn->engine->fromObject = true;
  fn->engine->setThreads = getSetThreads();
  if (!fn->engine->setThreads) {
    error = "cannot load " + objectPath + ": the OpenMP runtime is not loaded";
    return failure();
  }
  fn->signature = sig;
  fn->threads = std::max(1, threads);
  return fn;
}

/// The results of a packed call (descriptor words `result`) into the
/// caller's dense buffers `outputs` (one memcpy per result when dense).
static void copyResultsInto(const FunctionSignature &sig,
                            const std::vector<int64_t> &result,
                            const std::vector<void *> &outputs) {
  size_t w = 0;
  for (auto [out, dest] : llvm::zip(sig.outputs, outputs)) {
    const int64_t *d = result.data() + w;
    w += getDescriptorWords(out.shape.size());
    size_t rank = out.shape.size();
    size_t bytes = getElementBytes(out.elementType);
    const char *aligned = reinterpret_cast<const char *>(d[1]);
    const int64_t *sizes = d + 3, *strides = d + 3 + rank;
    bool dense = true;
    for (int r = (int)rank - 1, expect = 1; r >= 0; --r) {
      if (sizes[r] != 1 && strides[r] != expect)
        dense = false;
      expect *= sizes[r];
    }
    char *to = static_cast<char *>(dest);
    if (dense)
      std::memcpy(to, aligned + d[2] * bytes, getNumElements(out.shape) * bytes);
    else
      forEachElement(d, rank, [&](int64_t linear, int64_t pos) {
        std::memcpy(to + linear * bytes, aligned + pos * bytes, bytes);
      });
  }
}

LogicalResult JitFunction::call(const std::vector<const void *> &inputs,
                                const std::vector<void *> &outputs,
                                std::string &error) {
  return invoke(inputs, outputs, /*copyResults=*/true, nullptr, error);
}

LogicalResult JitFunction::time(const std::vector<const void *> &inputs,
                                const std::vector<void *> &outputs, int runs,
                                int warmup, std::vector<double> &seconds,
                                std::string &error) {
  warmup = std::max(0, warmup);
  int total = warmup + std::max(1, runs);
  for (int run = 0; run < total; ++run) {
    double elapsed = 0;
    if (failed(invoke(inputs, outputs, run == total - 1, &elapsed, error)))
      return failure();
    if (run >= warmup)
      seconds.push_back(elapsed);
  }
  return success();
}

LogicalResult JitFunction::invoke(const std::vector<const void *> &inputs,
                                  const std::vector<void *> &outputs,
                                  bool copyResults, double *seconds,
                                  std::string &error) {
  const FunctionSignature &sig = signature;
  if (inputs.size() != sig.inputs.size() ||
      outputs.size() != sig.outputs.size()) {
    error = sig.name + " takes " + std::to_string(sig.inputs.size()) +
            " inputs and gives " + std::to_string(sig.outputs.size()) +
            " outputs; called with " + std::to_string(inputs.size()) + " and " +
            std::to_string(outputs.size());
    return failure();
  }
  PackedCall call(sig, inputs);
  if (engine->setThreads)
    engine->setThreads(threads);
  auto start = std::chrono::steady_clock::now();
  engine->packed(call.packed.data());
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
  if (copyResults)
    copyResultsInto(sig, call.result, outputs);
  call.releaseResults(sig, inputs);
  return success();
}

std::vector<HostTensor> makeRandomInputs(const FunctionSignature &sig,
                                         uint64_t seed) {
  std::vector<HostTensor> out;
  for (auto [i, in] : llvm::enumerate(sig.inputs)) {
    HostTensor h = in;
    size_t n = getNumElements(in.shape);
    std::vector<char> raw(std::max<size_t>(1, n) * getElementBytes(in.elementType));
    fillRandom(raw.data(), in, seed * 1000003ull + i);
    h.data.resize(n);
    for (size_t k = 0; k < n; ++k)
      h.data[k] = loadElement(raw.data(), k, in.elementType);
    out.push_back(std::move(h));
  }
  return out;
}

bool outputsMatch(const std::vector<HostTensor> &actual,
                  const std::vector<HostTensor> &expected, double &maxError,
                  double rtol, double atolScale) {
  maxError = 0;
  if (actual.size() != expected.size()) {
    maxError = INFINITY;
    return false;
  }
  bool ok = true;
  for (auto [a, e] : llvm::zip(actual, expected)) {
    if (a.shape != e.shape || a.data.size() != e.data.size()) {
      maxError = INFINITY;
      return false;
    }
    double largest = 1.0;
    for (double v : e.data)
      largest = std::max(largest, std::fabs(v));
    double atol = atolScale * largest;
    for (size_t i = 0; i < a.data.size(); ++i) {
      double diff = std::fabs(a.data[i] - e.data[i]);
      if (std::isnan(diff)) {
        // NaN equals NaN only where both are NaN (numpy's allclose: never).
        maxError = INFINITY;
        ok = false;
        continue;
      }
      maxError = std::max(maxError, diff);
      if (diff > atol + rtol * std::fabs(e.data[i]))
        ok = false;
    }
  }
  return ok;
}

} // namespace mlir::rl
