// A result counted only (PassDetail::counted, rules/result.hpp) decides exactly what the full
// result decides: the compact JSON report of a many-file run builds passing and not applicable
// results without their evidence and texts (issue 49), and must count, gate and list the same.
#include <catch2/catch.hpp>

#include <tuple>

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
      // What counts it, gates on it and decides the verdict.
      CHECK(std::tie(l.id, l.status, l.severity, l.certainty, l.stage, l.advisory) ==
            std::tie(f.id, f.status, f.severity, f.certainty, f.stage, f.advisory));
      if (f.status == ResultStatus::fail || f.status == ResultStatus::error) {
        // Listed: built whole.
        CHECK(std::tie(l.message, l.evidence, l.missing, l.references, l.only_before, l.known_by, l.remediation) ==
              std::tie(f.message, f.evidence, f.missing, f.references, f.only_before, f.known_by, f.remediation));
        CHECK(l.location.str() == f.location.str());
        ++whole;
      } else if (l.evidence.empty() && !f.evidence.empty()) {
        ++counted_only;
      }
    }
  }
  CHECK(whole > 50);
  CHECK(counted_only > 1000);
}
