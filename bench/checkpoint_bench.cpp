// Builds a synthetic DeepSeek-V3-size checkpoint (163 shards, ~90k tensors, FP8 block weights with
// weight_scale_inv, sparse data regions) in a temp dir and reports the median analyze_checkpoint
// time over several runs. Target (issue 4): <= 200 ms. Usage: checkpoint_bench [runs] [dir]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "checkpoint/fixture_writer.hpp"
#include "inputs/checkpoint/checkpoint.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::test;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 11;
  TempDir tmp("bench");
  const fs::path dir = argc > 2 ? fs::path(argv[2]) : tmp.path;
  constexpr int kLayers = 61, kExperts = 256, kShards = 163;
  std::vector<T> all;
  auto fp8 = [&](const std::string& m, uint64_t o, uint64_t i) {
    all.push_back({m + ".weight", "F8_E4M3", {o, i}});
    all.push_back({m + ".weight_scale_inv", "F32", {(o + 127) / 128, (i + 127) / 128}});
  };
  for (int l = 0; l <= kLayers; ++l) {  // layer 61 = the MTP layer
    const std::string p = "model.layers." + std::to_string(l) + ".";
    fp8(p + "self_attn.q_a_proj", 1536, 7168);
    fp8(p + "self_attn.q_b_proj", 24576, 1536);
    fp8(p + "self_attn.kv_a_proj_with_mqa", 576, 7168);
    fp8(p + "self_attn.kv_b_proj", 32768, 512);
    fp8(p + "self_attn.o_proj", 7168, 16384);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "self_attn.q_a_layernorm", "self_attn.kv_a_layernorm"})
      all.push_back({p + n + ".weight", "BF16", {7168}});
    if (l < 3) {
      for (const char* n : {"gate_proj", "up_proj"}) fp8(p + "mlp." + n, 18432, 7168);
      fp8(p + "mlp.down_proj", 7168, 18432);
      continue;
    }
    all.push_back({p + "mlp.gate.weight", "BF16", {256, 7168}});
    all.push_back({p + "mlp.gate.e_score_correction_bias", "F32", {256}});
    for (int e = 0; e < kExperts; ++e) {
      const std::string ep = p + "mlp.experts." + std::to_string(e) + ".";
      fp8(ep + "gate_proj", 2048, 7168);
      fp8(ep + "up_proj", 2048, 7168);
      fp8(ep + "down_proj", 7168, 2048);
    }
    for (const char* n : {"gate_proj", "up_proj"}) fp8(p + "mlp.shared_experts." + n, 2048, 7168);
    fp8(p + "mlp.shared_experts.down_proj", 7168, 2048);
  }
  fp8("model.layers.61.eh_proj", 7168, 14336);
  all.push_back({"model.embed_tokens.weight", "BF16", {129280, 7168}});
  all.push_back({"lm_head.weight", "BF16", {129280, 7168}});
  std::vector<std::pair<std::string, std::vector<T>>> shards(kShards);
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t s = i * kShards / all.size();
    shards[s].second.push_back(all[i]);
  }
  for (int s = 0; s < kShards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, kShards);
    shards[static_cast<size_t>(s)].first = name;
    write_shard(dir / name, shards[static_cast<size_t>(s)].second);
  }
  write_index(dir, shards);
  write_text(dir / "config.json", R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "num_hidden_layers": 61, "num_nextn_predict_layers": 1, "num_attention_heads": 128, "num_key_value_heads": 128,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}})");

  std::vector<double> ms;
  Json facts = {{"engine", {{"name", "vllm"}}}};
  size_t tensors = 0, problems = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto a = analyze_checkpoint(dir.string(), facts);
    const auto t1 = std::chrono::steady_clock::now();
    if (!a) {
      std::fprintf(stderr, "%s\n", a.error().str().c_str());
      return 1;
    }
    tensors = a->facts["checkpoint"]["tensors"].get<size_t>();
    problems = a->facts["checkpoint"]["problem_count"].get<size_t>();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("checkpoint_bench: %d shards, %zu tensors, %zu problems, %d runs: median %.1f ms (min %.1f, max %.1f)\n",
              kShards, tensors, problems, runs, ms[ms.size() / 2], ms.front(), ms.back());
  return 0;
}
