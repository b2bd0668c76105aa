// Loading and validating rule files (format: rules/README.md).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <set>
#include <sstream>

#include "common/byte_image.hpp"
#include "common/embedded.hpp"
#include "common/parallel.hpp"
#include "common/yaml_json.hpp"
#include "facts/registry.hpp"
#include "rules/catalog.hpp"
#include "rules/evaluate.hpp"
#include "rules/ids.hpp"
#include "rules/jsonlogic.hpp"
#include "rules/rule.hpp"

namespace fs = std::filesystem;

namespace specprobe {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::error:
      return "error";
  }
  return "error";
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info" || s == "note") return Severity::info;
  if (s == "warning") return Severity::warning;
  if (s == "error") return Severity::error;
  return std::nullopt;
}

std::string_view to_string(Stage s) {
  switch (s) {
    case Stage::config:
      return "config";
    case Stage::load:
      return "load";
    case Stage::capture:
      return "capture";
    case Stage::first_request:
      return "first-request";
    case Stage::runtime:
      return "runtime";
    case Stage::silent:
      return "silent";
  }
  return "config";
}

std::optional<Stage> parse_stage(std::string_view s) {
  if (s == "config") return Stage::config;
  if (s == "load") return Stage::load;
  if (s == "capture") return Stage::capture;
  if (s == "first-request" || s == "first_request") return Stage::first_request;
  if (s == "runtime") return Stage::runtime;
  if (s == "silent") return Stage::silent;
  return std::nullopt;
}

std::string_view to_string(Certainty c) { return c == Certainty::conditional ? "conditional" : "deterministic"; }

std::optional<Certainty> parse_certainty(std::string_view s) {
  if (s == "deterministic") return Certainty::deterministic;
  if (s == "conditional") return Certainty::conditional;
  return std::nullopt;
}

Status parse_certainty_fields(const Json& d, const std::string& file, Certainty& c, std::string& condition) {
  if (!d.contains("certainty"))
    return input_error(
        "missing field 'certainty' (deterministic: bites every time the plan runs; conditional: only "
        "under the `condition` it states)",
        {file});
  const auto parsed = d["certainty"].is_string() ? parse_certainty(d["certainty"].get<std::string>()) : std::nullopt;
  if (!parsed) return input_error("certainty must be deterministic or conditional", {file});
  c = *parsed;
  const bool has = d.contains("condition");
  if (c == Certainty::conditional) {
    if (!has || !d["condition"].is_string() || d["condition"].get<std::string>().empty())
      return input_error("a conditional finding needs its condition in words (condition: \"under ...\")", {file});
    condition = d["condition"].get<std::string>();
  } else if (has) {
    return input_error("condition is only for certainty: conditional", {file});
  }
  return Ok{};
}

namespace {

Expected<std::string> req_string(const Json& doc, const char* key, const std::string& file) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string() || it->get<std::string>().empty())
    return input_error(fmt::format("missing or empty string field '{}'", key), {file});
  return it->get<std::string>();
}

}  // namespace

std::vector<std::string> logic_fact_names(const Json& logic) { return jsonlogic::referenced_vars(logic); }

std::vector<std::string> rule_fact_names(const Rule& r) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto* logic : {&r.applies, &r.condition})
    for (const auto& n : logic_fact_names(*logic)) add(n);
  for (auto it = r.params.begin(); it != r.params.end(); ++it)
    for (const auto& n : logic_fact_names(it.value())) add(n);
  for (const auto& n : r.requires_facts) add(n);
  add(r.location);
  for (const std::string* tmpl : {&r.message, &r.remediation}) {
    const std::string& s = *tmpl;
    for (size_t open = s.find('{'); open != std::string::npos; open = s.find('{', open + 1)) {
      const size_t close = s.find('}', open);
      if (close == std::string::npos) break;
      const std::string name = s.substr(open + 1, close - open - 1);
      if (name.find('.') != std::string::npos && name.find_first_of(" \"{") == std::string::npos) add(name);
    }
  }
  return names;
}

