// analyze_checkpoint and the safetensors header reader on checkpoints the tests write themselves:
// the DeepSeek-V4-Flash W4A16/FP8 + BF16-MTP case with an on-disk-name ignore list and its
// corrected twin, Llama/DeepSeek-V3/Qwen3.5 shapes, every bad-input case of issue 4, and a check
// that analysis leaves the checkpoint tree untouched.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "fixture_writer.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/checkpoint/quant_config.hpp"
#include "inputs/checkpoint/safetensors.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::test;
using specprobe::checkpoint::dtype_bits;
using specprobe::checkpoint::parse_safetensors_header;
using specprobe::checkpoint::read_safetensors_header;

namespace {

const Json kVllmNew = {{"engine", {{"name", "vllm"}}}, {"lib", {{"vllm", {{"version", "0.24.0"}}}}}};

CheckpointAnalysis must_analyze(const fs::path& dir, const Json& facts = kVllmNew) {
  auto r = analyze_checkpoint(dir.string(), facts);
  INFO((r ? std::string() : r.error().str()));
  REQUIRE(r);
  return *r;
}

bool has_code(const CheckpointAnalysis& a, const std::string& code) {
  for (const Json& p : a.facts["checkpoint"]["problems"])
    if (p["code"] == code) return true;
  return false;
}

std::vector<std::string> runtimes(const Json& list) {
  std::vector<std::string> out;
  for (const Json& e : list) out.push_back(e.is_string() ? e.get<std::string>() : e["runtime"].get<std::string>());
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every file under DIR: path -> (size, mtime, is symlink).
std::map<std::string, std::tuple<uintmax_t, fs::file_time_type, bool>> snapshot_tree(const fs::path& dir) {
  std::map<std::string, std::tuple<uintmax_t, fs::file_time_type, bool>> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const bool link = it->is_symlink();
    out[it->path().string()] = {link || it->is_directory() ? 0 : it->file_size(),
                                link ? fs::file_time_type{} : it->last_write_time(), link};
  }
  return out;
}

}  // namespace

TEST_CASE("safetensors: every dtype of the format has its bit width", "[checkpoint][safetensors]") {
  const std::map<std::string, int> expect = {
      {"BOOL", 8},    {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6},     {"U8", 8},          {"I8", 8},
      {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},
      {"U16", 16},    {"F16", 16},    {"BF16", 16},   {"I32", 32},        {"U32", 32},        {"F32", 32},
      {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64}};
  for (const auto& [d, b] : expect) CHECK(dtype_bits(d) == b);
  CHECK_FALSE(dtype_bits("F128"));
  CHECK_FALSE(dtype_bits("bf16"));
}

TEST_CASE("safetensors: a written header reads back", "[checkpoint][safetensors]") {
  TempDir t;
  std::vector<T> ts;
  for (const auto& d : {"BOOL",    "F4",          "F6_E2M3",     "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                        "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16",     "U16", "F16", "BF16",    "I32",
                        "U32",     "F32",         "C64",         "F64",     "I64", "U64"})
    ts.push_back({std::string("t.") + d, d, {4, 8}});
  ts.push_back({"scalar", "F32", {}});
  ts.push_back({"empty", "BF16", {0, 5}});
  ts.push_back({"caf\xc3\xa9\\\"q", "F32", {1}});
  write_shard(t.path / "model.safetensors", ts);
  auto r = read_safetensors_header((t.path / "model.safetensors").string());
  INFO(r.error.message);
  REQUIRE(r.header);
  CHECK(r.header->tensors.size() == ts.size());
  CHECK(r.header->metadata.at("format") == "pt");
}

TEST_CASE("safetensors: names are unescaped in place and survive moving the header", "[checkpoint][safetensors]") {
  const std::string json =
      R"({"__metadata__": {"format": "pt"}, "caf\u00e9.\"q\\.\ud83d\ude00.weight": {"dtype": "F\u0033\u0032", "shape": [2, 3], )"
      R"("data_offsets": [8, 32]}, "b": {"shape": [2], "shape": [1, 2], "dtype": "F32", "data_offsets": [0, 8]}})";
  auto r = parse_safetensors_header(json, json.size(), 8 + json.size() + 32);
  INFO(r.error.message);
  REQUIRE(r.header);
  auto moved = std::move(r.header);
  const checkpoint::ShardHeader h = std::move(*moved);
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.tensors[0].name == "caf\xc3\xa9.\"q\\.\xf0\x9f\x98\x80.weight");
  CHECK(h.tensors[0].dtype == "F32");
  CHECK(std::vector<uint64_t>(h.shape(h.tensors[0]).begin(), h.shape(h.tensors[0]).end()) ==
        std::vector<uint64_t>{2, 3});
  CHECK(h.tensors[1].name == "b");
  // A repeated key: the last one counts, as before.
  CHECK(std::vector<uint64_t>(h.shape(h.tensors[1]).begin(), h.shape(h.tensors[1]).end()) ==
        std::vector<uint64_t>{1, 2});
  CHECK(h.metadata.at("format") == "pt");
}

