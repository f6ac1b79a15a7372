//===- Packing.h - Right-hand sides of matmuls packed into panels -*- C++ -*-===//
//
// A matmul C[M,N] += A[M,K] * B[K,N] reads B one row of N per step of its
// reduction: a register tile of 16 columns touches a new cache line, and for
// N of a few thousand a new page, at every k. B stored as panels
// Bp[N/NB, K, NB] (NB = two vector registers of the target) lets a register
// tile stream its panel contiguously over all of K. A constant B (the
// weight of a linear layer) is packed at compile time; another (an im2col
// matrix) by a copy at run time, where the matmul reads each element often
// enough to pay for it. The matmul becomes a
// generic over (m, j, i, k) with A(m, k), Bp(j, k, i) and C viewed as
// [M, N/NB, NB] (an expand_shape: C's layout does not change). On AVX2 a
// 512x4608x896 matmul ran 2.4-3.4x faster packed, BERT's 256x768x3072 FFN
// 2.9x (measured 2026-11-26).
//
// The policy was trained on plain matmuls and schedules the packed form
// badly, so linalg-rl-schedule decides on the plain op and applies the
// decision to the packed one (translatePackedSchedule): the tile size of
// n becomes one of panels j (the panel's NB columns stay whole), and the
// reduction is tiled inside a register tile, so that the accumulator stays
// in registers over all of K.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_TRANSFORMS_PACKING_H
#define MLIR_RL_TRANSFORMS_PACKING_H

#include "mlir-rl/Analysis/Preconditions.h"
#include "mlir-rl/Support/Action.h"
#include "mlir-rl/Transforms/Scheduler.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace mlir::rl {

/// The elements of a row-major tensor of `shape` (elements of `bytes` bytes
/// each), transposed: result dim i is input dim perm[i].
std::vector<char> transposeBytes(ArrayRef<char> in, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> perm, size_t bytes);

/// The value of a constant (`value`: dense or dense_resource elements of
/// `shape`'s size) with its elements transposed as transposeBytes does,
/// as an attribute of `outType` (a resource gets the key of the input with
/// `keySuffix`); null when the value is neither, holds elements that are
/// not whole bytes, or is over 256 MiB.
TypedAttr transposeConstant(Attribute value, ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> perm, RankedTensorType outType,
                            StringRef keySuffix);

/// The `outType`-sized run of a constant's elements (dense or
/// dense_resource, row-major) that starts at element `offset`, as an
/// attribute of `outType` (a resource gets the input's key with
/// `keySuffix`); null where transposeConstant's would be.
TypedAttr sliceConstant(Attribute value, int64_t offset,
                        RankedTensorType outType, StringRef keySuffix);

/// A bf16 or f16 constant's elements extended to f32 (`outType`'s element
/// type; exact), a resource with the input's key and `keySuffix`; null
/// where transposeConstant's would be, or for other types.
TypedAttr extendConstant(Attribute value, RankedTensorType outType,
                         StringRef keySuffix);

/// Columns in a panel for elements of `elementType`: two vector registers
/// of `legality`'s register file (16 f32 on AVX2, 32 on AVX-512); 0 when
/// the register file is unknown.
int64_t getPanelWidth(Type elementType, const LegalityConfig &legality);

/// A right-hand side that is not a constant is packed by a copy at run
/// time when the matmul has at least this many rows (each element of the
/// panels is then read that many times).
inline constexpr int64_t kDefaultMinRowsToCopy = 128;

/// A packed matmul's parallel tiling into at least this many tiles of
/// columns keeps its rows whole (translatePackedSchedule's `panelTiles`),
/// where its B holds at least kMinPanelTileBytes (a B that stays in a
/// core's L2 is read from there again for each tile of rows anyway, and
/// fewer tiles balance worse: EfficientNet-B0's 1x1 convolutions ran
/// 1.12x slower with their rows whole).
inline constexpr int64_t kMinPanelTiles = 8;
inline constexpr int64_t kMinPanelTileBytes = int64_t(2) << 20;

