// What GitHub, GitLab and Kubernetes make of specprobe's outputs, end to end (issue 38 items 3-5):
// paths from the repository root wherever specprobe runs, one code-scanning category per config
// and GPU, a command line that is in no file, the NFD feature file (a dot-file renamed into place,
// an expiry, valid label names), JUnit that agrees with the exit code, the exit code of `matrix`,
// "did you mean" for flags, commands, ids and libraries, per-command help, progress and colour.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "run_binary.hpp"

using nlohmann::json;
using namespace specprobe::test;  // run_specprobe, RunResult, shell_quote, file_text, temp_dir

namespace {

// Runs specprobe from DIR with ENV ("NAME=value ...", and CI variables unset unless given).
RunResult run_env(const std::string& env, const std::string& args, const std::string& dir) {
  return run_specprobe(
      "--version >/dev/null; env -u GITHUB_WORKSPACE -u CI_PROJECT_DIR -u GITHUB_STEP_SUMMARY NO_COLOR=1 " + env + " " +
          shell_quote(SPECPROBE_BINARY) + " " + args,
      dir);
}

// The script's exit code (-1 when it did not exit normally).
int py(const std::string& script, const std::string& args) {
  const int status = std::system(
      ("/usr/bin/python3 " + shell_quote(kSourceDir + "/" + script) + " " + args + " >/dev/null 2>&1").c_str());
  return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A repository: eco/repo/.git and eco/repo/deploy/{serve.yaml,serve-b.yaml,start.sh} (the failing
// TurboQuant seed; no advisories, so that only the rule's finding counts).
struct Repo {
  std::string home = temp_dir(), root = home + "/eco/repo", deploy = root + "/deploy";
  Repo() {
    std::filesystem::create_directories(deploy);
    std::filesystem::create_directories(root + "/.git");
    std::filesystem::create_directories(home + "/no-advisories");
    std::filesystem::copy_file(kExampleSeeds + "/turboquant-ngram.yaml", deploy + "/serve.yaml");
    std::filesystem::copy_file(kExampleSeeds + "/turboquant-ngram.yaml", deploy + "/serve-b.yaml");
    std::filesystem::copy_file(kExampleSeeds + "/turboquant-ngram.sh", deploy + "/start.sh");
  }
  std::string check(const std::string& file) const {
    return "check " + file + " --gpu RTX5090 --no-matrix --advisories-dir " + shell_quote(home + "/no-advisories");
  }
};

json sarif_of(const std::string& path) { return json::parse(file_text(path)); }
std::string uri_of(const json& sarif) {
  return sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
}

}  // namespace

TEST_CASE("sarif: URIs from the repository root wherever specprobe runs", "[e2e][ci][sarif]") {
  const Repo repo;
  // From deploy/, from two levels up, and from inside the repository: one URI, one category.
  const RunResult a = run_env("", repo.check("serve.yaml") + " --sarif a.sarif", repo.deploy);
  const RunResult b = run_env("", repo.check("eco/repo/deploy/serve.yaml") + " --sarif b.sarif", repo.home);
  const RunResult c = run_env("", repo.check("deploy/serve.yaml") + " --sarif c.sarif --github", repo.root);
  REQUIRE(a.exit_code == 1);
  REQUIRE(b.exit_code == 1);
  REQUIRE(c.exit_code == 1);
  const json sa = sarif_of(repo.deploy + "/a.sarif"), sb = sarif_of(repo.home + "/b.sarif"),
             sc = sarif_of(repo.root + "/c.sarif");
  CHECK(uri_of(sa) == "deploy/serve.yaml");
  CHECK(uri_of(sb) == "deploy/serve.yaml");
  CHECK(uri_of(sc) == "deploy/serve.yaml");
  CHECK(sa["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + repo.root + "/");
  CHECK(sa["runs"][0]["automationDetails"]["id"] == "specprobe/rtx5090/");
  CHECK(sb["runs"][0]["automationDetails"] == sa["runs"][0]["automationDetails"]);
  const auto fp = [](const json& s) {
    return s["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"];
  };
  CHECK(fp(sa) == fp(sb));
  // The annotations too.
  CHECK(c.out.find("::error file=deploy/serve.yaml,line=3,") != std::string::npos);
  // Both checks GitHub makes, on every one.
  for (const std::string f : {repo.deploy + "/a.sarif", repo.home + "/b.sarif"}) {
    CHECK(py("tests/tools/validate_schema.py",
             shell_quote(kSourceDir + "/tests/data/schemas/sarif-schema-2.1.0.json") + " " + shell_quote(f)) == 0);
    CHECK(py("tests/report/check_sarif_github.py", shell_quote(f)) == 0);
  }
  // $GITHUB_WORKSPACE, $CI_PROJECT_DIR and --source-root name the root; a path outside it stays absolute.
  run_env("GITHUB_WORKSPACE=" + shell_quote(repo.root), repo.check("serve.yaml") + " --sarif ws.sarif", repo.deploy);
  CHECK(uri_of(sarif_of(repo.deploy + "/ws.sarif")) == "deploy/serve.yaml");
  run_env("CI_PROJECT_DIR=" + shell_quote(repo.deploy), repo.check("serve.yaml") + " --sarif gl.sarif", repo.deploy);
  CHECK(uri_of(sarif_of(repo.deploy + "/gl.sarif")) == "serve.yaml");
  run_env("GITHUB_WORKSPACE=/nowhere", repo.check("serve.yaml") + " --sarif sr.sarif --source-root ..", repo.deploy);
  CHECK(uri_of(sarif_of(repo.deploy + "/sr.sarif")) == "deploy/serve.yaml");
  run_env("GITHUB_WORKSPACE=/nowhere", repo.check("serve.yaml") + " --sarif out.sarif", repo.deploy);
  CHECK(uri_of(sarif_of(repo.deploy + "/out.sarif")) == "file://" + repo.deploy + "/serve.yaml");
}

TEST_CASE("sarif: one category per job and GPU, not per file - --sarif-category", "[e2e][ci][sarif]") {
  const Repo repo;
  run_env("", repo.check("serve.yaml") + " --sarif a.sarif", repo.deploy);
  run_env("", repo.check("serve-b.yaml") + " --sarif b.sarif", repo.deploy);
  run_env("", repo.check("serve.yaml") + " --sarif c.sarif --sarif-category serving/rtx", repo.deploy);
  const json a = sarif_of(repo.deploy + "/a.sarif"), b = sarif_of(repo.deploy + "/b.sarif"),
             c = sarif_of(repo.deploy + "/c.sarif");
  // Not the file: a renamed file's alerts close with the next upload of the category.
  CHECK(a["runs"][0]["automationDetails"]["id"] == b["runs"][0]["automationDetails"]["id"]);
  CHECK(c["runs"][0]["automationDetails"]["id"] == "serving/rtx/");
  // Both configs in one call: one run, one category, both files' results.
  run_env("", repo.check("serve.yaml") + " serve-b.yaml --sarif ab.sarif", repo.deploy);
  const json ab = sarif_of(repo.deploy + "/ab.sarif");
  REQUIRE(ab["runs"].size() == 1);
  CHECK(ab["runs"][0]["properties"]["reports"].size() == 2);
  const json& rule = a["runs"][0]["tool"]["driver"]["rules"][0];
  const std::string help = rule["helpUri"];
  CHECK(help.size() > 20);
  CHECK(help.substr(help.size() - 10) == "/" + rule["id"].get<std::string>().substr(0, 6) + ".md");
  CHECK(std::filesystem::exists(kSourceDir + "/docs/rules/" + rule["id"].get<std::string>() + ".md"));
  CHECK(a["runs"][0]["tool"]["driver"]["informationUri"].get<std::string>().rfind("https://", 0) == 0);
}

TEST_CASE("sarif: 25 files in one call - one run, one category, unknown verdicts shown, exit 1", "[e2e][ci][sarif]") {
  const Repo repo;
  std::string files;
  // 12 with a finding (SP3020), 13 that cannot be decided (the model is not on disk, tests run offline).
  for (int i = 0; i < 25; ++i) {
    const std::string name = "serve-" + std::to_string(i) + ".yaml";
    if (i < 12)
      std::filesystem::copy_file(repo.deploy + "/serve.yaml", repo.deploy + "/" + name);
    else
      write_file(repo.deploy, name,
                 "model: meta-llama/Llama-3.1-8B-Instruct\nspeculative-config: {method: ngram, num_speculative_tokens: "
                 "3, prompt_lookup_max: 4}\n");
    files += " " + name;
  }
  const RunResult r = run_env("", repo.check(files.substr(1)) + " --sarif many.sarif", repo.deploy);
  CHECK(r.exit_code == 1);  // the findings (SP3020) outrank the unknown verdicts (no model)
  const json s = sarif_of(repo.deploy + "/many.sarif");
  REQUIRE(s["runs"].size() == 1);
  CHECK(s["runs"][0]["automationDetails"]["id"] == "specprobe/rtx5090/");
  CHECK(s["runs"][0]["properties"]["reports"].size() == 25);
  int unknown = 0;
  for (const auto& r : s["runs"][0]["results"]) unknown += r["ruleId"] == "verdict-unknown" ? 1 : 0;
  CHECK(unknown >= 13);
  const std::string f = repo.deploy + "/many.sarif";
  CHECK(py("tests/tools/validate_schema.py",
           shell_quote(kSourceDir + "/tests/data/schemas/sarif-schema-2.1.0.json") + " " + shell_quote(f)) == 0);
  CHECK(py("tests/report/check_sarif_github.py", shell_quote(f)) == 0);
}

TEST_CASE("sarif: a deploy script's command line is located in the script - `check --` in no file",
          "[e2e][ci][sarif]") {
  const Repo repo;
  REQUIRE(run_env("", repo.check("start.sh") + " --sarif s.sarif --github", repo.deploy).exit_code == 1);
  const json s = sarif_of(repo.deploy + "/s.sarif");
  CHECK(uri_of(s) == "deploy/start.sh");
  CHECK(s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"].get<int>() >= 1);
  CHECK(s.dump().find("<command line>") == std::string::npos);
  CHECK(s.dump().find("%3Ccommand") == std::string::npos);
  CHECK(py("tests/report/check_sarif_github.py", shell_quote(repo.deploy + "/s.sarif")) == 0);

  const std::string summary = repo.home + "/summary.md";
  const RunResult c = run_env(
      "GITHUB_STEP_SUMMARY=" + shell_quote(summary),
      "check --gpu RTX5090 --no-matrix --sarif c.sarif --github --advisories-dir no-advisories -- vllm serve m "
      "--kv-cache-dtype turboquant_k8v4 --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'",
      repo.home);
  const json cs = sarif_of(repo.home + "/c.sarif");
  CHECK(cs.dump().find("%3C") == std::string::npos);
  CHECK(cs["runs"][0]["automationDetails"]["id"] == "specprobe/rtx5090/");
  if (!cs["runs"][0]["results"].empty()) {
    CHECK_FALSE(cs["runs"][0]["results"][0]["locations"][0].contains("physicalLocation"));
    CHECK(c.err.find("no file location") != std::string::npos);
    // GitHub would refuse this file: the checker says so, and the docs say to check a file.
    CHECK(py("tests/report/check_sarif_github.py", shell_quote(repo.home + "/c.sarif")) == 1);
    // The job summary keeps `<command line>` visible instead of an HTML tag.
    const std::string md = file_text(summary);
    CHECK(md.find("&lt;command line&gt;:1:") != std::string::npos);
  }
  CHECK(py("tests/tools/validate_schema.py", shell_quote(kSourceDir + "/tests/data/schemas/sarif-schema-2.1.0.json") +
                                                 " " + shell_quote(repo.home + "/c.sarif")) == 0);
}

TEST_CASE("junit agrees with the exit code: warnings below --fail-on pass", "[e2e][ci][junit]") {
  const std::string d = temp_dir();
  const std::string warn_only = "check dsv4-mtp.yaml --model " +
                                shell_quote(kExampleCheckpoints + "/deepseek-v4-flash") +
                                " --gpu H200 --lib vllm=0.25.1 --no-matrix";
  const RunResult pass = run_specprobe(warn_only + " --junit " + shell_quote(d + "/a.xml"), kExampleSeeds);
  REQUIRE(pass.exit_code == 0);
  const std::string a = file_text(d + "/a.xml");
  CHECK(a.find("<failure ") == std::string::npos);
  CHECK(a.find("failures=\"0\"") != std::string::npos);
  CHECK(a.find("(below --fail-on error: does not fail the run)") != std::string::npos);
  const RunResult fail =
      run_specprobe(warn_only + " --fail-on warning --junit " + shell_quote(d + "/b.xml"), kExampleSeeds);
  REQUIRE(fail.exit_code == 1);
  CHECK(file_text(d + "/b.xml").find("<failure ") != std::string::npos);
  CHECK(py("tests/report/check_junit.py", shell_quote(d + "/a.xml") + " " + shell_quote(d + "/b.xml")) == 0);
  // An unknown verdict (exit 4) is an <error> test case naming what is missing (issue 51).
  const RunResult unknown =
      run_specprobe("check dsv4-mtp.yaml --gpu H200 --no-matrix --junit " + shell_quote(d + "/c.xml"), kExampleSeeds);
  REQUIRE(unknown.exit_code == 4);
  const std::string c = file_text(d + "/c.xml");
  CHECK(c.find("classname=\"specprobe.verdict\"") != std::string::npos);
  CHECK(c.find("type=\"verdict-unknown\"") != std::string::npos);
  CHECK(c.find("could not decide without: model.") != std::string::npos);
  CHECK(a.find("specprobe.verdict") == std::string::npos);
  CHECK(py("tests/report/check_junit.py", shell_quote(d + "/c.xml")) == 0);
}

TEST_CASE("matrix: exit 1 when the plan is not supported - the NFD feature file", "[e2e][ci][matrix][nfd]") {
  const std::string d = temp_dir();
  // Rules only: the advisory database holds open reports for Qwen3-Next + MTP (prefix caching,
  // FlashInfer fp8 on Hopper) that fail H100 too; this test is about exit codes and NFD output.
  std::filesystem::create_directory(d + "/no-advisories");
  const std::string args = "matrix --model " + shell_quote(kExampleCheckpoints + "/gqa16-mtp") +
                           " --config gb10-flashinfer-gqa16.yaml --advisories-dir " + shell_quote(d + "/no-advisories");
  CHECK(run_specprobe(args + " --gpu H100", kExampleSeeds).exit_code == 0);
  CHECK(run_specprobe(args + " --gpu H100,GB10", kExampleSeeds).exit_code ==
        1);  // not supported on GB10, as the help says

  // Written through a dot-file (nfd-worker skips those) renamed into place: nothing else is left.
  const std::string features = d + "/features.d";
  std::filesystem::create_directory(features);
  const auto before = std::time(nullptr);
  const RunResult nfd =
      run_specprobe(args + " --gpu GB10 --format nfd -o " + shell_quote(features + "/specprobe-gqa16"), kExampleSeeds);
  CHECK(nfd.exit_code == 1);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(features)) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"specprobe-gqa16"});
  const std::string text = file_text(features + "/specprobe-gqa16");
  // The expiry directive first, a day from now by default.
  std::smatch m;
  REQUIRE(std::regex_search(text, m,
                            std::regex("^# \\+expiry-time=(\\d{4})-(\\d\\d)-(\\d\\d)T(\\d\\d):(\\d\\d):(\\d\\d)Z\n")));
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = std::stoi(m[6]);
  const auto expiry = timegm(&tm);
  CHECK(expiry >= before + 86400 - 5);
  CHECK(expiry <= std::time(nullptr) + 86400 + 5);
  // Every label line is a valid Kubernetes label.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    CHECK(std::regex_match(line, std::regex("specprobe\\.io/[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?=[0-9]+")));
  }
  const RunResult hours = run_specprobe(args + " --gpu GB10 --format nfd --nfd-expiry 90m", kExampleSeeds);
  CHECK(hours.out.rfind("# +expiry-time=", 0) == 0);
  CHECK(run_specprobe(args + " --gpu GB10 --format nfd --nfd-expiry 0", kExampleSeeds).out.find("expiry") ==
        std::string::npos);
  CHECK(run_specprobe(args + " --gpu GB10 --format nfd --nfd-expiry soon", kExampleSeeds).exit_code == 2);

  // A model name that gives no valid label is refused; one that has to change says so.
  const RunResult bad = run_specprobe(args + " --gpu GB10 --format nfd --model-name ___", kExampleSeeds);
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("'___'") != std::string::npos);
  const RunResult spaced = run_specprobe(args + " --gpu GB10 --format nfd --model-name 'GQA 16 / MTP!'", kExampleSeeds);
  CHECK(spaced.err.find("written as 'mtp'") != std::string::npos);
  CHECK(spaced.out.find("specprobe.io/mtp.max-k=") != std::string::npos);

