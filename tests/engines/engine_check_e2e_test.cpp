// The engine check end to end with the real engines: `specprobe check --python <venv>/bin/python`
// against the pinned vLLM and SGLang releases that tests/engines/setup_engines.sh installs into
// BUILD_DIR/engines/<name>/ (vllm-0.33.0, vllm-0.15.1, sglang-0.5.23). No GPU: the GPU is declared
// (--gpu H100). Each case is one plan the engine refuses at config, argparse or backend-selection
// time with its own words (the same plans and messages as tests/engines/test_engine_adapters.py),
// and the same plan accepted by a release where it works; missing inputs end as verdict unknown
// (exit 4); a repeated check comes from the cache. Hidden tag [.engines]: ctest runs them under the
// label "engines" (tests/CMakeLists.txt); without the venvs each case is skipped with a WARN.
// Checkpoint metadata: tests/data/checkpoint/ (copies of shared/fixtures/checkpoints, SOURCE.txt there).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include <memory>

#include "../e2e/run_binary.hpp"
#include "checkpoint/fixture_writer.hpp"
#include "common/json.hpp"
#include "support/hub_standin.hpp"

using namespace specprobe;
using namespace specprobe::test;
namespace fs = std::filesystem;

namespace {

const std::string kEngineData = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint";
const std::string kEngineLlama = kEngineData + "/llama-3.1-8b";
const std::string kDraft = kEngineData + "/eagle3-llama3.1-8b-draft";

std::string venv_python(const std::string& name) {
  return (fs::path(SPECPROBE_BINARY).parent_path() / "engines" / name / "bin" / "python").string();
}

bool have(const std::string& name) {
  if (fs::exists(venv_python(name))) return true;
  WARN(name << " is not installed under " << fs::path(SPECPROBE_BINARY).parent_path() / "engines"
            << " (tests/engines/setup_engines.sh BUILD_DIR): skipped");
  return false;
}

struct EngineRun {
  int exit_code = -1;
  Json report;
  std::string err;
  const Json* result(const std::string& id) const {
    if (!report.contains("results") || !report["results"].is_array()) return nullptr;
    for (const auto& r : report["results"])  // a reference into the report, not a copy
      if (r.value("id", "") == id) return &r;
    return nullptr;
  }
  std::string sp4100_status() const {
    const Json* r = result("SP4100");
    return r ? r->value("status", "") : "absent";
  }
  std::string message() const {
    const Json* r = result("SP4100");
    return r ? r->value("message", "") : "";
  }
  Json fact(const std::string& dotted) const {
    if (!report.contains("facts")) return Json();
    const Json* f = find_fact(report["facts"], dotted);
    return f ? *f : Json();
  }
};

// specprobe check ARGS --format json (engine timeout 400 s, no probes) -- COMMAND with XDG_CACHE_HOME
// set to CACHE_DIR; the report parsed.
EngineRun run_check_json(const std::string& cache_dir, const std::string& args, const std::string& command) {
  setenv("XDG_CACHE_HOME", cache_dir.c_str(), 1);
  RunResult rr = run_specprobe("check " + args +
                               " --format json --stack-probes off --probes off --engine-timeout 400 -- " + command);
  unsetenv("XDG_CACHE_HOME");
  EngineRun r;
  r.exit_code = rr.exit_code;
  r.err = rr.err;
  r.report = Json::parse(rr.out, nullptr, false);
  INFO("stderr: " << rr.err.substr(0, 2000));
  REQUIRE(r.report.is_object());
  return r;
}

// specprobe check --python VENV --gpu H100 --format json [OPTIONS] -- COMMAND, with its own cache dir.
EngineRun run_engine_check(const std::string& venv, const std::string& options, const std::string& command,
                           const std::string& cache = "") {
  return run_check_json(cache.empty() ? temp_dir() : cache,
                        "--python " + shell_quote(venv_python(venv)) +
                            (options.find("--gpu ") == std::string::npos ? " --gpu H100 " : " ") + options,
                        command);
}

std::string llama_eagle3(const std::string& spec_extra = "", const std::string& extra = "") {
  const std::string spec =
      R"({"method": "eagle3", "model": ")" + kDraft + R"(", "num_speculative_tokens": 3)" + spec_extra + "}";
  return "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1 --speculative-config " +
         shell_quote(spec) + " " + extra;
}

std::string model() { return "--model " + shell_quote(kEngineLlama); }

}  // namespace

