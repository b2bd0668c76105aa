// Option tables (see options/tables.hpp): the embedded YAML read once into per-release bit sets.
#include "inputs/options/tables.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <set>
#include <tuple>

#include "common/ascii.hpp"
#include "common/byte_image.hpp"
#include "common/embedded.hpp"
#include "common/suggest.hpp"
#include "common/version.hpp"
#include "inputs/text/text.hpp"

namespace specprobe::options {
namespace {

struct Loader {
  EngineTable& t;
  std::string file;

  Expected<ReleaseSet> range(const Json& v, std::string_view what) const {
    if (!v.is_string()) return internal_error(fmt::format("{}: {}: a release range must be a string", file, what));
    ReleaseSet out;
    const std::string s = v.get<std::string>();
    size_t start = 0;
    while (start < s.size()) {
      size_t end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      std::string part = s.substr(start, end - start);
      start = end + 1;
      while (!part.empty() && part.front() == ' ') part.erase(part.begin());
      while (!part.empty() && part.back() == ' ') part.pop_back();
      if (part.empty()) continue;
      const size_t dash = part.find('-');
      const std::string lo = part.substr(0, dash);
      const std::string hi = dash == std::string::npos ? lo : part.substr(dash + 1);
      auto a = t.index_of(lo);
      auto b = hi.empty() ? std::optional<size_t>(t.releases.size() - 1) : t.index_of(hi);
      if (!a || !b || *a > *b)
        return internal_error(fmt::format("{}: {}: range '{}' names a release not in releases:", file, what, part));
      for (size_t i = *a; i <= *b; ++i) out.set(i);
    }
    return out;
  }

  // A field that is either a plain value holding in all of OPTION_RANGE, or {value: range}.
  Expected<std::vector<Ranged>> ranged(const Json& v, const ReleaseSet& option_range, std::string_view what) const {
    std::vector<Ranged> out;
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        auto r = range(it.value(), what);
        if (!r) return r.error();
        out.push_back({it.key(), *r});
      }
    } else if (v.is_array()) {
      for (const auto& x : v)
        if (x.is_string()) out.push_back({x.get<std::string>(), option_range});
    } else if (v.is_string()) {
      out.push_back({v.get<std::string>(), option_range});
    }
    return out;
  }

  // true / a range / absent.
  Expected<ReleaseSet> flag_range(const Json& row, const char* key, const ReleaseSet& option_range,
                                  std::string_view what) const {
    auto it = row.find(key);
    if (it == row.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) return ReleaseSet{};
    if (it->is_boolean()) return option_range;
    return range(*it, what);
  }

  Expected<OptionSpec> row(const std::string& name, const Json& r) const {
    OptionSpec o;
    o.name = name;
    if (!r.is_object()) return internal_error(fmt::format("{}: option {} is not a mapping", file, name));
    auto rel = range(r.value("releases", Json()), name);
    if (!rel) return rel.error();
    o.releases = *rel;
    o.name_releases = o.releases;
    if (r.contains("name_releases")) {
      auto nr = range(r["name_releases"], name);
      if (!nr) return nr.error();
      o.name_releases = *nr;
    }
    for (auto [key, out] : {std::pair<const char*, ReleaseSet*>{"negatable", &o.negatable},
                            {"deprecated", &o.deprecated},
                            {"choices_dynamic", &o.choices_dynamic}}) {
      auto f = flag_range(r, key, o.releases, name);
      if (!f) return f.error();
      *out = *f;
    }
    for (auto [key, out] : {std::pair<const char*, std::vector<Ranged>*>{"aliases", &o.aliases},
                            {"type", &o.types},
                            {"choices", &o.choices},
                            {"known_values", &o.known_values},
                            {"enum", &o.enum_names},
                            {"json_of", &o.json_of}}) {
      if (!r.contains(key)) continue;
      auto v = ranged(r[key], o.releases, name);
      if (!v) return v.error();
      *out = std::move(*v);
    }
    if (o.types.empty()) return internal_error(fmt::format("{}: option {} has no type", file, name));
    if (!o.choices.empty()) {
      if (r.contains("choices_releases")) {
        auto cr = range(r["choices_releases"], name);
        if (!cr) return cr.error();
        o.choices_enforced = *cr;
      } else {
        o.choices_enforced = o.releases;
      }
    }
    return o;
  }

