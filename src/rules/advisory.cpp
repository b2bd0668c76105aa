// Advisories: loading, version placement and evaluation (see advisory.hpp).
#include "rules/advisory.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "common/byte_image.hpp"
#include "common/embedded.hpp"
#include "common/parallel.hpp"
#include "common/version.hpp"
#include "common/yaml_json.hpp"
#include "facts/registry.hpp"
#include "rules/affected.hpp"
#include "rules/evaluate.hpp"
#include "rules/ids.hpp"
#include "rules/jsonlogic.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

Expected<std::string> need_string(const Json& d, const char* key, const std::string& file) {
  auto it = d.find(key);
  if (it == d.end() || !it->is_string() || it->get<std::string>().empty())
    return input_error(fmt::format("missing or empty string field '{}'", key), {file});
  return it->get<std::string>();
}

// {"OP": ARGS}, and {"==": [A, B]}, built in place (nlohmann's initializer lists copy every
// level again: a tenth of loading the advisories, issue 49).
Json operation(const char* op, Json args) {
  Json o = Json::object();
  o.get_ref<Json::object_t&>().emplace(op, std::move(args));
  return o;
}
Json equal(Json a, Json b) {
  Json args = Json::array();
  auto& v = args.get_ref<Json::array_t&>();
  v.reserve(2);
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return operation("==", std::move(args));
}

// The JSON Logic that says whether the advisory applies to the plan's engine and GPU.
Json applicability(const Advisory& a) {
  Json all = Json::array();
  if (a.engine != "any") all.push_back(equal(operation("var", "engine.name"), a.engine));
  if (!a.gpu.empty()) {
    Json any = Json::array();
    for (const auto& g : a.gpu) {
      if (g.rfind("sm_", 0) == 0) {
        Json parts = Json::array();
        parts.push_back("sm_");
        parts.push_back(operation("var", "gpu.sm"));
        any.push_back(equal(operation("cat", std::move(parts)), g));
      } else {
        any.push_back(equal(operation("var", "gpu.arch_family"), g));
      }
      any.push_back(equal(operation("var", "gpu.arch"), g));
    }
    all.push_back(operation("or", std::move(any)));
  }
  if (all.empty()) return true;
  return operation("and", std::move(all));
}

// The advisory as a rule (for status, evidence and anchoring): its applicability and what a
// result names, and with a TRIGGER (the head rule has none) that trigger as the condition.
Rule make_rule(const Advisory& a, std::optional<Json> trigger) {
  Rule r;
  r.id = a.id;
  r.slug = a.id;
  r.title = a.summary;
  r.severity = a.severity;
  r.stage = a.stage;
  // A failure that needs some request content is conditional on those requests.
  r.certainty = a.request_dependent ? Certainty::conditional : a.certainty;
  r.condition_text = !a.condition_text.empty() ? a.condition_text
                     : a.request_dependent     ? "when requests use the feature it names"
                                               : std::string();
  r.category = "advisory";
  r.applies = applicability(a);
  r.skip_reason = a.engine == "any"
                      ? "not on an affected GPU"
                      : fmt::format("not a {} plan{}", a.engine, a.gpu.empty() ? "" : " on an affected GPU");
  for (const auto& ref : a.references) r.references.push_back(ref.url);
  if (trigger) {
    r.requires_facts = a.requires_facts;
    r.condition = std::move(*trigger);
    compile_rule(r, a.head_rule().compiled.get());
    return r;
  }
  // A head rule's compiled form depends on its applicability alone, which a few dozen engine and
  // GPU lists give every advisory: compiled once for each (start-up, issue 49).
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Rule::Compiled>> by_applicability;
  std::string key = a.engine;
  for (const auto& g : a.gpu) key += '\x1f' + g;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = by_applicability.find(key); it != by_applicability.end()) {
      r.compiled = it->second;
      return r;
    }
  }
  compile_rule(r);
  std::lock_guard<std::mutex> lock(mu);
  by_applicability.emplace(std::move(key), r.compiled);
  return r;
}