TEST_CASE("vLLM 0.33.0 refuses an unknown speculative-config key - 0.15.1 accepts the same plan", "[.engines][vllm]") {
  const std::string cmd = llama_eagle3(R"(, "num_speculative_tokenz": 2)");
  if (have("vllm-0.33.0")) {
    EngineRun r = run_engine_check("vllm-0.33.0", model() + " --no-matrix", cmd);
    INFO(r.message());
    CHECK(r.sp4100_status() == "fail");
    CHECK(r.message().find("vLLM 0.33.0") != std::string::npos);
    CHECK(r.message().find("at config") != std::string::npos);
    CHECK(r.message().find("num_speculative_tokenz") != std::string::npos);
    CHECK(r.message().find("Unexpected keyword argument") != std::string::npos);
    CHECK(r.fact("engine_check.status") == "refused");
    CHECK(r.exit_code == 1);
  }
  if (have("vllm-0.15.1")) {
    EngineRun r = run_engine_check("vllm-0.15.1", model() + " --no-matrix", cmd);
    INFO(r.message() << " " << r.fact("engine_check.reason").dump());
    CHECK(r.sp4100_status() == "pass");
    CHECK(r.fact("engine_check.status") == "ok");
    CHECK(r.fact("engine_check.version") == "0.15.1");
    CHECK(r.fact("engine_check.facts.method") == "eagle3");
  }
}

TEST_CASE("vLLM 0.33.0 refuses an invalid KV-cache dtype with the valid list", "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  EngineRun r = run_engine_check("vllm-0.33.0", model() + " --no-matrix", llama_eagle3("", "--kv-cache-dtype int8"));
  INFO(r.message());
  CHECK(r.sp4100_status() == "fail");
  CHECK(r.message().find("Invalid kv_cache_dtype: 'int8'") != std::string::npos);
  CHECK(r.message().find("Valid values are") != std::string::npos);
  CHECK(r.exit_code == 1);
}

TEST_CASE("vLLM refuses mtp on a model without MTP layers - the repeat comes from the cache", "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  const std::string cache = temp_dir();
  const std::string cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config " +
                          shell_quote(R"({"method": "mtp", "num_speculative_tokens": 1})");
  EngineRun r = run_engine_check("vllm-0.33.0", model() + " --no-matrix", cmd, cache);
  INFO(r.message());
  CHECK(r.sp4100_status() == "fail");
  CHECK(r.message().find("Unsupported speculative method: 'mtp'") != std::string::npos);
  CHECK(r.fact("engine_check.cached") == false);
  EngineRun again = run_engine_check("vllm-0.33.0", model() + " --no-matrix", cmd, cache);
  CHECK(again.fact("engine_check.cached") == true);
  CHECK(again.message() == r.message());
  CHECK(again.exit_code == 1);
  // --no-cache asks the engine again.
  EngineRun fresh = run_engine_check("vllm-0.33.0", model() + " --no-matrix --no-cache", cmd, cache);
  CHECK(fresh.fact("engine_check.cached") == false);
  CHECK(fresh.message() == r.message());
}

TEST_CASE("vLLM 0.15.1's parser refuses an unknown flag, in its own words", "[.engines][vllm]") {
  if (!have("vllm-0.15.1")) return;
  EngineRun r = run_engine_check("vllm-0.15.1", model() + " --no-matrix", llama_eagle3("", "--speculative-tokens 3"));
  INFO(r.message());
  CHECK(r.sp4100_status() == "fail");
  CHECK(r.message().find("at argparse") != std::string::npos);
  CHECK(r.message().find("unrecognized arguments: --speculative-tokens 3") != std::string::npos);
}

