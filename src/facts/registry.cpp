// The facts registry (see registry.hpp).
#include "facts/registry.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "common/byte_image.hpp"
#include "common/embedded.hpp"
#include "common/yaml_json.hpp"

namespace specprobe {
namespace {

constexpr const char* kRegistryFile = "src/facts/registry.yaml";

std::vector<std::string_view> segments(std::string_view dotted) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t dot = dotted.find('.');
    out.push_back(dotted.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    dotted.remove_prefix(dot + 1);
  }
}

bool is_placeholder_segment(std::string_view seg) { return seg.size() > 2 && seg.front() == '<' && seg.back() == '>'; }

void diff_into(const Json* a, const Json* b, const std::string& prefix, std::vector<std::string>& out) {
  const bool ao = a && a->is_object(), bo = b && b->is_object();
  if (ao || bo) {
    std::set<std::string> keys;
    if (ao)
      for (auto it = a->begin(); it != a->end(); ++it) keys.insert(it.key());
    if (bo)
      for (auto it = b->begin(); it != b->end(); ++it) keys.insert(it.key());
    // An object replaced by a scalar (or the reverse) is a change of the path itself; an object
    // that appears or disappears is the change of its leaves.
    const bool a_scalar = a && !a->is_null() && !ao, b_scalar = b && !b->is_null() && !bo;
    if ((a_scalar || b_scalar) && !prefix.empty()) out.push_back(prefix);
    for (const auto& k : keys) {
      const Json* ca = ao && a->contains(k) ? &(*a)[k] : nullptr;
      const Json* cb = bo && b->contains(k) ? &(*b)[k] : nullptr;
      diff_into(ca, cb, prefix.empty() ? k : prefix + "." + k, out);
    }
    // An empty object that appears or disappears has no leaves: the path itself changed.
    if (keys.empty() && ao != bo && !prefix.empty()) out.push_back(prefix);
    return;
  }
  if (!a && !b) return;
  if (!a || !b || *a != *b) out.push_back(prefix);
}

const std::set<std::string>& known_types() {
  static const std::set<std::string> kTypes = {"bool", "int", "number", "string", "list", "object", "any"};
  return kTypes;
}

}  // namespace

std::vector<std::string> changed_fact_paths(const Json& before, const Json& after) {
  std::vector<std::string> out;
  diff_into(&before, &after, "", out);
  return out;
}

const FactRegistry::Writer* FactRegistry::writer(std::string_view name) const {
  for (const auto& w : writers_)
    if (w.name == name) return &w;
  return nullptr;
}

void FactRegistry::build_index() {
  segments_.clear();
  by_first_.clear();
  for (size_t i = 0; i < facts_.size(); ++i) {
    std::vector<std::string> segs;
    for (const auto s : segments(facts_[i].name)) segs.emplace_back(s);
    by_first_[is_placeholder_segment(segs.front()) ? std::string() : segs.front()].push_back(i);
    segments_.push_back(std::move(segs));
  }
}

const FactSpec* FactRegistry::find(std::string_view dotted) const {
  const auto path = segments(dotted);
  // The candidates: the facts whose first segment is PATH's, and those starting with a placeholder.
  static const std::vector<size_t> kNone;
  const auto named_it = by_first_.find(std::string(path.front()));
  const auto wild_it = by_first_.find(std::string());
  const std::vector<size_t>& named = named_it == by_first_.end() ? kNone : named_it->second;
  const std::vector<size_t>& wild = wild_it == by_first_.end() ? kNone : wild_it->second;
  const FactSpec* best = nullptr;
  size_t best_len = 0;
  bool best_exact = false;
  auto consider = [&](size_t i) {
    const FactSpec& f = facts_[i];
    const auto& spec = segments_[i];
    if (spec.size() > path.size()) return;
    for (size_t s = 0; s < spec.size(); ++s)
      if (!is_placeholder_segment(spec[s]) && spec[s] != path[s]) return;
    const bool exact = spec.size() == path.size();
    if (!exact && f.type != "list" && f.type != "object" && f.type != "any") return;
    // The most specific registration wins: an exact name over a covering object, a longer
    // covering prefix over a shorter one, a literal segment over a placeholder; on a tie, the
    // one registered first.
    size_t literal = 0;
    for (const auto& s : spec) literal += is_placeholder_segment(s) ? 0 : 1;
    const size_t score = spec.size() * 1000 + literal;
    if (!best || (exact && !best_exact) || (exact == best_exact && score > best_len)) {
      best = &f;
      best_len = score;
      best_exact = exact;
    }
  };
  // Both lists in registry order, merged, so that ties go as they did over the whole list.
  size_t a = 0, b = 0;
  while (a < named.size() || b < wild.size()) {
    if (b == wild.size() || (a < named.size() && named[a] < wild[b]))
      consider(named[a++]);
    else
      consider(wild[b++]);
  }
  return best;
}

std::vector<std::string> FactRegistry::write_violations(std::string_view writer, const Json& before,
                                                        const Json& after) const {
  std::vector<std::string> out;
  for (const auto& p : changed_fact_paths(before, after)) {
    const FactSpec* f = find(p);
    if (!f)
      out.push_back(p + " (not registered)");
    else if (f->writer != writer)
      out.push_back(fmt::format("{} (registered to {})", p, f->writer));
  }
  return out;
}

Expected<FactRegistry> FactRegistry::parse(std::string_view text, const std::string& file) {
  auto doc = parse_yaml_text(text, file);
  if (!doc) return doc.error();
  return from_json(*doc, file);
}

