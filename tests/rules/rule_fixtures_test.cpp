// Runs every rule's fixtures (rules/**/SPnnnn-*.test.yaml) against the built-in rules: each case's
// facts (a base from tests/rules/bases/ deep-merged with the case's facts; inputs only, see
// tests/support/fixture_plan.hpp) go through the same derivation as a real run, and the rule's
// status must match. Also enforces the catalog's
// invariants: every rule has a failing and a passing case and a doc page.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "../support/fixture_plan.hpp"
#include "common/embedded.hpp"
#include "common/yaml_json.hpp"
#include "facts/derive.hpp"
#include "rules/evaluate.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

namespace {

const std::vector<fs::path> kRuleBaseDirs = {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"};

Json load_yaml_file(const fs::path& p) { return specprobe::testing::load_fixture_yaml(p); }

}  // namespace

TEST_CASE("every rule's fixtures give the expected result", "[rules][fixtures]") {
  auto rules = load_rules(specprobe::testing::fixture_catalog_dir("rules"));
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
      INFO("case '" << c.value("name", "?") << "'");
      auto made = specprobe::testing::fixture_facts(c, kRuleBaseDirs);
      if (!made) FAIL_CHECK(made.error().message);
      if (!made) continue;
      const Json& facts = *made;
      const RuleResult r = evaluate_rule(*by_id[id], facts, {}, "serve.yaml");
      const std::string expect = c.at("expect").get<std::string>();
      // A note about older releases only (the version unknown) is "note" (rules/affected.hpp).
      const std::string got = r.status == ResultStatus::fail && !r.only_before.empty()
                                  ? std::string("note")
                                  : std::string(to_string(r.status));
      INFO("case '" << c.value("name", "?") << "': got " << got << " (" << r.message << ")");
      CHECK(got == expect);
      if (c.contains("message_contains"))
        for (const auto& want :
             c["message_contains"].is_array() ? c["message_contains"] : Json::array({c["message_contains"]}))
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