// Whether the trigger is false on what is known: a conjunct of a top-level "and" that reads no
// `requires` fact and evaluates false. Such a plan is not affected even when a required fact (a
// width, a group size) is unknown.
bool known_false(const Advisory& a, const Json& facts) {
  const Json& trigger = a.trigger();
  if (!trigger.is_object() || !trigger.contains("and") || !trigger["and"].is_array()) return false;
  for (const auto& conjunct : trigger["and"]) {
    bool reads_required = false;
    for (const auto& n : jsonlogic::referenced_vars(conjunct))
      reads_required |= std::find(a.requires_facts.begin(), a.requires_facts.end(), n) != a.requires_facts.end();
    if (reads_required) continue;
    auto v = jsonlogic::evaluate(conjunct, facts);
    if (v && !jsonlogic::truthy(*v)) return true;
  }
  return false;
}

// The first fact of the trigger with a recorded place in the user's file.
std::string anchor_fact(const Advisory& a, const std::map<std::string, SourceLocation>& locations) {
  for (const auto& n : a.trigger_facts())
    if (locations.count(n)) return n;
  return {};
}

std::string remediation_of(const Advisory& a) {
  std::string up;
  for (const auto& [pkg, ver] : a.upgrade) up += fmt::format("{}{} {}", up.empty() ? "Upgrade to " : " and ", pkg, ver);
  if (!up.empty() && !a.fix_config.empty()) return up + ", or: " + a.fix_config;
  if (!up.empty()) return up;
  if (!a.fix_config.empty()) return a.fix_config;
  return "No fixed release is known: avoid this configuration (see the report)";
}

}  // namespace

// What the advisory builds at first use (advisory.hpp): the trigger (decoded from image bytes
// when it came from the built-in image) and the two rules.
struct Advisory::Lazy {
  std::string trigger_bytes;  // a built-in image's encoding of the trigger (decoded into the rule)
  Json trigger;               // or the trigger itself
  std::vector<std::string> trigger_facts;
  std::once_flag head_built, rule_built;
  std::shared_ptr<const Rule> head, rule;
  std::vector<std::string> status_facts;  // built with rule
};

Advisory::Advisory() : lazy_(std::make_shared<Lazy>()) {}

Advisory::Lazy& Advisory::lazy() const { return *lazy_; }

const Json& Advisory::trigger() const { return trigger_rule().condition; }

const std::vector<std::string>& Advisory::trigger_facts() const { return lazy().trigger_facts; }

void Advisory::set_trigger(Json trigger) {
  lazy_ = std::make_shared<Lazy>();
  lazy_->trigger_facts = jsonlogic::referenced_vars(trigger);
  lazy_->trigger = std::move(trigger);
}

void Advisory::set_trigger_image(std::string bytes, std::vector<std::string> facts) {
  lazy_ = std::make_shared<Lazy>();
  lazy_->trigger_bytes = std::move(bytes);
  lazy_->trigger_facts = std::move(facts);
}

const Rule& Advisory::head_rule() const {
  Lazy& l = lazy();
  std::call_once(l.head_built, [&] { l.head = std::make_shared<const Rule>(make_rule(*this, std::nullopt)); });
  return *l.head;
}

const Rule& Advisory::trigger_rule() const {
  Lazy& l = lazy();
  std::call_once(l.rule_built, [&] {
    // An image's trigger was checked when the image was read (json_bytes), and is decoded once.
    Json trigger = l.trigger_bytes.empty() ? l.trigger : ByteReader(l.trigger_bytes).json();
    l.rule = std::make_shared<const Rule>(make_rule(*this, std::move(trigger)));
    if (l.rule->compiled) l.status_facts = l.rule->compiled->status_facts;
    for (const auto& ap : affected) l.status_facts.push_back("lib." + ap.package + ".version");
  });
  return *l.rule;
}

const std::vector<std::string>& Advisory::status_facts() const {
  trigger_rule();
  return lazy().status_facts;
}