Status check_fact_names(const std::vector<std::string>& names, const FactRegistry& registry) {
  for (const auto& n : names) {
    if (registry.find(n)) continue;
    std::string near;
    size_t best = 4;
    for (const auto& f : registry.facts()) {
      const size_t d = edit_distance_within(n, f.name, best - 1);
      if (d < best) {
        best = d;
        near = f.name;
      }
      if (best == 0) break;
    }
    return input_error(fmt::format("fact '{}' is written by no module (docs/facts.md lists the facts){}", n,
                                   near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
  }
  return Ok{};
}

static Expected<Rule> read_rule_fields(const Json& d, const std::string& file, bool checked_at_build) {
  if (!d.is_object()) return input_error("a rule file must be a mapping", {file, 1, 1});
  static const std::set<std::string> kKnownKeys = {
      "id",       "slug",        "title",    "description", "severity",  "stage",   "category",    "location",
      "applies",  "skip_reason", "requires", "when",        "params",    "message", "remediation", "references",
      "versions", "deprecated",  "vendor",   "certainty",   "condition", "affected"};
  for (auto it = d.begin(); it != d.end(); ++it)
    if (!kKnownKeys.count(it.key())) return input_error(fmt::format("unknown field '{}'", it.key()), {file});

  Rule r;
  r.source_file = file;
  auto id = req_string(d, "id", file);
  if (!id) return id.error();
  r.id = *id;
  if (!is_rule_id(r.id)) return input_error(fmt::format("id '{}' is not of the form SPnnnn", r.id), {file});
  for (const char* key : {"slug", "title", "message", "remediation"}) {
    auto v = req_string(d, key, file);
    if (!v) return v.error();
    if (std::string(key) == "slug") r.slug = *v;
    if (std::string(key) == "title") r.title = *v;
    if (std::string(key) == "message") r.message = *v;
    if (std::string(key) == "remediation") r.remediation = *v;
  }
  r.description = d.value("description", r.title);
  auto sev = parse_severity(d.value("severity", ""));
  if (!sev) return input_error("severity must be error, warning or info", {file});
  r.severity = *sev;
  auto stage = parse_stage(d.value("stage", ""));
  if (!stage) return input_error("stage must be config, load, capture, first-request, runtime or silent", {file});
  r.stage = *stage;
  if (auto st = parse_certainty_fields(d, file, r.certainty, r.condition_text); !st) return st.error();
  r.category = d.value("category", "general");
  r.location = d.value("location", "");
  r.applies = d.contains("applies") ? d["applies"] : Json(true);
  r.skip_reason = d.value("skip_reason", "not applicable to this plan");
  if (d.contains("requires")) {
    if (!d["requires"].is_array()) return input_error("requires must be a list of fact names", {file});
    for (const auto& x : d["requires"]) {
      if (!x.is_string()) return input_error("requires must be a list of fact names", {file});
      r.requires_facts.push_back(x.get<std::string>());
    }
  }
  if (!d.contains("when")) return input_error("missing field 'when' (the condition)", {file});
  r.condition = d["when"];
  if (d.contains("params")) {
    if (!d["params"].is_object()) return input_error("params must be a mapping of name -> JSON Logic", {file});
    r.params = d["params"];
  }
  if (d.contains("references")) {
    if (!d["references"].is_array()) return input_error("references must be a list", {file});
    for (const auto& x : d["references"]) r.references.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  }
  if (d.contains("versions")) r.versions = d["versions"];
  if (d.contains("affected")) {
    auto affected = parse_affected(d["affected"], file);
    if (!affected) return affected.error();
    r.affected = std::move(*affected);
  }
  r.deprecated = d.value("deprecated", false);
  r.vendor = d.value("vendor", "");
  if (!r.vendor.empty() && r.vendor != "nvidia" && r.vendor != "amd")
    return input_error("vendor must be nvidia or amd", {file});

  // What depends on the document alone (JSON Logic, placeholders, fact names) the catalog
  // compiler checked at build time for the built-in catalog.
  if (checked_at_build) return r;
  for (const auto* logic : {&r.applies, &r.condition}) {
    if (auto st = jsonlogic::validate(*logic); !st)
      return input_error(fmt::format("invalid JSON Logic: {}", st.error().message), {file});
  }
  for (auto it = r.params.begin(); it != r.params.end(); ++it)
    if (auto st = jsonlogic::validate(it.value()); !st)
      return input_error(fmt::format("invalid JSON Logic in params.{}: {}", it.key(), st.error().message), {file});
  // Placeholders {name} name a param or a dotted fact path. Scanned by hand: std::regex recurses
  // once per character and overflows the stack on a long template.
  auto ident = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && (std::isdigit(static_cast<unsigned char>(c)) || c == '.'));
  };
  for (const std::string* tmpl : {&r.message, &r.remediation}) {
    const std::string& s = *tmpl;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '{' || i + 1 >= s.size() || !ident(s[i + 1], true)) continue;
      size_t j = i + 2;
      while (j < s.size() && ident(s[j], false)) ++j;
      if (j >= s.size() || s[j] != '}') continue;
      const std::string name = s.substr(i + 1, j - i - 1);
      if (name.find('.') == std::string::npos && !r.params.contains(name))
        return input_error(fmt::format("placeholder {{{}}} names no param (facts need a dotted path)", name), {file});
      i = j;
    }
  }
  auto registry = fact_registry();
  if (!registry) return registry.error();
  if (auto st = check_fact_names(rule_fact_names(r), **registry); !st) {
    Error e = st.error();
    e.where = {file};
    return e;
  }
  return r;
}

