// Internal to the deploy-script shell (shell/script.hpp): the parsed script (shell/parse.cpp) and
// word expansion (shell/expand.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "inputs/shell/script.hpp"

namespace specprobe::serving::shell {

struct Node;
using NodeList = std::vector<Node>;

struct ArrayAssign {
  ShellWord name;  // "NAME=" (or "NAME+=")
  std::vector<ShellWord> items;
};

struct Node {
  enum Kind { simple, if_, for_, loop, case_, group, subshell, funcdef, arith };
  Kind kind = simple;
  std::vector<ShellWord> words;                  // simple: the words; for: the item words; case: the subject
  std::vector<ShellWord> herestrings;            // simple: `<<< WORD`
  std::vector<ShellWord> heredocs;               // simple: here-document bodies
  std::vector<ArrayAssign> arrays;               // simple: NAME=(...) assignments
  std::vector<NodeList> parts;                   // if: cond, body, cond, body, ..., [else body]; loop: cond, body;
                                                 // for/group/subshell/funcdef: body; case: one body per arm
  std::vector<std::vector<ShellWord>> patterns;  // case: the patterns of each arm
  bool has_else = false;                         // if
  bool until = false;                            // loop
  bool has_list = true;                          // for: `in WORDS` given
  std::string name;                              // for: the variable; funcdef: the function
  std::string joined_by;                         // "&&" or "||" when the list joins it to the command before
  size_t start = 0, end = 0;                     // source offsets (of the script text being parsed)
};

// Parses WORDS (split from TEXT) into commands. Structure errors (a missing `fi`) end the
// construct at the end of the input; NOTES gets a remark. Option-only lines right after a
// command continue it when JOIN is set (with a warning in NOTES, located through POS).
NodeList parse_script(std::vector<ShellWord> words, std::string_view text, const PosMap& pos, bool join,
                      std::vector<ReaderNote>& notes);

// Expansion of words against variables.
struct Scope {
  ShellVars* vars = nullptr;
  const std::vector<std::string>* args = nullptr;  // $1..; nullptr: unresolved
  std::map<std::string, std::string>* reasons = nullptr;
  std::vector<ReaderNote>* notes = nullptr;
  const PosMap* pos = nullptr;
  size_t* budget = nullptr;  // bytes expansions may still produce
  int depth = 0;             // nested ${...:-${...}} evaluation
};

// W expanded: quote removal is already done by the splitter; expansions are substituted;
// with SPLIT, unquoted expansion results are split into fields. An empty unquoted result
// yields no field. False when the expansion budget is spent.
bool expand_word(const ShellWord& w, bool split, Scope& scope, std::vector<ShellWord>& out);
// W as one string (assignment values, here-strings, case subjects).
ShellWord expand_single(const ShellWord& w, Scope& scope);

// [ ], [[ ]] and `test` over expanded WORDS (the brackets included): true, false, or unknown.
std::optional<bool> eval_test(const std::vector<ShellWord>& words);
// Glob match of S against PATTERN (*, ?, [...]): case patterns and [[ == ]].
bool glob_match(std::string_view pattern, std::string_view s);
// $((EXPR)) over known integer variables.
std::optional<long long> eval_arith(std::string_view expr, const ShellVars& vars);

// `NAME=value` with an unquoted NAME (also `NAME+=value`).
bool split_assignment(const ShellWord& w, std::string& name, ShellWord& value, bool& append);
bool is_identifier(std::string_view s);

}  // namespace specprobe::serving::shell