TEST_CASE("safetensors: header validation like the reference reader", "[checkpoint][safetensors]") {
  auto check = [](const std::string& json, uint64_t data, const std::string& code) {
    auto r = parse_safetensors_header(json, json.size(), 8 + json.size() + data);
    INFO(json);
    REQUIRE_FALSE(r.header);
    CHECK(r.error.code == code);
  };
  check("[1]", 0, "not_object");
  check(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
      16, "duplicate_tensor");
  check(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
      12, "invalid_offset");
  check(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})",
      20, "invalid_offset");
  check(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12, "invalid_offset");
  check(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8, "tensor_invalid_info");
  check(R"({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2, "misaligned_slice");
  check(R"({"a": {"dtype": "F6_E2M3", "shape": [3], "data_offsets": [0, 3]}})", 3, "misaligned_slice");
  check(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 2], "data_offsets": [0, 8]}})", 8,
        "validation_overflow");
  check(R"({"a": {"dtype": "F64", "shape": [1152921504606846976, 2], "data_offsets": [0, 8]}})", 8,
        "validation_overflow");
  check(R"({"a": {"dtype": "F128", "shape": [2], "data_offsets": [0, 8]}})", 8, "unknown_dtype");
  check(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 9, "incomplete_buffer");
  check(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8, "invalid_tensor_info");
  check(R"({"a": {"dtype": "F32", "shape": [2]}})", 8, "invalid_tensor_info");
  check(R"({"__metadata__": {"format": 1}})", 0, "invalid_metadata");
  check(R"({"__metadata__": {"format": {"x": "y"}}})", 0, "invalid_metadata");
  check(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})", 8, "invalid_json");
  check(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}} x)", 8, "invalid_json");
  check("{\"\xff\xfe\": 1}", 0, "invalid_utf8");
  // Accepted: padding spaces, zero tensors, unknown extra keys in an entry.
  std::string padded = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "extra": [1, {"b": null}]}})";
  padded += "      ";
  CHECK(parse_safetensors_header(padded, padded.size(), 8 + padded.size() + 8).header);
  CHECK(parse_safetensors_header("{}", 2, 10).header);
}

TEST_CASE("safetensors: random corruptions never crash", "[checkpoint][safetensors]") {
  std::mt19937 rng(11);
  const std::string base =
      R"({"__metadata__": {"format": "pt"}, "model.layers.0.mlp.down_proj.weight": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}})";
  for (int i = 0; i < 3000; ++i) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          s.erase(pos, 1 + rng() % 5);
          break;
        default:
          s.insert(pos, 1, "{}[]\",:0123456789"[rng() % 17]);
      }
      if (s.empty()) s = "{";
    }
    auto r = parse_safetensors_header(s, s.size(), 8 + s.size() + 64);
    CHECK((r.header.has_value() || !r.error.code.empty()));
  }
}

