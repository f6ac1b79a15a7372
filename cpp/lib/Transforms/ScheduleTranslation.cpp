//===- ScheduleTranslation.cpp - Plain matmul schedules translated --------===//
//
// A plain matmul's schedule, as the policy decided it on the plain op,
// carried over to the packed op (translatePackedSchedule) or given a
// register tile (translateRegisterTile); both walk the schedule the same
// way (translateTilings). See Packing.h.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace mlir::rl {

namespace {

/// Rows of a register tile: all `rows` where their accumulators
/// (`vectorsPerRow` each) fit in `budget` (the 5 rows left of 197 by a
/// split: 5 accumulators, not 1), else the largest power of two dividing
/// `rows` whose accumulators fit.
int64_t getRegisterTileRows(int64_t rows, int64_t vectorsPerRow,
                            int64_t budget) {
  if (rows * vectorsPerRow <= budget)
    return rows;
  int64_t r = 1;
  while (2 * r * vectorsPerRow <= budget && rows % (2 * r) == 0)
    r *= 2;
  return r;
}

/// The deepest reduction step of a plain matmul's register tile (a packed
/// one's: 8, or 4 where 8 would not fit the registers). On AVX2
/// (2026-11-29), steps of 4 against 8: a 4x64x256x128 batch matmul (4x16
/// tiles) 1.10x faster, 1x1024x1024, 2x768x3072 and
/// 4x1024x1024 matmuls 1.4x, 1.3x and 1.7x; against the policy's 32,
/// 1.25-1.5x. A packed 3136x2304x256 matmul ran the same at 4 and 8.
constexpr int64_t kMaxPlainTileDepth = 4;

/// The reduction step of a register tile of `tilePoints` accumulators:
/// the plain schedule's last k tile (loop `kLoop` of its tilings), else 8,
/// at most `most`; halved until it divides `extent` and the tile's
/// iteration space fits `legality`'s vector limit.
int64_t getRegisterTileDepth(const std::vector<Action> &plain, size_t kLoop,
                             int64_t extent, int64_t tilePoints,
                             const LegalityConfig &legality,
                             int64_t most = 8) {
  int64_t kr = 8;
  for (const Action &q : plain)
    if (q.isTiled() && q.sizes.size() > kLoop && q.sizes[kLoop] != 0)
      kr = q.sizes[kLoop];
  kr = std::min(kr, most);
  while (kr > 1 && (extent % kr != 0 ||
                    kr * tilePoints > legality.maxVectorElements))
    kr /= 2;
  return std::max<int64_t>(kr, 1);
}

using Sizes = std::vector<int64_t>;

/// The walk both translations share: a plain matmul schedule's steps on
/// loops (m, n, k) carried over to the target op's loops, starting at
/// `extent`. NT stays; interchange has no equivalent, nor TF unless
/// `withFusion` (the same op's loops: a TF maps as a TP does). A tiling
/// becomes the tilings `mapSizes(it, extents before it)` gives (nothing:
/// no equivalent); the tiling right before V leaves the reduction (target
/// loop `kLoop`) whole, and each V gets the tilings of
/// `registerTile(extents as the tilings leave them)` before it (nothing:
/// no equivalent; all zeros: V as it is). When that tiling is
/// a T whose tile has no register tile (its columns less than a vector:
/// the policy's T(1,8,8,32) on AVX-512), or one of a single vector of
/// columns where the extents before it hold two (`wide`: the policy's
/// T(1,8,8,32) on AVX2), the register tile of the extents before it takes
/// its place: an 8x8 tile ran a 4x64x256x128 batch matmul 1.08x slower,
/// a 12x384x384x64 one 1.12x slower than 4x16 (AVX2, 2026-11-29), each
/// with 8 accumulators, 9 loads a step against 6. Nothing when the result
/// is longer than `historyLength`.
std::optional<std::vector<Action>> translateTilings(
    const std::vector<Action> &plain, Sizes extent, size_t kLoop,
    llvm::function_ref<std::optional<std::vector<Sizes>>(
        const Action &, const Sizes &)>
        mapSizes,
    llvm::function_ref<std::optional<std::vector<Sizes>>(const Sizes &,
                                                          bool wide)>
        registerTile,
    int historyLength, bool withFusion = false) {
  auto anyTiled = [](const Sizes &sizes) {
    return llvm::any_of(sizes, [](int64_t s) { return s != 0; });
  };
  std::vector<Action> out;
  // The extents before the last T right before V, and how many tilings
  // it left in `out` (a T that tiles nothing leaves none).
  std::optional<std::pair<Sizes, size_t>> beforeLastT;
  for (size_t a = 0; a < plain.size(); ++a) {
    const Action &p = plain[a];
    if (p.kind != ActionKind::Vectorization)
      beforeLastT.reset();
    switch (p.kind) {
    case ActionKind::NoTransformation:
      out.push_back(p);
      continue;
    case ActionKind::Interchange:
      return std::nullopt;
    case ActionKind::TiledFusion:
      if (!withFusion)
        return std::nullopt;
      [[fallthrough]];
    case ActionKind::Tiling:
    case ActionKind::TiledParallelization: {
      std::optional<std::vector<Sizes>> mapped = mapSizes(p, extent);
      if (!mapped || mapped->empty())
        return std::nullopt;
      bool beforeV = a + 1 < plain.size() &&
                     plain[a + 1].kind == ActionKind::Vectorization;
      if (beforeV && p.kind == ActionKind::Tiling)
        beforeLastT = {extent, 0};
      for (size_t i = 0; i < mapped->size(); ++i) {
        Action t{p.kind, (*mapped)[i]};
        if (t.sizes.size() != extent.size())
          return std::nullopt;
        if (beforeLastT && i + 1 == mapped->size())
          t.sizes[kLoop] = 0;
        if (anyTiled(t.sizes)) {
          out.push_back(t);
          if (beforeLastT)
            ++beforeLastT->second;
        }
        for (size_t l = 0; l < extent.size(); ++l)
          if (t.sizes[l] != 0)
            extent[l] = t.sizes[l];
      }
      continue;
    }
    case ActionKind::Vectorization: {
      std::optional<std::vector<Sizes>> reg =
          registerTile(extent, /*wide=*/beforeLastT.has_value());
      if (!reg && beforeLastT) {
        // The extents before that T with two vectors of columns, else
        // that T's with one, else the extents before it with one.
        std::optional<std::vector<Sizes>> outer =
            registerTile(beforeLastT->first, /*wide=*/true);
        if (!outer) {
          reg = registerTile(extent, /*wide=*/false);
          if (!reg)
            outer = registerTile(beforeLastT->first, /*wide=*/false);
        }
        if (outer) {
          extent = beforeLastT->first;
          out.resize(out.size() - beforeLastT->second);
          reg = std::move(outer);
        }
      }
      if (!reg)
        return std::nullopt;
      for (const Sizes &tile : *reg)
        if (anyTiled(tile))
          out.push_back(Action{ActionKind::Tiling, tile});
      out.push_back(p);
      continue;
    }
    }
  }
  if ((int)out.size() > historyLength)
    return std::nullopt;
  return out;
}

/// A contraction of at least this many multiply-accumulates runs on more
/// than one thread: about 20 us on one core of the hosts measured, more
/// than a parallel region costs.
constexpr int64_t kMinParallelMacs = int64_t(1) << 21;

/// A matmul whose inputs hold at least this many bytes runs on more than
/// one thread whatever its multiply-accumulates: a 1x1000x512 one (512 K
/// of them) streams a 2 MB B, 0.092 ms on one core, 0.046 on two (AVX2,
/// 2026-11-29).
constexpr int64_t kMinParallelBytes = int64_t(1) << 19;

/// When `schedule` runs nothing in parallel (no TP, no TF) and the op's
/// loops (`extents`: (b,) m, n, k, the reduction `kLoop`) hold at least
/// kMinParallelMacs iterations or its inputs kMinParallelBytes (elements
/// of `elementBits`), its first tiling becomes a TP where it leaves the
/// reduction whole and gives at least two tiles: the policy's T(2,64,0) on
/// a 2x3072x1000 matmul left one of two cores idle while the other streamed
/// the 12 MB B alone (0.65-1.5 ms; TP(2,64,0): 0.44-0.53 ms).
void parallelizeFirstTiling(std::vector<Action> &schedule,
                            const Sizes &extents, size_t kLoop,
                            int64_t elementBits) {
  size_t m = extents.size() - 3, n = m + 1;
  int64_t batch = m == 1 ? extents[0] : 1;
  int64_t inputBytes = batch * extents[kLoop] * (extents[m] + extents[n]) *
                       elementBits / 8;
  if ((computeProduct(extents) < kMinParallelMacs &&
       inputBytes < kMinParallelBytes) ||
      llvm::any_of(schedule, [](const Action &a) {
        return a.kind == ActionKind::TiledParallelization ||
               a.kind == ActionKind::TiledFusion;
      }))
    return;
  for (Action &a : schedule) {
    if (a.kind != ActionKind::Tiling)
      continue;
    if (a.sizes.size() != extents.size() || a.sizes[kLoop] != 0)
      return;
    int64_t tiles = 1;
    for (size_t l = 0; l < extents.size(); ++l)
      if (a.sizes[l] != 0)
        tiles *= extents[l] / a.sizes[l];
    if (tiles >= 2)
      a.kind = ActionKind::TiledParallelization;
    return;
  }
}

} // namespace