std::string Advisory::primary_url() const {
  for (const auto& r : references)
    if (r.type == "report") return r.url;
  return references.empty() ? std::string() : references.front().url;
}

Expected<Advisory> parse_advisory(std::string_view text, const std::string& file) {
  try {
    auto doc = parse_yaml_text(text, file);
    if (!doc) return doc.error();
    return parse_advisory_json(*doc, file);
  } catch (const std::exception& e) {
    return input_error(fmt::format("invalid advisory: {}", e.what()), {file});
  }
}

Expected<Advisory> parse_advisory_json(const Json& d, const std::string& file, bool checked_at_build) {
  try {
    if (!d.is_object()) return input_error("an advisory file must be a mapping", {file, 1, 1});
    static const std::set<std::string> kKeys = {
        "id",       "summary",           "details",  "published", "engine",    "trigger",
        "requires", "request_dependent", "affected", "gpu",       "stage",     "severity",
        "fix",      "references",        "modified", "aliases",   "certainty", "condition"};
    for (auto it = d.begin(); it != d.end(); ++it)
      if (!kKeys.count(it.key())) return input_error(fmt::format("unknown field '{}'", it.key()), {file});
    Advisory a;
    a.source_file = file;
    for (auto [key, dst] : {std::pair{"id", &a.id}, std::pair{"summary", &a.summary}, std::pair{"details", &a.details},
                            std::pair{"engine", &a.engine}}) {
      auto v = need_string(d, key, file);
      if (!v) return v.error();
      *dst = *v;
    }
    if (!is_advisory_id(a.id))
      return input_error(fmt::format("id '{}' is not of the form SPA-<PROJECT>-<number>[letter]", a.id), {file});
    if (a.engine != "vllm" && a.engine != "sglang" && a.engine != "any")
      return input_error("engine must be vllm, sglang or any", {file});
    // YAML reads an unquoted date as text (the converter keeps non-numeric scalars as strings).
    if (!d.contains("published") || !d["published"].is_string() || !is_iso_date(d["published"].get<std::string>()))
      return input_error("published must be a date YYYY-MM-DD", {file});
    a.published = d["published"].get<std::string>();
    if (!d.contains("trigger")) return input_error("missing field 'trigger'", {file});
    if (auto st = checked_at_build ? Status(Ok{}) : jsonlogic::validate(d["trigger"]); !st)
      return input_error(fmt::format("invalid JSON Logic in trigger: {}", st.error().message), {file});
    if (d.contains("requires")) {
      if (!d["requires"].is_array()) return input_error("requires must be a list of fact names", {file});
      for (const auto& x : d["requires"]) {
        if (!x.is_string()) return input_error("requires must be a list of fact names", {file});
        a.requires_facts.push_back(x.get<std::string>());
      }
    }
    a.request_dependent = d.value("request_dependent", false);
    if (!d.contains("affected") || !d["affected"].is_array() || d["affected"].empty())
      return input_error("affected must list at least one package with its ranges", {file});
    auto affected = parse_affected(d["affected"], file);
    if (!affected) return affected.error();
    a.affected = std::move(*affected);
    if (d.contains("gpu")) {
      if (!d["gpu"].is_array()) return input_error("gpu must be a list of arch families or archs", {file});
      for (const auto& g : d["gpu"]) {
        if (!g.is_string()) return input_error("gpu must be a list of arch families or archs", {file});
        a.gpu.push_back(g.get<std::string>());
      }
    }
    auto stage = parse_stage(d.value("stage", ""));
    if (!stage) return input_error("stage must be config, load, capture, first-request, runtime or silent", {file});
    a.stage = *stage;
    if (auto st = parse_certainty_fields(d, file, a.certainty, a.condition_text); !st) return st.error();
    auto sev = parse_severity(d.value("severity", ""));
    if (!sev) return input_error("severity must be error, warning or info", {file});
    a.severity = *sev;
    if (d.contains("fix")) {
      const Json& f = d["fix"];
      if (!f.is_object()) return input_error("fix must be a mapping (upgrade, config)", {file});
      if (f.contains("upgrade")) {
        if (!f["upgrade"].is_object()) return input_error("fix.upgrade must map packages to versions", {file});
        for (auto it = f["upgrade"].begin(); it != f["upgrade"].end(); ++it) {
          auto v = version_text(it.value(), "fix.upgrade", file);
          if (!v) return v.error();
          a.upgrade[it.key()] = *v;
        }
      }
      if (f.contains("config")) {
        if (!f["config"].is_string()) return input_error("fix.config must be a sentence", {file});
        a.fix_config = f["config"].get<std::string>();
      }
    }
    for (const auto& [pkg, ver] : a.upgrade) {
      bool matches = false;
      for (const auto& ap : a.affected)
        if (ap.package == pkg)
          for (const auto& r : ap.ranges) matches |= r.fixed == ver;
      if (!matches) return input_error(fmt::format("fix.upgrade {} {} is no range's `fixed`", pkg, ver), {file});
    }
    if (!d.value("references", Json()).is_array() || d["references"].empty())
      return input_error("references must list at least the report", {file});
    for (const auto& r : d["references"]) {
      if (!r.is_object() || !r.value("url", Json()).is_string() || !r.value("type", Json()).is_string())
        return input_error("each reference needs a type and a url", {file});
      const std::string url = r["url"].get<std::string>();
      if (url.rfind("https://", 0) != 0)
        return input_error(fmt::format("reference '{}' is not a public https URL", url), {file});
      a.references.push_back({r["type"].get<std::string>(), url});
    }
    // Every fact the advisory reads must exist (checked at build for the built-in database).
    if (!checked_at_build) {
      auto registry = fact_registry();
      if (!registry) return registry.error();
      std::vector<std::string> names = jsonlogic::referenced_vars(d["trigger"]);
      names.insert(names.end(), a.requires_facts.begin(), a.requires_facts.end());
      if (auto st = check_fact_names(names, **registry); !st) {
        Error e = st.error();
        e.where = {file};
        return e;
      }
    }
    a.set_trigger(d["trigger"]);
    a.head_rule();  // built here, where the catalog is read (the trigger's rule at its first use)
    return a;
  } catch (const std::exception& e) {
    return input_error(fmt::format("malformed advisory: {}", e.what()), {file});
  }
}

