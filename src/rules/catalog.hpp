// The catalog: every rule specprobe evaluates, loaded once per process and shared by the pipeline,
// the printers that describe rules (SARIF's driver.rules) and the informational commands (`rules
// list`, `explain`, "did you mean").
#pragma once
#include <future>
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

// A catalog that may still be loading on another thread: the built-in one loads while a check
// reads its inputs, which need none of it (start-up, issue 49). The first use waits for it; a load
// that failed throws std::runtime_error with its message there (the pipeline's stage guard makes it
// an internal error). A CatalogRef made from a catalog is ready.
class CatalogRef {
 public:
  using Loading = std::shared_future<Expected<std::shared_ptr<const Catalog>>>;
  CatalogRef() = default;
  CatalogRef(std::shared_ptr<const Catalog> catalog);  // NOLINT(google-explicit-constructor): ready
  explicit CatalogRef(Loading loading) : loading_(std::move(loading)) {}

  std::shared_ptr<const Catalog> get() const;
  const Catalog& operator*() const { return *get(); }
  const Catalog* operator->() const { return get().get(); }

 private:
  Loading loading_;
};

// The catalog SOURCE names, loading on a thread of its own when it is the built-in one (its errors
// then surface at the first use); a development catalog (--rules-dir, --advisories-dir, a date)
// loads now, so that its input errors are reported before the check starts.
Expected<CatalogRef> start_loading_catalog(const CatalogSource& source = {});

// Every rule (deprecated ones left out) and then every advisory of CATALOG evaluated on FACTS
// (rules/evaluate.hpp evaluate_rule, rules/advisory.hpp evaluate_advisory), in that order, on up
// to THREADS threads. DETAIL: how much of a passing or not applicable result is built
// (rules/result.hpp).
std::vector<RuleResult> evaluate_catalog(const Catalog& catalog, const Json& facts,
                                         const std::map<std::string, SourceLocation>& locations,
                                         const std::string& default_file, size_t threads = 1,
                                         PassDetail detail = PassDetail::full);

}  // namespace specprobe
