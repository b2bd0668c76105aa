// Python-flavoured JSON: rewrites bare NaN/Infinity/-Infinity outside strings into tokens
// nlohmann::json accepts, keeping a map from rewritten to original offsets for error positions.
#include "inputs/json_relaxed.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace specprobe {
namespace {

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// 1-based line/column of byte offset OFF in TEXT (column counts bytes).
std::pair<int, int> line_col(std::string_view text, size_t off) {
  off = std::min(off, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < off; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(off - line_start) + 1};
}

struct Shift {
  size_t out_pos;  // first rewritten offset after the replacement
  long delta;      // original offset = rewritten offset - delta (for positions >= out_pos)
};

}  // namespace

Expected<RelaxedJson> parse_json_relaxed(std::string_view text, const std::string& file) {
  RelaxedJson result;
  std::string out;
  out.reserve(text.size() + 16);
  std::vector<Shift> shifts;
  long delta = 0;
  bool in_string = false;
  constexpr int kMaxDepth = 256;
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[i + 1]);
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      ++i;
      continue;
    }
    // Bound nesting before nlohmann builds (and later copies and destroys, recursively) the tree.
    if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) {
        auto [line, col] = line_col(text, i);
        return input_error(fmt::format("JSON nests deeper than {} levels", kMaxDepth), {file, line, col});
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
    std::string_view token;
    std::string_view replacement;
    // Compared only where a token can start: comparing at every byte outside strings was most of
    // the parse's time in the instrumented fuzz builds.
    if (c == '-' || c == 'I' || c == 'N') {
      if (text.substr(i, 9) == "-Infinity") {
        token = "-Infinity";
        replacement = "-1e308";
      } else if (text.substr(i, 8) == "Infinity") {
        token = "Infinity";
        replacement = "1e308";
      } else if (text.substr(i, 3) == "NaN") {
        token = "NaN";
        replacement = "null";
      }
    }
    const bool boundary_before = i == 0 || !is_ident_char(text[i - 1]);
    const bool boundary_after =
        !token.empty() && (i + token.size() >= text.size() || !is_ident_char(text[i + token.size()]));
    if (!token.empty() && boundary_before && boundary_after) {
      auto [line, col] = line_col(text, i);
      result.non_finite.push_back({std::string(token), line, col});
      out.append(replacement);
      delta += static_cast<long>(replacement.size()) - static_cast<long>(token.size());
      shifts.push_back({out.size(), delta});
      i += token.size();
      continue;
    }
    out.push_back(c);
    ++i;
  }
  try {
    result.value = Json::parse(out);
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based offset of the last character read in the rewritten text.
    size_t pos = e.byte > 0 ? e.byte - 1 : 0;
    long d = 0;
    for (const Shift& s : shifts)
      if (pos >= s.out_pos) d = s.delta;
    const size_t orig = static_cast<size_t>(std::max<long>(0, static_cast<long>(pos) - d));
    auto [line, col] = line_col(text, orig);
    std::string what = e.what();
    // nlohmann's text starts with "[json.exception.parse_error.101] parse error at line 1, column 2: ".
    if (auto p = what.find(": "); p != std::string::npos) what = what.substr(p + 2);
    if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    return input_error(fmt::format("invalid JSON: {}", what), SourceLocation{file, line, col});
  } catch (const Json::exception& e) {
    // out_of_range.406: a number beyond double's range (1e999), which nlohmann refuses.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return input_error(fmt::format("invalid JSON: {}", what), SourceLocation{file});
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
      return input_error(fmt::format("file is larger than {} MiB; not a model config", kMaxBytes >> 20), SourceLocation{path});
  }
  if (in.bad()) return input_error("cannot read file", SourceLocation{path});
  return parse_json_relaxed(text, path);
}

}  // namespace specprobe
