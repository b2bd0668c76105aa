// The canonical JSON report (schema: docs/schema/report-1.json). Dashboards key on ids and
// params, never on message text.
#include "build_info.hpp"
#include "common/parallel.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

Json location_json(const SourceLocation& l, const std::string& fact) {
  if (!l.known()) return nullptr;
  Json j = {{"path", l.file}, {"line", l.line}, {"column", l.column}};
  j["end_line"] = l.end_line > 0 ? l.end_line : l.line;
  j["end_column"] = l.end_column > 0 ? l.end_column : l.column;
  j["fact"] = fact.empty() ? Json(nullptr) : Json(fact);
  return j;
}

Json result_json(const RuleResult& res) {
  Json x = Json::object();
  x["id"] = res.id;
  x["slug"] = res.slug;
  x["title"] = res.title;
  x["category"] = res.category;
  x["status"] = to_string(res.status);
  x["severity"] = to_string(res.severity);
  x["stage"] = to_string(res.stage);
  x["certainty"] = to_string(res.certainty);
  x["condition"] = res.condition.empty() ? Json(nullptr) : Json(res.condition);
  x["only_before"] = res.only_before.empty() ? Json(nullptr) : Json(res.only_before);
  x["message"] = res.message;
  x["params"] = res.params;
  x["remediation"] = res.remediation;
  x["evidence"] = res.evidence;
  x["location"] = location_json(res.location, res.location_fact);
  x["references"] = res.references;
  x["suppressed"] =
      res.suppressed ? Json{{"reason", res.suppressed->reason}, {"source", res.suppressed->source}} : Json(nullptr);
  x["advisory"] = res.advisory;
  x["known_by"] = res.known_by;
  return x;
}

}  // namespace

Json report_tool_json() { return {{"name", "specprobe"}, {"version", kToolVersion}, {"git_sha", kGitSha}}; }

Json report_to_json(const Report& r, bool all_results) {
  Json j = Json::object();
  j["$schema"] = "https://specprobe.dev/schema/report-1.json";
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = report_tool_json();
  j["invocation"] = {
      {"argv", r.argv}, {"duration_ms", r.duration_ms}, {"exit_code", r.exit_code}, {"fail_on", r.fail_on}};
  j["input"] = {
      {"path", r.input_path}, {"form", r.input_form}, {"engine", r.engine.empty() ? Json(nullptr) : Json(r.engine)}};
  j["verdict"] = r.verdict;
  Json summary = {{"pass", 0}, {"fail", 0}, {"skip", 0}, {"error", 0}, {"suppressed", 0}};
  Json by_sev = {{"error", 0}, {"warning", 0}, {"info", 0}};
  std::vector<const RuleResult*> listed;
  for (const auto& res : r.results) {
    summary[std::string(to_string(res.status))] = summary[std::string(to_string(res.status))].get<int>() + 1;
    if (res.suppressed) summary["suppressed"] = summary["suppressed"].get<int>() + 1;
    if (res.status == ResultStatus::fail && !res.suppressed)
      by_sev[std::string(to_string(res.severity))] = by_sev[std::string(to_string(res.severity))].get<int>() + 1;
    if (!all_results && (res.status == ResultStatus::pass || res.status == ResultStatus::skip)) continue;
    listed.push_back(&res);
  }
  // Most of a report's bytes: built on the machine's cores (start-up, issue 49).
  std::vector<Json> items(listed.size());
  parallel_for(listed.size(), [&](size_t i) { items[i] = result_json(*listed[i]); });
  Json results = Json::array();
  results.get_ref<Json::array_t&>() = std::move(items);
  summary["findings"] = std::move(by_sev);
  // What the user cares about (the text summary line): blocking errors, at risk, warnings, notes.
  const FindingCounts fc = count_findings(r);
  summary["counts"] = {{"errors", fc.errors},
                       {"at_risk", fc.at_risk},
                       {"warnings", fc.warnings},
                       {"notes", fc.notes},
                       {"older_only", fc.older_only},
                       {"passed", fc.passed},
                       {"not_applicable", fc.not_applicable},
                       {"undecided", fc.undecided},
                       {"suppressed", fc.suppressed}};
  j["summary"] = std::move(summary);
  j["results_listed"] = all_results ? "all" : "failing";
  j["results"] = std::move(results);
  if (r.matrix) {
    const SupportMatrix& m = *r.matrix;
    Json mj = Json::object();
    mj["ks"] = m.ks;
    mj["backends"] = m.backends;
    mj["kv_cache_dtypes"] = m.kv_cache_dtypes;
    Json cells = Json::array();
    for (const auto& c : m.cells) {
      cells.push_back({{"k", c.k},
                       {"backend", c.backend},
                       {"kv_cache_dtype", c.kv_cache_dtype},
                       {"verdict", c.verdict},
                       {"indexer", c.indexer.empty() ? Json(nullptr) : Json(c.indexer)},
                       {"errors", c.errors},
                       {"risks", c.risks},
                       {"warnings", c.warnings},
                       {"known_by", c.known_by}});
      if (!c.evidence.empty()) cells.back()["evidence"] = c.evidence;
      if (!c.undecided.empty()) cells.back()["undecided"] = c.undecided;
    }
    mj["cells"] = std::move(cells);
    mj["working_k"] = m.working_k;
    mj["max_working_k"] = m.max_working_k ? Json(*m.max_working_k) : Json(nullptr);
    mj["alternative_backends"] = m.alternative_backends;
    mj["alternative_kv_cache_dtypes"] = m.alternative_kv_cache_dtypes;
    j["matrix"] = std::move(mj);
  } else {
    j["matrix"] = nullptr;
  }
  Json notes = Json::array();
  for (const auto& n : r.notes)
    notes.push_back({{"severity", n.severity}, {"message", n.message}, {"location", location_json(n.where, "")}});
  j["notes"] = std::move(notes);
  Json missing = Json::array();
  for (const auto& m : r.missing)
    missing.push_back({{"fact", m.fact}, {"supply", m.supply}, {"needed_by", m.needed_by}});
  j["missing"] = std::move(missing);
  j["assumptions"] = r.assumptions;
  j["facts"] = r.facts;
  j["probes"] = r.probes;
  j["checkpoint"] = r.checkpoint;
  return j;
}

}  // namespace specprobe
