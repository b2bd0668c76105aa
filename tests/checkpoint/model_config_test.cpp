// read_model_config / model_facts / parse_json_relaxed against verbatim config.json copies,
// an HF-cache layout built here with symlinks, Python-style NaN/Infinity, and malformed files.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "e2e/run_binary.hpp"
#include "inputs/checkpoint/model_config.hpp"
#include "inputs/text/json_relaxed.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

using specprobe::test::write_bytes;

namespace {

const std::string kModelConfigData = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/";

struct ModelTempDir {
  fs::path path;
  ModelTempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("specprobe-mc-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~ModelTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

ModelConfig must_read(const std::string& p) {
  auto r = read_model_config(p);
  INFO((r ? std::string() : r.error().str()));
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("json_relaxed accepts Python's non-finite tokens", "[model_config][json_relaxed]") {
  auto r =
      parse_json_relaxed(R"({"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "s": "NaN Infinity", "d": 1})", "x.json");
  REQUIRE(r);
  CHECK(r->value["a"][1].get<double>() == kRelaxedInfinity);
  CHECK(r->value["b"].get<double>() == -kRelaxedInfinity);
  CHECK(r->value["c"].is_null());
  CHECK(r->value["s"] == "NaN Infinity");
  CHECK(r->value["d"] == 1);
  REQUIRE(r->non_finite.size() == 3);
  CHECK(r->non_finite[0].token == "Infinity");
  CHECK(r->non_finite[0].column == 13);
  CHECK(r->non_finite[2].token == "NaN");
}

TEST_CASE("json_relaxed errors carry file:line:col of the original text", "[model_config][json_relaxed]") {
  auto r = parse_json_relaxed("{\n  \"a\": NaN,\n  \"b\": tru\n}", "cfg.json");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::input);
  CHECK(r.error().where.file == "cfg.json");
  CHECK(r.error().where.line == 3);
  CHECK(r.error().where.column >= 8);
  // After a NaN on the same line the column still points into the original text.
  auto r2 = parse_json_relaxed(R"({"a": NaN, "b": @})", "c.json");
  REQUIRE_FALSE(r2);
  CHECK(r2.error().where.line == 1);
  CHECK(r2.error().where.column == 17);
  // Identifiers that merely start with a token are not rewritten.
  CHECK_FALSE(parse_json_relaxed(R"({"a": NaNx})", "c.json"));
  CHECK_FALSE(parse_json_relaxed(R"({"a": Infinity2})", "c.json"));
  CHECK_FALSE(parse_json_relaxed("", "c.json"));
}

TEST_CASE("json_relaxed never crashes on random bytes", "[model_config][json_relaxed]") {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":,NaIfinty-0123456789.eE \n\\tru";
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) s.push_back(alphabet[rng() % alphabet.size()]);
    auto r = parse_json_relaxed(s, "r.json");
    if (!r) CHECK(r.error().kind == ErrorKind::input);
  }
}

TEST_CASE("model_config: DeepSeek-V3 (MLA, fp8 block, MTP 1)", "[model_config]") {
  auto c = must_read(kModelConfigData + "deepseek-v3");
  CHECK(c.architecture == "DeepseekV3ForCausalLM");
  CHECK(c.model_type == "deepseek_v3");
  CHECK(c.mla);
  CHECK_FALSE(c.dsa);
  CHECK(c.head_dim == 576);
  CHECK(c.mtp_depth == 1);
  CHECK(c.quant_method == "fp8");
  Json f = model_facts(c, 8);
  CHECK(f["model"]["num_attention_heads"] == 128);
  CHECK(f["model"]["num_kv_heads"] == 128);
  CHECK(f["model"]["gqa_ratio"] == 1);
  CHECK(f["model"]["mla_dims"]["kv_lora_rank"] == 512);
  CHECK(f["model"]["dsa"]["present"] == false);
  CHECK(f["model"]["num_hidden_layers"] == 61);
  CHECK(f["model"]["dtype"] == "bfloat16");
  CHECK(f["model"]["kv_cache_scheme"] == false);
}

TEST_CASE("model_config: DeepSeek-V3.2 has a DSA indexer", "[model_config]") {
  Json f = model_facts(must_read(kModelConfigData + "deepseek-v3.2/config.json"), 8);
  CHECK(f["model"]["dsa"]["present"] == true);
  CHECK(f["model"]["dsa"]["index_n_heads"] == 64);
  CHECK(f["model"]["dsa"]["index_head_dim"] == 128);
  CHECK(f["model"]["dsa"]["index_topk"] == 2048);
  CHECK(f["model"]["model_type"] == "deepseek_v32");
}