TEST_CASE("checkpoint: DeepSeek-V4 W4A16/FP8 with BF16 MTP and on-disk-name ignores", "[checkpoint]") {
  TempDir t;
  write_dsv4(t.path, true);
  auto a = must_analyze(t.path);
  const Json& ck = a.facts["checkpoint"];
  const Json& q = a.facts["quant"];
  INFO(a.facts.dump(2));
  CHECK(ck["problem_count"] == 0);
  CHECK(ck["shards"] == 2);
  CHECK(ck["arch_table"] == "deepseek_v4");
  CHECK(ck["mtp"]["present"] == true);
  CHECK(ck["mtp"]["layers_present"] == Json{0});
  CHECK(q["method"] == "compressed-tensors");

  // Ignore entries in on-disk names match no runtime module.
  std::map<std::string, Json> unmatched;
  for (const Json& e : q["ignore_unmatched"]) unmatched[e["entry"]] = e;
  CHECK(unmatched.count("re:.*mtp\\..*"));
  CHECK(unmatched["re:.*mtp\\..*"]["on_disk_match"] == true);
  CHECK(unmatched.count("layers.0.ffn.shared_experts.w1"));
  CHECK(unmatched["layers.0.ffn.shared_experts.w1"]["mapped"] == "model.layers.0.ffn.shared_experts.w1");
  CHECK(unmatched.count("layers.0.ffn.shared_experts.w3"));
  CHECK(unmatched.count("layers.5.attn.compressor.fused_wkv_wgate"));
  // The mapper renames w2 -> down_proj and a literal fused compressor name does reach the runtime.
  CHECK_FALSE(unmatched.count("layers.0.ffn.shared_experts.w2"));
  CHECK_FALSE(unmatched.count("layers.0.attn.compressor.fused_wkv_wgate"));
  CHECK_FALSE(unmatched.count("lm_head"));

  // The MTP block is BF16 without scales while the config quantizes model.layers.2.*.
  auto mism = runtimes(q["stored_mismatch"]);
  CHECK(contains(mism, "model.layers.2.attn.wo_a"));
  CHECK(contains(mism, "model.layers.2.attn.fused_wqa_wkv"));
  CHECK(contains(mism, "model.layers.2.ffn.experts"));
  CHECK_FALSE(contains(mism, "model.layers.0.attn.wo_a"));
  auto mtp_unq = runtimes(q["mtp_unquantized_layers"]);
  CHECK(contains(mtp_unq, "model.layers.2.attn.wo_a"));
  CHECK(contains(mtp_unq, "model.layers.2.ffn.experts"));
  CHECK_FALSE(q["mtp_differs"].empty());

  // wo_a: MTP BF16 (no scale at all) and main compressed-tensors FP8 (weight_scale, not _inv).
  auto sim = runtimes(q["scale_inv_missing"]);
  CHECK(contains(sim, "model.layers.2.attn.wo_a"));
  CHECK(contains(sim, "model.layers.0.attn.wo_a"));
  CHECK(runtimes(q["scale_inv_missing_unquantized"]) == std::vector<std::string>{"model.layers.2.attn.wo_a"});

  // Shared experts w1/w3 are not ignored at runtime (gate_up_proj) and match no target.
  CHECK(contains(runtimes(q["unmatched_layers"]), "model.layers.0.ffn.shared_experts.gate_up_proj"));
  // e_proj/h_proj: matched as "" before vllm#44821: no target matches "" -> raised before #41965.
  CHECK(q["empty_prefix"]["modules"] == Json{"mtp.0.e_proj", "mtp.0.h_proj"});
  CHECK(q["empty_prefix"]["before_41965"] == "raises");
  CHECK(q["empty_prefix"]["before_44821"] == "ok");
  CHECK(q["never_quantized_stored_quantized"].empty());

  // The summary per group.
  CHECK(a.summary["mtp"]["schemes"]["bf16"].get<int>() > 0);
  CHECK_FALSE(a.summary["mtp"]["schemes"].contains("int_packed"));
  CHECK(a.summary["main"]["schemes"]["int_packed"] == 12);
  CHECK(a.summary["main"]["scale_tensors"]["weight_shape"] == 12);
  CHECK(a.summary["lm_head"]["weight_dtypes"]["F32"] == 1);
}

TEST_CASE("checkpoint: the corrected DeepSeek-V4 twin is clean", "[checkpoint]") {
  TempDir t;
  write_dsv4(t.path, false);
  auto a = must_analyze(t.path);
  const Json& q = a.facts["quant"];
  INFO(a.facts.dump(2));
  CHECK(a.facts["checkpoint"]["problem_count"] == 0);
  CHECK(q["ignore_unmatched"].empty());
  CHECK(q["stored_mismatch"].empty());
  CHECK(q["mtp_unquantized_layers"].empty());
  CHECK(q["mtp_differs"].empty());
  CHECK(q["fused_disagree"].empty());
  CHECK(q["scale_inv_missing_unquantized"].empty());
  CHECK(q["unmatched_layers"].empty());
  // compressed-tensors FP8 still stores weight_scale, not weight_scale_inv (needs the engine fallback).
  CHECK(q["scale_inv_missing"].size() == 3);
  // e_proj/h_proj are ignored by name at runtime, but "" matches nothing before vllm#41965.
  CHECK(q["empty_prefix"]["before_41965"] == "raises");
  CHECK(q["empty_prefix"]["before_44821"] == "ok");
}

TEST_CASE("checkpoint: SGLang matches ignore entries as substrings", "[checkpoint]") {
  TempDir t;
  write_dsv4(t.path, true);
  auto a = must_analyze(t.path, Json{{"engine", {{"name", "sglang"}}}});
  std::set<std::string> unmatched;
  for (const Json& e : a.facts["quant"]["ignore_unmatched"]) unmatched.insert(e["entry"]);
  CHECK(a.facts["quant"]["engine"] == "sglang");
  CHECK(unmatched.count("re:.*mtp\\..*"));
  CHECK(unmatched.count("layers.0.ffn.shared_experts.w1"));  // not mapped by SGLang here: w1 is not in gate_up_proj
  CHECK(unmatched.count("layers.5.attn.compressor.fused_wkv_wgate"));
}