std::optional<std::vector<Action>>
translateRegisterTile(const std::vector<Action> &plain,
                      const std::vector<int64_t> &extents, int64_t elementBits,
                      const LegalityConfig &legality, int historyLength,
                      int64_t maxRows) {
  if ((extents.size() != 3 && extents.size() != 4) || elementBits <= 0 ||
      legality.vectorRegisterBits <= 0 ||
      llvm::none_of(plain, [](const Action &a) {
        return a.kind == ActionKind::Vectorization;
      }))
    return std::nullopt;
  // Loops (b,) m, n, k.
  const size_t m = extents.size() - 3, n = m + 1, k = m + 2;
  int64_t lanes = std::max<int64_t>(1, legality.vectorRegisterBits / elementBits);
  int64_t budget = getAccumulatorRegisterBudget(legality);
  if (maxRows < 1)
    return std::nullopt;
  // A thin matmul (no more rows than accumulators: a linear layer of a
  // few tokens) keeps its rows whole in every tiling that tiles another
  // loop too, so that each column of B is read once for all of them: the
  // policy's TF(1,32,0) T(1,32,8) ran a 4x1024x1024 matmul 3x slower than
  // TF(0,32,0) with a 4x16 register tile (AVX2, 2026-11-29).
  bool thin = extents[m] <= budget;
  auto same = [&](const Action &p,
                  const Sizes &before) -> std::optional<std::vector<Sizes>> {
    if (p.sizes.size() != extents.size())
      return std::nullopt;
    Sizes sizes = p.sizes;
    if (thin && sizes[m] != 0 &&
        llvm::any_of(llvm::seq<size_t>(0, sizes.size()),
                     [&](size_t l) { return l != m && sizes[l] != 0; }))
      sizes[m] = 0;
    // A parallel tile narrower than a vector of columns, which no register
    // tile fits in, takes one vector: the policy's TF(0,4,0) V on the 5
    // rows left of a 197x1000x128 matmul (split 192 + 5) computed 5x4x128
    // products and reduced them across lanes (a T gives way to the
    // register tile of the extents before it instead, translateTilings).
    if (p.kind != ActionKind::Tiling && sizes[n] != 0 && sizes[n] < lanes &&
        before[n] % lanes == 0)
      sizes[n] = lanes;
    return std::vector<Sizes>{sizes};
  };
  // The register tile's accumulators also within the vectorizer's row
  // limit: its iteration space is rows x columns x k, k innermost, so V
  // counts rows x columns vector rows (16 registers of 16 lanes make 256).
  // The 5 rows of a split 197-row batch matmul grown to 5x64 on AVX-512
  // (20 accumulators, 320 rows) were refused by V, and with them every
  // rule of ViT's block.
  int64_t tileBudget =
      std::min(budget, std::max<int64_t>(1, legality.maxVectorRows / lanes));
  // One batch, rows of two vectors of columns, else one (not `wide`).
  auto registerTile = [&](const Sizes &extent,
                          bool wide) -> std::optional<std::vector<Sizes>> {
    int64_t vectors = extent[n] % (2 * lanes) == 0 ? 2
                      : extent[n] % lanes == 0     ? 1
                                                   : 0;
    if (vectors == 0 || (wide && vectors < 2))
      return std::nullopt;
    int64_t r = getRegisterTileRows(
        extent[m], vectors,
        maxRows >= tileBudget ? tileBudget
                              : std::min(tileBudget, maxRows * vectors));
    // Every row of the tile in the register tile (a thin matmul, or the
    // policy's tile of few rows): more columns instead, while their
    // accumulators fit. 2x16 with 4 accumulators left a 2x3072x1000
    // matmul latency-bound; 2x32 ran it 1.4-2x faster (AVX2, 2026-11-29).
    while (r == extent[m] && r * vectors * 2 <= tileBudget &&
           extent[n] % (2 * vectors * lanes) == 0)
      vectors *= 2;
    // The deepest step, whatever the policy's k tile: its 2 on a
    // 12x192x196x128 batch matmul (K = 196 masks 8) ran 1.38x slower than
    // 4 (AVX2, 2026-11-29).
    int64_t kr = getRegisterTileDepth({}, k, extent[k], r * vectors * lanes,
                                      legality, kMaxPlainTileDepth);
    Sizes tile(extents.size(), 0);
    if (m == 1 && extent[0] > 1)
      tile[0] = 1;
    tile[m] = r < extent[m] ? r : 0;
    tile[n] = vectors * lanes < extent[n] ? vectors * lanes : 0;
    tile[k] = kr < extent[k] ? kr : 0;
    return std::vector<Sizes>{tile};
  };
  std::optional<std::vector<Action>> out =
      translateTilings(plain, extents, /*kLoop=*/k, same, registerTile,
                       historyLength, /*withFusion=*/true);
  // In parallel whether or not a register tile fits: the policy's
  // T(0,8,0) T(0,0,4) V on a 1x1000x512 gemv has no register tile with 16
  // lanes (AVX-512: 8 columns, and 1000 is no multiple of 16), and it ran
  // on one core.
  std::vector<Action> result = out ? std::move(*out) : plain;
  parallelizeFirstTiling(result, extents, k, elementBits);
  if (result == plain)
    return std::nullopt;
  return result;
}

