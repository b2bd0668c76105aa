// JUnit XML printer (see printers.hpp) in the dialect Jenkins' junit plugin and GitLab's test
// reports read: <testsuites><testsuite><properties/><testcase><skipped|error|failure/>
// <system-out/></testcase></testsuite></testsuites>. tests/data/schemas/junit.xsd checks it.
// A <failure> is what makes the exit code 1 (report.fail_on): a finding below --fail-on passes,
// as the run does, and says so in <system-out>.
#include <algorithm>

#include "build_info.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

// XML 1.0 escaping; characters XML 1.0 cannot carry at all (C0 controls other than tab, LF,
// CR) become U+FFFD. Attributes escape whitespace too (parsers normalise it away otherwise);
// element text keeps its newlines readable.
std::string xml_escape(std::string_view s, bool attribute = true) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        if (c < 0x20)
          out += "\xEF\xBF\xBD";
        else
          out += ch;
    }
  }
  return out;
}

std::string xml_text(std::string_view s) { return xml_escape(s, false); }

std::string finding_line(const RuleResult& r) {
  const std::string loc = r.location.str();
  if (r.certainty == Certainty::conditional && r.severity == Severity::error)
    return fmt::format("{}at risk ({}): {} [{}]", loc.empty() ? "" : loc + ": ", r.condition, r.message, r.id);
  return fmt::format("{}{}: {} [{}]", loc.empty() ? "" : loc + ": ", to_string(r.severity), r.message, r.id);
}

std::string details(const RuleResult& r) {
  std::string s;
  if (!r.location.str().empty())
    s += fmt::format("location: {}{}\n", r.location.str(), r.location_fact.empty() ? "" : " (" + r.location_fact + ")");
  s += fmt::format("stage: {}\n", to_string(r.stage));
  if (!r.remediation.empty()) s += fmt::format("fix: {}\n", r.remediation);
  if (!r.params.empty())
    s += fmt::format("params: {}\n", r.params.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (!r.evidence.empty())
    s += fmt::format("evidence: {}\n", r.evidence.dump(-1, ' ', false, Json::error_handler_t::replace));
  for (const auto& ref : r.references) s += fmt::format("reference: {}\n", ref);
  if (r.suppressed) s += fmt::format("suppressed: {} ({})\n", r.suppressed->reason, r.suppressed->source);
  return s;
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

Counts count(const Report& r) {
  Counts c;
  for (const auto& res : r.results) {
    ++c.tests;
    if (fails_gate(res, r.fail_on))
      ++c.failures;
    else if (res.status == ResultStatus::error)
      ++c.errors;
    else if (res.status == ResultStatus::skip || (res.status == ResultStatus::fail && res.suppressed))
      ++c.skipped;
  }
  // An unknown verdict is a test case of its own, in error: a widget must not be green while the
  // job is red (exit 4). Issue 51.
  if (r.verdict == "unknown") {
    ++c.tests;
    ++c.errors;
  }
  return c;
}

// The unknown verdict's test case: what could not be decided without, and how to supply it.
std::string unknown_verdict_case(const Report& r, const std::string& gpu, const std::string& config) {
  std::string what;
  for (const auto& m : r.missing) {
    std::string by;
    for (const auto& n : m.needed_by) by += (by.empty() ? "" : ", ") + n;
    what += fmt::format("{}{} (needed by {}): {}", what.empty() ? "" : "; ", m.fact, by.empty() ? "the plan" : by,
                        m.supply);
  }
  const std::string message = what.empty() ? "verdict unknown: the plan could not be decided"
                                           : "verdict unknown: could not decide without: " + what;
  return fmt::format(
      "    <testcase name=\"{}\" classname=\"specprobe.verdict\" file=\"{}\">\n"
      "      <error message=\"{}\" type=\"verdict-unknown\">{}</error>\n    </testcase>\n",
      xml_escape(fmt::format("verdict [{}]", gpu)), xml_escape(config), xml_escape(message), xml_text(message));
}

void suite(std::string& out, const Report& r, int id) {
  const Counts c = count(r);
  const std::string gpu = gpu_slug(r);
  const std::string config = r.input_path.empty() ? "-" : r.input_path;
  out += fmt::format(
      "  <testsuite name=\"{}\" id=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      xml_escape(fmt::format("{} on {}", config, gpu)), id, c.tests, c.failures, c.errors, c.skipped,
      r.duration_ms / 1000.0);
  out += "    <properties>\n";
  auto prop = [&](std::string_view name, const std::string& value) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
  };
  prop("config", config);
  prop("input_form", r.input_form);
  prop("engine", r.engine);
  prop("gpu", r.plan.gpu.name.value_or("unknown"));
  prop("gpu_sm", r.plan.gpu.sm ? std::to_string(*r.plan.gpu.sm) : std::string("unknown"));
  prop("verdict", r.verdict);
  prop("fail_on", r.fail_on);
  prop("specprobe_version", kToolVersion);
  out += "    </properties>\n";
  for (const auto& res : r.results) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"",
                       xml_escape(fmt::format("{} {} [{}]", res.id, res.slug, gpu)),
                       xml_escape("specprobe." + (res.category.empty() ? std::string("general") : res.category)),
                       xml_escape(res.location.known() ? res.location.file : config));
    if (res.location.known() && res.location.line > 0) out += fmt::format(" line=\"{}\"", res.location.line);
    if (res.status == ResultStatus::fail && !res.suppressed && !fails_gate(res, r.fail_on)) {
      // Below --fail-on: the run passes, and so does the testcase; the finding is kept.
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                         xml_text(fmt::format("{} (below --fail-on {}: does not fail the run)\n{}", finding_line(res),
                                              r.fail_on, details(res))));
      continue;
    }
    switch (res.status) {
      case ResultStatus::pass:
        out += "/>\n";
        continue;
      case ResultStatus::skip:
        out += fmt::format(">\n      <skipped message=\"{}\"/>\n",
                           xml_escape(res.message.empty() ? "not applicable" : res.message));
        break;
      case ResultStatus::error:
        out += fmt::format(">\n      <error message=\"{}\" type=\"could-not-determine\">{}</error>\n",
                           xml_escape("could not determine: " + res.message), xml_text(res.message));
        out += fmt::format("      <system-out>{}</system-out>\n", xml_text(details(res)));
        break;
      case ResultStatus::fail:
        if (res.suppressed) {
          out += fmt::format(
              ">\n      <skipped message=\"{}\"/>\n",
              xml_escape(fmt::format("suppressed: {} ({})", res.suppressed->reason, res.suppressed->source)));
        } else {
          out += fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(res.message),
                             to_string(res.severity), xml_text(finding_line(res)));
        }
        out += fmt::format("      <system-out>{}</system-out>\n", xml_text(details(res)));
        break;
    }
    out += "    </testcase>\n";
  }
  if (r.verdict == "unknown") out += unknown_verdict_case(r, gpu, config);
  out += "  </testsuite>\n";
}

}  // namespace

std::string reports_to_junit(const std::vector<Report>& reports) {
  Counts total;
  double ms = 0;
  for (const auto& r : reports) {
    const Counts c = count(r);
    total.tests += c.tests;
    total.failures += c.failures;
    total.errors += c.errors;
    total.skipped += c.skipped;
    ms += r.duration_ms;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"specprobe\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      total.tests, total.failures, total.errors, total.skipped, ms / 1000.0);
  int id = 0;
  for (const auto& r : reports) suite(out, r, id++);
  out += "</testsuites>\n";
  return out;
}

}  // namespace specprobe