TEST_CASE("checkpoint: DeepSeek-V3 fp8 block with a quantized eh_proj and fused shards that disagree", "[checkpoint]") {
  TempDir t;
  std::vector<T> s;
  auto fp8b = [&](const std::string& m) {
    s.push_back({m + ".weight", "F8_E4M3", {256, 256}});
    s.push_back({m + ".weight_scale_inv", "F32", {2, 2}});
  };
  for (int l : {0, 1}) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    fp8b(p + "self_attn.q_a_proj");
    if (l == 0)
      fp8b(p + "self_attn.kv_a_proj_with_mqa");
    else
      s.push_back({p + "self_attn.kv_a_proj_with_mqa.weight", "BF16", {256, 256}});
    fp8b(p + "self_attn.o_proj");
    fp8b(p + "mlp.gate_proj");
    fp8b(p + "mlp.up_proj");
    fp8b(p + "mlp.down_proj");
  }
  fp8b("model.layers.2.self_attn.q_a_proj");
  fp8b("model.layers.2.self_attn.kv_a_proj_with_mqa");
  fp8b("model.layers.2.eh_proj");
  s.push_back({"model.embed_tokens.weight", "BF16", {512, 256}});
  s.push_back({"lm_head.weight", "BF16", {512, 256}});
  write_shard(t.path / "model.safetensors", s);
  write_text(t.path / "config.json", Json{{"architectures", {"DeepseekV3ForCausalLM"}},
                                          {"model_type", "deepseek_v3"},
                                          {"num_hidden_layers", 2},
                                          {"num_nextn_predict_layers", 1},
                                          {"num_attention_heads", 128},
                                          {"kv_lora_rank", 512},
                                          {"qk_rope_head_dim", 64},
                                          {"quantization_config",
                                           {{"quant_method", "fp8"},
                                            {"activation_scheme", "dynamic"},
                                            {"weight_block_size", {128, 128}},
                                            {"ignore", {"lm_head"}}}}}
                                         .dump());
  auto a = must_analyze(t.path);
  const Json& q = a.facts["quant"];
  INFO(a.facts.dump(2));
  CHECK(q["unread_ignore_key"] == "ignore");
  CHECK(a.facts["checkpoint"]["mtp"]["layers_present"] == Json{0});
  CHECK(contains(runtimes(q["never_quantized_stored_quantized"]), "model.layers.2.eh_proj"));
  CHECK(contains(runtimes(q["fused_disagree"]), "model.layers.1.self_attn.fused_qkv_a_proj"));
  CHECK_FALSE(contains(runtimes(q["stored_mismatch"]), "lm_head"));
  CHECK(a.summary["main"]["schemes"]["fp8_block"].get<int>() >= 10);
}

TEST_CASE("checkpoint: Llama FP8 with ignored_layers fused shards disagreeing in the config", "[checkpoint]") {
  TempDir t;
  std::vector<T> s;
  for (const char* m : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    s.push_back({std::string("model.layers.0.self_attn.") + m + ".weight", "F8_E4M3", {64, 64}});
    s.push_back({std::string("model.layers.0.self_attn.") + m + ".weight_scale", "F32", {}});
  }
  s.push_back({"lm_head.weight", "BF16", {100, 64}});
  write_shard(t.path / "model.safetensors", s);
  write_text(t.path / "config.json",
             Json{{"architectures", {"LlamaForCausalLM"}},
                  {"model_type", "llama"},
                  {"num_hidden_layers", 1},
                  {"quantization_config",
                   {{"quant_method", "fp8"},
                    {"activation_scheme", "static"},
                    {"ignored_layers", {"model.layers.0.self_attn.q_proj", "model.layers.9.mlp.down_proj"}}}}}
                 .dump());
  auto a = must_analyze(t.path);
  const Json& q = a.facts["quant"];
  INFO(a.facts.dump(2));
  bool ignore_disagree = false;
  for (const Json& e : q["fused_disagree"])
    ignore_disagree =
        ignore_disagree || (e["reason"] == "ignore" && e["runtime"] == "model.layers.0.self_attn.qkv_proj");
  CHECK(ignore_disagree);
  REQUIRE(q["ignore_unmatched"].size() == 1);
  CHECK(q["ignore_unmatched"][0]["entry"] == "model.layers.9.mlp.down_proj");
}

