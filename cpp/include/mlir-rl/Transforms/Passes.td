//===- Passes.td - mlir-rl passes --------------------------*- tablegen -*-===//
//
// linalg-rl-schedule and mlir-rl-strip-op-ids are defined in MlirRLPasses
// (cpp/lib/Pipeline/LinalgRlSchedulePass.cpp), every other pass in
// MlirRLTransforms, whose registerTransformsPassesAndPipelines
// (cpp/lib/Transforms/Registration.cpp) registers it.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_PASSES
#define MLIR_RL_PASSES

include "mlir/Pass/PassBase.td"

def LinalgRlSchedule : Pass<"linalg-rl-schedule", "ModuleOp"> {
  let summary = "Schedule linalg ops with transform-dialect actions";
  let description = [{
    Visits the linalg ops of the module, consumers before producers, and
    applies a schedule of actions to each: tiling (`T`), tiled
    parallelization (`TP`, scf.forall), tiled fusion (`TF`, scf.forall with
    the last producer fused in), interchange (`I`), vectorization (`V`) and
    no transformation (`NT`). Each action becomes transform-dialect IR that
    the transform interpreter applies at once; an action that fails to apply
    is reported and the IR is restored.

    Op ids number the linalg ops of the module in pre-order (`mlir-rl ops`
    lists them). An explicit schedule gives, per op id, its actions:

      schedule="1: TP(32,64,0) T(8,32,1) V; 0: NT"

    Before:
      %r = linalg.matmul ins(%A, %B : tensor<384x768xf32>, tensor<768x768xf32>)
                         outs(%C : tensor<384x768xf32>) -> tensor<384x768xf32>
    After `1: TP(32,64,0) T(8,32,1) V`:
      %r = scf.forall (%i, %j) in (12, 12) shared_outs(%o = %C) {
        scf.for ... step 8 { scf.for ... step 32 { scf.for ... step 1 {
          vector.transfer_read ... vector.multi_reduction ... vector.transfer_write
        } } }
        scf.forall.in_parallel { tensor.parallel_insert_slice ... }
      }

    Without `schedule`, the pass asks the policy: the actor exported to ONNX
    (`model=`, default the shipped models/policy.onnx) runs in-process
    through ONNX Runtime on each op's features and masks, and its logits are
    decoded (greedy, or sampled with `sample=true seed=S`) into actions until
    every op's schedule is complete. `decisions=heuristic` decides with a
    documented non-learned default instead, `decisions=random` with
    mask-legal random decisions (`seed=`): the baselines of the policy.

    Without `schedule`, the module goes through one pipeline, the same in
    every tool (the pass, the Python API, training, evaluation, search, the
    tuner): the front end (what `mlir-rl-prepare` runs: elementwise chains
    fused, 2-D convolutions as im2col + matmul, windows of poolings and
    NCHW depthwise convolutions unrolled, odd extents padded to full tiles,
    elementwise ops flattened; each stage switchable), then the decisions
    on the front end's module (op ids are its), then the post-decision
    rules (right-hand sides of matmuls packed into panels, register tiles,
    copies and fills by rule), which schedule the module again with each
    decision translated. Search and tuning-db measure their candidates
    through the same rules.

    The schedule the pass prints (`dump-schedule`'s header line) is a
    trace: the passes that ran before the decisions, then the schedule,
    `[mlir-rl-pad-to-tiles,mlir-rl-flatten-elementwise] 1: TP(..) V; 0: ...`.
    Handed back as `schedule=` on the same input, it gives the same IR. A
    schedule without passes applies to the input as given.

    Unsupported ops (dynamic shapes, memref operands, too many loops, and
    linalg ops without the LinalgOp interface such as linalg.pack) are left
    unchanged with a remark. Illegal actions (e.g. TP on a reduction loop)
    and malformed schedules are errors. An action that passes its mask but
    fails to apply, or whose result does not verify, is a warning and is
    undone. The pass hands on only IR that verifies.
  }];
  let dependentDialects = [
    "::mlir::transform::TransformDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
  ];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"",
           "Explicit schedule: '<op id>: <actions>; ...', actions T(..), "
           "TP(..), TF(..), I(..), V, NT">,
    Option<"dumpSchedule", "dump-schedule", "std::string", /*default=*/"",
           "Write the applied schedule as a transform script to this file "
           "('-' for stdout); replay it with --transform-interpreter">,
    Option<"dumpFeatures", "dump-features", "bool", /*default=*/"false",
           "Print each op's features and masks (before scheduling it) to stdout">,
    Option<"usePolicy", "policy", "bool", /*default=*/"true",
           "Without an explicit schedule, schedule every op with the ONNX "
           "policy (false: leave the IR as it is)">,
    Option<"decisions", "decisions", "std::string", /*default=*/"\"policy\"",
           "Where the decisions come from without an explicit schedule: "
           "policy (the ONNX policy, model=), heuristic (a non-learned "
           "default: the outer parallel loops split into at least 8 tiles, "
           "the inside tiled for vectors, vectorized) or random (mask-legal "
           "random decisions drawn with seed=). The front end and the rules "
           "after the decisions are the same for all three">,
    Option<"modelPath", "model", "std::string", /*default=*/"",
           "ONNX policy (default: models/policy.onnx of the installation)">,
    Option<"ortLib", "ort-lib", "std::string", /*default=*/"",
           "ONNX Runtime library to dlopen (default: $MLIR_RL_ORT_LIB, else "
           "the onnxruntime Python package found at build time)">,
    Option<"sample", "sample", "bool", /*default=*/"false",
           "Sample from the policy instead of greedy (argmax) decoding">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of sampled decoding">,
    Option<"computeInF32", "compute-in-f32", "bool", /*default=*/"true",
           "Front end: compute ops on bf16 and f16 data in f32, rounding "
           "where they store; reductions (matmuls among them) accumulate in "
           "f32 and round once (mlir-rl-compute-in-f32), as PyTorch does">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"true",
           "Front end: on a host with AVX-512 BF16, matmuls and batch "
           "matmuls of bf16 values multiply with vdpbf16ps, constant "
           "right-hand sides packed in VNNI panels (mlir-rl-bf16-dot)">,
    Option<"fuseElementwise", "fuse-elementwise", "bool", /*default=*/"true",
           "Front end (without an explicit schedule): fuse elementwise "
           "chains into one generic, then canonicalize and cse "
           "(mlir-rl-fuse-elementwise)">,
    Option<"rewriteWindows", "rewrite-windows", "bool", /*default=*/"true",
           "Front end: rewrite 2-D convolutions as im2col + matmul, and "
           "poolings and NCHW depthwise convolutions as elementwise ops "
           "over strided views (mlir-rl-conv-to-matmul, "
           "mlir-rl-unroll-windows, then canonicalize, cse, "
           "mlir-rl-untie-inits), the forms the policy schedules well">,
    Option<"padToTiles", "pad-to-tiles", "bool", /*default=*/"true",
           "Front end: pad the odd extents of contractions and reductions "
           "to full tiles (mlir-rl-pad-to-tiles; only where the module has "
           "such ops)">,
    Option<"flattenElementwise", "flatten-elementwise", "bool",
           /*default=*/"true",
           "Front end: flatten elementwise ops over contiguous data to rows "
           "of whole vector registers (mlir-rl-flatten-elementwise); with "
           "copies-by-rule, their schedule is the copies' rule's">,
    Option<"packRhs", "pack-rhs", "bool", /*default=*/"true",
           "With the policy, store the right-hand side of matmuls as panels "
           "(mlir-rl-pack-rhs) and apply each one's schedule, decided on its "
           "plain form, to the packed form">,
    Option<"packConstantsOnly", "pack-constants-only", "bool",
           /*default=*/"false",
           "With pack-rhs, pack constant right-hand sides only (no copies)">,
    Option<"minRowsToCopy", "min-rows-to-copy", "int64_t",
           /*default=*/"128",
           "With pack-rhs, copy a right-hand side that is not constant into "
           "panels at run time when the matmul has at least this many rows "
           "(0: constants only)">,
    Option<"registerTiles", "register-tiles", "bool", /*default=*/"true",
           "With the policy, give matmuls that are not packed a register "
           "tile under the decided tiling (accumulators in registers over "
           "the reduction)">,
    Option<"copiesByRule", "copies-by-rule", "bool", /*default=*/"true",
           "With the policy, schedule copies whose rows are contiguous on "
           "both sides (im2col copies, copies of B into panels) and fills "
           "by rule: parallel over their outer loops, vectors along the "
           "rows; a fill that only initialises an accumulator goes into "
           "its consumer's tiles (the consumer's TP becomes a TF); "
           "elementwise ops over contiguous data likewise, and row ops "
           "(softmax's, layer norm's: a reduction along the innermost "
           "loop or a row-wise op with per-row values) in pieces of at "
           "most 64 along the rows">,
    Option<"search", "search", "int", /*default=*/"0",
           "Compile-time tuning: for each op, measure the policy's K most "
           "likely schedules (a beam over its ranked alternatives) and NT, "
           "each on the op cut out as a function with its fused producer, "
           "in a helper process (mlir-rl-measure), and apply the fastest "
           "whose outputs are equal (NT when none beats unscheduled)">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"",
           "SQLite tuning database: an op found there (by its signature, "
           "host, layout, lowering and threads) gets the recorded winner "
           "without measuring; with search, every measurement and winner "
           "is recorded">,
    Option<"budgetMs", "budget-ms", "double", /*default=*/"0",
           "With search: time for one op's candidates in milliseconds; "
           "candidates left when it is spent are not measured (0: no "
           "limit)">,
    Option<"candidateTimeoutS", "candidate-timeout-s", "double",
           /*default=*/"15",
           "With search: seconds one candidate may take to compile and be "
           "measured before the helper is stopped and the candidate counts "
           "as a timeout (0: no limit; the helper's 120 s hold)">,
    Option<"threads", "threads", "int", /*default=*/"0",
           "With search: the thread count the compiled code will run with "
           "(measurements and database entries use it; 0: all cores)">,
    Option<"measureTool", "measure-tool", "std::string", /*default=*/"",
           "With search: the measurement helper (default: mlir-rl-measure "
           "installed beside the plugin, else on PATH)">,
    Option<"moduleCheck", "module-check", "bool", /*default=*/"true",
           "With search or tuning-db: when the tuned schedule differs from "
           "the policy's greedy one, measure the whole function both ways "
           "(outputs checked against it unscheduled) and keep the faster; "
           "the decision is recorded in the tuning database">,
  ];
}

