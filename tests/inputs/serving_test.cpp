// Serving-configuration readers: every input form, locations, unknown options, malformed input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "facts/derive.hpp"
#include "inputs/serving.hpp"

using namespace specprobe;

namespace {

std::string fixture(const std::string& name) {
  return std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/serving/" + name;
}

ParsedServing read_ok(const std::string& name) {
  auto r = read_serving_file(fixture(name));
  INFO(name << ": " << (r ? std::string() : r.error().str()));
  REQUIRE(r.has_value());
  return std::move(r).value();
}

// A fact of the plan as a run sees it: the reader's facts plus what is derived from them alone
// (spec.k and spec.next_n come from num_speculative_tokens / SGLang's draft tokens).
Json derived_fact(const ParsedServing& p, const char* name) {
  Json facts = p.facts;
  derive_facts(facts);
  const Json* v = find_fact(facts, name);
  if (!v) return Json("<absent>");
  // Only spec.k / spec.next_n are taken from the derivation; every other name is the reader's.
  const std::string n(name);
  if (n != "spec.k" && n != "spec.next_n") v = find_fact(p.facts, name);
  return v ? *v : Json("<absent>");
}

std::string where(const ParsedServing& p, const std::string& name) {
  auto it = p.locations.find(name);
  if (it == p.locations.end()) return "<none>";
  const SourceLocation& l = it->second;
  return std::to_string(l.line) + ":" + std::to_string(l.column);
}

const UnknownOption* unknown(const ParsedServing& p, const std::string& name) {
  for (const auto& u : p.unknown)
    if (u.name == name) return &u;
  return nullptr;
}

bool has_note(const ParsedServing& p, const std::string& part) {
  for (const auto& n : p.notes)
    if (n.message.find(part) != std::string::npos) return true;
  return false;
}

// Every fact has a location in the file it came from.
void require_all_located(const ParsedServing& p) {
  const Json flat = flatten_facts(p.facts);
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    const std::string name = it.key();
    if (name.rfind("spec.config.", 0) == 0 || name.rfind("serve.compilation_config.", 0) == 0 ||
        name.rfind("options.given.", 0) == 0 || name.rfind("serve.attention_config.", 0) == 0 ||
        name.rfind("serve.hf_overrides.", 0) == 0)
      continue;  // inside an object fact: located by the object
    INFO(name);
    REQUIRE(p.locations.count(name) == 1);
    CHECK(p.locations.at(name).file == p.path);
  }
}

}  // namespace

TEST_CASE("input form names", "[serving]") {
  CHECK(to_string(InputForm::vllm_yaml) == "vllm-yaml");
  CHECK(to_string(InputForm::vllm_json) == "vllm-json");
  CHECK(to_string(InputForm::vllm_command) == "vllm-command");
  CHECK(to_string(InputForm::sglang_command) == "sglang-command");
}

TEST_CASE("vLLM YAML with JSON strings", "[serving]") {
  const ParsedServing p = read_ok("flat.yaml");
  CHECK(p.form == InputForm::vllm_yaml);
  CHECK(derived_fact(p, "input.form") == "vllm-yaml");
  CHECK(derived_fact(p, "engine.name") == "vllm");
  CHECK(derived_fact(p, "model.id") == "openai/gpt-oss-120b");
  CHECK(derived_fact(p, "serve.tp") == 4);
  CHECK(derived_fact(p, "serve.max_model_len") == 262144);
  CHECK(derived_fact(p, "serve.kv_cache_dtype") == "fp8");
  CHECK(derived_fact(p, "serve.enable_prefix_caching") == false);
  CHECK(derived_fact(p, "spec.enabled") == true);
  CHECK(derived_fact(p, "spec.method") == "eagle3");
  CHECK(derived_fact(p, "spec.k") == 7);
  CHECK(derived_fact(p, "spec.next_n") == 8);
  CHECK(derived_fact(p, "spec.draft_tp") == 1);
  CHECK(derived_fact(p, "spec.draft_model") == "nvidia/gpt-oss-120b-Eagle3-v3");
  CHECK(derived_fact(p, "serve.cudagraph_mode") == "FULL_AND_PIECEWISE");
  CHECK(derived_fact(p, "attention.requested") == "FLASHINFER");
  CHECK(derived_fact(p, "attention.requested_source") == "attention-backend");
  CHECK(derived_fact(p, "serve.dtype") == "auto");
  CHECK(derived_fact(p, "serve.enforce_eager") == false);
  require_all_located(p);
  // inner keys of a JSON string on one line are located exactly
  CHECK(where(p, "spec.k") == "7:63");
  CHECK(where(p, "spec.method") == "7:90");
  CHECK(where(p, "serve.tp") == "3:1");
  CHECK(where(p, "serve.cudagraph_mode") == "8:23");
  const UnknownOption* port = unknown(p, "port");
  REQUIRE(port);
  CHECK(port->value == 8000);
  CHECK(port->where.line == 10);
  const UnknownOption* names = unknown(p, "served-model-name");
  REQUIRE(names);
  CHECK(names->value == Json::array({"gpt", "gpt-oss"}));
}

