//===- Rescheduling.cpp - The rules after the policy's decisions ----------===//
//
// reschedule (Packing.h): a module the policy scheduled, scheduled again
// with the rules -- matmuls packed (PackRhs.cpp) or register-tiled, their
// decisions translated (ScheduleTranslation.cpp), copies and fills by rule
// (CopyRules.cpp) -- and hasOpsToReschedule, whether a module has anything
// for them.
//
//===----------------------------------------------------------------------===//
#include "mlir-rl/Transforms/Packing.h"
#include "PackingInternal.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"

#include <random>
#include <set>

namespace mlir::rl {

bool hasOpsToReschedule(Operation *root, const Rescheduling &opts) {
  if (opts.pack && !getPackCandidates(root, opts.minRowsToCopy).empty())
    return true;
  if (!opts.registerTiles && !opts.copies)
    return false;
  const ActionSpaceConfig &config = ActionSpaceConfig::getDefault();
  WalkResult r = root->walk([&](linalg::LinalgOp op) {
    if (opts.registerTiles && getRegisterTileExtents(op))
      return WalkResult::interrupt();
    if (opts.copies &&
        (getCopySchedule(op, config.legality, config.layout) ||
         isAccumulatorFill(op)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

RuleChoiceMask getRuleChoiceMask(linalg::LinalgOp op, const Rescheduling &opts,
                                 const LegalityConfig &legality,
                                 const FeatureLayout &layout) {
  RuleChoiceMask mask;
  auto offer = [&](RuleChoice c, std::vector<int64_t> values) {
    mask[static_cast<int>(c)] = std::move(values);
  };
  bool packed = false;
  if (opts.pack && op.getNumDpsInits() == 1) {
    Type elt = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    int64_t panelWidth = getPanelWidth(elt, legality);
    if (auto mnk = getRhsPacking(op, panelWidth, opts.minRowsToCopy)) {
      packed = true;
      offer(RuleChoice::Pack, {0, 1});
      // Enough panels for kMinPanelTiles parallel tiles of whole rows, and
      // a B worth reading once.
      if ((*mnk)[1] / panelWidth >= kMinPanelTiles &&
          (*mnk)[1] * (*mnk)[2] * elt.getIntOrFloatBitWidth() / 8 >=
              kMinPanelTileBytes)
        offer(RuleChoice::PanelTiles, {0, 1});
    }
  }
  bool plainTile = opts.registerTiles && getRegisterTileExtents(op);
  if (packed || plainTile) {
    std::vector<int64_t> rows;
    if (!packed)
      rows.push_back(0);
    int64_t budget = getAccumulatorRegisterBudget(legality);
    for (int64_t r = 1; r <= budget; r *= 2)
      rows.push_back(r);
    if (budget > 0)
      offer(RuleChoice::RegisterRows, rows);
  }
  if (opts.copies && getCopySchedule(op, legality, layout))
    offer(RuleChoice::ByRule, {0, 1});
  if (opts.copies && isAccumulatorFill(op))
    offer(RuleChoice::Fuse, {0, 1});
  return mask;
}

/// reschedule's application: tags `unscheduled` with the plain ids,
/// packs the candidates, applies `decided` (with `byRule` in place of the
/// copies' decisions) and schedules the copies of B (by rule where
/// `withRules` and the rule fits, else by `policy`). On failure,
/// `failedId` is the plain id of the op whose packing or schedule failed
/// (-1: a copy of B, or nothing to blame on one op).
static std::unique_ptr<Scheduler> applyRescheduling(
    ModuleOp unscheduled, Scheduler &plain, PolicyFn policy,
    const Rescheduling &opts, VerifyScope verifyScope,
    std::map<int64_t, PackCandidate> &candidates,
    const std::map<int64_t, std::vector<Action>> &decided,
    const std::map<int64_t, std::vector<Action>> &byRule, bool withRules,
    const std::set<int64_t> &unpacked, int64_t &copied, std::string &why,
    int64_t &failedId) {
  const ActionSpaceConfig &config = plain.getConfig();
  copied = 0;
  failedId = -1;
  // Tagged with the plain ids (the clone was made after plain's
  // initialize): the packed op keeps its tag, a copy of B has none.
  {
    int64_t id = 0;
    unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      op->setAttr(kOpIdAttrName,
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64), id++));
    });
    IRRewriter rewriter(unscheduled.getContext());
    for (auto &[id, c] : candidates) {
      if (failed(packRhs(rewriter, c.op, c.panelWidth, opts.minRowsToCopy,
                         withRules))) {
        why = "a right-hand side could not be packed";
        failedId = id;
        return nullptr;
      }
    }
  }
  std::vector<int64_t> plainIdOf; // by the new id; -1: a copy of B
  std::map<int64_t, std::vector<Action>> copiesOfB; // by the new id
  unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
    auto attr = op->getAttrOfType<IntegerAttr>(kOpIdAttrName);
    if (!attr && withRules)
      if (auto rule = getCopySchedule(op, config.legality, config.layout))
        copiesOfB[plainIdOf.size()] = *rule;
    plainIdOf.push_back(attr ? attr.getInt() : -1);
  });
  auto scheduler =
      std::make_unique<Scheduler>(unscheduled, config, verifyScope);
  // The module here is the one before the decisions: its own untie (at
  // the first transformation below) comes after the packing.
  std::vector<PassStep> prelude = plain.getPrelude();
  if (plain.untiedEmpties())
    prelude.pop_back();
  if (!candidates.empty())
    prelude.push_back(getPackRhsStep(
        opts.minRowsToCopy, withRules,
        std::vector<int64_t>(unpacked.begin(), unpacked.end())));
  scheduler->setPrelude(prelude);
  scheduler->initialize();
  int64_t copies = llvm::count(plainIdOf, -1);
  if (scheduler->getOps().size() != plainIdOf.size() ||
      plainIdOf.size() != plain.getOps().size() + copies) {
    scheduler->removeTags();
    why = "packing changed the ops unexpectedly";
    return nullptr;
  }
  // Each op's actions, applied op by op in the traversal order (consumers
  // first), as applySchedule replays the resulting trace: the translated
  // decisions, the rules' schedules, the fills fused into their consumers'
  // tiles (vectorized there once the consumer has fused them) and the
  // copies of B without a rule (by `policy`, greedily).
  std::mt19937_64 rng(0);
  PolicyStats stats;
  for (int64_t id : scheduler->getTraversalOrder()) {
    auto rule = byRule.find(plainIdOf[id]);
    auto it = decided.find(plainIdOf[id]);
    auto ofB = copiesOfB.find(id);
    std::vector<Action> actions;
    bool byPolicy = false;
    std::string source = "rule";
    if (plainIdOf[id] >= 0 && rule != byRule.end() && rule->second.empty()) {
      source = "rule: a fill in its consumer's tiles";
      // A fill fused into its consumer's tiles: whole where the tile fits
      // the vector limit, else by the copies' rule on the tile with its
      // parallel tiling made sequential (the forall is the consumer's).
      ++copied;
      linalg::LinalgOp fill = scheduler->lookup(id);
      if (!fill || !fill->getParentOfType<scf::ForallOp>())
        continue;
      if (succeeded(vectorizationPrecondition(fill, config.legality))) {
        actions.push_back(Action{ActionKind::Vectorization, {}});
      } else if (auto tiled =
                     getCopySchedule(fill, config.legality, config.layout)) {
        for (Action &a : *tiled)
          if (a.kind == ActionKind::TiledParallelization)
            a.kind = ActionKind::Tiling;
        actions = *tiled;
      }
    } else if (plainIdOf[id] >= 0 &&
               scheduler->getOps()[id].kind == OpKind::Fill &&
               scheduler->getOps()[id].loopBounds.size() !=
                   plain.getOps()[plainIdOf[id]].loopBounds.size()) {
      // A packed matmul's fill, now in the packed shape (packRhs): its
      // decision was for the plain shape. By the rule for its new shape,
      // else (or where a decision source chose rule=0) left to the lowering.
      if (withRules && plain.getOps()[plainIdOf[id]].choices.getOr(
                           RuleChoice::ByRule, 1))
        if (auto packedRule = getCopySchedule(scheduler->lookup(id),
                                              config.legality, config.layout)) {
          actions = *packedRule;
          ++copied;
        }
    } else if (plainIdOf[id] >= 0 && rule != byRule.end()) {
      actions = rule->second;
      ++copied;
    } else if (plainIdOf[id] >= 0 && it != decided.end()) {
      actions = it->second;
      const OpRecord &was = plain.getOps()[plainIdOf[id]];
      source = was.sources.empty() ? "explicit" : was.sources.front();
      if (actions != was.state.history)
        source += ", translated by the rules";
    } else if (ofB != copiesOfB.end()) {
      actions = ofB->second;
      ++copied;
    } else if (plainIdOf[id] < 0) {
      byPolicy = true;
      source = "decisions: a copy of B, greedy";
    }
    scheduler->setSource(source);
    std::string message;
    if (byPolicy) {
      if (failed(scheduler->scheduleOpWithPolicy(id, policy, PolicyRunOptions(),
                                                 rng, stats, message))) {
        scheduler->removeTags();
        why = "the policy failed on a copy of B: " + message;
        return nullptr;
      }
      continue;
    }
    if (actions.empty())
      continue;
    ExplicitSchedule one;
    one.entries.push_back({id, actions});
    ApplyStatus status = scheduler->applySchedule(one, message);
    if (status != ApplyStatus::Applied) {
      scheduler->removeTags();
      why = "the translated schedule did not apply (" + formatSchedule(one) +
            "): " + message;
      failedId = plainIdOf[id];
      return nullptr;
    }
  }
  if (failed(verify(unscheduled))) {
    scheduler->removeTags();
    why = "the rescheduled module does not verify";
    return nullptr;
  }
  return scheduler;
}