/// The extents (M, N, K) of `op` when it is a matmul in plain form (loops
/// m, n, k; A(m, k), B(k, n), C(m, n); a contraction) with static shapes,
/// tensor semantics, one init and integer or float elements of whole bytes.
std::optional<std::array<int64_t, 3>> getPlainMatmulExtents(linalg::LinalgOp op);

/// The extents of a matmul that translateRegisterTile handles: (M, N, K) of
/// a plain matmul (getPlainMatmulExtents), (B, M, N, K) of a batch matmul
/// in plain form (loops b, m, n, k; A(b, m, k), B(b, k, n), C(b, m, n),
/// the same conditions otherwise); else nothing.
std::optional<std::vector<int64_t>> getRegisterTileExtents(linalg::LinalgOp op);

/// The extents (M, N, K) of `op` when mlir-rl-pack-rhs packs it: a plain
/// matmul (getPlainMatmulExtents) with N a multiple of `panelWidth` (> 0),
/// whose B is an arith.constant (dense or dense_resource), or which has at
/// least `minRowsToCopy` (> 0) rows. Else nothing.
std::optional<std::array<int64_t, 3>>
getRhsPacking(linalg::LinalgOp op, int64_t panelWidth, int64_t minRowsToCopy);

/// Rewrites `op` (getRhsPacking holds) into the packed generic, which takes
/// its place (its attributes kept), and returns it. A constant B is packed
/// at compile time (a new constant), another by a copy, a generic before
/// the packed op. With `fillsInPanels`, an accumulator that is a fill of an
/// empty tensor read by `op` only is filled in the packed shape (the new
/// fill keeps the old one's attributes, its op id) rather than reshaped.
FailureOr<linalg::GenericOp> packRhs(RewriterBase &rewriter,
                                     linalg::LinalgOp op, int64_t panelWidth,
                                     int64_t minRowsToCopy,
                                     bool fillsInPanels = false);

/// The packed op's schedule for `plain` (decided on the plain op of extents
/// `mnk`): tile sizes (m, n, k) become (m, j, i, k), n = s as j = s/NB
/// (i whole) when NB divides s, as j = 1, i = s when s divides NB; the
/// tiling before V keeps its sizes of m and j, and a register tile
/// T(r, 1, 0, kr) follows it (r rows of two vectors within
/// `legality`'s accumulator budget, kr the plain schedule's k tile, else 8, at most 8),
/// so that the accumulator stays in registers over the reduction (where
/// the tiling before V splits the panel, the tile before that tiling
/// takes the register tile). Nothing when a step has no
/// packed equivalent (TF, interchange, a size of n that neither divides
/// nor is divided by NB, a panel split with no tile before, too long a
/// schedule). `maxRows`: the register
/// tile's rows at most (the `rt` rule choice; at least 1). With
/// `panelTiles` (the `pt` rule choice), a parallel tiling (TP, TF) that
/// splits the columns into at least kMinPanelTiles tiles, of a B of at
/// least kMinPanelTileBytes, leaves the rows whole: each tile then reads
/// its panels of B once, for every row, and A again from cache, where a
/// tile of 32 rows read all of B once per 32 rows.
std::optional<std::vector<Action>>
translatePackedSchedule(const std::vector<Action> &plain,
                        std::array<int64_t, 3> mnk, int64_t panelWidth,
                        int64_t elementBits, const LegalityConfig &legality,
                        int historyLength, int64_t maxRows = INT64_MAX,
                        bool panelTiles = true);

