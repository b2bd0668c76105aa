// ASCII case folding and character classes. Option names, dtype names, rule IDs and version
// strings are ASCII by definition, and these never consult the C locale (std::tolower does),
// so a user's LC_ALL cannot change how a flag is matched. One definition for the whole tree:
// the unity build (CMAKE_UNITY_BUILD, on by default) compiles several .cpp files as one, where
// per-file copies of such helpers would collide.
#pragma once
#include <string>
#include <string_view>

namespace specprobe {

constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr char ascii_lower(char c) { return is_ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char ascii_upper(char c) { return is_ascii_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_upper(c);
  return out;
}

// S without leading and trailing spaces, tabs, CRs and LFs.
inline std::string_view ascii_trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace specprobe