// The rule, compiled for evaluation (rules/rule.hpp).
static Expected<Rule> rule_from_json(const Json& d, const std::string& file, bool checked_at_build) {
  auto r = read_rule_fields(d, file, checked_at_build);
  if (r) compile_rule(*r);
  return r;
}

// A field of an unexpected type (description: 5) makes nlohmann's value()/get() throw: an input
// error naming the file, not an internal error.
Expected<Rule> parse_rule_json(const Json& doc, const std::string& file, bool checked_at_build) {
  try {
    return rule_from_json(doc, file, checked_at_build);
  } catch (const std::exception& e) {
    return input_error(fmt::format("invalid rule file: {}", e.what()), {file});
  }
}

Expected<Rule> parse_rule(std::string_view text, const std::string& file) {
  try {
    auto doc = parse_yaml_text(text, file);
    if (!doc) return doc.error();
    return rule_from_json(*doc, file, false);
  } catch (const std::exception& e) {
    return input_error(fmt::format("invalid rule file: {}", e.what()), {file});
  }
}

namespace {

constexpr std::string_view kRuleImageMagic = "specprobe-rules-1";

void write_rule(ByteWriter& w, const Rule& r) {
  for (const std::string* s : {&r.id, &r.slug, &r.title, &r.description}) w.str(*s);
  write_kinds(w, r.stage, r.severity, r.certainty);
  for (const std::string* s : {&r.condition_text, &r.category}) w.str(*s);
  w.json(r.applies);
  for (const std::string* s : {&r.skip_reason, &r.vendor}) w.str(*s);
  w.strings(r.requires_facts);
  w.json(r.condition);
  w.json(r.params);
  for (const std::string* s : {&r.message, &r.remediation}) w.str(*s);
  w.strings(r.references);
  w.str(r.location);
  write_affected(w, r.affected);
  w.json(r.versions);
  w.u8(r.deprecated ? 1 : 0);
  w.str(r.source_file);
}

std::optional<Rule> read_rule(std::string_view bytes) {
  ByteReader in(bytes);
  Rule r;
  for (std::string* s : {&r.id, &r.slug, &r.title, &r.description}) *s = in.str();
  if (!read_kinds(in, r.stage, r.severity, r.certainty)) return std::nullopt;
  for (std::string* s : {&r.condition_text, &r.category}) *s = in.str();
  r.applies = in.json();
  for (std::string* s : {&r.skip_reason, &r.vendor}) *s = in.str();
  r.requires_facts = in.strings();
  r.condition = in.json();
  r.params = in.json();
  for (std::string* s : {&r.message, &r.remediation}) *s = in.str();
  r.references = in.strings();
  r.location = in.str();
  r.affected = read_affected(in);
  r.versions = in.json();
  r.deprecated = in.u8() != 0;
  r.source_file = in.str();
  if (!in.done()) return std::nullopt;
  compile_rule(r);
  return r;
}

}  // namespace

void write_kinds(ByteWriter& w, Stage stage, Severity severity, Certainty certainty) {
  w.u8(static_cast<uint8_t>(stage));
  w.u8(static_cast<uint8_t>(severity));
  w.u8(static_cast<uint8_t>(certainty));
}

bool read_kinds(ByteReader& r, Stage& stage, Severity& severity, Certainty& certainty) {
  const uint8_t st = r.u8(), sev = r.u8(), cert = r.u8();
  if (st > static_cast<uint8_t>(Stage::silent) || sev > static_cast<uint8_t>(Severity::error) ||
      cert > static_cast<uint8_t>(Certainty::conditional))
    return false;
  stage = static_cast<Stage>(st);
  severity = static_cast<Severity>(sev);
  certainty = static_cast<Certainty>(cert);
  return true;
}

std::string rule_image(const std::vector<Rule>& rules) { return write_image(kRuleImageMagic, rules, write_rule); }

Expected<std::vector<Rule>> read_rule_image(std::string_view image) {
  return read_image<Rule>(image, kRuleImageMagic, "the built-in rule image", read_rule);
}

