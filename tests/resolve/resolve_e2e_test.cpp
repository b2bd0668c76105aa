// `specprobe check` on plans that name their model and draft by Hub id, with HF_ENDPOINT pointed
// at the Hub stand-in: the same verdict and findings as with local directories, a repeat answered
// from specprobe's cache, offline mode, gated repositories, and the token in no output at all.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "checkpoint/fixture_writer.hpp"
#include "common/json.hpp"
#include "e2e/run_binary.hpp"
#include "support/hub_standin.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::test;
using specprobe::testing::HubStandin;
using specprobe::testing::write_standin_repo;

namespace {

const fs::path kModels = fs::path(kSourceDir) / "tests" / "corpus" / "models";
const std::string kE2eToken = "hf_E2EsecretTOKENvalue0123456789abcdef";

// Verdict and every result's status, by id.
std::pair<std::string, std::map<std::string, std::string>> report_outcome(const Json& report) {
  std::map<std::string, std::string> results;
  for (const auto& r : report["results"]) results[r["id"].get<std::string>()] = r["status"].get<std::string>();
  return {report["verdict"].get<std::string>(), results};
}

Json parse(const RunResult& r) {
  INFO(r.err);
  Json j = Json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

struct World {
  TempDir root{"e2ehub"};
  std::string home = temp_dir();
  std::string ckpt = temp_dir();
  World() {
    write_dsv4(ckpt, true);  // the seed-004 checkpoint
    write_standin_repo(root.path, "canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", ckpt);
    write_standin_repo(root.path, "meta-llama/Llama-3.1-8B-Instruct", kModels / "meta-llama--Llama-3.1-8B-Instruct",
                       {{"gated", true}});
    write_standin_repo(root.path, "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                       kModels / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B");
  }
  // The environment of a run against SERVER: no user cache or token but what the test gives.
  std::vector<std::string> env(const HubStandin& server, const std::string& cache) const {
    return {"HOME=" + home,
            "XDG_CACHE_HOME=" + cache,
            "HF_ENDPOINT=" + server.endpoint(),
            "-HF_HUB_OFFLINE",
            "-HF_TOKEN",
            "-HF_HOME",
            "-HF_HUB_CACHE"};
  }
};

}  // namespace

TEST_CASE("check: a plan naming its checkpoint by id gives the local directory's verdict and findings",
          "[resolve][e2e]") {
  World w;
  HubStandin server(w.root.path);
  REQUIRE(server.running());
  const std::string cache = temp_dir();
  const std::string plan =
      "check --gpu H200 --lib vllm=0.25.1 --no-matrix --format json -- vllm serve "
      "canada/DeepSeek-V4-Flash-W4A16-FP8-MTP "
      "--tensor-parallel-size 8 --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'";
  const RunResult hub = run_specprobe_env(w.env(server, cache), plan);
  const RunResult local =
      run_specprobe_env(w.env(server, cache), "check --model " + shell_quote(w.ckpt) + " " + plan.substr(6));
  const Json h = parse(hub), l = parse(local);
  CHECK(hub.exit_code == local.exit_code);
  CHECK(report_outcome(h) == report_outcome(l));
  CHECK(h["facts"]["checkpoint"]["hub"]["shards"] == 2);
  CHECK(h["facts"]["resolve"]["model"]["origin"] == "hub");
  CHECK(h["facts"]["quant"] == l["facts"]["quant"]);
  // Some finding of the mixed checkpoint is there in both (the BF16 MTP block against FP8 main).
  bool mtp = false;
  for (const auto& r : h["results"]) mtp |= r["status"] == "fail" && r["id"].get<std::string>().rfind("SP2", 0) == 0;
  CHECK(mtp);
  CHECK(server.stats()["violations"].empty());

  SECTION("the second run is answered from the cache, with one request") {
    server.reset();
    const Json again = parse(run_specprobe_env(w.env(server, cache), plan));
    CHECK(again["facts"]["resolve"]["model"]["origin"] == "hub (cached)");
    CHECK(server.stats()["requests"] == 1);
    CHECK(report_outcome(again) == report_outcome(h));
  }
  SECTION("--offline answers from the cache with no request; a new cache offline is unknown, said plainly") {
    server.reset();
    const Json off = parse(run_specprobe_env(w.env(server, cache), "check --offline " + plan.substr(6)));
    CHECK(off["facts"]["resolve"]["model"]["origin"] == "hub (offline cache)");
    CHECK(off["facts"]["resolve"]["offline"] == true);
    CHECK(report_outcome(off) == report_outcome(h));
    auto env = w.env(server, temp_dir());
    env.push_back("HF_HUB_OFFLINE=1");
    const RunResult none = run_specprobe_env(env, plan);
    const Json n = parse(none);
    CHECK(n["verdict"] == "unknown");
    CHECK(none.exit_code == 4);
    CHECK(n["facts"]["resolve"]["model"]["failure"].get<std::string>().find("offline (HF_HUB_OFFLINE=1)") !=
          std::string::npos);
    CHECK(server.stats()["requests"] == 0);
  }
}

TEST_CASE("check: a gated target and its EAGLE3 draft by id, and the token in no output", "[resolve][e2e]") {
  World w;
  HubStandin server(w.root.path, {kE2eToken});
  REQUIRE(server.running());
  const std::string out = temp_dir();
  const std::string cfg = write_file(out, "serve.sh",
                                     "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                                     "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\","
                                     "\"num_speculative_tokens\":3}'\n");
  const std::string args = "check " + shell_quote(cfg) + " --gpu H100 --lib vllm=0.25.1 --no-matrix";
  SECTION("without a token: gated, said with the fix") {
    const RunResult r = run_specprobe_env(w.env(server, temp_dir()), args + " --format json");
    const Json j = parse(r);
    const std::string why = j["facts"]["resolve"]["model"]["failure"].get<std::string>();
    CHECK(why.find("gated: accept the licence on the Hub") != std::string::npos);
    CHECK(j["facts"]["resolve"]["draft"]["origin"] == "hub");  // the draft is not gated
    CHECK(j["facts"]["draft"]["architecture"] == "LlamaForCausalLMEagle3");
  }
  SECTION("with HF_TOKEN: both read; the same findings as local directories; the token nowhere") {
    auto env = w.env(server, temp_dir());
    env.push_back("HF_TOKEN=" + kE2eToken);
    env.push_back("GITHUB_STEP_SUMMARY=" + out + "/summary.md");
    const RunResult r = run_specprobe_env(
        env, args + " --format json --progress --sarif " + shell_quote(out + "/r.sarif") + " --junit " +
                 shell_quote(out + "/r.xml") + " --json " + shell_quote(out + "/r.json"));
    const RunResult github = run_specprobe_env(env, args + " --format github");
    const Json j = parse(r);
    CHECK(j["facts"]["resolve"]["model"]["origin"] == "hub");
    CHECK(j["facts"]["model"]["architecture"] == "LlamaForCausalLM");
    const RunResult text = run_specprobe_env(env, args + " --verbose");
    const RunResult local =
        run_specprobe_env(env, args + " --format json --model-dir meta-llama/Llama-3.1-8B-Instruct=" +
                                   shell_quote((kModels / "meta-llama--Llama-3.1-8B-Instruct").string()) +
                                   " --model-dir yuhuili/EAGLE3-LLaMA3.1-Instruct-8B=" +
                                   shell_quote((kModels / "yuhuili--EAGLE3-LLaMA3.1-Instruct-8B").string()));
    CHECK(report_outcome(parse(local)) == report_outcome(j));
    // Not a character run of the token anywhere: stdout, stderr, every report file, the cache.
    const std::string piece = kE2eToken.substr(3, 12);
    std::string everything = r.out + r.err + text.out + text.err + github.out + github.err;
    for (const char* f : {"/r.sarif", "/r.xml", "/r.json", "/summary.md"}) everything += file_text(out + f);
    for (const auto& e : fs::recursive_directory_iterator(env[1].substr(std::string("XDG_CACHE_HOME=").size())))
      if (e.is_regular_file()) everything += file_text(e.path().string());
    CHECK(everything.find(piece) == std::string::npos);
    CHECK(server.log_text().find(piece) == std::string::npos);
    CHECK(server.stats()["violations"].empty());
    CHECK(server.stats()["authorized_requests"].get<int>() > 0);
  }
}

TEST_CASE("check: the user's Hugging Face cache and checkpoints are never written", "[resolve][e2e]") {
  World w;
  HubStandin server(w.root.path);
  REQUIRE(server.running());
  auto env = w.env(server, temp_dir());
  const std::string hf_home = temp_dir();
  env.push_back("HF_HOME=" + hf_home);
  const RunResult r = run_specprobe_env(
      env,
      "check --gpu H100 --no-matrix -- vllm serve canada/DeepSeek-V4-Flash-W4A16-FP8-MTP --speculative-config "
      "'{\"method\":\"mtp\",\"num_speculative_tokens\":1}'");
  CHECK((r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4));
  CHECK(fs::is_empty(hf_home));
}

TEST_CASE("check: the GPU a Kubernetes node selector asks for, when none is visible", "[resolve][e2e]") {
  const std::string dir = temp_dir();
  const std::string yaml = write_file(dir, "deploy.yaml",
                                      "apiVersion: apps/v1\n"
                                      "kind: Deployment\n"
                                      "metadata: {name: vllm}\n"
                                      "spec:\n"
                                      "  template:\n"
                                      "    spec:\n"
                                      "      nodeSelector:\n"
                                      "        nvidia.com/gpu.product: NVIDIA-H200\n"
                                      "      containers:\n"
                                      "      - name: vllm\n"
                                      "        image: vllm/vllm-openai:v0.25.1\n"
                                      "        args: [\"--model\", \"org/m\", \"--tensor-parallel-size\", \"8\"]\n"
                                      "        resources: {limits: {nvidia.com/gpu: 8}}\n");
  // No driver here (CI): the declared GPU comes from the file, said so; --gpu still wins.
  const Json j =
      parse(run_specprobe_env({"CUDA_VISIBLE_DEVICES="}, "check " + shell_quote(yaml) + " --no-matrix --format json"));
  if (j["facts"]["gpu"].value("source", "") == "driver") return;  // a GPU machine: the driver's GPU is evaluated
  CHECK(j["facts"]["gpu"]["name"] == "NVIDIA H200");
  CHECK(j["facts"]["gpu"]["declared_from"] == "nodeSelector nvidia.com/gpu.product=NVIDIA-H200 at line 8");
  CHECK(j["facts"]["deploy"]["gpu_product"]["value"] == "NVIDIA-H200");
  const Json declared = parse(run_specprobe("check " + shell_quote(yaml) + " --gpu B200 --no-matrix --format json"));
  CHECK(declared["facts"]["gpu"]["name"] == "NVIDIA B200");
}

TEST_CASE("check: serve options without a command are read as the engine's they are", "[resolve][e2e]") {
  const std::string dir = temp_dir();
  const std::string vllm = write_file(dir, "flags",
                                      "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n"
                                      "--kv-cache-dtype fp8\n"
                                      "--tensor-parallel-size 8\n");
  const Json v = parse(run_specprobe("check " + shell_quote(vllm) + " --gpu H100 --no-matrix --format json"));
  CHECK(v["input"]["engine"] == "vllm");
  CHECK(v["facts"]["spec"]["k"] == 2);
  CHECK(v["facts"]["serve"]["tp"] == 8);
  CHECK(v["notes"].dump().find("vLLM serve options without a command") != std::string::npos);
  CHECK(v["notes"].dump().find("does not continue to it") == std::string::npos);  // no backslash warning per line
  const std::string sglang = write_file(dir, "sglang-flags.sh",
                                        "--speculative-algorithm EAGLE3 --speculative-num-steps 3 "
                                        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --tp 8\n");
  const Json s = parse(run_specprobe("check " + shell_quote(sglang) + " --gpu H100 --no-matrix --format json"));
  CHECK(s["input"]["engine"] == "sglang");
  CHECK(s["facts"]["spec"]["method"] == "eagle3");
  // Options both engines take: which one is not known; --engine decides.
  const std::string both = write_file(dir, "both.txt", "--tensor-parallel-size 8 --kv-cache-dtype fp8\n");
  const RunResult b = run_specprobe("check " + shell_quote(both) + " --gpu H100 --no-matrix");
  CHECK(b.exit_code == 4);
  CHECK(b.out.find("both a vLLM and an SGLang option: pass --engine vllm or --engine sglang") != std::string::npos);
  const Json e =
      parse(run_specprobe("check " + shell_quote(both) + " --engine sglang --gpu H100 --no-matrix --format json"));
  CHECK(e["input"]["engine"] == "sglang");
  CHECK(e["facts"]["serve"]["kv_cache_dtype"] == "fp8");
}

TEST_CASE("check: a deploy downloading from ModelScope says so when the Hub has no such model", "[resolve][e2e]") {
  World w;
  HubStandin server(w.root.path);
  REQUIRE(server.running());
  const Json j =
      parse(run_specprobe_env(w.env(server, temp_dir()),
                              "check --gpu H100 --no-matrix --format json -- env VLLM_USE_MODELSCOPE=True vllm serve "
                              "LLM-Research/Meta-Llama-3.1-8B-Instruct"));
  const std::string why = j["facts"]["resolve"]["model"]["failure"].get<std::string>();
  CHECK(why.find("no such model on 127.0.0.1") != std::string::npos);
  CHECK(why.find("the deploy downloads from ModelScope (VLLM_USE_MODELSCOPE=True)") != std::string::npos);
}