TEST_CASE("vLLM YAML with nested mappings and underscores", "[serving]") {
  const ParsedServing p = read_ok("nested.yaml");
  CHECK(derived_fact(p, "serve.tp") == 8);
  CHECK(derived_fact(p, "serve.expert_parallel") == true);
  CHECK(derived_fact(p, "serve.enforce_eager") == false);
  CHECK(derived_fact(p, "spec.method") == "mtp");
  CHECK(derived_fact(p, "spec.method_raw") == "deepseek_mtp");
  CHECK(derived_fact(p, "spec.k") == 2);
  CHECK(derived_fact(p, "spec.next_n") == 3);
  CHECK(derived_fact(p, "spec.config")["tensor_parallel_size"] == 8);
  CHECK(derived_fact(p, "serve.max_model_len") == "auto");
  CHECK(derived_fact(p, "attention.requested") == "FLASHMLA");
  CHECK(derived_fact(p, "attention.requested_source") == "attention-config");
  CHECK(where(p, "spec.k") == "7:3");
  CHECK(where(p, "attention.requested") == "10:3");
  CHECK(has_note(p, "draft_tensor_parallel_size"));
  CHECK(has_note(p, "deprecated and replaced with 'mtp'"));
  require_all_located(p);
}

TEST_CASE("vLLM JSON config with dotted keys", "[serving]") {
  const ParsedServing p = read_ok("plan.json");
  CHECK(p.form == InputForm::vllm_json);
  CHECK(derived_fact(p, "input.form") == "vllm-json");
  CHECK(derived_fact(p, "serve.tp") == 2);
  CHECK(derived_fact(p, "spec.method") == "ngram");
  CHECK(derived_fact(p, "spec.k") == 4);
  CHECK(derived_fact(p, "spec.prompt_lookup_max") == 5);
  CHECK(derived_fact(p, "spec.prompt_lookup_min") == 2);
  CHECK(derived_fact(p, "serve.max_num_seqs") == 128);
  CHECK(where(p, "serve.tp") == "3:3");
  CHECK(where(p, "spec.k") == "6:5");
  CHECK(where(p, "spec.prompt_lookup_min") == "9:3");
  REQUIRE(unknown(p, "disable-log-requests"));
  require_all_located(p);
}

