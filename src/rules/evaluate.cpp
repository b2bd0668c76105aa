// Rule evaluation (see evaluate.hpp).
#include "rules/evaluate.hpp"

#include <algorithm>
#include <set>

#include "rules/jsonlogic.hpp"

namespace specprobe {
namespace {

bool missing_required(const Rule& rule, const Json& facts, std::vector<std::string>* missing) {
  bool any = false;
  for (const auto& name : rule.requires_facts) {
    const Json* v = find_fact(facts, name);
    if (!v || v->is_null()) {
      any = true;
      if (missing) missing->push_back(name);
    }
  }
  return any;
}

bool eval_truthy(const Json& logic, const Json& facts, std::string* error) {
  auto r = jsonlogic::evaluate(logic, facts);
  if (!r) {
    if (error) *error = r.error().message;
    return false;
  }
  return jsonlogic::truthy(*r);
}

// RULE's applicability and condition on FACTS: compiled when the rule is, else interpreted.
bool applies_to(const Rule& rule, const Json& facts, std::string* error) {
  return rule.compiled ? rule.compiled->applies.test(facts, error) : eval_truthy(rule.applies, facts, error);
}
bool fires_on(const Rule& rule, const Json& facts, std::string* error) {
  return rule.compiled ? rule.compiled->condition.test(facts, error) : eval_truthy(rule.condition, facts, error);
}

// Every fact the applicability and the condition read, in first-seen order.
std::vector<std::string> evidence_facts(const Rule& rule) {
  std::vector<std::string> out;
  for (const Json* logic : {&rule.applies, &rule.condition})
    for (auto& name : jsonlogic::referenced_vars(*logic))
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  return out;
}

bool reads_gpu_model(const std::vector<std::string>& names) {
  // The GPU's model and architecture; not the vendor (a rule that only leaves AMD out holds on
  // every NVIDIA GPU) nor how the GPU was found.
  static const std::set<std::string, std::less<>> kNotTheModel = {
      "gpu.vendor",   "gpu.count",         "gpu.source",         "gpu.fallback",
      "gpu.declared", "gpu.declared_from", "gpu.fallback_reason"};
  for (const auto& name : names)
    if (name.rfind("gpu.", 0) == 0 && !kNotTheModel.count(name)) return true;
  return false;
}

}  // namespace

std::string_view to_string(ResultStatus s) {
  switch (s) {
    case ResultStatus::pass:
      return "pass";
    case ResultStatus::fail:
      return "fail";
    case ResultStatus::skip:
      return "skip";
    case ResultStatus::error:
      return "error";
  }
  return "error";
}

std::string display_value(const Json& v) {
  if (v.is_null()) return "unknown";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + display_value(x);
    return out.empty() ? "none" : out;
  }
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string render_template(const std::string& tmpl, const Json& params, const Json& facts) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  size_t i = 0;
  while (i < tmpl.size()) {
    const size_t open = tmpl.find('{', i);
    if (open == std::string::npos) {
      out.append(tmpl, i, std::string::npos);
      break;
    }
    const size_t close = tmpl.find('}', open);
    if (close == std::string::npos) {
      out.append(tmpl, i, std::string::npos);
      break;
    }
    out.append(tmpl, i, open - i);
    const std::string name = tmpl.substr(open + 1, close - open - 1);
    const Json* v = nullptr;
    if (params.is_object() && params.contains(name))
      v = &params[name];
    else
      v = find_fact(facts, name);
    out += v ? display_value(*v) : "unknown";
    i = close + 1;
  }
  return out;
}

std::string known_by(const Json& evidence) {
  // The strongest source among the facts a result read: an answer measured on this machine
  // outranks version knowledge. A fact counts only when it is known.
  bool probe = false, library = false, engine = false;
  for (auto it = evidence.begin(); it != evidence.end(); ++it) {
    if (it.value().is_null()) continue;
    const std::string& k = it.key();
    probe |= k.rfind("probe.", 0) == 0 || k.rfind("probe_view.", 0) == 0;
    library |= k.rfind("stack.", 0) == 0 || k == "dsa.stack_probe" || k.rfind("dsa.stack_probe.", 0) == 0;
    engine |= k.rfind("engine_check.", 0) == 0;
  }
  if (engine) return "engine";
  if (library) return "library";
  if (probe) return "probe";
  return "rule";
}