TEST_CASE(
    "vLLM 0.33.0's backend selection refuses FLASH_ATTN with fp8 KV and block size 8 (matrix evidence) - 0.15.1 takes "
    "it",
    "[.engines][vllm]") {
  const std::string cmd = llama_eagle3("", "--attention-backend FLASH_ATTN --kv-cache-dtype fp8 --block-size 8");
  if (have("vllm-0.33.0")) {
    EngineRun r = run_engine_check("vllm-0.33.0", model(), cmd);
    INFO(r.message());
    CHECK(r.sp4100_status() == "fail");
    CHECK(r.message().find("at backend-selection") != std::string::npos);
    CHECK(r.message().find("FLASH_ATTN is not valid") != std::string::npos);
    CHECK(r.message().find("block_size not supported") != std::string::npos);
    // The matrix's cells were asked in the same engine run: FLASH_ATTN + fp8 cells carry the
    // engine's words as their evidence.
    const Json cells = r.report["matrix"]["cells"];
    int refused = 0;
    for (const auto& c : cells)
      if (c.contains("evidence")) {
        ++refused;
        CHECK(c["verdict"] == "fails");
        CHECK(c["evidence"][0].get<std::string>().find("block_size not supported") != std::string::npos);
      }
    CHECK(refused > 0);
    CHECK(r.fact("engine_check.cells").size() > 1);
  }
  if (have("vllm-0.15.1")) {
    EngineRun r = run_engine_check("vllm-0.15.1", model() + " --no-matrix", cmd);
    INFO(r.message() << " " << r.fact("engine_check.reason").dump());
    CHECK(r.sp4100_status() == "pass");
    CHECK(r.fact("engine_check.facts.attention_backend") == "FLASH_ATTN");
  }
}

TEST_CASE("a draft model given as a Hub id is a missing input: verdict unknown, exit 4, naming it",
          "[.engines][vllm]") {
  if (!have("vllm-0.15.1")) return;
  const std::string cmd =
      "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config " +
      shell_quote(
          R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})");
  EngineRun r = run_engine_check("vllm-0.15.1", model() + " --no-matrix", cmd);
  CHECK(r.fact("engine_check.outcome") == "missing-input");
  CHECK(r.sp4100_status() == "error");
  CHECK(r.report["verdict"] == "unknown");
  CHECK(r.exit_code == 4);
  bool named = false;
  for (const auto& m : r.report["missing"])
    named |= m.dump().find("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B") != std::string::npos;
  CHECK(named);
}

namespace {
std::string sglang_cmd(const std::string& extra, int draft_tokens = 4) {
  return "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 8 "
         "--speculative-draft-model-path " +
         shell_quote(kDraft) + " --speculative-num-steps 3 --speculative-num-draft-tokens " +
         std::to_string(draft_tokens) + " " + extra;
}
}  // namespace

TEST_CASE("SGLang 0.5.23's ServerArgs refuse three plans in their own words", "[.engines][sglang]") {
  if (!have("sglang-0.5.23")) return;
  SECTION("a misspelt speculative algorithm") {
    EngineRun r = run_engine_check("sglang-0.5.23", model() + " --no-matrix",
                                   sglang_cmd("--speculative-algorithm EAGEL3 --speculative-eagle-topk 1"));
    INFO(r.message());
    CHECK(r.sp4100_status() == "fail");
    CHECK(r.message().find("SGLang 0.5.23") != std::string::npos);
    CHECK(r.message().find("Unknown speculative algorithm name: EAGEL3") != std::string::npos);
  }
  SECTION("trtllm_mha with topk 4") {
    EngineRun r = run_engine_check(
        "sglang-0.5.23", model() + " --no-matrix",
        sglang_cmd("--speculative-algorithm EAGLE3 --attention-backend trtllm_mha --speculative-eagle-topk 4", 8));
    INFO(r.message());
    CHECK(r.sp4100_status() == "fail");
    CHECK(r.message().find("trtllm_mha backend only supports topk = 1 for speculative decoding") != std::string::npos);
  }
  SECTION("DP attention with dp 3 on tp 8") {
    EngineRun r = run_engine_check(
        "sglang-0.5.23", model() + " --no-matrix",
        sglang_cmd("--speculative-algorithm EAGLE3 --speculative-eagle-topk 1 --enable-dp-attention --dp 3"));
    INFO(r.message());
    CHECK(r.sp4100_status() == "fail");
    CHECK(r.fact("engine_check.exception") == "AssertionError");
    CHECK(r.fact("engine_check.stage") == "config");
  }
  SECTION("the same plan with topk 1 and dp 2 passes") {
    EngineRun r = run_engine_check(
        "sglang-0.5.23", model() + " --no-matrix",
        sglang_cmd("--speculative-algorithm EAGLE3 --speculative-eagle-topk 1 --enable-dp-attention --dp 2"));
    INFO(r.fact("engine_check.reason").dump() << r.fact("engine_check.message").dump());
    CHECK(r.sp4100_status() == "pass");
    CHECK(r.fact("engine_check.status") == "ok");
  }
}

