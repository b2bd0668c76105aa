// Golden files for every output format (tests/golden/<case>/), produced by running the binary
// once per case with every output at once (--sarif --junit --json --github, text on stdout, the
// job summary through $GITHUB_STEP_SUMMARY). Volatile fields (durations, version, git sha,
// absolute paths) are normalised; the facts block of the JSON report is elided (tests/facts
// owns it). The raw outputs are validated: SARIF against the published 2.1.0 schema and what
// GitHub code scanning accepts (check_sarif_github.py), JUnit against tests/data/schemas/junit.xsd
// (xmllint) plus check_junit.py, JSON against report-1.json. Paths in SARIF and annotations are
// relative to the repository (--source-root is the source tree, as GitHub's checkout would be).
//
// Regenerate: SPECPROBE_UPDATE_GOLDEN=1 build-ci/tests/specprobe_tests "[golden]"; review the diff.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../e2e/run_binary.hpp"
#include "build_info.hpp"
#include "common/json.hpp"

using specprobe::Json;
using specprobe::test::file_text;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;

using specprobe::test::kExampleCheckpoints;
using specprobe::test::kSourceDir;

namespace {

const std::string kGolden = kSourceDir + "/tests/golden";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

struct Paths {
  std::string out_dir;
};

std::string normalize_text(std::string s, const Paths& p) {
  replace_all(s, SPECPROBE_BINARY, "specprobe");
  replace_all(s, fmt::format("specprobe {} ", specprobe::kToolVersion), "specprobe <version> ");
  replace_all(s, p.out_dir, "<out>");
  replace_all(s, kSourceDir, "<src>");
  return s;
}

void normalize_json(Json& j, const Paths& p) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k == "duration_ms" || k == "durationMs")
        it.value() = 0;
      else if (k == "git_sha" || k == "gitSha")
        it.value() = "<git-sha>";
      else
        normalize_json(it.value(), p);
    }
  } else if (j.is_array()) {
    for (auto& x : j) normalize_json(x, p);
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == specprobe::kToolVersion) s = "<version>";
    j = normalize_text(s, p);
  }
}

// The NFD expiry directive: a time 24 h from now.
std::string normalize_expiry(std::string s) {
  const std::string key = "# +expiry-time=";
  if (const size_t p = s.find(key); p != std::string::npos)
    s.replace(p + key.size(), s.find('\n', p) - p - key.size(), "<now + 24h>");
  return s;
}

// time="1.234" -> time="0.000"; the version property.
std::string normalize_xml(std::string s, const Paths& p) {
  for (size_t pos = 0; (pos = s.find(" time=\"", pos)) != std::string::npos;) {
    const size_t start = pos + 7, end = s.find('"', start);
    s.replace(start, end - start, "0.000");
    pos = start;
  }
  replace_all(s, fmt::format("value=\"{}\"", specprobe::kToolVersion), "value=\"<version>\"");
  return normalize_text(s, p);
}

// Compares ACTUAL with tests/golden/<case>/<name>, or writes it when SPECPROBE_UPDATE_GOLDEN is set.
void golden(const std::string& case_name, const std::string& name, const std::string& actual) {
  const std::string path = kGolden + "/" + case_name + "/" + name;
  const char* update = std::getenv("SPECPROBE_UPDATE_GOLDEN");
  if (update && *update && std::string(update) != "0") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  INFO("golden file " << path << " (regenerate with SPECPROBE_UPDATE_GOLDEN=1 and review the diff)");
  REQUIRE(std::filesystem::exists(path));
  CHECK(file_text(path) == actual);
}

struct Run {
  int exit_code = -1;
  std::string out, err;
};

// Runs the binary in DIR with a clean GitHub environment and $GITHUB_STEP_SUMMARY set.
Run run_in(const std::string& dir, const std::string& args, const std::string& summary_file) {
  const std::string errf = temp_dir() + "/stderr";
  const std::string cmd =
      "cd " + shell_quote(dir) +
      " && env -u GITHUB_WORKSPACE -u GITHUB_ACTIONS NO_COLOR=1 GITHUB_STEP_SUMMARY=" + shell_quote(summary_file) +
      " " + shell_quote(SPECPROBE_BINARY) + " " + args + " 2>" + shell_quote(errf);
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = file_text(errf);
  return r;
}