TEST_CASE("model_config: DeepSeek-V4-Flash is MLA-like with head_dim 512", "[model_config]") {
  auto c = must_read(kModelConfigData + "deepseek-v4-flash");
  Json f = model_facts(c, 4);
  CHECK(f["model"]["mla"] == true);
  CHECK(f["model"]["head_dim"] == 512);
  CHECK(f["model"]["num_kv_heads"] == 1);
  CHECK(f["model"]["gqa_ratio"] == 16);  // 64/4 q heads per rank over max(1, 1/4) kv
  CHECK(f["model"]["gqa_ratio_global"] == 64);
  CHECK(f["model"]["mtp_depth"] == 1);
  CHECK(f["model"]["num_hidden_layers"] == 43);
  CHECK(f["model"]["dsa"]["present"] == true);
  CHECK(f["model"]["quant_method"] == "fp8");
}

TEST_CASE("model_config: Kimi-K2.5 keeps LM params and quant config under text_config", "[model_config]") {
  auto c = must_read(kModelConfigData + "kimi-k2.5");
  CHECK(c.has_text_config);
  CHECK(c.quant_method == "compressed-tensors");
  CHECK(c.quant_config_source == "text_config.quantization_config");
  CHECK(c.num_hidden_layers == 61);
  CHECK(c.mla);
  CHECK(c.mtp_depth == 0);
  CHECK(c.dtype == "bfloat16");
}

TEST_CASE("model_config: Qwen3.6 NVFP4 (text_config, mtp_num_hidden_layers, ModelOpt)", "[model_config]") {
  auto c = must_read(kModelConfigData + "nvidia-qwen3.6-35b-a3b-nvfp4");
  Json f = model_facts(c, 2);
  CHECK(f["model"]["model_type"] == "qwen3_5_moe");
  CHECK(f["model"]["architecture"] == "Qwen3_5MoeForConditionalGeneration");
  CHECK(f["model"]["mtp_depth"] == 1);
  CHECK(f["model"]["head_dim"] == 256);
  CHECK(f["model"]["gqa_ratio"] == 8);
  CHECK(f["model"]["quant_method"] == "modelopt");
  CHECK(f["model"]["num_hidden_layers"] == 40);
}

TEST_CASE("model_config: a gated-DeltaNet hybrid's state dimensions, layers from layer_types or the interval",
          "[model_config]") {
  // Qwen3.6-35B-A3B-NVFP4: 40 layers, layer_types with every fourth full attention: 30 linear, 10 full.
  auto f = model_facts(must_read(kModelConfigData + "nvidia-qwen3.6-35b-a3b-nvfp4"), 2);
  const Json& g = f["model"]["gdn_state"];
  CHECK(g["linear_layers"] == 30);
  CHECK(g["full_layers"] == 10);
  CHECK(g["num_key_heads"] == 16);
  CHECK(g["num_value_heads"] == 32);
  CHECK(g["key_head_dim"] == 128);
  CHECK(g["value_head_dim"] == 128);
  CHECK(g["conv_kernel"] == 4);
  // Without layer_types, full_attention_interval 4 over 48 layers (Qwen3-Next's config): 12 full.
  ModelTempDir t;
  write_bytes(t.path / "config.json",
              R"({"model_type": "qwen3_next", "num_hidden_layers": 48, "num_attention_heads": 16,
                  "num_key_value_heads": 2, "hidden_size": 2048, "full_attention_interval": 4,
                  "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
                  "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4})");
  const Json n = model_facts(must_read(t.path.string()), 1)["model"]["gdn_state"];
  CHECK(n["linear_layers"] == 36);
  CHECK(n["full_layers"] == 12);
  CHECK(n["ssm_dtype"].is_null());
  // A model without linear-attention dimensions has none.
  CHECK(model_facts(must_read(kModelConfigData + "llama-3.1-8b"), 1)["model"]["gdn_state"].is_null());
}

