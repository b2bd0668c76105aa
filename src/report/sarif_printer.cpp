// SARIF 2.1.0 printer for GitHub code scanning (see printers.hpp). What GitHub reads (github/docs,
// content/code-security/reference/code-scanning/sarif-files/sarif-support-for-code-scanning.md):
// rules need short/full description and help.text; results need message.text, one location with all
// four region coordinates (a result without a physical location is rejected) and
// partialFingerprints.primaryLocationLineHash; relative URIs resolve against the repository root;
// upload-sarif keeps a runAutomationDetails.id that is already there (its `category` input then
// does nothing), so the id names the config and the GPU; limits: 20 runs a file, 25,000 results
// and rules a run, 1,024 characters of description, 255 of a rule name.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "build_info.hpp"
#include "common/embedded.hpp"
#include "common/hash.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

constexpr const char* kSarifSchema = "https://json.schemastore.org/sarif-2.1.0.json";
constexpr size_t kMaxDescription = 1024;  // GitHub's limit for short/fullDescription.text

std::string truncate(std::string s, size_t max) {
  if (s.size() <= max) return s;
  s.resize(max - 3);
  return s + "...";
}

std::string_view sarif_level(Severity s) {
  switch (s) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::info:
      return "note";
  }
  return "warning";
}

// RFC 3986: unreserved characters and '/' stay, everything else is %XX.
std::string percent_encode(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The artifact of a report path: relative to the source root (%SRCROOT%) when it lies under it;
// a file: URI when it lies outside.
Json artifact_location(const std::string& path, const PathBase& paths) {
  const std::string p = root_relative(path, paths);
  if (!p.empty() && p.front() == '/') return {{"uri", "file://" + percent_encode(p)}};
  Json a = {{"uri", percent_encode(p)}};
  if (!paths.root.empty()) a["uriBaseId"] = "%SRCROOT%";
  return a;
}

Json region_of(const SourceLocation& l) {
  // SARIF lines and columns are 1-based; endColumn is the column after the region. The readers
  // record where the option starts; without an end, the region is that first character.
  const int line = std::max(l.line, 1);
  const int col = std::max(l.column, 1);
  const int end_line = l.end_line >= line ? l.end_line : line;
  const int end_col = l.end_column > 0 ? l.end_column + 1 : col + 1;
  return {{"startLine", line}, {"startColumn", col}, {"endLine", end_line}, {"endColumn", end_col}};
}

// A location: the file and region, or, for a plan given on specprobe's command line (no file to
// point at), a logical location naming the option's column on that line.
Json location_of(const SourceLocation& l, const PathBase& paths) {
  if (l.file == kCommandLineInput) {
    Json loc = {{"logicalLocations",
                 Json::array({{{"name", "command line"},
                               {"fullyQualifiedName", fmt::format("command line, column {}", std::max(l.column, 1))},
                               {"kind", "parameter"}}})}};
    loc["message"] = {{"text", "given on specprobe's command line after `--`: there is no file to point at"}};
    return loc;
  }
  return {{"physicalLocation", {{"artifactLocation", artifact_location(l.file, paths)}, {"region", region_of(l)}}}};
}

std::string file_uri_of_dir(std::string dir) {
  if (dir.back() != '/') dir += '/';
  return "file://" + percent_encode(dir);
}

Json rule_descriptor(const Rule& r) {
  Json d = Json::object();
  d["id"] = r.id;
  d["name"] = r.slug;
  d["shortDescription"] = {{"text", truncate(r.title, kMaxDescription)}};
  d["fullDescription"] = {{"text", truncate(r.description.empty() ? r.title : r.description, kMaxDescription)}};
  const auto doc = embedded_file(fmt::format("docs/rules/{}.md", r.id));
  std::string text = fmt::format("{}\n\nFix: {}", r.description.empty() ? r.title : r.description, r.remediation);
  if (!r.references.empty()) {
    text += "\n\nReferences:";
    for (const auto& ref : r.references) text += "\n- " + ref;
  }
  d["help"] = {{"text", doc ? std::string(*doc) : text}, {"markdown", doc ? std::string(*doc) : text}};
  d["helpUri"] = fmt::format("{}/{}.md", kRuleDocsUrl, r.id);
  d["defaultConfiguration"] = {{"level", sarif_level(r.severity)}};
  Json tags = Json::array({r.category, std::string(to_string(r.stage))});
  d["properties"] = {
      {"tags", tags},
      {"precision", "high"},
      {"problem.severity", r.severity == Severity::info ? "recommendation" : std::string(to_string(r.severity))}};
  if (r.deprecated) d["properties"]["deprecated"] = true;
  return d;
}

Json advisory_descriptor(const Advisory& a) {
  Json d = Json::object();
  d["id"] = a.id;
  d["name"] = a.id;
  d["shortDescription"] = {{"text", truncate(a.summary, kMaxDescription)}};
  d["fullDescription"] = {{"text", truncate(a.details, kMaxDescription)}};
  std::string text = a.details + "\n\nAffected:";
  for (const auto& ap : a.affected)
    for (const auto& r : ap.ranges)
      text += fmt::format("\n- {} {}{}", ap.package, r.introduced == "0" ? "" : ">= " + r.introduced + " ",
                          r.fixed.empty() ? "(no fixed release known)" : "< " + r.fixed);
  if (!a.fix_config.empty()) text += "\n\nFix: " + a.fix_config;
  text += "\n\nReferences:";
  for (const auto& ref : a.references) text += fmt::format("\n- {} ({})", ref.url, ref.type);
  d["help"] = {{"text", text}, {"markdown", text}};
  d["helpUri"] = a.primary_url();
  d["defaultConfiguration"] = {{"level", sarif_level(a.severity)}};
  d["properties"] = {
      {"tags", Json::array({"advisory", std::string(to_string(a.stage))})},
      {"precision", "medium"},
      {"problem.severity", a.severity == Severity::info ? "recommendation" : std::string(to_string(a.severity))},
      {"published", a.published}};
  return d;
}

Json notification(const std::string& level, const std::string& text, const std::string& rule_id, int rule_index) {
  Json n = {{"level", level}, {"message", {{"text", text}}}};
  if (!rule_id.empty()) {
    n["descriptor"] = {{"id", rule_id}};
    Json assoc = {{"id", rule_id}};
    if (rule_index >= 0) assoc["index"] = rule_index;
    n["associatedRule"] = assoc;
  }
  return n;
}

}  // namespace

