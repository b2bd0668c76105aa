// Builds a synthetic DeepSeek-V3-size checkpoint (163 shards, ~90k tensors, FP8 block weights with
// weight_scale_inv, sparse data regions) in a temp dir and reports the median analyze_checkpoint
// time over several runs. Target (issue 4): <= 200 ms. Also reports the median process CPU time per
// run (all threads), which is steadier than wall time on a loaded machine.
// Usage: checkpoint_bench [runs] [dir] [--dump]
//        checkpoint_bench --analyze DIR     (an existing checkpoint, read only)
// --dump prints the last analysis (facts, summary, notes) as JSON, for comparing two builds.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "checkpoint/fixture_writer.hpp"
#include "inputs/checkpoint/checkpoint.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::test;

namespace {

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

Json dump(const CheckpointAnalysis& a) {
  Json notes = Json::array();
  for (const CheckpointNote& n : a.notes)
    notes.push_back({{"severity", n.severity}, {"code", n.code}, {"message", n.message}, {"file", n.file}});
  return {{"facts", a.facts}, {"summary", a.summary}, {"notes", notes}};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  bool dump_last = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dump") == 0)
      dump_last = true;
    else
      args.emplace_back(argv[i]);
  }
  if (args.size() == 2 && args[0] == "--analyze") {
    auto a = analyze_checkpoint(args[1], Json{{"engine", {{"name", "vllm"}}}});
    if (!a) {
      std::fprintf(stderr, "%s\n", a.error().str().c_str());
      return 1;
    }
    std::cout << dump(*a).dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
    return 0;
  }
  const int runs = !args.empty() ? std::max(1, std::atoi(args[0].c_str())) : 11;
  TempDir tmp("bench");
  const fs::path dir = args.size() > 1 ? fs::path(args[1]) : tmp.path;
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
    for (const char* n :
         {"input_layernorm", "post_attention_layernorm", "self_attn.q_a_layernorm", "self_attn.kv_a_layernorm"})
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

  std::vector<double> ms, cpu;
  Json facts = {{"engine", {{"name", "vllm"}}}};
  size_t tensors = 0, problems = 0;
  Json last;
  for (int r = 0; r < runs; ++r) {
    const double c0 = cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    auto a = analyze_checkpoint(dir.string(), facts);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = cpu_ms();
    if (!a) {
      std::fprintf(stderr, "%s\n", a.error().str().c_str());
      return 1;
    }
    tensors = a->facts["checkpoint"]["tensors"].get<size_t>();
    problems = a->facts["checkpoint"]["problem_count"].get<size_t>();
    if (dump_last && r + 1 == runs) last = dump(*a);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu.push_back(c1 - c0);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "checkpoint_bench: %d shards, %zu tensors, %zu problems, %d runs: median %.1f ms (min %.1f, max %.1f); "
      "cpu median %.1f ms\n",
      kShards, tensors, problems, runs, ms[ms.size() / 2], ms.front(), ms.back(), cpu[cpu.size() / 2]);
  if (dump_last) std::cout << last.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
  return 0;
}
