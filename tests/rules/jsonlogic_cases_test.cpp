// Runs tests/data/jsonlogic/cases.json: [logic, data, expected] triples covering every JSON Logic
// operator, the JavaScript coercion corners and the specprobe "ver*" operators.
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rules/jsonlogic.hpp"

namespace {

using nlohmann::json;

json load_cases() {
  std::ifstream in(std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/jsonlogic/cases.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// Numbers compare by value whatever their JSON representation (2 == 2.0); everything else by
// type and value, so true never matches 1.
bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !same(it.value(), b.at(it.key()))) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

TEST_CASE("jsonlogic fixture cases", "[jsonlogic]") {
  const json cases = load_cases();
  REQUIRE(cases.is_array());
  std::string section;
  int run = 0;
  for (const json& c : cases) {
    if (c.is_string()) {
      section = c.get<std::string>();
      continue;
    }
    REQUIRE(c.is_array());
    REQUIRE(c.size() == 3);
    const json& logic = c[0];
    const json& data = c[1];
    const json& expected = c[2];
    INFO(section << ": " << logic.dump() << " over " << data.dump());

    auto result = specprobe::jsonlogic::evaluate(logic, data);
    REQUIRE(result.has_value());
    INFO("got " << result->dump() << ", want " << expected.dump());
    CHECK(same(*result, expected));
    // Compiled once (the rules' path), with the logic it was compiled from gone: the same answer.
    auto program = std::make_unique<specprobe::jsonlogic::Program>(json(logic));
    auto compiled = program->evaluate(data);
    REQUIRE(compiled.has_value());
    CHECK(same(*compiled, expected));
    std::string error;
    CHECK(program->test(data, &error) == specprobe::jsonlogic::truthy(expected));
    CHECK(error.empty());
    ++run;
  }
  CHECK(run >= 350);
}

TEST_CASE("jsonlogic fixture covers every operator", "[jsonlogic]") {
  const json cases = load_cases();
  std::set<std::string> seen;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_array()) {
      for (const json& e : v) walk(e);
    } else if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (v.size() == 1) seen.insert(it.key());
        walk(it.value());
      }
    }
  };
  for (const json& c : cases) {
    if (c.is_array()) walk(c[0]);
  }
  for (const char* op : {"var",    "missing", "missing_some", "if",     "?:",    "==",   "===",   "!=",
                         "!==",    "<",       "<=",           ">",      ">=",    "!",    "!!",    "and",
                         "or",     "in",      "cat",          "substr", "+",     "-",    "*",     "/",
                         "%",      "min",     "max",          "merge",  "all",   "some", "none",  "map",
                         "filter", "reduce",  "log",          "ver<",   "ver<=", "ver>", "ver>=", "ver==",
                         "ver!=",  "ver_in",  "ver_known"}) {
    INFO(op);
    CHECK(seen.count(op) == 1);
  }
}

// validate() is stricter than evaluate(): the fixture's deliberately odd shapes (empty and/or,
// literal strings that are not versions) evaluate like json-logic-js but are rejected at load.
TEST_CASE("jsonlogic fixture logic passes validate except deliberate corners", "[jsonlogic]") {
  const json cases = load_cases();
  std::vector<std::string> rejected;
  for (const json& c : cases) {
    if (!c.is_array()) continue;
    if (!specprobe::jsonlogic::validate(c[0])) rejected.push_back(c[0].dump());
  }
  const std::vector<std::string> want = {
      R"({"and":[]})",
      R"({"or":[]})",
      R"({"ver<":["garbage","1.0"]})",
      R"({"ver>=":["garbage","1.0"]})",
      R"({"ver_in":["junk",">=0"]})",
  };
  CHECK(rejected == want);
}
