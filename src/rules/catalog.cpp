// The rule catalog (see catalog.hpp).
#include "rules/catalog.hpp"

#include <algorithm>
#include <cctype>

namespace specprobe {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

const Rule* Catalog::find(std::string_view id) const {
  const std::string u = upper(id);
  for (const auto& r : rules)
    if (r.id == u) return &r;
  return nullptr;
}

const Advisory* Catalog::find_advisory(std::string_view id) const {
  const std::string u = upper(id);
  for (const auto& a : advisories)
    if (upper(a.id) == u) return &a;
  return nullptr;
}

std::string Catalog::closest_id(std::string_view id) const {
  const std::string u = upper(id);
  std::string best;
  size_t best_d = 3;
  auto consider = [&](const std::string& known) {
    const size_t d = edit_distance(u, upper(known));
    if (d < best_d) {
      best_d = d;
      best = known;
    }
  };
  for (const auto& r : rules) consider(r.id);
  for (const auto& a : advisories) consider(a.id);
  return best;
}

Expected<std::shared_ptr<const Catalog>> load_catalog(const CatalogSource& source) {
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
      if (source.published_before.empty() || a.published < source.published_before) c->advisories.push_back(std::move(a));
  }
  return std::shared_ptr<const Catalog>(std::move(c));
}

}  // namespace specprobe