def StripTransformIR : Pass<"mlir-rl-strip-transform-ir", "ModuleOp"> {
  let summary = "Erase transform-dialect IR from a payload module";
  let description = [{
    Inputs that carry their own transform script (a
    `transform.named_sequence` beside the payload, or a nested module with
    `transform.with_named_sequence`) are lowered without it: the
    transform-dialect ops at the top of the module and such nested modules
    are erased, and the `transform.with_named_sequence` attribute removed.
    First step of `mlir-rl-lower`.
  }];
}

def Prepare : Pass<"mlir-rl-prepare", "ModuleOp"> {
  let summary = "The schedule pipeline's front end alone (imported IR)";
  let description = [{
    Runs the front end of `linalg-rl-schedule` without scheduling:
    elementwise chains fused into one generic (mlir-rl-fuse-elementwise,
    canonicalize, cse), 2-D convolutions as im2col + matmul and windows
    unrolled (mlir-rl-conv-to-matmul, mlir-rl-unroll-windows, canonicalize,
    cse, mlir-rl-untie-inits), odd extents padded to full tiles
    (mlir-rl-pad-to-tiles), elementwise ops flattened to whole-register
    rows (mlir-rl-flatten-elementwise). The module is marked
    `mlir_rl.front_end`: the front end does not run on it again (its
    fusion would undo what the later stages built), and
    `linalg-rl-schedule` removes the mark.
  }];
}

