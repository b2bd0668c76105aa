// PyRegex: Python re.match semantics on the patterns checkpoint configs carry, refusals with
// Python's own reasons, and linear time on the inputs that made std::regex run away.
#include "common/py_regex.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

using specprobe::PyRegex;

namespace {

std::string refusal(const std::string& pattern) {
  auto r = PyRegex::compile(pattern);
  const auto* why = std::get_if<std::string>(&r);
  return why ? *why : std::string();
}

bool match(const std::string& pattern, const std::string& value) {
  auto r = PyRegex::compile(pattern);
  INFO(pattern << " refused: " << refusal(pattern));
  REQUIRE(std::holds_alternative<PyRegex>(r));
  return std::get<PyRegex>(r).match(value);
}

}  // namespace

TEST_CASE("PyRegex: re.match results agree with Python 3.11", "[py_regex]") {
  // {pattern, value, Python 3.11 re.match(pattern, value) is not None}, computed with CPython.
  const std::vector<std::tuple<std::string, std::string, bool>> cases = {
      {".*mtp.*", "model.layers.61.mtp.eh_proj", true},
      {".*mtp.*", "model.layers.0.mlp", false},
      {"model\\.layers\\.6[1-9]\\..*", "model.layers.61.embed", true},
      {"model\\.layers\\.6[1-9]\\..*", "model.layers.60.embed", false},
      {"lm_head", "lm_head.weight", true},
      {"lm_head$", "lm_head.weight", false},
      {"lm_head$", "lm_head\n", true},
      {".*self_attn\\.(q|k|v)_proj$", "model.layers.3.self_attn.k_proj", true},
      {".*self_attn\\.(q|k|v)_proj$", "model.layers.3.self_attn.o_proj", false},
      {"mlp", "model.mlp", false},
      {"(?:model\\.)?layers\\.\\d+\\.mlp\\.gate$", "layers.12.mlp.gate", true},
      {"(?P<n>layers)\\.\\d{1,2}\\.", "layers.123.", false},
      {"(?P<n>layers)\\.\\d{1,3}\\.", "layers.123.", true},
      {"a{2,}b", "aab", true},
      {"a{2,}b", "ab", false},
      {"a{,2}b", "aaab", false},
      {"x{", "x{", true},
      {"a{,}", "a{,}", true},
      {"[^.]+\\.weight\\Z", "proj.weight", true},
      {"[^.]+\\.weight\\Z", "a.b.weight", false},
      {"\\bmtp\\b", "mtp.x", true},
      {"\\Bmtp", "mtp", false},
      {"[\\w-]+", "-", true},
      {"\\s*\\S", "  x", true},
      {"[]a]+", "]a]", true},
      {"[a-]+$", "a-a", true},
      {"\\x41", "A", true},
      {"(a|ab)(c|bcd)(d*)$", "abcd", true},
      {".*", "", true},
      {"\\B", "", false},
      {"(a*)*$", "aaaa", true},
      {"(a|a)*b", "aaaa", false},
      {"a*?$", "aaa", true},
      {"a??b", "b", true},
      {"\\.", "x", false},
      {"\xc3\xa9+", "\xc3\xa9\xc3\xa9", true},
      {"[^a]", "\xc3\xa9", true},
      {".$", "\n", false},
      {"^.", "\n", false},
  };
  for (const auto& [pattern, value, expected] : cases) {
    INFO("re.match(" << pattern << ", " << value << ")");
    CHECK(match(pattern, value) == expected);
  }
}

TEST_CASE("PyRegex: refuses what Python rejects and what it does not implement, naming why", "[py_regex]") {
  // Python: "multiple repeat" / "nothing to repeat" / ... (errors); the rest Python accepts but
  // a Thompson NFA cannot run.
  CHECK(refusal(".+*mtp.*") == "multiple repeat at position 3");
  CHECK(refusal("a**").find("multiple repeat") == 0);
  CHECK(refusal("a{2}{3}").find("multiple repeat") == 0);
  CHECK(refusal("*a").find("nothing to repeat") == 0);
  CHECK(refusal("{2}").find("nothing to repeat") == 0);
  CHECK(refusal("^*").find("nothing to repeat") == 0);
  CHECK(refusal("(a").find("missing )") == 0);
  CHECK(refusal("a)").find("unbalanced parenthesis") == 0);
  CHECK(refusal("[a").find("unterminated character set") == 0);
  CHECK(refusal("a{3,2}").find("min repeat greater than max repeat") == 0);
  CHECK(refusal("[z-a]").find("bad character range") == 0);
  CHECK(refusal("[\\d-z]").find("bad character range") == 0);
  CHECK(refusal("(?P<x>a)(?P<x>b)").find("redefinition of group name") == 0);
  CHECK(refusal("\\p{L}").find("unsupported escape \\p") == 0);
  CHECK(refusal("(?=a)").find("lookaround") == 0);
  CHECK(refusal("(?<!a)b").find("lookaround") == 0);
  CHECK(refusal("(?i)mtp").find("inline flags") == 0);
  CHECK(refusal("(a)\\1").find("backreferences") == 0);
  CHECK(refusal("a*+").find("possessive") == 0);
  CHECK(refusal("a{1001}").find("repeat count over 1000") == 0);
  CHECK(refusal(std::string(513, 'a')) == "pattern longer than 512 bytes");
  CHECK(refusal(std::string(17, '(') + std::string(17, ')')) == "groups nested deeper than 16 at position 17");
  CHECK(refusal("(a{1000}){1000}") == "pattern compiles to over 4096 instructions");
  CHECK(refusal("a{1000}").empty());
}

TEST_CASE("PyRegex: patterns that backtrack exponentially in std::regex run in one pass", "[py_regex]") {
  // Each of these takes seconds to years in a backtracking engine on these names; a Thompson NFA
  // visits every position once. (No timing assertion: a regression would hit ctest's timeout.)
  const std::string as(20000, 'a');
  CHECK_FALSE(match("(a*)*b", as));
  CHECK_FALSE(match("(a|a)*b", as));
  CHECK_FALSE(match("(((a*)*)*)*b", as));
  CHECK_FALSE(match(".*a.*a.*a.*a.*a.*a.*aX", as));
  CHECK(match("(a|aa)*$", as));
  CHECK(match(".*.*.*.*mtp", as + "mtp"));
  const std::string dotted(200000, '.');
  CHECK_FALSE(match("(\\.|\\.\\.)*x", dotted));
}
