// Excerpts of input for messages (see excerpt.hpp).
#include "common/excerpt.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace specprobe {
namespace {

// The code point of the UTF-8 sequence at S[I] and its length, or length 0 when ill-formed.
std::pair<char32_t, size_t> decode(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {0, 0};
  char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  const char32_t min = n == 1 ? 0 : n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, n};
}

// Characters that reorder, hide or join text without showing: escaped like controls.
bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

// Token formats: the prefix, the characters of the secret after it, and how many at least (the
// vendors' tokens are 20 to 40 such characters, so a key name such as hf_overrides or sk-learn is
// not one).
enum class Body { alnum, alnum_underscore, alnum_dash, token, upper_digit };
struct SecretFormat {
  std::string_view prefix;
  Body body;
  size_t min;
};
constexpr SecretFormat kSecretFormats[] = {{"hf_", Body::alnum, 20},        {"sk-", Body::token, 20},
                                           {"ghp_", Body::alnum, 20},       {"gho_", Body::alnum, 20},
                                           {"ghu_", Body::alnum, 20},       {"ghs_", Body::alnum, 20},
                                           {"ghr_", Body::alnum, 20},       {"github_pat_", Body::alnum_underscore, 20},
                                           {"glpat-", Body::token, 20},     {"xoxb-", Body::alnum_dash, 10},
                                           {"xoxp-", Body::alnum_dash, 10}, {"xoxa-", Body::alnum_dash, 10},
                                           {"xoxs-", Body::alnum_dash, 10}, {"AKIA", Body::upper_digit, 16},
                                           {"ASIA", Body::upper_digit, 16}};

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool token_char(char c) { return alnum(c) || c == '_' || c == '-'; }

bool body_char(Body b, char c) {
  switch (b) {
    case Body::alnum:
      return alnum(c);
    case Body::alnum_underscore:
      return alnum(c) || c == '_';
    case Body::alnum_dash:
      return alnum(c) || c == '-';
    case Body::token:
      return token_char(c);
    case Body::upper_digit:
      return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }
  return false;
}

// The secret starting at TEXT[I]: [begin of what is kept, end of the secret), or {0, 0}.
std::pair<size_t, size_t> secret_at(std::string_view text, size_t i) {
  if (i > 0 && token_char(text[i - 1])) return {0, 0};  // not a word start
  for (const SecretFormat& f : kSecretFormats) {
    if (text.substr(i, f.prefix.size()) != f.prefix) continue;
    size_t end = i + f.prefix.size();
    while (end < text.size() && body_char(f.body, text[end])) ++end;
    if (end - i - f.prefix.size() >= f.min) return {i + f.prefix.size(), end};
  }
  // "Bearer <credential>", any case.
  constexpr std::string_view kBearer = "bearer ";
  if (i + kBearer.size() < text.size()) {
    bool match = true;
    for (size_t k = 0; k < kBearer.size() && match; ++k) match = (text[i + k] | 0x20) == kBearer[k];
    if (match) {
      size_t begin = i + kBearer.size(), end = begin;
      while (end < text.size() && (token_char(text[end]) || text[end] == '.' || text[end] == '~' || text[end] == '+' ||
                                   text[end] == '/' || text[end] == '='))
        ++end;
      if (end - begin >= 16) return {begin, end};
    }
  }
  return {0, 0};
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto [keep, end] = secret_at(text, i);
    if (end == 0) {
      out += text[i++];
      continue;
    }
    out.append(text.substr(i, keep - i));
    out.append(text.substr(keep, 2));
    out += "***";
    i = end;
  }
  return out;
}

bool has_secret(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i)
    if (secret_at(text, i).second != 0) return true;
  return false;
}

std::string excerpt(std::string_view raw, size_t max) {
  // Only a secret that starts within what can be shown matters (MAX code points of 4 bytes at most).
  const size_t window = std::min(raw.size(), max * 4 + 128);
  std::string redacted;
  if (has_secret(raw.substr(0, window)))
    redacted = redact_secrets(raw.substr(0, window)) + std::string(raw.substr(window));
  const std::string_view text = redacted.empty() ? raw : std::string_view(redacted);
  std::string out;
  size_t chars = 0, i = 0;
  while (i < text.size() && chars < max) {
    const auto [cp, n] = decode(text, i);
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (n == 0) {
      out += fmt::format("\\x{:02X}", c);
      ++i;
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned>(cp));
    } else if (invisible(cp)) {
      out += fmt::format("\\u{{{:04X}}}", static_cast<unsigned>(cp));
    } else {
      out.append(text.substr(i, n));
    }
    i += n == 0 ? 0 : n;
    ++chars;
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string excerpt_name(std::string_view name, size_t max) {
  // The tail half could start inside a secret and no longer look like one: redact the whole first.
  if (has_secret(name)) return excerpt_name(redact_secrets(name), max);
  // Characters counted as excerpt() counts them: a byte that starts no valid sequence is one.
  std::vector<size_t> starts;
  for (size_t i = 0; i < name.size();) {
    starts.push_back(i);
    const size_t n = decode(name, i).second;
    i += n == 0 ? 1 : n;
  }
  if (starts.size() <= max) return excerpt(name, max);
  const size_t tail = max - max / 2;
  return excerpt(name, max / 2) + excerpt(name.substr(starts[starts.size() - tail]), tail);
}

std::string excerpt(const Json& value, size_t max) {
  if (value.is_string()) return excerpt(value.get_ref<const std::string&>(), max);
  return excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace), max);
}

std::string json_error_reason(const std::exception& e, bool quote) {
  std::string what = e.what();
  // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
  if (what.rfind("[json.exception.", 0) == 0) {
    if (const size_t p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
    if (what.rfind("parse error", 0) == 0)
      if (const size_t p = what.find(": "); p != std::string::npos) what.erase(0, p + 2);
  }
  // "...; last read: 'TOKEN'" or "...; last read: 'TOKEN'; expected ..." (TOKEN may hold quotes).
  constexpr std::string_view kLastRead = "; last read: '";
  const size_t at = what.find(kLastRead);
  if (at == std::string::npos) return what;
  const size_t begin = at + kLastRead.size();
  size_t end = what.rfind("'; expected ");
  if (end == std::string::npos || end < begin) end = what.size() - 1;
  if (end < begin || what[end] != '\'') end = what.size();
  const std::string rest = end < what.size() ? what.substr(end + 1) : std::string();
  const std::string token = what.substr(begin, end - begin);
  return what.substr(0, at) + (quote ? "; last read: '" + excerpt(token) + "'" : std::string()) + rest;
}

}  // namespace specprobe