std::string gpu_slug(const Report& report) {
  std::string raw = report.plan.gpu.declared.value_or("");
  if (raw.empty()) raw = report.plan.gpu.name.value_or("unknown-gpu");
  std::string lower;
  for (unsigned char c : raw) lower += static_cast<char>(std::tolower(c));
  if (lower.rfind("nvidia ", 0) == 0) lower = lower.substr(7);
  std::string out;
  for (unsigned char c : lower) {
    const bool keep = std::isalnum(c) || c == '_' || c == '.';
    if (keep)
      out += static_cast<char>(c);
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-gpu" : out;
}

std::string sarif_automation_id(const std::vector<Report>& reports, const std::string& category) {
  std::string id = category;
  if (id.empty()) {
    // One category per job, not per file: a per-file category leaves the alerts of a renamed or
    // deleted file open for ever, and GitHub rejects two runs of one category in an upload.
    std::string gpu;
    for (const auto& r : reports) {
      const std::string g = gpu_slug(r);
      gpu = gpu.empty() || gpu == g ? g : "mixed";
    }
    id = gpu.empty() || gpu == "mixed" ? std::string("specprobe") : "specprobe/" + gpu;
  }
  while (!id.empty() && id.back() == '/') id.pop_back();
  return id + "/";  // nothing after the last slash: no run id, the whole id is the category
}

bool fails_gate(const RuleResult& r, const std::string& fail_on) {
  if (r.status != ResultStatus::fail || r.suppressed || fail_on == "none") return false;
  // "risk": errors, the conditional (at-risk) ones too; "error": deterministic errors only; a
  // lower threshold (warning, info) counts conditional findings as well.
  if (fail_on == "risk") return r.severity == Severity::error;
  const auto threshold = parse_severity(fail_on);
  if (!threshold || r.severity < *threshold) return false;
  return r.certainty == Certainty::deterministic || *threshold != Severity::error;
}

namespace {

constexpr const char* kUnknownRuleId = "verdict-unknown";

// The descriptor of the unknown verdict: not a rule of the catalog, but a result GitHub shows, so
// code scanning is not green while the job is red (exit 4).
Json unknown_descriptor() {
  const std::string text =
      "specprobe could not decide the plan: a fact it needs is not known (a model named by an id "
      "that could not be read, no GPU given, an unknown library version). The result's message names "
      "the fact and how to supply it (--model, --gpu, --lib, --python). The job fails with exit code 4 "
      "unless --unknown-ok is given.";
  Json d = Json::object();
  d["id"] = kUnknownRuleId;
  d["name"] = "VerdictUnknown";
  d["shortDescription"] = {{"text", "The verdict is unknown: a fact the plan needs is missing"}};
  d["fullDescription"] = {{"text", text}};
  d["help"] = {{"text", text}, {"markdown", text}};
  d["helpUri"] = fmt::format("{}/blob/main/docs/versions.md#the-verdict-and-the-exit-code", kProjectUrl);
  d["defaultConfiguration"] = {{"level", "error"}};
  d["properties"] = {{"tags", Json::array({"verdict"})}, {"precision", "high"}, {"problem.severity", "error"}};
  return d;
}

// What one report adds to the run: its results, notifications and per-file properties.
struct RunParts {
  Json results = Json::array();
  Json exec_notes = Json::array();
  Json config_notes = Json::array();
  Json reports = Json::array();
};

std::string file_prefix(const Report& r, const PathBase& paths, size_t n) {
  if (n < 2) return {};
  std::string config = r.input_path.empty() || r.input_path == kCommandLineInput ? std::string("command line")
                                                                                 : root_relative(r.input_path, paths);
  if (!r.server.empty()) config += " (" + r.server + ")";
  return config + ": ";
}

void add_report(RunParts& parts, const Report& report, const SarifOptions& options, size_t n,
                const std::function<int(const std::string&)>& rule_index) {
  const std::string gpu = gpu_slug(report);
  const std::string config = root_relative(report.input_path, options.paths);
  const std::string prefix = file_prefix(report, options.paths, n);
  const SourceLocation file_start{report.input_path, 1, 1};

  for (const auto& res : report.results) {
    const int index = rule_index(res.id);
    // Advisories that do not apply to this plan are many and say nothing about it.
    if (res.advisory && (res.status == ResultStatus::skip || res.status == ResultStatus::pass)) continue;
    if (res.status == ResultStatus::skip) {
      parts.exec_notes.push_back(notification(
          "note", fmt::format("{}{} skipped: {}", prefix, res.id, res.message.empty() ? "not applicable" : res.message),
          res.id, index));
      continue;
    }
    if (res.status == ResultStatus::error) {
      parts.exec_notes.push_back(notification(
          "warning", fmt::format("{}{} could not be checked: {}", prefix, res.id, res.message), res.id, index));
      continue;
    }
    if (res.status != ResultStatus::fail) continue;
    Json x = Json::object();
    x["ruleId"] = res.id;
    if (index >= 0) x["ruleIndex"] = index;
    // At risk (a conditional error) is a warning in code scanning: it fails no gate by default.
    x["level"] = sarif_level(at_risk(res) ? Severity::warning : res.severity);
    // GitHub shows the first sentence when space is short: the message comes first.
    x["message"] = {
        {"text", res.remediation.empty() ? res.message : fmt::format("{}\nfix: {}", res.message, res.remediation)}};
    x["locations"] = Json::array({location_of(res.location.known() ? res.location : file_start, options.paths)});
    // Not the line: the alert is the same while the option moves about in the file.
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", res.id, res.location_fact, config, gpu);
    x["partialFingerprints"] = {{"primaryLocationLineHash", fmt::format("{:016x}:1", fnv1a64(key))}};
    if (res.suppressed) {
      Json s = {{"kind", "external"}, {"status", "accepted"}, {"justification", res.suppressed->reason}};
      s["properties"] = {{"source", res.suppressed->source}};
      x["suppressions"] = Json::array({s});
    }
    x["properties"] = {{"stage", to_string(res.stage)},
                       {"category", res.category},
                       {"params", res.params},
                       {"remediation", res.remediation},
                       {"evidence", res.evidence},
                       {"fact", res.location_fact.empty() ? Json(nullptr) : Json(res.location_fact)},
                       {"certainty", to_string(res.certainty)},
                       {"gpu", gpu}};
    if (!res.condition.empty()) x["properties"]["condition"] = res.condition;
    if (!res.references.empty()) x["properties"]["references"] = res.references;
    parts.results.push_back(std::move(x));
  }

  // The unknown verdict: one result per missing fact (or one when nothing names a fact), at the
  // config's first line, in error: the job fails on it (exit 4).
  if (report.verdict == "unknown") {
    const int index = rule_index(kUnknownRuleId);
    auto unknown_result = [&](const std::string& fact, const std::string& text) {
      Json x = Json::object();
      x["ruleId"] = kUnknownRuleId;
      if (index >= 0) x["ruleIndex"] = index;
      x["level"] = "error";
      x["message"] = {{"text", text}};
      x["locations"] = Json::array({location_of(file_start, options.paths)});
      const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", kUnknownRuleId, fact, config, gpu);
      x["partialFingerprints"] = {{"primaryLocationLineHash", fmt::format("{:016x}:1", fnv1a64(key))}};
      x["properties"] = {{"fact", fact.empty() ? Json(nullptr) : Json(fact)}, {"gpu", gpu}};
      parts.results.push_back(std::move(x));
    };
    for (const auto& m : report.missing) {
      std::string by;
      for (const auto& b : m.needed_by) by += (by.empty() ? "" : ", ") + b;
      unknown_result(m.fact, fmt::format("verdict unknown: {} is not known (needed by {})\nsupply it: {}", m.fact,
                                         by.empty() ? "the plan" : by, m.supply));
    }
    if (report.missing.empty())
      unknown_result("", "verdict unknown: the plan could not be decided (see the report's notes)");
  }

  for (const auto& note : report.notes) {
    Json c = notification(note.severity == "warning" ? "warning" : "note", prefix + note.message, "", -1);
    if (note.where.known()) c["locations"] = Json::array({location_of(note.where, options.paths)});
    parts.config_notes.push_back(std::move(c));
  }

  // Per file: what the JSON report says about the plan as a whole.
  Json one = {
      {"config", report.input_path.empty() ? Json(nullptr) : Json(root_relative(report.input_path, options.paths))},
      {"verdict", report.verdict},
      {"exitCode", report.exit_code},
      {"engine", report.engine},
      {"inputForm", report.input_form},
      {"gpu", gpu},
      {"durationMs", report.duration_ms}};
  if (!report.server.empty()) one["server"] = report.server;
  // The support matrix as the JSON report has it, less the findings' ids: each cell's value and
  // how it is known (MatrixCell::known_by), so a SARIF consumer sees the same answer and evidence.
  if (report.matrix) {
    Json cells = Json::array();
    for (const auto& c : report.matrix->cells) {
      cells.push_back({{"k", c.k},
                       {"backend", c.backend},
                       {"kvCacheDtype", c.kv_cache_dtype},
                       {"verdict", c.verdict},
                       {"knownBy", c.known_by}});
      if (!c.evidence.empty()) cells.back()["evidence"] = c.evidence;
      if (!c.undecided.empty()) cells.back()["undecided"] = c.undecided;
    }
    one["supportMatrix"] = {
        {"workingK", report.matrix->working_k},
        {"maxWorkingK", report.matrix->max_working_k ? Json(*report.matrix->max_working_k) : Json(nullptr)},
        {"cells", cells}};
  }
  if (!report.missing.empty()) {
    Json missing = Json::array();
    for (const auto& m : report.missing) missing.push_back({{"fact", m.fact}, {"supply", m.supply}});
    one["missing"] = missing;
  }
  parts.reports.push_back(std::move(one));
}

}  // namespace

Json reports_to_sarif(const std::vector<Report>& reports, const std::vector<Rule>& catalog,
                      const SarifOptions& options) {
  // tool.driver.rules holds the descriptors of the rules and advisories this run has a result for
  // (in catalog order), not the whole catalog: SARIF asks for the rules the results refer to, and
  // every built-in rule and advisory made each report about 1.1 MB (331 descriptors for 8 results)
  // that every CI upload carried. `specprobe rules` and docs/rules list them all. A skipped or
  // unchecked rule's notification names its rule by id.
  std::set<std::string> with_result;
  bool any_unknown = false;
  int worst = 0;
  for (const auto& r : reports) {
    worst = worse_exit(worst, r.exit_code);
    any_unknown = any_unknown || r.verdict == "unknown";
    for (const auto& res : r.results)
      if (res.status == ResultStatus::fail) with_result.insert(res.id);
  }
  Json rules = Json::array();
  for (const auto& r : catalog)
    if (with_result.count(r.id)) rules.push_back(rule_descriptor(r));
  if (options.advisories)
    for (const auto& a : *options.advisories)
      if (with_result.count(a.id)) rules.push_back(advisory_descriptor(a));
  if (any_unknown) rules.push_back(unknown_descriptor());
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < rules.size(); ++i) index_of.emplace(rules[i]["id"].get<std::string>(), static_cast<int>(i));
  auto rule_index = [&](const std::string& id) -> int {
    const auto it = index_of.find(id);
    return it == index_of.end() ? -1 : it->second;
  };

  // One run for the whole invocation, every file in it: GitHub takes at most 20 runs an upload
  // and, since July 2025, no two runs of one category.
  RunParts parts;
  for (const auto& r : reports) add_report(parts, r, options, reports.size(), rule_index);

  const Report& first = reports.front();
  Json invocation = Json::object();
  invocation["executionSuccessful"] = true;
  std::string cmdline;
  for (const auto& a : first.argv) cmdline += (cmdline.empty() ? "" : " ") + a;
  if (!cmdline.empty()) invocation["commandLine"] = cmdline;
  if (first.argv.size() > 1)
    invocation["arguments"] = std::vector<std::string>(first.argv.begin() + 1, first.argv.end());
  invocation["exitCode"] = worst;
  if (!options.paths.root.empty()) invocation["workingDirectory"] = {{"uri", file_uri_of_dir(options.paths.root)}};
  invocation["toolExecutionNotifications"] = std::move(parts.exec_notes);
  invocation["toolConfigurationNotifications"] = std::move(parts.config_notes);
  double duration = 0;
  for (const auto& r : reports) duration += r.duration_ms;
  invocation["properties"] = {{"failOn", first.fail_on}, {"durationMs", duration}};
  if (reports.size() == 1) invocation["properties"]["verdict"] = first.verdict;

  Json run = Json::object();
  run["tool"] = {{"driver",
                  {{"name", "specprobe"},
                   {"version", kToolVersion},
                   {"semanticVersion", kToolVersion},
                   {"informationUri", kProjectUrl},
                   {"rules", rules}}}};
  run["automationDetails"] = {{"id", sarif_automation_id(reports, options.category)}};
  if (!options.paths.root.empty())
    run["originalUriBaseIds"] = {
        {"%SRCROOT%",
         {{"uri", file_uri_of_dir(options.paths.root)},
          {"description", {{"text", "the repository root: result paths are relative to it"}}}}}};
  run["invocations"] = Json::array({invocation});
  run["results"] = std::move(parts.results);
  run["properties"] = {{"gitSha", kGitSha}, {"reports", std::move(parts.reports)}};
  return {{"$schema", kSarifSchema}, {"version", "2.1.0"}, {"runs", Json::array({run})}};
}

Json report_to_sarif(const Report& report, const std::vector<Rule>& catalog, const SarifOptions& options) {
  return reports_to_sarif(std::vector<Report>{report}, catalog, options);
}

}  // namespace specprobe
