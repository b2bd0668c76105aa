// Project settings (.specprobe.yaml from the repository root down) and inline suppressions:
// discovery, precedence, overrides, errors with file and line, and end to end through the binary.
#include "pipeline/project_settings.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../e2e/run_binary.hpp"

using namespace specprobe;
using namespace specprobe::test;
namespace fs = std::filesystem;

namespace {

// A repository: root/.git, root/.specprobe.yaml, root/deploy/.specprobe.yaml, configs below.
struct SettingsRepo {
  std::string root = temp_dir() + "/repo";
  SettingsRepo() {
    fs::create_directories(root + "/.git");
    fs::create_directories(root + "/deploy/gb10");
    fs::create_directories(root + "/models");
    fs::copy(kExampleCheckpoints + "/deepseek-v4-flash", root + "/models/dsv4");
    const std::string seed = file_text(kExampleSeeds + "/dsv4-mtp.yaml");
    write_file(root + "/deploy", "serve.yaml", seed);
    write_file(root + "/deploy/gb10", "serve.yaml", seed);
  }
};

}  // namespace

TEST_CASE("settings: discovered from the config's folder up to the repository root, nearer wins", "[settings]") {
  const SettingsRepo repo;
  write_file(repo.root, ".specprobe.yaml",
             "gpu: H100\nlib: {vllm: 0.25.1, torch: 2.9.0}\nmodels:\n  deepseek-ai/DeepSeek-V4-Flash: models/dsv4\n"
             "fail-on: risk\nignore:\n  - {id: SP30*, reason: tracked}\n"
             "overrides:\n  - files: [\"deploy/gb10/**\"]\n    gpu: GB10\n    unknown-ok: true\n");
  write_file(repo.root + "/deploy", ".specprobe.yaml",
             "lib: [\"vllm=0.29.0\"]\nignore:\n  - {id: SP3001, reason: near}\n");
  const auto files = settings_files_for(repo.root + "/deploy/serve.yaml");
  REQUIRE(files.size() == 2);
  CHECK(files[0] == repo.root + "/.specprobe.yaml");  // the root's first: the nearer file wins
  auto s = project_settings_for(repo.root + "/deploy/serve.yaml");
  REQUIRE(s);
  CHECK(s->gpu == std::optional<std::string>("H100"));
  CHECK(s->fail_on == std::optional<std::string>("risk"));
  CHECK_FALSE(s->unknown_ok);
  CHECK(s->libs == std::vector<std::string>{"torch=2.9.0", "vllm=0.29.0"});
  REQUIRE(s->model_dirs.size() == 1);
  CHECK(s->model_dirs[0] == "deepseek-ai/DeepSeek-V4-Flash=" + repo.root + "/models/dsv4");  // relative to the file
  REQUIRE(s->ignore.size() == 2);
  CHECK(s->ignore[1].source == repo.root + "/deploy/.specprobe.yaml:3");
  // The override applies to the configs its glob matches.
  auto gb10 = project_settings_for(repo.root + "/deploy/gb10/serve.yaml");
  REQUIRE(gb10);
  CHECK(gb10->gpu == std::optional<std::string>("GB10"));
  CHECK(gb10->unknown_ok == std::optional<bool>(true));
  // Outside a repository only the config's own folder counts.
  const std::string loose = temp_dir();
  fs::create_directories(loose + "/a");
  write_file(loose, ".specprobe.yaml", "gpu: B200\n");
  write_file(loose + "/a", "serve.yaml", "model: x\n");
  CHECK(settings_files_for(loose + "/a/serve.yaml").empty());
  CHECK(settings_files_for(loose + "/serve.yaml").size() == 1);
}

TEST_CASE("settings: every mistake names the file and the line", "[settings]") {
  const std::string d = temp_dir();
  const std::string p = d + "/.specprobe.yaml";
  struct Bad {
    const char* text;
    const char* says;
    int line;
  };
  const Bad bad[] = {
      {"gpu: H100\ncolour: red\n", "unknown key 'colour'", 2},
      {"fail-on: sometimes\n", "must be one of error, risk", 1},
      {"unknown-ok: maybe\n", "true or false", 1},
      {"lib: [vllm]\n", "NAME: VERSION", 1},
      {"models: [a, b]\n", "must map a model id", 1},
      {"gpu: [H100]\n", "`gpu:` must be", 1},
      {"overrides:\n  - gpu: GB10\n", "needs `files:`", 2},
      {"overrides:\n  - files: a/*\n    overrides: []\n", "unknown key 'overrides'", 3},
      {"ignore:\n  - id: SP3001\n", "needs a `reason`", 2},
  };
  for (const auto& b : bad) {
    write_file(d, ".specprobe.yaml", b.text);
    auto e = read_settings_file(p);
    INFO(b.text);
    REQUIRE_FALSE(e);
    CHECK(e.error().kind == ErrorKind::input);
    CHECK(e.error().message.find(b.says) != std::string::npos);
    CHECK(e.error().where.file == p);
    CHECK(e.error().where.line == b.line);
  }
}

TEST_CASE("settings: globs - * within a folder, ** across folders", "[settings]") {
  CHECK(glob_matches("deploy/*.yaml", "deploy/serve.yaml"));
  CHECK_FALSE(glob_matches("deploy/*.yaml", "deploy/gb10/serve.yaml"));
  CHECK(glob_matches("deploy/**", "deploy/gb10/serve.yaml"));
  CHECK(glob_matches("**/serve.yaml", "serve.yaml"));
  CHECK(glob_matches("**/serve.yaml", "a/b/serve.yaml"));
  CHECK(glob_matches("./deploy/serve-?.yaml", "deploy/serve-a.yaml"));
  CHECK_FALSE(glob_matches("deploy/serve-?.yaml", "deploy/serve-ab.yaml"));
}

