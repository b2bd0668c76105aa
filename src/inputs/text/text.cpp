// Text helpers for the serving-configuration readers (see text/text.hpp).
#include "inputs/text/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"

namespace specprobe::serving {

LineIndex::LineIndex(std::string file, std::string_view text) : file_(std::move(file)), size_(text.size()) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(i + 1);
}

SourceLocation LineIndex::at(size_t offset) const {
  SourceLocation loc;
  loc.file = file_;
  if (starts_.empty()) return loc;
  offset = std::min(offset, size_);
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  const size_t line = static_cast<size_t>(it - starts_.begin());  // 1-based
  loc.line = static_cast<int>(line);
  loc.column = static_cast<int>(offset - starts_[line - 1] + 1);
  return loc;
}

std::string_view next_line(std::string_view text, size_t& start) {
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  const std::string_view line = text.substr(start, end - start);
  start = end + 1;
  return line;
}

Expected<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return input_error(fmt::format("cannot open serving configuration '{}'", path), {path});
  std::string text;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes)
      return input_error(fmt::format("file is larger than {} MiB; not a serving configuration", kMaxInputBytes >> 20),
                         {path});
  }
  if (in.bad()) return input_error(fmt::format("cannot read '{}'", path), {path});
  return text;
}

Status check_text(const LineIndex& index, std::string_view text) {
  bool blank = true;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) blank = false;
  if (blank) return input_error("empty file: expected a vLLM/SGLang config or a serve command", {index.file()});
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) return input_error("binary data (NUL byte): not a text configuration", index.at(i));
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0)
      n = 1, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
      n = 2, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
      n = 3, cp = c & 0x07;
    else
      return input_error("invalid UTF-8: not a text configuration", index.at(i));
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= text.size()) return input_error("invalid UTF-8 (truncated sequence)", index.at(i));
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return input_error("invalid UTF-8: not a text configuration", index.at(i));
      cp = (cp << 6) | (cc & 0x3F);
    }
    const bool overlong = (n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return input_error("invalid UTF-8: not a text configuration", index.at(i));
    i += n + 1;
  }
  return Ok{};
}

namespace {

// Offset of the first bracket that nests deeper than kMaxNesting, if any (strings skipped).
std::optional<size_t> too_deep(std::string_view text) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_str) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"')
      in_str = true;
    else if (c == '{' || c == '[') {
      if (++depth > kMaxNesting) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<Json> parse_json(std::string_view text, const PosMap& pos, std::string_view what) {
  if (auto deep = too_deep(text))
    return input_error(fmt::format("{} nests deeper than {} levels", what, kMaxNesting), pos(*deep));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const std::string reason = json_error_reason(e);
    const size_t off = e.byte > 0 ? std::min<size_t>(e.byte - 1, text.size()) : 0;
    return input_error(fmt::format("invalid JSON in {}: {}", what, reason), pos(off));
  } catch (const std::exception& e) {
    return input_error(fmt::format("invalid JSON in {}: {}", what, json_error_reason(e)), pos(0));
  }
}

std::map<std::string, size_t> json_key_offsets(std::string_view text) {
  struct Frame {
    bool object;
    std::string path;
    std::string key;  // object: last key; array: index as text
    size_t index = 0;
    bool expect_key = true;
  };
  std::map<std::string, size_t> out;
  std::vector<Frame> stack;
  auto child_path = [&]() -> std::string {
    if (stack.empty()) return {};
    const Frame& f = stack.back();
    const std::string leaf = f.object ? f.key : std::to_string(f.index);
    return f.path.empty() ? leaf : f.path + "." + leaf;
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      if (stack.size() > static_cast<size_t>(kMaxNesting)) break;
      stack.push_back({c == '{', child_path(), {}, 0, true});
      ++i;
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      ++i;
    } else if (c == ',') {
      if (!stack.empty()) {
        if (stack.back().object)
          stack.back().expect_key = true;
        else
          ++stack.back().index;
      }
      ++i;
    } else if (c == '"') {
      const size_t start = i++;
      std::string s;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) {
          const char e = text[i + 1];
          s += (e == 'n' ? '\n' : e == 't' ? '\t' : e);
          i += 2;
          continue;
        }
        s += text[i++];
      }
      ++i;
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        stack.back().key = s;
        stack.back().expect_key = false;
        out.emplace(child_path(), start);
      }
    } else {
      ++i;
    }
  }
  return out;
}

std::optional<int64_t> human_readable_int(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  const char suffix = s.back();
  static constexpr std::string_view kSuffixes = "kKmMgGtT";
  if (kSuffixes.find(suffix) != std::string_view::npos && s.size() >= 2) {
    const std::string_view num = s.substr(0, s.size() - 1);
    const bool decimal = std::islower(static_cast<unsigned char>(suffix));
    const int exp = static_cast<int>(std::string_view("kmgt").find(static_cast<char>(std::tolower(suffix)))) + 1;
    // digits, optionally one '.' followed by digits
    size_t dot = num.find('.');
    auto all_digits = [](std::string_view d) {
      return !d.empty() && std::all_of(d.begin(), d.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    };
    if (dot == std::string_view::npos ? !all_digits(num)
                                      : (!all_digits(num.substr(0, dot)) || !all_digits(num.substr(dot + 1))))
      return std::nullopt;
    if (!decimal && dot != std::string_view::npos) return std::nullopt;  // vLLM: no decimals with K/M/G/T
    // strtod, not stod: 400 digits overflow a double, and stod would throw out_of_range (HUGE_VAL is refused below)
    const double v = std::strtod(std::string(num).c_str(), nullptr) * std::pow(decimal ? 1000.0 : 1024.0, exp);
    if (v > 9.0e18) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  int64_t out = 0;
  std::string_view digits = s;
  if (digits.front() == '+') digits.remove_prefix(1);
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return out;
}

Json yaml_plain_scalar(const std::string& s) {
  static const char* kNull[] = {"", "~", "null", "Null", "NULL"};
  static const char* kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char* kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  for (const char* n : kNull)
    if (s == n) return nullptr;
  for (const char* t : kTrue)
    if (s == t) return true;
  for (const char* f : kFalse)
    if (s == f) return false;
  // int: [-+]?(0|[1-9][0-9_]*) or 0x..
  {
    std::string d;
    size_t i = 0;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    bool ok = i < s.size();
    for (size_t j = i; j < s.size() && ok; ++j) {
      if (s[j] == '_' && j > i) continue;
      if (s[j] < '0' || s[j] > '9')
        ok = false;
      else
        d += s[j];
    }
    if (ok && !d.empty() && !(d.size() > 1 && d[0] == '0')) {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
      if (ec == std::errc() && p == d.data() + d.size()) return neg ? -v : v;
    }
  }
  // float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?  (PyYAML needs the dot), .inf, .nan
  if (s == ".inf" || s == ".Inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf") return -std::numeric_limits<double>::infinity();
  {
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t digits_start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    if (i > digits_start && i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      bool ok = true;
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+'))
          ++i;
        else
          ok = false;
        const size_t e0 = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        ok = ok && i > e0;
      }
      if (ok && i == s.size()) {
        std::string clean;
        for (char ch : s)
          if (ch != '_') clean += ch;
        try {
          return std::stod(clean);
        } catch (...) {
        }
      }
    }
  }
  return s;
}

Json cli_value(const std::string& s) {
  if (!too_deep(s)) {
    try {
      return Json::parse(s);
    } catch (...) {
    }
  }
  if (auto v = human_readable_int(s)) return *v;
  return s;
}

}  // namespace specprobe::serving