SourceLocation anchor_location(const std::string& fact, const std::map<std::string, SourceLocation>& locations,
                               const std::string& default_file) {
  // The fact's own place, else the nearest recorded place under the same prefix, else the top of
  // the input file.
  SourceLocation loc;
  if (!fact.empty()) {
    auto it = locations.find(fact);
    if (it != locations.end()) {
      loc = it->second;
    } else {
      std::string prefix = fact.substr(0, fact.rfind('.') + 1);
      while (!prefix.empty() && !loc.known()) {
        for (const auto& [name, l] : locations)
          if (name.rfind(prefix, 0) == 0) {
            loc = l;
            break;
          }
        if (prefix.size() < 2) break;
        const size_t dot = prefix.rfind('.', prefix.size() - 2);
        prefix = dot == std::string::npos ? "" : prefix.substr(0, dot + 1);
      }
    }
  }
  if (!loc.known() && !default_file.empty()) loc = SourceLocation{default_file, 1, 1, 1, 1};
  return loc;
}

namespace {

// A vendor-specific rule on another vendor's GPU: the reason it is skipped, else empty.
std::string other_vendor(const Rule& rule, const Json& facts) {
  if (rule.vendor.empty()) return {};
  const auto vendor = fact_string(facts, "gpu.vendor");
  if (!vendor || *vendor == rule.vendor) return {};
  return fmt::format("an {} rule (CUDA kernels, libraries or arch limits); this plan runs on an {} GPU",
                     rule.vendor == "nvidia" ? "NVIDIA-only" : "AMD-only", *vendor == "amd" ? "AMD" : "NVIDIA");
}

}  // namespace

void compile_rule(Rule& rule, const Rule::Compiled* same_applies) {
  auto c = std::make_shared<Rule::Compiled>();
  c->condition = jsonlogic::Program(rule.condition);
  if (same_applies) {
    c->applies = same_applies->applies;
    c->evidence_facts = same_applies->evidence_facts;
    for (auto& name : jsonlogic::referenced_vars(rule.condition))
      if (std::find(c->evidence_facts.begin(), c->evidence_facts.end(), name) == c->evidence_facts.end())
        c->evidence_facts.push_back(std::move(name));
  } else {
    c->applies = jsonlogic::Program(rule.applies);
    c->evidence_facts = evidence_facts(rule);
  }
  c->reads_gpu = reads_gpu_model(c->evidence_facts);
  c->status_facts = c->evidence_facts;
  c->status_facts.insert(c->status_facts.end(), rule.requires_facts.begin(), rule.requires_facts.end());
  if (!rule.vendor.empty()) c->status_facts.push_back("gpu.vendor");
  for (const auto& ap : rule.affected) c->status_facts.push_back("lib." + ap.package + ".version");
  c->closed = c->applies.closed() && c->condition.closed();
  rule.compiled = std::move(c);
}

bool reads_gpu_facts(const Rule& rule) {
  return rule.compiled ? rule.compiled->reads_gpu : reads_gpu_model(evidence_facts(rule));
}

std::string fallback_gpu_condition(const Json& facts, bool reads_gpu) {
  if (!reads_gpu || !fact_bool(facts, "gpu.fallback").value_or(false)) return {};
  return fmt::format("if the GPU is a {}, the one assumed because no GPU was visible or declared (pass --gpu NAME)",
                     fact_string(facts, "gpu.name").value_or("GPU"));
}

ResultStatus rule_status(const Rule& rule, const Json& facts, Severity* severity) {
  if (severity) *severity = rule.severity;
  if (!other_vendor(rule, facts).empty()) return ResultStatus::skip;
  std::string err;
  if (!applies_to(rule, facts, &err)) return err.empty() ? ResultStatus::skip : ResultStatus::error;
  if (missing_required(rule, facts, nullptr)) return ResultStatus::error;
  const bool fires = fires_on(rule, facts, &err);
  if (!err.empty()) return ResultStatus::error;
  if (fires && !rule.affected.empty()) {
    const VersionVerdict::Kind k = place_versions(rule.affected, facts).kind;
    if (k == VersionVerdict::Kind::fixed) return ResultStatus::pass;
    if (k == VersionVerdict::Kind::unknown_older && severity) *severity = Severity::info;
  }
  return fires ? ResultStatus::fail : ResultStatus::pass;
}

