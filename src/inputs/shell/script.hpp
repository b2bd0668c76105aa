// The deploy-script reader's shell: parses a script into commands (if/elif/else, for, while,
// until, case, functions, { }, ( ), pipelines, &&/||) and walks it the way a careful human reads
// it, without running anything:
//   - variables assigned in the script (also `local`, `export`, `declare`, `read ... <<< word`,
//     arrays), the environment the reader was given (specprobe's own environment, --env), the
//     container's env for compose / Kubernetes commands;
//   - ${VAR:-default}, ${VAR:=default}, ${VAR:?message}, ${VAR:+word}, ${VAR#pat}, ${#VAR},
//     "${arr[@]}", $1.. inside functions; unquoted expansions are split into fields;
//   - a value the reader cannot know ($(...), backquotes, an unset variable, a variable assigned
//     differently in the branches of an `if` whose condition is unknown) becomes an unresolved
//     marker naming the variable; the facts that depend on it are unknown, never guessed;
//   - `if` conditions made of [ ], [[ ]] and test over known values pick their branch; unknown
//     ones read every branch; while/until bodies and case arms of an unknown word are read for
//     their commands, but their assignments do not change what follows;
//   - eval STRING, sh -c STRING, bash -lc STRING (any shell, flags before -c) and here-documents
//     are read as scripts; functions run where they are called, with their arguments.
// Each simple command it reaches is handed to a callback with its words expanded.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "inputs/serving.hpp"
#include "inputs/shell/words.hpp"

namespace specprobe::serving {

// An unresolved value inside a word: "\x01NAME\x02". NAME is a variable, "$(...)" for a command
// substitution, or a placeholder such as "<MODEL>".
inline constexpr char kMarkOpen = '\x01';
inline constexpr char kMarkClose = '\x02';
std::string unresolved_mark(std::string_view name);
// The names of the markers in S, in order, without duplicates.
std::vector<std::string> unresolved_names(std::string_view s);
bool has_unresolved(std::string_view s);
// S with every marker written back as `$NAME` (for messages).
std::string show_unresolved(std::string_view s);

// A variable's value; OFFSETS place each byte in the script (empty: from outside the file).
struct ShellValue {
  std::string text;
  std::vector<uint32_t> offsets;
  bool exported = false;
  std::string origin;              // "" (the script) | "--env" | "environment" | "container" ...
                                   // (--env and specprobe's environment resolve values but are not the
                                   // server's environment: ShellCommand::env leaves them out)
  std::vector<std::string> array;  // set for arrays: the elements
  std::vector<std::vector<uint32_t>> array_offsets;  // each element's bytes in the script (may be empty)
  bool is_array = false;
};

using ShellVars = std::map<std::string, ShellValue>;

// One simple command as the script would run it.
struct ShellCommand {
  std::vector<ShellWord> words;                         // expanded, redirections removed; WORDS[i].offsets place bytes
  std::vector<std::pair<std::string, EnvSetting>> env;  // exported variables + VAR=x prefixes
  std::vector<ShellWord> heredocs;                      // here-document bodies fed to it (expanded unless quoted)
  const ShellVars* vars = nullptr;                      // every variable at this point (valid during the callback)
  int depth = 0;                                        // eval / sh -c nesting (0 = the file itself)
  size_t end = 0;  // offset just after the command in the reader's text (0: unknown)
};

struct ShellOptions {
  ShellVars vars;                 // the starting variables (environment, --env, container env)
  std::vector<std::string> args;  // $1 .. (empty: unresolved)
  bool join_option_lines = true;  // option-only lines right after a command continue it
};

class ShellReader {
 public:
  // POS maps offsets in TEXT to the user's file; TEXT is a whole script.
  ShellReader(std::string text, PosMap pos, ShellOptions options);

  // Reads the script, calling ON_COMMAND for each simple command reached. Errors: unterminated
  // quotes in the script itself (inside eval / sh -c strings they are notes).
  Status run(const std::function<Status(const ShellCommand&)>& on_command);
  // Runs ARGV (already expanded; offsets index the reader's text) as one command: an exec-form
  // container command (`["sh", "-c", "..."]`, `["vllm", "serve", ...]`).
  Status run_argv(std::vector<ShellWord> argv, const std::function<Status(const ShellCommand&)>& on_command);

  std::vector<ReaderNote>& notes() { return notes_; }
  // Why each unresolved name is unresolved ("set from $(...), which is never run").
  const std::map<std::string, std::string>& reasons() const { return reasons_; }

  struct Impl;

 private:
  std::string text_;
  PosMap pos_;
  ShellOptions options_;
  std::vector<ReaderNote> notes_;
  std::map<std::string, std::string> reasons_;
};

// The words of TEXT (one command line: an argv element list joined, a compose command string)
// expanded with VARS, for forms whose commands are not scripts. Field splitting applies to
// unquoted expansions; separators end nothing (they are kept as words).
Expected<std::vector<ShellWord>> expand_command_text(const std::string& text, const PosMap& pos, const ShellVars& vars,
                                                     std::vector<ReaderNote>& notes);

}  // namespace specprobe::serving
