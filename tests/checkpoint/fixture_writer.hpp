// Writes small but real safetensors checkpoints for the checkpoint tests and the benchmark:
// headers as the reference writer lays them out, data regions left sparse (ftruncate).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "inputs/checkpoint/safetensors.hpp"

namespace specprobe::test {

struct T {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};

// Bytes of one tensor (sub-byte dtypes rounded as the format requires whole bytes).
inline uint64_t tensor_bytes(const T& t) {
  uint64_t n = 1;
  for (uint64_t d : t.shape) n *= d;
  return n * static_cast<uint64_t>(*checkpoint::dtype_bits(t.dtype)) / 8;
}

// Writes PATH as a valid shard holding TENSORS; the data region is a hole.
inline void write_shard(const std::filesystem::path& path, const std::vector<T>& tensors) {
  std::vector<checkpoint::TensorSpec> infos;
  uint64_t off = 0;
  for (const T& t : tensors) {
    const uint64_t n = tensor_bytes(t);
    infos.push_back({t.name, t.dtype, t.shape, off, off + n});
    off += n;
  }
  const std::string header = checkpoint::write_safetensors_header(infos, {{"format", "pt"}});
  std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << header;
  }
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd >= 0) {
    (void)!::ftruncate(fd, static_cast<off_t>(header.size() + off));
    ::close(fd);
  }
}

// Writes raw bytes: an 8-byte little-endian LEN followed by HEADER, then PAD zero bytes.
inline void write_raw_shard(const std::filesystem::path& path, uint64_t len, const std::string& header, uint64_t pad) {
  std::filesystem::create_directories(path.parent_path());
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xFF);
  out += header;
  out += std::string(pad, '\0');
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
}

inline void write_text(const std::filesystem::path& path, const std::string& s) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << s;
}

// model.safetensors.index.json for SHARDS (file -> tensors).
inline void write_index(const std::filesystem::path& dir,
                        const std::vector<std::pair<std::string, std::vector<T>>>& shards) {
  Json wm = Json::object();
  uint64_t total = 0;
  for (const auto& [file, ts] : shards)
    for (const T& t : ts) {
      wm[t.name] = file;
      total += tensor_bytes(t);
    }
  write_text(dir / "model.safetensors.index.json",
             Json{{"metadata", {{"total_size", total}}}, {"weight_map", wm}}.dump(2));
}