/// A plain matmul's schedule (decided on the op of `extents`, (M, N, K)
/// or a batch matmul's (B, M, N, K): getRegisterTileExtents) with the same
/// register tile as translatePackedSchedule's, for a matmul that is not
/// packed: the tiling before V keeps its sizes of (b,) m and n and leaves
/// k whole, and T((1,) r, c, kr) follows it (one batch, c: two vectors of
/// columns, else one, r rows within the accumulator budget, kr the plain
/// schedule's k tile, else 8, at most 4, or the largest power of two below it that
/// divides K; where r is every row of the tile, c doubles while the
/// accumulators fit). When that tiling (a T) leaves fewer columns than a vector,
/// the register tile of the tile before it replaces it. The policy's own
/// inner tiling often exceeds the register file (T(8,32,8): 32
/// accumulators), leaves a vector half empty (T(1,8,8,32) with 16 lanes)
/// or puts the reduction outside V's sub-tiles, so that accumulators go to
/// memory at every step of k. Nothing when the schedule has no V, the
/// result would not change anything, or `maxRows` (the register tile's
/// rows at most: the `rt` rule choice) is 0. A schedule without TP or TF
/// of an op of 2M multiply-adds or more, or of 512 KB of inputs, gets its
/// first tiling as a TP where that leaves the reduction whole, also where
/// no register tile is given (a step has no equivalent, an interchange;
/// the columns are not a multiple of a vector; too long a schedule); a
/// TF stays (the same op's loops); with no more rows than the accumulator
/// budget, the rows stay whole in every tiling that tiles another loop.
std::optional<std::vector<Action>>
translateRegisterTile(const std::vector<Action> &plain,
                      const std::vector<int64_t> &extents, int64_t elementBits,
                      const LegalityConfig &legality, int historyLength,
                      int64_t maxRows = INT64_MAX);

/// A matmul that mlir-rl-pack-rhs packs.
struct PackCandidate {
  linalg::LinalgOp op;
  std::array<int64_t, 3> mnk;
  int64_t panelWidth;
  int64_t elementBits;
};
/// The matmuls under `root` that mlir-rl-pack-rhs packs, by op id (the
/// linalg ops in pre-order, as the Scheduler numbers them); `panelWidth`
/// 0: the default legality config's (getPanelWidth).
std::map<int64_t, PackCandidate> getPackCandidates(Operation *root,
                                                   int64_t minRowsToCopy,
                                                   int64_t panelWidth = 0);

/// The pass step that packs (the replay script's prelude) with the
/// threshold `minRowsToCopy` (0: constants only), `fillsInPanels`, and
/// the candidates it leaves plain (`skipOps`, module-wide op ids).
PassStep getPackRhsStep(int64_t minRowsToCopy, bool fillsInPanels = false,
                        ArrayRef<int64_t> skipOps = {});

/// Elements of `elementType` in one vector register of `legality`'s
/// register file; 0 when it is unknown or does not hold whole elements.
int64_t getVectorLanes(Type elementType, const LegalityConfig &legality);

/// `v` below the reshapes that produce it (they keep the elements' order).
Value skipReshapes(Value v);

/// A copy's schedule by rule (no decision of the policy): `op` is a
/// static all-parallel generic that yields its one input, written through
/// the identity map, whose innermost loop is also innermost in the input
/// (contiguous rows on both sides: the im2col copies of convolutions, the
/// copies of B into panels) and holds whole vector registers of elements
/// of whole bytes (`legality`'s register file). TP over the outer loops
/// into at least 8 iterations, then a vector tile of about 128 elements
/// along the rows (whole rows up to the innermost limit), then V. The
/// policy gave the im2col copies 4-wide vectors in thousands of iterations
/// (TP(4,4,1,0,4) on 56x56x1x1x64); by rule that 3x3 NHWC convolution ran
/// 12-20 % faster (measured 2026-11-27). A linalg.fill of at
/// least two loops whose rows hold at least one vector gets the same
/// schedule (its rows need not be whole vectors): the policy left the
/// fills of padded inputs serial with 2-wide vectors (T(1,1,1,2) V on
/// 1x144x58x58), which LLVM made a serial memset; by rule MobileNetV2 ran
/// 7 % faster, VGG-11 10 % (measured 2026-11-27). So does an
/// elementwise generic whose operands all go through the identity map
/// (mlir-rl-flatten-elementwise gives such ops whole-register rows: a
/// 1x512x14x14 add ran 1.5x faster, measured 2026-11-28). So does a row
/// op (CopyRules.cpp: a reduction along the innermost loop, or an op over
/// rows that reads a per-row value, as imported softmax and norms are),
/// rows longer than 128 in vector pieces of 64 (an imported 512x1024
/// softmax ran 5x faster, measured 2026-11-29). None when `op` is none of
/// these or no tiling fits `legality` and `layout`'s candidates.
std::optional<std::vector<Action>>
getCopySchedule(linalg::LinalgOp op, const LegalityConfig &legality,
                const FeatureLayout &layout);