TEST_CASE("checkpoint: quantization config formats", "[checkpoint][quant_config]") {
  using checkpoint::parse_quant_config;
  using checkpoint::SkipMatch;
  auto ct = parse_quant_config(Json::parse(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group"}},
                        "a": {"targets": ["LlamaAttention"], "weights": {"num_bits": 8}}},
      "ignore": ["lm_head", "re:.*self_attn.*"], "kv_cache_scheme": {"num_bits": 8, "type": "float"}})"),
                               "quantization_config", "llama");
  CHECK(ct.skip_match == SkipMatch::exact_or_re);
  CHECK(ct.groups.size() == 1);
  CHECK(ct.groups[0].format == "pack-quantized");
  CHECK(ct.kv_cache_scheme);
  auto fp8 = parse_quant_config(Json::parse(R"({"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3",
      "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]})"),
                                "quantization_config", "deepseek_v4");
  CHECK(fp8.effective_method == "deepseek_v4_fp8");
  CHECK(fp8.skip_key == "modules_to_not_convert");
  CHECK(fp8.weight_block_size == std::vector<int>{128, 128});
  auto mo = parse_quant_config(Json::parse(R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4",
      "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head", "mtp*"]}})"),
                               "hf_quant_config.json", "qwen3_5_moe");
  CHECK(mo.effective_method == "modelopt_fp4");
  CHECK(mo.skip_match == SkipMatch::modelopt);
  CHECK(mo.kv_cache_scheme);
  auto awq =
      parse_quant_config(Json::parse(R"({"quant_method": "awq", "bits": 4, "modules_to_not_convert": ["visual"]})"),
                         "quantization_config", "");
  CHECK(awq.skip_match == SkipMatch::substring);
  auto gptq = parse_quant_config(Json::parse(R"({"quant_method": "gptq", "bits": 4, "lm_head": true,
      "dynamic": {"-:.*mtp.*": {}, "+:.*down_proj": {"bits": 8}}})"),
                                 "quantization_config", "");
  CHECK(gptq.lm_head_quantized);
  CHECK(gptq.gptq_dynamic_exclude == std::vector<std::string>{".*mtp.*"});
  auto mx = parse_quant_config(
      Json::parse(R"({"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]})"),
      "quantization_config", "gpt_oss");
  CHECK(mx.experts_only);
  CHECK(mx.unread_skip_key == "modules_to_not_convert");
  auto bnb = parse_quant_config(
      Json::parse(R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "llm_int8_skip_modules": ["lm_head"]})"),
      "quantization_config", "");
  CHECK(bnb.skip_match == SkipMatch::bnb_component);
}

TEST_CASE("checkpoint: gpt-oss MXFP4 experts and Qwen3.6 ModelOpt on real configs", "[checkpoint]") {
  TempDir t;
  fs::copy_file(std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/gpt-oss-20b/config.json",
                t.path / "config.json");
  std::vector<T> s = {{"model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", {32, 5760, 90, 16}},
                      {"model.layers.0.mlp.experts.gate_up_proj_scales", "U8", {32, 5760, 90}},
                      {"model.layers.0.mlp.experts.down_proj_blocks", "U8", {32, 2880, 90, 16}},
                      {"model.layers.0.mlp.experts.down_proj_scales", "U8", {32, 2880, 90}},
                      {"model.layers.0.self_attn.q_proj.weight", "BF16", {4096, 2880}},
                      {"model.layers.0.self_attn.k_proj.weight", "BF16", {512, 2880}},
                      {"model.layers.0.self_attn.v_proj.weight", "BF16", {512, 2880}},
                      {"model.layers.0.mlp.router.weight", "BF16", {32, 2880}},
                      {"lm_head.weight", "BF16", {201088, 2880}}};
  write_shard(t.path / "model.safetensors", s);
  auto a = must_analyze(t.path);
  INFO(a.facts.dump(2));
  CHECK(a.facts["quant"]["method"] == "mxfp4");
  CHECK(a.facts["quant"]["stored_mismatch"].empty());
  CHECK(a.summary["main"]["schemes"]["mxfp4_blocks"] == 2);
  CHECK(a.summary["main"]["schemes"]["bf16"] == 4);  // q, k, v and the router

  TempDir q;
  for (const char* f : {"config.json", "hf_quant_config.json"})
    fs::copy_file(std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/nvidia-qwen3.6-35b-a3b-nvfp4/" + f,
                  q.path / f);
  write_shard(q.path / "model.safetensors",
              {{"model.language_model.layers.0.mlp.experts.0.gate_proj.weight", "U8", {512, 1024}},
               {"model.language_model.layers.0.mlp.experts.0.gate_proj.weight_scale", "F8_E4M3", {512, 128}},
               {"mtp.fc.weight", "BF16", {2048, 4096}},
               {"mtp.layers.0.self_attn.q_proj.weight", "BF16", {4096, 2048}}});
  auto b = must_analyze(q.path);
  INFO(b.facts.dump(2));
  CHECK(b.facts["checkpoint"]["arch_table"] == "qwen3_5");
  CHECK(b.facts["checkpoint"]["mtp"]["present"] == true);
  CHECK(b.facts["quant"]["method"] == "modelopt");
  CHECK(b.summary["mtp"]["modules"] == 2);
}

