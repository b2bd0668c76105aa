// A result counted only (PassDetail::counted, rules/result.hpp) decides exactly what the full
// result decides: the compact JSON report of a many-file run builds passing and not applicable
// results without their evidence and texts (issue 49), and must count, gate and list the same.
#include <catch2/catch.hpp>

#include <filesystem>

#include "rules/catalog.hpp"
#include "support/fixture_plan.hpp"

using namespace specprobe;

TEST_CASE("results counted only have the full results' status, kinds and failures", "[rules][results]") {
  auto catalog = load_catalog();
  REQUIRE(catalog);
  size_t counted_only = 0, whole = 0;
  for (auto [label, facts] : specprobe::testing::neighbour_plans()) {
    specprobe::testing::derive_plan(facts);
    INFO(label);
    const auto full = evaluate_catalog(**catalog, facts, {}, "serve.yaml", 2);
    const auto lean = evaluate_catalog(**catalog, facts, {}, "serve.yaml", 2, PassDetail::counted);
    REQUIRE(full.size() == lean.size());
    for (size_t i = 0; i < full.size(); ++i) {
      const RuleResult& f = full[i];
      const RuleResult& l = lean[i];
      INFO(f.id);
      CHECK(l.id == f.id);
      CHECK(l.status == f.status);
      CHECK(l.severity == f.severity);
      CHECK(l.certainty == f.certainty);
      CHECK(l.stage == f.stage);
      CHECK(l.advisory == f.advisory);
      if (f.status == ResultStatus::fail || f.status == ResultStatus::error) {
        // Listed: built whole.
        CHECK(l.message == f.message);
        CHECK(l.evidence == f.evidence);
        CHECK(l.missing == f.missing);
        CHECK(l.references == f.references);
        CHECK(l.location.str() == f.location.str());
        CHECK(l.only_before == f.only_before);
        CHECK(l.known_by == f.known_by);
        ++whole;
      } else if (l.evidence.empty() && !f.evidence.empty()) {
        ++counted_only;
      }
    }
  }
  CHECK(whole > 50);
  CHECK(counted_only > 1000);
}
