// Per-architecture naming tables: how on-disk tensor names become the runtime module names that
// vLLM's quantization matching sees (hf_to_vllm_mapper renames, load-time fusion, the
// packed_modules_mapping consulted by ignore matching, MTP layer renumbering, modules built without
// a quant config). Data only; the code that applies it is in names.cpp and layer_map.cpp. Every
// row follows vLLM @ 5ed15f42's model files (see name_tables.cpp).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace specprobe::checkpoint {

struct Rename {
  enum Kind { prefix, suffix, substr, regex, exact } kind;
  std::string from;
  std::string to;
};

// fused -> shards. load_fuse entries are dotted suffix paths ("attn.fused_wqa_wkv" <- "attn.wq_a"),
// packed_map entries are leaves, as vLLM's packed_modules_mapping.
using FusedMap = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct ArchNames {
  std::string family;                    // "deepseek_v4", ...
  std::vector<std::string> model_types;  // config model_type values (top level or text_config)
  std::vector<Rename> mapper;            // hf_to_vllm_mapper, applied to "<module>.weight" and to ignore entries
  FusedMap load_fuse;                    // load-time stacking: shard leaves fused into one runtime module
  FusedMap packed_map;                   // packed_modules_mapping the quant config consults (may be empty)
  // MTP / draft layers on disk: a regex whose first group is the layer index (or empty), second the
  // rest of the module name. index_is_layer_id: the index is the absolute layer id (DeepSeek V3:
  // model.layers.61 with 61 >= num_hidden_layers) rather than the MTP ordinal k.
  std::string mtp_regex;
  bool index_is_layer_id = false;
  // Runtime quant-match name of an MTP module: {L} = num_hidden_layers + k, {k}, {rest}.
  std::string mtp_runtime;
  std::vector<Rename> mtp_renames;           // applied to the runtime MTP name (after the template)
  std::vector<std::string> never_quantized;  // runtime suffix paths built with quant_config=None / plain nn.Linear
  std::vector<std::string>
      needs_scale_inv;  // runtime suffix paths whose kernel reads weight_scale_inv (FP8 block only)
  // MTP leaves constructed without prefix= before a fix: matched as "" by older builds.
  std::vector<std::string> mtp_empty_prefix_leaves;
  std::string empty_prefix_fix;  // e.g. "vllm-project/vllm#44821 (2026-06-10)"
  std::string source;            // knowledge-file citation
};

// The table for MODEL_TYPE (or ARCHITECTURE as a fallback), or nullptr when none is known.
const ArchNames* find_arch_names(const std::string& model_type, const std::string& architecture);

const std::vector<ArchNames>& arch_names_table();

}  // namespace specprobe::checkpoint