TEST_CASE("model_config: a size the file leaves out is the transformers class default the engine builds with",
          "[model_config]") {
  // google/gemma-3-27b-it's config.json has no vocab_size: Gemma3TextConfig's default, 262,208.
  auto c = must_read(std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/google--gemma-3-27b-it");
  CHECK(c.vocab_size == 262208);
  Json f = model_facts(c, 2);
  CHECK(f["model"]["vocab_size"] == 262208);
}

TEST_CASE("model_config: gpt-oss, Llama and an EAGLE3 draft", "[model_config]") {
  auto g = model_facts(must_read(kModelConfigData + "gpt-oss-20b"), 1);
  CHECK(g["model"]["quant_method"] == "mxfp4");
  CHECK(g["model"]["gqa_ratio"] == 8);
  CHECK(g["model"]["mtp_depth"].is_null());
  CHECK(g["model"]["dtype"].is_null());  // not in this config: unknown, not guessed
  auto l = model_facts(must_read(kModelConfigData + "llama-3.1-8b"), 16);
  CHECK(l["model"]["head_dim"] == 128);  // 4096 / 32
  CHECK(l["model"]["gqa_ratio"] == 2);   // 32/16 = 2 q per rank, kv 8/16 -> 1
  CHECK(l["model"]["gqa_ratio_global"] == 4);
  CHECK(l["model"]["quant_method"].is_null());
  auto t3 = model_facts(must_read(kModelConfigData + "llama-3.1-8b"), 3);
  CHECK(t3["model"]["gqa_ratio"] == 4);  // 32/3 over 8/3
  auto e = model_facts(must_read(kModelConfigData + "eagle3-llama3.1-8b-draft"), 1);
  CHECK(e["model"]["architecture"] == "LlamaForCausalLMEagle3");
  CHECK(e["model"]["num_hidden_layers"] == 1);
}

TEST_CASE("model_config: HF cache layout with symlinks into blobs", "[model_config]") {
  ModelTempDir t;
  const fs::path repo = t.path / "models--deepseek-ai--DeepSeek-V3";
  fs::create_directories(repo / "blobs");
  fs::copy_file(kModelConfigData + "deepseek-v3/config.json", repo / "blobs" / "aaaa1111");
  write_bytes(repo / "blobs" / "bbbb2222", R"({"architectures": ["Old"], "num_attention_heads": 8})");
  fs::create_directories(repo / "snapshots" / "rev1");
  fs::create_directories(repo / "snapshots" / "rev2");
  fs::create_symlink("../../blobs/aaaa1111", repo / "snapshots" / "rev1" / "config.json");
  fs::create_symlink("../../blobs/bbbb2222", repo / "snapshots" / "rev2" / "config.json");

  SECTION("refs/main wins") {
    write_bytes(repo / "refs" / "main", "rev1\n");
    auto c = must_read(repo.string());
    CHECK(c.snapshot == "rev1");
    CHECK(c.snapshot_choice == "refs/main");
    CHECK(c.architecture == "DeepseekV3ForCausalLM");
    Json f = model_facts(c, 1);
    CHECK(f["model"]["hf_cache"]["snapshot"] == "rev1");
    CHECK_FALSE(c.notes.empty());
  }
  SECTION("no refs: the newest snapshot") {
    const auto now = fs::file_time_type::clock::now();
    fs::last_write_time(repo / "snapshots" / "rev1", now - std::chrono::hours(2));
    fs::last_write_time(repo / "snapshots" / "rev2", now);
    auto c = must_read(repo.string());
    CHECK(c.snapshot == "rev2");
    CHECK(c.snapshot_choice == "newest");
    CHECK(c.architecture == "Old");
  }
  SECTION("a single snapshot") {
    fs::remove_all(repo / "snapshots" / "rev2");
    auto c = must_read(repo.string());
    CHECK(c.snapshot == "rev1");
    CHECK(c.snapshot_choice == "only");
  }
  SECTION("a snapshot dir given directly") {
    auto c = must_read((repo / "snapshots" / "rev1").string());
    CHECK(c.cache_repo.empty());
    CHECK(c.model_type == "deepseek_v3");
  }
}

TEST_CASE("model_config: Nemotron-H style Infinity and NaN are accepted and recorded", "[model_config]") {
  ModelTempDir t;
  write_bytes(t.path / "config.json", R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "num_hidden_layers": 52,
    "num_nextn_predict_layers": 1, "time_step_limit": [0.0, Infinity], "rescale": NaN, "low": -Infinity})");
  auto c = must_read(t.path.string());
  CHECK(c.non_finite.size() == 3);
  CHECK(c.mtp_depth == 1);
  Json f = model_facts(c, 2);
  CHECK(f["model"]["non_finite_values"] == 3);
  CHECK(f["model"]["gqa_ratio"] == 4);
}

