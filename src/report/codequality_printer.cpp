// GitLab Code Quality printer (see printers.hpp). What GitLab reads (gitlab docs,
// ci/testing/code_quality.md, "Code Quality report format"): a JSON array of objects with
// description, check_name, fingerprint (unique per issue, stable between runs: the MR widget
// compares the branch's issues with the target's by it), severity (info, minor, major, critical,
// blocker) and location.path (relative to the repository root) with location.lines.begin.
#include "common/hash.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

std::string severity_of(const RuleResult& r) {
  if (r.severity == Severity::error) return at_risk(r) ? "major" : "critical";
  return r.severity == Severity::warning ? "minor" : "info";
}

Json issue(const std::string& check, const std::string& description, const std::string& severity,
           const std::string& path, int line, const std::string& identity) {
  return {{"type", "issue"},
          {"check_name", check},
          {"description", description},
          {"severity", severity},
          {"categories", Json::array({"Bug Risk"})},
          {"fingerprint", fmt::format("{:016x}", fnv1a64(identity))},
          {"location", {{"path", path}, {"lines", {{"begin", std::max(line, 1)}}}}}};
}

}  // namespace

Json reports_to_codequality(const std::vector<Report>& reports, const PathBase& paths) {
  Json out = Json::array();
  for (const auto& report : reports) {
    if (report.input_path.empty() || report.input_path == kCommandLineInput) continue;
    const std::string config = root_relative(report.input_path, paths);
    const std::string gpu = gpu_slug(report);
    // The identity of an issue: what it is about, never the line (it survives edits elsewhere).
    const std::string base = fmt::format("{}\x1f{}\x1f{}", config, report.server, gpu);
    for (const auto& res : report.results) {
      if (res.status != ResultStatus::fail || res.suppressed) continue;
      const SourceLocation& l = res.location;
      const bool here = l.known() && l.file == report.input_path;
      std::string text = fmt::format("{}: {}", res.id, res.message);
      if (at_risk(res) && !res.condition.empty()) text += fmt::format(" (at risk: {})", res.condition);
      if (!res.remediation.empty()) text += " Fix: " + res.remediation;
      out.push_back(issue(res.id, text, severity_of(res),
                          here ? config : root_relative(l.known() ? l.file : report.input_path, paths),
                          l.known() ? l.line : 1, fmt::format("{}\x1f{}\x1f{}", base, res.id, res.location_fact)));
    }
    if (report.verdict != "unknown") continue;
    for (const auto& m : report.missing)
      out.push_back(issue("verdict-unknown",
                          fmt::format("verdict unknown ({}): {} is not known; supply it: {}", gpu, m.fact, m.supply),
                          "major", config, 1, fmt::format("{}\x1fverdict-unknown\x1f{}", base, m.fact)));
    if (report.missing.empty())
      out.push_back(issue("verdict-unknown", fmt::format("verdict unknown ({}): the plan could not be decided", gpu),
                          "major", config, 1, base + "\x1fverdict-unknown"));
  }
  return out;
}

}  // namespace specprobe