int sh(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void validate(const std::string& sarif, const std::string& junit, const std::string& json) {
  const std::string py = "/usr/bin/python3 ";
  const std::string tool = shell_quote(kSourceDir + "/tests/tools/validate_schema.py");
  if (!sarif.empty()) {
    CHECK(sh(py + tool + " " + shell_quote(kSourceDir + "/tests/data/schemas/sarif-schema-2.1.0.json") + " " +
             shell_quote(sarif)) == 0);
    CHECK(sh(py + shell_quote(kSourceDir + "/tests/report/check_sarif_github.py") + " " + shell_quote(sarif)) == 0);
  }
  if (!json.empty())
    CHECK(sh(py + tool + " " + shell_quote(kSourceDir + "/docs/schema/report-1.json") + " " + shell_quote(json)) == 0);
  if (!junit.empty()) {
    CHECK(sh("xmllint --noout --schema " + shell_quote(kSourceDir + "/tests/data/schemas/junit.xsd") + " " +
             shell_quote(junit) + " 2>/dev/null") == 0);
    CHECK(sh(py + shell_quote(kSourceDir + "/tests/report/check_junit.py") + " " + shell_quote(junit)) == 0);
  }
}

// One `check` case: every format at once, then compared and validated.
void check_case(const std::string& case_name, const std::string& args, int expected_exit) {
  Paths p{temp_dir()};
  const std::string sarif = p.out_dir + "/report.sarif", junit = p.out_dir + "/report.junit.xml",
                    json = p.out_dir + "/report.json", summary = p.out_dir + "/summary.md";
  std::ofstream(summary) << "<!-- earlier step -->\n";  // appended to, never overwritten
  const Run r = run_in(kGolden + "/" + case_name,
                       args + " --sarif " + shell_quote(sarif) + " --junit " + shell_quote(junit) + " --json " +
                           shell_quote(json) + " --github --source-root " + shell_quote(kSourceDir),
                       summary);
  INFO(case_name << ": stderr " << r.err);
  REQUIRE(r.exit_code == expected_exit);
  validate(sarif, junit, json);

  golden(case_name, "stdout.txt", normalize_text(r.out, p));
  golden(case_name, "summary.md", normalize_text(file_text(summary), p));
  golden(case_name, "report.junit.xml", normalize_xml(file_text(junit), p));
  Json s = Json::parse(file_text(sarif));
  normalize_json(s, p);
  golden(case_name, "report.sarif", s.dump(2) + "\n");
  Json j = Json::parse(file_text(json));
  j["facts"] = "<elided: the facts stage has its own tests>";
  normalize_json(j, p);
  golden(case_name, "report.json", j.dump(2) + "\n");
}

}  // namespace

TEST_CASE("golden: errors, a warning with escaping, info, skip and could-not-check", "[report][golden]") {
  check_case("turboquant", "check serve.yaml --gpu RTX5090 --rules-dir ../rules --fail-on warning", 1);
}

TEST_CASE("golden: suppressions from .specprobe.yaml, one of them expired", "[report][golden]") {
  // No --model and SP9993 always unknown: the verdict is unknown (exit 4), listed with what is missing.
  check_case("suppressed", "check serve.yaml --gpu RTX5090 --rules-dir ../rules --no-matrix --ignore SP9991", 4);
}

TEST_CASE("golden: matrix table, JSON, JUnit per GPU and NFD feature file", "[report][golden]") {
  const std::string case_name = "matrix";
  const std::string dir = kGolden + "/" + case_name;
  Paths p{temp_dir()};
  const std::string base = "matrix --model " + shell_quote(kExampleCheckpoints + "/gqa16-mtp") +
                           " --config serve.yaml --rules-dir ../rules/3xxx";  // no always-unknown rule: real cells
  const std::string junit = p.out_dir + "/matrix.junit.xml";
  const Run table = run_in(dir, base + " --gpu H100,GB10 --junit " + shell_quote(junit), p.out_dir + "/unused.md");
  INFO("stderr " << table.err);
  REQUIRE(table.exit_code == 1);  // not supported on GB10
  validate("", junit, "");
  golden(case_name, "matrix.txt", normalize_text(table.out, p));
  golden(case_name, "matrix.junit.xml", normalize_xml(file_text(junit), p));

  const Run js = run_in(dir, base + " --gpu H100,GB10 --format json", p.out_dir + "/unused.md");
  REQUIRE(js.exit_code == 1);
  Json j = Json::parse(js.out);
  normalize_json(j, p);
  golden(case_name, "matrix.json", j.dump(2) + "\n");

  const std::string nfd_file = p.out_dir + "/specprobe.features";
  const Run nfd =
      run_in(dir, base + " --gpu GB10 --format nfd --output " + shell_quote(nfd_file), p.out_dir + "/unused.md");
  REQUIRE(nfd.exit_code == 1);
  CHECK(nfd.out.empty());
  golden(case_name, "specprobe.features", normalize_expiry(normalize_text(file_text(nfd_file), p)));
}
