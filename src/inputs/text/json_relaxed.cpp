// Python-flavoured JSON: the shared scanner's relaxed mode (common/json_scan) finds the bare
// NaN/Infinity/-Infinity words and bounds the nesting; they are rewritten into tokens
// nlohmann::json accepts, keeping a map from rewritten to original offsets for error positions.
#include "inputs/text/json_relaxed.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/excerpt.hpp"
#include "common/json_scan.hpp"

namespace specprobe {
namespace {

constexpr int kMaxJsonDepth = 256;

struct Shift {
  size_t out_pos;  // first rewritten offset after the replacement
  long delta;      // original offset = rewritten offset - delta (for positions >= out_pos)
};

// TEXT with each word replaced (NaN -> null, +-Infinity -> +-1e308), recorded in RESULT.
std::string rewrite_words(std::string_view text, const std::vector<PythonWord>& words, RelaxedJson& result,
                          std::vector<Shift>& shifts) {
  std::string out;
  out.reserve(text.size() + 16);
  long delta = 0;
  size_t copied = 0;
  for (const PythonWord& w : words) {
    out.append(text.substr(copied, w.offset - copied));
    auto [line, col] = json_line_col(text, w.offset);
    result.non_finite.push_back({std::string(w.word), line, col});
    const std::string_view replacement = w.word == "NaN" ? "null" : w.word == "Infinity" ? "1e308" : "-1e308";
    out.append(replacement);
    delta += static_cast<long>(replacement.size()) - static_cast<long>(w.word.size());
    shifts.push_back({out.size(), delta});
    copied = w.offset + w.word.size();
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace

Expected<RelaxedJson> parse_json_relaxed(std::string_view text, const std::string& file) {
  // Nesting is bounded before nlohmann builds (and later copies and destroys, recursively) the tree.
  const PythonWords scan = scan_python_words(text, kMaxJsonDepth);
  if (scan.too_deep) {
    auto [line, col] = json_line_col(text, scan.too_deep_at);
    return input_error(fmt::format("JSON nests deeper than {} levels", kMaxJsonDepth), {file, line, col});
  }
  RelaxedJson result;
  std::vector<Shift> shifts;
  const std::string out = rewrite_words(text, scan.words, result, shifts);
  try {
    result.value = Json::parse(out);
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based offset of the last character read in the rewritten text.
    size_t pos = e.byte > 0 ? e.byte - 1 : 0;
    long d = 0;
    for (const Shift& s : shifts)
      if (pos >= s.out_pos) d = s.delta;
    const size_t orig = static_cast<size_t>(std::max<long>(0, static_cast<long>(pos) - d));
    auto [line, col] = json_line_col(text, orig);
    std::string what = json_error_reason(e);
    if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    return input_error(fmt::format("invalid JSON: {}", what), SourceLocation{file, line, col});
  } catch (const Json::exception& e) {
    // out_of_range.406: a number beyond double's range (1e999), which nlohmann refuses.
    return input_error(fmt::format("invalid JSON: {}", json_error_reason(e)), SourceLocation{file});
  }
  return result;
}

Expected<RelaxedJson> read_json_relaxed_file(const std::string& path) {
  // Bounded: a config.json is kilobytes; a huge or endlessly growing file is refused, not slurped.
  // A FIFO or device in a checkpoint directory would block the open or never end.
  constexpr size_t kMaxBytes = 64u << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return input_error("not a regular file", SourceLocation{path});
  std::ifstream in(path, std::ios::binary);
  if (!in) return input_error("cannot open file", SourceLocation{path});
  std::string text;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxBytes)
      return input_error(fmt::format("file is larger than {} MiB; not a model config", kMaxBytes >> 20),
                         SourceLocation{path});
  }
  if (in.bad()) return input_error("cannot read file", SourceLocation{path});
  return parse_json_relaxed(text, path);
}

}  // namespace specprobe
