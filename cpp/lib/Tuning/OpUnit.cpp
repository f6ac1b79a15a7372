//===- OpUnit.cpp - One op as a standalone function -----------------------===//
#include "mlir-rl/Tuning/OpUnit.h"
#include "mlir-rl/ActionSpace/Masks.h"
#include "mlir-rl/Transforms/ScheduleBuilder.h"
#include "mlir-rl/Transforms/Scheduler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rl {

std::string hashText(StringRef text, size_t chars) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()),
                        text.size()));
  std::string hex = llvm::toHex(digest, /*LowerCase=*/true);
  return hex.substr(0, std::min(chars, hex.size()));
}

bool isCopiedIntoUnit(Operation *def) {
  if (def->getNumOperands() != 0 || def->getNumRegions() != 0)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  auto constant = dyn_cast<arith::ConstantOp>(def);
  if (!constant)
    return false;
  // Scalars, splats and per-channel vectors (a batch norm's parameters:
  // random values would break what the model relies on, a variance that
  // is not negative, which torch-mlir asserts); not a convolution's or a
  // linear layer's weights (megabytes of hex to hash at every lookup).
  auto elements = dyn_cast<ElementsAttr>(constant.getValue());
  if (!elements)
    return true;
  if (auto dense = dyn_cast<DenseElementsAttr>(elements); dense && dense.isSplat())
    return true;
  return elements.getNumElements() <= 4096;
}

/// The ops that copy `v`'s definition into a unit, operands first: a
/// copied constant, or a static reshape of one (torch-mlir expands a batch
/// norm's per-channel vectors to NCHW); empty when `v` is an argument.
static SmallVector<Operation *> getCopiedChain(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return {};
  if (isCopiedIntoUnit(def))
    return {def};
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) &&
      def->getNumOperands() == 1) {
    SmallVector<Operation *> chain = getCopiedChain(def->getOperand(0));
    if (!chain.empty())
      chain.push_back(def);
    return chain;
  }
  return {};
}

bool isUnitArgumentType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  Type e = tensor.getElementType();
  return e.isF32() || e.isF64() || e.isInteger(32) || e.isInteger(64);
}

FailureOr<OpUnit> extractOpUnit(Scheduler &scheduler, int64_t id,
                                std::string &error) {
  linalg::LinalgOp root = scheduler.lookup(id);
  const OpRecord *rec = scheduler.getRecord(id);
  if (!root || !rec) {
    error = "op " + std::to_string(id) + " is not in the module";
    return failure();
  }
  // A producer that its consumer fused into its tiles: candidates measured
  // on the op alone (TP, TF) would not apply inside the consumer's forall,
  // and a winner that does not apply is not recorded, so every compile
  // would measure it again.
  if (isParallelized(root, rec->state)) {
    error = "it is fused into its consumer's tiles";
    return failure();
  }
  // The members: the op, the producer tiled fusion would fuse, and the
  // fills initialising either.
  llvm::SetVector<Operation *> members;
  members.insert(root);
  if (scheduler.hasFusableProducer(id))
    members.insert(scheduler.lookup(rec->producerId));
  for (Operation *m : SmallVector<Operation *>(members.begin(), members.end()))
    for (Value v : m->getOperands())
      if (auto fill = v.getDefiningOp<linalg::FillOp>())
        members.insert(fill);
  Block *block = root->getBlock();
  for (Operation *m : members)
    if (m->getBlock() != block) {
      error = "the op and its producer are in different blocks";
      return failure();
    }
  SmallVector<Operation *> ordered(members.begin(), members.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });

  // Values from outside: copied definitions, or arguments.
  llvm::SetVector<Value> external;
  for (Operation *m : ordered) {
    for (Value v : m->getOperands())
      if (!members.contains(v.getDefiningOp()))
        external.insert(v);
    llvm::SetVector<Value> above;
    for (Region &r : m->getRegions())
      getUsedValuesDefinedAbove(r, above);
    for (Value v : above)
      if (!members.contains(v.getDefiningOp()))
        external.insert(v);
  }
  SmallVector<Operation *> copied;
  SmallVector<Value> arguments;
  for (Value v : external) {
    SmallVector<Operation *> chain = getCopiedChain(v);
    if (!chain.empty()) {
      for (Operation *def : chain)
        if (!llvm::is_contained(copied, def))
          copied.push_back(def);
      continue;
    }
    if (!isUnitArgumentType(v.getType())) {
      std::string type;
      llvm::raw_string_ostream os(type);
      v.getType().print(os);
      error = "a value of type " + type +
              " would be an argument (only statically shaped tensors of "
              "f32, f64, i32, i64 can be)";
      return failure();
    }
    arguments.push_back(v);
  }
  // Results: the op's, and the other members' that are used elsewhere.
  SmallVector<Value> results(root->getResults().begin(),
                             root->getResults().end());
  for (Operation *m : ordered)
    if (m != root.getOperation())
      for (Value r : m->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) {
              Operation *top = block->findAncestorOpInBlock(*u);
              return !top || !members.contains(top);
            }))
          results.push_back(r);

  MLIRContext *ctx = root->getContext();
  OpUnit unit;
  OpBuilder b(ctx);
  Location loc = UnknownLoc::get(ctx);
  unit.module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(unit.module->getBody());
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : arguments)
    argTypes.push_back(v.getType());
  for (Value v : results)
    resultTypes.push_back(v.getType());
  auto func = func::FuncOp::create(b, loc, kOpUnitFunction,
                                   b.getFunctionType(argTypes, resultTypes));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(arguments, body->getArguments()))
    map.map(v, arg);
  for (Operation *def : copied)
    b.clone(*def, map);
  Operation *rootClone = nullptr;
  for (Operation *m : ordered) {
    Operation *c = b.clone(*m, map);
    if (m == root.getOperation())
      rootClone = c;
  }
  SmallVector<Value> mapped;
  for (Value v : results)
    mapped.push_back(map.lookup(v));
  func::ReturnOp::create(b, loc, mapped);
  unit.module->walk([&](Operation *op) {
    op->removeAttr(kOpIdAttrName);
    op->setLoc(loc);
  });
  int64_t index = 0;
  unit.module->walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    if (op.getOperation() == rootClone)
      unit.rootId = index;
    ++index;
  });
  llvm::raw_string_ostream os(unit.text);
  unit.module->print(os);
  return unit;
}

} // namespace mlir::rl