  // --gpu auto labels this node's own GPU: on a node without a driver (CI) that is an error, never
  // labels for the fallback GPU.
  const RunResult gpu = run_specprobe("gpu --format json");
  if (gpu.exit_code != 0) {
    const RunResult none = run_specprobe(args + " --gpu auto --format nfd", kExampleSeeds);
    CHECK(none.exit_code == 3);
    CHECK(none.out.empty());
    CHECK((none.err.find("no GPU driver to query") != std::string::npos ||
           none.err.find("shows no usable GPU") != std::string::npos));
    CHECK(none.err.find("--gpu NAME") != std::string::npos);
  }
}

TEST_CASE("did you mean: flags, commands, ids and libraries", "[e2e][ci][cli]") {
  const RunResult flag = run_specprobe("check --gpus H100 -- vllm serve m");
  CHECK(flag.exit_code == 2);
  CHECK(flag.err.find("did you mean --gpu?") != std::string::npos);
  const RunResult cmd = run_specprobe("chek serve.yaml");
  CHECK(cmd.exit_code == 2);
  CHECK(cmd.err.find("did you mean check?") != std::string::npos);
  const RunResult sub = run_specprobe("rules lsit");
  CHECK(sub.exit_code == 2);
  CHECK(sub.err.find("did you mean list?") != std::string::npos);
  const RunResult id = run_specprobe("explain SP3100");
  CHECK(id.exit_code == 2);
  CHECK(id.err.find("SP1001") == std::string::npos);
  CHECK(id.err.find("did you mean SP30") != std::string::npos);
  const RunResult lib = run_specprobe("check --gpu H100 --lib vlm=0.25.1 -- vllm serve m");
  CHECK(lib.exit_code == 2);
  CHECK(lib.err.find("did you mean vllm?") != std::string::npos);
  CHECK(run_specprobe("matrix --gpu H100 --model m --lib flashinfr=0.5").err.find("did you mean flashinfer?") !=
        std::string::npos);
}