  Status section(const Json& doc, const char* key, std::map<std::string, OptionSpec, std::less<>>& out) const {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return Ok{};
    if (!it->is_object()) return internal_error(fmt::format("{}: {} is not a mapping", file, key));
    for (auto r = it->begin(); r != it->end(); ++r) {
      auto o = row(r.key(), r.value());
      if (!o) return o.error();
      out.emplace(r.key(), std::move(*o));
    }
    return Ok{};
  }

  Status load_json(Json document) {
    Json* doc = &document;
    if (!doc->is_object() || !(*doc)["releases"].is_array())
      return internal_error(fmt::format("{}: no releases: list", file));
    for (const auto& r : (*doc)["releases"]) {
      if (!r.is_object() || !r.value("version", Json()).is_string())
        return internal_error(fmt::format("{}: a release without a version", file));
      t.releases.push_back(r["version"].get<std::string>());
    }
    if (t.releases.empty() || t.releases.size() > kMaxReleases)
      return internal_error(fmt::format("{}: {} releases (1..{} supported)", file, t.releases.size(), kMaxReleases));
    for (size_t i = 0; i < t.releases.size(); ++i) t.all.set(i);
    if (auto st = section(*doc, "options", t.options); !st) return st;
    if (auto st = section(*doc, "speculative_config", t.speculative_config); !st) return st;
    if (auto st = section(*doc, "compilation_config", t.compilation_config); !st) return st;
    if (auto it = doc->find("enums"); it != doc->end() && it->is_object())
      for (auto e = it->begin(); e != it->end(); ++e) {
        auto v = ranged(e.value(), t.all, e.key());
        if (!v) return v.error();
        t.enums.emplace(e.key(), std::move(*v));
      }
    return Ok{};
  }
};

struct Loaded {
  EngineTable table;
  std::vector<OptionString> strings;
  Status status = Ok{};
};

// The spellings being collected, one entry per (text, option, negative): a spelling met again
// adds its releases to the entry, found through an index (a linear search made building vLLM's
// strings quadratic, issue 49).
struct Spellings {
  std::vector<OptionString> out;
  std::map<std::tuple<std::string, std::string, bool>, size_t> index;

  void add(std::string text, const std::string& option, const ReleaseSet& in, bool negative) {
    if (in.none()) return;
    auto [it, inserted] = index.try_emplace({text, option, negative}, out.size());
    if (!inserted) {
      out[it->second].in |= in;
      return;
    }
    out.push_back({std::move(text), option, in, negative});
  }
};

std::vector<OptionString> build_strings(const EngineTable& t) {
  Spellings collected;
  std::vector<OptionString>& out = collected.out;
  auto add_string = [&](std::string text, const std::string& option, const ReleaseSet& in, bool negative) {
    collected.add(std::move(text), option, in, negative);
  };
  const bool vllm = t.engine == "vllm";
  // vLLM 0.33.0 registers argparse.BooleanOptionalAction as EnableDisableAction: every
  // --enable-X also accepts --disable-X (and the reverse) as its negation
  // (vllm/utils/argparse_utils.py EnableDisableAction @v0.33.0).
  ReleaseSet inverses;
  if (vllm)
    if (auto i = t.index_of("0.33.0")) inverses = t.from(*i);
  for (const auto& [name, o] : t.options) {
    std::vector<std::pair<std::string, ReleaseSet>> spellings;  // with dashes
    spellings.emplace_back("--" + name, o.name_releases);
    for (const auto& a : o.aliases)
      spellings.emplace_back((long_alias(t, a.value) ? "--" : "-") + a.value, a.in & o.releases);
    for (const auto& [text, in] : spellings) {
      add_string(text, name, in, false);
      // BooleanOptionalAction adds --no-X for every option string that starts with "--".
      if (text.rfind("--", 0) == 0) add_string("--no-" + text.substr(2), name, in & o.negatable, true);
      if (text.rfind("--enable-", 0) == 0)
        add_string("--disable-" + text.substr(9), name, in & o.negatable & inverses, true);
      else if (text.rfind("--disable-", 0) == 0)
        add_string("--enable-" + text.substr(10), name, in & o.negatable & inverses, true);
    }
  }
  std::sort(out.begin(), out.end(), [](const OptionString& a, const OptionString& b) {
    return std::tie(a.text, a.option) < std::tie(b.text, b.option);
  });
  return std::move(out);
}

