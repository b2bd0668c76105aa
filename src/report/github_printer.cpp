// GitHub Actions printer (see printers.hpp): workflow-command annotations and the Markdown job
// summary. GitHub keeps 10 annotations per level per step and drops the rest silently, so the
// most severe come first and the full table goes to the summary.
#include <algorithm>

#include "report/printers.hpp"

namespace specprobe {
namespace {

std::string_view command_of(Severity s) {
  switch (s) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::info:
      return "notice";
  }
  return "warning";
}

// "file:line:col" with the file relative to the repository root.
std::string where(const SourceLocation& l, const PathBase& paths) {
  SourceLocation r = l;
  r.file = root_relative(l.file, paths);
  return r.str();
}

// Markdown text that GitHub renders as written: HTML's <, > and & escaped (a `<command line>` is
// otherwise taken for a tag and disappears); in a table cell also pipes, and newlines as <br>.
std::string md_text(std::string_view s, bool in_cell = false) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (in_cell && c == '|')
      out += "\\|";
    else if (in_cell && c == '\n')
      out += "<br>";
    else if (!in_cell || c != '\r')
      out += c;
  }
  return out;
}
std::string cell(std::string_view s) { return md_text(s, true); }

std::string annotation(const RuleResult& r, const PathBase& paths) {
  std::string props;
  auto add = [&](std::string_view key, const std::string& value) {
    props += fmt::format("{}{}={}", props.empty() ? "" : ",", key, github_escape_property(value));
  };
  if (r.location.known() && r.location.file != kCommandLineInput) {
    add("file", root_relative(r.location.file, paths));
    if (r.location.line > 0) {
      add("line", std::to_string(r.location.line));
      if (r.location.column > 0) add("col", std::to_string(r.location.column));
      add("endLine", std::to_string(r.location.end_line >= r.location.line ? r.location.end_line : r.location.line));
    }
  }
  add("title", fmt::format("{} {}", r.id, r.title));
  std::string msg = fmt::format("{} [{}]", r.message, r.id);
  // At risk: a warning annotation that says the condition.
  if (at_risk(r)) msg = fmt::format("at risk ({}): {}", r.condition, msg);
  if (!r.remediation.empty()) msg += "\nfix: " + r.remediation;
  return fmt::format("::{} {}::{}\n", command_of(at_risk(r) ? Severity::warning : r.severity), props,
                     github_escape_data(msg));
}

}  // namespace

std::string github_escape_data(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string github_escape_property(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

GithubOutput render_github(const Report& report, const PathBase& paths) {
  GithubOutput out;
  std::vector<const RuleResult*> findings;
  for (const auto& r : report.results)
    if (r.status == ResultStatus::fail && !r.suppressed) findings.push_back(&r);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const RuleResult* a, const RuleResult* b) { return a->severity > b->severity; });

  int per_level[3] = {0, 0, 0};
  for (const auto* f : findings) per_level[static_cast<int>(f->severity)]++;
  const int i_err = static_cast<int>(Severity::error), i_warn = static_cast<int>(Severity::warning),
            i_info = static_cast<int>(Severity::info);
  const bool overflow_above = per_level[i_err] > kGithubAnnotationCap || per_level[i_warn] > kGithubAnnotationCap;
  // The cap notice is itself a notice: it takes one of the ten slots when anything is left out.
  const int notice_slots =
      (overflow_above || per_level[i_info] > kGithubAnnotationCap) ? kGithubAnnotationCap - 1 : kGithubAnnotationCap;
  const int cap[3] = {notice_slots, kGithubAnnotationCap, kGithubAnnotationCap};
  int shown[3] = {0, 0, 0};
  int left_out = 0;
  for (const auto* f : findings) {
    const int lvl = static_cast<int>(f->severity);
    if (shown[lvl] >= cap[lvl]) {
      ++left_out;
      continue;
    }
    ++shown[lvl];
    out.commands += annotation(*f, paths);
  }
  if (left_out > 0)
    out.commands += fmt::format("::notice title={}::{}\n", github_escape_property("specprobe"),
                                github_escape_data(fmt::format(
                                    "{} more finding{} not annotated (GitHub shows {} per level); see the job summary",
                                    left_out, left_out == 1 ? "" : "s", kGithubAnnotationCap)));

  // Job summary.
  std::string& md = out.summary_markdown;
  const std::string gpu = report.plan.gpu.name.value_or("unknown GPU");
  md += fmt::format("### specprobe: `{}` on {} — **{}**\n\n",
                    report.input_path.empty() ? "-" : root_relative(report.input_path, paths), md_text(gpu),
                    report.verdict);
  md += fmt::format("{}: {}; fail-on {}\n\n", evaluated_count(report), findings_line(count_findings(report)),
                    report.fail_on);
  if (!findings.empty()) {
    md += "| Severity | Rule | Location | Finding | Fix |\n|---|---|---|---|---|\n";
    for (const auto* f : findings)
      md += fmt::format(
          "| {} | {} {} | {} | {} | {} |\n",
          at_risk(*f) ? "at risk (" + md_text(f->condition, true) + ")" : std::string(to_string(f->severity)), f->id,
          cell(f->slug), cell(f->location.known() ? where(f->location, paths) : "-"), cell(f->message),
          cell(f->remediation));
    md += "\n";
  }
  auto section = [&](const std::string& title, auto pred, auto row) {
    std::string rows;
    int n = 0;
    for (const auto& r : report.results)
      if (pred(r)) {
        rows += row(r);
        ++n;
      }
    if (n == 0) return;
    md += fmt::format("<details><summary>{} ({})</summary>\n\n{}\n</details>\n\n", title, n, rows);
  };
  section(
      "Suppressed", [](const RuleResult& r) { return r.suppressed.has_value(); },
      [](const RuleResult& r) {
        return fmt::format("- {} {}: {} — {} ({})\n", r.id, r.slug, md_text(r.message), md_text(r.suppressed->reason),
                           md_text(r.suppressed->source));
      });
  section(
      "Could not check", [](const RuleResult& r) { return r.status == ResultStatus::error; },
      [](const RuleResult& r) { return fmt::format("- {} {}: {}\n", r.id, r.slug, md_text(r.message)); });
  section(
      "Skipped (not applicable)", [](const RuleResult& r) { return r.status == ResultStatus::skip; },
      [](const RuleResult& r) { return fmt::format("- {} {}: {}\n", r.id, r.slug, md_text(r.message)); });
  if (report.matrix) {
    const SupportMatrix& m = *report.matrix;
    md += fmt::format("Support matrix for {} / kv cache {}: working k {}; largest {}.\n",
                      report.plan.attention.selected.value_or("-"), report.plan.attention.kv_cache_dtype,
                      list_text(m.working_k), m.max_working_k ? std::to_string(*m.max_working_k) : "none");
    if (!m.alternative_backends.empty())
      md += fmt::format("The requested k works with backend {}.\n", list_text(m.alternative_backends));
    if (!m.alternative_kv_cache_dtypes.empty())
      md += fmt::format("The requested k works with kv cache dtype {}.\n", list_text(m.alternative_kv_cache_dtypes));
    md += "\n";
  }
  return out;
}

}  // namespace specprobe