TEST_CASE("deploy script: env prefixes, export, continuations, quoted JSON", "[serving]") {
  const ParsedServing p = read_ok("serve.sh");
  CHECK(p.form == InputForm::vllm_command);
  CHECK(derived_fact(p, "model.id") == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(derived_fact(p, "env.HF_HOME") == "/data/hf");
  CHECK(derived_fact(p, "env.CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(derived_fact(p, "env.MODEL") == "<absent>");  // a shell variable, not exported
  CHECK(derived_fact(p, "attention.env_backend") == "FLASH_ATTN");
  CHECK(derived_fact(p, "attention.requested") == "FLASH_ATTN");
  CHECK(derived_fact(p, "attention.requested_source") == "env");
  CHECK(has_note(p, "VLLM_ATTENTION_BACKEND is ignored"));
  CHECK(derived_fact(p, "serve.tp") == 2);
  CHECK(derived_fact(p, "spec.method") == "eagle3");
  CHECK(derived_fact(p, "spec.method_source") == "draft-model-name");
  CHECK(derived_fact(p, "spec.k") == 3);
  CHECK(derived_fact(p, "serve.cudagraph_mode") == "FULL_DECODE_ONLY");
  CHECK(derived_fact(p, "serve.max_model_len") == 1000);
  CHECK(derived_fact(p, "serve.enable_prefix_caching") == false);
  CHECK(derived_fact(p, "serve.gpu_memory_utilization") == 0.85);
  CHECK(where(p, "serve.tp") == "6:3");
  CHECK(where(p, "spec.k") == "7:74");
  CHECK(where(p, "env.CUDA_VISIBLE_DEVICES") == "5:35");
  CHECK(where(p, "model.id") == "4:7");  // where the value of $MODEL is written
  CHECK(where(p, "serve.cudagraph_mode") == "8:3");
  const UnknownOption* port = unknown(p, "port");
  REQUIRE(port);
  CHECK(port->value == "8000");
  CHECK(port->where.line == 11);
  CHECK(p.unknown.size() == 1);  // `| tee serve.log` and the comment are not options
  require_all_located(p);
}

TEST_CASE("docker wrapper, dotted args, -ac/-O aliases", "[serving]") {
  const ParsedServing p = read_ok("docker.sh");
  CHECK(derived_fact(p, "model.id") == "Qwen/Qwen3-30B-A3B");
  CHECK(derived_fact(p, "env.VLLM_USE_V1") == "1");
  CHECK(derived_fact(p, "env.HF_TOKEN") == "x");
  CHECK(derived_fact(p, "spec.method") == "mtp");
  CHECK(derived_fact(p, "spec.k") == 2);
  CHECK(where(p, "spec.k") == "3:5");
  CHECK(derived_fact(p, "attention.requested") == "FLASHINFER");
  CHECK(derived_fact(p, "serve.optimization_level") == 3);
  CHECK(derived_fact(p, "serve.trust_remote_code") == true);
  require_all_located(p);
}

TEST_CASE("SGLang launch_server script", "[serving]") {
  const ParsedServing p = read_ok("sglang.sh");
  CHECK(p.form == InputForm::sglang_command);
  CHECK(derived_fact(p, "input.form") == "sglang-command");
  CHECK(derived_fact(p, "engine.name") == "sglang");
  CHECK(derived_fact(p, "model.id") == "deepseek-ai/DeepSeek-V3");
  CHECK(derived_fact(p, "env.SGLANG_ENABLE_SPEC_V2") == "1");
  CHECK(derived_fact(p, "serve.tp") == 8);
  CHECK(derived_fact(p, "serve.dp") == 2);
  CHECK(derived_fact(p, "serve.dp_attention") == true);
  CHECK(derived_fact(p, "spec.method") == "mtp");
  CHECK(derived_fact(p, "spec.method_raw") == "NEXTN");
  CHECK(derived_fact(p, "spec.num_steps") == 3);
  CHECK(derived_fact(p, "spec.topk") == 1);
  CHECK(derived_fact(p, "spec.num_draft_tokens") == 4);
  CHECK(derived_fact(p, "spec.k") == 3);
  CHECK(derived_fact(p, "spec.next_n") == 4);
  CHECK(derived_fact(p, "attention.requested") == "flashinfer");
  CHECK(derived_fact(p, "serve.kv_cache_dtype") == "fp8_e4m3");
  CHECK(derived_fact(p, "serve.block_size") == 64);
  CHECK(derived_fact(p, "serve.max_model_len") == 32768);
  CHECK(derived_fact(p, "serve.max_num_seqs") == 64);
  CHECK(derived_fact(p, "serve.enforce_eager") == true);
  CHECK(derived_fact(p, "serve.gpu_memory_utilization") == 0.8);
  CHECK(derived_fact(p, "serve.quantization") == "fp8");
  CHECK(where(p, "serve.tp") == "2:3");
  CHECK(where(p, "spec.k") == "4:3");
  REQUIRE(unknown(p, "host"));
  require_all_located(p);
}

TEST_CASE("SGLang: k from num_steps when draft tokens are not given", "[serving]") {
  auto r = read_serving_argv({"sglang", "serve", "--model-path", "m", "--speculative-algorithm", "EAGLE3",
                              "--speculative-num-steps", "5", "--speculative-draft-model-path", "d"});
  REQUIRE(r.has_value());
  CHECK(derived_fact(*r, "spec.method") == "eagle3");
  CHECK(derived_fact(*r, "spec.k") == 5);
  CHECK(derived_fact(*r, "spec.draft_model") == "d");
}

TEST_CASE("argv form", "[serving]") {
  auto r = read_serving_argv({"VLLM_USE_V1=1", "vllm", "serve", "m", "--speculative-config",
                              R"({"method":"mtp","num_speculative_tokens":1})", "-dp", "2", "-ep", "--custom-flag"});
  INFO((r ? std::string() : r.error().str()));
  REQUIRE(r.has_value());
  CHECK(r->form == InputForm::vllm_command);
  CHECK(r->path == "<command line>");
  CHECK(derived_fact(*r, "env.VLLM_USE_V1") == "1");
  CHECK(derived_fact(*r, "model.id") == "m");
  CHECK(derived_fact(*r, "spec.k") == 1);
  CHECK(derived_fact(*r, "serve.dp") == 2);
  CHECK(derived_fact(*r, "serve.expert_parallel") == true);
  CHECK(r->locations.at("model.id").column == 26);
  CHECK(r->locations.at("spec.k").file == "<command line>");
  // No release knows --custom-flag: SP1014 reports it (options.given), not a "not modelled" note.
  CHECK_FALSE(unknown(*r, "custom-flag"));
  CHECK(r->facts["options"]["given"].back()["flag"] == "--custom-flag");
  require_all_located(*r);
}

TEST_CASE("legacy top-level speculative options", "[serving]") {
  auto r = read_serving_argv({"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "t",
                              "--speculative-model", "[ngram]", "--num-speculative-tokens", "5"});
  REQUIRE(r.has_value());
  CHECK(derived_fact(*r, "model.id") == "t");
  CHECK(derived_fact(*r, "spec.enabled") == true);
  CHECK(derived_fact(*r, "spec.k") == 5);
  CHECK(has_note(*r, "was removed from vLLM"));
}

TEST_CASE("spec.k = 0 passes through - no speculative config -> spec.enabled false", "[serving]") {
  auto r = read_serving_argv({"vllm", "serve", "m", "--speculative-config.num_speculative_tokens", "0"});
  REQUIRE(r.has_value());
  CHECK(derived_fact(*r, "spec.k") == 0);
  auto off = read_serving_argv({"vllm", "serve", "m"});
  REQUIRE(off.has_value());
  CHECK(derived_fact(*off, "spec.enabled") == false);
  CHECK(derived_fact(*off, "serve.cudagraph_mode") == nullptr);
}

TEST_CASE("the same plan as YAML, JSON and a command line gives the same facts", "[serving]") {
  auto strip = [](ParsedServing p) {
    p.facts.erase("input");
    p.facts.erase("deploy");            // the deploy file itself (deploy.server: the command's line)
    p.facts["options"].erase("given");  // the options as written differ by form (keys vs --flags)
    return p.facts;
  };
  const Json yaml = strip(read_ok("same.yaml"));
  const Json json = strip(read_ok("same.json"));
  const Json cmd = strip(read_ok("same.sh"));
  CHECK(yaml.dump(1) == json.dump(1));
  CHECK(yaml.dump(1) == cmd.dump(1));
  CHECK(derived_fact(read_ok("same.yaml"), "spec.k") == 3);
}

TEST_CASE("malformed input is an input error naming file and line", "[serving]") {
  struct Case {
    const char* file;
    int line;
    const char* text;
  };
  for (const Case& c :
       {Case{"bad/bad.yaml", 3, "invalid YAML"}, Case{"bad/bad.json", 4, "invalid JSON"},
        Case{"bad/inner_json.yaml", 2, "invalid JSON in speculative-config"},
        Case{"bad/negative_k.yaml", 4, "non-negative integer"}, Case{"bad/fraction_k.yaml", 4, "non-negative integer"},
        Case{"bad/word_k.json", 2, "non-negative integer"}, Case{"bad/unterminated.sh", 2, "unterminated single quote"},
        Case{"bad/binary.yaml", 2, "binary"}, Case{"bad/latin1.yaml", 1, "UTF-8"},
        Case{"bad/empty.yaml", 0, "empty file"}, Case{"bad/toplist.yaml", 1, "list"},
        Case{"bad/spec_list.yaml", 2, "got a list"}, Case{"bad/no_command.sh", 1, "no serve command"},
        Case{"bad/no_command.txt", 1, "no serve command"}, Case{"bad/deep.yaml", 1, "deeper"},
        Case{"bad/missing.yaml", 0, "cannot open"}}) {
    auto r = read_serving_file(fixture(c.file));
    INFO(c.file);
    REQUIRE_FALSE(r.has_value());
    const Error& e = r.error();
    INFO(e.str());
    CHECK(e.kind == ErrorKind::input);
    CHECK(e.message.find(c.text) != std::string::npos);
    CHECK(e.where.file == fixture(c.file));
    CHECK(e.where.line == c.line);
    CHECK(e.str().find(c.file) != std::string::npos);
    if (c.line > 0) CHECK(e.str().find(fixture(c.file) + ":" + std::to_string(c.line)) != std::string::npos);
  }
}

TEST_CASE("unterminated quote names line and column", "[serving]") {
  auto r = read_serving_file(fixture("bad/unterminated.sh"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where.column == 24);
}

TEST_CASE("argv errors", "[serving]") {
  auto none = read_serving_argv({"python", "app.py"});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().kind == ErrorKind::input);
  auto bad = read_serving_argv({"vllm", "serve", "m", "--speculative-config", "{not json"});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().kind == ErrorKind::input);
  CHECK(bad.error().where.line == 1);
  auto neg = read_serving_argv({"vllm", "serve", "m", "--speculative-config.num_speculative_tokens", "-2"});
  REQUIRE_FALSE(neg.has_value());
  CHECK(neg.error().kind == ErrorKind::input);
}

TEST_CASE("serving: --config inside a command is read, the command line wins", "[serving]") {
  const ParsedServing p = read_ok("with_config.sh");
  CHECK(p.form == InputForm::vllm_command);
  CHECK(derived_fact(p, "serve.tp") == 4);
  CHECK(where(p, "serve.tp") == "2:42");
  CHECK(derived_fact(p, "spec.k") == 3);
  CHECK(p.locations.at("spec.k").file == fixture("same.yaml"));
  CHECK(derived_fact(p, "model.id") == "org/target");
}

TEST_CASE("YAML flow mapping in a .yaml file", "[serving]") {
  const ParsedServing p = read_ok("flow.yaml");
  CHECK(p.form == InputForm::vllm_yaml);
  CHECK(derived_fact(p, "model.id") == "org/flow");
  CHECK(derived_fact(p, "serve.tp") == 2);
}

TEST_CASE("dotted list append and duplicate notes", "[serving]") {
  auto r = read_serving_argv({"vllm", "serve", "m", "-cc.cudagraph_capture_sizes+", "1,2",
                              "-cc.cudagraph_capture_sizes+=4", "--max-num-seqs", "8", "--max-num-seqs", "16"});
  REQUIRE(r.has_value());
  CHECK(derived_fact(*r, "serve.cudagraph_capture_sizes") == Json::array({1, 2, 4}));
  CHECK(derived_fact(*r, "serve.max_num_seqs") == 16);
  CHECK(has_note(*r, "max-num-seqs is given 2 times; the last value wins"));
}

TEST_CASE("random and mutated input never crashes", "[serving]") {
  // Property check: any bytes give a plan or an input error, never an exception or a crash.
  const std::string dir = (std::filesystem::temp_directory_path() / "specprobe-serving-fuzz").string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> seeds;
  for (const char* name : {"flat.yaml", "nested.yaml", "plan.json", "serve.sh", "docker.sh", "sglang.sh"}) {
    std::ifstream in(fixture(name), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::mt19937 rng(12345);
  static const char kAlphabet[] = "{}[]\"'\\\n :,-=.$#x0\xff";
  for (int round = 0; round < 300; ++round) {
    std::string text = seeds[round % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = kAlphabet[rng() % (sizeof kAlphabet - 1)];
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, kAlphabet[rng() % (sizeof kAlphabet - 1)]);
          break;
      }
    }
    const std::string ext = round % 3 == 0 ? ".yaml" : round % 3 == 1 ? ".json" : ".sh";
    const std::string path = dir + "/case" + ext;
    std::ofstream(path, std::ios::binary) << text;
    auto r = read_serving_file(path);
    if (!r) CHECK(r.error().kind == ErrorKind::input);
    std::vector<std::string> argv;
    std::string word;
    for (char c : text) {
      if (c == ' ' || c == '\n') {
        argv.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    auto a = read_serving_argv(argv);
    if (!a) CHECK(a.error().kind == ErrorKind::input);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a serve command run through an unset variable named for the engine", "[serving]") {
  const ParsedServing p = read_ok("serve-engine-variable.sh");
  CHECK(p.form == InputForm::vllm_command);
  CHECK(derived_fact(p, "model.id") == "microsoft/Phi-3-mini-4k-instruct");
  CHECK(derived_fact(p, "serve.max_model_len") == 4096);
  CHECK(derived_fact(p, "serve.gpu_memory_utilization") == 0.85);
  CHECK(where(p, "serve.max_model_len") == "7:3");
  CHECK(has_note(p, "`$VLLM serve` is read as `vllm serve`"));
  // A variable named for no engine starts nothing that can be told.
  CHECK(p.unknown.empty());
}
