// The memory model against hand-computed figures: the weights inventory from config.json (the
// bundled Llama-3.1-8B example) and from safetensors headers (the seed-004 DeepSeek-V4-Flash-MTP
// fixture), split per rank as the engines split them, and the KV cache per token.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "../checkpoint/fixture_writer.hpp"
#include "../support/fixture_plan.hpp"
#include "facts/derive.hpp"
#include "inputs/checkpoint/checkpoint.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

Json weights_of(const std::string& dir) {
  auto a = analyze_checkpoint(dir, Json::object());
  REQUIRE(a.has_value());
  REQUIRE(a->facts["checkpoint"].contains("weights"));
  return a->facts["checkpoint"]["weights"];
}

uint64_t bytes(const Json& j, const char* key) { return j.at(key).get<uint64_t>(); }

}  // namespace

TEST_CASE("memory: Llama-3.1-8B's weights from its config.json are its 8,030,261,248 parameters", "[facts][memory]") {
  const Json w = weights_of(std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/llama-3.1-8b");
  CHECK(w["source"] == "config");
  // Per layer: q 4096x4096, k and v 4096x1024 each, o 4096x4096, gate/up/down 3 x 4096x14336, two
  // norms of 4096; 32 layers; embedding and head 128256 x 4096 each; the final norm.
  const Json& l = w["layers"];
  CHECK(bytes(l, "attn") == 32ull * 2 * 4096 * 4096 * 2);
  CHECK(bytes(l, "kv_proj") == 32ull * 2 * 4096 * 1024 * 2);
  CHECK(bytes(l, "dense") == 32ull * 3 * 4096 * 14336 * 2);
  CHECK(bytes(l, "replicated") == 32ull * 2 * 4096 * 2);
  CHECK(bytes(w, "embed") == 128256ull * 4096 * 2);
  CHECK(bytes(w, "lm_head") == 128256ull * 4096 * 2);
  CHECK(bytes(w, "bytes") == 8030261248ull * 2);
}

TEST_CASE("memory: Llama-3.1-8B on one H100 and at TP 2 with an fp8 KV cache", "[facts][memory]") {
  Json f =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  specprobe::testing::derive_plan(f);
  const Json& m = f["memory"];
  REQUIRE(m["modelled"] == true);
  CHECK(m["weights_bytes"] == 16060522496);                // whole: 128256 is a multiple of 64
  CHECK(m["kv_bytes_per_token"] == 32 * 2 * 8 * 128 * 2);  // 32 layers x K and V x 8 heads x 128 x bf16
  CHECK(m["budget_bytes"] == static_cast<int64_t>(std::llround(0.92 * 84943585280.0)));
  CHECK(m["status"] == "fits");

  Json g =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  g["serve"]["tp"] = 2;
  g["serve"]["kv_cache_dtype"] = "fp8";
  specprobe::testing::derive_plan(g);
  const Json& h = g["memory"];
  // Everything split in two but the norms (32 x 2 x 4096 x 2 bytes and the final norm's 8192).
  const int64_t norms = 32 * 2 * 4096 * 2 + 8192;
  CHECK(h["weights_bytes"] == (16060522496 - norms) / 2 + norms);
  CHECK(h["kv_bytes_per_token"] == 32 * 2 * 4 * 128 * 1);  // 4 KV heads per rank, one byte each
}

TEST_CASE("memory: the seed-004 checkpoint's headers by sharding class, and per rank at TP 8", "[facts][memory]") {
  specprobe::test::TempDir tmp;
  specprobe::test::write_dsv4(tmp.path, true);
  const Json w = weights_of(tmp.path.string());
  CHECK(w["source"] == "headers");
  // Hand-counted from write_dsv4 (kH = 128; fp8 module = 128x128 bytes + one f32 scale = 16388;
  // bf16 module = 32768; W4 expert matrix = 8192 + 256 + 16 = 8464), per decoder layer:
  //   attn             wkv, wq_b, wo_a, wo_b (fp8) + compressor wkv, wgate (bf16)      4 x 16388 + 2 x 32768
  //   attn_replicated  wq_a (fp8), indexer wq_b (fp8), indexer weights_proj (bf16)   2 x 16388 + 32768
  //   experts          2 experts x w1, w2, w3 (W4)                                   6 x 8464
  //   dense            shared experts w1, w2, w3 (bf16)                              3 x 32768
  //   replicated       gate 2x128 bf16, attn_norm, ffn_norm, attn_sink (4 x f32)     512 + 256 + 256 + 16
  const Json& l = w["layers"];
  CHECK(bytes(l, "attn") == 2 * (4 * 16388 + 2 * 32768));
  CHECK(bytes(l, "attn_replicated") == 2 * (2 * 16388 + 32768));
  CHECK(bytes(l, "experts") == 2 * 6 * 8464);
  CHECK(bytes(l, "dense") == 2 * 3 * 32768);
  CHECK(bytes(l, "replicated") == 2 * (512 + 256 + 256 + 16));
  // The broken checkpoint's MTP block is all bf16: 5 attention matrices, 6 experts, 3 shared,
  // e_proj and h_proj (plain linear layers: replicated), three norms; its own head and embedding
  // are the target's (not counted).
  const Json& t = w["mtp"];
  CHECK(bytes(t, "attn") == 4 * 32768);
  CHECK(bytes(t, "attn_replicated") == 32768);
  CHECK(bytes(t, "experts") == 6 * 32768);
  CHECK(bytes(t, "dense") == 3 * 32768);
  CHECK(bytes(t, "replicated") == 512 + 256 + 256 + 16 + 2 * 32768 + 3 * 256);
  CHECK(bytes(w, "embed") == 256 * 128 * 2);
  CHECK(bytes(w, "lm_head") == 256 * 128 * 4);
  CHECK(bytes(w, "other") == 256);  // the final norm

  // TP 8 with MTP on 8 x H200: the split classes divide by 8, embedding and head pad 256 rows (a
  // multiple of 64) and divide by 8, the replicated classes stay whole.
  Json f = Json::object();
  f["engine"]["name"] = "vllm";
  f["lib"]["vllm"]["version"] = "0.33.0";
  f["gpu"]["declared"] = "H200";
  f["model"] = {{"model_type", "deepseek_v4"}, {"num_hidden_layers", 2}, {"hidden_size", 128},
                {"num_kv_heads", 1},           {"mtp_depth", 1},         {"mla", false},
                {"dsa", {{"present", true}}}};
  f["checkpoint"]["weights"] = w;
  f["serve"] = {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"kv_cache_dtype", "auto"}};
  f["spec"] = {{"enabled", true}, {"method", "mtp"}, {"num_speculative_tokens", 1}};
  specprobe::testing::derive_plan(f);
  const Json& m = f["memory"];
  REQUIRE(m["modelled"] == true);
  const double target = (2.0 * (4 * 16388 + 2 * 32768)) / 8 + 2 * (2 * 16388 + 32768) + (2.0 * 6 * 8464) / 8 +
                        (2.0 * 3 * 32768) / 8 + 2 * (512 + 256 + 256 + 16) + (256.0 * 128 * 2) / 8 +
                        (256.0 * 128 * 4) / 8 + 256;
  CHECK(m["weights_bytes"] == std::llround(target));
  const double drafter =
      (4.0 * 32768) / 8 + 32768 + (6.0 * 32768) / 8 + (3.0 * 32768) / 8 + (512 + 256 + 256 + 16 + 2 * 32768 + 3 * 256);
  CHECK(m["drafter_bytes"] == std::llround(drafter));
  // DeepSeek-V4's compressed KV layout is not modelled: the tokens stay unknown, said so.
  CHECK(m["kv_tokens"].is_null());
  CHECK(m["breakdown"]["kv_not_modelled"].get<std::string>().find("DeepSeek-V4") != std::string::npos);
}