TEST_CASE("inline suppressions: the line they are on, the next line, or the file - a reason is required",
          "[settings]") {
  const std::string text =
      "model: m  # specprobe: ignore SP1001 -- trailing\n"
      "# specprobe: ignore SP3020, spa-vllm-* -- own line\n"
      "\n"
      "kv-cache-dtype: fp8\n"
      "# specprobe: ignore-file SP3010 -- whole file\n"
      "# a comment that mentions specprobe: nothing to ignore\n"
      "block-size: 16\n";
  auto found = inline_suppressions("serve.yaml", text);
  REQUIRE(found);
  REQUIRE(found->size() == 4);
  CHECK((*found)[0].entry.id == "SP1001");
  CHECK((*found)[0].line == 1);
  CHECK((*found)[1].entry.id == "SP3020");
  CHECK((*found)[1].line == 4);  // the next line with content
  CHECK((*found)[2].entry.id == "SPA-VLLM-*");
  CHECK((*found)[2].entry.reason == "own line");
  CHECK((*found)[3].line == 0);
  CHECK((*found)[3].entry.source == "serve.yaml:5");

  // A shell command continued with backslashes: the comment above covers all its lines.
  auto sh = inline_suppressions("start.sh",
                                "#!/bin/sh\n# specprobe: ignore SP3019 -- tested\nvllm serve m \\\n"
                                "  --kv-cache-dtype fp8 \\\n  --port 8000\necho done\n");
  REQUIRE(sh);
  REQUIRE(sh->size() == 1);
  CHECK((*sh)[0].line == 3);
  CHECK((*sh)[0].end_line == 5);

  auto no_reason = inline_suppressions("serve.yaml", "a: 1\nb: 2  # specprobe: ignore SP3020\n");
  REQUIRE_FALSE(no_reason);
  CHECK(no_reason.error().where.line == 2);
  CHECK(no_reason.error().message.find("needs a reason") != std::string::npos);
  CHECK_FALSE(inline_suppressions("serve.yaml", "a: 1\n# specprobe: ignore SP3020 -- last line\n"));
  CHECK_FALSE(inline_suppressions("serve.yaml", "a: 1 # specprobe: ignore -- no id\n"));
}

TEST_CASE("settings e2e: a repository's .specprobe.yaml makes `check deploy/...` need no flags", "[settings][e2e]") {
  const SettingsRepo repo;
  write_file(repo.root, ".specprobe.yaml",
             "gpu: H100\nlib: {vllm: 0.25.1, deep_gemm: 2.1.0}\nmodels:\n  deepseek-ai/DeepSeek-V4-Flash: models/dsv4\n"
             "overrides:\n  - files: [\"deploy/gb10/**\"]\n    gpu: GB10\n");
  const std::string files = "deploy/serve.yaml deploy/gb10/serve.yaml --no-resolve --no-matrix --format json";
  const auto with = run_specprobe("check " + files, repo.root);
  const auto j = nlohmann::json::parse(with.out);
  REQUIRE(j["reports"].size() == 2);
  CHECK(j["reports"][0]["verdict"] == "supported");  // GPU, versions and model from the settings
  for (const auto& r : j["reports"]) {
    bool noted = false;
    for (const auto& n : r["notes"]) noted = noted || n.dump().find("project settings: --gpu") != std::string::npos;
    CHECK(noted);
  }
  CHECK(j["reports"][0]["facts"]["gpu"]["name"].get<std::string>().find("H100") != std::string::npos);
  CHECK(j["reports"][1]["facts"]["gpu"]["name"].get<std::string>().find("GB10") != std::string::npos);
  // Without the settings the same call cannot decide (no GPU, no model, no versions).
  const auto without = run_specprobe("check " + files + " --no-suppressions", repo.root);
  CHECK(without.exit_code == 4);
  // The command line wins.
  const auto flag = nlohmann::json::parse(run_specprobe("check " + files + " --gpu B200", repo.root).out);
  CHECK(flag["reports"][1]["facts"]["gpu"]["name"].get<std::string>().find("B200") != std::string::npos);
  // A mistake in the file is an input error naming it.
  write_file(repo.root, ".specprobe.yaml", "gpu: H100\nfail-on: sometimes\n");
  const auto bad = run_specprobe("check " + files, repo.root);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(".specprobe.yaml:2:") != std::string::npos);
}

TEST_CASE("inline suppressions e2e: a comment in the config suppresses the finding on the next line",
          "[settings][e2e]") {
  const std::string d = temp_dir();
  write_file(d, "serve.yaml",
             "model: meta-llama/Llama-3.1-8B-Instruct\n"
             "# specprobe: ignore SP3020 -- our launcher forces PIECEWISE graphs\n"
             "kv-cache-dtype: turboquant_k8v4\n"
             "speculative-config: {\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}\n");
  const auto r = run_specprobe("check serve.yaml --gpu RTX5090 --no-resolve --no-matrix --format json", d);
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& res : j["results"])
    if (res["id"] == "SP3020") {
      found = true;
      REQUIRE(res["suppressed"].is_object());
      CHECK(res["suppressed"]["source"] == "serve.yaml:2");
      CHECK(res["suppressed"]["reason"] == "our launcher forces PIECEWISE graphs");
    }
  CHECK(found);
  write_file(d, "bad.yaml", "model: m\nkv-cache-dtype: fp8  # specprobe: ignore SP3020\n");
  const auto bad = run_specprobe("check bad.yaml --gpu RTX5090 --no-resolve", d);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad.yaml:2:") != std::string::npos);
}