Expected<FactRegistry> FactRegistry::from_json(const Json& document, const std::string& file) {
  Json copy = document;  // read with operator[], which inserts what is missing
  Json* doc = &copy;
  FactRegistry reg;
  if (!doc->is_object() || !(*doc)["writers"].is_array() || !(*doc)["facts"].is_array())
    return input_error("the registry needs a `writers` list and a `facts` list", {file});
  for (const auto& w : (*doc)["writers"]) {
    if (!w.is_object() || !w.value("name", Json()).is_string() || !w.value("what", Json()).is_string())
      return input_error("a writer needs `name` and `what`", {file});
    reg.writers_.push_back(
        {w["name"].get<std::string>(), w["what"].get<std::string>(), w.value("input", false),
         w.value("supply", Json("")).is_string() ? w.value("supply", std::string()) : std::string()});
  }
  std::set<std::string> names;
  for (const auto& f : (*doc)["facts"]) {
    if (!f.is_object()) return input_error("a fact entry must be a mapping", {file});
    FactSpec s;
    for (const char* key : {"name", "type", "writer", "doc"})
      if (!f.value(key, Json()).is_string() || f[key].get<std::string>().empty())
        return input_error(fmt::format("a fact entry lacks `{}` ({})", key, f.value("name", Json("?")).dump()), {file});
    s.name = f["name"].get<std::string>();
    s.type = f["type"].get<std::string>();
    s.writer = f["writer"].get<std::string>();
    s.doc = f["doc"].get<std::string>();
    s.unit = f.value("unit", Json("")).is_string() ? f.value("unit", std::string()) : std::string();
    if (!known_types().count(s.type))
      return input_error(fmt::format("fact {}: unknown type '{}'", s.name, s.type), {file});
    if (!reg.writer(s.writer))
      return input_error(fmt::format("fact {}: unknown writer '{}'", s.name, s.writer), {file});
    if (!names.insert(s.name).second) return input_error(fmt::format("fact {} is registered twice", s.name), {file});
    reg.facts_.push_back(std::move(s));
  }
  reg.build_index();
  return reg;
}

namespace {
constexpr std::string_view kRegistryImageMagic = "specprobe-facts-1";
}  // namespace

std::string FactRegistry::image() const {
  ByteWriter w;
  w.str(kRegistryImageMagic);
  w.u32(static_cast<uint32_t>(writers_.size()));
  for (const Writer& x : writers_) {
    w.str(x.name);
    w.str(x.what);
    w.u8(x.input ? 1 : 0);
    w.str(x.supply);
  }
  w.u32(static_cast<uint32_t>(facts_.size()));
  for (const FactSpec& f : facts_)
    for (const std::string* field : {&f.name, &f.type, &f.unit, &f.writer, &f.doc}) w.str(*field);
  return w.bytes();
}

Expected<FactRegistry> FactRegistry::from_image(std::string_view image) {
  ByteReader r(image);
  if (r.view() != kRegistryImageMagic)
    return internal_error("the built-in facts registry image is not one this binary reads");
  FactRegistry reg;
  reg.writers_.resize(r.count());
  for (Writer& x : reg.writers_) {
    x.name = r.str();
    x.what = r.str();
    x.input = r.u8() != 0;
    x.supply = r.str();
  }
  reg.facts_.resize(r.count());
  for (FactSpec& f : reg.facts_)
    for (std::string* field : {&f.name, &f.type, &f.unit, &f.writer, &f.doc}) *field = r.str();
  if (!r.done()) return internal_error("the built-in facts registry image is cut short or corrupt");
  reg.build_index();
  return reg;
}

Expected<const FactRegistry*> fact_registry() {
  static Expected<FactRegistry> reg = internal_error("not loaded");
  static std::once_flag once;
  std::call_once(once, [] {
    if (const std::string_view image = embedded_registry_image(); !image.empty()) {
      reg = FactRegistry::from_image(image);
      return;
    }
    auto doc = embedded_yaml_document(kRegistryFile);
    if (doc)
      reg = FactRegistry::from_json(*doc, kRegistryFile);
    else
      reg = doc.error();
    if (!reg) {
      Error e = reg.error();
      e.kind = ErrorKind::internal;
      reg = e;
    }
  });
  if (!reg) return reg.error();
  return &reg.value();
}

std::string FactRegistry::markdown() const {
  std::string out =
      "# Facts\n\n"
      "<!-- Generated from src/facts/registry.yaml by `specprobe facts --format markdown`; a test keeps it current. "
      "-->\n\n"
      "Every stage of a check writes into one JSON document addressed by stable dotted names; rules and\n"
      "advisories read it with JSON Logic (`{\"var\": \"spec.next_n\"}`). Each fact has exactly one writer.\n"
      "Unknown values are absent or null, never guessed. `specprobe check --verbose` prints every fact of\n"
      "a run, and `--format json` carries them under `facts`. A segment written `<name>` stands for any\n"
      "one name; a fact of type list, object or any covers the paths below it.\n\n"
      "Facts written by an input module describe the user's plan, model, GPU and libraries: rule and\n"
      "advisory fixtures set these. The others are derived from them and recomputed for every what-if\n"
      "variant of the support matrix.\n";
  for (const auto& w : writers_) {
    out += fmt::format("\n## {}\n\n{}{}\n\n| fact | type | meaning |\n|---|---|---|\n", w.name, w.what,
                       w.input ? " (input)" : "");
    for (const auto& f : facts_) {
      if (f.writer != w.name) continue;
      std::string type = f.type + (f.unit.empty() ? "" : ", " + f.unit);
      std::string doc = f.doc;
      for (size_t at = 0; (at = doc.find('|', at)) != std::string::npos; at += 2) doc.replace(at, 1, "\\|");
      out += fmt::format("| `{}` | {} | {} |\n", f.name, type, doc);
    }
  }
  return out;
}

}  // namespace specprobe
