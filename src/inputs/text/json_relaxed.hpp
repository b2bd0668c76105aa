// JSON as Python's json module writes it: RFC 8259 plus the bare tokens NaN, Infinity and
// -Infinity outside strings (Nemotron-H config.json files carry "time_step_limit": [0.0, Infinity]).
// Non-finite tokens become values nlohmann::json can hold (NaN -> null, +-Infinity -> +-1e308) and
// each replacement is recorded, so callers can say that a value was not finite instead of guessing.
// Pure functions; read_json_relaxed_file reads only the named file.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// One bare non-finite token that was replaced.
struct NonFiniteToken {
  std::string token;  // "NaN", "Infinity" or "-Infinity" as written
  int line = 0;       // 1-based position in the original text
  int column = 0;
};

struct RelaxedJson {
  Json value;
  std::vector<NonFiniteToken> non_finite;
};

inline constexpr double kRelaxedInfinity = 1e308;

// Parses TEXT. FILE names the source in error locations. Syntax errors are input errors with
// file:line:col of the offending character in the original text.
Expected<RelaxedJson> parse_json_relaxed(std::string_view text, const std::string& file);

// Reads and parses PATH. Missing/unreadable file -> input error naming it.
Expected<RelaxedJson> read_json_relaxed_file(const std::string& path);

}  // namespace specprobe