def StripOpIds : Pass<"mlir-rl-strip-op-ids"> {
  let summary = "Remove the mlir_rl.op_id tags that number linalg ops";
  let description = [{
    `linalg-rl-schedule` numbers the linalg ops it schedules with
    `mlir_rl.op_id` attributes and removes them when it is done. A
    `dump-schedule` script tags the ops the same way to match them, and no
    transform op removes an attribute: a script that runs mlir-rl's passes
    anyway (its prelude: rewrite-windows, pad-to-tiles, pack-rhs) ends by
    applying this one, so that its replay gives the pass's IR exactly. A
    script without a prelude stays free of mlir-rl's passes (any transform
    interpreter replays it) and leaves the tags.
  }];
}

def LowerPackUnpack : Pass<"mlir-rl-lower-pack-unpack"> {
  let summary = "Lower linalg.pack and linalg.unpack before bufferization";
  let description = [{
    LLVM 22 cannot bufferize `linalg.pack` / `linalg.unpack`. This pass
    rewrites them with upstream `linalg::lowerPack` (tensor.pad,
    tensor.expand_shape, linalg.transpose) and `linalg::lowerUnPack`
    (linalg.transpose, tensor.collapse_shape, tensor.extract_slice,
    linalg.copy), which bufferize. Ops with dynamic inner tiles are left as
    they are (with an error from bufferization later). Part of
    `mlir-rl-lower`.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def UnitSliceStrides : Pass<"mlir-rl-unit-slice-strides"> {
  let summary = "Stride 1 on the unit dimensions of tensor slices, before bufferization";
  let description = [{
    A stride on a dimension of size 1 selects nothing (only the offset
    does), but it survives into the strides of the bufferized
    `memref.subview`, where a rank-reducing subview that drops one of two
    unit dimensions of different strides lowers wrongly in LLVM 22's
    `expand-strided-metadata` ("expected result type with stride = 24
    instead of 8"): a sum pooling over a 1x1 window with stride 3 (a
    strided view of one row) followed by a depthwise convolution, whose
    decomposition drops the row, failed to lower (a fuzzer's finding).
    This pass sets those strides to 1 on `tensor.extract_slice`,
    `tensor.insert_slice` and `tensor.parallel_insert_slice`. Part of
    `mlir-rl-lower`.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def DecomposeAggregates : Pass<"mlir-rl-decompose-aggregates"> {
  let summary = "linalg.softmax as the linalg ops it stands for";
  let description = [{
    LLVM 22 has no lowering of `linalg.softmax` (an op of
    AggregatedOpInterface): a program holding one failed to compile with
    "LLVM Translation failed for operation: builtin.unrealized_conversion_cast".
    This pass rewrites such ops on tensors with their own decomposition
    (a fill and a max over the dimension, the exp of the difference, a
    fill and a sum, a division: linalg.generic ops). The front end does the
    same first (mlir-rl-fuse-elementwise), so that the pass schedules the
    generics; this first step of `mlir-rl-lower` catches any left.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FuseForalls : Pass<"mlir-rl-fuse-foralls"> {
  let summary = "One parallel region for a forall and the forall that reads its tiles";
  let description = [{
    A scheduled function runs each op in an `scf.forall` of its own. Where
    a forall reads the result of an earlier forall of the same iteration
    space only through `tensor.extract_slice`s, at its top level, of the
    tile that forall inserted in the same iteration (the rows of a
    softmax's exp, of their sum, of the division that reads both; an
    elementwise chain tiled alike), the two become one forall at the
    reader's place: the producer's body, then the reader's, which takes the
    producer's tile directly. A result of the producer that nothing else
    reads is no longer a shared output: its tiles live in the iteration.
    Repeated until no forall joins another. Part of `mlir-rl-lower`.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::scf::SCFDialect"];
}

def SplitEmptyTensors : Pass<"mlir-rl-split-empty-tensors"> {
  let summary = "One tensor.empty (and one fill) per destination, so that empty-tensor elimination applies";
  let description = [{
    CSE merges the `tensor.empty` ops of one type, so that a scheduled
    module often has one empty tensor as the destination of several ops.
    `eliminate-empty-tensors` (which lets an op write straight into the
    slice of a larger tensor it is inserted into, such as the padded input
    of the next convolution, instead of into a buffer of its own that is
    then copied) does not rewrite such a shared one. This pass gives
    every use of the whole tensor as a destination (an init, a shared
    output of `scf.forall`, a reshape) its own `tensor.empty`; slices of
    it (an im2col buffer filled slice by slice) keep sharing one.

    The same holds for values that are only written, zeros above all (a
    `linalg.fill` or a scheduled one: an op whose tensor operands are empty
    and whose body reads no tensor from above), which CSE also merges: one
    padded input shared by the convolutions of one shape, one accumulator
    by the matmuls of one shape. Bufferized, every destination after the
    first copied the whole buffer. Each use as a destination (an init, a
    shared output, the destination of `tensor.insert_slice`) gets a clone
    of its own, through reshapes, and the slice an inserted value was
    computed in moves to its insertion's clone. A clone costs a pass of
    writes, no more than the copy it saves. Reshapes of empty tensors
    become empty tensors first. A value read after its insertion (a
    depthwise convolution's centre tap, which canonicalization folds back
    from a slice of the padded input) is read through a slice of the
    insertion instead, so that computing it in place stays possible.

    Part of `mlir-rl-lower`, right before `eliminate-empty-tensors` and
    bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MarkManualDeallocation : Pass<"mlir-rl-mark-manual-deallocation", "ModuleOp"> {
  let summary = "Let buffer deallocation accept memref code that frees its own buffers";
  let description = [{
    The ownership-based buffer deallocation of `mlir-rl-lower` rejects input
    that already contains `memref.dealloc` ("memory free side-effect on
    MemRef value not supported"). This pass marks such deallocations and
    the allocations they free with `bufferization.manual_deallocation`, so
    that those buffers stay the input's to free and the rest is managed as
    usual. Part of `mlir-rl-lower`.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def LowerVectorOps : Pass<"mlir-rl-lower-vectors"> {
  let summary = "Lower vector ops produced by vectorization for the CPU";
  let description = [{
    Rewrites vector.multi_reduction into vector.contract where possible,
    lowers transfer permutations, contractions (to outer products), masks and
    multi-reductions, so that the LLVM lowering emits vector FMAs. Part of the
    `mlir-rl-lower` pipeline; runs on tensors, before bufferization.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LowerCopies : Pass<"mlir-rl-lower-copies"> {
  let summary = "Lower bufferization's copies to parallel loops";
  let description = [{
    One-Shot Bufferize copies whole tensors where it cannot work in place
    (a pad's interior, the im2col layout of a convolution's output, a value
    still read after an op overwrites it). `finalize-memref-to-llvm` lowers
    a `memref.copy` to one `memcpy` when both sides are contiguous, else to
    a call to the runtime's generic `memrefCopy`, which moves one element at
    a time; both run on one thread while the others wait. In MobileNetV2
    they took a third of the time. This pass rewrites a copy of static
    shape into loops: an `scf.parallel` over all but the innermost
    dimension (for copies of at least `min-parallel-elements` elements,
    outside other parallel loops), and an inner loop of loads and stores
    that LLVM vectorizes. Small contiguous copies stay `memcpy`. Part of
    `mlir-rl-lower`, after bufferization.
  }];
  let options = [
    Option<"minParallelElements", "min-parallel-elements", "int64_t",
           /*default=*/"16384",
           "Copies of fewer elements run on one thread">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def OutlineParallelLoops : Pass<"mlir-rl-outline-parallel-loops", "ModuleOp"> {
  let summary = "Each outermost scf.parallel in a function of its own";
  let description = [{
    Moves every scf.parallel that is not inside another one into a private
    function of its own, called where it was (its captured values become
    arguments; constants and memref.get_global are cloned in; its results,
    if any, are returned). The OpenMP translation outlines a parallel
    region with a code extractor whose analysis is built over the whole
    enclosing function, once per region: over a network's one function of
    hundreds of regions that was quadratic (EfficientNet-B0: 23 s). In
    functions of their own, the regions are translated, optimized and
    compiled one by one, and their code is generated in parallel. The new
    functions are `noinline` (LLVM would inline each back: it has one
    call). Part of `mlir-rl-lower`, after scf-forall-to-parallel.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def MoveBf16AsI16 : Pass<"mlir-rl-move-bf16-as-i16"> {
  let summary = "Move bf16 vectors as i16 in the LLVM dialect";
  let description = [{
    Last step of `mlir-rl-lower`. LLVM 22's x86 instruction selection
    stops ("Do not know how to soft promote this operator's operand!",
    aborting the process) on vectors of 8k + 1 bf16 (9, 17, 33, ...) that
    are loaded and then moved: stored, shuffled, inserted into (a 17x17
    bf16 transpose, a broadcast of 33 bf16). The same moves on i16 are
    fine. Values that only moves touch (llvm.load, store, their masked
    forms, extractelement,
    insertelement, shufflevector, select, insertvalue, extractvalue,
    poison, undef, zero, and block arguments through branches) are put in
    classes of the values they move to and from; a class holding such a
    vector changes bf16 to i16 in all its types, and where it meets an op
    that computes on it (or a value such an op made), an llvm.bitcast
    converts.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ExpandBF16 : Pass<"mlir-rl-expand-bf16"> {
  let summary = "Convert between bf16 and f32 with integer operations";
  let description = [{
    Part of `mlir-rl-lower`, after `arith-emulate-unsupported-floats`
    (which leaves bf16 only in conversions). LLVM rounds f32 to bf16 in one
    instruction where the host has AVX-512 BF16 and otherwise by a call to
    `__truncsfbf2` per element, which a JIT'd module does not find on every
    host; this pass rounds (to nearest even, NaN kept) and extends with
    shifts and adds on the bits, which vectorize everywhere.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LowerMath : Pass<"mlir-rl-lower-math", "ModuleOp"> {
  let summary = "Lower the math ops the LLVM conversion does not take";
  let description = [{
    `convert-math-to-llvm` converts neither a math op on a vector of rank 2
    or more for some ops (`math.absi`, `math.ctlz`, `math.cttz`), nor ops
    without an LLVM intrinsic (`math.erf`, `math.erfc`, `math.cbrt`,
    `math.asinh`, `math.acosh`, `math.atanh`): the JIT then fails on an
    unrealized cast. This pass unrolls math ops on vectors of rank 2 or
    more into ops on their 1-D rows (what the LLVM conversion does for the
    others), and turns the ops without an intrinsic into libm calls (only
    those: the others keep their intrinsics). First, the f32
    transcendentals of networks (`tanh`, `erf`, `erfc`, `exp`, `expm1`,
    `log`, `log1p`, `log2`) become upstream's polynomial approximations,
    which stay vectorized (an intrinsic on a vector is scalarized into one
    libm call per lane). Part of `mlir-rl-lower`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ub::UBDialect"];
}

def FuseElementwise : Pass<"mlir-rl-fuse-elementwise"> {
  let summary = "Fuse chains of elementwise ops into one generic (imported IR)";
  let description = [{
    First step of `mlir-rl-prepare`. All-parallel named ops that read tensors
    (`linalg.add`, `linalg.exp`, `linalg.elementwise`, `linalg.broadcast`,
    `linalg.transpose`, ...) become `linalg.generic`, and so do
    `linalg.reduce` (the rules know row reductions as generics) and
    `linalg.softmax` (its max, exp, sum and division); then upstream
    elementwise fusion merges each producer into its consumer where that
    duplicates no work: the producer has no other user, and the consumer
    reads each of its elements once, unless the producer only moves data (a
    broadcast or transpose). Batch norm's five generics and the activation
    after it become one op; a per-channel computation that a consumer
    broadcasts stays apart. Reshapes between generics are folded into them
    (by expansion) so that chains across `tensor.expand_shape` fuse too, and
    a `tensor.pad` of an all-parallel op's result is fused into that op (it
    writes into the padded tensor). Fills, matmuls, convolutions and pooling
    keep their names. A `linalg.transpose` of a constant (torch-mlir
    transposes every `nn.Linear` weight at run time) is folded: the constant
    is transposed at compile time (dense and `dense_resource` constants up
    to 256 MiB). A matmul with at most `thin-matmul-rows` rows (a batch-1
    linear layer: a matrix-vector product) whose weight is transposed at
    run time reads it [N, K] instead, in place, so that it streams each
    weight row contiguously. A constant weight, which the rules pack into
    panels at compile time, is read [N, K] (transposed at compile time)
    only by a matmul of at most `thin-constant-rows` rows (1: a
    matrix-vector product) and only up to `thin-constant-bytes` (12 MiB)
    unless its columns are no multiple of 16 (the rules' register tiles):
    packed, the 16 rows of a GRU cell's 16x512 by 512x3072 product ran
    2.8x faster than [N, K], and a 1x4096 by 4096x4096 one 2.7x, while a
    1x2048 by 2048x1000 classifier ran 1.8x faster [N, K] (AMD EPYC Zen 5,
    2 threads).
  }];
  let options = [
    Option<"foldReshapes", "fold-reshapes", "bool", /*default=*/"true",
           "Fold reshapes between generics into them (by expansion)">,
    Option<"fusePads", "fuse-pads", "bool", /*default=*/"true",
           "Fuse tensor.pad into the all-parallel op producing its source">,
    Option<"foldConstantTransposes", "fold-constant-transposes", "bool",
           /*default=*/"true",
           "Transpose constants at compile time (torch-mlir transposes every "
           "nn.Linear weight at run time), and extend bf16 and f16 constants "
           "that are only extended to f32 (torch-mlir widens every "
           "low-precision linear weight at run time)">,
    Option<"thinMatmulRows", "thin-matmul-rows", "int64_t", /*default=*/"16",
           "A matmul with at most this many rows reads its right-hand side "
           "[N, K]: a transposed operand in place, a constant transposed at "
           "compile time (a matrix-vector product streams its weight row by "
           "row); 0: never">,
    Option<"thinConstantRows", "thin-constant-rows", "int64_t", /*default=*/"1",
           "Of those, a matmul whose weight is a constant (which the rules "
           "pack into panels at compile time) only with at most this many "
           "rows">,
    Option<"thinConstantBytes", "thin-constant-bytes", "int64_t",
           /*default=*/"12582912",
           "... and a constant weight of at most this many bytes, or of "
           "columns not a multiple of 16 (12 MiB: larger ones stream faster "
           "packed)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def UntieInits : Pass<"mlir-rl-untie-inits"> {
  let summary = "Give each linalg op its own init (no fill shared by two ops)";
  let description = [{
    Step of `mlir-rl-prepare`, before `mlir-rl-pad-to-tiles`. CSE merges identical `linalg.fill`s, so
    that two convolutions of the same shape accumulate into copies of one
    filled tensor, and neither can fuse the fill into its tiles. This pass
    clones a fill (or a generic that only moves data, such as a broadcast
    bias) for every linalg op that uses it as an init, but the last one.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def UntieEmpties : Pass<"mlir-rl-untie-empties"> {
  let summary = "Give each linalg op whose init is a shared tensor.empty its own";
  let description = [{
    CSE merges equal `tensor.empty` ops, so that two linalg ops write
    into the same empty tensor. Tiled fusion of a producer into a forall
    whose shared output is that tensor (upstream's
    `transform.structured.fuse_into_containing_op` among them) then writes
    the producer's tiles into the forall's output. This pass clones the
    `tensor.empty` for every linalg op that has it as an init but the
    last. `linalg-rl-schedule` runs it before its decisions where it
    changes something (the schedule's prelude then names it), whatever
    its front end.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ConvToMatmul : Pass<"mlir-rl-conv-to-matmul"> {
  let summary = "Rewrite 1-D and 2-D convolutions as an im2col copy and a matmul";
  let description = [{
    Step of `mlir-rl-prepare`, after elementwise fusion and before the
    inits are untied. A `linalg.conv_2d_nchw_fchw` (or
    `conv_2d_nhwc_hwcf`, `conv_2d_nhwc_fhwc`) with static shapes becomes
    an im2col copy into the im2col tensor (`[N, C, KH, KW, OH, OW]` for
    NCHW, whose rows are contiguous reads of the input when the stride is
    1): one all-parallel generic per filter tap (kh, kw), from a strided view
    of the input into its slice (vectorizable), or above `max-tap-copies`
    taps one generic with window maps (which the vectorizer refuses); then a
    `tensor.collapse_shape` of it to `[N, C*KH*KW, OH*OW]`, and a
    matmul-like generic of the flattened filter with it, whose result is
    expanded back to the convolution's shape. 1-D convolutions
    (`conv_1d_ncw_fcw`, `conv_1d_nwc_wcf`, `depthwise_conv_1d_ncw_cw`,
    `depthwise_conv_1d_nwc_wc`) with static shapes first become the 2-D op
    of their layout with a unit height between reshapes, and are then
    rewritten as 2-D ones are (depthwise ones by `mlir-rl-unroll-windows`).
    A 1x1 convolution with stride
    1 needs no copy: the input is only collapsed. A stride-1 NHWC
    convolution of one image (an NCHW one as NHWC pixel rows) with channels
    of whole vectors, at most `shifted-max-filters` filters and an im2col
    matrix over `shifted-min-bytes` becomes one `linalg.matmul` per filter
    tap instead, with no copy: the input seen as rows of channels
    [H*W, C], the output computed at the input's width [OH*W, F] (the
    columns past OW dropped), tap (kh, kw) reading the rows from
    kh*dh*W + kw*dw on (a UNet decoder's 3x3 192->64 convolution at 64x64
    1.35x faster). The scheduler then applies
    its matmul schedules (tiling, parallelization, vectorization to
    `vector.contract`) to convolutions, which it cannot vectorize as well as
    2-D windows. Extents that tiles of 8 would not divide are padded with
    zeros (`pad-multiple`): a 7x7 output is computed as 7x8 and sliced. Generic
    consumers of a rewritten convolution are then
    collapsed to the matmul's shape where their indexing maps allow it
    (upstream's fold-reshape-by-collapsing). Convolutions with mixed element
    types or dynamic shapes are left alone.
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"0",
           "Leave convolutions of fewer multiply-adds alone">,
    Option<"padMultiple", "pad-multiple", "int64_t", /*default=*/"8",
           "Pad KW and OW with zeros so that the matmul's reduction "
           "(C*KH*KW, see also min-reduction-pad-multiple) and pixel (OH*OW) "
           "extents are multiples of this (or of "
           "a larger power of two up to max-pad-multiple where that costs at "
           "most 1/3 more work), which the scheduler's power-of-two tiles "
           "then divide (1: no padding)">,
    Option<"maxPadMultiple", "max-pad-multiple", "int64_t", /*default=*/"32",
           "The largest power of two the pixel extent (OH*OW) is padded to "
           "a multiple of (see pad-multiple): 14x14 pixels become 14x16 with "
           "32, 16x16 with 64 (30 % more work for tiles of 64 the policy "
           "rarely takes)">,
    Option<"minReductionPadMultiple", "min-reduction-pad-multiple", "int64_t",
           /*default=*/"4",
           "The reduction extent (C*KH*KW) is padded to a multiple of 8, or "
           "of a smaller power of two down to this where 8 would cost more "
           "than 1/3 more work (a 3-channel 3x3 filter: 36, not 72), else of "
           "pad-multiple whatever it costs">,
    Option<"maxTapCopies", "max-tap-copies", "int64_t", /*default=*/"49",
           "Write the im2col copy as one identity generic per filter tap up "
           "to this many taps (KH*KW), else as one generic whose window maps "
           "the vectorizer does not take (0: always one generic)">,
    Option<"shiftedMinBytes", "shifted-min-bytes", "int64_t",
           /*default=*/"8388608",
           "Compute a stride-1 NHWC convolution of one image (an NCHW one "
           "too, with nchw-pixel-rows) whose im2col matrix would exceed this "
           "many bytes as one matmul per filter tap over shifted rows of "
           "its input, with no im2col copy (-1: never)">,
    Option<"shiftedMaxFilters", "shifted-max-filters", "int64_t",
           /*default=*/"64",
           "... and which has at most this many filters (more amortize the "
           "im2col copy over more work)">,
    Option<"nchwPixelRows", "nchw-pixel-rows", "bool", /*default=*/"true",
           "Compute an NCHW convolution that needs an im2col copy (not 1x1 "
           "with stride 1) and whose channels are a multiple of 8 as an NHWC "
           "one between transposes (input to NHWC, filter to HWCF, at "
           "compile time when constant, the result back to NCHW, fused into "
           "elementwise consumers): the matmul then has a row per output "
           "pixel and the filter as its right-hand side, which packing "
           "stores as panels (false: the filter is the left-hand side and "
           "the right-hand side an im2col matrix with rows of OH*OW)">,
    Option<"nhwcBetweenConvs", "nhwc-between-convs", "bool", /*default=*/"true",
           "With nchw-pixel-rows: where a pixel-row convolution's input is "
           "the result of another's epilogue (its transpose back taken in, "
           "per-channel constants) that nothing else reads, through a "
           "padding and a max or sum pooling (made an NHWC one) or neither, "
           "the epilogue writes NHWC instead of NCHW into a transpose">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def UnrollWindows : Pass<"mlir-rl-unroll-windows"> {
  let summary = "Rewrite depthwise convolutions and poolings as elementwise "
                "generics over strided views, one per window tap";
  let description = [{
    Step of `mlir-rl-prepare`, after `mlir-rl-conv-to-matmul`. A
    `linalg.depthwise_conv_2d_{nchw_chw,nhwc_hwc}` or
    `linalg.pooling_{nchw,nhwc}_{max,sum}` with static shapes becomes an
    all-parallel `linalg.generic` whose inputs are strided
    `tensor.extract_slice`s of the input (one per window tap) and, for a
    depthwise convolution, the filter's columns, and whose body is the named
    op's body once per tap, in the named op's order. Its accesses are
    projected permutations, so the scheduler tiles and vectorizes it as an
    elementwise op (upstream vectorizes depthwise convolutions only along
    NHWC channels, poolings not at all in NCHW). Windows with more taps than
    one op may have operands become a chain of such generics.
  }];
  let options = [
    Option<"maxTaps", "max-taps", "int64_t", /*default=*/"49",
           "Leave windows of more taps alone">,
    Option<"nhwcDepthwise", "nhwc-depthwise", "bool", /*default=*/"false",
           "Also unroll NHWC depthwise convolutions (by default they stay: "
           "upstream vectorizes them along the channels, and the policy's "
           "schedules of the direct op ran 1.8-2.5x faster than of the "
           "unrolled one)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Bf16Dot : Pass<"mlir-rl-bf16-dot"> {
  let summary = "bf16 matmuls on AVX-512 BF16's dot product";
  let description = [{
    Second step of `mlir-rl-prepare`, on hosts with AVX-512 BF16 (or
    MLIR_RL_BF16_DOT=1; =0 turns it off). A matmul or batch matmul in plain
    form whose f32 operands are bf16 tensors extended (torch-mlir's bf16
    linear layer, and what mlir-rl-compute-in-f32 makes of a bf16 matmul),
    whose accumulator is f32, with K even and N a multiple of 16, becomes a
    micro-kernel of `x86vector.avx512.dot` (vdpbf16ps: each of 16 f32 lanes
    adds two bf16 products, each exact in f32; twice the products of an f32
    FMA; as the instruction does, denormal inputs and results are flushed to
    zero). A constant right-hand side (or a constant's transpose: a linear
    layer's weight) is packed at compile time in VNNI panels
    Bp[j][k/2][i][2] = B[k][j*NB+i] (NB = 32 or 16 columns); another is read
    two rows at a time and interleaved in registers into the same pairs. A
    is read as [M][K/2][2], one pair of bf16 broadcast to all lanes per row.
    Tiles of 8 rows (and one of the remaining rows) by NB columns keep their
    accumulators in registers over the whole reduction, in an scf.forall
    over ((batch,) panel, row tile). What it makes has no linalg op left:
    the decisions and rules do not see it. A constant that cannot be packed
    leaves the matmul as it is, with a remark.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def ComputeInF32 : Pass<"mlir-rl-compute-in-f32"> {
  let summary = "Compute linalg ops on bf16 and f16 data in f32";
  let description = [{
    First step of `mlir-rl-prepare`. Importers keep an op's element type
    for its accumulator: torch-mlir turns a bf16 `aten.mm`, which PyTorch
    accumulates in f32, into a `linalg.matmul` with a bf16 init, and a
    768-term dot product summed in bf16 is off by percents. Every linalg
    op with tensor semantics that computes on bf16 or f16 values is
    rewritten:
    - an init the body reads in an op with reduction loops (an
      accumulator) becomes an f32 tensor (a fill of the extended value
      where it was a fill, else its elements extended), and an
      elementwise op rounds the f32 result to the old type afterwards;
    - the body computes in f32: low-precision inputs are extended once
      where the body starts, constants are f32, conversions between the
      low type and f32 disappear, and the values stored into a
      low-precision init are rounded at the yield.
    A named op that only casts its inputs to the accumulator
    (`linalg.matmul`, `linalg.batch_matmul`, convolutions, poolings) is
    rebuilt as the same named op with an f32 accumulator; another named op
    is generalized. Ops that only move data (copies, transposes,
    broadcasts, fills) and bodies with ops other than arith and math on
    scalars are left alone; the lowering then computes what is left in
    low precision by extending and rounding each operation.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FlattenElementwise : Pass<"mlir-rl-flatten-elementwise"> {
  let summary = "Give elementwise ops rows of whole vector registers";
  let description = [{
    Front end of `linalg-rl-schedule` with the policy and copies by rule.
    An elementwise op (all loops parallel, every operand read and written
    through the identity map, static shapes, tensor semantics, no
    linalg.index) whose innermost extent is not a multiple of the host's
    vector register (16 floats with AVX-512) is vectorized row by row in
    pieces: a 1x512x14x14 add in vectors of 14 (8 + 4 + 2 lanes), 2.1x
    slower than PyTorch. Its data are contiguous, so the op is computed on
    the operands seen as [T / W, W] (collapse_shape, expand_shape), W the
    largest of 4, 2 or 1 registers that divides the T elements; the result
    is reshaped back. The scheduler then gives it the copies' rule
    (parallel rows, whole-register vectors). Ops whose innermost extent is
    already whole registers, element counts no register divides, and ops
    of fewer than 16,384 elements (a call's fixed cost dominates) are left
    alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PadToTiles : Pass<"mlir-rl-pad-to-tiles"> {
  let summary = "Pad the odd extents of contractions and reductions to full "
                "tiles";
  let description = [{
    Last step of `mlir-rl-prepare`, and of the front end of
    `linalg-rl-schedule` with the policy. The scheduler's tile sizes are
    powers of two that must divide their loop, so a loop of 197 iterations
    (ViT's tokens) or 131 can only be tiled by 1, and such an op is scheduled
    far worse than the same op at 192 or 256 (a 197x768x3072 matmul: 79 ms
    against 6.5 ms padded to 256 rows; PyTorch 7.0 ms). An op with a
    reduction of at least 16 iterations, projected-permutation accesses,
    static shapes and an arith/math body (no linalg.index, no integer
    division) is computed on inputs padded with zeros and its results are
    sliced back: each parallel loop of at least 16 iterations that 32 does
    not divide is padded to a multiple of the largest power of two from 64
    down to 8 that costs at most 1/3 more iterations (1/6 where 8 divides it
    already: 24 filters stay 24), and, for a contraction
    (a matmul-like mul-add, to which zeros add nothing), each reduction loop
    of at least 16 that 4 does not divide to a multiple of 8. A
    contraction's rows (its result's second-to-last dimension) of at least
    64 that 32 does not divide are split first: the op becomes two, over
    the rows up to the multiple of 32 below and over the rest, each on
    slices of the inputs (nothing copied) with its own fill where the init
    was a fill, inserted in turn; then a part's columns (its result's last
    dimension, parallel) that would be padded are split the same way (1000
    columns: 992 + 8, the first part in whole packed panels); each part is
    then padded as above (ViT's 197 tokens: 192 + 5 rows, 1.3x faster than
    padded to 224). An all-parallel generic whose rows (its result's last
    dimension, the innermost loop) are wider than 512 and not whole vector
    registers, with no linalg.index, is split the same way, without padding
    (1x512x3199: 3168 + 31 columns). An op is padded
    only where each input it pads is reused at least 16 times (not a
    matrix-vector product or a plain reduction, which would pay a copy of
    the input for nothing). Its init is re-created at the padded size when
    it is a fill, an empty tensor or an elementwise producer used only there
    (a broadcast bias), else padded. A padded op takes the original's
    place; a split one adds an op (the parts' ids follow each other).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def PackRhs : Pass<"mlir-rl-pack-rhs"> {
  let summary = "Store the right-hand side of matmuls as panels";
  let description = [{
    A matmul C[M,N] += A[M,K] * B[K,N] in plain form (a linalg.matmul or a
    generic with the same maps and a multiply-accumulate body) with static
    shapes, whose N the panel width NB divides, becomes a generic over
    (m, j, i, k) that reads B as panels Bp[N/NB, K, NB]
    (Bp[j, k, i] = B[k, j*NB + i]) and writes C through an expand_shape to
    [M, N/NB, NB] (C's layout is unchanged; a collapse_shape gives the
    [M, N] result). A register tile of the packed op then reads its panel
    contiguously over all of K instead of one row of N per reduction step.
    A constant B (a linear layer's weight; also through reshapes, e.g. a
    convolution's filter collapsed to [K, F]) is packed at compile time (a new
    constant); another (an im2col matrix) by a copy, a generic before the
    matmul, when the matmul has at least 128 rows (each element copied is
    then read at least 128 times). NB is two vector registers of the
    target (`panel-width=0`: the host's, 16 f32 on AVX2). The packed op
    takes the matmul's place; a copy is a new op.

    `linalg-rl-schedule` with the policy runs this pass itself (option
    `pack-rhs`) after deciding each matmul's schedule on its plain form,
    and applies the decision to the packed op.
  }];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", /*default=*/"0",
           "Columns per panel (0: two vector registers of the host)">,
    Option<"constantsOnly", "constants-only", "bool", /*default=*/"false",
           "Pack constant right-hand sides only (no copies)">,
    Option<"minRowsToCopy", "min-rows-to-copy", "int64_t", /*default=*/"128",
           "Copy a right-hand side that is not constant into panels when the "
           "matmul has at least this many rows (0: constants only)">,
    ListOption<"skipOps", "skip-ops", "int64_t",
               "Linalg ops (numbered in pre-order under the op the pass "
               "runs on, as linalg-rl-schedule numbers a module's) not to "
               "pack: the matmuls whose decision has no packed form">,
    Option<"fillsInPanels", "fills-in-panels", "bool", /*default=*/"false",
           "Fill an accumulator that is a fill of an empty tensor read by the "
           "matmul only in the packed shape [M, N/NB, NB] (a new fill with "
           "the old one's attributes) instead of reshaping the filled tensor: "
           "the fill is then the packed op's producer, which "
           "linalg-rl-schedule fuses into its tiles">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // MLIR_RL_PASSES