namespace {

constexpr std::string_view kImageMagic = "specprobe-advisories-2";

void write_record(ByteWriter& w, const Advisory& a) {
  for (const std::string* s : {&a.id, &a.summary, &a.details, &a.published, &a.engine}) w.str(*s);
  w.json(a.trigger());
  w.strings(a.trigger_facts());
  w.strings(a.requires_facts);
  w.u8(a.request_dependent ? 1 : 0);
  write_affected(w, a.affected);
  w.strings(a.gpu);
  write_kinds(w, a.stage, a.severity, a.certainty);
  w.str(a.condition_text);
  w.u32(static_cast<uint32_t>(a.upgrade.size()));
  for (const auto& [pkg, ver] : a.upgrade) {
    w.str(pkg);
    w.str(ver);
  }
  w.str(a.fix_config);
  w.u32(static_cast<uint32_t>(a.references.size()));
  for (const auto& r : a.references) {
    w.str(r.type);
    w.str(r.url);
  }
  w.str(a.source_file);
}

std::optional<Advisory> read_record(std::string_view bytes) {
  ByteReader r(bytes);
  Advisory a;
  for (std::string* s : {&a.id, &a.summary, &a.details, &a.published, &a.engine}) *s = r.str();
  const std::string_view trigger = r.json_bytes();
  std::vector<std::string> trigger_facts = r.strings();
  a.set_trigger_image(std::string(trigger), std::move(trigger_facts));
  a.requires_facts = r.strings();
  a.request_dependent = r.u8() != 0;
  a.affected = read_affected(r);
  a.gpu = r.strings();
  if (!read_kinds(r, a.stage, a.severity, a.certainty)) return std::nullopt;
  a.condition_text = r.str();
  for (size_t n = r.count(); n > 0 && r.ok(); --n) {
    std::string pkg = r.str();
    a.upgrade[pkg] = r.str();
  }
  a.fix_config = r.str();
  a.references.resize(r.count());
  for (auto& ref : a.references) {
    ref.type = r.str();
    ref.url = r.str();
  }
  a.source_file = r.str();
  if (!r.done()) return std::nullopt;
  a.head_rule();  // built here, on the loading thread; the trigger's rule at its first use
  return a;
}

}  // namespace

