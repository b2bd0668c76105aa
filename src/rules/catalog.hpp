// The catalog: every rule specprobe evaluates, loaded once per process and shared by the pipeline,
// the printers that describe rules (SARIF's driver.rules) and the informational commands (`rules
// list`, `explain`, "did you mean").
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/suggest.hpp"
#include "rules/advisory.hpp"
#include "rules/rule.hpp"

namespace specprobe {

struct Catalog {
  std::vector<Rule> rules;           // in id order
  std::vector<Advisory> advisories;  // in id order
  std::string rules_dir;             // where the rules came from; empty = the built-in (embedded) catalog
  std::string advisories_dir;        // likewise for the advisories

  // The rule with ID (case-insensitive), or nullptr.
  const Rule* find(std::string_view id) const;
  const Advisory* find_advisory(std::string_view id) const;
  // The known rule or advisory id closest to ID (common/suggest.hpp: at most 2 edits, the same
  // band first), or empty: for "did you mean".
  std::string closest_id(std::string_view id) const;
};

struct CatalogSource {
  std::string rules_dir;         // empty: the built-in rules
  std::string advisories_dir;    // empty: the built-in advisories, unless rules_dir is given (a
                                 // development catalog then has only the advisories given here)
  std::string published_before;  // YYYY-MM-DD: only advisories published before it (to measure how
                                 // the database generalizes to later reports); empty: all
};

// Loads the catalog. A built-in catalog that does not load is an internal error (exit 3); a
// --rules-dir or --advisories-dir one an input error.
Expected<std::shared_ptr<const Catalog>> load_catalog(const CatalogSource& source = {});

// Every rule (deprecated ones left out) and then every advisory of CATALOG evaluated on FACTS
// (rules/evaluate.hpp evaluate_rule, rules/advisory.hpp evaluate_advisory), in that order, on up
// to THREADS threads.
std::vector<RuleResult> evaluate_catalog(const Catalog& catalog, const Json& facts,
                                         const std::map<std::string, SourceLocation>& locations,
                                         const std::string& default_file, size_t threads = 1);

}  // namespace specprobe