RuleResult evaluate_rule(const Rule& rule, const Json& facts, const std::map<std::string, SourceLocation>& locations,
                         const std::string& default_file, PassDetail detail) {
  RuleResult r;
  r.id = rule.id;
  r.severity = rule.severity;
  r.stage = rule.stage;
  r.certainty = rule.certainty;
  // What a listed result says of its rule, and its evidence: every fact the rule reads, with its
  // value. Built at once for a full result; for one counted only if passing or not applicable
  // (rules/result.hpp), when it turns out to fail or cannot be decided.
  bool described = false;
  auto describe = [&] {
    if (described) return;
    described = true;
    r.slug = rule.slug;
    r.title = rule.title;
    r.category = rule.category;
    r.condition = rule.condition_text;
    r.references = rule.references;
    r.location_fact = rule.location;
    for (const auto& name : rule.compiled ? rule.compiled->evidence_facts : evidence_facts(rule)) {
      const Json* v = find_fact(facts, name);
      r.evidence[name] = v ? *v : Json(nullptr);
    }
  };
  const bool counted = detail == PassDetail::counted;
  if (!counted) describe();

  if (auto why = other_vendor(rule, facts); !why.empty()) {
    r.status = ResultStatus::skip;
    if (!counted) r.message = why;
    return r;
  }
  std::string err;
  if (!applies_to(rule, facts, &err)) {
    r.status = err.empty() ? ResultStatus::skip : ResultStatus::error;
    if (r.status == ResultStatus::error) describe();
    if (described) r.message = err.empty() ? rule.skip_reason : "could not evaluate applicability: " + err;
    return r;
  }
  std::vector<std::string> missing;
  if (missing_required(rule, facts, &missing)) {
    describe();
    r.status = ResultStatus::error;
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    r.message = "could not determine: unknown " + names;
    r.missing = missing;
    r.known_by = "unknown";
    return r;
  }
  const bool fires = fires_on(rule, facts, &err);
  if (!err.empty()) {
    describe();
    r.status = ResultStatus::error;
    r.message = "could not evaluate condition: " + err;
    r.known_by = "unknown";
    return r;
  }
  if (fires) describe();
  if (described) r.known_by = known_by(r.evidence);
  if (!fires) {
    r.status = ResultStatus::pass;
    return r;
  }
  // The releases it lives in (the version policy: an unknown version is the newest release).
  VersionVerdict placed;
  if (!rule.affected.empty()) {
    placed = place_versions(rule.affected, facts);
    for (const auto& ap : rule.affected) {
      const Json* v = find_fact(facts, "lib." + ap.package + ".version");
      r.evidence["lib." + ap.package + ".version"] = v ? *v : Json(nullptr);
    }
    if (placed.kind == VersionVerdict::Kind::fixed) {
      r.status = ResultStatus::pass;
      r.message = placed.text;
      return r;
    }
  }
  r.status = ResultStatus::fail;
  for (auto it = rule.params.begin(); it != rule.params.end(); ++it) {
    auto v = jsonlogic::evaluate(it.value(), facts);
    r.params[it.key()] = v ? *v : Json(nullptr);
  }
  r.message = render_template(rule.message, r.params, facts);
  r.remediation = render_template(rule.remediation, r.params, facts);

  // A location fact that is not placed itself but holds the name of one that is (options.unknown_at
  // = "options.given.3") anchors the finding at that one: the fact a list-valued rule is about
  // differs from run to run.
  std::string anchor = rule.location;
  if (!locations.count(anchor))
    if (const Json* named = find_fact(facts, anchor);
        named && named->is_string() && locations.count(named->get<std::string>()))
      anchor = named->get<std::string>();
  r.location_fact = anchor;
  r.location = anchor_location(anchor, locations, default_file);
  if (r.certainty == Certainty::deterministic)
    if (std::string c = fallback_gpu_condition(facts, reads_gpu_facts(rule)); !c.empty()) {
      r.certainty = Certainty::conditional;
      r.condition = std::move(c);
    }
  if (placed.kind == VersionVerdict::Kind::unknown_older) note_older_releases(r, placed, r.message);
  return r;
}

void note_older_releases(RuleResult& r, const VersionVerdict& placed, const std::string& what) {
  r.severity = Severity::info;
  r.only_before = placed.older_than;
  r.message = fmt::format("if you run {}: {} ({} version unknown: give --python, --site-packages or --lib {}=VERSION)",
                          placed.older_than, what, placed.unknown, placed.unknown.substr(0, placed.unknown.find(',')));
}

std::vector<RuleResult> evaluate_rules(const std::vector<Rule>& rules, const Json& facts,
                                       const std::map<std::string, SourceLocation>& locations,
                                       const std::string& default_file) {
  std::vector<RuleResult> out;
  out.reserve(rules.size());
  for (const auto& rule : rules)
    if (!rule.deprecated) out.push_back(evaluate_rule(rule, facts, locations, default_file));
  return out;
}

}  // namespace specprobe
