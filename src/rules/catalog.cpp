// The rule catalog (see catalog.hpp).
#include "rules/catalog.hpp"

#include "common/ascii.hpp"
#include "common/parallel.hpp"
#include "rules/evaluate.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace specprobe {

const Rule* Catalog::find(std::string_view id) const {
  const std::string u = ascii_upper(id);
  for (const auto& r : rules)
    if (r.id == u) return &r;
  return nullptr;
}

const Advisory* Catalog::find_advisory(std::string_view id) const {
  const std::string u = ascii_upper(id);
  for (const auto& a : advisories)
    if (ascii_upper(a.id) == u) return &a;
  return nullptr;
}

std::string Catalog::closest_id(std::string_view id) const {
  std::vector<std::string> ids;
  for (const auto& r : rules) ids.push_back(r.id);
  for (const auto& a : advisories) ids.push_back(a.id);
  return closest_match(id, ids);
}

namespace {

Expected<std::shared_ptr<const Catalog>> read_catalog(const CatalogSource& source) {
  auto rules = load_rules(source.rules_dir);
  if (!rules) {
    Error e = rules.error();
    if (source.rules_dir.empty()) e.kind = ErrorKind::internal;
    return e;
  }
  auto c = std::make_shared<Catalog>();
  c->rules = std::move(*rules);
  c->rules_dir = source.rules_dir;
  c->advisories_dir = source.advisories_dir;
  if (source.rules_dir.empty() || !source.advisories_dir.empty()) {
    auto advisories = load_advisories(source.advisories_dir);
    if (!advisories) {
      Error e = advisories.error();
      if (source.advisories_dir.empty()) e.kind = ErrorKind::internal;
      return e;
    }
    for (auto& a : *advisories)
      if (source.published_before.empty() || a.published < source.published_before)
        c->advisories.push_back(std::move(a));
  }
  return std::shared_ptr<const Catalog>(std::move(c));
}

}  // namespace

Expected<std::shared_ptr<const Catalog>> load_catalog(const CatalogSource& source) {
  if (!source.rules_dir.empty() || !source.advisories_dir.empty() || !source.published_before.empty())
    return read_catalog(source);
  // The built-in catalog is read once per process and kept to its end (never destroyed: freeing a
  // few thousand nodes at exit is time a check does not need to spend).
  static const auto* const built_in = new Expected<std::shared_ptr<const Catalog>>(read_catalog(source));
  return *built_in;
}

CatalogRef::CatalogRef(std::shared_ptr<const Catalog> catalog) {
  std::promise<Expected<std::shared_ptr<const Catalog>>> ready;
  ready.set_value(std::move(catalog));
  loading_ = ready.get_future().share();
}

std::shared_ptr<const Catalog> CatalogRef::get() const {
  if (!loading_.valid()) return nullptr;
  // Each caller reads the shared state through its own copy (threads of `check -j` share one ref).
  const Loading mine = loading_;
  const auto& loaded = mine.get();
  if (!loaded) throw std::runtime_error("the built-in rule catalog did not load: " + loaded.error().str());
  return *loaded;
}

Expected<CatalogRef> start_loading_catalog(const CatalogSource& source) {
  if (!source.rules_dir.empty() || !source.advisories_dir.empty() || !source.published_before.empty()) {
    auto catalog = load_catalog(source);
    if (!catalog) return catalog.error();
    return CatalogRef(*catalog);
  }
  return CatalogRef(std::async(std::launch::async, [] { return load_catalog(); }).share());
}

std::vector<RuleResult> evaluate_catalog(const Catalog& catalog, const Json& facts,
                                         const std::map<std::string, SourceLocation>& locations,
                                         const std::string& default_file, size_t threads, PassDetail detail) {
  std::vector<const Rule*> rules;
  for (const auto& r : catalog.rules)
    if (!r.deprecated) rules.push_back(&r);
  std::vector<RuleResult> out(rules.size() + catalog.advisories.size());
  parallel_for_rethrow(out.size(), threads, [&](size_t i) {
    out[i] = i < rules.size()
                 ? evaluate_rule(*rules[i], facts, locations, default_file, detail)
                 : evaluate_advisory(catalog.advisories[i - rules.size()], facts, locations, default_file, detail);
  });
  return out;
}

}  // namespace specprobe
