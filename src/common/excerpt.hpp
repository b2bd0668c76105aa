// Quoting input in messages (SECURITY.md, "What messages quote"). A config under review can point
// specprobe at any local file, and its messages end up in CI logs, SARIF, JUnit and annotations
// that a pull request's author can read: a message quotes at most a short excerpt of what was
// read, never a whole value, line or token, and only from files the user named (the config, its
// directory tree, the --model checkpoint). Every reader message that quotes input goes through
// these helpers.
#pragma once
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "common/json.hpp"

namespace specprobe {

inline constexpr size_t kExcerptMax = 32;

// TEXT with every token-like string cut to its prefix and two characters ("hf_ab***"): Hugging Face
// (hf_), OpenAI / Anthropic (sk-), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab
// (glpat-), Slack (xox?-), AWS access key ids (AKIA..., ASIA...) and "Bearer <credential>". A
// token is its prefix at a word start followed by as many characters of its format as the vendor's
// shortest (20 for most; a key name such as hf_overrides is not one). Every excerpt() applies it,
// so no message quotes more of a secret than that.
std::string redact_secrets(std::string_view text);
// Whether TEXT holds a token-like string (as redact_secrets finds them).
bool has_secret(std::string_view text);

// At most MAX characters of TEXT with its secrets redacted (code points; a byte that is not valid
// UTF-8 counts as one),
// cut at a character boundary with "..." appended when longer. Control characters are escaped:
// \n \r \t, \xNN for other C0 bytes, DEL and invalid bytes, \u{NNNN} for C1 controls and the
// invisible format characters that reorder or hide text (bidi overrides and isolates, zero-width
// characters, BOM), so an excerpt cannot forge a line or hide what it holds.
std::string excerpt(std::string_view text, size_t max = kExcerptMax);
inline std::string excerpt(const std::string& text, size_t max = kExcerptMax) {
  return excerpt(std::string_view(text), max);
}
inline std::string excerpt(const char* text, size_t max = kExcerptMax) { return excerpt(std::string_view(text), max); }

// A name (tensor, shard, key) for a message: its first and last characters, MAX in all, when it is
// longer ("model.layers.61.s...proj.weight"), escaped as above.
std::string excerpt_name(std::string_view name, size_t max = kExcerptMax);

// A JSON value for a message: a string's text, any other value's JSON text, cut as above.
std::string excerpt(const Json& value, size_t max = kExcerptMax);

// The reason of a nlohmann::json exception for a message: without the "[json.exception.K.N] "
// prefix and the "parse error at line L, column C: " position (the caller reports the position,
// mapped to the original text); the "last read: '...'" token nlohmann appends (up to a whole
// string literal of the input) is cut to an excerpt, or dropped when QUOTE is false.
std::string json_error_reason(const std::exception& e, bool quote = true);

}  // namespace specprobe