namespace {

// The plan's models named by Hub id, served by the Hub stand-in (tests/support/hub_standin.py):
// specprobe resolves them (src/resolve/) and hands the engine the snapshots as model_dirs.
struct HubEngineRun {
  specprobe::test::TempDir root{"enginehub"};
  std::unique_ptr<specprobe::testing::HubStandin> server;
  HubEngineRun() {
    specprobe::testing::write_standin_repo(root.path, "meta-llama/Llama-3.1-8B-Instruct", kEngineLlama);
    specprobe::testing::write_standin_repo(root.path, "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", kDraft);
    server = std::make_unique<specprobe::testing::HubStandin>(root.path);
  }
  EngineRun run(const std::string& venv, const std::string& command) const {
    const std::string home = temp_dir();
    RunResult rr = run_specprobe_env(
        {"HOME=" + home, "XDG_CACHE_HOME=" + home + "/cache", "HF_ENDPOINT=" + server->endpoint(), "-HF_HUB_OFFLINE"},
        "check --python " + shell_quote(venv_python(venv)) +
            " --gpu H100 --format json --stack-probes off --probes off --no-matrix "
            "--engine-timeout 400 -- " +
            command);
    EngineRun r;
    r.exit_code = rr.exit_code;
    r.err = rr.err;
    r.report = Json::parse(rr.out, nullptr, false);
    INFO("stderr: " << rr.err.substr(0, 2000));
    REQUIRE(r.report.is_object());
    return r;
  }
};

const std::string kEagle3ById =
    " --speculative-config " +
    shell_quote(R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})");

}  // namespace

TEST_CASE("vLLM checks a plan whose target and draft are named by Hub id, resolved through the Hub",
          "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  HubEngineRun hub;
  REQUIRE(hub.server->running());
  EngineRun ok = hub.run("vllm-0.33.0", "vllm serve meta-llama/Llama-3.1-8B-Instruct" + kEagle3ById);
  INFO(ok.fact("engine_check").dump());
  CHECK(ok.fact("resolve.model.origin") == "hub");
  CHECK(ok.fact("resolve.draft.origin") == "hub");
  CHECK(ok.fact("engine_check.status") == "ok");
  CHECK(ok.sp4100_status() == "pass");
  // And a plan the engine refuses, in its own words, with the same models by id.
  EngineRun no =
      hub.run("vllm-0.33.0", "vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp9" + kEagle3ById);
  INFO(no.message());
  CHECK(no.sp4100_status() == "fail");
  CHECK(no.fact("engine_check.outcome") != "missing-input");
}

TEST_CASE("SGLang checks a plan whose target and draft are named by Hub id, resolved through the Hub",
          "[.engines][sglang]") {
  if (!have("sglang-0.5.23")) return;
  HubEngineRun hub;
  REQUIRE(hub.server->running());
  const std::string cmd =
      "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 8 --speculative-algorithm "
      "EAGLE3 --speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.1-Instruct-8B --speculative-num-steps 3 "
      "--speculative-num-draft-tokens 4 ";
  EngineRun ok = hub.run("sglang-0.5.23", cmd + "--speculative-eagle-topk 1");
  INFO(ok.fact("engine_check").dump());
  CHECK(ok.fact("resolve.draft.origin") == "hub");
  CHECK(ok.fact("engine_check.status") == "ok");
  EngineRun no = hub.run("sglang-0.5.23", cmd + "--speculative-eagle-topk 4 --attention-backend trtllm_mha");
  INFO(no.message());
  CHECK(no.sp4100_status() == "fail");
  CHECK(no.message().find("trtllm_mha backend only supports topk = 1") != std::string::npos);
}