// The seed-004 checkpoint (the W4A16/FP8 DeepSeek-V4-Flash with a BF16 MTP block): a DeepSeek-V4-Flash-shaped
// checkpoint (2 main layers, 1 MTP layer, 2 experts), quantized with compressed-tensors: routed experts W4A16
// pack-quantized, attention FP8 with weight_scale, shared experts and compressor BF16. BROKEN: MTP block BF16 without
// scales and an ignore list in on-disk names; otherwise the corrected twin (MTP quantized like main, runtime-name
// ignores).
inline void write_dsv4(const std::filesystem::path& dir, bool broken) {
  const int kLayers = 2, kH = 128;
  std::vector<T> s1, s2;
  auto fp8 = [&](std::vector<T>& v, const std::string& m) {
    v.push_back({m + ".weight", "F8_E4M3", {kH, kH}});
    v.push_back({m + ".weight_scale", "F32", {1, 1}});
  };
  auto bf16 = [&](std::vector<T>& v, const std::string& m) { v.push_back({m + ".weight", "BF16", {kH, kH}}); };
  auto w4 = [&](std::vector<T>& v, const std::string& m) {
    v.push_back({m + ".weight_packed", "I32", {kH, kH / 8}});
    v.push_back({m + ".weight_scale", "BF16", {kH, 1}});
    v.push_back({m + ".weight_shape", "I64", {2}});
  };
  auto block = [&](std::vector<T>& v, const std::string& p, bool quantized) {
    for (const char* a : {"wq_a", "wkv", "wq_b", "wo_a", "wo_b"})
      if (quantized)
        fp8(v, p + ".attn." + a);
      else
        bf16(v, p + ".attn." + a);
    for (int e = 0; e < 2; ++e)
      for (const char* w : {"w1", "w2", "w3"}) {
        const std::string m = p + ".ffn.experts." + std::to_string(e) + "." + w;
        if (quantized)
          w4(v, m);
        else
          bf16(v, m);
      }
    for (const char* w : {"w1", "w2", "w3"}) bf16(v, p + ".ffn.shared_experts." + w);
    v.push_back({p + ".ffn.gate.weight", "BF16", {2, kH}});
    v.push_back({p + ".attn_norm.weight", "BF16", {kH}});
    v.push_back({p + ".ffn_norm.weight", "BF16", {kH}});
    v.push_back({p + ".attn.attn_sink", "F32", {4}});
  };
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "layers." + std::to_string(l);
    block(l == 0 ? s1 : s2, p, true);
    auto& v = l == 0 ? s1 : s2;
    bf16(v, p + ".attn.compressor.wkv");
    bf16(v, p + ".attn.compressor.wgate");
    bf16(v, p + ".attn.indexer.weights_proj");
    fp8(v, p + ".attn.indexer.wq_b");
  }
  s1.push_back({"embed.weight", "BF16", {256, kH}});
  s1.push_back({"norm.weight", "BF16", {kH}});
  s2.push_back({"head.weight", "F32", {256, kH}});
  block(s2, "mtp.0", !broken);
  bf16(s2, "mtp.0.e_proj");
  bf16(s2, "mtp.0.h_proj");
  s2.push_back({"mtp.0.enorm.weight", "BF16", {kH}});
  s2.push_back({"mtp.0.hnorm.weight", "BF16", {kH}});
  s2.push_back({"mtp.0.norm.weight", "BF16", {kH}});
  s2.push_back({"mtp.0.head.weight", "F32", {256, kH}});
  s2.push_back({"mtp.0.emb.tok_emb.weight", "BF16", {256, kH}});
  write_shard(dir / "model-00001-of-00002.safetensors", s1);
  write_shard(dir / "model-00002-of-00002.safetensors", s2);
  write_index(dir, {{"model-00001-of-00002.safetensors", s1}, {"model-00002-of-00002.safetensors", s2}});

  Json ignore = broken ? Json{"lm_head",
                              "re:.*mtp\\..*",
                              "layers.0.ffn.shared_experts.w1",
                              "layers.0.ffn.shared_experts.w3",
                              "layers.0.ffn.shared_experts.w2",
                              "layers.0.attn.compressor.fused_wkv_wgate",
                              "layers.5.attn.compressor.fused_wkv_wgate"}
                       : Json{"lm_head", "re:^model\\.layers\\.\\d+\\.ffn\\.shared_experts\\.", "re:.*\\.compressor\\.",
                              "re:.*\\.indexer\\.weights_proj$", "re:^model\\.layers\\.2\\.(e_proj|h_proj)$"};
  Json q = {{"quant_method", "compressed-tensors"},
            {"format", "mixed-precision"},
            {"quantization_status", "compressed"},
            {"ignore", ignore},
            {"config_groups",
             {{"group_0",
               {{"targets", {"re:^model\\.layers\\.\\d+\\.ffn\\.experts"}},
                {"format", "pack-quantized"},
                {"weights",
                 {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 128}}},
                {"input_activations", nullptr}}},
              {"group_1",
               {{"targets", {"re:^model\\.layers\\.\\d+\\.attn\\.(fused_wqa_wkv|wq_b|wo_a|wo_b|indexer\\.wq_b)$"}},
                {"format", "float-quantized"},
                {"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", "block"}}},
                {"input_activations", {{"num_bits", 8}, {"type", "float"}, {"dynamic", true}}}}}}}};
  Json cfg = {{"architectures", {"DeepseekV4ForCausalLM"}},
              {"model_type", "deepseek_v4"},
              {"num_hidden_layers", kLayers},
              {"num_nextn_predict_layers", 1},
              {"num_attention_heads", 64},
              {"num_key_value_heads", 1},
              {"head_dim", 512},
              {"hidden_size", kH},
              {"index_n_heads", 64},
              {"index_head_dim", 128},
              {"index_topk", 512},
              {"torch_dtype", "bfloat16"},
              {"quantization_config", q}};
  write_text(dir / "config.json", cfg.dump(2));
}

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "ckpt") {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("specprobe-" + tag + "-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace specprobe::test
