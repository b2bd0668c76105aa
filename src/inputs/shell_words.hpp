// A small POSIX-shell word splitter for deploy scripts: quotes, backslash escapes, line
// continuations, comments, command separators and redirections. It does not run anything and
// expands nothing; `$NAME` / `${NAME}` uses are recorded so that the caller can substitute
// values assigned earlier in the script. Every byte of a word remembers its source offset.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "inputs/serving_text.hpp"

namespace specprobe::serving {

struct ShellExpansion {
  size_t pos = 0;  // in ShellWord::text
  size_t len = 0;  // of the `$NAME` / `${NAME}` text
  std::string name;
};

struct ShellWord {
  enum Kind { word, separator, redirection };
  Kind kind = word;
  std::string text;                  // after quote removal (operators: the operator text)
  std::vector<uint32_t> offsets;     // source offset of each byte of text
  size_t start = 0;                  // source offset where the word begins (quote included)
  bool quoted = false;               // any part was quoted or escaped
  size_t unquoted_prefix = 0;        // bytes of text before the first quoted/escaped byte
  std::vector<ShellExpansion> expansions;
};

// Splits TEXT into words and operators. An unterminated quote is an input error at its
// opening quote (file:line:col from INDEX).
Expected<std::vector<ShellWord>> split_shell_words(std::string_view text, const LineIndex& index);

}  // namespace specprobe::serving
