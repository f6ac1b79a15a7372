//===- ScheduleText.cpp - The textual schedule grammar --------------------===//
#include "mlir-rl/ActionSpace/ScheduleText.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::rl {

std::string describeActionSyntax() {
  std::string s = "expected ";
  for (int k = 0; k < kNumActionKinds; ++k) {
    const ActionKindInfo &info = kActionKinds[k];
    if (k)
      s += k + 1 == kNumActionKinds ? " or " : ", ";
    s += info.mnemonic;
    if (info.params != ActionParams::None)
      s += "(..)";
  }
  return s;
}

std::optional<Action> parseAction(StringRef text, std::string &error) {
  text = text.trim();
  Action action;
  StringRef mnemonic = text.take_until([](char c) { return c == '('; });
  StringRef rest = text.drop_front(mnemonic.size());
  mnemonic = mnemonic.trim();
  const ActionKindInfo *found = nullptr;
  for (const ActionKindInfo &info : kActionKinds)
    if (mnemonic == info.mnemonic)
      found = &info;
  if (!found) {
    error = "unknown action '" + text.str() + "' (" + describeActionSyntax() +
            ")";
    return std::nullopt;
  }
  action.kind = found->kind;
  rest = rest.trim();
  if (found->params == ActionParams::None) {
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

std::string describeRuleChoices() {
  std::string s;
  for (const RuleChoiceInfo &c : kRuleChoices)
    s += std::string(s.empty() ? "choices: " : ", ") + c.key;
  return s;
}

std::optional<RuleChoices> parseRuleChoices(StringRef text,
                                            std::string &error) {
  StringRef whole = text.trim();
  StringRef body = whole;
  if (!body.consume_front("{") || !body.consume_back("}")) {
    error = "rule choices '" + whole.str() +
            "' must be braced: {key=value,...}";
    return std::nullopt;
  }
  RuleChoices out;
  SmallVector<StringRef> items;
  body.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty()) {
    error = "rule choices '" + whole.str() + "' are empty";
    return std::nullopt;
  }
  for (StringRef item : items) {
    auto [keyText, valueText] = item.split('=');
    StringRef key = keyText.trim();
    const RuleChoiceInfo *found = nullptr;
    for (const RuleChoiceInfo &c : kRuleChoices)
      if (key == c.key)
        found = &c;
    if (!found) {
      error = "unknown rule choice '" + key.str() + "' in '" + whole.str() +
              "' (" + describeRuleChoices() + ")";
      return std::nullopt;
    }
    int64_t v;
    if (valueText.trim().getAsInteger(10, v) || v < 0) {
      error = "rule choice '" + key.str() + "' needs a non-negative integer "
              "in '" + whole.str() + "'";
      return std::nullopt;
    }
    bool binary = found->kind != RuleChoice::RegisterRows;
    if ((binary && v > 1) || (!binary && v != 0 && (v & (v - 1)) != 0)) {
      error = "rule choice '" + key.str() + "=" + std::to_string(v) +
              "' is out of range (" + found->doc + ")";
      return std::nullopt;
    }
    if (out.isSet(found->kind)) {
      error = "rule choice '" + key.str() + "' given twice in '" +
              whole.str() + "'";
      return std::nullopt;
    }
    out.set(found->kind, v);
  }
  return out;
}

std::optional<ExplicitSchedule> parseSchedule(StringRef text,
                                              std::string &error) {
  ExplicitSchedule schedule;
  text = text.trim();
  if (text.consume_front("[")) {
    size_t close = text.find(']');
    if (close == StringRef::npos) {
      error = "unclosed '[' (a trace starts with the passes that ran before "
              "its decisions: \"[pass,pass{opt=value}] <schedule>\")";
      return std::nullopt;
    }
    schedule.prelude = text.take_front(close).trim().str();
    schedule.hasPrelude = true;
    text = text.drop_front(close + 1).trim();
  }
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
    // The rules' choices, braced, end the entry.
    size_t brace = entryText.find('{');
    if (brace != StringRef::npos) {
      std::optional<RuleChoices> choices =
          parseRuleChoices(entryText.drop_front(brace), error);
      if (!choices)
        return std::nullopt;
      entry.choices = *choices;
      entryText = entryText.take_front(brace).trim();
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
    if (entry.actions.empty() && entry.choices.empty()) {
      error = "schedule entry '" + entryText.str() + "' has no actions";
      return std::nullopt;
    }
    schedule.entries.push_back(std::move(entry));
  }
  if (schedule.entries.empty() && !text.trim().empty()) {
    error = "the schedule has no entries (\"<op id>: <actions>; ...\")";
    return std::nullopt;
  }
  return schedule;
}

std::string formatSchedule(const ExplicitSchedule &schedule) {
  std::string out;
  for (const ExplicitSchedule::Entry &entry : schedule.entries) {
    if (!out.empty())
      out += "; ";
    std::string actions;
    for (const Action &a : entry.actions)
      actions += (actions.empty() ? "" : " ") + a.str();
    if (!entry.choices.empty())
      actions += (actions.empty() ? "" : " ") + entry.choices.str();
    out += entry.opId ? std::to_string(*entry.opId) + ": " + actions : actions;
  }
  if (!schedule.hasPrelude)
    return out;
  return "[" + schedule.prelude + "]" + (out.empty() ? "" : " ") + out;
}

static constexpr const char kHeaderPrefix[] = "// Schedule: ";

std::string formatScheduleHeader(StringRef schedule) {
  return std::string(kHeaderPrefix) + schedule.str() + "\n";
}

std::optional<std::string> readScheduleHeader(StringRef text) {
  StringRef line = text.take_until([](char c) { return c == '\n'; });
  if (!line.consume_front(kHeaderPrefix))
    return std::nullopt;
  return line.trim().str();
}

} // namespace mlir::rl
