//===- ActionSpace.cpp - Actions, masks and their preconditions -----------===//
#include "mlir-rl/ActionSpace.h"
#include "mlir-rl/Features.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <numeric>
#include <sstream>

namespace mlir::rl {

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string Action::str() const {
  std::string s = getActionMnemonic(kind);
  if (kind == ActionKind::Vectorization || kind == ActionKind::NoTransformation)
    return s;
  s += "(";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + ")";
}

std::optional<Action> parseAction(StringRef text, std::string &error) {
  text = text.trim();
  Action action;
  StringRef mnemonic = text.take_until([](char c) { return c == '('; });
  StringRef rest = text.drop_front(mnemonic.size());
  mnemonic = mnemonic.trim();
  bool found = false;
  for (int k = 0; k < kNumActionKinds; ++k) {
    if (mnemonic == getActionMnemonic((ActionKind)k)) {
      action.kind = (ActionKind)k;
      found = true;
    }
  }
  if (!found) {
    error = "unknown action '" + text.str() +
            "' (expected T(..), TP(..), TF(..), I(..), V or NT)";
    return std::nullopt;
  }
  bool takesList = action.kind != ActionKind::Vectorization &&
                   action.kind != ActionKind::NoTransformation;
  rest = rest.trim();
  if (!takesList) {
    if (!rest.empty()) {
      error = "action '" + mnemonic.str() + "' takes no arguments in '" +
              text.str() + "'";
      return std::nullopt;
    }
    return action;
  }
  if (!rest.consume_front("(") || !rest.consume_back(")")) {
    error = "action '" + mnemonic.str() +
            "' needs a parenthesized list of integers, e.g. " +
            mnemonic.str() + "(8,32,0), in '" + text.str() + "'";
    return std::nullopt;
  }
  SmallVector<StringRef> items;
  rest.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  if (rest.trim().empty())
    items.clear();
  for (StringRef item : items) {
    int64_t v;
    if (item.trim().getAsInteger(10, v) || v < 0) {
      error = "'" + item.trim().str() + "' is not a non-negative integer in '" +
              text.str() + "'";
      return std::nullopt;
    }
    action.sizes.push_back(v);
  }
  if (action.sizes.empty()) {
    error = "action '" + text.str() + "' has an empty list";
    return std::nullopt;
  }
  return action;
}

std::optional<ExplicitSchedule> parseSchedule(StringRef text,
                                              std::string &error) {
  ExplicitSchedule schedule;
  SmallVector<StringRef> entries;
  text.split(entries, ';', -1, /*KeepEmpty=*/false);
  for (StringRef entryText : entries) {
    entryText = entryText.trim();
    if (entryText.empty())
      continue;
    ExplicitSchedule::Entry entry;
    size_t colon = entryText.find(':');
    if (colon != StringRef::npos) {
      int64_t id;
      StringRef idText = entryText.take_front(colon).trim();
      if (idText.getAsInteger(10, id) || id < 0) {
        error = "op id '" + idText.str() + "' is not a non-negative integer";
        return std::nullopt;
      }
      entry.opId = id;
      entryText = entryText.drop_front(colon + 1).trim();
    }
    // Split on whitespace outside parentheses.
    int depth = 0;
    size_t start = 0;
    auto flush = [&](size_t end) -> bool {
      StringRef tok = entryText.slice(start, end).trim();
      if (tok.empty())
        return true;
      std::optional<Action> a = parseAction(tok, error);
      if (!a)
        return false;
      entry.actions.push_back(*a);
      return true;
    };
    for (size_t i = 0; i < entryText.size(); ++i) {
      char c = entryText[i];
      if (c == '(')
        ++depth;
      else if (c == ')')
        --depth;
      else if (depth == 0 && (c == ' ' || c == '\t' || c == '\n')) {
        if (!flush(i))
          return std::nullopt;
        start = i + 1;
      }
      if (depth < 0) {
        error = "unbalanced ')' in '" + entryText.str() + "'";
        return std::nullopt;
      }
    }
    if (depth != 0) {
      error = "unbalanced '(' in '" + entryText.str() + "'";
      return std::nullopt;
    }
    if (!flush(entryText.size()))
      return std::nullopt;
    if (entry.actions.empty()) {
      error = "schedule entry '" + entryText.str() + "' has no actions";
      return std::nullopt;
    }
    schedule.entries.push_back(std::move(entry));
  }
  return schedule;
}

//===----------------------------------------------------------------------===//
// Preconditions
//===----------------------------------------------------------------------===//

/// For the named 2-D convs and pools that `transform.structured.decompose`
/// rewrites to 1-D: the (output, window) extents of H and W.
static std::optional<std::pair<std::array<int64_t, 2>, std::array<int64_t, 2>>>
getWindowExtents(linalg::LinalgOp op) {
  StringRef name = op->getName().getStringRef();
  // Layout of (output dims, window dims) as loop positions.
  int oh, ow, kh, kw;
  if (name == "linalg.conv_2d_nhwc_hwcf") {
    oh = 1, ow = 2, kh = 4, kw = 5; // n, oh, ow, f, kh, kw, c
  } else if (name == "linalg.conv_2d_nchw_fchw") {
    oh = 2, ow = 3, kh = 5, kw = 6; // n, f, oh, ow, c, kh, kw
  } else if (name.starts_with("linalg.pooling_nhwc") ||
             name == "linalg.depthwise_conv_2d_nhwc_hwc") {
    oh = 1, ow = 2, kh = 4, kw = 5; // n, oh, ow, c, kh, kw
  } else if (name.starts_with("linalg.pooling_nchw")) {
    oh = 2, ow = 3, kh = 4, kw = 5; // n, c, oh, ow, kh, kw
  } else {
    return std::nullopt;
  }
  SmallVector<int64_t> b = getLoopBounds(op);
  if ((int)b.size() <= std::max({oh, ow, kh, kw}))
    return std::nullopt;
  return std::make_pair(std::array<int64_t, 2>{b[oh], b[kh]},
                        std::array<int64_t, 2>{b[ow], b[kw]});
}

bool needsDecomposition(linalg::LinalgOp op) {
  return getWindowExtents(op).has_value();
}

LogicalResult vectorizationPrecondition(linalg::LinalgOp op,
                                        const FeatureLayout &layout,
                                        std::string *reason) {
  auto fail = [&](const std::string &why) {
    if (reason)
      *reason = why;
    return failure();
  };
  if (!op.hasPureTensorSemantics())
    return fail("op does not have tensor semantics");
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<ShapedType>(v.getType()); t && !t.hasStaticShape())
      return fail("operand shapes are not static (a tile size does not "
                  "divide its loop)");
  SmallVector<int64_t> bounds = getLoopBounds(op);
  if (bounds.empty())
    return fail("op has no loops");
  if (bounds.back() > layout.maxVectorInnermost)
    return fail("innermost loop extent " + std::to_string(bounds.back()) +
                " exceeds " + std::to_string(layout.maxVectorInnermost));
  int64_t elements = 1;
  for (int64_t b : bounds)
    elements *= b;
  if (elements > layout.maxVectorElements)
    return fail("iteration space of " + std::to_string(elements) +
                " points exceeds " + std::to_string(layout.maxVectorElements) +
                " (tile first)");
  auto window = getWindowExtents(op);
  // (Convolutions and pooling are vectorized after decomposition into 1-D
  // ops whose vectors do not follow the 2-D loop nest: only the element
  // limit applies to them.)
  if (!window && elements / bounds.back() > layout.maxVectorRows)
    return fail(std::to_string(elements / bounds.back()) +
                " vector rows (iteration space / innermost extent) exceed " +
                std::to_string(layout.maxVectorRows) + " (tile first)");
  if (window) {
    auto [h, w] = *window;
    if (!((h[0] == 1 && h[1] == 1) || (w[0] == 1 && w[1] == 1)))
      return fail("2-D convolution/pooling needs its output and window "
                  "height (or width) tiled to 1 before vectorization");
    return success();
  }
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return fail("the linalg vectorizer does not support this op");
  return success();
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

bool ActionMasks::isTileAllowed(ActionKind k, int loop, int candidate,
                                const FeatureLayout &layout) const {
  int which = (int)k; // T, TP, TF are the first three kinds
  return tile[(which * layout.maxLoops + loop) * layout.numTileSizes +
              candidate];
}

std::vector<uint8_t> ActionMasks::flatten() const {
  std::vector<uint8_t> out(kind);
  out.insert(out.end(), tile.begin(), tile.end());
  out.insert(out.end(), pointer.begin(), pointer.end());
  return out;
}

static bool hasTiledHistory(const OpScheduleState &state) {
  return llvm::any_of(state.history, [](const Action &a) {
    return a.isTiled() && llvm::any_of(a.sizes, [](int64_t s) { return s; });
  });
}

static bool isParallelized(linalg::LinalgOp op, const OpScheduleState &state) {
  return state.parallelized || op->getParentOfType<scf::ForallOp>();
}

ActionMasks computeActionMasks(linalg::LinalgOp op,
                               const OpScheduleState &state, bool hasProducer,
                               const FeatureLayout &layout) {
  const int N = layout.maxLoops, M = layout.numTileSizes;
  ActionMasks m;
  m.kind.assign(kNumActionKinds, 0);
  m.tile.assign(3 * N * M, 0);
  m.pointer.assign(N, 0);
  auto setKind = [&](ActionKind k) { m.kind[(int)k] = 1; };
  // A 0 tile size is always a legal choice, so every categorical has one.
  for (int which = 0; which < 3; ++which)
    for (int l = 0; l < N; ++l)
      m.tile[(which * N + l) * M] = 1;

  SmallVector<int64_t> bounds = getLoopBounds(op);
  int numLoops = std::min<int>(bounds.size(), N);

  if (state.done) {
    setKind(ActionKind::NoTransformation);
    return m;
  }
  if (state.inInterchange()) {
    setKind(ActionKind::Interchange);
    for (int l = 0; l < numLoops; ++l)
      m.pointer[l] = !llvm::is_contained(state.pendingPointers, l);
    return m;
  }

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool anyParallel = false;
  for (int l = 0; l < numLoops; ++l) {
    bool parallel = iterators[l] == utils::IteratorType::parallel;
    anyParallel |= parallel && bounds[l] >= 2;
    for (int c = 1; c < M; ++c) {
      int64_t size = layout.tileCandidates[c];
      bool fits = !ShapedType::isDynamic(bounds[l]) && size <= bounds[l];
      m.tile[(0 * N + l) * M + c] = fits;
      m.tile[(1 * N + l) * M + c] = fits && parallel;
      m.tile[(2 * N + l) * M + c] = fits && parallel;
    }
  }

  if (numLoops >= 1)
    setKind(ActionKind::Tiling);
  bool parallelized = isParallelized(op, state);
  if (!parallelized && anyParallel)
    setKind(ActionKind::TiledParallelization);
  if (!parallelized && anyParallel && hasProducer && !hasTiledHistory(state))
    setKind(ActionKind::TiledFusion);
  if (numLoops >= 2) {
    setKind(ActionKind::Interchange);
    for (int l = 0; l < numLoops; ++l)
      m.pointer[l] = 1;
  }
  if (succeeded(vectorizationPrecondition(op, layout)))
    setKind(ActionKind::Vectorization);
  setKind(ActionKind::NoTransformation);
  return m;
}

LogicalResult verifyAction(linalg::LinalgOp op, const OpScheduleState &state,
                           bool hasProducer, const Action &action,
                           const FeatureLayout &layout, std::string &reason) {
  ActionMasks m = computeActionMasks(op, state, hasProducer, layout);
  SmallVector<int64_t> bounds = getLoopBounds(op);
  int numLoops = bounds.size();
  std::string what = std::string(getActionName(action.kind)) + " " +
                     action.str();
  if (!m.isKindAllowed(action.kind)) {
    if (state.done)
      reason = what + " is not allowed: the op's schedule is complete "
                      "(vectorized, NT taken, or " +
               std::to_string(layout.historyLength) + " actions applied)";
    else if (state.inInterchange())
      reason = what + " is not allowed: an interchange is being chosen";
    else if (action.kind == ActionKind::Vectorization) {
      std::string why;
      (void)vectorizationPrecondition(op, layout, &why);
      reason = what + " is not allowed: " + why;
    } else if (action.kind == ActionKind::TiledFusion && !hasProducer)
      reason = what + " is not allowed: the op has no linalg producer to fuse";
    else if (action.kind == ActionKind::TiledFusion && hasTiledHistory(state))
      reason = what + " is not allowed: the op is already tiled";
    else if ((action.kind == ActionKind::TiledParallelization ||
              action.kind == ActionKind::TiledFusion) &&
             isParallelized(op, state))
      reason = what + " is not allowed: the op is already parallelized";
    else if (action.kind == ActionKind::Interchange)
      reason = what + " is not allowed: the op has fewer than 2 loops";
    else
      reason = what + " is not allowed here";
    return failure();
  }
  if (action.isTiled()) {
    if ((int)action.sizes.size() != numLoops) {
      reason = what + " gives " + std::to_string(action.sizes.size()) +
               " tile sizes, the op has " + std::to_string(numLoops) +
               " loops";
      return failure();
    }
    bool anyNonZero = false;
    for (int l = 0; l < numLoops; ++l) {
      int64_t size = action.sizes[l];
      anyNonZero |= size != 0;
      int c = layout.getTileIndex(size);
      if (c < 0) {
        std::string cands;
        for (int64_t t : layout.tileCandidates)
          cands += (cands.empty() ? "" : ", ") + std::to_string(t);
        reason = what + ": tile size " + std::to_string(size) + " of loop " +
                 std::to_string(l) + " is not a candidate (" + cands + ")";
        return failure();
      }
      if (m.isTileAllowed(action.kind, l, c, layout))
        continue;
      if (action.kind != ActionKind::Tiling &&
          op.getIteratorTypesArray()[l] != utils::IteratorType::parallel)
        reason = what + ": loop " + std::to_string(l) +
                 " is a reduction loop; " + getActionMnemonic(action.kind) +
                 " tiles parallel loops only (use 0)";
      else
        reason = what + ": tile size " + std::to_string(size) +
                 " exceeds the extent " + std::to_string(bounds[l]) +
                 " of loop " + std::to_string(l);
      return failure();
    }
    if (!anyNonZero && action.kind != ActionKind::Tiling) {
      reason = what + " needs at least one non-zero tile size";
      return failure();
    }
  }
  if (action.kind == ActionKind::Interchange) {
    SmallVector<int64_t> sorted(action.sizes.begin(), action.sizes.end());
    llvm::sort(sorted);
    SmallVector<int64_t> iota(numLoops);
    std::iota(iota.begin(), iota.end(), 0);
    if (sorted != iota) {
      reason = what + " is not a permutation of the op's " +
               std::to_string(numLoops) + " loops";
      return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

/// Picks one of `allowed` choices by `logits`: argmax, or a softmax sample.
static int choose(ArrayRef<float> logits, ArrayRef<uint8_t> allowed,
                  std::mt19937_64 *rng) {
  int best = -1;
  for (int i = 0; i < (int)allowed.size(); ++i)
    if (allowed[i] && (best < 0 || logits[i] > logits[best]))
      best = i;
  if (!rng || best < 0)
    return best;
  std::vector<double> weights(allowed.size(), 0.0);
  for (int i = 0; i < (int)allowed.size(); ++i)
    if (allowed[i])
      weights[i] = std::exp((double)logits[i] - (double)logits[best]);
  std::discrete_distribution<int> dist(weights.begin(), weights.end());
  return dist(*rng);
}

DecodedStep decodeStep(linalg::LinalgOp op, const OpScheduleState &state,
                       bool hasProducer, const ActionMasks &masks,
                       const PolicyLogits &logits, const FeatureLayout &layout,
                       std::mt19937_64 *rng) {
  const int N = layout.maxLoops, M = layout.numTileSizes;
  DecodedStep step;
  if (state.inInterchange()) {
    step.isPointer = true;
    step.pointer = choose(logits.pointer, masks.pointer, rng);
    return step;
  }
  int numLoops = std::min<int>(op.getNumLoops(), N);
  std::vector<uint8_t> kinds(masks.kind);
  for (int attempt = 0; attempt < kNumActionKinds; ++attempt) {
    int k = choose(logits.kind, kinds, rng);
    if (k < 0)
      break;
    kinds[k] = 0; // not again, whatever happens below
    Action action;
    action.kind = (ActionKind)k;
    if (action.isTiled()) {
      for (int l = 0; l < numLoops; ++l) {
        ArrayRef<float> row(logits.tile.data() + (k * N + l) * M, M);
        ArrayRef<uint8_t> allowed(masks.tile.data() + (k * N + l) * M, M);
        int c = choose(row, allowed, rng);
        action.sizes.push_back(layout.tileCandidates[std::max(c, 0)]);
      }
    } else if (action.kind == ActionKind::Interchange) {
      step.isPointer = true;
      step.pointer = choose(logits.pointer, masks.pointer, rng);
      if (step.pointer >= 0)
        return step;
      step.isPointer = false;
      continue;
    }
    std::string reason;
    if (succeeded(verifyAction(op, state, hasProducer, action, layout,
                               reason))) {
      step.action = action;
      return step;
    }
  }
  step.action.kind = ActionKind::NoTransformation;
  return step;
}

} // namespace mlir::rl