TEST_CASE("model_config: malformed inputs are input errors naming the file", "[model_config]") {
  ModelTempDir t;
  auto expect_error = [](const std::string& p, const std::string& file_part, int line = 0) {
    auto r = read_model_config(p);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::input);
    CHECK(r.error().where.file.find(file_part) != std::string::npos);
    if (line) CHECK(r.error().where.line == line);
  };
  expect_error((t.path / "missing").string(), "missing");
  fs::create_directories(t.path / "empty");
  expect_error((t.path / "empty").string(), "empty");
  write_bytes(t.path / "bad" / "config.json", "{\n \"a\": 1,\n \"b\": }\n");
  expect_error((t.path / "bad").string(), "bad/config.json", 3);
  write_bytes(t.path / "list" / "config.json", "[1, 2]");
  expect_error((t.path / "list").string(), "list/config.json");
  write_bytes(t.path / "tc" / "config.json", R"({"text_config": [1]})");
  expect_error((t.path / "tc").string(), "tc/config.json");
  write_bytes(t.path / "qc" / "config.json", R"({"quantization_config": ["fp8"]})");
  expect_error((t.path / "qc").string(), "qc/config.json");
  write_bytes(t.path / "heads" / "config.json", R"({"num_attention_heads": "32"})");
  expect_error((t.path / "heads").string(), "heads/config.json");
  write_bytes(t.path / "arch" / "config.json", R"({"architectures": "Llama"})");
  expect_error((t.path / "arch").string(), "arch/config.json");
  write_bytes(t.path / "hq" / "config.json", R"({"num_attention_heads": 4})");
  write_bytes(t.path / "hq" / "hf_quant_config.json", R"([])");
  expect_error((t.path / "hq").string(), "hf_quant_config.json");
  fs::create_directories(t.path / "dirconf" / "config.json");
  expect_error((t.path / "dirconf").string(), "config.json");
  write_bytes(t.path / "emptyfile" / "config.json", "");
  expect_error((t.path / "emptyfile").string(), "emptyfile/config.json");
}

TEST_CASE("model_config: hf_quant_config.json supplies ModelOpt quantization", "[model_config]") {
  ModelTempDir t;
  write_bytes(t.path / "config.json", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_size": 8192})");
  write_bytes(t.path / "hf_quant_config.json", R"({"producer": {"name": "modelopt", "version": "0.19"},
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}})");
  auto c = must_read(t.path.string());
  CHECK(c.quant_method == "modelopt");
  CHECK(c.quant_config_source == "hf_quant_config.json");
  CHECK(c.kv_cache_scheme);
}

TEST_CASE("model_config: sizes no engine builds are input errors naming the field", "[model_config]") {
  ModelTempDir t;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 0})", "num_attention_heads = 0"},
      {R"({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 64})",
       "num_key_value_heads = 64 exceeds"},
      {R"({"model_type": "llama", "hidden_size": -4096})", "hidden_size = -4096"},
      {R"({"model_type": "x", "text_config": {"num_hidden_layers": -1}})", "text_config.num_hidden_layers = -1"},
  };
  int i = 0;
  for (const auto& [json, want] : cases) {
    const fs::path d = t.path / std::to_string(i++);
    write_bytes(d / "config.json", json);
    auto r = read_model_config(d.string());
    INFO(json);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::input);
    CHECK(r.error().message.find(want) != std::string::npos);
    CHECK(r.error().message.find("corrupt config.json") != std::string::npos);
    CHECK(r.error().where.file == (d / "config.json").string());
  }
}

