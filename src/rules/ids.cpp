// See ids.hpp.
#include "rules/ids.hpp"

#include <array>

namespace specprobe {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool is_rule_id(std::string_view id) {
  return id.size() == 6 && id.substr(0, 2) == "SP" && id[2] >= '1' && id[2] <= '9' && digit(id[3]) && digit(id[4]) &&
         digit(id[5]);
}

bool is_advisory_id(std::string_view id) {
  static constexpr std::array<std::string_view, 8> kProjects = {"VLLM",      "SGLANG", "FLASHINFER", "DEEPGEMM",
                                                                "FLASHATTN", "TRTLLM", "TRITON",     "TORCH"};
  if (!id.starts_with("SPA-")) return false;
  id.remove_prefix(4);
  const size_t dash = id.find('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view project = id.substr(0, dash);
  bool known = false;
  for (const auto p : kProjects) known = known || p == project;
  if (!known) return false;
  std::string_view rest = id.substr(dash + 1);
  if (!rest.empty() && rest.back() >= 'a' && rest.back() <= 'z') rest.remove_suffix(1);
  if (rest.empty()) return false;
  for (char c : rest)
    if (!digit(c)) return false;
  return true;
}

bool is_iso_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!digit(s[i])) return false;
  const int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool is_id_pattern(std::string_view pattern) { return !pattern.empty() && pattern.back() == '*'; }

bool id_matches(std::string_view pattern, std::string_view id) {
  return is_id_pattern(pattern) ? id.starts_with(pattern.substr(0, pattern.size() - 1)) : id == pattern;
}

}  // namespace specprobe
