// Runs every rule's fixtures (rules/**/SPnnnn-*.test.yaml) against the built-in rules: each case's
// facts (a base from tests/rules/bases/ deep-merged with the case's facts) go through the same
// derivation as a real run, and the rule's status must match. Also enforces the catalog's
// invariants: every rule has a failing and a passing case and a doc page.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/embedded.hpp"
#include "common/yaml_json.hpp"
#include "facts/derive.hpp"
#include "rules/engine.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json load_yaml_file(const fs::path& p) {
  auto j = parse_yaml_text(slurp(p), p.string());
  REQUIRE(j.has_value());
  return *j;
}

const Json& base_facts(const std::string& name) {
  static std::map<std::string, Json> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const fs::path p = fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases" / (name + ".yaml");
  INFO("base " << p);
  REQUIRE(fs::exists(p));
  return cache[name] = load_yaml_file(p);
}

}  // namespace

TEST_CASE("every rule's fixtures give the expected result", "[rules][fixtures]") {
  auto rules = load_rules();
  REQUIRE(rules.has_value());
  std::map<std::string, const Rule*> by_id;
  for (const auto& r : *rules) by_id[r.id] = &r;

  std::map<std::string, std::set<std::string>> seen;  // id -> expectations seen
  size_t cases = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SPECPROBE_SOURCE_DIR) / "rules")) {
    const std::string path = e.path().string();
    if (!path.ends_with(".test.yaml")) continue;
    const Json doc = load_yaml_file(e.path());
    const std::string id = doc.value("rule", "");
    INFO("fixture file " << path);
    REQUIRE(by_id.count(id) == 1);
    REQUIRE(e.path().filename().string().rfind(id + "-", 0) == 0);
    for (const auto& c : doc.at("cases")) {
      Json facts = c.contains("base") ? base_facts(c["base"].get<std::string>()) : Json::object();
      if (c.contains("facts")) facts.merge_patch(c["facts"]);
      derive_facts(facts);
      const RuleResult r = evaluate_rule(*by_id[id], facts, {}, "serve.yaml");
      const std::string expect = c.at("expect").get<std::string>();
      INFO("case '" << c.value("name", "?") << "': got " << to_string(r.status) << " (" << r.message << ")");
      CHECK(std::string(to_string(r.status)) == expect);
      if (c.contains("message_contains"))
        for (const auto& want : c["message_contains"].is_array() ? c["message_contains"] : Json::array({c["message_contains"]}))
          CHECK(r.message.find(want.get<std::string>()) != std::string::npos);
      seen[id].insert(expect);
      ++cases;
    }
  }
  CHECK(cases > 0);
  for (const auto& r : *rules) {
    if (r.deprecated) continue;
    INFO("rule " << r.id);
    CHECK(seen[r.id].count("fail") == 1);
    CHECK(seen[r.id].count("pass") == 1);
    CHECK(embedded_file("docs/rules/" + r.id + ".md").has_value());
  }
}