std::string advisory_image(const std::vector<Advisory>& advisories) {
  return write_image(kImageMagic, advisories, write_record);
}

Expected<std::vector<Advisory>> read_advisory_image(std::string_view image) {
  // Each record decoded and its trigger rule compiled on the cores.
  return read_image<Advisory>(image, kImageMagic, "the built-in advisory image", read_record);
}

Expected<std::vector<Advisory>> load_advisories(const std::string& dir) {
  if (dir.empty())
    if (const std::string_view image = embedded_advisory_image(); !image.empty()) return read_advisory_image(image);
  std::vector<std::pair<std::string, std::string_view>> files;  // path, text
  std::list<std::string> texts;                                 // the texts read from DIR
  auto wanted = [](const std::string& p) {
    const std::string base = fs::path(p).filename().string();
    return base.rfind("SPA-", 0) == 0 && p.ends_with(".yaml") && !p.ends_with(".test.yaml");
  };
  if (dir.empty()) {
    for (const auto& f : embedded_files()) {
      const std::string p(f.path);
      if (p.rfind("advisories/", 0) == 0 && wanted(p)) files.emplace_back(p, f.content);
    }
  } else {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return usage_error(fmt::format("--advisories-dir {}: not a directory", dir));
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string p = it->path().string();
      if (!it->is_regular_file(ec) || !wanted(p)) continue;
      std::ifstream in(it->path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str().size() > (1u << 20)) return input_error("advisory file is larger than 1 MiB", {p});
      texts.push_back(ss.str());
      files.emplace_back(p, texts.back());
    }
    if (ec) return input_error(fmt::format("--advisories-dir: cannot read the directory: {}", ec.message()), {dir});
  }
  std::sort(files.begin(), files.end());
  // Parsed on the machine's cores (start-up, issue 49); checked in file order, so the first bad
  // file is the one named.
  std::vector<std::optional<Expected<Advisory>>> parsed(files.size());
  parallel_for(files.size(), [&](size_t i) {
    const auto& [path, text] = files[i];
    try {
      std::optional<Json> compiled = dir.empty() ? embedded_document(path) : std::nullopt;
      parsed[i] = compiled ? parse_advisory_json(*compiled, path, true) : parse_advisory(text, path);
    } catch (const std::exception& e) {
      parsed[i] =
          Expected<Advisory>(internal_error(fmt::format("{}: loading the advisory failed: {}", path, e.what())));
    }
  });
  std::vector<Advisory> out;
  std::set<std::string> ids;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i].first;
    auto& a = *parsed[i];
    if (!a) return a.error();
    if (fs::path(path).stem().string() != a->id)
      return input_error(fmt::format("file name must be {}.yaml", a->id), {path});
    if (!ids.insert(a->id).second) return input_error(fmt::format("duplicate advisory id {}", a->id), {path});
    out.push_back(std::move(*a));
  }
  std::sort(out.begin(), out.end(), [](const Advisory& x, const Advisory& y) { return x.id < y.id; });
  return out;
}

VersionVerdict place_versions(const Advisory& a, const Json& facts) { return place_versions(a.affected, facts); }

