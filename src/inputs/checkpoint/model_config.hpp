// Reads a model's config.json (from a checkpoint directory, a Hugging Face cache repo directory,
// or the file itself) into the fields specprobe's rules need, and turns them into "model.*" facts.
// Only metadata is read: config.json and, for ModelOpt checkpoints, hf_quant_config.json. Never
// writes. Unknown values stay unknown (std::nullopt -> absent/null fact), never guessed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "inputs/text/json_relaxed.hpp"

namespace specprobe {

struct ModelConfig {
  // Where it came from.
  std::string path;             // the config.json read
  std::string dir;              // checkpoint directory holding it (a snapshot dir for HF caches)
  std::string cache_repo;       // "models--org--name" directory when an HF cache was given, else ""
  std::string snapshot;         // revision directory name inside snapshots/, else ""
  std::string snapshot_choice;  // "refs/main" | "only" | "newest" | ""

  Json raw;   // the whole config.json
  Json text;  // text_config of multimodal wrappers, else == raw
  bool has_text_config = false;

  std::optional<std::string> architecture;  // architectures[0]
  std::optional<std::string> model_type;    // top-level model_type (the wrapper's for multimodal)
  std::optional<std::string> text_model_type;
  std::optional<int64_t> num_attention_heads;
  std::optional<int64_t> num_kv_heads;  // num_key_value_heads, default = num_attention_heads
  std::optional<int64_t> head_dim;      // head_dim, else hidden_size/heads; MLA: kv_lora_rank+qk_rope_head_dim
  std::optional<int64_t> hidden_size;
  std::optional<int64_t> kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim, q_lora_rank;
  bool mla = false;  // kv_lora_rank present, or model_type deepseek_v4 (MLA-like, head_dim 512)
  bool dsa = false;  // index_n_heads, index_head_dim and index_topk all present
  std::optional<int64_t> index_n_heads, index_head_dim, index_topk;
  std::optional<int64_t> mtp_depth;  // num_nextn_predict_layers or mtp_num_hidden_layers
  std::optional<int64_t> num_hidden_layers;
  std::optional<std::string> dtype;  // torch_dtype, else dtype
  std::optional<int64_t> max_position_embeddings;
  std::optional<int64_t> vocab_size;

  // Quantization config as vLLM finds it: config.json quantization_config -> text_config's ->
  // compression_config -> hf_quant_config.json (ModelOpt).
  Json quant_config;                        // the dict found (null when none)
  std::string quant_config_source;          // "quantization_config" | "text_config.quantization_config" |
                                            // "compression_config" | "hf_quant_config.json" | ""
  std::string quant_config_file;            // file it was read from
  std::optional<std::string> quant_method;  // lower-cased quant_method ("modelopt" for hf_quant_config.json)
  bool kv_cache_scheme = false;             // kv_cache_scheme (or ModelOpt kv_cache_quant_algo) set

  std::vector<NonFiniteToken> non_finite;  // bare NaN/Infinity tokens met in config.json
  std::vector<std::string> notes;          // e.g. which HF snapshot was chosen
};

// DIR_OR_FILE: a directory with config.json, an HF cache repo dir (models--org--name with
// snapshots/<rev>/; refs/main wins, else the only or the newest snapshot), or a config.json path.
// Errors (input): missing path, no config.json, unreadable file, invalid JSON (file:line:col),
// top level not an object, an object-valued key holding something else, a count of the wrong type,
// a count outside every model's range (num_hidden_layers 2000000000, num_attention_heads 0,
// more KV heads than query heads): a corrupt config.json is a file specprobe cannot use, named
// with the field, not a finding about a model that does not exist.
Expected<ModelConfig> read_model_config(const std::string& dir_or_file);

// A Hugging Face repo id ("org/name": one '/', letters, digits, '.', '_', '-'), not a path.
bool looks_like_repo_id(std::string_view s);

// The local Hugging Face cache directory of REPO_ID (<hub>/models--org--name) when one of its
// snapshots holds config.json; the hub is HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub, as huggingface_hub resolves it.
// Reads the local disk only, never the network. HUB receives the hub directory looked in.
std::optional<std::string> find_in_hf_cache(const std::string& repo_id, std::string* hub = nullptr);

// Facts under "model." for tensor-parallel size TP (TP < 1 is treated as 1):
//   model.path, model.architecture, model.model_type, model.num_attention_heads, model.num_kv_heads,
//   model.head_dim, model.gqa_ratio (per rank: heads/tp over max(1, kv/tp); integer when it
//   divides), model.gqa_ratio_global, model.mla, model.mla_dims.{kv_lora_rank, qk_rope_head_dim,
//   qk_nope_head_dim, v_head_dim, q_lora_rank}, model.dsa.{present, index_n_heads, index_head_dim,
//   index_topk}, model.mtp_depth, model.has_mtp_layers, model.num_hidden_layers, model.dtype, model.quant_method,
//   model.quant_config_source, model.kv_cache_scheme, model.max_position_embeddings,
//   model.vocab_size, model.hidden_size, model.hf_cache.{repo, snapshot, choice} (HF cache only),
//   model.non_finite_values (count, when any). Unknown values are null.
Json model_facts(const ModelConfig& config, int tp);

}  // namespace specprobe