TEST_CASE("help: each command's own footer - exec's usage names the command", "[e2e][ci][cli]") {
  CHECK(run_specprobe("check --help").out.find("0 no finding at or above --fail-on") != std::string::npos);
  for (const char* cmd : {"gpu", "rules list", "explain", "facts", "advisories", "probe", "matrix"}) {
    const RunResult h = run_specprobe(std::string(cmd) + " --help");
    INFO(cmd);
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("Exit codes:") != std::string::npos);
    CHECK(h.out.find("at or above --fail-on") == std::string::npos);
  }
  CHECK(run_specprobe("matrix --help").out.find("1 not-supported on at least one") != std::string::npos);
  const RunResult exec = run_specprobe("exec --help");
  CHECK(exec.out.find("exec [OPTIONS] -- COMMAND [ARG...]") != std::string::npos);
  CHECK(exec.out.find("127 COMMAND not found") != std::string::npos);
}

TEST_CASE("an empty --rules-dir is an error, not a supported plan", "[e2e][ci][cli]") {
  const std::string empty = temp_dir();
  for (const std::string args :
       {"check --gpu H100 --rules-dir " + shell_quote(empty) + " -- vllm serve m",
        "rules list --rules-dir " + shell_quote(empty), "explain SP3001 --rules-dir " + shell_quote(empty),
        "matrix --gpu H100 --model m --rules-dir " + shell_quote(empty)}) {
    const RunResult r = run_specprobe(args);
    INFO(args << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no rules found in " + empty) != std::string::npos);
    CHECK(r.out.find("supported") == std::string::npos);
  }
}

TEST_CASE("probe: one line when every probe stops on the same thing", "[e2e][ci][cli]") {
  const RunResult r = run_specprobe("probe");
  if (r.err.find("cannot load libcuda") == std::string::npos && r.err.find("no CUDA") == std::string::npos) {
    WARN("a GPU or no probe kernels here: nothing to collapse (exit " << r.exit_code << ")");
    return;
  }
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("probes not run") != std::string::npos);
}