/// One attempt of reschedule: the rules of `opts` on every op but those of
/// `excluded` (plain ids), which are scheduled exactly as decided: not
/// packed, not register-tiled, not by rule, no fill moved into their tiles
/// nor they into a consumer's. On failure, `failedId` is the plain id of
/// the op whose schedule did not apply (-1: none to blame) and `nothing`
/// says there was nothing for the rules to do.
static std::unique_ptr<Scheduler>
attemptRescheduling(Scheduler &plain, ModuleOp unscheduled, PolicyFn policy,
                    const Rescheduling &opts, VerifyScope verifyScope,
                    const std::set<int64_t> &excluded, int64_t &packed,
                    int64_t &tiled, int64_t &copied, std::string &why,
                    int64_t &failedId, bool &nothing) {
  packed = 0, tiled = 0, copied = 0;
  failedId = -1;
  nothing = false;
  std::map<int64_t, PackCandidate> candidates;
  if (opts.pack)
    candidates = getPackCandidates(unscheduled, opts.minRowsToCopy);
  const ActionSpaceConfig &config = plain.getConfig();
  // Matmuls that stay plain although mlir-rl-pack-rhs would pack them:
  // the other rules of the module still apply.
  std::set<int64_t> unpacked;
  for (int64_t id : excluded)
    if (candidates.erase(id))
      unpacked.insert(id);
  // Each op's choices (a decision source's; unset: the rules' defaults).
  auto choice = [&](int64_t id, RuleChoice c, int64_t otherwise) {
    const OpRecord *rec = plain.getRecord(id);
    return rec ? rec->choices.getOr(c, otherwise) : otherwise;
  };
  auto maxRows = [&](int64_t id) {
    return choice(id, RuleChoice::RegisterRows, INT64_MAX);
  };
  // Plain matmuls that are not packed, and copies with a rule's schedule,
  // by the plain op id.
  std::map<int64_t, std::pair<std::vector<int64_t>, int64_t>> plainMatmuls;
  std::map<int64_t, std::vector<Action>> copyRules;
  std::set<int64_t> initFills;
  {
    int64_t id = 0;
    unscheduled.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
      int64_t current = id++;
      if (excluded.count(current))
        return;
      // Candidates too: one whose decision has no packed form stays plain.
      if (auto extents = getRegisterTileExtents(op);
          extents && opts.registerTiles)
        plainMatmuls[current] = {
            *extents,
            (int64_t)getElementTypeOrSelf(op.getDpsInits()[0].getType())
                .getIntOrFloatBitWidth()};
      if (opts.copies && choice(current, RuleChoice::ByRule, 1))
        if (auto rule = getCopySchedule(op, config.legality, config.layout))
          copyRules[current] = *rule;
      if (opts.copies && isAccumulatorFill(op) &&
          choice(current, RuleChoice::Fuse, 1))
        initFills.insert(current);
    });
  }
  // A producer fused into a consumer's tiles keeps its decision (its
  // extents are the consumer tile's, not its own).
  auto fusesProducer = [](const OpRecord &rec) {
    return llvm::any_of(rec.state.history, [](const Action &a) {
      return a.info().has(kFusesProducer);
    });
  };
  std::set<int64_t> fused;
  for (const OpRecord &rec : plain.getOps())
    if (rec.producerId >= 0 && fusesProducer(rec))
      fused.insert(rec.producerId);
  for (int64_t id : fused)
    // Its consumer would find a collapse_shape instead.
    if (candidates.erase(id))
      unpacked.insert(id);
  // Those a decision source chose to leave plain.
  for (auto it = candidates.begin(); it != candidates.end();)
    if (choice(it->first, RuleChoice::Pack, 1) == 0) {
      unpacked.insert(it->first);
      it = candidates.erase(it);
    } else {
      ++it;
    }
  std::map<int64_t, std::vector<Action>> decided; // by the plain op id
  // The copies whose decision the rule replaces (the attempt with them).
  std::map<int64_t, std::vector<Action>> byRule;
  for (const OpRecord &rec : plain.getOps()) {
    if (rec.state.history.empty())
      continue;
    auto rule = copyRules.find(rec.id);
    // A decision that fused only the fill of its accumulator (a row
    // reduction's) gives way to the rule too: the rule takes the fill into
    // its tiles instead (below).
    bool fusesInitFill = fusesProducer(rec) && initFills.count(rec.producerId);
    if (rule != copyRules.end() && !fused.count(rec.id) &&
        (!fusesProducer(rec) || fusesInitFill)) {
      byRule[rec.id] = rule->second;
      if (fusesInitFill)
        fused.erase(rec.producerId);
    }
    auto it = candidates.find(rec.id);
    if (it == candidates.end()) {
      decided[rec.id] = rec.state.history;
      auto mm = plainMatmuls.find(rec.id);
      if (mm != plainMatmuls.end() && !fused.count(rec.id)) {
        if (std::optional<std::vector<Action>> actions = translateRegisterTile(
                rec.state.history, mm->second.first, mm->second.second,
                config.legality, config.layout.historyLength,
                maxRows(rec.id))) {
          decided[rec.id] = *actions;
          ++tiled;
        }
      }
      continue;
    }
    const PackCandidate &c = it->second;
    std::optional<std::vector<Action>> actions = translatePackedSchedule(
        rec.state.history, c.mnk, c.panelWidth, c.elementBits,
        config.legality, config.layout.historyLength,
        std::max<int64_t>(1, maxRows(rec.id)),
        choice(rec.id, RuleChoice::PanelTiles, 1) != 0);
    if (actions) {
      decided[rec.id] = *actions;
      continue;
    }
    // No packed equivalent (a fusion, an interchange): it stays plain, as
    // decided, with a register tile where one translates.
    candidates.erase(it);
    unpacked.insert(rec.id);
    decided[rec.id] = rec.state.history;
    auto mm = plainMatmuls.find(rec.id);
    if (mm != plainMatmuls.end())
      if (std::optional<std::vector<Action>> tiledActions =
              translateRegisterTile(rec.state.history, mm->second.first,
                                    mm->second.second, config.legality,
                                    config.layout.historyLength,
                                    maxRows(rec.id))) {
        decided[rec.id] = *tiledActions;
        ++tiled;
      }
  }
  // A fill that only initialises its consumer's accumulator goes into the
  // consumer's tiles: the consumer's TP becomes a TF (same tile sizes) and
  // the fill, filling one tile at a time inside the forall, keeps no
  // decision of its own (an empty rule; applyRescheduling vectorizes it in
  // the tile). Apart, it writes the whole accumulator before the consumer
  // reads it back (MobileNetV2: 74 such fills, 45 MB written per
  // inference, a tenth of its time in memset).
  std::map<int64_t, std::vector<Action>> decidedByRule = decided;
  for (const OpRecord &rec : plain.getOps()) {
    if (!initFills.count(rec.producerId) || fused.count(rec.producerId) ||
        excluded.count(rec.id))
      continue;
    // The consumer's schedule: the rule's where it has one (a row
    // reduction), else its decision.
    std::vector<Action> *actions = nullptr;
    if (auto own = byRule.find(rec.id); own != byRule.end())
      actions = &own->second;
    else if (auto it = decidedByRule.find(rec.id); it != decidedByRule.end())
      actions = &it->second;
    if (!actions || actions->empty() ||
        actions->front().kind != ActionKind::TiledParallelization)
      continue;
    actions->front().kind = ActionKind::TiledFusion;
    byRule[rec.producerId] = {};
  }
  if (candidates.empty() && tiled == 0 && byRule.empty()) {
    why = "no matmul to pack or register-tile, no copy to schedule by rule";
    nothing = true;
    return nullptr;
  }
  std::unique_ptr<Scheduler> scheduler = applyRescheduling(
      unscheduled, plain, policy, opts, verifyScope, candidates,
      opts.copies ? decidedByRule : decided, byRule, opts.copies, unpacked,
      copied, why, failedId);
  if (!scheduler)
    return nullptr;
  if (candidates.empty() && tiled == 0 && copied == 0) {
    scheduler->removeTags();
    why = "no matmul to pack or register-tile, no copy to schedule by rule";
    nothing = true;
    return nullptr;
  }
  packed = candidates.size();
  return scheduler;
}