TEST_CASE("memory: a multimodal NVFP4 export's excluded attention (model.language_model.* names) is priced unquantized",
          "[facts][memory]") {
  // nvidia/Gemma-4-31B-IT-NVFP4 excludes every layer's self_attn, named the multimodal way
  // ("model.language_model.layers.N.self_attn*"); vLLM maps the list to its runtime names and
  // keeps attention in BF16. The same config without its quantization config prices attention
  // the same, and the MLPs larger (they stay NVFP4 in the export).
  const fs::path src = fs::path(SPECPROBE_SOURCE_DIR) / "tests/corpus/models/nvidia--Gemma-4-31B-IT-NVFP4";
  const fs::path tmp = fs::temp_directory_path() / ("specprobe-gemma4-nvfp4-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "nvfp4");
  fs::create_directories(tmp / "bf16");
  fs::copy_file(src / "config.json", tmp / "nvfp4" / "config.json");
  fs::copy_file(src / "hf_quant_config.json", tmp / "nvfp4" / "hf_quant_config.json");
  Json config = Json::parse(std::ifstream(src / "config.json"));
  config.erase("quantization_config");
  std::ofstream(tmp / "bf16" / "config.json") << config.dump();
  const Json q = weights_of((tmp / "nvfp4").string());
  const Json b = weights_of((tmp / "bf16").string());
  fs::remove_all(tmp);
  CHECK(bytes(q["layers"], "attn") == bytes(b["layers"], "attn"));
  CHECK(bytes(q["layers"], "kv_proj") == bytes(b["layers"], "kv_proj"));
  CHECK(bytes(q["layers"], "dense") * 3 < bytes(b["layers"], "dense"));
}

TEST_CASE("memory: Gemma 4 MoE layers keep their dense MLP, and full-attention layers their own head shape",
          "[facts][memory]") {
  // google/gemma-4-26B-A4B as vLLM builds it (gemma4.py): every layer has the dense MLP
  // (intermediate_size 2112) next to the 128 experts of 704, and the 5 full-attention layers use
  // global_head_dim 512 with 2 KV heads (the 25 sliding ones 256 and 8); with attention_k_eq_v the
  // V slot of qkv_proj is still allocated. BF16. vLLM logged 48.5 GiB on an A100
  // (tests/corpus/memory/cases/vllm-page-myoceane-a100-gemma-4-26b-a4b-eager.yaml).
  const Json w = weights_of(std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/google--gemma-4-26B-A4B");
  const double H = 2816, heads = 16;
  const double sliding = 25, full = 5;
  const Json& l = w["layers"];
  CHECK(bytes(l, "attn") == std::llround(2 * (sliding * 2 * H * heads * 256 + full * 2 * H * heads * 512)));
  CHECK(bytes(l, "kv_proj") == std::llround(2 * (sliding * 2 * H * 8 * 256 + full * 2 * H * 2 * 512)));
  CHECK(bytes(l, "dense") == std::llround(2 * 30 * 3 * H * 2112));
  CHECK(bytes(l, "experts") == std::llround(2 * 30 * 128 * 3 * H * 704));
  const double gib = w["bytes"].get<double>() / (1024.0 * 1024 * 1024);
  CHECK(gib > 48.5 * 0.97);
  CHECK(gib < 48.5 * 1.03);
}

TEST_CASE("memory: ModelOpt MIXED_PRECISION prices each module in its own format", "[facts][memory]") {
  // nvidia/Qwen3.6-35B-A3B-NVFP4 lists every module's quant_algo: routed and shared experts NVFP4
  // (half a byte + an fp8 scale per 16), attention and linear attention FP8 (one byte), the MTP
  // layer ignored (BF16). vLLM 0.33.0 builds rank 0 of TP 2 with 10.14 GiB (tests/tools/engine_weights.py).
  const Json w = weights_of(std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/nvidia--Qwen3.6-35B-A3B-NVFP4");
  CHECK(w["quantized"] == "fp8 + w4a16_nvfp4");
  const Json& l = w["layers"];
  // 40 layers x 256 experts x 3 x 2048 x 512 elements at 9/16 byte.
  CHECK(bytes(l, "experts") == static_cast<uint64_t>(40.0 * 256 * 3 * 2048 * 512 * (0.5 + 1.0 / 16)));
  // The MTP layer's experts stay in BF16 (mtp* is ignored).
  CHECK(bytes(w["mtp"], "experts") == 256ull * 3 * 2048 * 512 * 2);
  CHECK(bytes(w, "bytes") < 25ull << 30);  // unquantized it would be 66.8 GiB
}

TEST_CASE("memory: a MIXED_PRECISION list with entries of the wrong shape prices what it can, never fails",
          "[facts][memory]") {
  specprobe::test::TempDir tmp;
  Json config = Json::parse(std::ifstream(std::string(SPECPROBE_SOURCE_DIR) +
                                          "/tests/corpus/models/nvidia--Qwen3.6-35B-A3B-NVFP4/config.json"));
  Json& layers = config["quantization_config"]["quantized_layers"];
  layers["model.language_model.layers.0.mlp.experts"] = "W4A16_NVFP4";                 // not an object
  layers["model.language_model.layers.1.mlp.experts"] = {{"quant_algo", 4}};           // not a string
  layers["model.language_model.layers.2.mlp.experts"] = {{"quant_algo", "W9A9_NEW"}};  // not known here
  layers["model.language_model.layers.99999999999999999999.mlp.experts"] = {{"quant_algo", "FP8"}};
  layers["lm_head"] = nullptr;
  std::ofstream(tmp.path / "config.json") << config.dump();
  const Json w = weights_of(tmp.path.string());
  // Layers 0-2's experts unpriced (BF16), the other 37 NVFP4; no crash on the 20-digit index.
  const double per_layer = 256.0 * 3 * 2048 * 512;
  CHECK(bytes(w["layers"], "experts") ==
        static_cast<uint64_t>(3 * per_layer * 2) + static_cast<uint64_t>(37 * per_layer * (0.5 + 1.0 / 16)));
}

TEST_CASE("memory: symmetric int4 groups store no zero points", "[facts][memory]") {
  // moonshotai/Kimi-K2.5: compressed-tensors int4, group 32, symmetric: a packed half byte and a
  // 16-bit scale per 32 elements (vLLM 0.33.0: 71.16 GiB per rank at TP 8).
  const Json w = weights_of(std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/moonshotai--Kimi-K2.5");
  CHECK(w["quantized"] == "int4 g32");
  // 60 MoE layers x 384 experts x 3 x 7168 x 2048 elements.
  CHECK(bytes(w["layers"], "experts") == static_cast<uint64_t>(60.0 * 384 * 3 * 7168 * 2048 * (0.5 + 2.0 / 32)));
}

TEST_CASE("memory: Gemma 3's vocabulary and tied head from its config class, its vision tower split over TP",
          "[facts][memory]") {
  // google/gemma-3-27b-it writes neither vocab_size nor tie_word_embeddings: Gemma3TextConfig's
  // 262,208 rows, tied. vLLM 0.33.0 builds rank 0 of TP 2 with 25.56 GiB.
  const Json w = weights_of(std::string(SPECPROBE_SOURCE_DIR) + "/tests/corpus/models/google--gemma-3-27b-it");
  CHECK(bytes(w, "embed") == 262208ull * 5376 * 2);
  CHECK(bytes(w, "lm_head") == 0);
  Json f =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  f["checkpoint"]["weights"] = w;
  f["serve"]["tp"] = 2;
  Json whole = f;
  whole["serve"]["mm_encoder_tp_mode"] = "data";
  specprobe::testing::derive_plan(f);
  specprobe::testing::derive_plan(whole);
  const double split = f["memory"]["breakdown"]["weights_parts"]["vision"].get<double>();
  CHECK(split == Approx(bytes(w, "vision") / 2.0).epsilon(1e-6));
  CHECK(whole["memory"]["breakdown"]["weights_parts"]["vision"].get<double>() == Approx(2 * split).epsilon(1e-6));
}

TEST_CASE("memory: vLLM keeps a sliding-window layer's KV for its window only, and counts requests by it",
          "[facts][memory]") {
  // Half of the Llama-3.1-8B-shaped base's 32 layers made sliding (window 4096), max_model_len
  // 131072, on one H100: a request holds the 16 full layers for 131072 tokens and the 16 sliding
  // ones for cdiv(min(4096 - 1 + 8192, 131072), 16) + 1 = 769 blocks of 16 tokens
  // (SlidingWindowSpec.max_admission_blocks_per_request; 8192 = max_num_batched_tokens).
  auto plan = [](const char* version) {
    Json f =
        specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
    f["model"]["sliding_layers"] = 16;
    f["model"]["sliding_window"] = 4096;
    f["serve"]["max_model_len"] = 131072;
    f["lib"]["vllm"]["version"] = version;
    specprobe::testing::derive_plan(f);
    return f["memory"];
  };
  const double layer = 2 * 8 * 128 * 2;  // bytes per token per layer
  const double per_request = 16 * layer * 131072 + 16 * layer * 769 * 16;
  const Json m = plan("0.33.0");
  REQUIRE(m["modelled"] == true);
  CHECK(m["breakdown"]["kv_bytes_per_request"] == std::llround(per_request));
  const double kv = m["kv_bytes"].get<double>();
  CHECK(m["kv_tokens"] == std::llround(std::floor(kv / per_request * 131072)));  // requests x max_model_len
  CHECK(m["max_concurrency"].get<double>() == Approx(kv / per_request).margin(0.005));
  CHECK(m["status"] == "fits");
  // 0.10.1 logged blocks x block size for the same pool (all layers per token), the requests alike.
  const Json old = plan("0.10.1");
  CHECK(old["kv_tokens"] == std::llround(std::floor(old["kv_bytes"].get<double>() / (32 * layer * 16)) * 16));
  CHECK(old["max_concurrency"].get<double>() == Approx(old["kv_bytes"].get<double>() / per_request).margin(0.005));
}

namespace {

// nvidia/Qwen3.6-27B-NVFP4 on one H100 80GB with vLLM 0.24.0 (tests/rules/bases/qwen36-27b-memory-h100.yaml):
// 64 layers, every fourth full attention (16 layers of 4 KV heads x 256), the other 48 gated
// DeltaNet (16 key heads and 48 value heads of 128, conv kernel 4, mamba_ssm_dtype float32); the
// checkpoint's kv_cache_scheme makes the KV cache fp8.
Json qwen36(const std::function<void(Json&)>& edit = nullptr) {
  Json f = specprobe::testing::fixture_base("qwen36-27b-memory-h100",
                                            {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  if (edit) edit(f);
  specprobe::testing::derive_plan(f);
  return f["memory"];
}

double num_of(const Json& j, const char* key) { return j.at(key).get<double>(); }

}  // namespace

TEST_CASE("memory: a gated-DeltaNet hybrid's state and attention pages share one pool of blocks (vLLM)",
          "[facts][memory]") {
  // TP 1. One linear layer's state: the conv state (2 x 16 x 128 + 48 x 128 = 10,240 channels) x
  // (4 - 1) rows x 2 bytes = 61,440 and the recurrent state 48 x 128 x 128 x 4 bytes = 3,145,728:
  // 3,207,168 bytes. One attention layer's token: 2 x 4 x 256 x 1 byte (fp8) = 2,048. The block
  // grows to 16 x cdiv(3,207,168, 16 x 2,048) = 16 x 98 = 1,568 tokens, the page to 1,568 x 2,048 =
  // 3,211,264 bytes. 16 full and 48 linear layers: groups of 16 (1 attention, 3 state), so a block
  // is 16 pages; a 262,144-token request takes cdiv(262,144, 1,568) = 168 attention blocks and one
  // per state group: 171.
  const Json m = qwen36();
  REQUIRE(m["modelled"] == true);
  const Json& h = m["breakdown"]["hybrid"];
  CHECK(h["state_bytes"] == 3207168);
  CHECK(h["attention_block_size"] == 1568);
  CHECK(h["page_bytes"] == 3211264);
  CHECK(h["group_size"] == 16);
  CHECK(h["attention_groups"] == 1);
  CHECK(h["state_groups"] == 3);
  CHECK(h["mamba_cache_mode"] == "none");  // hybrids cache no prefixes by default before 0.26
  CHECK(h["blocks_per_request"] == 171);
  CHECK(m["kv_bytes_per_token"] == 16 * 2048);
  const double blocks = std::floor(num_of(m, "kv_bytes") / 3211264.0 / 16);
  CHECK(m["kv_blocks"] == std::llround(blocks));
  CHECK(m["kv_tokens"] == std::llround(std::floor(blocks / 171 * 262144)));  // requests x max_model_len
  CHECK(num_of(m, "max_concurrency") == Approx(blocks / 171).margin(0.005));
  // vLLM 0.24.0 logged 976 blocks and 1,496,213 tokens for this plan (976 / 171 x 262,144).
  CHECK(blocks == Approx(976).epsilon(0.10));

  // TP 4: the state splits by heads (10,240 / 4 x 3 x 2 + 12 x 128 x 128 x 4 = 801,792 bytes), one
  // KV head per rank (512 bytes a token): 16 x cdiv(801,792, 8,192) = 1,568 tokens again, pages of
  // 802,816 bytes. vLLM 0.24.0 logged 5,127 blocks (7,859,720 tokens).
  const Json t4 = qwen36([](Json& f) { f["serve"]["tp"] = 4; });
  CHECK(t4["breakdown"]["hybrid"]["state_bytes"] == 801792);
  CHECK(t4["breakdown"]["hybrid"]["attention_block_size"] == 1568);
  CHECK(t4["breakdown"]["hybrid"]["page_bytes"] == 802816);
  CHECK(t4["kv_bytes_per_token"] == 16 * 512);
  CHECK(num_of(t4, "kv_blocks") == Approx(5127).epsilon(0.10));
}

TEST_CASE("memory: a gated-DeltaNet hybrid's blocks follow the KV dtype, prefix caching and MTP", "[facts][memory]") {
  // A bfloat16 KV cache: 4,096 bytes a token, 16 x cdiv(3,207,168, 65,536) = 784 tokens a block,
  // the same 3,211,264-byte page; a request takes cdiv(262,144, 784) = 335 + 3 = 338 blocks.
  const Json bf16 = qwen36([](Json& f) { f["model"]["kv_cache_scheme"] = false; });
  CHECK(bf16["breakdown"]["hybrid"]["attention_block_size"] == 784);
  CHECK(bf16["breakdown"]["hybrid"]["page_bytes"] == 3211264);
  CHECK(bf16["breakdown"]["hybrid"]["blocks_per_request"] == 338);

  // Prefix caching (mamba_cache_mode align) keeps two state blocks a request per group: 168 + 6.
  const Json align = qwen36([](Json& f) { f["serve"]["enable_prefix_caching"] = true; });
  CHECK(align["breakdown"]["hybrid"]["mamba_cache_mode"] == "align");
  CHECK(align["breakdown"]["hybrid"]["blocks_per_request"] == 174);

  // MTP, one token: the conv state keeps one row more (10,240 x 4 x 2 + 3,145,728 = 3,227,648
  // bytes), so 16 x cdiv(3,227,648, 32,768) = 1,584 tokens a block; the MTP layer is a 17th
  // attention layer, so groups of 17 (48 < 1.5 x 17 fails): 1 attention group and cdiv(48, 17) = 3
  // state groups of 1 + 1 blocks: cdiv(262,144, 1,584) = 166 + 6 = 172.
  const Json mtp = qwen36([](Json& f) {
    f["spec"] = {{"enabled", true}, {"method", "mtp"}, {"num_speculative_tokens", 1}};
  });
  const Json& h = mtp["breakdown"]["hybrid"];
  CHECK(h["state_bytes"] == 3227648);
  CHECK(h["attention_block_size"] == 1584);
  CHECK(h["group_size"] == 17);
  CHECK(h["state_groups"] == 3);
  CHECK(h["blocks_per_request"] == 172);
  CHECK(mtp["kv_bytes_per_token"] == 17 * 2048);

  // vLLM 0.19.0 logged num_blocks // groups x the smallest block size (vllm-issue-40691: 1,487
  // blocks -> 371 x 784 = 290,864 tokens for Qwen3.5-27B in bfloat16 at 32,768).
  const Json old = qwen36([](Json& f) {
    f["lib"]["vllm"]["version"] = "0.19.0";
    f["model"]["kv_cache_scheme"] = false;
    f["serve"]["max_model_len"] = 32768;
  });
  const double blocks = num_of(old, "kv_blocks");
  CHECK(old["kv_tokens"] == std::llround(std::floor(blocks / 4) * 784));
  CHECK(num_of(old, "max_concurrency") == Approx(blocks / (42 + 3)).margin(0.005));  // cdiv(32,768, 784) = 42
}

TEST_CASE("memory: max_num_seqs beyond a hybrid's Mamba cache blocks stops vLLM before graph capture",
          "[facts][memory]") {
  // The default 1,024 sequences against about 976 blocks: vLLM 0.24.0 refused this plan.
  const Json m = qwen36();
  CHECK(m["problem"] == "mamba-blocks");
  CHECK(m["status"] != "fits");
  CHECK(m["summary"].get<std::string>().find("max_num_seqs (1024) exceeds available Mamba cache blocks") !=
        std::string::npos);
  CHECK(m["fix"].get<std::string>().find("lower --max-num-seqs to") != std::string::npos);
  // 512 sequences fit; so do 1,024 without CUDA graphs, and before 0.19 (capture sizes capped).
  CHECK(qwen36([](Json& f) { f["serve"]["max_num_seqs"] = 512; })["problem"] == "none");
  CHECK(qwen36([](Json& f) { f["serve"]["enforce_eager"] = true; })["problem"] == "none");
  CHECK(qwen36([](Json& f) { f["lib"]["vllm"]["version"] = "0.18.0"; })["problem"] == "none");
  // At TP 4 the pool has about 5,100 blocks.
  CHECK(qwen36([](Json& f) { f["serve"]["tp"] = 4; })["problem"] == "none");
}

namespace {

// Llama-3.1-8B-shaped plan under SGLang with the FA3 backend (Hopper), EDIT applied before deriving.
Json sglang_fa3(const std::function<void(Json&)>& edit) {
  Json f =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  f["engine"]["name"] = "sglang";
  f["input"]["form"] = "sglang-command";
  f["lib"] = {{"sglang", {{"version", "0.4.6.post5"}}}};
  f["gpu"]["sm"] = 90;
  f["attention"]["requested"] = "fa3";
  f["serve"]["max_model_len"] = 131072;
  if (edit) edit(f);
  specprobe::testing::derive_plan(f);
  return f["memory"];
}

}  // namespace

TEST_CASE("memory: SGLang 0.4.6.post5's FA3 decode graphs keep a page-table copy per captured batch size",
          "[facts][memory]") {
  // One H100 (81,008 MiB, under 96 GiB): batch sizes 1, 2, 4, 8, 16 ... 160 in steps of 8 = 23
  // sizes, 15 + 19 x 88 = 1,687 rows, the largest 160. Context 131,072, page 1: three tables of
  // 160 x 131,072 (page_table, page_table_draft_decode, encoder_page_table) and the copies,
  // (3 x 160 + 1,687) x 131,072 = 284,033,024 int32 slots = 1,136,132,096 bytes, plus
  // strided_indices, 131,072 int64 = 1,048,576 bytes: 1,137,180,672.
  const Json m = sglang_fa3(nullptr);
  REQUIRE(m["modelled"] == true);
  REQUIRE(m["breakdown"].contains("fa3_graph_tables_bytes"));
  CHECK(m["breakdown"]["fa3_graph_tables_bytes"] == 1137180672);
  CHECK(m["breakdown"]["fa3_graph_batch_sizes"]["largest"] == 160);
  CHECK(m["breakdown"]["fa3_graph_batch_sizes"]["sum"] == 1687);
  CHECK(m["breakdown"]["fa3_graph_batch_sizes"]["count"] == 23);
  CHECK(m["status"] == "fits");
  // 0.4.10.post2 slices one table (sgl-project/sglang#8567); no graphs, no tables; other backends none.
  CHECK_FALSE(sglang_fa3([](Json& f) { f["lib"]["sglang"]["version"] = "0.4.10.post2"; })["breakdown"].contains(
      "fa3_graph_tables_bytes"));
  CHECK_FALSE(
      sglang_fa3([](Json& f) { f["serve"]["enforce_eager"] = true; })["breakdown"].contains("fa3_graph_tables_bytes"));
  CHECK_FALSE(sglang_fa3([](Json& f) { f["attention"]["requested"] = "flashinfer"; })["breakdown"].contains(
      "fa3_graph_tables_bytes"));
}

TEST_CASE("memory: Llama 4 at a 1,000,000-token context on H200s: the FA3 tables fill the reserve (sglang#6817)",
          "[facts][memory]") {
  // H200 (143,156 MiB, over 96 GiB): 168 ... 256 in steps of 8 join the sizes: 35 sizes,
  // 1,687 + 12 x (168 + 256) / 2 = 4,231 rows, the largest 256. Context 1,000,000: (3 x 256 + 4,231)
  // x 1,000,000 = 4,999,000,000 slots; Llama 4's local table 256 x cdiv(1,000,000, 8192) = 123
  // virtual batches x 8192 pages = 257,949,696 slots; x 4 bytes = 21,027,798,784, plus 8,000,000
  // of strided_indices: 21,035,798,784 (19.59 GiB).
  auto scout_like = [](const std::function<void(Json&)>& more) {
    return sglang_fa3([&](Json& f) {
      f["model"]["model_type"] = "llama4";
      f["gpu"]["name"] = "NVIDIA H200";
      f["gpu"]["declared"] = "H200";
      f["gpu"]["memory_bytes"] = 150109880320;
      f["serve"]["max_model_len"] = 1000000;
      f["serve"]["gpu_memory_utilization"] = 0.8;
      if (more) more(f);
    });
  };
  const Json m = scout_like(nullptr);
  REQUIRE(m["breakdown"].contains("fa3_graph_tables_bytes"));
  CHECK(m["breakdown"]["fa3_graph_tables_bytes"] == 21035798784);
  CHECK(m["breakdown"]["fa3_graph_batch_sizes"]["sum"] == 4231);
  CHECK(m["breakdown"]["fa3_graph_batch_sizes"]["largest"] == 256);
  // Request table 2,049 x 1,000,004 x 4 = 8,196,032,784 bytes; the reserve (150,109,880,320 - 0.6 GiB)
  // x 0.2 = 29,893,127,045: 29,231,831,568 of tables leave 0.66 GiB for activations and graphs.
  CHECK(m["breakdown"]["request_table_bytes"] == 8196032784);
  CHECK(m["status"] == "at-risk");
  CHECK(m["problem"] == "fa3-graph-tables");
  CHECK(m["summary"].get<std::string>().find("FA3 decode graphs keep int32 page tables") != std::string::npos);
  // --cuda-graph-max-bs 64: sizes 1 ... 64, 295 rows; (3 x 64 + 295) x 1,000,000 + 64 x 123 x 8192
  // = 551,487,424 slots (2.05 GiB): fits.
  const Json capped = scout_like([](Json& f) { f["serve"]["cuda_graph_max_bs"] = 64; });
  CHECK(capped["breakdown"]["fa3_graph_batch_sizes"]["sum"] == 295);
  CHECK(capped["breakdown"]["fa3_graph_tables_bytes"] == 551487424LL * 4 + 8000000);
  CHECK(capped["problem"] != "fa3-graph-tables");
}

TEST_CASE("memory: what other processes hold on a queried GPU against vLLM's start-up request", "[facts][memory]") {
  // Llama-3.1-8B on an H100 of 84,943,585,280 bytes (79.11 GiB); vLLM 0.33.0's default 0.92 asks for
  // ceil(0.92 x 84,943,585,280) = 78,148,098,458 bytes (72.78 GiB) free after its CUDA context.
  const Json& base =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  auto derived = [&](double free_gib, std::optional<double> util = std::nullopt) {
    Json g = base;
    g["gpu"]["memory_free_bytes"] = static_cast<int64_t>(free_gib * 1073741824.0);
    g["gpu"]["memory_used_bytes"] = static_cast<int64_t>(84943585280.0 - free_gib * 1073741824.0);
    if (util) g["serve"]["gpu_memory_utilization"] = *util;
    specprobe::testing::derive_plan(g);
    return g;
  };
  auto status = [&](double free_gib, std::optional<double> util = std::nullopt) {
    const Json g = derived(free_gib, util);
    return std::make_pair(fact_string(g, "memory.status").value_or(""), fact_string(g, "memory.problem").value_or(""));
  };
  // 59.1 GiB free (20 GiB held elsewhere): 59.1 - 0.25 < 72.78, fails.
  CHECK(status(59.1) == std::make_pair(std::string("fails"), std::string("free-memory")));
  // 73.5 GiB free: 73.5 - 0.25 = 73.25 >= 72.78, but 73.5 - 1.5 = 72.0 < 72.78: at risk.
  CHECK(status(73.5) == std::make_pair(std::string("at-risk"), std::string("free-memory")));
  // 78.5 GiB free (an idle card): 78.5 - 1.5 = 77.0 >= 72.78, not this problem.
  CHECK(status(78.5).second != "free-memory");
  // 59.1 GiB free at 0.7 (55.38 GiB asked): 59.1 - 1.5 = 57.6 >= 55.38.
  CHECK(status(59.1, 0.7).second != "free-memory");
  // The fix names a fraction that fits: floor(100 x (59.1 - 1.5) / 79.11) / 100 = 0.72.
  CHECK(fact_string(derived(59.1), "memory.fix").value_or("").find("--gpu-memory-utilization to 0.72 or less") !=
        std::string::npos);
}

TEST_CASE("memory: vLLM 0.8.x's V1 engine takes what other processes hold off the KV cache", "[facts][memory]") {
  // Llama-3.1-8B on an H100 (79.11 GiB), vLLM 0.8.5 at 0.4 with max_model_len 32,768 (4 GiB of KV
  // per request at 131,072 bytes per token): Worker.determine_available_memory @v0.8.5 counts all
  // memory in use on the device besides torch's own against the budget (vllm-issue-17431's case).
  const Json& base =
      specprobe::testing::fixture_base("llama8b-memory-h100", {fs::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"});
  auto derived = [&](const std::string& version, std::optional<double> held_gib,
                     const std::function<void(Json&)>& more) {
    Json g = base;
    g["lib"]["vllm"]["version"] = version;
    g["serve"]["gpu_memory_utilization"] = 0.4;
    if (held_gib) {
      // NVML's view: an idle card shows the driver's 0.6 GiB in use; HELD_GIB more is other processes'.
      const double used = (0.6 + *held_gib) * 1073741824.0;
      g["gpu"]["memory_free_bytes"] = static_cast<int64_t>(84943585280.0 - used);
      g["gpu"]["memory_used_bytes"] = static_cast<int64_t>(used);
    }
    if (more) more(g);
    specprobe::testing::derive_plan(g);
    return g;
  };
  const Json idle = derived("0.8.5", std::nullopt, nullptr);
  REQUIRE(fact_string(idle, "memory.status") == "fits");
  const int64_t idle_kv = fact_int(idle, "memory.kv_bytes").value();
  // A declared GPU is assumed idle, and the note says how much another process may hold.
  const std::string note = fact_string(idle, "memory.breakdown.shared_gpu_note").value_or("");
  CHECK(note.find("the GPU is assumed idle: vLLM 0.8.5's V1 engine takes what other processes hold") !=
        std::string::npos);
  CHECK(note.find("max_model_len=32,768 request no longer fits") != std::string::npos);
  CHECK_FALSE(find_fact(idle, "memory.breakdown.other_processes_bytes"));

  // Queried with 6 GiB held by another process: the KV cache is 6 GiB smaller (5.8 GiB left), and
  // one 4 GiB request fits only at the estimates' optimistic end; with 16 GiB held none is left.
  const Json shared = derived("0.8.5", 6.0, nullptr);
  CHECK(std::llabs(fact_int(shared, "memory.breakdown.other_processes_bytes").value() - (6LL << 30)) <= 1);
  CHECK(std::llabs(fact_int(shared, "memory.kv_bytes").value() - (idle_kv - (6LL << 30))) <= 1);
  CHECK(fact_string(shared, "memory.status") == "at-risk");
  CHECK(fact_string(shared, "memory.problem") == "one-request");
  CHECK(fact_string(shared, "memory.summary").value_or("").find("and the 6.0 GiB other processes hold leave") !=
        std::string::npos);
  CHECK(
      fact_string(shared, "memory.fix").value_or("").rfind("free the GPU (stop the processes that hold 6.0 GiB)", 0) ==
      0);
  const Json full = derived("0.8.5", 16.0, nullptr);
  CHECK(fact_string(full, "memory.status") == "fails");
  CHECK(fact_string(full, "memory.problem") == "no-kv");
  CHECK(fact_string(full, "memory.breakdown.shared_gpu_note").value_or("").find("counted above") != std::string::npos);

  // An idle card queried: nothing comes off.
  CHECK(fact_int(derived("0.8.5", 0.0, nullptr), "memory.kv_bytes") == idle_kv);
  // 0.9.1 and later refuse at start instead (the free-memory check), and do not take it off the KV cache.
  const Json later = derived("0.9.1", 10.0, nullptr);
  CHECK_FALSE(find_fact(later, "memory.breakdown.other_processes_bytes"));
  // With speculative decoding 0.8.5 may fall back to V0, which measured from a baseline: not subtracted,
  // said in the note.
  const Json v0 = derived("0.8.5", 10.0, [](Json& g) { g["spec"]["enabled"] = true; });
  CHECK_FALSE(find_fact(v0, "memory.breakdown.other_processes_bytes"));
  CHECK(fact_string(v0, "memory.breakdown.shared_gpu_note").value_or("").find("not when it falls back to V0") !=
        std::string::npos);
  // VLLM_USE_V1=0 asks for V0.
  const Json asked_v0 = derived("0.8.5", 10.0, [](Json& g) { g["env"]["VLLM_USE_V1"] = "0"; });
  CHECK_FALSE(find_fact(asked_v0, "memory.breakdown.other_processes_bytes"));
}