TEST_CASE("progress: silent in logs unless --progress - colour through styles, NO_COLOR honoured", "[e2e][ci][cli]") {
  const std::string args =
                        "check --gpu H100 --probes off --model " + shell_quote(kExampleCheckpoints + "/llama-3.1-8b"),
                    plan = " -- vllm serve m";
  CHECK(run_specprobe(args + plan).err.empty());
  const RunResult p = run_specprobe(args + " --progress" + plan);
  CHECK(p.exit_code == 0);
  CHECK(std::regex_search(p.err, std::regex("specprobe: \\[ *[0-9.]+ s\\] reading the serving plan\n")));
  CHECK(p.err.find("evaluating the rules") != std::string::npos);
  CHECK(p.err.find('\r') == std::string::npos);
  CHECK(p.err.find('\033') == std::string::npos);
  CHECK(run_specprobe(args + " --progress --quiet" + plan).err.empty());
  // Colour: on when asked for, off with NO_COLOR (run_specprobe sets it) and in files.
  CHECK(run_specprobe(args + " --color always" + plan).out.find("\033[") != std::string::npos);
  CHECK(run_specprobe(args + plan).out.find('\033') == std::string::npos);
  CHECK(run_specprobe(args + " --color never" + plan).out.find('\033') == std::string::npos);
}

