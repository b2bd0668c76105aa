// Text helpers shared by the serving-configuration readers: offset -> line:column tables, input
// sanity checks (size, UTF-8, NUL bytes), JSON parsing with a depth bound and error positions,
// a JSON key-position scanner, vLLM's human-readable integers and PyYAML-style scalar typing.
// Internal to the serving readers (src/inputs/*/); no I/O except read_text_file.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ascii.hpp"
#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe::serving {

// A value set in the environment (an exported variable, a VAR=x prefix, a container's env entry),
// with where it was set.
struct EnvSetting {
  std::string value;
  SourceLocation where;
};

inline constexpr size_t kMaxInputBytes = 16u << 20;  // 16 MiB: configs and scripts are tiny
inline constexpr int kMaxNesting = 64;               // deeper YAML/JSON nesting is refused

// Maps byte offsets of one text to 1-based line:column (columns count bytes).
class LineIndex {
 public:
  LineIndex() = default;
  LineIndex(std::string file, std::string_view text);
  SourceLocation at(size_t offset) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<size_t> starts_;
  size_t size_ = 0;
};

// Maps an offset inside a decoded string value to a place in the user's file.
using PosMap = std::function<SourceLocation(size_t)>;

// The line of TEXT that starts at START, without its '\n'; START moves past it. A loop over the
// lines: `for (size_t at = 0; at < text.size();) { const auto line = next_line(text, at); ... }`.
std::string_view next_line(std::string_view text, size_t& start);

// Reads a whole file, refusing more than kMaxInputBytes. Errors are input errors naming the file.
Expected<std::string> read_text_file(const std::string& path);

// Rejects empty text, NUL bytes and invalid UTF-8 (error names file:line:col of the first bad byte).
Status check_text(const LineIndex& index, std::string_view text);

// Parses JSON, refusing nesting deeper than kMaxNesting. `pos` maps offsets in `text` to the
// user's file; `what` names the value in messages ("speculative-config").
Expected<Json> parse_json(std::string_view text, const PosMap& pos, std::string_view what);

// Locations of every object key in valid JSON text: "a.b" -> offset of the key's opening quote.
std::map<std::string, size_t> json_key_offsets(std::string_view text);

// vLLM's human_readable_int: "1k"=1000, "1K"=1024, "25.6k"=25600, "256K"=262144, plain ints.
std::optional<int64_t> human_readable_int(std::string_view s);

// A plain (unquoted) YAML scalar typed the way PyYAML's safe_load types it (YAML 1.1):
// null, bool (true/yes/on...), int, float with a dot; anything else stays a string.
Json yaml_plain_scalar(const std::string& s);

// A command-line / dotted-argument value typed the way vLLM does for dotted keys:
// JSON if it parses, else a human-readable int, else the string.
Json cli_value(const std::string& s);

// The last '/'-separated part of a command word: /usr/bin/env is env, python3 is python3.
inline std::string base_name(const std::string& s) {
  const size_t p = s.rfind('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}

}  // namespace specprobe::serving