TEST_CASE("checkpoint: bad inputs are findings naming the file, never crashes", "[checkpoint]") {
  TempDir t;
  const fs::path d = t.path / "ck";
  write_text(d / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1})");
  const std::vector<T> good = {{"model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}}};
  const std::string tiny = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

  write_shard(d / "truncated.safetensors", good);
  fs::resize_file(d / "truncated.safetensors", fs::file_size(d / "truncated.safetensors") - 10);
  std::ofstream(d / "short.safetensors", std::ios::binary) << "abc";
  write_raw_shard(d / "beyond.safetensors", 4096, tiny, 8);
  write_raw_shard(d / "cap.safetensors", 200'000'000, tiny, 8);
  write_raw_shard(d / "utf8.safetensors", 6, "{\"\xc3\x28\":1", 0);
  write_raw_shard(d / "list.safetensors", 2, "[]", 0);
  const std::string overlap =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  write_raw_shard(d / "overlap.safetensors", overlap.size(), overlap, 12);
  const std::string gap =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})";
  write_raw_shard(d / "gap.safetensors", gap.size(), gap, 24);
  const std::string ovf = R"({"a":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}})";
  write_raw_shard(d / "overflow.safetensors", ovf.size(), ovf, 8);
  const std::string unk = R"({"a":{"dtype":"Q4_K","shape":[2],"data_offsets":[0,8]}})";
  write_raw_shard(d / "dtype.safetensors", unk.size(), unk, 8);
  const std::string dup =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  write_raw_shard(d / "dup.safetensors", dup.size(), dup, 16);
  write_shard(d / "good.safetensors", good);
  write_shard(d / "partial.safetensors", {{"model.layers.0.mlp.down_proj.weight", "BF16", {8, 8}}});
  fs::create_directories(t.path / "outside");
  write_shard(t.path / "outside" / "evil.safetensors", good);
  fs::create_symlink("../outside/evil.safetensors", d / "escape.safetensors");
  Json wm = {{"model.layers.0.self_attn.o_proj.weight", "good.safetensors"},
             {"model.layers.0.mlp.up_proj.weight", "partial.safetensors"},  // the shard lacks it
             {"x1", "../outside/evil.safetensors"},
             {"x2", (t.path / "outside" / "evil.safetensors").string()},
             {"x3", "missing-00009.safetensors"},
             {"x4", "escape.safetensors"}};
  for (const char* f :
       {"truncated", "short", "beyond", "cap", "utf8", "list", "overlap", "gap", "overflow", "dtype", "dup"})
    wm[std::string("t.") + f] = std::string(f) + ".safetensors";
  write_text(d / "model.safetensors.index.json", Json{{"weight_map", wm}}.dump());

  const auto before = snapshot_tree(t.path);
  auto a = must_analyze(d);
  INFO(a.facts["checkpoint"].dump(2));
  const std::map<std::string, std::string> expect = {{"incomplete_buffer", "truncated.safetensors"},
                                                     {"header_too_small", "short.safetensors"},
                                                     {"invalid_header_length", "beyond.safetensors"},
                                                     {"header_too_large", "cap.safetensors"},
                                                     {"invalid_utf8", "utf8.safetensors"},
                                                     {"not_object", "list.safetensors"},
                                                     {"invalid_offset", "overlap.safetensors"},
                                                     {"validation_overflow", "overflow.safetensors"},
                                                     {"unknown_dtype", "dtype.safetensors"},
                                                     {"duplicate_tensor", "dup.safetensors"},
                                                     {"weight_map_escape", "model.safetensors.index.json"},
                                                     {"weight_map_absolute", "model.safetensors.index.json"},
                                                     {"missing_shard", "missing-00009.safetensors"},
                                                     {"symlink_escape", "escape.safetensors"},
                                                     {"index_tensor_missing", "partial.safetensors"},
                                                     {"tensor_not_in_index", "partial.safetensors"}};
  for (const auto& [code, file] : expect) {
    bool found = false;
    for (const Json& p : a.facts["checkpoint"]["problems"])
      if (p["code"] == code && p["file"].get<std::string>().find(file) != std::string::npos) found = true;
    INFO(code);
    CHECK(found);
  }
  CHECK(has_code(a, "invalid_offset"));
  CHECK(a.facts["checkpoint"]["index"]["missing_in_shards"] == Json{"model.layers.0.mlp.up_proj.weight"});
  CHECK(a.facts["checkpoint"]["shards_valid"] == 2);
  // Nothing in the tree changed: same files, sizes and mtimes, nothing new.
  CHECK(snapshot_tree(t.path) == before);
}