TEST_CASE(
    "vLLM at the deploy's release: --engine-env asks that environment - another release is said plainly and not asked",
    "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  const std::string venv = fs::path(venv_python("vllm-0.33.0")).parent_path().parent_path().string();
  const std::string cmd = llama_eagle3(R"(, "num_speculative_tokenz": 2)");
  const std::string cache = temp_dir();
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  // The environment of the deploy's release (a venv given by path; `engines install` makes them).
  RunResult env_run =
      run_specprobe("check --engine-env " + shell_quote(venv) + " --lib vllm=0.33.0 --gpu H100 --format json " +
                    "--stack-probes off --probes off --engine-timeout 400 --no-matrix " + model() + " -- " + cmd);
  // The deploy runs 0.29.0, the interpreter has 0.33.0: not asked, said plainly.
  RunResult mismatch = run_specprobe("check --python " + shell_quote(venv_python("vllm-0.33.0")) +
                                     " --lib vllm=0.29.0 --gpu H100 --format json --stack-probes off --probes off "
                                     "--no-matrix " +
                                     model() + " -- " + cmd);
  unsetenv("XDG_CACHE_HOME");
  const Json e = Json::parse(env_run.out, nullptr, false);
  REQUIRE(e.is_object());
  const Json* ec = find_fact(e["facts"], "engine_check");
  REQUIRE(ec);
  CHECK(ec->value("status", Json()) == "refused");
  CHECK(ec->value("version", Json()) == "0.33.0");
  CHECK(env_run.exit_code == 1);
  const Json m = Json::parse(mismatch.out, nullptr, false);
  REQUIRE(m.is_object());
  CHECK(m["facts"]["engine_check"]["outcome"] == "version-mismatch");
  CHECK(m["notes"].dump().find("has vLLM 0.33.0; the deploy runs 0.29.0") != std::string::npos);
  CHECK(m["verdict"] != "unknown");
}

// An AMD GPU: the adapter declares the engine's own ROCm platform (vLLM's RocmPlatform, SGLang's
// get_platform().is_hip) for the gfx target, with the CUDA-only kernel packages hidden as on a ROCm
// install; the engine's ROCm selector's choice becomes the plan's backend (there is no emulation of
// it), and the advisories that depend on the ROCm default backend read it.
TEST_CASE("vLLM 0.33.0 on a declared MI300X: its ROCm selector picks the backend, and refuses FlashInfer",
          "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  EngineRun r = run_engine_check("vllm-0.33.0", model() + " --gpu MI300X", llama_eagle3());
  INFO(r.fact("engine_check.reason").dump() << r.message());
  CHECK(r.fact("engine_check.status") == "ok");
  CHECK(r.fact("engine_check.platform.vendor") == "amd");
  CHECK(r.fact("engine_check.platform.arch") == "gfx942");
  CHECK(r.fact("engine_check.platform.cc") == Json({9, 4}));
  CHECK(r.fact("engine_check.facts.attention_backend") == "ROCM_ATTN");
  CHECK(r.fact("attention.selected") == "ROCM_ATTN");
  CHECK(r.fact("attention.selected_by") == "engine");
  // EAGLE on ROCm's Triton backend (vllm#27619): not the backend this engine chose.
  const Json* triton_eagle = r.result("SPA-VLLM-27619");
  REQUIRE(triton_eagle != nullptr);
  CHECK(triton_eagle->value("status", "") == "pass");
  // Every cell of the one backend row was asked, both KV dtypes.
  CHECK(r.fact("engine_check.cells").size() >= 16);
  CHECK(r.fact("engine_check.cells.k2---fp8.status") == "ok");

  EngineRun fi = run_engine_check("vllm-0.33.0", model() + " --gpu MI300X --no-matrix",
                                  llama_eagle3("", "--attention-backend FLASHINFER"));
  INFO(fi.message());
  CHECK(fi.sp4100_status() == "fail");
  CHECK(fi.message().find("FLASHINFER is not valid") != std::string::npos);
  CHECK(fi.message().find("ImportError") != std::string::npos);

  // The deploy turns AITER on and this environment has no aiter: the engine's choice is for another
  // install, so the backend stays unknown (the setting did reach the engine).
  EngineRun aiter = run_engine_check("vllm-0.33.0", model() + " --gpu MI300X --no-matrix",
                                     "env VLLM_ROCM_USE_AITER=1 " + llama_eagle3());
  CHECK(aiter.fact("engine_check.platform.deploy_env.VLLM_ROCM_USE_AITER") == "1");
  CHECK(aiter.fact("engine_check.platform.aiter") == false);
  CHECK(aiter.fact("attention.selected").is_null());
  CHECK(aiter.fact("attention.selected_by") == "unknown");
}