std::unique_ptr<Scheduler>
reschedule(Scheduler &plain, ModuleOp unscheduled, PolicyFn policy,
           const Rescheduling &opts, VerifyScope verifyScope,
           int64_t &packed, int64_t &tiled, int64_t &copied, std::string &why,
           std::vector<std::string> *dropped) {
  // The module as it was, for the attempts after one that failed (an
  // attempt leaves its module unspecified).
  OwningOpRef<ModuleOp> pristine(cast<ModuleOp>(unscheduled->clone()));
  auto restore = [&] {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(pristine->clone()));
    unscheduled.getBodyRegion().takeBody(copy->getBodyRegion());
  };
  // An op whose schedule by the rules does not apply loses its own rules,
  // not the module's: it is scheduled as decided and the rest again with
  // theirs (a failed register tile of one batch matmul cost ViT's block
  // every packed matmul and copy rule, 2.8x, on AVX-512). Where no op is
  // to blame, or too many were, the copies' rules go (an attempt without
  // them), then all rules (nothing returned).
  constexpr size_t kMaxExcluded = 16;
  Rescheduling attemptOpts = opts;
  std::set<int64_t> excluded;
  std::string withCopies;
  for (;;) {
    int64_t failedId = -1;
    bool nothing = false;
    std::unique_ptr<Scheduler> scheduler = attemptRescheduling(
        plain, unscheduled, policy, attemptOpts, verifyScope, excluded, packed,
        tiled, copied, why, failedId, nothing);
    if (scheduler)
      return scheduler;
    if (nothing)
      return nullptr;
    restore();
    if (failedId >= 0 && excluded.size() < kMaxExcluded &&
        excluded.insert(failedId).second) {
      if (dropped)
        dropped->push_back("op " + std::to_string(failedId) + ": " + why);
      continue;
    }
    if (attemptOpts.copies && opts.copies) {
      withCopies = why;
      attemptOpts.copies = false;
      continue;
    }
    if (!withCopies.empty())
      why += " (with copies by rule: " + withCopies + ")";
    return nullptr;
  }
}

} // namespace mlir::rl