std::optional<std::vector<Action>>
translatePackedSchedule(const std::vector<Action> &plain,
                        std::array<int64_t, 3> mnk, int64_t panelWidth,
                        int64_t elementBits, const LegalityConfig &legality,
                        int historyLength, int64_t maxRows,
                        bool panelTiles) {
  const int64_t NB = panelWidth;
  if (maxRows < 1 || NB <= 0 || elementBits <= 0 || legality.vectorRegisterBits <= 0)
    return std::nullopt;
  // Panel tiles: the parallel tiling of columns into enough tiles keeps
  // every row, so that each tile streams its panels of B once (A, read
  // again for each tile, is the smaller operand and stays in cache). Its
  // TF(32,2,0,0) read B once per 32 rows; as TF(0,2,0,0), on an AVX-512
  // host (2 threads, 2026-12-01, median over alternating rounds; biases
  // added apart): BERT/GPT-2's 128x768x3072 1.30x, 128x3072x768 with a
  // parallel bias 1.36x, ViT's 192x2304x768 1.20x, 384x768x768 1.13x, a
  // 784x512x1152 convolution's matmul 1.13x, 196x512x4608 1.04x; BERT's
  // layer 1.20x, GPT-2's block 1.20x, Llama's 1.23x, ViT's 1.14x.
  const std::vector<Action> *decided = &plain;
  std::vector<Action> rowsWhole;
  if (panelTiles && mnk[2] * mnk[1] * elementBits / 8 >= kMinPanelTileBytes) {
    rowsWhole = plain;
    for (Action &a : rowsWhole) {
      if (a.kind != ActionKind::TiledParallelization &&
          a.kind != ActionKind::TiledFusion)
        continue;
      if (a.sizes.size() == 3 && a.sizes[0] != 0 && a.sizes[1] != 0 &&
          mnk[1] / a.sizes[1] >= kMinPanelTiles)
        a.sizes[0] = 0;
      break;
    }
    decided = &rowsWhole;
  }
  int64_t lanes = std::max<int64_t>(1, legality.vectorRegisterBits / elementBits);
  int64_t vectorsPerRow = (NB + lanes - 1) / lanes;
  // Within the vectorizer's row limit too (as translateRegisterTile's).
  int64_t budget =
      std::min(getAccumulatorRegisterBudget(legality),
               std::max<int64_t>(1, legality.maxVectorRows / lanes));
  if (maxRows < budget)
    budget = std::min(budget, maxRows * vectorsPerRow);
  // A size s of n as panels j = s/NB (i whole) when NB divides it; one
  // panel when s divides NB (a column tile narrower than a panel takes the
  // panel: the register tile needs all of it, and the policy's TF(32,8,0)
  // on a 3136x384x32 pointwise convolution otherwise had no packed form
  // and ran plain, 1.6x slower than packed).
  bool panelsOutside = true;
  auto toPanels = [&](const Action &p, const Sizes &extent)
      -> std::optional<std::vector<Sizes>> {
    const Sizes &sizes = p.sizes;
    if (sizes.size() != 3)
      return std::nullopt;
    int64_t sn = sizes[1], sj;
    if (sn == 0)
      sj = 0;
    else if (sn % NB == 0)
      sj = sn / NB;
    else if (NB % sn == 0)
      sj = 1;
    else
      return std::nullopt;
    // A sequential tile of rows of one panel, taken from several panels:
    // the panel loop goes outside the rows' (tiled first), so that each
    // panel of B is reused by all the rows of the tile while it is in
    // cache, not fetched again for each row block.
    if (panelsOutside && p.kind == ActionKind::Tiling && sj == 1 &&
        extent[1] > 1 && sizes[0] != 0 && sizes[0] < extent[0])
      return std::vector<Sizes>{Sizes{0, 1, 0, 0},
                                Sizes{sizes[0], 0, 0, sizes[2]}};
    return std::vector<Sizes>{Sizes{sizes[0], sj, 0, sizes[2]}};
  };
  // Rows of m (getRegisterTileRows), one panel (the panel
  // loop outside the rows' as above), the reduction by the plain
  // schedule's last k tile. The tile is always whole panels (toPanels
  // never splits one): a split panel once got V over the whole reduction
  // (the policy's T(8,8,8) on a 1024x1280x128 matmul gave T(8,0,8,0) over
  // all 128 of k, which V refused, and every rule of the module was
  // dropped: 2.0x slower).
  auto registerTile = [&](const Sizes &extent,
                          bool) -> std::optional<std::vector<Sizes>> {
    int64_t r = getRegisterTileRows(extent[0], vectorsPerRow, budget);
    // The B vectors of every step are loaded ahead of the FMAs: with the
    // accumulators and a broadcast they must fit the register file, else
    // the tile spills (an 8x32 tile on AVX-512, 16 accumulators, 8 steps:
    // 33 vectors; steps of 4 ran a BERT-base layer 1.11x faster, a
    // 128x768x3072 matmul 1.14x, one process, Sapphire Rapids, 2026-12-02).
    // Not below 4 (AVX2: a packed matmul ran the same at 4 and 8).
    bool eightFit = legality.vectorRegisters <= 0 ||
                    (r + 8) * vectorsPerRow + 1 <= legality.vectorRegisters;
    int64_t most = eightFit ? 8 : 4;
    int64_t kr =
        getRegisterTileDepth(*decided, 2, extent[3], r * NB, legality, most);
    int64_t rows = r < extent[0] ? r : 0, depth = kr < extent[3] ? kr : 0;
    if (panelsOutside && extent[1] > 1 && rows != 0)
      return std::vector<Sizes>{Sizes{0, 1, 0, 0}, Sizes{rows, 0, 0, depth}};
    return std::vector<Sizes>{Sizes{rows, extent[1] > 1 ? 1 : 0, 0, depth}};
  };
  // Extents of (m, j, i, k); with the panel loops split out where the
  // history has room for them, else as the plain schedule has them.
  Sizes extents{mnk[0], mnk[1] / NB, NB, mnk[2]};
  if (std::optional<std::vector<Action>> out =
          translateTilings(*decided, extents, /*kLoop=*/3, toPanels, registerTile,
                           historyLength))
    return out;
  panelsOutside = false;
  return translateTilings(*decided, extents, /*kLoop=*/3, toPanels, registerTile,
                          historyLength);
}

} // namespace mlir::rl
