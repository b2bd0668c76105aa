// The report is never lost: a write that fails (a full disk, /dev/full, a read-only directory)
// exits 5 with a message naming the destination, whatever the output (stdout, -o, --json,
// --sarif, --junit, the GitHub job summary, matrix -o / --junit); report files are replaced
// atomically, so a failure leaves the old file and no temporary file behind.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "../hostile/bounded_run.hpp"
#include "run_binary.hpp"

using specprobe::test::file_text;
using specprobe::test::run_specprobe;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;
namespace fs = std::filesystem;

using specprobe::test::kExampleCheckpoints;
using specprobe::test::kExampleSeeds;

namespace {

const std::string kCheckOneFinding = "check serve.yaml --gpu RTX5090 --no-matrix";  // one finding: exit 1 when written
const std::string kMatrix = "matrix --model " + shell_quote(kExampleCheckpoints + "/gqa16-mtp") + " --config " +
                            shell_quote(kExampleSeeds + "/gb10-flashinfer-gqa16.yaml") + " --gpu GB10";

std::string config_dir() {
  const std::string d = temp_dir();
  fs::copy_file(kExampleSeeds + "/turboquant-ngram.yaml", d + "/serve.yaml");
  return d;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `specprobe ARGS` under a 1 KiB file-size limit with SIGXFSZ ignored: every regular file it
// writes past 1 KiB fails with EFBIG, as on a full disk.
specprobe::test::RunResult run_on_full_disk(const std::string& args, const std::string& dir) {
  return run_specprobe(
      "--version >/dev/null; ulimit -f 2; trap '' XFSZ; exec " + shell_quote(SPECPROBE_BINARY) + " " + args, dir);
}

}  // namespace

TEST_CASE("report I/O: stdout on /dev/full exits 5 and says so", "[e2e][io]") {
  const std::string d = config_dir();
  for (const char* format : {"text", "json", "sarif", "junit", "github"}) {
    auto r = run_specprobe(kCheckOneFinding + " --format " + format + " >/dev/full", d);
    INFO(format << ": " << r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.err.find("cannot write standard output: " + std::string(std::strerror(ENOSPC))) != std::string::npos);
  }
  // --exit-zero does not hide it; other commands' stdout is checked too.
  CHECK(run_specprobe(kCheckOneFinding + " --exit-zero >/dev/full", d).exit_code == 5);
  auto rules = run_specprobe("rules list >/dev/full");
  CHECK(rules.exit_code == 5);
  CHECK(rules.err.find("standard output") != std::string::npos);
  CHECK(run_specprobe(kMatrix + " --format json >/dev/full").exit_code == 5);
  // Written in full: the findings' code, as before.
  CHECK(run_specprobe(kCheckOneFinding + " >/dev/null", d).exit_code == 1);
}

TEST_CASE("report I/O: every report file on /dev/full exits 5 naming it", "[e2e][io]") {
  const std::string d = config_dir();
  for (const char* opt : {"-o", "--json", "--sarif", "--junit"}) {
    auto r = run_specprobe(kCheckOneFinding + " " + opt + " /dev/full", d);
    INFO(opt << ": " << r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.err.find("cannot write /dev/full: " + std::string(std::strerror(ENOSPC))) != std::string::npos);
  }
  auto summary = run_specprobe("--version >/dev/null; GITHUB_STEP_SUMMARY=/dev/full " + shell_quote(SPECPROBE_BINARY) +
                                   " " + kCheckOneFinding + " --github",
                               d);
  CHECK(summary.exit_code == 5);
  CHECK(summary.err.find("cannot write /dev/full") != std::string::npos);
  CHECK(run_specprobe(kMatrix + " --format nfd -o /dev/full").exit_code == 5);
  CHECK(run_specprobe(kMatrix + " --junit /dev/full >/dev/null").exit_code == 5);
}

TEST_CASE("report I/O: on a full disk the old report stays whole and no temporary file is left", "[e2e][io]") {
  const std::string d = config_dir();
  std::ofstream(d + "/report.json") << "old report\n";
  for (const char* opt : {"-o", "--json", "--sarif", "--junit"}) {
    auto r = run_on_full_disk(
        kCheckOneFinding + " --format json " + opt + " report.json" + (std::string(opt) == "-o" ? "" : " >/dev/null"),
        d);
    INFO(opt << ": " << r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.err.find("cannot write report.json: " + std::string(std::strerror(EFBIG))) != std::string::npos);
    CHECK(file_text(d + "/report.json") == "old report\n");
    CHECK(entries(d) == std::vector<std::string>{"report.json", "serve.yaml"});
  }
  // `check --format json > report.json` on a full disk: exit 5, not 0 with a cut file.
  auto r = run_on_full_disk(kCheckOneFinding + " --format json > stdout.json", d);
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("cannot write standard output") != std::string::npos);
  // matrix -o: the same.
  auto m = run_on_full_disk(kMatrix + " --format json -o report.json", d);
  CHECK(m.exit_code == 5);
  CHECK(file_text(d + "/report.json") == "old report\n");
}

TEST_CASE("report I/O: -o into a read-only directory exits 5 and leaves nothing there", "[e2e][io]") {
  const std::string d = config_dir();
  fs::create_directories(d + "/ro");
  // As nobody when run as root (root writes anywhere), so that the permissions apply.
  chmod(d.c_str(), 0755);
  chmod((d + "/serve.yaml").c_str(), 0644);
  chmod((d + "/ro").c_str(), 0555);
  const auto r = specprobe::hostile::run_bounded(
      {"check", "serve.yaml", "--gpu", "RTX5090", "--no-matrix", "-o", "ro/report.json"}, d, 60, 4096,
      /*as_nobody=*/true);
  INFO(r.err);
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("cannot write ro/report.json: " + std::string(std::strerror(EACCES))) != std::string::npos);
  CHECK(entries(d + "/ro").empty());
}

TEST_CASE("report I/O: report files are replaced, never left beside a temporary file", "[e2e][io]") {
  const std::string d = config_dir();
  std::ofstream(d + "/report.json") << "old report\n";
  auto r = run_specprobe(kCheckOneFinding + " --format json -o report.json --sarif out.sarif", d);
  CHECK(r.exit_code == 1);
  CHECK(file_text(d + "/report.json").find("\"verdict\": \"not-supported\"") != std::string::npos);
  CHECK(entries(d) == std::vector<std::string>{"out.sarif", "report.json", "serve.yaml"});
  const std::string nfd = temp_dir();
  CHECK(run_specprobe(kMatrix + " --format nfd -o " + shell_quote(nfd + "/specprobe")).exit_code ==
        1);  // written in full; exit 1: the seed plan is not supported on GB10
  CHECK(file_text(nfd + "/specprobe").find("specprobe.io/") != std::string::npos);
  CHECK(entries(nfd) == std::vector<std::string>{"specprobe"});
}
