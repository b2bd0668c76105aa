// Unit tests of the CI printers and suppressions over hand-built reports: escaping, the GitHub
// annotation cap, the four result states in JUnit and SARIF, NFD label names, .specprobe.yaml.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../e2e/run_binary.hpp"
#include "report/printers.hpp"
#include "pipeline/suppressions.hpp"

using namespace specprobe;

namespace {

RuleResult finding(const std::string& id, Severity sev, ResultStatus st = ResultStatus::fail) {
  RuleResult r;
  r.id = id;
  r.slug = "slug-" + id;
  r.title = "title of " + id;
  r.category = "speculative";
  r.status = st;
  r.severity = sev;
  r.message = "message of " + id;
  r.remediation = "do the other thing";
  r.location = SourceLocation{"serve.yaml", 4, 3};
  r.location_fact = "spec.k";
  return r;
}

Report report_with(std::vector<RuleResult> results) {
  Report r;
  r.input_path = "serve.yaml";
  r.engine = "vllm";
  r.verdict = "not-supported";
  r.facts = {{"gpu", {{"name", "NVIDIA H100 80GB HBM3"}, {"declared", "H100"}, {"sm", 90}}}};
  r.results = std::move(results);
  return r;
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

Rule rule(const std::string& id, Severity sev) {
  Rule r;
  r.id = id;
  r.slug = "slug-" + id;
  r.title = "title of " + id;
  r.description = std::string(2000, 'd');
  r.severity = sev;
  r.category = "speculative";
  r.remediation = "do the other thing";
  return r;
}

}  // namespace

TEST_CASE("github: data and property escaping follow actions/toolkit", "[report][github]") {
  CHECK(github_escape_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d");
  CHECK(github_escape_property("50% a\r\nb: c, d") == "50%25 a%0D%0Ab%3A c%2C d");
  RuleResult f = finding("SP3001", Severity::error);
  f.title = "a: b, c";
  f.message = "line one\nline two 100%";
  f.location = SourceLocation{"dir,with:odd/serve.yaml", 7, 5};
  const GithubOutput g = render_github(report_with({f}));
  CHECK(g.commands ==
        "::error file=dir%2Cwith%3Aodd/serve.yaml,line=7,col=5,endLine=7,title=SP3001 a%3A b%2C c::line one%0Aline two "
        "100%25 [SP3001]%0Afix: do the other thing\n");
}

TEST_CASE("github: sorted by severity, capped at 10 per level, one notice for the rest", "[report][github]") {
  std::vector<RuleResult> rs;
  for (int i = 0; i < 3; ++i) rs.push_back(finding(fmt::format("SP10{:02}", i), Severity::info));
  for (int i = 0; i < 12; ++i) rs.push_back(finding(fmt::format("SP20{:02}", i), Severity::warning));
  for (int i = 0; i < 14; ++i) rs.push_back(finding(fmt::format("SP30{:02}", i), Severity::error));
  RuleResult suppressed = finding("SP3099", Severity::error);
  suppressed.suppressed = Suppression{"known", "--ignore"};
  rs.push_back(suppressed);
  rs.push_back(finding("SP3098", Severity::error, ResultStatus::pass));
  const GithubOutput g = render_github(report_with(rs));
  CHECK(count_of(g.commands, "::error ") == 10);
  CHECK(count_of(g.commands, "::warning ") == 10);
  CHECK(count_of(g.commands, "::notice ") == 3 + 1);
  CHECK(g.commands.find("::error") < g.commands.find("::warning"));
  CHECK(g.commands.find("::warning") < g.commands.find("::notice"));
  CHECK(g.commands.find("6 more findings not annotated") != std::string::npos);
  CHECK(g.commands.find("SP3099") == std::string::npos);
  // The summary holds everything: 29 rows, the suppressed one in its own section.
  CHECK(count_of(g.summary_markdown, "| error | SP30") == 14);
  CHECK(g.summary_markdown.find("Suppressed (1)") != std::string::npos);
}

TEST_CASE("github: a cap on notices alone leaves room for the cap notice", "[report][github]") {
  std::vector<RuleResult> rs;
  for (int i = 0; i < 11; ++i) rs.push_back(finding(fmt::format("SP10{:02}", i), Severity::info));
  const GithubOutput g = render_github(report_with(rs));
  CHECK(count_of(g.commands, "::notice ") == 10);
  CHECK(g.commands.find("2 more findings") != std::string::npos);
}

TEST_CASE("junit: four states kept apart, suppressed failures skipped, XML escaped", "[report][junit]") {
  RuleResult fail = finding("SP3001", Severity::error);
  fail.message = "a <b> & \"c\" 'd' \x01";
  RuleResult skip = finding("SP3002", Severity::error, ResultStatus::skip);
  skip.message = "not applicable here";
  RuleResult err = finding("SP3003", Severity::error, ResultStatus::error);
  err.message = "unknown gpu.sm";
  RuleResult pass = finding("SP3004", Severity::error, ResultStatus::pass);
  RuleResult sup = finding("SP3005", Severity::warning);
  sup.suppressed = Suppression{"tracked in X", ".specprobe.yaml:3"};
  const std::string x = reports_to_junit({report_with({fail, skip, err, pass, sup})});
  CHECK(x.find("tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"2\"") != std::string::npos);
  CHECK(x.find("message=\"a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; \xEF\xBF\xBD\" type=\"error\"") != std::string::npos);
  CHECK(x.find("<skipped message=\"not applicable here\"/>") != std::string::npos);
  CHECK(x.find("<error message=\"could not determine: unknown gpu.sm\" type=\"could-not-determine\">") != std::string::npos);
  CHECK(x.find("<skipped message=\"suppressed: tracked in X (.specprobe.yaml:3)\"/>") != std::string::npos);
  CHECK(x.find("classname=\"specprobe.speculative\"") != std::string::npos);
  CHECK(x.find("<testcase name=\"SP3004 slug-SP3004 [h100]\" classname=\"specprobe.speculative\" file=\"serve.yaml\" line=\"4\"/>") !=
        std::string::npos);
  CHECK(x.find("fix: do the other thing") != std::string::npos);
  CHECK(x.find('\x01') == std::string::npos);
}

TEST_CASE("sarif: rules, regions, fingerprints, suppressions, notifications", "[report][sarif]") {
  RuleResult fail = finding("SP3001", Severity::error);
  RuleResult unlocated = finding("SP3002", Severity::info);
  unlocated.location = {};
  unlocated.location_fact.clear();
  RuleResult sup = finding("SP3003", Severity::warning);
  sup.suppressed = Suppression{"tracked", ".specprobe.yaml:3"};
  RuleResult skip = finding("SP3004", Severity::error, ResultStatus::skip);
  RuleResult err = finding("SP3005", Severity::error, ResultStatus::error);
  const Report rep = report_with({fail, unlocated, sup, skip, err});
  const std::vector<Rule> catalog = {rule("SP3001", Severity::error), rule("SP3002", Severity::info), rule("SP3003", Severity::warning),
                                     rule("SP3004", Severity::error), rule("SP3005", Severity::error)};
  const Json s = report_to_sarif(rep, catalog, SarifOptions{"/repo"});
  const Json& run = s["runs"][0];
  REQUIRE(run["tool"]["driver"]["rules"].size() == 5);
  CHECK(run["tool"]["driver"]["rules"][0]["fullDescription"]["text"].get<std::string>().size() == 1024);
  CHECK(run["tool"]["driver"]["rules"][1]["defaultConfiguration"]["level"] == "note");
  CHECK(run["automationDetails"]["id"] == "specprobe/h100/");
  REQUIRE(run["results"].size() == 3);
  const Json& r0 = run["results"][0];
  CHECK(r0["ruleIndex"] == 0);
  CHECK(r0["locations"][0]["physicalLocation"]["region"] ==
        Json{{"startLine", 4}, {"startColumn", 3}, {"endLine", 4}, {"endColumn", 4}});
  CHECK(r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "serve.yaml");
  // No location of its own: anchored at the config file's first line.
  CHECK(run["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1);
  CHECK(run["results"][1]["level"] == "note");
  CHECK(run["results"][2]["suppressions"][0]["justification"] == "tracked");
  const Json& notes = run["invocations"][0]["toolExecutionNotifications"];
  REQUIRE(notes.size() == 2);
  CHECK(notes[0]["associatedRule"]["id"] == "SP3004");
  CHECK(notes[1]["level"] == "warning");
  // Fingerprints: stable, and a different GPU is a different alert.
  const std::string fp = r0["partialFingerprints"]["primaryLocationLineHash"];
  CHECK(report_to_sarif(rep, catalog)["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] == fp);
  Report other = rep;
  other.facts["gpu"]["declared"] = "H200";
  CHECK(report_to_sarif(other, catalog)["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] != fp);
  // Absolute paths under the source root become relative URIs, percent-encoded.
  Report abs = rep;
  abs.results[0].location.file = "/repo/deploy/my serve.yaml";
  const Json a = report_to_sarif(abs, catalog, SarifOptions{"/repo"})["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  CHECK(a["artifactLocation"]["uri"] == "deploy/my%20serve.yaml");
  CHECK(a["artifactLocation"]["uriBaseId"] == "%SRCROOT%");
}

TEST_CASE("nfd: label names are valid Kubernetes label segments", "[report][nfd]") {
  CHECK(nfd_label_segment("DeepSeek-V4-Flash") == "deepseek-v4-flash");
  CHECK(nfd_label_segment("FLASH_ATTN") == "flash_attn");
  CHECK(nfd_label_segment("--a b/c..") == "a-b-c");
  CHECK(nfd_label_segment(std::string(100, 'x')).size() == 63);
  Report r = report_with({});
  r.facts["serve"]["kv_cache_dtype"] = "auto";
  SupportMatrix m;
  m.ks = {0, 1, 2, 3};
  m.backends = {"FLASH_ATTN", "FLASHINFER"};
  m.kv_cache_dtypes = {"auto"};
  for (int k : m.ks) {
    m.cells.push_back({k, "FLASH_ATTN", "auto", k <= 2 ? "works" : "fails", "", {}, {}});
    m.cells.push_back({k, "FLASHINFER", "auto", "fails", "", {}, {}});
  }
  r.matrix = m;
  const std::string out = render_nfd(r, "/models/" + std::string(80, 'M') + "/");
  for (size_t start = 0, end; (end = out.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = out.substr(start, end - start);
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find('='));
    REQUIRE(name.rfind("specprobe.io/", 0) == 0);
    CHECK(name.size() - 13 <= 63);
  }
  CHECK(out.find(".flash_attn.max-k=2\n") != std::string::npos);
  CHECK(out.find(".flashinfer.max-k=") == std::string::npos);  // no k works: no label
  CHECK(out.find("# specprobe.io/") != std::string::npos);
}

TEST_CASE("suppressions: .specprobe.yaml entries need an id and a reason; until expires", "[report][suppressions]") {
  const std::string d = test::temp_dir();
  const std::string p = d + "/.specprobe.yaml";
  auto write = [&](const std::string& text) { std::ofstream(p, std::ios::binary) << text; };

  CHECK(read_suppression_file(d + "/absent.yaml")->empty());
  write("ignore:\n  - id: sp3001\n    reason: tracked in X\n  - id: SP3002\n    reason: old\n    until: 2000-01-31\n");
  auto ok = read_suppression_file(p);
  REQUIRE(ok);
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[0].id == "SP3001");
  CHECK((*ok)[0].source == p + ":2");

  Report r = report_with({finding("SP3001", Severity::error), finding("SP3002", Severity::error),
                          finding("SP3003", Severity::error, ResultStatus::skip)});
  apply_suppressions(r, *ok, "2025-06-01");
  CHECK(r.results[0].suppressed);
  CHECK_FALSE(r.results[1].suppressed);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].severity == "warning");
  CHECK(r.notes[0].message.find("expired on 2000-01-31") != std::string::npos);
  // `until` is inclusive.
  Report same_day = report_with({finding("SP3002", Severity::error)});
  apply_suppressions(same_day, *ok, "2000-01-31");
  CHECK(same_day.results[0].suppressed);

  struct Bad {
    const char* text;
    const char* says;
    int line;
  };
  const Bad bad[] = {
      {"ignore:\n  - id: SP3001\n", "needs a `reason`", 2},
      {"ignore:\n  - id: SP3001\n    reason: \"  \"\n", "needs a `reason`", 2},
      {"ignore:\n  - reason: x\n", "needs an `id`", 2},
      {"ignore:\n  - id: SP3001\n    reason: x\n    until: next year\n", "YYYY-MM-DD", 4},
      {"ignore:\n  - id: SP3001\n    reason: x\n    scope: all\n", "unknown key 'scope'", 4},
      {"ignored: [SP3001]\n", "unknown key 'ignored'", 1},
      {"ignore: [SP3001]\n", "must be a mapping", 1},
      {"ignore: [\n", "invalid YAML", 0},
  };
  for (const auto& b : bad) {
    write(b.text);
    auto e = read_suppression_file(p);
    INFO(b.text);
    REQUIRE_FALSE(e);
    CHECK(e.error().kind == ErrorKind::input);
    CHECK(e.error().message.find(b.says) != std::string::npos);
    if (b.line) CHECK(e.error().where.line == b.line);
  }
  CHECK_FALSE(ignore_args({""}));
  CHECK(ignore_args({"sp3001"})->front().id == "SP3001");
  CHECK(suppression_file_for("deploy/serve.yaml") == "deploy/.specprobe.yaml");
  CHECK(suppression_file_for("serve.yaml") == ".specprobe.yaml");
  CHECK(suppression_file_for("<command line>") == ".specprobe.yaml");
}