TEST_CASE("SGLang 0.5.23 on a declared MI300X resolves its ROCm defaults", "[.engines][sglang]") {
  if (!have("sglang-0.5.23")) return;
  EngineRun r = run_engine_check("sglang-0.5.23", model() + " --gpu MI300X --no-matrix",
                                 sglang_cmd("--speculative-algorithm EAGLE3 --speculative-eagle-topk 1"));
  INFO(r.fact("engine_check.reason").dump() << r.message());
  CHECK(r.fact("engine_check.status") == "ok");
  CHECK(r.fact("engine_check.platform.vendor") == "amd");
  CHECK(r.fact("engine_check.platform.cc") == Json({9, 4}));
  // SGLang's own ROCm default (arg_groups: get_platform().is_hip), not its CUDA one (fa3).
  CHECK(r.fact("engine_check.facts.attention_backend") == "aiter");
}

namespace {

// specprobe check --engine-env auto with specprobe's engine environments in XDG_CACHE_HOME pointing
// at BUILD_DIR/engines (tests/engines/setup_engines.sh stamps each venv as an engine environment).
EngineRun run_engine_env_auto(const std::string& options, const std::string& command) {
  const std::string cache = temp_dir();
  const fs::path envs = fs::path(cache) / "specprobe" / "engines";
  fs::create_directories(envs);
  const fs::path built = fs::path(SPECPROBE_BINARY).parent_path() / "engines";
  for (const auto& e : fs::directory_iterator(built))
    if (fs::exists(e.path() / ".specprobe-engine.json"))
      fs::create_directory_symlink(e.path(), envs / e.path().filename());
  return run_check_json(cache, "--engine-env auto --gpu H100 --no-matrix " + options, command);
}

bool stamped(const std::string& name) {
  if (fs::exists(fs::path(venv_python(name)).parent_path().parent_path() / ".specprobe-engine.json")) return true;
  WARN(name << " is missing or has no engine-environment stamp (tests/engines/setup_engines.sh BUILD_DIR): skipped");
  return false;
}

}  // namespace

TEST_CASE("--engine-env auto asks the vLLM release the deploy names: 0.25.1's parser, 0.33.0's config",
          "[.engines][vllm]") {
  if (!stamped("vllm-0.25.1") || !stamped("vllm-0.33.0")) return;
  const std::string cmd = llama_eagle3("", "--kv-cache-dtype int8");
  EngineRun mid = run_engine_env_auto(model() + " --lib vllm=0.25.1", cmd);
  INFO(mid.message());
  CHECK(mid.fact("engine_check.environment").get<std::string>().find("/vllm-0.25.1/") != std::string::npos);
  CHECK(mid.fact("engine_check.version") == "0.25.1");
  CHECK(mid.sp4100_status() == "fail");
  CHECK(mid.fact("engine_check.stage") == "argparse");
  CHECK(mid.message().find("invalid choice: 'int8'") != std::string::npos);

  EngineRun newest = run_engine_env_auto(model() + " --lib vllm=0.33.0", cmd);
  CHECK(newest.fact("engine_check.version") == "0.33.0");
  CHECK(newest.fact("engine_check.stage") == "config");
  CHECK(newest.message().find("Invalid kv_cache_dtype: 'int8'") != std::string::npos);

  // No release named: the newest environment, said so.
  EngineRun unnamed = run_engine_env_auto(model(), llama_eagle3());
  CHECK(unnamed.fact("engine_check.version") == "0.33.0");
  CHECK(unnamed.fact("engine_check.environment_picked") == "newest");
  CHECK(unnamed.fact("engine_check.status") == "ok");
}

