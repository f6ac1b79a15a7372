//===- ScheduleText.h - The textual schedule grammar ------------*- C++ -*-===//
//
//   trace    := ['[' passes ']'] schedule
//   schedule := entry (';' entry)*
//   entry    := [INT ':'] action (WS action)* [choices]
//              | [INT ':'] choices
//   action   := MNEMONIC [ '(' INT (',' INT)* ')' ]
//   choices  := '{' KEY '=' INT (',' KEY '=' INT)* '}'
//
// Mnemonics and which kinds take a list come from ActionKinds.def. An entry
// without an id applies to the first op of the traversal order (the last
// consumer of the first function). A trace's passes (FrontEnd.h's
// formatPassSteps: "a,b{k=v}") ran on the module before its decisions --
// the front end, and the rules' packing -- and name the ops its entries
// refer to: replayed on the same input, a trace gives the same IR.
// An entry's choices (keys from RuleChoices.def) are the rules' for that op,
// where a decision source made them: the rules stage (stage 3) reads them;
// applying them changes no IR by itself.
// Printing: Action::str(), and
// `<id>: <action> <action>; ...` for a whole schedule.
//
//===----------------------------------------------------------------------===//
#ifndef MLIR_RL_ACTIONSPACE_SCHEDULETEXT_H
#define MLIR_RL_ACTIONSPACE_SCHEDULETEXT_H

#include "mlir-rl/Support/Action.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::rl {

/// Parses one action ("T(8,32,1)", "V", ...). Returns std::nullopt and sets
/// `error` on malformed text.
std::optional<Action> parseAction(llvm::StringRef text, std::string &error);

/// An explicit schedule: for each op id, its list of actions.
struct ExplicitSchedule {
  struct Entry {
    std::optional<int64_t> opId;
    std::vector<Action> actions;
    /// The rules' choices for the op (none set: the rules' defaults).
    RuleChoices choices;
  };
  std::vector<Entry> entries;
  /// A trace's passes (between the brackets) and whether it had brackets.
  std::string prelude;
  bool hasPrelude = false;
};
std::optional<ExplicitSchedule> parseSchedule(llvm::StringRef text,
                                              std::string &error);

/// Parses "{key=value,...}" (RuleChoices.def's keys; 0/1 or, for `rt`,
/// 0 or a power of two). Returns std::nullopt and sets `error` on
/// malformed text.
std::optional<RuleChoices> parseRuleChoices(llvm::StringRef text,
                                            std::string &error);

/// "choices: pack, rt, rule, fuse" from the choice table.
std::string describeRuleChoices();

/// `<id>: <action> <action>; ...` (an entry without an id prints its
/// actions alone), after `[<passes>] ` for a trace; parseSchedule's inverse.
std::string formatSchedule(const ExplicitSchedule &schedule);

/// "expected T(..), TP(..), TF(..), I(..), V or NT" from the kind table.
std::string describeActionSyntax();

/// The header line of a dumped schedule file ("// Schedule: <schedule>"),
/// and its inverse (std::nullopt when `text` does not start with one).
std::string formatScheduleHeader(llvm::StringRef schedule);
std::optional<std::string> readScheduleHeader(llvm::StringRef text);

} // namespace mlir::rl

#endif // MLIR_RL_ACTIONSPACE_SCHEDULETEXT_H
