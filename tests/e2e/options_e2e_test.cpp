// Issues 35 and 39 through the binary: every defect the issues quote, as a user runs it (the plan
// on the command line or in a file, a checkpoint fixture so the verdict is not "unknown").
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "run_binary.hpp"

using specprobe::test::one_line;
using specprobe::test::run_specprobe;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;
namespace fs = std::filesystem;

using specprobe::test::kExampleCheckpoints;

namespace {

const std::string kModelLlama = " --model " + kExampleCheckpoints + "/llama-3.1-8b";
const std::string kCheckNoProbes = "check --gpu H100 --no-matrix --probes off ";

void write_text(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

// Runs ARGS; the exit code must be CODE and every one of WANT must appear in stdout.
void expect(const std::string& args, int code, const std::vector<std::string>& want) {
  auto r = run_specprobe(args);
  INFO(args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  for (const auto& w : want) {
    INFO("want: " << w);
    CHECK(one_line(r.out).find(w) != std::string::npos);
  }
}

struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(const char* n, const std::string& v) : name(n) {
    if (const char* o = std::getenv(n)) old = o;
    ::setenv(n, v.c_str(), 1);
  }
  ~EnvVar() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("e2e: mistyped flags are SP1014 errors with a did-you-mean, naming the table", "[e2e][options]") {
  // --speculative-confg and --kv-cache-dtpye used to pass as "option is not modelled".
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama +
             " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-confg "
             "'{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"
             " --kv-cache-dtpye fp8",
         1,
         {"error: --speculative-confg is not a vLLM option (did you mean --speculative-config?)",
          "--kv-cache-dtpye is not a vLLM option (did you mean --kv-cache-dtype?)",
          "(checked against vLLM 0.20.0) [SP1014]"});
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama +
             " -- vllm serve meta-llama/Llama-3.1-8B-Instruct ----speculative-config '{\"method\": \"ngram\"}'",
         1,
         {"----speculative-config is not a vLLM option (written with 4 dashes; did you mean --speculative-config?)"});
  // The engine version unknown: the newest table, said so.
  expect(kCheckNoProbes + kModelLlama + " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtpye fp8", 1,
         {"did you mean --kv-cache-dtype?", "vLLM 0.33.0, the newest table (the engine version is unknown"});
  // SGLang: a real typo is an error; --speculative-num-step is a prefix argparse accepts (SP1016).
  expect(
      kCheckNoProbes + "--lib sglang=0.5.9" + kModelLlama +
          " -- python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-num-stpes 3",
      1, {"--speculative-num-stpes is not a SGLang option (did you mean --speculative-num-steps?)"});
  expect(
      kCheckNoProbes + "--lib sglang=0.5.9 --fail-on info" + kModelLlama +
          " -- python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-num-step 3",
      1, {"--speculative-num-step is accepted as an abbreviation of --speculative-num-steps", "[SP1016]"});
}

TEST_CASE("e2e: keys inside --speculative-config are checked (num_speculative_token was silently k=1)",
          "[e2e][options]") {
  const std::string dir = temp_dir();
  write_text(dir + "/serve.yaml",
             "model: meta-llama/Llama-3.1-8B-Instruct\n"
             "speculative-config:\n"
             "  method: ngram\n"
             "  num_speculative_token: 3\n"
             "  prompt_lookup_max: 4\n");
  // vLLM 0.20.0 rejects the key at startup; 0.12.0 ignores it, so k falls back to its default.
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama + " " + shell_quote(dir + "/serve.yaml"), 1,
         {"serve.yaml:4:3: error: speculative-config key 'num_speculative_token' is not a SpeculativeConfig field "
          "(did you mean 'num_speculative_tokens'?); vLLM stops at startup"});
  expect(kCheckNoProbes + "--lib vllm=0.12.0" + kModelLlama + " " + shell_quote(dir + "/serve.yaml"), 1,
         {"vLLM ignores it silently, so the setting has no effect"});
}

TEST_CASE("e2e: enumerated values against the release's list", "[e2e][options]") {
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama +
             " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
             "'{\"method\":\"mpt\",\"num_speculative_tokens\":1}'"
             " --kv-cache-dtype fp9 --attention-backend FLASHINFERR -cc.cudagraph_mode FULL_DECODE --quantization fp9",
         1,
         {"'mpt' is not a value vLLM 0.20.0 accepts (did you mean 'mtp'?)",
          "'fp9' is not a value vLLM 0.20.0 accepts (did you mean 'fp8'?)",
          "'FLASHINFERR' is not a value vLLM 0.20.0 accepts (did you mean 'FLASHINFER'?)",
          "'FULL_DECODE' is not a value vLLM 0.20.0 accepts", "--quantization fp9", "[SP1015]"});
  // The same plan spelled right: no option finding.
  auto r = run_specprobe(kCheckNoProbes + "--lib vllm=0.20.0 --fail-on info" + kModelLlama +
                         " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                         "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"
                         " --kv-cache-dtype fp8 --attention-backend FLASHINFER -cc.cudagraph_mode FULL_DECODE_ONLY");
  INFO(r.out);
  CHECK(r.out.find("[SP1014]") == std::string::npos);
  CHECK(r.out.find("[SP1015]") == std::string::npos);
  CHECK(r.out.find("[SP1016]") == std::string::npos);
}

