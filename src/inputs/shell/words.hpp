// A small POSIX-shell word splitter for deploy scripts: quotes (also $'...'), backslash escapes,
// line continuations, comments, command separators, redirections and here-documents. It does not
// run anything and expands nothing: every `$NAME`, `${...}`, `$(...)`, `$((...))` and backquote is
// recorded so that the script reader (shell/script.hpp) can substitute what it knows. Every byte
// of a word remembers its source offset.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "inputs/text/text.hpp"

namespace specprobe::serving {

struct ShellExpansion {
  enum Kind {
    plain,    // $NAME, ${NAME}
    braced,   // ${NAME:-word}, ${NAME[@]}, ${#NAME}, ... (expr holds the text between the braces)
    special,  // $1 .. $9, $@, $*, $#, $?, $$, $!, $-, $0
    command,  // $(...) or `...`: never run
    arith,    // $((...))
  };
  size_t pos = 0;    // in ShellWord::text
  size_t len = 0;    // of the expansion's text
  std::string name;  // the variable (name, braced: the parameter; special: the character)
  std::string expr;  // braced: the text between the braces; command/arith: the inner text
  Kind kind = Kind::plain;
  bool quoted = false;  // inside double quotes: no field splitting
};

struct ShellWord {
  enum Kind { word, separator, redirection, heredoc };
  Kind kind = word;
  std::string text;               // after quote removal (operators: the operator text;
                                  // heredoc: the body)
  std::vector<uint32_t> offsets;  // source offset of each byte of text
  size_t start = 0;               // source offset where the word begins (quote included)
  size_t end = 0;                 // source offset just after the word
  bool quoted = false;            // any part was quoted or escaped (heredoc: the delimiter was)
  size_t unquoted_prefix = 0;     // bytes of text before the first quoted/escaped byte
  std::vector<ShellExpansion> expansions;
};

// Splits TEXT into words and operators. An unterminated quote is an input error at its
// opening quote (file:line:col from INDEX). A here-document's body follows its `<<WORD`
// redirection as one `heredoc` word.
Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const LineIndex& index);
// The same with error places from POS (offsets in TEXT -> the user's file).
Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const PosMap& pos);

bool shell_name_start(char c);
bool shell_name_char(char c);

}  // namespace specprobe::serving
