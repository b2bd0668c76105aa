// The shared JSON scanner (see json_scan.hpp): strict cursor steps, value skipping, line/column
// of an offset, and the relaxed mode's lexical walk for Python's non-finite words.
#include "common/json_scan.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/utf8.hpp"

namespace specprobe {

bool JsonScanner::fail(std::string_view what) {
  if (err_.empty()) err_ = fmt::format("{} at byte {}", what, pos_);
  return false;
}

bool JsonScanner::validate_utf8() {
  const size_t bad = first_invalid_utf8(std::string_view(s_, n_));
  if (bad == std::string_view::npos) return true;
  if (err_.empty()) err_ = fmt::format("invalid UTF-8 at byte {}", bad);
  return false;
}

bool JsonScanner::expect(char c) {
  if (consume(c)) return true;
  return fail(fmt::format("expected '{}'", c));
}

bool JsonScanner::string(std::string_view& out) {
  ws();
  if (pos_ >= n_ || s_[pos_] != '"') return fail("expected a string");
  ++pos_;
  const size_t start = pos_;
  // Fast path: no escapes.
  while (pos_ < n_ && s_[pos_] != '"' && s_[pos_] != '\\') {
    if (static_cast<unsigned char>(s_[pos_]) < 0x20) return fail("control character in string");
    ++pos_;
  }
  size_t w = pos_;  // write position, never past pos_
  while (pos_ < n_ && s_[pos_] != '"') {
    char c = s_[pos_++];
    if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
    if (c != '\\') {
      s_[w++] = c;
      continue;
    }
    if (pos_ >= n_) break;
    c = s_[pos_++];
    switch (c) {
      case '"':
        s_[w++] = '"';
        break;
      case '\\':
        s_[w++] = '\\';
        break;
      case '/':
        s_[w++] = '/';
        break;
      case 'b':
        s_[w++] = '\b';
        break;
      case 'f':
        s_[w++] = '\f';
        break;
      case 'n':
        s_[w++] = '\n';
        break;
      case 'r':
        s_[w++] = '\r';
        break;
      case 't':
        s_[w++] = '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp)) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          if (pos_ + 1 < n_ && s_[pos_] == '\\' && s_[pos_ + 1] == 'u') {
            pos_ += 2;
            if (!hex4(lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return fail("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            return fail("lone surrogate");
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("lone surrogate");
        }
        put_utf8(w, cp);  // 6 (or 12) escape bytes become at most 3 (or 4)
        break;
      }
      default:
        return fail("invalid escape");
    }
  }
  if (pos_ >= n_) return fail("unterminated string");
  out = std::string_view(s_ + start, w - start);
  ++pos_;
  return true;
}

bool JsonScanner::uint(uint64_t& out) {
  ws();
  if (pos_ >= n_) return fail("expected a number");
  if (s_[pos_] == '-') return fail("negative number");
  if (s_[pos_] < '0' || s_[pos_] > '9') return fail("expected a number");
  out = 0;
  const size_t start = pos_;
  while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') {
    const uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
    if (out > (UINT64_MAX - d) / 10) return fail("number out of range");
    out = out * 10 + d;
    ++pos_;
  }
  if (s_[start] == '0' && pos_ - start > 1) return fail("leading zero");
  if (pos_ < n_ && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) return fail("expected an integer");
  return true;
}

bool JsonScanner::digits() {
  const size_t d0 = pos_;
  while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
  return pos_ > d0 || fail("expected a digit");
}

bool JsonScanner::number() {
  ws();
  if (pos_ < n_ && s_[pos_] == '-') ++pos_;
  if (pos_ < n_ && s_[pos_] == '0') {
    ++pos_;
  } else if (pos_ < n_ && s_[pos_] >= '1' && s_[pos_] <= '9') {
    digits();
  } else {
    return fail("expected a digit");
  }
  if (pos_ < n_ && s_[pos_] == '.') {
    ++pos_;
    if (!digits()) return false;
  }
  if (pos_ < n_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < n_ && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
    if (!digits()) return false;
  }
  return true;
}

bool JsonScanner::literal() {
  ws();
  for (std::string_view lit : {"true", "false", "null"})
    if (std::string_view(s_ + pos_, n_ - pos_).substr(0, lit.size()) == lit) {
      pos_ += lit.size();
      return true;
    }
  return false;
}

bool JsonScanner::skip_value(int depth) {
  if (depth > opt_.max_depth) return fail("nesting too deep");
  ws();
  if (pos_ >= n_) return fail("expected a value");
  const char c = s_[pos_];
  std::string_view tmp;
  if (c == '"') return string(tmp);
  if (c == '{') return members([&](std::string_view) { return skip_value(depth + 1); });
  if (c == '[') return elements([&] { return skip_value(depth + 1); });
  if (literal()) return true;
  if (c != '-' && (c < '0' || c > '9')) return fail("invalid value");
  if (!opt_.lax_skipped_numbers) return number();
  ++pos_;
  while (pos_ < n_ && s_[pos_] != '\0' && std::strchr("0123456789.eE+-", s_[pos_])) ++pos_;
  return true;
}

bool JsonScanner::hex4(uint32_t& out) {
  if (pos_ + 4 > n_) return fail("short \\u escape");
  out = 0;
  for (int i = 0; i < 4; ++i) {
    const char h = s_[pos_++];
    out <<= 4;
    if (h >= '0' && h <= '9')
      out |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f')
      out |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F')
      out |= static_cast<uint32_t>(h - 'A' + 10);
    else
      return fail("invalid \\u escape");
  }
  return true;
}

void JsonScanner::put_utf8(size_t& w, uint32_t cp) {
  if (cp < 0x80) {
    s_[w++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    s_[w++] = static_cast<char>(0xC0 | (cp >> 6));
    s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s_[w++] = static_cast<char>(0xE0 | (cp >> 12));
    s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s_[w++] = static_cast<char>(0xF0 | (cp >> 18));
    s_[w++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::pair<int, int> json_line_col(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

namespace {

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The non-finite word at I of TEXT (outside a string), or "".
std::string_view python_word_at(std::string_view text, size_t i) {
  const char c = text[i];
  // Compared only where a word can start: comparing at every byte outside strings was most of
  // the relaxed parse's time in the instrumented fuzz builds.
  if (c != '-' && c != 'I' && c != 'N') return {};
  std::string_view word;
  for (std::string_view w : {"-Infinity", "Infinity", "NaN"})
    if (text.substr(i, w.size()) == w) {
      word = w;
      break;
    }
  if (word.empty() || (i > 0 && is_ident_char(text[i - 1]))) return {};
  if (i + word.size() < text.size() && is_ident_char(text[i + word.size()])) return {};
  return word;
}

}  // namespace

PythonWords scan_python_words(std::string_view text, int max_depth) {
  PythonWords out;
  bool in_string = false;
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\' && i + 1 < text.size()) {
        i += 2;
        continue;
      }
      in_string = c != '"';
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        out.too_deep = true;
        out.too_deep_at = i;
        return out;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (const std::string_view word = python_word_at(text, i); !word.empty()) {
      out.words.push_back({i, word});
      i += word.size();
      continue;
    }
    ++i;
  }
  return out;
}

}  // namespace specprobe