TEST_CASE("--engine-env auto asks SGLang 0.5.17, which refuses trtllm_mha on an H100 that 0.5.23 takes",
          "[.engines][sglang]") {
  if (!stamped("sglang-0.5.17") || !stamped("sglang-0.5.23")) return;
  const std::string cmd =
      sglang_cmd("--speculative-algorithm EAGLE3 --speculative-eagle-topk 1 --attention-backend trtllm_mha");
  EngineRun old = run_engine_env_auto(model() + " --lib sglang=0.5.17", cmd);
  INFO(old.message());
  CHECK(old.fact("engine_check.version") == "0.5.17");
  CHECK(old.sp4100_status() == "fail");
  CHECK(old.message().find("TRTLLM MHA backend for prefill is only supported on Blackwell GPUs") != std::string::npos);
  EngineRun now = run_engine_env_auto(model() + " --lib sglang=0.5.23", cmd);
  INFO(now.fact("engine_check.message").dump());
  CHECK(now.fact("engine_check.version") == "0.5.23");
  CHECK(now.fact("engine_check.status") == "ok");
}

// The model built as the engine builds it (stage model-construction, vLLM): Qwen3-30B-A3B-FP8 at TP 4
// splits its 768-wide experts into 192 per rank against 128-wide FP8 blocks. vLLM 0.25.1 raises while
// building the MoE layer, and so does every matrix cell of the n-gram plan (each cell is built once
// the plan's build is refused); 0.33.0 builds it. The GPU count is the plan's (a declared GPU says which, not how
// many).
TEST_CASE("vLLM 0.25.1 refuses a block-FP8 MoE split at TP 4 while building the model - 0.33.0 builds it",
          "[.engines][vllm]") {
  if (!stamped("vllm-0.25.1") || !stamped("vllm-0.33.0")) return;
  const std::string qwen = std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/Qwen--Qwen3-30B-A3B-FP8";
  const std::string cmd =
      "vllm serve Qwen/Qwen3-30B-A3B-FP8 --tensor-parallel-size 4 --speculative-config "
      "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'";
  const std::string cache = temp_dir();
  const fs::path envs = fs::path(cache) / "specprobe" / "engines";
  fs::create_directories(envs);
  for (const char* name : {"vllm-0.25.1", "vllm-0.33.0"})
    fs::create_directory_symlink(fs::path(SPECPROBE_BINARY).parent_path() / "engines" / name, envs / name);
  EngineRun old =
      run_check_json(cache, "--engine-env auto --gpu H100 --lib vllm=0.25.1 --model " + shell_quote(qwen), cmd);
  INFO(old.message());
  CHECK(old.sp4100_status() == "fail");
  CHECK(old.fact("engine_check.stage") == "model-construction");
  CHECK(old.message().find("weight = 192 is not divisible by weight quantization block_n = 128") != std::string::npos);
  CHECK(old.fact("engine_check.platform.count") == 4);
  int asked = 0;
  for (const auto& c : old.report["matrix"]["cells"])
    if (c.contains("evidence") && c["evidence"].dump().find("block_n = 128") != std::string::npos) {
      ++asked;
      CHECK(c["verdict"] == "fails");
    }
  CHECK(asked > 1);

  EngineRun now = run_check_json(
      cache, "--engine-env auto --gpu H100 --no-matrix --lib vllm=0.33.0 --model " + shell_quote(qwen), cmd);
  INFO(now.fact("engine_check.message").dump());
  CHECK(now.fact("engine_check.status") == "ok");
  CHECK(now.fact("engine_check.facts.model_construction.moe_layers") == Json({{"Fp8MoEMethod", 48}}));
}