constexpr std::string_view kTableImageMagic = "specprobe-options-1";

void write_set(ByteWriter& w, const ReleaseSet& s) {
  for (size_t byte = 0; byte < kMaxReleases / 8; ++byte) {
    uint8_t b = 0;
    for (size_t bit = 0; bit < 8; ++bit) b |= s.test(byte * 8 + bit) ? uint8_t(1u << bit) : uint8_t(0);
    w.u8(b);
  }
}

ReleaseSet read_set(ByteReader& r) {
  ReleaseSet s;
  for (size_t byte = 0; byte < kMaxReleases / 8; ++byte) {
    const uint8_t b = r.u8();
    for (size_t bit = 0; bit < 8; ++bit)
      if (b & (1u << bit)) s.set(byte * 8 + bit);
  }
  return s;
}

void write_ranged(ByteWriter& w, const std::vector<Ranged>& v) {
  w.u32(static_cast<uint32_t>(v.size()));
  for (const Ranged& x : v) {
    w.str(x.value);
    write_set(w, x.in);
  }
}

std::vector<Ranged> read_ranged(ByteReader& r) {
  std::vector<Ranged> v(r.count());
  for (Ranged& x : v) {
    x.value = r.str();
    x.in = read_set(r);
  }
  return v;
}

using SpecMap = std::map<std::string, OptionSpec, std::less<>>;

void write_specs(ByteWriter& w, const SpecMap& specs) {
  w.u32(static_cast<uint32_t>(specs.size()));
  for (const auto& [key, o] : specs) {
    w.str(key);
    w.str(o.name);
    for (const ReleaseSet* set :
         {&o.releases, &o.name_releases, &o.negatable, &o.deprecated, &o.choices_enforced, &o.choices_dynamic})
      write_set(w, *set);
    for (const std::vector<Ranged>* v : {&o.aliases, &o.types, &o.choices, &o.known_values, &o.enum_names, &o.json_of})
      write_ranged(w, *v);
  }
}

SpecMap read_specs(ByteReader& r) {
  SpecMap specs;
  for (size_t n = r.count(); n > 0 && r.ok(); --n) {
    std::string key = r.str();
    OptionSpec o;
    o.name = r.str();
    for (ReleaseSet* set :
         {&o.releases, &o.name_releases, &o.negatable, &o.deprecated, &o.choices_enforced, &o.choices_dynamic})
      *set = read_set(r);
    for (std::vector<Ranged>* v : {&o.aliases, &o.types, &o.choices, &o.known_values, &o.enum_names, &o.json_of})
      *v = read_ranged(r);
    specs.emplace(std::move(key), std::move(o));
  }
  return specs;
}

Loaded& loaded(std::string_view engine) {
  static Loaded vllm, sglang;
  static std::once_flag once_vllm, once_sglang;
  const bool is_vllm = engine == "vllm";
  Loaded& l = is_vllm ? vllm : sglang;
  std::call_once(is_vllm ? once_vllm : once_sglang, [&l, is_vllm] {
    const std::string_view name = is_vllm ? "vllm" : "sglang";
    const std::string_view image = embedded_option_image(name);
    auto table = image.empty() ? load_table_yaml(name) : read_table_image(image);
    if (!table) {
      l.status = table.error();
      return;
    }
    l.table = std::move(*table);
    l.strings = build_strings(l.table);
  });
  return l;
}