struct Rescheduling;

/// The rule choices (RuleChoices.def) `op` offers under `opts`, before any
/// decision: `pack` where mlir-rl-pack-rhs packs it; `rt` where a register
/// tile is given (powers of two up to the accumulator budget's rows; 0,
/// none, only for a matmul that is not packed by default: a packed one's
/// schedule needs one); `pt` where its B holds kMinPanelTileBytes or
/// more in at least kMinPanelTiles panels (translatePackedSchedule's
/// `panelTiles`); `rule` where getCopySchedule has a schedule;
/// `fuse` for a fill that only initialises its consumer's accumulator.
/// Each list ends with the rule's default.
RuleChoiceMask getRuleChoiceMask(linalg::LinalgOp op, const Rescheduling &opts,
                                 const LegalityConfig &legality,
                                 const FeatureLayout &layout);

/// What reschedule does after the policy's decisions.
struct Rescheduling {
  /// Pack right-hand sides (mlir-rl-pack-rhs), non-constant ones for
  /// matmuls of at least `minRowsToCopy` rows (0: constants only).
  bool pack = true;
  int64_t minRowsToCopy = kDefaultMinRowsToCopy;
  /// Give matmuls and batch matmuls that stay plain a register tile
  /// (translateRegisterTile).
  bool registerTiles = true;
  /// Schedule copies by rule (getCopySchedule) instead of by their
  /// decision: those of the module that no consumer fused and whose
  /// decision fused no producer, and the copies of B. A fill that only
  /// initialises a consumer's accumulator goes into that consumer's tiles
  /// instead (its TP becomes a TF of the same sizes; the fill is then
  /// vectorized in the tile), a packed matmul's filled in the panels' shape.
  bool copies = true;
};
// (Each op's choices -- OpRecord::choices, set by a decision source within
// getRuleChoiceMask -- override these defaults for that op.)

/// Whether `root` has a matmul that reschedule would pack or
/// register-tile (before any decision: a plain matmul is a candidate), or
/// a copy it would schedule by rule.
bool hasOpsToReschedule(Operation *root, const Rescheduling &opts);

/// After `plain` has scheduled a module with the policy, schedules
/// `unscheduled` (that module as `plain` took it) again: each op by
/// `plain`'s decision, translated for the packed matmuls (their right-hand
/// sides packed, when `opts.pack`) and for plain matmuls given a register
/// tile (when `opts.registerTiles`); the copies of non-constant right-hand
/// sides by `policy`; with `opts.copies`, copies by rule (getCopySchedule;
/// should the rule's schedules not apply, the module is scheduled again
/// without them). On success `unscheduled` holds the scheduled IR and
/// the returned scheduler (on it; its prelude: `plain`'s and, when any
/// matmul was packed, the packing step) records the schedule; `packed`
/// counts the packed matmuls, `tiled` the register-tiled plain ones,
/// `copied` the copies and fills scheduled by rule. An op whose schedule
/// by the rules does not apply is scheduled as decided instead, the others
/// keeping theirs (each such op's id and why in `dropped`). Null when
/// there is nothing to change, or the result does not apply without the
/// copies' rules either (`why` says which; `unscheduled` is then left
/// unspecified).
std::unique_ptr<Scheduler>
reschedule(Scheduler &plain, ModuleOp unscheduled, PolicyFn policy,
           const Rescheduling &opts, VerifyScope verifyScope,
           int64_t &packed, int64_t &tiled, int64_t &copied, std::string &why,
           std::vector<std::string> *dropped = nullptr);

} // namespace mlir::rl

#endif // MLIR_RL_TRANSFORMS_PACKING_H