TEST_CASE("checkpoint: index quirks are read as the SAX reader reads them", "[checkpoint]") {
  TempDir t;
  auto make = [&](const std::string& name, const std::string& index) {
    const fs::path d = t.path / name;
    write_text(d / "config.json",
               R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1})");
    write_shard(d / "s1.safetensors", {{"model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}},
                                       {"model.layers.0.mlp.down_proj.weight", "BF16", {8, 8}}});
    write_text(d / "model.safetensors.index.json", index);
    return must_analyze(d);
  };
  auto codes = [](const CheckpointAnalysis& a, const std::string& code) {
    std::vector<std::string> out;
    for (const CheckpointNote& n : a.notes)
      if (n.code == code) out.push_back(n.message);
    return out;
  };
  // Repeated names (the last file counts), values that are not strings, escapes in names and file
  // names, a float total_size (ignored), a second weight_map object (read too).
  auto q = make(
      "quirks",
      R"({"metadata":{"total_size":1.0e3,"x":[1,{"total_size":5}]},"weight_map":{)"
      R"("model.layers.0.self_attn.o_proj.weight":"s1.safetensors",)"
      R"("model.layers.0.mlp.down_proj.weight":"s2.safetensors","model.layers.0.mlp.down_proj.weight":"s1.safetensors",)"
      R"("bad":[1,2],"worse":{"a":"b"},"n":null,"esc\u00e9\n":"s\u0031.safetensors"},"weight_map":{"late":"s1.safetensors"}}  )");
  const Json& qi = q.facts["checkpoint"]["index"];
  INFO(q.facts["checkpoint"].dump(2));
  CHECK(qi["weight_map_entries"] == 5);
  CHECK_FALSE(qi.contains("total_size"));
  CHECK(qi["missing_in_shards"] == Json{"esc\xc3\xa9\n", "late"});
  CHECK(qi["not_in_index_count"] == 0);
  CHECK(codes(q, "index_invalid") == std::vector<std::string>{"weight_map entry 'bad' is not a string",
                                                              "weight_map entry 'worse' is not a string",
                                                              "weight_map entry 'n' is not a string"});
  CHECK(codes(q, "missing_shard") == std::vector<std::string>{"shard 's2.safetensors' does not exist"});
  // total_size: -0 is the integer 0 to nlohmann; a number past uint64 is a float and ignored.
  auto n = make(
      "negzero",
      R"({"metadata":{"total_size":-0,"total_size":18446744073709551616},"weight_map":{)"
      R"("model.layers.0.self_attn.o_proj.weight":"s1.safetensors","model.layers.0.mlp.down_proj.weight":"s1.safetensors"}})");
  CHECK(n.facts["checkpoint"]["index"]["total_size"] == 0);
  CHECK(n.facts["checkpoint"]["problem_count"] == 0);
  // Invalid JSON is worded by nlohmann, without its exception prefix and with the last-read
  // token cut to an excerpt (SECURITY.md).
  auto b = make("bad", R"({"metadata":{"total_size":01},"weight_map":{"a":"s1.safetensors"}})");
  const auto bad = codes(b, "index_invalid");
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].find("invalid JSON at byte 28: syntax error while parsing object - unexpected") == 0);
  CHECK(bad[0].find("[json.exception") == std::string::npos);
  auto m = make("nomap", R"({"metadata":{},"weight_map":[]})");
  CHECK(codes(m, "index_invalid") == std::vector<std::string>{"index has no weight_map object"});
}

TEST_CASE("checkpoint: corrupted indexes are rejected exactly when nlohmann rejects them", "[checkpoint]") {
  TempDir t;
  const fs::path d = t.path / "ck";
  write_text(d / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1})");
  write_shard(d / "s1.safetensors", {{"model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}}});
  const std::string base =
      R"({"metadata": {"total_size": 128}, "weight_map": {"model.layers.0.self_attn.o_proj.weight": "s1.safetensors", "x\u00e9": "s1.safetensors"}})";
  std::mt19937 rng(7);
  for (int i = 0; i < 400; ++i) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[pos] = "{}[]\",:0123456789.eE+-\\u \xff\x01tfn"[rng() % 30];
          break;
        case 1:
          s.erase(pos, 1 + rng() % 3);
          break;
        default:
          s.insert(pos, 1, "{}[]\",:0123456789.eE+-\\u \xc3tfn"[rng() % 29]);
      }
      if (s.empty()) s = "{";
    }
    write_text(d / "model.safetensors.index.json", s);
    auto a = must_analyze(d);
    const Json parsed = Json::parse(s, nullptr, false);
    const bool object_with_map = !parsed.is_discarded() && parsed.is_object() && parsed.contains("weight_map") &&
                                 parsed["weight_map"].is_object();
    bool invalid = false;
    for (const CheckpointNote& n : a.notes)
      if (n.code == "index_invalid" && n.message.rfind("weight_map entry", 0) != 0) invalid = true;
    INFO(s);
    // nlohmann's DOM keeps the last of repeated keys; the readers accept a weight_map object anywhere
    // among them, so only a DOM that shows one is a sure "valid".
    if (parsed.is_discarded()) CHECK(invalid);
    if (object_with_map) CHECK_FALSE(invalid);
  }
}