// SGLang builds the model too (stage model-construction, 0.5.23): the same Qwen3-30B-A3B-FP8 split at
// TP 4 is refused by SGLang's FP8 MoE method while the layer is built, in its own words; at TP 2 the
// model is built and the engine check says how much of it this rank holds.
TEST_CASE("SGLang 0.5.23 refuses a block-FP8 MoE split at TP 4 while building the model - TP 2 builds it",
          "[.engines][sglang]") {
  if (!have("sglang-0.5.23")) return;
  const std::string qwen = std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/Qwen--Qwen3-30B-A3B-FP8";
  const std::string cmd = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-FP8 --tp ";
  EngineRun tp4 = run_engine_check("sglang-0.5.23", "--no-matrix --model " + shell_quote(qwen), cmd + "4");
  INFO(tp4.message());
  CHECK(tp4.sp4100_status() == "fail");
  CHECK(tp4.fact("engine_check.stage") == "model-construction");
  CHECK(tp4.message().find("SGLang 0.5.23") != std::string::npos);
  CHECK(tp4.message().find("weight = 192 is not divisible by weight quantization block_n = 128") != std::string::npos);
  CHECK(tp4.exit_code == 1);
  EngineRun tp2 = run_engine_check("sglang-0.5.23", "--no-matrix --model " + shell_quote(qwen), cmd + "2");
  INFO(tp2.report.value("notes", Json()).dump());
  CHECK(tp2.sp4100_status() == "pass");
  CHECK(tp2.fact("engine_check.facts.model_construction.moe_layers") == Json({{"Fp8MoEMethod", 48}}));
  // The engine check's note says how far the model was built.
  CHECK(tp2.report.value("notes", Json()).dump().find("the model built layer by layer as rank 0") != std::string::npos);
}

// The parsers' token checks need the model's tokenizer files, which the model's metadata here does
// not have: vLLM is asked about the rest of the plan and the note says what was not asked.
TEST_CASE("vLLM without the tokenizer files: the parsers' checks are not asked, the rest of the plan is",
          "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  const std::string minimax = std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/MiniMaxAI--MiniMax-M2.7";
  EngineRun r = run_engine_check("vllm-0.33.0", "--no-matrix --model " + shell_quote(minimax),
                                 "vllm serve MiniMaxAI/MiniMax-M2.7 --tensor-parallel-size 2 --tool-call-parser "
                                 "minimax_m2 --reasoning-parser minimax_m2 --enable-auto-tool-choice");
  INFO(r.report["notes"].dump());
  CHECK(r.fact("engine_check.status") == "ok");
  CHECK(r.sp4100_status() == "pass");
  CHECK(r.report["notes"].dump().find("not asked: the model's tokens for --reasoning-parser minimax_m2 and "
                                      "--tool-call-parser minimax_m2") != std::string::npos);
}

TEST_CASE("the deployment's real PyTorch answers for a declared GPU: no sm_70 kernels in a CUDA 13 build (SP4055)",
          "[.engines][vllm]") {
  if (!have("vllm-0.33.0")) return;
  const std::string cache = temp_dir();
  auto check = [&](const std::string& gpu) {
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    RunResult rr = run_specprobe("check --python " + shell_quote(venv_python("vllm-0.33.0")) + " --gpu " + gpu + " " +
                                 model() + " --no-engine --probes off --no-matrix --format json -- " + llama_eagle3());
    unsetenv("XDG_CACHE_HOME");
    INFO("stderr: " << rr.err.substr(0, 2000));
    EngineRun r;
    r.exit_code = rr.exit_code;
    r.report = Json::parse(rr.out, nullptr, false);
    REQUIRE(r.report.is_object());
    return r;
  };
  EngineRun v100 = check("V100");
  const Json* sp4055 = v100.result("SP4055");
  REQUIRE(sp4055);
  INFO(sp4055->dump());
  CHECK((*sp4055)["status"] == "fail");
  CHECK((*sp4055)["message"].get<std::string>().find("sm_70 (compute capability 7.0): no kernel image") !=
        std::string::npos);
  CHECK(v100.fact("stack.torch.arch_list").get<std::string>().find("sm_75") != std::string::npos);
  CHECK(v100.exit_code == 1);
  CHECK(v100.fact("stack.torch.cached") == false);
  // A declared GPU's answer depends on the build and the spec only: the repeat is read back.
  EngineRun again = check("V100");
  CHECK(again.fact("stack.torch.cached") == true);
  CHECK((*again.result("SP4055"))["status"] == "fail");

  EngineRun h200 = check("H200");
  REQUIRE(h200.result("SP4055"));
  CHECK((*h200.result("SP4055"))["status"] == "pass");
  CHECK(h200.fact("stack.torch.arch.status") == "pass");
  CHECK(h200.fact("stack.torch.run.status") == "skip");  // declared: nothing to run on here
}