TEST_CASE("e2e: sizes and fractions out of range - a corrupt config.json names the file", "[e2e][options]") {
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama +
             " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 0 --gpu-memory-utilization 1.5",
         1,
         {"--tensor-parallel-size 0: vLLM requires at least 1",
          "--gpu-memory-utilization 1.5: vLLM requires a fraction in (0, 1]"});
  const std::string dir = temp_dir();
  write_text(dir + "/bad/config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2000000000,
                 "num_attention_heads": 32, "hidden_size": 4096})");
  // Beyond every released model but a config the engine would build: a note, the value stands (issue 48).
  auto r = run_specprobe(kCheckNoProbes + "--model " + shell_quote(dir + "/bad") + " -- vllm serve m");
  INFO(r.out << r.err);
  CHECK(r.exit_code != 2);
  CHECK(one_line(r.out).find("num_hidden_layers = 2000000000 is beyond every released model") != std::string::npos);
  // A size no engine builds a model with is a corrupt file, named.
  write_text(dir + "/neg/config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
                 "num_attention_heads": 0, "hidden_size": 4096})");
  auto n = run_specprobe(kCheckNoProbes + "--model " + shell_quote(dir + "/neg") + " -- vllm serve m");
  CHECK(n.exit_code == 2);
  CHECK(n.err.find(dir + "/neg/config.json") != std::string::npos);
  CHECK(n.err.find("num_attention_heads = 0 is a size no engine builds a model with: a corrupt config.json") !=
        std::string::npos);
}

TEST_CASE("e2e: MTP on a checkpoint without MTP layers is SP1017 with the reason", "[e2e][options]") {
  expect(kCheckNoProbes + "--lib vllm=0.20.0" + kModelLlama +
             " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
             "'{\"method\":\"mtp\",\"num_speculative_tokens\":1}'",
         1,
         {"speculative method mtp drafts with the checkpoint's own MTP layers, but its config.json declares none",
          "[SP1017]"});
  // The same method on a checkpoint that ships them does not fire.
  auto r = run_specprobe(
      kCheckNoProbes + "--lib vllm=0.20.0 --model " + kExampleCheckpoints +
      "/gqa16-mtp -- vllm serve m --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'");
  INFO(r.out);
  CHECK(r.out.find("[SP1017]") == std::string::npos);
}

TEST_CASE("e2e: a metadata-only checkpoint - a repo id found in the local HF cache", "[e2e][options][hf_cache]") {
  const std::string dir = temp_dir();
  const fs::path meta = fs::path(dir) / "meta";
  write_text(meta / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "vocab_size": 128256})");
  write_text(
      meta / "model.safetensors.index.json",
      R"({"metadata": {"total_size": 16}, "weight_map": {"model.layers.0.self_attn.o_proj.weight": "model-00001-of-00002.safetensors",
                 "lm_head.weight": "model-00002-of-00002.safetensors"}})");
  {
    auto r = run_specprobe(kCheckNoProbes + "--model " + shell_quote(meta.string()) + " -- vllm serve m");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("none is present (a metadata-only checkpoint)") != std::string::npos);
    CHECK(r.out.find("[SP2001]") == std::string::npos);
  }
  // Some shards present, one missing: still an error.
  write_text(meta / "model-00001-of-00002.safetensors", "x");
  CHECK(run_specprobe(kCheckNoProbes + "--model " + shell_quote(meta.string()) + " -- vllm serve m").exit_code != 0);

  const fs::path hub = fs::path(dir) / "hub";
  write_text(hub / "models--org--tiny" / "refs" / "main", "abc\n");
  write_text(hub / "models--org--tiny" / "snapshots" / "abc" / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096})");
  EnvVar cache("HF_HUB_CACHE", hub.string());
  {
    auto r = run_specprobe(kCheckNoProbes + "-- vllm serve org/tiny");
    INFO(r.out << r.err);
    CHECK(r.out.find("model 'org/tiny' read from the Hugging Face cache") != std::string::npos);
    CHECK(r.out.find("LlamaForCausalLM (llama)") != std::string::npos);
  }
  {
    auto r = run_specprobe(kCheckNoProbes + "-- vllm serve org/absent");
    INFO(r.out << r.err);
    // Not local, not in the HF cache: the Hub is next, and the tests run offline (tests/support/test_main.cpp).
    CHECK(r.out.find("model 'org/absent': offline (HF_HUB_OFFLINE=1) and not in specprobe's cache") !=
          std::string::npos);
    CHECK(r.out.find("pass --model") != std::string::npos);
  }
}

TEST_CASE("e2e: the memory options' malformed values are input errors naming the option", "[e2e][options][memory]") {
  for (const auto& [plan, want] : std::vector<std::pair<std::string, std::string>>{
           {"-- vllm serve m --kv-cache-memory-bytes lots",
            "<command line>:1:14: error: kv-cache-memory-bytes must be an integer, got 'lots'"},
           {"-- vllm serve m --cpu-offload-gb many", "error: cpu-offload-gb must be a number, got 'many'"},
           {"-- python3 -m sglang.launch_server --model-path m --max-total-tokens x",
            "error: max-total-tokens must be an integer, got 'x'"},
           {"-- python3 -m sglang.launch_server --model-path m --cpu-offload-gb many",
            "error: cpu-offload-gb must be a number, got 'many'"}}) {
    auto r = run_specprobe(kCheckNoProbes + plan);
    INFO(plan << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err).find(want) != std::string::npos);
  }
  // A well-formed size is read (human units as vLLM takes them), and a plan without a model says
  // why memory is not modelled.
  expect(kCheckNoProbes + "-- vllm serve m --kv-cache-memory-bytes 8G", 4,  // no model: unknown
         {"memory: not modelled: the checkpoint's shapes are unknown"});
  CHECK(run_specprobe("check a.yaml b.yaml -j 999").exit_code == 2);
}
