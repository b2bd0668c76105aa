// The canonical JSON report (schema: docs/schema/report-1.json). Dashboards key on ids and
// params, never on message text.
#include <algorithm>
#include <thread>

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

// An advisory result's "advisory" block, at DEPTH.
void write_advisory(const Advisory& a, std::string& out, int depth) {
  JsonObjectWriter w(out, kReportIndent, depth);
  w.key("affected");
  JsonArrayWriter packages(out, kReportIndent, w.child_depth());
  for (const auto& ap : a.affected) {
    JsonObjectWriter p(out, kReportIndent, packages.next());
    p.key("package").string(ap.package);
    p.key("ranges");
    JsonArrayWriter ranges(out, kReportIndent, p.child_depth());
    for (const auto& vr : ap.ranges) {
      JsonObjectWriter x(out, kReportIndent, ranges.next());
      x.key("fixed").string_or_null(vr.fixed);
      if (!vr.fixed_commit.empty()) x.key("fixed_commit").string(vr.fixed_commit);
      x.key("introduced").string(vr.introduced);
      if (!vr.introduced_commit.empty()) x.key("introduced_commit").string(vr.introduced_commit);
      x.close();
    }
    ranges.close();
    p.close();
  }
  packages.close();
  w.key("engine").string(a.engine);
  w.key("fixed_in");
  JsonObjectWriter fixed(out, kReportIndent, w.child_depth());
  for (const auto& [package, version] : a.upgrade) fixed.key(package).string(version);
  fixed.close();
  w.key("published").string(a.published);
  w.key("request_dependent").boolean(a.request_dependent);
  w.key("url").string(a.primary_url());
  w.close();
}

// One result, written as the JSON report lists it (members in key order), at DEPTH.
void write_result(const RuleResult& res, std::string& out, int depth) {
  JsonObjectWriter w(out, kReportIndent, depth);
  if (res.advisory)
    write_advisory(*res.advisory, out, w.key("advisory").child_depth());
  else
    w.key("advisory").null();
  w.key("category").string(res.category);
  w.key("certainty").string(to_string(res.certainty));
  w.key("condition").string_or_null(res.condition);
  w.key("evidence").value(res.evidence);
  w.key("id").string(res.id);
  w.key("known_by").string(res.known_by);
  w.key("location").value(location_json(res.location, res.location_fact));
  w.key("message").string(res.message);
  w.key("only_before").string_or_null(res.only_before);
  w.key("params").value(res.params);
  w.key("references").strings(res.references);
  w.key("remediation").string(res.remediation);
  w.key("severity").string(to_string(res.severity));
  w.key("slug").string(res.slug);
  w.key("stage").string(to_string(res.stage));
  w.key("status").string(to_string(res.status));
  w.key("suppressed")
      .value(res.suppressed ? Json{{"reason", res.suppressed->reason}, {"source", res.suppressed->source}}
                            : Json(nullptr));
  w.key("title").string(res.title);
  w.close();
}

// Whether the report lists RES (ALL_RESULTS false: passed and not applicable are only counted).
bool listed(const RuleResult& res, bool all_results) {
  return all_results || (res.status != ResultStatus::pass && res.status != ResultStatus::skip);
}

}  // namespace

Json report_tool_json() { return {{"name", "specprobe"}, {"version", kToolVersion}, {"git_sha", kGitSha}}; }

Json matrix_json(const SupportMatrix& m) {
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
  return mj;
}

Json report_head_json(const Report& r, bool all_results) {
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
  for (const auto& res : r.results) {
    summary[std::string(to_string(res.status))] = summary[std::string(to_string(res.status))].get<int>() + 1;
    if (res.suppressed) summary["suppressed"] = summary["suppressed"].get<int>() + 1;
    if (res.status == ResultStatus::fail && !res.suppressed)
      by_sev[std::string(to_string(res.severity))] = by_sev[std::string(to_string(res.severity))].get<int>() + 1;
  }
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
  j["matrix"] = r.matrix ? matrix_json(*r.matrix) : Json(nullptr);
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

void write_report_json(const Json& head, const Report& r, bool all_results, std::string& out, int depth) {
  std::vector<const RuleResult*> items;
  for (const auto& res : r.results)
    if (listed(res, all_results)) items.push_back(&res);
  write_object_with(head, "results", out, kReportIndent, depth, [&](int results_depth) {
    if (items.empty()) {
      out += "[]";
      return;
    }
    // Most of a report's bytes: written on the machine's cores when there are many (start-up,
    // issue 49).
    std::vector<std::string> text(items.size());
    const size_t threads = items.size() >= 64 ? std::max(1u, std::thread::hardware_concurrency()) : 1;
    parallel_for(items.size(), threads, [&](size_t i) { write_result(*items[i], text[i], results_depth + 1); });
    out += '[';
    for (size_t i = 0; i < text.size(); ++i) {
      if (i) out += ',';
      json_newline(out, kReportIndent, results_depth + 1);
      out += text[i];
    }
    json_newline(out, kReportIndent, results_depth);
    out += ']';
  });
}

}  // namespace specprobe
