// Quantization configs as the serving engines read them: fp8 (block), compressed-tensors,
// ModelOpt (config.json form and hf_quant_config.json), AWQ, GPTQ (incl. dynamic), mxfp4 and
// bitsandbytes. Produces one normalized QuantSpec whose skip list carries the matching semantics of
// the method that reads it (vLLM's vllm/model_executor/layers/quantization/*, e.g.
// compressed_tensors/utils.py should_ignore_layer, modelopt.py exclude_modules). Pure function.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe::checkpoint {

// How a method's skip list is compared with a runtime module name (vLLM).
enum class SkipMatch {
  none,
  exact_or_re,    // compressed-tensors: "re:" = re.match anchored at the start, else exact
  exact_fused,    // Fp8Config is_layer_skipped: exact membership, fused shards expanded
  substring,      // AWQ skip_with_substr
  modelopt,       // exact/fused, legacy substring, fnmatch glob
  bnb_component,  // bitsandbytes: a dot-component or a dotted prefix
};

struct QuantGroup {
  std::string name;
  std::vector<std::string> targets;
  std::string format;  // per-group format, else the global one
  std::optional<int> num_bits;
  std::string type;          // "int" | "float"
  std::string strategy;      // "group" | "channel" | "block" | ...
  bool symmetric = false;    // weights.symmetric: no zero points stored
  bool activations = false;  // input_activations present
};

struct QuantSpec {
  std::string method;  // "" (none), fp8, compressed-tensors, modelopt, awq, gptq, mxfp4, bitsandbytes, ...
  std::string
      effective_method;    // after overrides (fp8 + deepseek_v4 -> deepseek_v4_fp8; modelopt NVFP4 -> modelopt_fp4)
  std::string format;      // compressed-tensors global format
  std::string quant_algo;  // ModelOpt quant_algo; fp8 fmt
  std::vector<std::string> skip;  // the skip list the method reads
  std::string skip_key;           // key it came from
  SkipMatch skip_match = SkipMatch::none;
  std::vector<std::string> unread_skip;  // a skip-like list present but not read by this method
  std::string unread_skip_key;
  std::vector<QuantGroup> groups;  // compressed-tensors config_groups
  std::optional<std::vector<int>> weight_block_size;
  bool quantizes_linear = false;   // non-matched Linear layers are quantized by default (fp8, modelopt, ...)
  bool experts_only = false;       // mxfp4: only routed experts
  bool lm_head_quantized = false;  // GPTQ lm_head: true
  std::vector<std::string> gptq_dynamic_exclude;  // "-:" patterns of GPTQ dynamic
  bool kv_cache_scheme = false;
  std::vector<std::string> notes;
};

// CONFIG: the quantization dict (or hf_quant_config.json document when SOURCE is
// "hf_quant_config.json"); MODEL_TYPE decides model-specific overrides.
QuantSpec parse_quant_config(const Json& config, const std::string& source, const std::string& model_type);

// The weight tiling CONFIG states, as facts: weight_block_size ([n, k] of block FP8; compressed-
// tensors block_structure) and group_size (GPTQ / AWQ; compressed-tensors weights.group_size).
// Null when the config does not say.
Json quant_shape_facts(const Json& config);

}  // namespace specprobe::checkpoint
