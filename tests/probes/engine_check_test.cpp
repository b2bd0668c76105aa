// The engine check's parsing layer and runner paths, without an engine: result validation with
// recorded adapter outputs (the strings are the real engines' messages, from
// tests/engines/test_engine_adapters.py runs), the request built from the plan's facts, facts and
// the verdict's mapping, the cache (hit, corrupt entry, --no-cache, errors never cached), and the
// adapter failure paths (interpreter missing, engine import error, hang, garbage output) through the
// same isolated runner with small fake "python" scripts. The behaviour with real engines is in
// tests/engines/engine_check_e2e_test.cpp (ctest label engines).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../e2e/run_binary.hpp"
#include "common/json.hpp"
#include "pipeline/verdict.hpp"
#include "probes/engine_check.hpp"

using namespace specprobe;
using namespace specprobe::probes;
namespace fs = std::filesystem;

namespace {

struct EngineTempDir {
  std::string path;
  EngineTempDir() {
    std::string t = (fs::temp_directory_path() / "specprobe-enginetest-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()));
    path = t;
  }
  ~EngineTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A fake interpreter in DIR/bin/python and a site-packages with a vllm dist-info RECORD.
struct FakeEngine {
  EngineTempDir dir;
  std::string python, site_packages;
  explicit FakeEngine(const std::string& body) {
    fs::create_directories(dir.path + "/bin");
    python = dir.path + "/bin/python";
    std::ofstream(python) << "#!/bin/sh\n" << body << "\n";
    chmod(python.c_str(), 0755);
    site_packages = dir.path + "/site-packages";
    fs::create_directories(site_packages + "/vllm-0.33.0.dist-info");
    std::ofstream(site_packages + "/vllm-0.33.0.dist-info/RECORD") << "vllm/__init__.py,sha256=abc,10\n";
  }
  EngineCheckOptions options(const std::string& cache_dir, double timeout = 10) const {
    EngineCheckOptions o;
    o.python = python;
    o.site_packages = {site_packages};
    o.timeout_s = timeout;
    o.cache_dir = cache_dir;
    return o;
  }
};

Json record(const std::string& status, const std::string& stage = "", const std::string& message = "",
            const std::string& missing = "") {
  return {{"status", status},
          {"stage", stage.empty() ? Json() : Json(stage)},
          {"exception", status == "ok" ? Json() : Json("ValueError")},
          {"message", message.empty() ? Json() : Json(message)},
          {"missing", missing.empty() ? Json() : Json(missing)},
          {"raised_at", status == "refused" ? Json("vllm/config/speculative.py:412") : Json()},
          {"args", Json::array()},
          {"facts", {{"attention_backend", "FLASH_ATTN"}}},
          {"notes", Json::array()}};
}

const char* kTypo = "1 validation error for SpeculativeConfig\nnum_speculative_tokenz\n  Unexpected keyword argument";

Json result_with(Json plan, Json cells = Json::array()) {
  return {{"schema", "specprobe-engine/1"},
          {"engine", "vllm"},
          {"version", "0.33.0"},
          {"python", "/v/bin/python"},
          {"platform", {{"kind", "declared"}, {"cc", {9, 0}}}},
          {"skipped", {{{"what", "KV-cache capacity"}, {"why", "no device memory"}}}},
          {"plan", plan},
          {"cells", cells},
          {"guard", Json::object()},
          {"timing_s", {{"import", 14.6}, {"total", 20.1}}}};
}

Json request_with_cells(std::vector<std::string> ids) {
  Json cells = Json::array();
  for (const auto& id : ids) cells.push_back({{"id", id}, {"args_override", Json::object()}});
  return {{"engine", "vllm"}, {"args", {"meta-llama/Llama-3.1-8B-Instruct"}}, {"cells", cells}};
}

std::string engine_prints(const Json& j) {
  std::string text = j.dump();
  std::string quoted;
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  // printf, not echo: dash's echo would turn the JSON's \\n escapes into newlines.
  return "echo '@@specprobe begin 0'; printf '%s\\n' '@@specprobe result " + quoted + "'";
}

}  // namespace

TEST_CASE("a refused plan keeps the engine's message, stage and raised_at - every cell answered", "[engine_check]") {
  Json cell = record("refused", "backend-selection",
                     "Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: "
                     "['block_size not supported']");
  cell["id"] = "k3-FLASH_ATTN-fp8";
  // Json::array({cell}), not {cell}: clang reads a braced list of one json as a copy of it, g++
  // as an array of one, and the result needs a list of cells.
  Json plan = record("refused", "config", kTypo);
  plan["stage_s"] = {{"argparse", 0.002}, {"config", 0.6}, {"not-a-stage", 9.0}};
  Json r = validate_engine_result(result_with(plan, Json::array({cell})), request_with_cells({"k3-FLASH_ATTN-fp8"}));
  REQUIRE(r["status"] == "refused");
  CHECK(r["version"] == "0.33.0");
  CHECK(r["plan"]["message"] == kTypo);
  CHECK(r["plan"]["stage"] == "config");
  CHECK(r["plan"]["raised_at"] == "vllm/config/speculative.py:412");
  CHECK(r["cells"][0]["id"] == "k3-FLASH_ATTN-fp8");
  CHECK(r["cells"][0]["stage"] == "backend-selection");
  CHECK(r["skipped"][0]["what"] == "KV-cache capacity");

  Json f = engine_facts_patch(r, {"--port $PORT"});
  CHECK(f["engine_check"]["status"] == "refused");
  CHECK(f["engine_check"]["message"] == kTypo);
  CHECK(f["engine_check"]["facts"]["attention_backend"] == "FLASH_ATTN");
  CHECK(f["engine_check"]["cells"]["k3-FLASH_ATTN-fp8"]["status"] == "refused");
  CHECK(f["engine_check"]["unresolved"][0] == "--port $PORT");
  // The plan's stage times (the engine's own config time is import + argparse + config); a name that
  // is not a stage is left out.
  CHECK(f["engine_check"]["timing_s"]["plan_stages"] == Json({{"argparse", 0.002}, {"config", 0.6}}));
}

TEST_CASE("results that break the protocol are adapter errors, never verdicts", "[engine_check]") {
  const Json req = request_with_cells({"a", "b"});
  Json ca = record("ok");
  ca["id"] = "a";
  Json cb = record("ok");
  cb["id"] = "b";
  const Json good = result_with(record("ok"), {ca, cb});
  REQUIRE(validate_engine_result(good, req)["status"] == "ok");

  auto broken = [&](auto mutate, const std::string& why) {
    Json raw = good;
    mutate(raw);
    Json r = validate_engine_result(raw, req);
    INFO(why << ": " << r.dump());
    CHECK(r["status"] == "adapter-error");
    CHECK(r["reason"].get<std::string>().find("not trusted") != std::string::npos);
    CHECK(r["plan"].is_null());
  };
  broken([](Json& j) { j["schema"] = "specprobe-engine/2"; }, "schema");
  broken([](Json& j) { j["engine"] = "sglang"; }, "engine");
  broken([](Json& j) { j["plan"]["status"] = "maybe"; }, "status vocabulary");
  broken([](Json& j) { j["plan"]["stage"] = "weights"; }, "stage vocabulary");
  broken([](Json& j) { j["plan"] = record("refused", "", "no"); }, "refused without a stage");
  broken([](Json& j) { j["plan"] = record("refused", "config", ""); }, "refused without a message");
  broken([](Json& j) { j["plan"] = record("missing-input", "config", "x"); }, "missing-input without what");
  broken([](Json& j) { j["plan"]["message"] = 42; }, "message type");
  broken([](Json& j) { j["cells"].erase(1); }, "a cell not answered");
  broken([](Json& j) { j["cells"].push_back(j["cells"][0]); }, "a cell answered twice");
  broken([](Json& j) { j["cells"][1]["id"] = "c"; }, "a cell not asked");
  broken([](Json& j) { j["version"] = nullptr; }, "a verdict without a version");
  broken([](Json& j) { j["cells"] = "none"; }, "cells not a list");
  CHECK(validate_engine_result(Json("text"), req)["status"] == "adapter-error");
}

TEST_CASE("the adapter's own errors and missing inputs map to no verdict", "[engine_check][verdict]") {
  Json r = validate_engine_result(
      result_with(record("missing-input", "config", "draft model not found",
                         "the draft model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B on disk (it is a Hugging Face Hub id)")),
      request_with_cells({}));
  REQUIRE(r["status"] == "missing-input");
  Json facts = engine_facts_patch(r, {});
  CHECK(facts["engine_check"]["status"].is_null());
  CHECK(facts["engine_check"]["outcome"] == "missing-input");
  // By default the engine that could not answer is no missing fact (a note says so; issue 50).
  for (const auto& m : decide({}, facts).missing) CHECK(m.fact != "engine_check.status");
  // --require engine: it is one, naming what to supply.
  Decision d = decide({}, facts, {"engine"});
  CHECK(d.verdict == "unknown");
  bool named = false;
  for (const auto& m : d.missing)
    named |= m.fact == "engine_check.status" &&
             m.supply.find("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B on disk") != std::string::npos;
  CHECK(named);

  Json imp = result_with(
      record("adapter-error", "import", "importing vllm failed: ModuleNotFoundError: No module named 'vllm'"));
  imp["version"] = nullptr;
  Json e = validate_engine_result(imp, request_with_cells({}));
  CHECK(e["status"] == "adapter-error");
  CHECK(e["reason"].get<std::string>().find("stage import") != std::string::npos);
  Json ef = engine_facts_patch(e, {});
  CHECK(ef["engine_check"]["status"].is_null());
  CHECK(decide({}, ef, {"engine"}).verdict == "unknown");
}

TEST_CASE("the request carries the plan's arguments as read, leaving unresolved values out", "[engine_check]") {
  Json facts = {{"engine", {{"name", "vllm"}}},
                {"model", {{"id", "meta-llama/Llama-3.1-8B-Instruct"}}},
                {"gpu",
                 {{"name", "NVIDIA H100 80GB HBM3"},
                  {"cc_major", 9},
                  {"cc_minor", 0},
                  {"source", "declared"},
                  {"count", 8},
                  {"sm_count", 132},
                  {"vendor", "nvidia"}}},
                {"serve", {{"tp", 8}, {"pp", 1}}},
                {"options",
                 {{"given",
                   {{{"flag", "--tensor-parallel-size"}, {"source", "command"}, {"value", "8"}},
                    {{"flag", "--speculative-config"},
                     {"source", "command"},
                     {"value", {{"method", "eagle3"}, {"num_speculative_tokens", 3}}}},
                    {{"flag", "--enforce-eager"}, {"source", "command"}, {"value", true}},
                    {{"flag", "--port"}, {"source", "command"}, {"value", "$PORT"}},
                    {{"flag", "max_model_len"}, {"source", "config"}, {"value", 8192}},
                    {{"flag", "enable_prefix_caching"}, {"source", "config"}, {"value", false}}}}}}};
  std::vector<std::string> unresolved;
  Json req = engine_request(facts, "/ckpt/llama", Json::array(), unresolved);
  CHECK(req["engine"] == "vllm");
  CHECK(req["model_dir"] == "/ckpt/llama");
  CHECK(req["args"] ==
        Json({"meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "8", "--speculative-config",
              R"({"method":"eagle3","num_speculative_tokens":3})", "--enforce-eager", "--max_model_len", "8192"}));
  CHECK(unresolved == std::vector<std::string>{"--port $PORT"});
  CHECK(req["gpu"]["cc"] == Json({9, 0}));
  CHECK(req["gpu"]["declared"] == true);
  CHECK(req["gpu"]["count"] == 8);
  CHECK(req["gpu"]["sm_count"] == 132);  // kernel libraries size grids by it while the model is built
  // How many GPUs: a declared GPU says which, not how many; the engine is told the plan's TP x PP x DP
  // (it refuses a world size larger than the node), the deploy's count when it states more (a count
  // per pod below the plan's is a multi-node launch, not a refusal), the driver's when the GPUs are here.
  facts["serve"] = {{"tp", 4}, {"pp", 2}, {"dp", 2}};
  CHECK(engine_request(facts, "/ckpt/llama", Json::array(), unresolved)["gpu"]["count"] == 16);
  facts["deploy"] = {{"gpus", 4}};
  CHECK(engine_request(facts, "/ckpt/llama", Json::array(), unresolved)["gpu"]["count"] == 16);
  facts["deploy"] = {{"gpus", 32}};
  CHECK(engine_request(facts, "/ckpt/llama", Json::array(), unresolved)["gpu"]["count"] == 32);
  facts["gpu"]["source"] = "driver";
  CHECK(engine_request(facts, "/ckpt/llama", Json::array(), unresolved)["gpu"]["count"] == 8);
  facts["gpu"]["source"] = "declared";
  facts.erase("deploy");
  facts["serve"] = {{"tp", 8}, {"pp", 1}};
  unresolved.clear();

  // SGLang: the model as --model-path; the sweep's "fp8" is its fp8_e4m3.
  facts["engine"]["name"] = "sglang";
  facts["options"]["given"] = {{{"flag", "--tp"}, {"source", "command"}, {"value", "8"}}};
  unresolved.clear();
  Json s = engine_request(facts, "", Json::array(), unresolved);
  CHECK(s["args"] == Json({"--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--tp", "8"}));
  CHECK(s["model_dir"].is_null());
  // A model left to the shell and no --model directory: the text goes to the engine, which names it
  // as the input to supply (not a command without a model, which it would refuse).
  facts["model"]["id"] = "${MODEL_PATH}";
  unresolved.clear();
  Json u = engine_request(facts, "", Json::array(), unresolved);
  CHECK(u["args"] == Json({"--model-path", "${MODEL_PATH}", "--tp", "8"}));
  CHECK(unresolved == std::vector<std::string>{"model ${MODEL_PATH}"});
  Json d = engine_request(facts, "/ckpt/llama", Json::array(), unresolved);
  CHECK(d["args"] == Json({"--model-path", "/ckpt/llama", "--tp", "8"}));
  // The same through the model flag, with no model.id.
  facts["model"].erase("id");
  facts["options"]["given"] = {{{"flag", "--model"}, {"source", "command"}, {"value", "${LOCAL_PATH}"}},
                               {{"flag", "--tp"}, {"source", "command"}, {"value", "8"}}};
  Json f = engine_request(facts, "", Json::array(), unresolved);
  CHECK(f["args"] == Json({"--model", "${LOCAL_PATH}", "--tp", "8"}));
  Json g = engine_request(facts, "/ckpt/llama", Json::array(), unresolved);
  CHECK(g["args"] == Json({"--model-path", "/ckpt/llama", "--tp", "8"}));
  facts["model"]["id"] = "meta-llama/Llama-3.1-8B-Instruct";
  Json cell = engine_cell("sglang", 2, "", "fp8");
  CHECK(cell["id"] == "k2---fp8");
  CHECK(cell["args_override"]["--kv-cache-dtype"] == "fp8_e4m3");
  CHECK(cell["args_override"]["--speculative-num-draft-tokens"] == "3");
  CHECK(engine_cell("vllm", 3, "FLASH_ATTN",
                    "auto")["args_override"]["--speculative-config"]["num_speculative_tokens"] == 3);
}

TEST_CASE("an AMD GPU is declared by its gfx target, and the deploy's engine settings travel with the request",
          "[engine_check]") {
  Json facts = {{"engine", {{"name", "vllm"}}},
                {"model", {{"id", "meta-llama/Llama-3.1-8B-Instruct"}}},
                {"gpu",
                 {{"name", "AMD Instinct MI300X"},
                  {"vendor", "amd"},
                  {"arch", "gfx942"},
                  {"source", "declared"},
                  {"count", 8},
                  {"sm_count", 304},
                  {"memory_bytes", int64_t{192} << 30}}},
                {"serve", {{"tp", 8}}},
                {"env",
                 {{"VLLM_ROCM_USE_AITER", "1"},
                  {"SGLANG_ENABLE_SPEC_V2", "true"},
                  {"VLLM_CACHE_ROOT", "/data/cache"},      // a path: the adapter's own
                  {"VLLM_LOGGING_LEVEL", "DEBUG"},         // logging: the adapter's own
                  {"VLLM_ATTENTION_BACKEND", "$BACKEND"},  // unresolved: left out
                  {"HF_TOKEN", "hf_secret"},               // not an engine setting
                  {"CUDA_VISIBLE_DEVICES", "0,1"}}}};
  std::vector<std::string> unresolved;
  Json req = engine_request(facts, "/ckpt/llama", Json::array(), unresolved);
  CHECK(req["gpu"] == Json({{"vendor", "amd"},
                            {"arch", "gfx942"},
                            {"name", "AMD Instinct MI300X"},
                            {"declared", true},
                            {"count", 8},
                            {"memory_gib", 192.0},
                            {"compute_units", 304}}));
  CHECK(req["env"] == Json({{"VLLM_ROCM_USE_AITER", "1"}, {"SGLANG_ENABLE_SPEC_V2", "true"}}));
  CHECK(req.dump().find("hf_secret") == std::string::npos);

  // An AMD GPU without a gfx target, and no settings: neither is sent.
  facts["gpu"].erase("arch");
  facts.erase("env");
  Json bare = engine_request(facts, "/ckpt/llama", Json::array(), unresolved);
  CHECK(!bare.contains("gpu"));
  CHECK(!bare.contains("env"));
}

TEST_CASE("a repeated check is answered from the cache - corrupt entries and --no-cache run the adapter",
          "[engine_check][cache]") {
  EngineTempDir cache;
  EngineTempDir counter;
  const std::string count_file = counter.path + "/runs";
  // Counts its runs, then prints a refused result.
  FakeEngine eng("echo run >> " + count_file + "; " + engine_prints(result_with(record("refused", "config", kTypo))));
  const Json req = {{"engine", "vllm"}, {"args", {"m"}}, {"cells", Json::array()}};
  auto runs = [&] {
    std::ifstream in(count_file);
    int n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  };
  Json first = run_engine_check(req, eng.options(cache.path));
  REQUIRE(first["status"] == "refused");
  CHECK(first["cached"] == false);
  CHECK(runs() == 1);
  Json second = run_engine_check(req, eng.options(cache.path));
  CHECK(second["status"] == "refused");
  CHECK(second["cached"] == true);
  CHECK(second["plan"]["message"] == kTypo);
  CHECK(runs() == 1);

  // Other inputs, another key.
  Json other = req;
  other["args"] = {"m", "--tensor-parallel-size", "2"};
  CHECK(run_engine_check(other, eng.options(cache.path))["cached"] == false);
  CHECK(runs() == 2);

  // --no-cache runs it again.
  EngineCheckOptions nc = eng.options(cache.path);
  nc.use_cache = false;
  CHECK(run_engine_check(req, nc)["cached"] == false);
  CHECK(runs() == 3);

  // A corrupt entry (truncated; or valid JSON whose result breaks the schema) is ignored and replaced.
  const std::string key = engine_cache_key(req, eng.options(cache.path));
  REQUIRE(!key.empty());
  const std::string entry = cache.path + "/" + key + ".json";
  REQUIRE(fs::exists(entry));
  std::ofstream(entry, std::ios::trunc) << "{\"schema\": \"specprobe-engine-cache/1\", \"key\": ";
  CHECK(run_engine_check(req, eng.options(cache.path))["cached"] == false);
  CHECK(runs() == 4);
  std::ofstream(entry, std::ios::trunc)
      << Json({{"schema", "specprobe-engine-cache/1"},
               {"key", key},
               {"raw", {{"schema", "specprobe-engine/1"}, {"engine", "vllm"}, {"plan", {{"status", "ok"}}}}}})
             .dump();
  CHECK(run_engine_check(req, eng.options(cache.path))["cached"] == false);
  CHECK(runs() == 5);
  CHECK(run_engine_check(req, eng.options(cache.path))["cached"] == true);

  // A changed engine build (its RECORD) is another key.
  std::ofstream(eng.site_packages + "/vllm-0.33.0.dist-info/RECORD", std::ios::app) << "vllm/x.py,sha256=def,1\n";
  CHECK(run_engine_check(req, eng.options(cache.path))["cached"] == false);
  CHECK(runs() == 6);
}

TEST_CASE("adapter errors are never cached", "[engine_check][cache]") {
  EngineTempDir cache;
  FakeEngine eng("echo '@@specprobe begin 0'; echo 'not a result'");
  const Json req = {{"engine", "vllm"}, {"args", {"m"}}, {"cells", Json::array()}};
  CHECK(run_engine_check(req, eng.options(cache.path))["status"] == "adapter-error");
  CHECK(fs::is_empty(cache.path));
}

TEST_CASE("adapter failure paths: engine missing, import error, hang, garbage", "[engine_check][runner]") {
  EngineTempDir cache;
  const Json req = {{"engine", "vllm"}, {"args", {"m"}}, {"cells", Json::array()}};
  SECTION("the interpreter does not exist") {
    EngineCheckOptions o;
    o.python = cache.path + "/no/such/python";
    o.cache_dir = cache.path;
    Json r = run_engine_check(req, o);
    CHECK(r["status"] == "adapter-error");
    CHECK(r["reason"].get<std::string>().find("cannot run the engine adapter") != std::string::npos);
  }
  SECTION("the engine does not import: the real adapter under this machine's python3") {
    // python3 here has no vLLM: the embedded adapter itself reports the import failure.
    Json with_gpu = req;
    with_gpu["gpu"] = {{"name", "NVIDIA H100 80GB HBM3"}, {"cc", {9, 0}}, {"declared", true}, {"count", 1}};
    EngineCheckOptions o;
    o.python = "/usr/bin/python3";
    o.cache_dir = cache.path;
    o.timeout_s = 60;
    if (!fs::exists(o.python)) {
      WARN("no /usr/bin/python3");
      return;
    }
    Json r = run_engine_check(with_gpu, o);
    INFO(r.dump());
    CHECK(r["status"] == "adapter-error");
    CHECK(r["plan"]["stage"] == "import");
    CHECK(r["reason"].get<std::string>().find("importing vllm failed") != std::string::npos);
  }
  SECTION("a hang is killed at the timeout, with the phase the adapter last recorded") {
    FakeEngine eng("echo '@@specprobe begin 0'; echo 'import vllm' > \"$SPECPROBE_ENGINE_PHASE_FILE\"; exec sleep 60");
    Json r = run_engine_check(req, eng.options(cache.path, 1.5));
    INFO(r.dump());
    CHECK(r["status"] == "adapter-error");
    CHECK(r["phase"] == "import vllm");
    CHECK(r["reason"].get<std::string>().find("timed out") != std::string::npos);
    CHECK(r["reason"].get<std::string>().find("import vllm") != std::string::npos);
  }
  SECTION("garbage on stdout") {
    FakeEngine eng("echo '@@specprobe begin 0'; echo '@@specprobe result {\"schema\": '");
    Json r = run_engine_check(req, eng.options(cache.path));
    CHECK(r["status"] == "adapter-error");
  }
  SECTION("a death by signal") {
    FakeEngine eng("echo '@@specprobe begin 0'; kill -SEGV $$");
    Json r = run_engine_check(req, eng.options(cache.path));
    CHECK(r["status"] == "adapter-error");
    CHECK(r["reason"].get<std::string>().find("failed") != std::string::npos);
  }
  SECTION("the adapter runs in a private dir with a clean environment and the request as --specs") {
    EngineTempDir seen;
    FakeEngine eng("env > " + seen.path + "/env; printf '%s' \"$@\" > " + seen.path + "/argv; " +
                   engine_prints(result_with(record("ok"))));
    Json r = run_engine_check(req, eng.options(cache.path));
    CHECK(r["status"] == "ok");
    const std::string env = [&] {
      std::ifstream in(seen.path + "/env");
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    CHECK(env.find("SPECPROBE_ENGINE_PHASE_FILE=") != std::string::npos);
    CHECK(env.find("PYTHONNOUSERSITE=1") != std::string::npos);
    const std::string argv = [&] {
      std::ifstream in(seen.path + "/argv");
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    CHECK(argv.find("vllm_adapter.py") != std::string::npos);
    CHECK(argv.find("--specs") != std::string::npos);
    CHECK(argv.find("\"engine\":\"vllm\"") != std::string::npos);
  }
}

TEST_CASE(
    "check --python without the engine installed: a note naming what to install, unknown only with --require engine",
    "[engine_check][e2e]") {
  // This machine's python3 has no vLLM (the import-error case above relies on it too).
  if (!fs::exists("/usr/bin/python3")) {
    WARN("no /usr/bin/python3");
    return;
  }
  const std::string model = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/llama-3.1-8b";
  const std::string base =
      "check --gpu H100 --stack-probes off --no-matrix --format json --python /usr/bin/python3 --model " +
      test::shell_quote(model);
  const std::string cmd = " -- vllm serve meta-llama/Llama-3.1-8B-Instruct";
  // Not asked: a note, and the verdict comes from the rules and advisories (issue 50).
  auto r = test::run_specprobe(base + cmd);
  Json j = Json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(r.exit_code != 4);
  CHECK(j["verdict"] != "unknown");
  CHECK(j["facts"]["engine_check"]["outcome"] == "not-installed");
  bool noted = false;
  for (const auto& n : j["notes"])
    noted |= n.dump().find("engine check not asked: vLLM is not installed in /usr/bin/python3") != std::string::npos;
  CHECK(noted);
  // --require engine: the same is an unknown verdict that says what to install.
  auto required = test::run_specprobe(base + " --require engine" + cmd);
  Json q = Json::parse(required.out, nullptr, false);
  REQUIRE(q.is_object());
  CHECK(required.exit_code == 4);
  CHECK(q["verdict"] == "unknown");
  bool named = false;
  for (const auto& m : q["missing"]) named |= m.dump().find("install vllm") != std::string::npos;
  CHECK(named);
  auto skipped = test::run_specprobe(base + " --no-engine" + cmd);
  Json s = Json::parse(skipped.out, nullptr, false);
  REQUIRE(s.is_object());
  CHECK(s["facts"]["engine_check"]["requested"] == false);
  CHECK(s["verdict"] != "unknown");
  CHECK(skipped.exit_code != 4);
  // --require engine without --python: unknown, saying the engine was not asked.
  auto none = test::run_specprobe("check --gpu H100 --stack-probes off --no-matrix --require engine --model " +
                                  test::shell_quote(model) + cmd);
  CHECK(none.exit_code == 4);
  CHECK(test::one_line(none.out).find("the engine check was not asked") != std::string::npos);
}

TEST_CASE(
    "check --python at another release than the deploy: said plainly, not asked unless --engine-mismatch ask - "
    "an AMD GPU: not asked, with why",
    "[engine_check][e2e]") {
  if (!fs::exists("/usr/bin/python3")) {
    WARN("no /usr/bin/python3");
    return;
  }
  // A venv whose site-packages holds vLLM 0.33.0's metadata (no code: the adapter cannot import it).
  const std::string venv = test::temp_dir() + "/venv";
  REQUIRE(std::system(("/usr/bin/python3 -m venv --without-pip " + test::shell_quote(venv)).c_str()) == 0);
  std::string site;
  for (const auto& e : fs::recursive_directory_iterator(venv + "/lib"))
    if (e.path().filename() == "site-packages") site = e.path().string();
  REQUIRE(!site.empty());
  test::write_bytes(site + "/vllm-0.33.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: vllm\nVersion: 0.33.0\n");
  const std::string model = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/llama-3.1-8b";
  const std::string base = "check --stack-probes off --no-matrix --no-cache --format json --python " +
                           test::shell_quote(venv + "/bin/python") + " --model " + test::shell_quote(model);
  const std::string cmd = " -- vllm serve meta-llama/Llama-3.1-8B-Instruct";
  auto notes_of = [](const Json& j) { return j["notes"].dump(); };

  auto r = test::run_specprobe(base + " --gpu H100 --lib vllm=0.29.0" + cmd);
  Json j = Json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(j["facts"]["engine_check"]["outcome"] == "version-mismatch");
  CHECK(j["facts"]["engine_check"]["installed_version"] == "0.33.0");
  CHECK(notes_of(j).find("has vLLM 0.33.0; the deploy runs 0.29.0") != std::string::npos);
  CHECK(notes_of(j).find("not installed") == std::string::npos);  // it is installed, at another release
  CHECK(j["verdict"] != "unknown");

  // Asked anyway: the adapter runs against 0.33.0 (here it cannot import it: an adapter error, a note).
  auto ask = test::run_specprobe(base + " --gpu H100 --lib vllm=0.29.0 --engine-mismatch ask" + cmd);
  Json a = Json::parse(ask.out, nullptr, false);
  REQUIRE(a.is_object());
  CHECK(a["facts"]["engine_check"]["outcome"] != "version-mismatch");
  CHECK(notes_of(a).find("the engine's answers are for 0.33.0") != std::string::npos);
  CHECK(a["verdict"] != "unknown");

  // An AMD GPU is asked too (the adapter declares the engine's ROCm platform); this engine cannot
  // be imported: a note, and the verdict from the rules and advisories.
  auto amd = test::run_specprobe(base + " --gpu MI300X --lib vllm=0.33.0" + cmd);
  Json m = Json::parse(amd.out, nullptr, false);
  REQUIRE(m.is_object());
  CHECK(m["facts"]["engine_check"]["outcome"] == "adapter-error");
  CHECK(m["facts"]["engine_check"]["ran"] == true);
  CHECK(m["verdict"] != "unknown");
}
