// Unit tests of the CI printers and suppressions over hand-built reports: escaping, the GitHub
// annotation cap, the four result states in JUnit and SARIF, NFD label names, .specprobe.yaml.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "../e2e/run_binary.hpp"
#include "build_info.hpp"
#include "cli/matrix.hpp"
#include "common/output_file.hpp"
#include "common/suggest.hpp"
#include "pipeline/suppressions.hpp"
#include "report/printers.hpp"

using namespace specprobe;

namespace {

RuleResult make_finding(const std::string& id, Severity sev, ResultStatus st = ResultStatus::fail) {
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
  // The printers read the typed summary (pipeline/plan_summary.hpp), the facts only as a document.
  r.plan.gpu.name = "NVIDIA H100 80GB HBM3";
  r.plan.gpu.declared = "H100";
  r.plan.gpu.sm = 90;
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
  RuleResult f = make_finding("SP3001", Severity::error);
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
  for (int i = 0; i < 3; ++i) rs.push_back(make_finding(fmt::format("SP10{:02}", i), Severity::info));
  for (int i = 0; i < 12; ++i) rs.push_back(make_finding(fmt::format("SP20{:02}", i), Severity::warning));
  for (int i = 0; i < 14; ++i) rs.push_back(make_finding(fmt::format("SP30{:02}", i), Severity::error));
  RuleResult suppressed = make_finding("SP3099", Severity::error);
  suppressed.suppressed = Suppression{"known", "--ignore"};
  rs.push_back(suppressed);
  rs.push_back(make_finding("SP3098", Severity::error, ResultStatus::pass));
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
  for (int i = 0; i < 11; ++i) rs.push_back(make_finding(fmt::format("SP10{:02}", i), Severity::info));
  const GithubOutput g = render_github(report_with(rs));
  CHECK(count_of(g.commands, "::notice ") == 10);
  CHECK(g.commands.find("2 more findings") != std::string::npos);
}

TEST_CASE("junit: four states kept apart, suppressed failures skipped, XML escaped", "[report][junit]") {
  RuleResult fail = make_finding("SP3001", Severity::error);
  fail.message = "a <b> & \"c\" 'd' \x01";
  RuleResult skip = make_finding("SP3002", Severity::error, ResultStatus::skip);
  skip.message = "not applicable here";
  RuleResult err = make_finding("SP3003", Severity::error, ResultStatus::error);
  err.message = "unknown gpu.sm";
  RuleResult pass = make_finding("SP3004", Severity::error, ResultStatus::pass);
  RuleResult sup = make_finding("SP3005", Severity::warning);
  sup.suppressed = Suppression{"tracked in X", ".specprobe.yaml:3"};
  const std::string x = reports_to_junit({report_with({fail, skip, err, pass, sup})});
  CHECK(x.find("tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"2\"") != std::string::npos);
  CHECK(x.find("message=\"a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; \xEF\xBF\xBD\" type=\"error\"") !=
        std::string::npos);
  CHECK(x.find("<skipped message=\"not applicable here\"/>") != std::string::npos);
  CHECK(x.find("<error message=\"could not determine: unknown gpu.sm\" type=\"could-not-determine\">") !=
        std::string::npos);
  CHECK(x.find("<skipped message=\"suppressed: tracked in X (.specprobe.yaml:3)\"/>") != std::string::npos);
  CHECK(x.find("classname=\"specprobe.speculative\"") != std::string::npos);
  CHECK(x.find("<testcase name=\"SP3004 slug-SP3004 [h100]\" classname=\"specprobe.speculative\" file=\"serve.yaml\" "
               "line=\"4\"/>") != std::string::npos);
  CHECK(x.find("fix: do the other thing") != std::string::npos);
  CHECK(x.find('\x01') == std::string::npos);
}

TEST_CASE("sarif: rules, regions, fingerprints, suppressions, notifications", "[report][sarif]") {
  RuleResult fail = make_finding("SP3001", Severity::error);
  RuleResult unlocated = make_finding("SP3002", Severity::info);
  unlocated.location = {};
  unlocated.location_fact.clear();
  RuleResult sup = make_finding("SP3003", Severity::warning);
  sup.suppressed = Suppression{"tracked", ".specprobe.yaml:3"};
  RuleResult skip = make_finding("SP3004", Severity::error, ResultStatus::skip);
  RuleResult err = make_finding("SP3005", Severity::error, ResultStatus::error);
  const Report rep = report_with({fail, unlocated, sup, skip, err});
  const std::vector<Rule> catalog = {rule("SP3001", Severity::error), rule("SP3002", Severity::info),
                                     rule("SP3003", Severity::warning), rule("SP3004", Severity::error),
                                     rule("SP3005", Severity::error)};
  const Json s = report_to_sarif(rep, catalog, SarifOptions{PathBase{"/repo", "/repo"}});
  const Json& run = s["runs"][0];
  // Descriptors for the rules with a result (suppressed included), not for the skipped or
  // unchecked ones, whose notifications name them by id only.
  REQUIRE(run["tool"]["driver"]["rules"].size() == 3);
  CHECK(run["tool"]["driver"]["rules"][0]["fullDescription"]["text"].get<std::string>().size() == 1024);
  CHECK(run["tool"]["driver"]["rules"][1]["defaultConfiguration"]["level"] == "note");
  CHECK(run["tool"]["driver"]["rules"][2]["id"] == "SP3003");
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
  CHECK(!notes[0]["associatedRule"].contains("index"));
  CHECK(notes[1]["level"] == "warning");
  // Fingerprints: stable, and a different GPU is a different alert.
  const std::string fp = r0["partialFingerprints"]["primaryLocationLineHash"];
  CHECK(report_to_sarif(rep, catalog)["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] == fp);
  Report other = rep;
  other.plan.gpu.declared = "H200";
  CHECK(report_to_sarif(other, catalog)["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] !=
        fp);
  // Absolute paths under the source root become relative URIs, percent-encoded.
  Report abs = rep;
  abs.results[0].location.file = "/repo/deploy/my serve.yaml";
  const Json a = report_to_sarif(
      abs, catalog,
      SarifOptions{PathBase{"/repo", "/repo"}})["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  CHECK(a["artifactLocation"]["uri"] == "deploy/my%20serve.yaml");
  CHECK(a["artifactLocation"]["uriBaseId"] == "%SRCROOT%");
}

TEST_CASE("nfd: label names are valid Kubernetes label segments", "[report][nfd]") {
  CHECK(nfd_label_segment("DeepSeek-V4-Flash") == "deepseek-v4-flash");
  CHECK(nfd_label_segment("FLASH_ATTN") == "flash_attn");
  CHECK(nfd_label_segment("--a b/c..") == "a-b-c");
  CHECK(nfd_label_segment(std::string(100, 'x')).size() == 63);
  Report r = report_with({});
  r.plan.attention.kv_cache_dtype = "auto";
  SupportMatrix m;
  m.ks = {0, 1, 2, 3};
  m.backends = {"FLASH_ATTN", "FLASHINFER"};
  m.kv_cache_dtypes = {"auto"};
  for (int k : m.ks) {
    m.cells.push_back({k, "FLASH_ATTN", "auto", k <= 2 ? "works" : "fails", "", {}, {}});
    m.cells.push_back({k, "FLASHINFER", "auto", "fails", "", {}, {}});
  }
  r.matrix = m;
  auto rendered = render_nfd(r, NfdOptions{"/models/" + std::string(80, 'M') + "/", "", false});
  REQUIRE(rendered);
  const std::string out = rendered->text;
  for (size_t start = 0, end; (end = out.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = out.substr(start, end - start);
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find('='));
    REQUIRE(name.rfind("specprobe.io/", 0) == 0);
    CHECK(name.size() - 13 <= 63);
    CHECK(nfd_label_problem(name) == "");
  }
  CHECK(out.find(".flash_attn.max-k=2\n") != std::string::npos);
  CHECK(out.find(".flashinfer.max-k=") == std::string::npos);  // no k works: no label
  CHECK(out.find("# specprobe.io/") != std::string::npos);
}

TEST_CASE("nfd: label keys checked as Kubernetes does - a name with nothing to keep is refused", "[report][nfd]") {
  CHECK(nfd_label_problem("specprobe.io/m.flashinfer.max-k") == "");
  CHECK(nfd_label_problem("specprobe.io/.flashinfer.max-k").find("begin and end") !=
        std::string::npos);  // --model-name ___
  CHECK(nfd_label_problem("specprobe.io/" + std::string(64, 'a')).find("64 characters") != std::string::npos);
  CHECK(nfd_label_problem("specprobe.io/a b").find("character ' '") != std::string::npos);
  CHECK(nfd_label_problem("Specprobe.io/a").find("prefix") != std::string::npos);
  CHECK(nfd_label_problem("-bad.io/a").find("prefix") != std::string::npos);
  CHECK(nfd_label_problem("a/") == "the name is empty");
  Report r = report_with({});
  SupportMatrix m;
  m.ks = {0, 1, 2};
  m.backends = {"FLASH_ATTN"};
  m.kv_cache_dtypes = {"auto"};
  for (int k : m.ks)
    m.cells.push_back({k,
                       "FLASH_ATTN",
                       "auto",
                       "works",
                       "",
                       {},
                       k == 2 ? std::vector<std::string>{"SP3001"} : std::vector<std::string>{}});
  r.matrix = m;
  auto bad = render_nfd(r, NfdOptions{"___", "", false});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == ErrorKind::input);
  CHECK(bad.error().message.find("'___'") != std::string::npos);
  // A name that has to change says so, in the file and in the notes.
  auto spaced = render_nfd(r, NfdOptions{"My Model!", "2026-11-26T09:00:00Z", false});
  REQUIRE(spaced);
  REQUIRE(spaced->notes.size() == 1);
  CHECK(spaced->text.find("# note: the model name 'My Model!' is written as 'my-model'") != std::string::npos);
  // The expiry directive comes first: NFD applies it to the lines after it.
  CHECK(spaced->text.rfind("# +expiry-time=2026-11-26T09:00:00Z\n", 0) == 0);
  // "ok with warnings" is not working unless asked for.
  CHECK(spaced->text.find("specprobe.io/my-model.flash_attn.max-k=1\n") != std::string::npos);
  auto with_warnings = render_nfd(r, NfdOptions{"m", "", true});
  REQUIRE(with_warnings);
  CHECK(with_warnings->text.find("specprobe.io/m.flash_attn.max-k=2\n") != std::string::npos);
  CHECK(with_warnings->text.find("# +expiry-time") == std::string::npos);
  CHECK(with_warnings->notes.empty());
}

TEST_CASE("nfd: expiry times and the feature file's temporary name", "[report][nfd]") {
  CHECK(*parse_duration("24h") == 86400);
  CHECK(*parse_duration("90m") == 5400);
  CHECK(*parse_duration("2d") == 172800);
  CHECK(*parse_duration("0") == 0);
  for (const char* bad : {"", "h", "-1h", "1.5h", "10", "3w", "99999d"}) CHECK_FALSE(parse_duration(bad));
  CHECK(rfc3339_utc(0) == "1970-01-01T00:00:00Z");
  CHECK(rfc3339_utc(1795684800) == "2026-11-26T09:20:00Z");
  // The NFD file goes through common/output_file's atomic write (a dot-file beside it, which
  // nfd-worker skips, then a rename; its own tests cover the temporary file).
  const std::string d = test::temp_dir();
  REQUIRE(write_file_atomic(d + "/f", "a=1\n"));
  REQUIRE(write_file_atomic(d + "/f", "a=2\n"));
  std::ifstream in(d + "/f");
  std::string line;
  std::getline(in, line);
  CHECK(line == "a=2");
  std::filesystem::create_directory(d + "/dir");
  CHECK_FALSE(write_file_atomic(d + "/dir", "x"));  // a directory in the way: an error, nothing left behind
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(d)) ++files;
  CHECK(files == 2);
}

TEST_CASE("report paths are relative to the source root", "[report][paths]") {
  const PathBase base{"/repo", "/repo/deploy"};
  CHECK(root_relative("serve.yaml", base) == "deploy/serve.yaml");
  CHECK(root_relative("./serve.yaml", base) == "deploy/serve.yaml");
  CHECK(root_relative("../deploy/../serve.yaml", base) == "serve.yaml");
  CHECK(root_relative("/repo/deploy/serve.yaml", PathBase{"/repo/", "/elsewhere"}) == "deploy/serve.yaml");
  CHECK(root_relative("eco/repo/deploy/serve.yaml", PathBase{"/home/u/eco/repo", "/home/u"}) == "deploy/serve.yaml");
  CHECK(root_relative("/other/serve.yaml", base) == "/other/serve.yaml");
  CHECK(root_relative("/repository/serve.yaml", base) == "/repository/serve.yaml");  // a sibling, not under /repo
  CHECK(root_relative("<command line>", base) == "<command line>");
  CHECK(root_relative("serve.yaml", PathBase{}) == "serve.yaml");
}

TEST_CASE("sarif: what GitHub resolves and keeps apart", "[report][sarif]") {
  const std::vector<Rule> catalog = {rule("SP3001", Severity::error)};
  Report rep = report_with({make_finding("SP3001", Severity::error)});
  rep.input_path = "serve.yaml";
  rep.results[0].location.file = "serve.yaml";
  const PathBase from_deploy{"/repo", "/repo/deploy"};
  const Json s = report_to_sarif(rep, catalog, SarifOptions{from_deploy});
  const Json& run = s["runs"][0];
  const Json& loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  CHECK(loc["uri"] == "deploy/serve.yaml");
  CHECK(loc["uriBaseId"] == "%SRCROOT%");
  CHECK(run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///repo/");
  CHECK(run["invocations"][0]["workingDirectory"]["uri"] == "file:///repo/");
  // One category per job and GPU, not per file (upload-sarif keeps an id that is there);
  // --sarif-category wins.
  CHECK(run["automationDetails"]["id"] == "specprobe/h100/");
  CHECK(
      report_to_sarif(rep, catalog, SarifOptions{from_deploy, "serving/h100"})["runs"][0]["automationDetails"]["id"] ==
      "serving/h100/");
  CHECK(sarif_automation_id({rep}, "x/") == "x/");
  // The same run from elsewhere gives the same paths, ids and fingerprints.
  Report moved = rep;
  moved.input_path = moved.results[0].location.file = "eco/repo/deploy/serve.yaml";
  const Json s2 = report_to_sarif(moved, catalog, SarifOptions{PathBase{"/home/u/eco/repo", "/home/u"}});
  CHECK(s2["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
        "deploy/serve.yaml");
  const std::string fp = run["results"][0]["partialFingerprints"]["primaryLocationLineHash"];
  CHECK(s2["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] == fp);
  CHECK(s2["runs"][0]["automationDetails"] == run["automationDetails"]);
  // Fingerprints survive the option moving to another line, and tell two configs apart.
  Report line_moved = rep;
  line_moved.results[0].location.line = 40;
  CHECK(report_to_sarif(
            line_moved, catalog,
            SarifOptions{from_deploy})["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] ==
        fp);
  Report other_config = rep;
  other_config.input_path = other_config.results[0].location.file = "serve-b.yaml";
  const Json s3 = report_to_sarif(other_config, catalog, SarifOptions{from_deploy});
  CHECK(s3["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] != fp);
  CHECK(s3["runs"][0]["automationDetails"]["id"] == run["automationDetails"]["id"]);
  // Rule pages on the web, and the tool's home page.
  CHECK(run["tool"]["driver"]["rules"][0]["helpUri"] == std::string(kRuleDocsUrl) + "/SP3001.md");
  CHECK(run["tool"]["driver"]["informationUri"] == kProjectUrl);
  // A file outside the root keeps an absolute file: URI.
  Report outside = rep;
  outside.results[0].location.file = "/opt/models/m/config.json";
  const Json o = report_to_sarif(
      outside, catalog, SarifOptions{from_deploy})["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  CHECK(o["artifactLocation"] == Json{{"uri", "file:///opt/models/m/config.json"}});
  // A command line has no file: a logical location, never a made-up URI.
  Report cmd = rep;
  cmd.input_path = cmd.results[0].location.file = "<command line>";
  cmd.results[0].location.column = 35;
  const Json c = report_to_sarif(cmd, catalog, SarifOptions{from_deploy});
  CHECK(c.dump().find("%3C") == std::string::npos);
  const Json& cl = c["runs"][0]["results"][0]["locations"][0];
  CHECK_FALSE(cl.contains("physicalLocation"));
  CHECK(cl["logicalLocations"][0]["fullyQualifiedName"] == "command line, column 35");
  CHECK(c["runs"][0]["automationDetails"]["id"] == "specprobe/h100/");
}

TEST_CASE("sarif: one run for every file of an invocation, the unknown verdict as results", "[report][sarif]") {
  const std::vector<Rule> catalog = {rule("SP3001", Severity::error)};
  std::vector<Report> reports;
  for (int i = 0; i < 25; ++i) {
    Report r = report_with({make_finding("SP3001", Severity::error)});
    r.input_path = r.results[0].location.file = fmt::format("deploy/serve-{}.yaml", i);
    r.exit_code = 1;
    reports.push_back(r);
  }
  reports[3].verdict = "unknown";
  reports[3].exit_code = 4;
  reports[3].results.clear();
  reports[3].missing = {{"model.architecture", "pass --model DIR", {"SP3001"}}, {"gpu.sm", "pass --gpu NAME", {}}};
  const Json s = reports_to_sarif(reports, catalog, SarifOptions{PathBase{"/repo", "/repo"}});
  REQUIRE(s["runs"].size() == 1);
  const Json& run = s["runs"][0];
  CHECK(run["automationDetails"]["id"] == "specprobe/h100/");
  // 24 findings, and the unknown file's two missing facts, each an error result at line 1.
  REQUIRE(run["results"].size() == 26);
  const auto& rules = run["tool"]["driver"]["rules"];
  REQUIRE(rules.size() == 2);
  CHECK(rules[1]["id"] == "verdict-unknown");
  int unknown = 0;
  std::set<std::string> fingerprints;
  for (const auto& r : run["results"]) {
    fingerprints.insert(r["partialFingerprints"]["primaryLocationLineHash"].get<std::string>());
    if (r["ruleId"] != "verdict-unknown") continue;
    ++unknown;
    CHECK(r["ruleIndex"] == 1);
    CHECK(r["level"] == "error");
    CHECK(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/serve-3.yaml");
    CHECK(r["message"]["text"].get<std::string>().find("verdict unknown: ") == 0);
  }
  CHECK(unknown == 2);
  CHECK(fingerprints.size() == 26);  // every file's finding is its own alert
  // Any file's findings outrank another's unknown verdict.
  CHECK(run["invocations"][0]["exitCode"] == 1);
  REQUIRE(run["properties"]["reports"].size() == 25);
  CHECK(run["properties"]["reports"][3]["verdict"] == "unknown");
  CHECK(run["properties"]["reports"][3]["missing"].size() == 2);
  // Two GPUs in one job: one category all the same.
  reports[5].plan.gpu.declared = "H200";
  CHECK(reports_to_sarif(reports, catalog)["runs"][0]["automationDetails"]["id"] == "specprobe/");
}

TEST_CASE("codequality: GitLab's issue list, the unknown verdict included", "[report][codequality]") {
  RuleResult err = make_finding("SP3001", Severity::error);
  err.location = SourceLocation{"deploy/serve.yaml", 4, 3};
  RuleResult risk = make_finding("SP3002", Severity::error);
  risk.certainty = Certainty::conditional;
  risk.condition = "under load";
  risk.location = {};
  RuleResult sup = make_finding("SP3003", Severity::warning);
  sup.suppressed = Suppression{"tracked", ".specprobe.yaml:3"};
  RuleResult warn = make_finding("SP3004", Severity::warning);
  Report rep = report_with({err, risk, sup, warn});
  rep.input_path = "deploy/serve.yaml";
  Report unknown = report_with({});
  unknown.input_path = "deploy/other.yaml";
  unknown.verdict = "unknown";
  unknown.missing = {{"model.architecture", "pass --model DIR", {}}};
  Report cmd = report_with({make_finding("SP3001", Severity::error)});
  cmd.input_path = "<command line>";
  const Json q = reports_to_codequality({rep, unknown, cmd}, PathBase{"/repo", "/repo"});
  REQUIRE(q.is_array());
  REQUIRE(q.size() == 4);  // the suppressed finding and the command line's are left out
  CHECK(q[0]["check_name"] == "SP3001");
  CHECK(q[0]["severity"] == "critical");
  CHECK(q[0]["location"] == Json{{"path", "deploy/serve.yaml"}, {"lines", {{"begin", 4}}}});
  CHECK(q[1]["severity"] == "major");
  CHECK(q[1]["description"].get<std::string>().find("at risk: under load") != std::string::npos);
  CHECK(q[1]["location"]["lines"]["begin"] == 1);
  CHECK(q[2]["severity"] == "minor");
  CHECK(q[3]["check_name"] == "verdict-unknown");
  CHECK(q[3]["location"]["path"] == "deploy/other.yaml");
  std::set<std::string> fps;
  for (const auto& i : q) fps.insert(i["fingerprint"].get<std::string>());
  CHECK(fps.size() == 4);
  // Stable: the same findings on another line keep their fingerprints.
  Report moved = rep;
  moved.results[0].location.line = 40;
  CHECK(reports_to_codequality({moved}, PathBase{"/repo", "/repo"})[0]["fingerprint"] == q[0]["fingerprint"]);
}

TEST_CASE("github: annotation paths from the repository root - the summary escapes HTML", "[report][github]") {
  RuleResult f = make_finding("SP3001", Severity::error);
  f.location = SourceLocation{"serve.yaml", 4, 3};
  const GithubOutput g = render_github(report_with({f}), PathBase{"/repo", "/repo/deploy"});
  CHECK(g.commands.rfind("::error file=deploy/serve.yaml,line=4,", 0) == 0);
  CHECK(g.summary_markdown.find("| deploy/serve.yaml:4:3 |") != std::string::npos);
  RuleResult c = make_finding("SP3002", Severity::error);
  c.location = SourceLocation{"<command line>", 1, 35};
  c.message = "k <= 2 & more";
  Report cr = report_with({c});
  cr.input_path = "<command line>";
  const GithubOutput gc = render_github(cr, PathBase{"/repo", "/repo"});
  CHECK(gc.commands.find("file=") == std::string::npos);
  CHECK(gc.summary_markdown.find("| &lt;command line&gt;:1:35 | k &lt;= 2 &amp; more |") != std::string::npos);
  CHECK(gc.summary_markdown.find("<command line>:") == std::string::npos);
}

TEST_CASE("junit: a finding below --fail-on passes, as the run does", "[report][junit]") {
  RuleResult warn = make_finding("SP3001", Severity::warning);
  RuleResult err = make_finding("SP3002", Severity::error);
  Report r = report_with({warn, err});
  r.fail_on = "error";
  std::string x = reports_to_junit({r});
  CHECK(x.find("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\"") != std::string::npos);
  CHECK(count_of(x, "<failure ") == 1);
  CHECK(x.find("message of SP3001 [SP3001] (below --fail-on error: does not fail the run)") != std::string::npos);
  r.fail_on = "warning";
  x = reports_to_junit({r});
  CHECK(count_of(x, "<failure ") == 2);
  r.fail_on = "none";
  CHECK(count_of(reports_to_junit({r}), "<failure ") == 0);
  CHECK(fails_gate(err, "error"));
  CHECK_FALSE(fails_gate(warn, "error"));
  CHECK(fails_gate(warn, "info"));
  CHECK_FALSE(fails_gate(err, "none"));
}

TEST_CASE("did you mean: one edit or a swap, the same band first", "[report][suggest]") {
  const std::vector<std::string> ids = {"SP1001", "SP1101", "SP3001", "SP3010", "SP3020"};
  CHECK(closest_match("SP3100", ids) == "SP3010");
  CHECK(closest_match("sp3o20", ids) == "SP3020");
  CHECK(closest_match("SP9999", ids) == "");
  CHECK(closest_match("vlm", {"vllm", "sglang", "torch"}) == "vllm");
  CHECK(closest_match("--gpus", {"--model", "--gpu", "--python"}) == "--gpu");
  CHECK(closest_match("chek", {"check", "gpu", "rules", "exec"}) == "check");
  CHECK(closest_match("x", {"gpu", "exec"}) == "");
  CHECK(edit_distance("ab", "ba") == 1);
  CHECK(did_you_mean("") == "");
  CHECK(did_you_mean("SP3001") == " (did you mean SP3001?)");
}

TEST_CASE("bounded edit distance agrees with the full one up to its limit", "[report][suggest]") {
  // Random words over a 3-letter alphabet (many near misses, transpositions, repeats), lengths 0-12.
  uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  auto word = [&] {
    std::string w(next() % 13, 'a');
    for (char& c : w) c = static_cast<char>('a' + next() % 3);
    return w;
  };
  for (int n = 0; n < 20000; ++n) {
    const std::string a = word(), b = word();
    const size_t limit = next() % 5, full = edit_distance(a, b);
    INFO(a << " / " << b << " limit " << limit);
    REQUIRE(edit_distance_within(a, b, limit) == std::min(full, limit + 1));
  }
  CHECK(edit_distance_within("speculative-config", "speculative-confg", 3) == 1);
  CHECK(edit_distance_within(std::string(4000, 'x'), "tensor-parallel-size", 3) == 4);
}

TEST_CASE("suppressions: .specprobe.yaml entries need an id and a reason - until expires", "[report][suppressions]") {
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

  Report r = report_with({make_finding("SP3001", Severity::error), make_finding("SP3002", Severity::error),
                          make_finding("SP3003", Severity::error, ResultStatus::skip)});
  apply_suppressions(r, *ok, "2025-06-01");
  CHECK(r.results[0].suppressed);
  CHECK_FALSE(r.results[1].suppressed);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].severity == "warning");
  CHECK(r.notes[0].message.find("expired on 2000-01-31") != std::string::npos);
  // `until` is inclusive.
  Report same_day = report_with({make_finding("SP3002", Severity::error)});
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

TEST_CASE("text: lines wrap at the width, continuation indented, colour not counted", "[report][text]") {
  const std::string long_line = "serve.yaml:3:1: error: " + std::string("word ") + std::string(200, 'x') + " tail";
  CHECK(wrap_text("short line\n", 100) == "short line\n");
  const std::string w = wrap_text("a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff\n", 24);
  for (size_t start = 0, end; (end = w.find('\n', start)) != std::string::npos; start = end + 1)
    CHECK(end - start <= 24);
  CHECK(w.find("\n    ") != std::string::npos);  // the hanging indent
  // A word longer than the width stays whole; an indented line keeps its indent plus four.
  CHECK(wrap_text(long_line, 40).find(std::string(200, 'x')) != std::string::npos);
  CHECK(wrap_text("  fix: one two three four five six seven eight", 24).find("\n      ") != std::string::npos);
  // Colour sequences take no columns.
  const std::string red = "\x1b[31merror\x1b[0m: one two three";
  CHECK(wrap_text(red, 24) == red);
  CHECK(wrap_text("no wrap below twenty", 10) == "no wrap below twenty");
}

TEST_CASE("text: the plan header and --explain-memory render the typed plan summary", "[report][text]") {
  Report r = report_with({});
  r.facts = Json::object();  // what the printers show comes from r.plan alone (issue 53)
  r.input_form = "vllm-yaml";
  r.plan.engine_version = "0.11.0";
  r.plan.gpu.arch_label = "sm_90";
  r.plan.gpu.source = "declared";
  r.plan.model.config_read = true;
  r.plan.model.architecture = "DeepseekV3ForCausalLM";
  r.plan.model.num_attention_heads = 128;
  r.plan.model.num_kv_heads = 1;
  r.plan.model.gqa_ratio = 2.5;
  r.plan.model.mla = true;
  r.plan.model.source = {"hub (cached)", "huggingface.co", "0123456789abcdef", "/x/config.json"};
  r.plan.spec.enabled = false;
  r.plan.attention.kv_cache_dtype_unknown = true;
  r.plan.memory.present = true;
  r.plan.memory.reason = "the GPU's memory is unknown";
  TextStyle style;
  style.explain_memory = true;
  const std::string t = render_text(r, style);
  CHECK(t.find("engine vllm 0.11.0\n") != std::string::npos);
  CHECK(t.find("  gpu:       NVIDIA H100 80GB HBM3 (sm_90, declared)\n") != std::string::npos);
  CHECK(t.find("  model:     DeepseekV3ForCausalLM (unknown), heads 128/1 kv, GQA 2.5 per rank, MLA\n") !=
        std::string::npos);
  CHECK(t.find("read from the Hub (huggingface.co) at commit 0123456789ab, cached\n") != std::string::npos);
  CHECK(t.find("  spec:      off\n") != std::string::npos);
  CHECK(t.find("(unknown); kv cache unknown; cudagraph unknown -> unknown\n") != std::string::npos);
  CHECK(t.find("  memory:    not modelled: the GPU's memory is unknown\n") != std::string::npos);
  CHECK(t.find("memory per GPU rank:\n  not modelled: the GPU's memory is unknown\n") != std::string::npos);
  // Without the model's config.json: its id, as given.
  r.plan.model = ModelSummary{};
  r.plan.model.id = "org/model";
  CHECK(render_text(r, style).find("  model:     org/model (metadata not read)\n") != std::string::npos);
}

TEST_CASE("text: --explain-memory shows what other processes hold and the shared-GPU note", "[report][text]") {
  Report r = report_with({});
  r.facts = Json::object();
  r.plan.memory.present = true;
  r.plan.memory.modelled = true;
  r.plan.memory.status = "at-risk";
  r.plan.memory.kv_bytes = 6LL << 30;
  r.plan.memory.breakdown.engine_version = "0.8.5";
  r.plan.memory.breakdown.other_processes_bytes = 6LL << 30;
  r.plan.memory.breakdown.shared_gpu_note = "other processes hold 6.0 GiB on the GPU now";
  TextStyle style;
  style.explain_memory = true;
  style.width = 200;
  const std::string t = render_text(r, style);
  CHECK(t.find("  other processes   6.00 GiB (in use on the GPU now beyond an idle card's; off the KV cache)\n") !=
        std::string::npos);
  CHECK(t.find("  note: other processes hold 6.0 GiB on the GPU now\n") != std::string::npos);
  // Neither line without the facts.
  r.plan.memory.breakdown.other_processes_bytes.reset();
  r.plan.memory.breakdown.shared_gpu_note.reset();
  const std::string idle = render_text(r, style);
  CHECK(idle.find("other processes") == std::string::npos);
}
