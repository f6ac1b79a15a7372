//===- Bf16Vectors.cpp - bf16 vectors moved as i16 in LLVM IR ------------===//
//
// mlir-rl-move-bf16-as-i16 (see Passes.td): LLVM 22's x86 instruction
// selection stops ("Do not know how to soft promote this operator's
// operand!") on vectors of 8k + 1 bf16 (9, 17, 33, ...) that are loaded and
// then moved (stored, shuffled, inserted into): a 17x17 bf16 transpose
// aborted the JIT's process. The same moves on i16 are fine, and a move
// does not look at the bits. Every value that only such moves touch (loads,
// stores, masked ones, element and value inserts and extracts, shuffles,
// selects, poison, block arguments of branches) changes its bf16 to i16, as one
// class with the values it moves to and from; where a class meets an op
// that computes on it, an llvm.bitcast converts.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace mlir::rl {
#define GEN_PASS_DEF_MOVEBF16ASI16
#include "mlir-rl/Transforms/Passes.h.inc"
} // namespace mlir::rl

using namespace mlir;

namespace {

/// `t` with bf16 replaced by i16 (scalars, vectors, arrays of them); null
/// where `t` holds no bf16.
Type toI16(Type t) {
  MLIRContext *ctx = t.getContext();
  if (t.isBF16())
    return IntegerType::get(ctx, 16);
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType().isBF16()
               ? v.clone(IntegerType::get(ctx, 16))
               : Type();
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t))
    if (Type inner = toI16(a.getElementType()))
      return LLVM::LLVMArrayType::get(inner, a.getNumElements());
  return {};
}

/// Whether `t` holds a vector of 8k + 1 bf16 (k >= 1): what LLVM fails on.
bool isUnselectable(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getRank() == 1 && !v.isScalable() &&
           v.getElementType().isBF16() && v.getNumElements() > 1 &&
           v.getNumElements() % 8 == 1;
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t))
    return isUnselectable(a.getElementType());
  return false;
}

/// The operands of `op` that it only moves (its results are all moved).
/// Empty where `op` computes.
std::optional<SmallVector<unsigned>> getMovedOperands(Operation *op) {
  if (isa<LLVM::LoadOp, LLVM::PoisonOp, LLVM::UndefOp, LLVM::ZeroOp>(op))
    return SmallVector<unsigned>{};
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return SmallVector<unsigned>{
        store.getValueMutable().getOperandNumber()};
  // Masked ones (a transfer of a partial vector): the value, the elements
  // the masked-off lanes take.
  if (auto load = dyn_cast<LLVM::MaskedLoadOp>(op)) {
    SmallVector<unsigned> moved;
    for (OpOperand &passThru : load.getPassThruMutable())
      moved.push_back(passThru.getOperandNumber());
    return moved;
  }
  if (auto store = dyn_cast<LLVM::MaskedStoreOp>(op))
    return SmallVector<unsigned>{
        store.getValueMutable().getOperandNumber()};
  if (isa<LLVM::ExtractElementOp, LLVM::ExtractValueOp>(op))
    return SmallVector<unsigned>{0};
  if (isa<LLVM::InsertElementOp, LLVM::InsertValueOp,
          LLVM::ShuffleVectorOp>(op))
    return SmallVector<unsigned>{0, 1};
  if (isa<LLVM::SelectOp>(op))
    return SmallVector<unsigned>{1, 2};
  if (isa<LLVM::BrOp, LLVM::CondBrOp>(op)) {
    SmallVector<unsigned> all;
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      all.push_back(i);
    return all; // (a cond_br's condition holds no bf16)
  }
  return std::nullopt;
}

bool isMovedUse(OpOperand &use) {
  std::optional<SmallVector<unsigned>> moved =
      getMovedOperands(use.getOwner());
  return moved && llvm::is_contained(*moved, use.getOperandNumber());
}

