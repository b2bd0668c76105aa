// The naming tables themselves (data). Sources: vLLM @ 5ed15f42, the model files'
// hf_to_vllm_mapper / packed_modules_mapping (vllm/model_executor/models/*.py) and the MTP models'
// layer naming (deepseek_mtp.py, qwen3_next_mtp.py, ...).
#include "inputs/checkpoint/name_tables.hpp"

#include <algorithm>

namespace specprobe::checkpoint {
namespace {

using R = Rename;

const FusedMap kLlamaPacked = {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
                               {"gate_up_proj", {"gate_proj", "up_proj"}}};
const FusedMap kDeepseekV2Packed = {{"gate_up_proj", {"gate_proj", "up_proj"}},
                                    {"fused_qkv_a_proj", {"q_a_proj", "kv_a_proj_with_mqa"}}};

std::vector<ArchNames> build() {
  std::vector<ArchNames> t;
  // DeepSeek-V4: deepseek_v4/nvidia/model.py mapper l.1177-1216; no packed_modules_mapping;
  // MTP: nvidia/mtp.py (mtp.{i} -> model.layers.{N+i}); o_proj.py reads wo_a.weight_scale_inv;
  // compressor.fused_wkv_wgate and indexer.weights_proj built with quant_config=None; e_proj/h_proj
  // got prefix= in vllm#44821.
  t.push_back(ArchNames{"deepseek_v4",
                        {"deepseek_v4"},
                        {{R::prefix, "layers.", "model.layers."},
                         {R::prefix, "embed.", "model.embed."},
                         {R::prefix, "norm.", "model.norm."},
                         {R::prefix, "hc_head", "model.hc_head"},
                         {R::prefix, "mtp.", "model.mtp."},
                         {R::substr, ".shared_experts.w2", ".shared_experts.down_proj"},
                         {R::exact, "head.weight", "lm_head.weight"},
                         {R::suffix, "embed.weight", "embed_tokens.weight"},
                         {R::suffix, ".ffn.gate.bias", ".ffn.gate.e_score_correction_bias"}},
                        {{"attn.fused_wqa_wkv", {"attn.wq_a", "attn.wkv"}},
                         {"compressor.fused_wkv_wgate", {"compressor.wkv", "compressor.wgate"}},
                         {"shared_experts.gate_up_proj", {"shared_experts.w1", "shared_experts.w3"}}},
                        {},
                        R"(^mtp\.(\d+)\.(.*)$)",
                        false,
                        "model.layers.{L}.{rest}",
                        {{R::substr, ".shared_experts.w2", ".shared_experts.down_proj"}},
                        {"compressor.fused_wkv_wgate", "indexer.weights_proj"},
                        {"attn.wo_a"},
                        {"e_proj", "h_proj"},
                        "vllm-project/vllm#44821 (2026-06-10)",
                        "checkpoint-metadata.md 3.3, 4.2"});
  // DeepSeek V3 / R1 / V3.2 and GLM-5 (glm_moe_dsa): deepseek_v2.py packed map, deepseek_mtp.py
  // (eh_proj is a plain nn.Linear; mtp_block matched under model.layers.{L}).
  t.push_back(ArchNames{"deepseek_v3",
                        {"deepseek_v3", "deepseek_v32", "deepseek_v2", "glm_moe_dsa", "kimi_k2"},
                        {},
                        {{"fused_qkv_a_proj", {"q_a_proj", "kv_a_proj_with_mqa"}},
                         {"gate_up_proj", {"gate_proj", "up_proj"}},
                         {"indexer.wk_weights_proj", {"indexer.wk", "indexer.weights_proj"}}},
                        kDeepseekV2Packed,
                        R"(^model\.layers\.(\d+)\.(.*)$)",
                        true,
                        "model.layers.{L}.{rest}",
                        {},
                        {"eh_proj"},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 3.3, 4.1"});
  // GLM-4.5 MTP: glm4_moe_mtp.py; same layout as DeepSeek's NextN layer, qkv_proj/gate_up_proj stacked.
  t.push_back(ArchNames{"glm4_moe",
                        {"glm4_moe"},
                        {},
                        kLlamaPacked,
                        kLlamaPacked,
                        R"(^model\.layers\.(\d+)\.(.*)$)",
                        true,
                        "model.layers.{L}.{rest}",
                        {},
                        {"eh_proj"},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 4.1"});
  // Qwen3-Next: qwen3_next.py packed map l.764; MTP module prefix "mtp" (on-disk style names).
  t.push_back(ArchNames{"qwen3_next",
                        {"qwen3_next"},
                        {},
                        kLlamaPacked,
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
                         {"gate_up_proj", {"gate_proj", "up_proj"}},
                         {"in_proj_qkvz", {"in_proj_qkvz"}},
                         {"in_proj_ba", {"in_proj_ba"}}},
                        R"(^mtp\.()(.*)$)",
                        false,
                        "mtp.{rest}",
                        {},
                        {},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 3.3, 4.3"});
  // Qwen3.5 / 3.6 (multimodal wrapper): qwen3_vl.py mapper, qwen3_5.py packed map l.450.
  t.push_back(ArchNames{"qwen3_5",
                        {"qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"},
                        {{R::prefix, "model.language_model.", "language_model.model."},
                         {R::prefix, "model.visual.", "visual."},
                         {R::prefix, "lm_head.", "language_model.lm_head."}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
                         {"gate_up_proj", {"gate_proj", "up_proj"}},
                         {"in_proj_qkvz", {"in_proj_qkv", "in_proj_z"}},
                         {"in_proj_ba", {"in_proj_b", "in_proj_a"}}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
                         {"gate_up_proj", {"gate_proj", "up_proj"}},
                         {"in_proj_qkvz", {"in_proj_qkv", "in_proj_z"}},
                         {"in_proj_ba", {"in_proj_b", "in_proj_a"}}},
                        R"(^mtp\.()(.*)$)",
                        false,
                        "mtp.{rest}",
                        {},
                        {},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 3.3, 4.3"});
  // Llama / Qwen2 / Qwen3 dense: llama.py l.489. EAGLE3 drafts (llama model_type) use midlayer.*.
  t.push_back(ArchNames{"llama",
                        {"llama", "qwen2", "qwen3", "mistral"},
                        {},
                        kLlamaPacked,
                        kLlamaPacked,
                        "",
                        false,
                        "",
                        {},
                        {},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 3.3, 4.6"});
  // Nemotron-H: nemotron_h_mtp.py (module prefix "mtp", eh_proj quantizable), backbone.* names.
  t.push_back(ArchNames{"nemotron_h",
                        {"nemotron_h"},
                        {{R::prefix, "backbone.", "model."}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}}},
                        R"(^mtp\.()(.*)$)",
                        false,
                        "mtp.{rest}",
                        {},
                        {},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 4.5"});
  // gpt-oss: gpt_oss.py mapper (.self_attn. -> .attn.), packed qkv_proj; experts stored as
  // *_blocks/*_scales (MXFP4).
  t.push_back(ArchNames{"gpt_oss",
                        {"gpt_oss"},
                        {{R::substr, ".self_attn.", ".attn."}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}}},
                        {{"qkv_proj", {"q_proj", "k_proj", "v_proj"}}},
                        "",
                        false,
                        "",
                        {},
                        {},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 1.3, 3.3"});
  // MiMo: mimo_mtp.py (model.mtp_layers.{i} matched as model.layers.{N+i}; input_proj plain nn.Linear).
  t.push_back(ArchNames{"mimo",
                        {"mimo"},
                        {},
                        kLlamaPacked,
                        kLlamaPacked,
                        R"(^model\.mtp_layers\.(\d+)\.(.*)$)",
                        false,
                        "model.layers.{L}.{rest}",
                        {},
                        {"input_proj"},
                        {},
                        {},
                        "",
                        "checkpoint-metadata.md 4.4"});
  return t;
}

}  // namespace

const std::vector<ArchNames>& arch_names_table() {
  static const std::vector<ArchNames> table = build();
  return table;
}

const ArchNames* find_arch_names(const std::string& model_type, const std::string& architecture) {
  for (const ArchNames& a : arch_names_table())
    if (std::find(a.model_types.begin(), a.model_types.end(), model_type) != a.model_types.end()) return &a;
  if (architecture.rfind("DeepseekV4", 0) == 0) return &arch_names_table()[0];
  if (architecture.rfind("Llama", 0) == 0) return find_arch_names("llama", "");
  return nullptr;
}

}  // namespace specprobe::checkpoint
