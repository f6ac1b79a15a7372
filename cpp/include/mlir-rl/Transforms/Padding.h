//===- Padding.h - Extents padded to full tiles -----------------*- C++ -*-===//
//
// The scheduler's tile sizes are powers of two, and a size must divide its
// loop (legality v3): a loop of 197 iterations can only be tiled by 1 and is
// then scheduled far worse than one of 192 or 256 (a 197x768x3072 matmul ran
// 79 ms against 6.5 ms when padded to 256 rows). mlir-rl-conv-to-matmul pads
// the matmuls it makes; mlir-rl-pad-to-tiles pads other ops, where padding
// pays. Both accept a padded extent by the same rule.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_PADDING_H
#define MLIR_RL_TRANSFORMS_PADDING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>

namespace mlir::rl {

/// Whether computing `padded` iterations instead of `extent` is worth full
/// tiles: at most 1/3 more.
inline bool isPaddingCheapEnough(int64_t padded, int64_t extent) {
  return 3 * (padded - extent) <= extent;
}

/// The leading part of `padded` (a tensor padded at the end of its
/// dimensions) of `type`'s shape: how both passes slice a padded result back.
Value sliceOfPadded(OpBuilder &b, Location loc, Value padded,
                    RankedTensorType type);

/// The loop extents mlir-rl-pad-to-tiles gives `op` (one per loop), or
/// nothing when it leaves `op` alone. It pads ops with a reduction of at
/// least 16 iterations whose indexing maps are projected permutations, with
/// static shapes, tensor semantics and an arith/math body without
/// linalg.index or integer division (the padded iterations compute on
/// zeros): each parallel loop of 16 or more iterations that 32 does not
/// divide, to a multiple of the largest power of two from 64 down to 8 that
/// is cheap enough (isPaddingCheapEnough; at most 1/6 more where 8 divides
/// the loop already; a contraction's rows, its
/// result's second-to-last dimension, to a multiple of 64 or 32 that costs
/// at most 1/6 more first), and for a contraction (zeros add
/// nothing) each reduction loop of 16 or more that 4 (a plain register
/// tile's deepest step) does not divide, to a multiple of 8. Only where every input it pads is reused at least 16
/// times (a matrix-vector product or a plain reduction would pay a copy of
/// its input for nothing).
std::optional<SmallVector<int64_t>> getTilePadding(linalg::LinalgOp op);

/// Where mlir-rl-pad-to-tiles splits `op` before padding it: (the loop
/// of a contraction's rows, the end of the first part) when the op would
/// be padded by its accesses (getTilePadding's conditions but the body),
/// has one init, and its rows, at least 64, are not a multiple of 32; the
/// first part takes the multiple of 32 below them. The first part then
/// needs no padding of its rows, the second (under 32 rows) none either:
/// nothing is copied and no padded row is computed. A 12x197x196x128
/// batch matmul ran 1.3x faster as 192 + 5 rows than padded to 224
/// (AVX2, 2026-11-29). Each part is then padded as getTilePadding says.
std::optional<std::pair<unsigned, int64_t>> getRowSplit(linalg::LinalgOp op);

/// Where mlir-rl-pad-to-tiles splits `op`'s columns (its result's last
/// dimension, a parallel loop) instead of padding them: as getRowSplit
/// does rows, where getTilePadding would pad the columns. The first part
/// then takes the matmul's packed panels whole; padding a 192x1000x128
/// matmul's columns to 1024 also copied its 192x1000 result out of the
/// padded one.
std::optional<std::pair<unsigned, int64_t>>
getColumnSplit(linalg::LinalgOp op);

/// Where mlir-rl-pad-to-tiles splits the rows of an all-parallel generic
/// (an epilogue, a normalization's scaling, an activation) that are too
/// wide for one vector tile (the default legality's maxVectorInnermost)
/// and that no vector register divides: (its innermost loop, the multiple
/// of 32 below its extent), where that loop is its result's last
/// dimension. No tile divides such a row but 1 (wav2vec2's 1x512x3199
/// group norm and GELU): vectors then ran across rows, one strided element
/// per row; the first part takes whole vectors, the second (under 32 wide)
/// partial ones.
std::optional<std::pair<unsigned, int64_t>>
getWideRowSplit(linalg::LinalgOp op);

/// The split mlir-rl-pad-to-tiles makes of `op` first: its rows'
/// (getRowSplit), else its columns' (getColumnSplit), else its wide rows'
/// (getWideRowSplit).
std::optional<std::pair<unsigned, int64_t>> getSplit(linalg::LinalgOp op);

/// Whether `module` has an op that getSplit splits or getTilePadding
/// pads.
bool hasOpsToPad(ModuleOp module);

/// Whether `op` is elementwise over contiguous data: a linalg op with
/// tensor semantics and static shapes, all loops
/// parallel, every operand through the identity map, one result, no
/// linalg.index, and no input a slice (possibly reshaped): a slice's rows
/// need not be contiguous (a rewritten pooling's strided views).
bool isElementwiseOverWholeTensors(linalg::LinalgOp op);

/// The shape [rows, width] mlir-rl-flatten-elementwise computes `op` in, or
/// nothing when it leaves `op` alone: an op elementwise over contiguous
/// data (isElementwiseOverWholeTensors) of at least two loops whose
/// innermost extent is not a
/// multiple of the host's vector register (the default legality config),
/// with width the largest of 4, 2 or 1 registers that divides its element
/// count (rows at least 2), and at least 16,384 elements.
std::optional<std::pair<int64_t, int64_t>>
getElementwiseFlattening(linalg::LinalgOp op);

/// Whether `module` has an op that getElementwiseFlattening flattens.
bool hasOpsToFlatten(ModuleOp module);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_PADDING_H
