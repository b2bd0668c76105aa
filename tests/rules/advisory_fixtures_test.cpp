// Runs every advisory's fixtures (advisories/<project>/SPA-*.test.yaml) through the same harness
// as the rules' (tests/support/fixture_plan.hpp: inputs only, then derived): each case's status
// must match (fail = fires; note = fires as info because a version is unknown and only older
// releases are affected). Also enforces the database's invariants: every advisory has a case that
// fires, a neighbour that does not, and, when a fix is known, a case at the first fixed release
// that does not fire; every advisory loads and cites public sources.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <filesystem>
#include <map>
#include <set>

#include "../support/fixture_plan.hpp"
#include "common/embedded.hpp"
#include "rules/advisory.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

namespace {

const std::vector<fs::path> kAdvisoryBaseDirs = {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases",
                                                 fs::path(SPECPROBE_SOURCE_DIR) / "tests/advisories/bases"};

std::string outcome(const RuleResult& r) {
  if (r.status == ResultStatus::fail && r.severity == Severity::info && r.message.rfind("if you run ", 0) == 0)
    return "note";
  return std::string(to_string(r.status));
}

}  // namespace

TEST_CASE("every advisory loads and cites a public report", "[advisories]") {
  auto all = load_advisories(specprobe::testing::fixture_catalog_dir("advisories"));
  REQUIRE(all.has_value());
  CHECK(all->size() >= 200);
  for (const auto& a : *all) {
    INFO(a.id);
    CHECK(a.primary_url().rfind("https://", 0) == 0);
    CHECK(a.published >= "2025-01-01");
  }
}

TEST_CASE("every advisory's fixtures give the expected result", "[advisories][fixtures]") {
  auto all = load_advisories(specprobe::testing::fixture_catalog_dir("advisories"));
  REQUIRE(all.has_value());
  std::map<std::string, const Advisory*> by_id;
  for (const auto& a : *all) by_id[a.id] = &a;
  // The built-in image's advisories: each trigger decoded and compiled at its first use.
  auto image = read_advisory_image(embedded_advisory_image());
  REQUIRE(image.has_value());
  std::map<std::string, const Advisory*> image_by_id;
  for (const auto& a : *image) image_by_id[a.id] = &a;
  std::map<std::string, std::set<std::string>> seen;
  std::map<std::string, bool> fixed_case;
  size_t cases = 0, fixed_messages = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SPECPROBE_SOURCE_DIR) / "advisories")) {
    const std::string path = e.path().string();
    if (!path.ends_with(".test.yaml")) continue;
    const Json doc = specprobe::testing::load_fixture_yaml(e.path());
    const std::string id = doc.value("advisory", "");
    INFO("fixture file " << path);
    REQUIRE(by_id.count(id) == 1);
    const Advisory& a = *by_id[id];
    for (const auto& c : doc.at("cases")) {
      INFO("case '" << c.value("name", "?") << "'");
      auto made = specprobe::testing::fixture_facts(c, kAdvisoryBaseDirs);
      if (!made) FAIL_CHECK(made.error().message);
      if (!made) continue;
      const RuleResult r = evaluate_advisory(a, *made, {}, "serve.yaml");
      const std::string expect = c.at("expect").get<std::string>();
      INFO("got " << outcome(r) << " (" << r.message << ")");
      CHECK(outcome(r) == expect);
      seen[id].insert(expect);
      // The image's advisory gives the same result, and the evidence names every fact its trigger
      // reads, whether the trigger was evaluated or the result was decided without it.
      REQUIRE(image_by_id.count(id) == 1);
      const RuleResult b = evaluate_advisory(*image_by_id[id], *made, {}, "serve.yaml");
      CHECK(b.status == r.status);
      CHECK(b.severity == r.severity);
      CHECK(b.message == r.message);
      CHECK(b.evidence == r.evidence);
      for (const auto& name : a.trigger_facts()) CHECK(r.evidence.contains(name));
      // On the other engine an engine's advisory does not apply.
      if (a.engine != "any") {
        Json other = *made;
        other["engine"]["name"] = a.engine == "vllm" ? "sglang" : "vllm";
        const RuleResult o = evaluate_advisory(*image_by_id[id], other, {}, "serve.yaml");
        CHECK(o.status == ResultStatus::skip);
        for (const auto& name : a.trigger_facts()) CHECK(o.evidence.contains(name));
      }
      // A case at the first fixed release of every package with a fix must not fire.
      if (expect == "pass")
        for (const auto& [pkg, ver] : a.upgrade)
          if (fact_string(*made, "lib." + pkg + ".version") == ver) {
            fixed_case[id] = true;
            // A release outside every range passes, whatever the trigger says, and says so.
            if (place_versions(a, *made).kind == VersionVerdict::Kind::fixed) {
              CHECK(r.message.find("outside the affected range") != std::string::npos);
              ++fixed_messages;
            }
          }
      ++cases;
    }
  }
  CHECK(cases > 600);
  CHECK(fixed_messages > 100);
  for (const auto& a : *all) {
    INFO("advisory " << a.id);
    CHECK((seen[a.id].count("fail") + seen[a.id].count("note")) >= 1);
    CHECK(seen[a.id].count("pass") == 1);
    if (!a.upgrade.empty()) CHECK(fixed_case[a.id]);
  }
}