int highest(const ReleaseSet& s) {
  for (int i = static_cast<int>(kMaxReleases) - 1; i >= 0; --i)
    if (s.test(static_cast<size_t>(i))) return i;
  return -1;
}

std::string fold(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_') c = '-';
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t dash = s.find('-', start);
    out.push_back(s.substr(start, dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

std::string EngineTable::range_text(const ReleaseSet& s) const {
  std::string out;
  size_t i = 0;
  const size_t n = releases.size();
  while (i < n) {
    if (!s.test(i)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < n && s.test(j + 1)) ++j;
    if (!out.empty()) out += ", ";
    if (j + 1 == n && j != i)
      out += releases[i] + "-";
    else if (i == j)
      out += releases[i];
    else
      out += releases[i] + "-" + releases[j];
    i = j + 1;
  }
  return out;
}

std::optional<size_t> EngineTable::index_of(std::string_view version) const {
  for (size_t i = 0; i < releases.size(); ++i)
    if (releases[i] == version) return i;
  return std::nullopt;
}

ReleaseSet EngineTable::from(size_t index) const {
  ReleaseSet s;
  for (size_t i = index; i < releases.size(); ++i) s.set(i);
  return s;
}

Expected<EngineTable> load_table_yaml(std::string_view engine) {
  EngineTable t;
  t.engine = std::string(engine);
  t.display = engine == "vllm" ? "vLLM" : "SGLang";
  const std::string file = fmt::format("rules/data/options/{}.yaml", t.engine);
  Loader loader{t, file};
  auto doc = embedded_yaml_document(file);
  if (!doc) return internal_error(doc.error().message);
  if (auto st = loader.load_json(std::move(*doc)); !st) return st.error();
  return t;
}

std::string table_image(const EngineTable& t) {
  ByteWriter w;
  w.str(kTableImageMagic);
  w.str(t.engine);
  w.str(t.display);
  w.strings(t.releases);
  write_set(w, t.all);
  for (const SpecMap* specs : {&t.options, &t.speculative_config, &t.compilation_config}) write_specs(w, *specs);
  w.u32(static_cast<uint32_t>(t.enums.size()));
  for (const auto& [name, members] : t.enums) {
    w.str(name);
    write_ranged(w, members);
  }
  return w.bytes();
}

Expected<EngineTable> read_table_image(std::string_view image) {
  ByteReader r(image);
  if (r.view() != kTableImageMagic)
    return internal_error("the built-in option table image is not one this binary reads");
  EngineTable t;
  t.engine = r.str();
  t.display = r.str();
  t.releases = r.strings();
  t.all = read_set(r);
  for (SpecMap* specs : {&t.options, &t.speculative_config, &t.compilation_config}) *specs = read_specs(r);
  for (size_t n = r.count(); n > 0 && r.ok(); --n) {
    std::string name = r.str();
    t.enums[name] = read_ranged(r);
  }
  if (!r.done() || t.releases.size() > kMaxReleases)
    return internal_error("the built-in option table image is cut short or corrupt");
  return t;
}

Expected<const EngineTable*> engine_table(std::string_view engine) {
  if (engine != "vllm" && engine != "sglang") return static_cast<const EngineTable*>(nullptr);
  Loaded& l = loaded(engine);
  if (!l.status) return l.status.error();
  return &l.table;
}

const std::vector<OptionString>& option_strings(const EngineTable& t) { return loaded(t.engine).strings; }

bool long_alias(const EngineTable& t, std::string_view alias) {
  // vLLM registers its aliases with one dash ("-tp", "-O", "-sc", "-spec-draft-tp") except
  // "--device-memory-utilization" (vllm/engine/arg_utils.py L1390 @v0.33.0); SGLang's aliases
  // all have two ("--tensor-parallel-size", "--ep", "--model").
  return t.engine != "vllm" || alias == "device-memory-utilization";
}

Selection select_releases(const EngineTable& t, const std::optional<std::string>& version) {
  Selection s;
  const std::string first = t.releases.front(), last = t.releases.back();
  // Unknown version: the newest table decides, and the releases before it are read too, so that an
  // option or value of older releases only is a note (SP1016) rather than an unknown option.
  auto every = [&](const std::string& why) {
    s.releases = t.all;
    s.exact = false;
    s.beyond = true;
    s.newest_decides = true;
    s.label =
        fmt::format("{} {}, the newest table ({}; options and values of the releases {}-{} only are noted)", t.display,
                    last, why, first, t.releases.size() > 1 ? t.releases[t.releases.size() - 2] : last);
    s.short_label = fmt::format("any {} release", t.display);
    return s;
  };
  if (!version) return every("the engine version is unknown");
  const auto v = parse_version(*version);
  if (!v) return every(fmt::format("'{}' is not a version", *version));
  const Version pub = v->public_version();
  std::optional<size_t> below, above;  // newest release <= v, oldest release > v
  for (size_t i = 0; i < t.releases.size(); ++i) {
    const auto r = parse_version(t.releases[i]);
    if (!r) continue;
    if (*r == pub) {
      s.releases.set(i);
      s.exact = true;
      s.label = fmt::format("{} {}", t.display, t.releases[i]);
      s.short_label = s.label;
      return s;
    }
    if (*r < pub)
      below = i;
    else if (!above)
      above = i;
  }
  if (!below) {
    s.releases.set(*above);
    s.label = fmt::format("{} {} (older than every release the tables read; checked against {}, the oldest)", t.display,
                          *version, first);
    s.short_label = fmt::format("{} {}", t.display, first);
    return s;
  }
  if (!above) {
    s.releases.set(*below);
    s.beyond = true;
    s.label = fmt::format("{} {} (newer than every release the tables read; checked against {}, the newest)", t.display,
                          *version, last);
    s.short_label = fmt::format("{} {}", t.display, last);
    return s;
  }
  // A pre-release or main-branch build between two releases: either release's options may be in it.
  s.releases.set(*below);
  s.releases.set(*above);
  s.label = fmt::format("{} {} (a build between {} and {}: checked against both)", t.display, *version,
                        t.releases[*below], t.releases[*above]);
  s.short_label = fmt::format("{} {} or {}", t.display, t.releases[*below], t.releases[*above]);
  return s;
}

Resolution resolve_flag(const EngineTable& t, std::string_view flag, const ReleaseSet& selection) {
  Resolution r;
  const auto& strings = option_strings(t);
  ReleaseSet exact;
  std::map<std::string, ReleaseSet> exact_by_option;
  bool exact_negative = false;
  auto lo = std::lower_bound(strings.begin(), strings.end(), flag,
                             [](const OptionString& s, std::string_view f) { return s.text < f; });
  for (auto it = lo; it != strings.end() && it->text == flag; ++it) {
    const ReleaseSet in = it->in & selection;
    if (in.none()) continue;
    exact |= in;
    exact_by_option[it->option] |= in;
    exact_negative = it->negative;
  }
  if (!exact_by_option.empty()) {
    int best = -1;
    for (const auto& [opt, in] : exact_by_option)
      if (highest(in) > best) {
        best = highest(in);
        r.option = opt;
      }
    r.negative = exact_negative;
  }
  r.accepted = exact;
  // allow_abbrev: in the releases where the flag is not an exact spelling, a prefix of exactly
  // one option's spellings names that option (argparse _parse_optional / _get_option_tuples).
  // A one-dash flag is a prefix only of one-dash spellings; "--x" only of "--" ones.
  const ReleaseSet rest = selection & ~exact;
  if (rest.none() || flag.size() < 2 || flag == "--") return r;
  std::map<std::string, std::pair<ReleaseSet, bool>> by_option;  // option -> releases, negative
  for (auto it = lo; it != strings.end() && it->text.compare(0, flag.size(), flag) == 0; ++it) {
    const ReleaseSet in = it->in & rest;
    if (in.none()) continue;
    by_option[it->option].first |= in;
    by_option[it->option].second = it->negative;
  }
  if (by_option.empty()) return r;
  int best = -1;
  std::string best_option;
  bool best_negative = false;
  for (size_t i = 0; i < t.releases.size(); ++i) {
    if (!rest.test(i)) continue;
    std::vector<const std::string*> here;
    for (const auto& [opt, v] : by_option)
      if (v.first.test(i)) here.push_back(&opt);
    if (here.size() == 1) {
      r.accepted.set(i);
      if (static_cast<int>(i) > best) {
        best = static_cast<int>(i);
        best_option = *here.front();
        best_negative = by_option[*here.front()].second;
      }
    } else if (here.size() > 1) {
      r.ambiguous.set(i);
    }
  }
  if (r.option.empty() && !best_option.empty()) {
    r.option = best_option;
    r.negative = best_negative;
    r.abbreviation = true;
  }
  if (r.ambiguous.any())
    for (const auto& [opt, v] : by_option)
      if ((v.first & r.ambiguous).any()) r.candidates.push_back("--" + opt);
  return r;
}

std::string did_you_mean(std::string_view written, const std::vector<std::string>& candidates, size_t min_length) {
  const std::string w = fold(written);
  if (w.empty()) return {};
  const std::vector<std::string> w_words = words(w);
  std::string best;
  size_t best_score = SIZE_MAX, best_prefix = 0;
  // A name within a quarter of its length (at least 1, at most 3 edits), the same words in another
  // order, or the name with a leading word missing ("num-draft-tokens" for
  // "speculative-num-draft-tokens").
  const size_t limit = std::clamp<size_t>(w.size() / 4, 1, 3);
  for (const std::string& c : candidates) {
    const std::string f = fold(c);
    if (f.empty()) continue;
    size_t score;
    bool special = true;
    if (f == w)
      score = 0;
    else if (f.size() == w.size() && words(f) == w_words)
      score = 1;  // the same words joined: the same length
    else if (f.size() > w.size() && f.compare(f.size() - w.size(), w.size(), w) == 0 &&
             f[f.size() - w.size() - 1] == '-' &&
             f.find('-') == f.size() - w.size() - 1)  // one word missing, not several ("version")
      score = 2;
    else if (w.size() < min_length)
      continue;
    else {
      score = edit_distance_within(w, f, limit);  // common/suggest: the one distance of every suggestion
      special = false;
    }
    if (!special && score > limit) continue;  // (a name shorter than MIN_LENGTH never got here)
    const size_t prefix = common_prefix(w, f);
    if (score < best_score || (score == best_score && prefix > best_prefix) ||
        (score == best_score && prefix == best_prefix && c < best)) {
      best = c;
      best_score = score;
      best_prefix = prefix;
    }
  }
  return best;
}

bool parses_as_int(const std::string& text, bool vllm_human) {
  if (vllm_human && serving::human_readable_int(text)) return true;
  // Python int(): surrounding whitespace, a sign, digits with single underscores between them.
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front())) ||
      !std::isdigit(static_cast<unsigned char>(s.back())))
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    if (s[i] == '_' && s[i + 1] != '_') continue;
    return false;
  }
  return true;
}

bool parses_as_float(const std::string& text) {
  // Python float(): whitespace, sign, digits (underscores between), '.', exponent, inf/nan.
  std::string s;
  for (char c : text)
    if (c != '_') s += c;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  s = s.substr(i);
  if (s.empty()) return false;
  const std::string l = ascii_lower(s[0] == '+' || s[0] == '-' ? s.substr(1) : s);
  if (l == "inf" || l == "infinity" || l == "nan") return true;
  for (char c : l)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace specprobe::options