TEST_CASE("cli: -V prints the version, help [COMMAND] is COMMAND --help, one message per mistyped word",
          "[e2e][ci][cli]") {
  // Issue 51 item 7.
  const RunResult v = run_specprobe("-V");
  CHECK(v.exit_code == 0);
  CHECK(v.out.rfind("specprobe ", 0) == 0);
  CHECK(v.out == run_specprobe("--version").out);
  const RunResult top = run_specprobe("help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("Subcommands:") != std::string::npos);
  const RunResult check = run_specprobe("help check");
  CHECK(check.exit_code == 0);
  CHECK(check.out == run_specprobe("check --help").out);
  CHECK(run_specprobe("help rules list").out == run_specprobe("rules list --help").out);
  // A mistyped command or option: one line, which names the fix, and no CLI11 message before it.
  const RunResult cmd = run_specprobe("chek serve.yaml");
  CHECK(cmd.exit_code == 2);
  CHECK(cmd.err == "specprobe: error: unknown command 'chek'; did you mean check? (see specprobe --help)\n");
  const RunResult opt = run_specprobe("check --gpuu H100 -- vllm serve m");
  CHECK(opt.exit_code == 2);
  CHECK(opt.err ==
        "specprobe check: error: unknown option '--gpuu'; did you mean --gpu? (see specprobe check --help)\n");
  // A mistake without a near word keeps CLI11's message.
  const RunResult none = run_specprobe("check --zzzzzzzz -- vllm serve m");
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--zzzzzzzz") != std::string::npos);
}
