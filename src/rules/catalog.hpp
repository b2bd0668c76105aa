// The catalog: every rule specprobe evaluates, loaded once per process and shared by the pipeline,
// the printers that describe rules (SARIF's driver.rules) and the informational commands (`rules
// list`, `explain`, "did you mean").
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "rules/rule.hpp"

namespace specprobe {

struct Catalog {
  std::vector<Rule> rules;  // in id order
  std::string rules_dir;    // where they came from; empty = the built-in (embedded) catalog

  // The rule with ID (case-insensitive), or nullptr.
  const Rule* find(std::string_view id) const;
  // The known id closest to ID by edit distance (at most 2 edits), or empty: for "did you mean".
  std::string closest_id(std::string_view id) const;
};

// Loads the built-in catalog (RULES_DIR empty) or every rule file under RULES_DIR. A built-in
// catalog that does not load is an internal error (exit 3); a --rules-dir one an input error.
Expected<std::shared_ptr<const Catalog>> load_catalog(const std::string& rules_dir = {});

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace specprobe