/// The block arguments that `op`'s operand `i` (a branch's) goes to.
BlockArgument getSuccessorArgument(Operation *op, unsigned i) {
  auto branch = dyn_cast<BranchOpInterface>(op);
  if (!branch)
    return {};
  for (unsigned s = 0; s < op->getNumSuccessors(); ++s) {
    SuccessorOperands operands = branch.getSuccessorOperands(s);
    OperandRange forwarded = operands.getForwardedOperands();
    if (forwarded.empty())
      continue;
    unsigned begin = forwarded.getBeginOperandIndex();
    if (i >= begin && i < begin + forwarded.size())
      return op->getSuccessor(s)->getArgument(
          operands.getProducedOperandCount() + (i - begin));
  }
  return {};
}

/// Whether `v` is made by a move: a moving op's result, or a block argument
/// that only branches pass (their operands are in its class too).
bool madeByAMove(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Block *block = arg.getOwner();
    return !block->isEntryBlock() &&
           llvm::all_of(block->getPredecessors(), [](Block *p) {
             return isa<LLVM::BrOp, LLVM::CondBrOp>(p->getTerminator());
           });
  }
  return getMovedOperands(v.getDefiningOp()).has_value();
}

struct MoveBf16AsI16Pass
    : public rl::impl::MoveBf16AsI16Base<MoveBf16AsI16Pass> {
  void runOnOperation() override {
    getOperation()->walk([&](LLVM::LLVMFuncOp fn) { runOnFunction(fn); });
  }

  void runOnFunction(LLVM::LLVMFuncOp fn) {
    // Classes of values moved into one another.
    llvm::EquivalenceClasses<Value> classes;
    bool any = false;
    fn.walk([&](Operation *op) {
      std::optional<SmallVector<unsigned>> moved = getMovedOperands(op);
      if (!moved)
        return;
      SmallVector<Value> values;
      for (Value r : op->getResults())
        if (toI16(r.getType()))
          values.push_back(r);
      for (unsigned i : *moved) {
        Value v = op->getOperand(i);
        if (!toI16(v.getType()))
          continue;
        values.push_back(v);
        if (BlockArgument arg = getSuccessorArgument(op, i))
          classes.unionSets(v, arg);
      }
      for (Value v : values) {
        any |= isUnselectable(v.getType());
        classes.unionSets(values.front(), v);
      }
    });
    if (!any)
      return;
    OpBuilder b(fn.getContext());
    for (auto it = classes.begin(); it != classes.end(); ++it) {
      if (!(*it)->isLeader())
        continue;
      SmallVector<Value> members(classes.member_begin(**it),
                                 classes.member_end());
      if (!llvm::any_of(members,
                        [](Value v) { return isUnselectable(v.getType()); }))
        continue;
      // A value made by an op that computes (or a function's argument), or
      // read by one, converts with a bitcast: not an aggregate.
      bool convertible = llvm::all_of(members, [&](Value v) {
        if (!isa<LLVM::LLVMArrayType>(v.getType()))
          return true;
        return madeByAMove(v) &&
               llvm::all_of(v.getUses(), [](OpOperand &u) {
                 return isMovedUse(u);
               });
      });
      if (!convertible)
        continue;
      for (Value v : members) {
        Type from = v.getType(), to = toI16(from);
        if (!madeByAMove(v)) {
          // bf16 made here: moved as i16 from a bitcast after it.
          if (auto arg = dyn_cast<BlockArgument>(v))
            b.setInsertionPointToStart(arg.getOwner());
          else
            b.setInsertionPointAfter(v.getDefiningOp());
          Value cast = LLVM::BitcastOp::create(b, v.getLoc(), to, v);
          v.replaceUsesWithIf(cast, [&](OpOperand &u) {
            return u.getOwner() != cast.getDefiningOp() && isMovedUse(u);
          });
          continue;
        }
        v.setType(to);
        // Where an op computes on it, back to bf16.
        for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
          if (isMovedUse(use))
            continue;
          b.setInsertionPoint(use.getOwner());
          use.set(LLVM::BitcastOp::create(b, v.getLoc(), from, v));
        }
      }
    }
  }
};

} // namespace