TEST_CASE("model_config: values the engines accept are never corrupt: beyond today's models is a note",
          "[model_config]") {
  ModelTempDir t;
  auto read = [&](const std::string& name, const std::string& json) {
    write_bytes(t.path / name / "config.json", json);
    auto r = read_model_config((t.path / name).string());
    INFO(json << " " << (r ? std::string() : r.error().str()));
    REQUIRE(r);
    return *r;
  };
  const ModelConfig big =
      read("big", R"({"model_type": "llama", "num_hidden_layers": 2000000000, "num_attention_heads": 32})");
  CHECK(big.num_hidden_layers == 2000000000);
  REQUIRE(big.notes.size() == 1);
  CHECK(big.notes[0].find("num_hidden_layers = 2000000000 is beyond every released model") != std::string::npos);
  const ModelConfig zero = read("zero", R"({"model_type": "x", "text_config": {"num_hidden_layers": 0}})");
  CHECK_FALSE(zero.num_hidden_layers);
  CHECK(zero.notes.back().find("text_config.num_hidden_layers = 0") != std::string::npos);
  CHECK(read("deep", R"({"model_type": "deepseek_v3", "num_nextn_predict_layers": 9223372036854775807})").mtp_depth);
  // An MLA config's head_dim is not what the engine sizes heads by: 0 (or a stale value) is fine,
  // and the head size is the latent one (kv_lora_rank + qk_rope_head_dim), as vLLM's get_head_size.
  const ModelConfig mla = read("mla", R"({"model_type": "glm_moe_dsa", "num_attention_heads": 64, "head_dim": 0,
                                          "kv_lora_rank": 512, "qk_rope_head_dim": 64})");
  CHECK(mla.head_dim == 576);
  CHECK(mla.notes.empty());
  CHECK(read("glm", R"({"model_type": "glm_moe_dsa", "num_attention_heads": 64, "head_dim": 192, "kv_lora_rank": 512,
                        "qk_rope_head_dim": 64})")
            .head_dim == 576);
}

TEST_CASE("model_config: has_mtp_layers from the depth keys and the engine's defaults", "[model_config]") {
  ModelTempDir t;
  auto facts = [&](const std::string& name, const std::string& json) {
    write_bytes(t.path / name / "config.json", json);
    return model_facts(must_read((t.path / name).string()), 1)["model"];
  };
  CHECK(facts("ds", R"({"model_type": "deepseek_v3", "num_nextn_predict_layers": 1})")["has_mtp_layers"] == true);
  CHECK(facts("q35", R"({"model_type": "qwen3_5", "text_config": {"mtp_num_hidden_layers": 1}})")["has_mtp_layers"] ==
        true);
  CHECK(facts("zero", R"({"model_type": "deepseek_v3", "num_nextn_predict_layers": 0})")["has_mtp_layers"] == false);
  CHECK(facts("llama", R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})")["has_mtp_layers"] == false);
  CHECK(facts("longcat", R"({"model_type": "longcat_flash"})")["has_mtp_layers"] == true);  // vLLM defaults n_predict 1
}

TEST_CASE("model_config: a repo id is looked up in the local HF cache, never the network", "[model_config][hf_cache]") {
  ModelTempDir t;
  const fs::path hub = t.path / "hub";
  const fs::path repo = hub / "models--org--model";
  write_bytes(repo / "refs" / "main", "bbbb\n");
  write_bytes(repo / "snapshots" / "aaaa" / "config.json", R"({"model_type": "llama", "num_hidden_layers": 1})");
  write_bytes(repo / "snapshots" / "bbbb" / "config.json", R"({"model_type": "llama", "num_hidden_layers": 2})");
  struct Env {
    std::string name;
    std::optional<std::string> old;
    Env(const char* n, const std::string& v) : name(n) {
      if (const char* o = std::getenv(n)) old = o;
      ::setenv(n, v.c_str(), 1);
    }
    ~Env() {
      if (old)
        ::setenv(name.c_str(), old->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  };
  {
    Env cache("HF_HUB_CACHE", hub.string());
    std::string looked;
    auto found = find_in_hf_cache("org/model", &looked);
    REQUIRE(found);
    CHECK(*found == repo.string());
    CHECK(looked == hub.string());
    auto cfg = must_read(*found);
    CHECK(cfg.snapshot == "bbbb");  // refs/main wins
    CHECK(cfg.num_hidden_layers == 2);
    CHECK_FALSE(find_in_hf_cache("org/other"));
    CHECK_FALSE(find_in_hf_cache("/abs/path"));
    CHECK_FALSE(find_in_hf_cache("org/../model"));
  }
  {
    Env home("HF_HOME", t.path.string());
    Env none("HF_HUB_CACHE", "");
    auto found = find_in_hf_cache("org/model");  // HF_HOME/hub
    REQUIRE(found);
    CHECK(*found == repo.string());
  }
  CHECK(looks_like_repo_id("deepseek-ai/DeepSeek-V3"));
  CHECK_FALSE(looks_like_repo_id("./llama"));
  CHECK_FALSE(looks_like_repo_id("a/b/c"));
}