TEST_CASE("checkpoint: HF cache layout with symlinks into blobs/", "[checkpoint]") {
  TempDir t;
  const fs::path repo = t.path / "models--deepseek-ai--DeepSeek-V4-Flash";
  TempDir src;
  write_dsv4(src.path, true);
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / "abc123");
  write_text(repo / "refs" / "main", "abc123");
  int i = 0;
  for (const auto& e : fs::directory_iterator(src.path)) {
    const std::string blob = "blob" + std::to_string(i++);
    fs::copy_file(e.path(), repo / "blobs" / blob);
    fs::create_symlink("../../blobs/" + blob, repo / "snapshots" / "abc123" / e.path().filename());
  }
  const auto before = snapshot_tree(t.path);
  auto a = must_analyze(repo);
  INFO(a.facts["checkpoint"].dump(2));
  CHECK(a.facts["checkpoint"]["problem_count"] == 0);
  CHECK(a.facts["checkpoint"]["hf_cache"] == true);
  CHECK(a.facts["checkpoint"]["shards_valid"] == 2);
  CHECK_FALSE(a.facts["quant"]["ignore_unmatched"].empty());
  CHECK(snapshot_tree(t.path) == before);
}

TEST_CASE("checkpoint: missing directory and missing config are input errors", "[checkpoint]") {
  TempDir t;
  auto r = analyze_checkpoint((t.path / "nope").string(), Json::object());
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::input);
  write_shard(t.path / "model.safetensors", {{"a.weight", "BF16", {2, 2}}});
  auto r2 = analyze_checkpoint(t.path.string(), Json::object());
  REQUIRE_FALSE(r2);
  CHECK(r2.error().where.file.find(t.path.string()) != std::string::npos);
}

TEST_CASE("checkpoint: metadata only (config.json and the index, no shards) is one note, not an error",
          "[checkpoint]") {
  // What CI keeps of a checkpoint: the header checks are skipped with one note (this was SP2001
  // "shard does not exist" per shard and verdict not-supported).
  TempDir t;
  const fs::path d = t.path / "meta";
  write_text(d / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1,
                                    "quantization_config": {"quant_method": "fp8", "ignored_layers": ["lm_head"]}})");
  write_index(d, {{"model-00001-of-00002.safetensors", {{"model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}}}},
                  {"model-00002-of-00002.safetensors", {{"lm_head.weight", "BF16", {8, 8}}}}});
  auto a = must_analyze(d);
  INFO(a.facts["checkpoint"].dump(2));
  CHECK(a.facts["checkpoint"]["metadata_only"] == true);
  CHECK(a.facts["checkpoint"]["problem_count"] == 0);
  CHECK(a.facts["quant"].value("ignore_unmatched_count", 0) == 0);
  size_t notes = 0;
  for (const CheckpointNote& n : a.notes) {
    CHECK(n.severity != "error");
    if (n.code == "metadata_only") {
      ++notes;
      CHECK(n.message.find("names 2 shard files and none is present") != std::string::npos);
    }
  }
  CHECK(notes == 1);

  // Missing SOME shards while others exist stays an error for each missing one.
  const fs::path p = t.path / "partial";
  write_text(p / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1})");
  const std::vector<T> s1 = {{"model.layers.0.self_attn.o_proj.weight", "BF16", {8, 8}}};
  write_index(p, {{"model-00001-of-00002.safetensors", s1},
                  {"model-00002-of-00002.safetensors", {{"lm_head.weight", "BF16", {8, 8}}}}});
  write_shard(p / "model-00001-of-00002.safetensors", s1);
  auto b = must_analyze(p);
  CHECK(b.facts["checkpoint"]["metadata_only"] == false);
  CHECK(b.facts["checkpoint"]["problem_count"] == 1);
  CHECK(has_code(b, "missing_shard"));

  // An unsafe weight_map path is still reported in a metadata-only checkpoint.
  const fs::path e = t.path / "escape";
  write_text(e / "config.json",
             R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1})");
  write_text(e / "model.safetensors.index.json",
             R"({"weight_map": {"a": "../elsewhere.safetensors", "b": "model.safetensors"}})");
  auto c = must_analyze(e);
  CHECK(c.facts["checkpoint"]["metadata_only"] == true);
  CHECK(has_code(c, "weight_map_escape"));
}