ResultStatus advisory_status(const Advisory& a, const Json& facts, Severity* severity) {
  // The same status as evaluate_advisory's (which decides some without the trigger: the sweep
  // asks only about advisories that apply to the plan and whose versions it runs).
  const ResultStatus trig = rule_status(a.trigger_rule(), facts);
  if (trig == ResultStatus::skip || trig == ResultStatus::pass) return trig;
  const VersionVerdict v = place_versions(a, facts);
  if (v.kind == VersionVerdict::Kind::fixed) return ResultStatus::pass;
  if (trig == ResultStatus::error && known_false(a, facts)) return ResultStatus::pass;
  if (trig == ResultStatus::error && v.kind == VersionVerdict::Kind::unknown_older) {
    if (severity) *severity = Severity::info;
    return ResultStatus::fail;
  }
  if (trig != ResultStatus::fail) return trig;
  Severity s = a.severity;
  if (v.kind == VersionVerdict::Kind::unknown_older) s = Severity::info;
  if (severity) *severity = s;
  return ResultStatus::fail;
}

RuleResult evaluate_advisory(const Advisory& a, const Json& facts,
                             const std::map<std::string, SourceLocation>& locations, const std::string& default_file,
                             PassDetail detail) {
  auto add_evidence = [&](RuleResult& r, const std::string& name) {
    const Json* v = find_fact(facts, name);
    r.evidence[name] = v ? *v : Json(nullptr);
  };
  // Decided without the trigger, which is then not read (it is decoded and compiled at its first
  // use, issue 49): an advisory for another engine or GPU does not apply, and one whose versions
  // the plan runs are outside every range passes whatever its trigger says. The evidence names
  // the facts the trigger reads all the same.
  const ResultStatus head = rule_status(a.head_rule(), facts);
  // (Not needed for one that does not apply: its result is the head rule's skip.)
  const VersionVerdict v = head == ResultStatus::skip ? VersionVerdict{} : place_versions(a, facts);
  const bool by_head =
      head == ResultStatus::skip || (head == ResultStatus::pass && v.kind == VersionVerdict::Kind::fixed);
  RuleResult r = evaluate_rule(by_head ? a.head_rule() : a.trigger_rule(), facts, {}, "", detail);
  r.advisory = &a;
  if (detail == PassDetail::counted && (r.status == ResultStatus::skip || r.status == ResultStatus::pass)) return r;
  if (by_head)
    for (const auto& name : a.trigger_facts()) add_evidence(r, name);
  for (const auto& ap : a.affected) add_evidence(r, "lib." + ap.package + ".version");
  if (by_head && r.status == ResultStatus::pass) r.message = v.text;
  if (r.status == ResultStatus::skip || r.status == ResultStatus::pass) return r;
  // Versions outside every range decide it whatever else is unknown.
  if (v.kind == VersionVerdict::Kind::fixed || (r.status == ResultStatus::error && known_false(a, facts))) {
    r.status = ResultStatus::pass;
    r.message = v.kind == VersionVerdict::Kind::fixed ? v.text : "";
    return r;
  }
  if (r.status == ResultStatus::error) {
    // Only older releases are affected and the version is unknown: a note, not a gap in the
    // evaluation of the plan.
    if (v.kind == VersionVerdict::Kind::unknown_older) {
      r.status = ResultStatus::fail;
      r.severity = Severity::info;
      r.only_before = v.older_than;
      r.message = fmt::format("if you run {}: {} — it could not be checked ({}); give --python or --lib {}=VERSION",
                              v.older_than, a.summary, r.message, v.unknown.substr(0, v.unknown.find(',')));
      r.remediation = remediation_of(a);
    }
    return r;
  }
  r.remediation = remediation_of(a);
  r.location = anchor_location(anchor_fact(a, locations), locations, default_file);
  r.location_fact = anchor_fact(a, locations);
  switch (v.kind) {
    case VersionVerdict::Kind::fixed:  // decided above
    case VersionVerdict::Kind::affected:
      r.message = fmt::format("{} — {}", a.summary, v.text);
      break;
    case VersionVerdict::Kind::unknown_newest:
      r.message = fmt::format("{} — {} version unknown, and no release up to the newest is fixed{}", a.summary,
                              v.unknown, v.text.empty() ? "" : "; " + v.text);
      break;
    case VersionVerdict::Kind::unknown_older:
      note_older_releases(r, v, a.summary);
      return r;
  }
  return r;
}

}  // namespace specprobe