Expected<std::vector<Rule>> load_rules(const std::string& dir) {
  if (dir.empty())
    if (const std::string_view image = embedded_rule_image(); !image.empty()) return read_rule_image(image);
  std::vector<std::pair<std::string, std::string_view>> files;  // path, text
  std::list<std::string> texts;                                 // the texts read from DIR
  if (dir.empty()) {
    for (const auto& f : embedded_files()) {
      const std::string p(f.path);
      if (p.rfind("rules/", 0) == 0 && p.ends_with(".yaml") && !p.ends_with(".test.yaml") &&
          p.rfind("rules/data/", 0) != 0)
        files.emplace_back(p, f.content);
    }
  } else {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return usage_error(fmt::format("--rules-dir {}: not a directory", dir));
    // The range-for form of the iterator throws filesystem_error on an unreadable subdirectory
    // (an internal error, exit 3); stepping with an error_code makes it an input error naming
    // the directory. A rule file is a few KB: reading stops, with an error, past 1 MiB.
    constexpr size_t kMaxRuleFileBytes = 1 << 20;
    fs::recursive_directory_iterator it(dir, ec);
    if (ec) return input_error(fmt::format("--rules-dir: cannot read the directory: {}", ec.message()), {dir});
    for (const fs::recursive_directory_iterator end; it != end;) {
      const fs::directory_entry e = *it;
      const std::string p = e.path().string();
      std::error_code type_ec;
      const bool descend = e.is_directory(type_ec) && !e.is_symlink(type_ec);
      // Data tables (rules/data/**: version tables, option tables) are not rules.
      const fs::path rel = fs::relative(e.path(), dir);
      const bool in_data = std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == "data"; });
      if (e.is_regular_file(type_ec) && p.ends_with(".yaml") && !p.ends_with(".test.yaml") && !in_data) {
        std::ifstream in(e.path(), std::ios::binary);
        if (!in)
          return input_error(fmt::format("--rules-dir: cannot open the rule file: {}", std::strerror(errno)), {p});
        std::string text;
        char buf[1 << 16];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
          text.append(buf, static_cast<size_t>(in.gcount()));
          if (text.size() > kMaxRuleFileBytes)
            return input_error(fmt::format("--rules-dir: rule file is larger than {} bytes", kMaxRuleFileBytes), {p});
        }
        if (in.bad()) return input_error("--rules-dir: cannot read the rule file", {p});
        // Named from the rules directory itself ("rules/3xxx/SP3001-....yaml"), whatever the cwd.
        texts.push_back(std::move(text));
        files.emplace_back(fs::relative(fs::absolute(e.path()), fs::absolute(dir).parent_path()).string(),
                           texts.back());
      }
      // Stepping fails when the entry is a directory that cannot be opened, or when the
      // directory being listed cannot be read further: name whichever it was.
      it.increment(ec);
      if (ec)
        return input_error(fmt::format("--rules-dir: cannot read the directory: {}", ec.message()),
                           {descend ? p : e.path().parent_path().string()});
    }
  }
  std::sort(files.begin(), files.end());
  // Parsed on the machine's cores (start-up, issue 49); checked in file order, so the first bad
  // file is the one named.
  std::vector<std::optional<Expected<Rule>>> parsed(files.size());
  parallel_for(files.size(), [&](size_t i) {
    const auto& [path, text] = files[i];
    try {
      // The built-in catalog comes compiled (common/embedded.hpp); a --rules-dir is YAML.
      std::optional<Json> compiled = dir.empty() ? embedded_document(path) : std::nullopt;
      parsed[i] = compiled ? parse_rule_json(*compiled, path, true) : parse_rule(text, path);
    } catch (const std::exception& e) {
      parsed[i] = Expected<Rule>(internal_error(fmt::format("{}: loading the rule failed: {}", path, e.what())));
    }
  });
  std::vector<Rule> rules;
  std::set<std::string> ids;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i].first;
    auto& r = *parsed[i];
    if (!r) return r.error();
    const std::string base = fs::path(path).filename().string();
    if (base.rfind(r->id + "-", 0) != 0)
      return input_error(fmt::format("file name must start with its id {}-", r->id), {path});
    const std::string band = fs::path(path).parent_path().filename().string();
    if (band.size() == 4 && band.substr(1) == "xxx" && band[0] != r->id[2])
      return input_error(fmt::format("{} is in band directory {}", r->id, band), {path});
    if (!ids.insert(r->id).second) return input_error(fmt::format("duplicate rule id {}", r->id), {path});
    rules.push_back(std::move(*r));
  }
  std::sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) { return a.id < b.id; });
  return rules;
}

}  // namespace specprobe
