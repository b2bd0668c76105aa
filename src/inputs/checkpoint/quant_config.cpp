// Quantization-config normalization, one branch per method vLLM knows (knowledge file 2.2-2.5).
#include "inputs/checkpoint/quant_config.hpp"

#include <algorithm>
#include <cctype>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"

namespace specprobe::checkpoint {
namespace {

std::string str(const Json& o, const char* k) {
  if (!o.is_object()) return {};
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> strings(const Json& o, const char* k) {
  std::vector<std::string> out;
  if (!o.is_object()) return out;
  auto it = o.find(k);
  if (it == o.end() || !it->is_array()) return out;
  for (const Json& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

bool has_list(const Json& o, const char* k) { return o.is_object() && o.contains(k) && o.at(k).is_array(); }

}  // namespace

QuantSpec parse_quant_config(const Json& config, const std::string& source, const std::string& model_type) {
  QuantSpec q;
  if (!config.is_object()) return q;
  Json c = config;
  if (source == "hf_quant_config.json") {
    // Legacy ModelOpt file: {"producer": {...}, "quantization": {...}}.
    const Json& quant =
        config.contains("quantization") && config["quantization"].is_object() ? config["quantization"] : Json::object();
    q.method = "modelopt";
    q.quant_algo = str(quant, "quant_algo");
    q.skip = strings(quant, "exclude_modules");
    q.skip_key = "exclude_modules";
    q.skip_match = SkipMatch::modelopt;
    q.quantizes_linear = true;
    q.kv_cache_scheme = quant.contains("kv_cache_quant_algo") && !quant["kv_cache_quant_algo"].is_null();
  } else {
    q.method = ascii_lower(str(c, "quant_method"));
    q.kv_cache_scheme = c.contains("kv_cache_scheme") && !c["kv_cache_scheme"].is_null();
  }
  const std::string& m = q.method;
  if (m.find("fp8") != std::string::npos && m != "modelopt") {
    // Fp8Config.from_config: ignored_layers, else modules_to_not_convert; "ignore" is not read.
    q.quant_algo = str(c, "fmt");
    if (has_list(c, "ignored_layers")) {
      q.skip = strings(c, "ignored_layers");
      q.skip_key = "ignored_layers";
    } else if (has_list(c, "modules_to_not_convert")) {
      q.skip = strings(c, "modules_to_not_convert");
      q.skip_key = "modules_to_not_convert";
    }
    if (has_list(c, "ignore")) {
      q.unread_skip = strings(c, "ignore");
      q.unread_skip_key = "ignore";
      q.notes.push_back(
          "quant_method fp8 does not read the 'ignore' list (Fp8Config reads ignored_layers or "
          "modules_to_not_convert)");
    }
    q.skip_match = SkipMatch::exact_fused;
    q.quantizes_linear = true;
    if (auto it = c.find("weight_block_size"); it != c.end() && it->is_array()) {
      std::vector<int> b;
      for (const Json& v : *it)
        if (v.is_number_integer()) b.push_back(v.get<int>());
      q.weight_block_size = b;
    }
    q.effective_method = model_type == "deepseek_v4" ? "deepseek_v4_fp8" : m;
  } else if (m == "compressed-tensors") {
    q.format = str(c, "format");
    q.skip = strings(c, "ignore");
    q.skip_key = "ignore";
    q.skip_match = SkipMatch::exact_or_re;
    if (auto it = c.find("config_groups"); it != c.end() && it->is_object()) {
      for (auto g = it->begin(); g != it->end(); ++g) {
        if (!g->is_object()) continue;
        QuantGroup grp;
        grp.name = g.key();
        grp.targets = strings(*g, "targets");
        grp.format = str(*g, "format");
        if (grp.format.empty()) grp.format = q.format;
        const Json& w = g->contains("weights") ? (*g)["weights"] : Json();
        if (w.is_object()) {
          if (w.contains("num_bits") && w["num_bits"].is_number_integer()) grp.num_bits = w["num_bits"].get<int>();
          grp.type = str(w, "type");
          grp.strategy = str(w, "strategy");
          grp.symmetric = w.value("symmetric", Json()).is_boolean() && w["symmetric"].get<bool>();
        }
        grp.activations = g->contains("input_activations") && !(*g)["input_activations"].is_null();
        // Attention-only groups (single target ending in "Attention") are dropped by vLLM.
        if (grp.targets.size() == 1 && grp.targets[0].size() >= 9 &&
            grp.targets[0].compare(grp.targets[0].size() - 9, 9, "Attention") == 0) {
          q.notes.push_back("config group '" + excerpt_name(grp.name) +
                            "' targets only attention and is ignored by vLLM");
          continue;
        }
        q.groups.push_back(std::move(grp));
      }
    }
    q.effective_method = m;
  } else if (m == "modelopt" || m == "modelopt_fp4") {
    if (source != "hf_quant_config.json") {
      q.quant_algo = str(c, "quant_algo");
      q.skip = strings(c, "ignore");
      q.skip_key = "ignore";
      if (q.skip.empty() && has_list(c, "exclude_modules")) {
        q.skip = strings(c, "exclude_modules");
        q.skip_key = "exclude_modules";
      }
      q.skip_match = SkipMatch::modelopt;
      q.quantizes_linear = true;
    }
    const std::string algo = q.quant_algo;
    q.effective_method = algo.find("NVFP4") != std::string::npos && algo != "MIXED_PRECISION" ? "modelopt_fp4"
                         : algo == "MIXED_PRECISION"                                          ? "modelopt_mixed"
                         : algo == "MXFP8"                                                    ? "modelopt_mxfp8"
                                                                                              : "modelopt";
  } else if (m == "awq" || m == "awq_marlin") {
    q.skip = strings(c, "modules_to_not_convert");
    q.skip_key = "modules_to_not_convert";
    q.skip_match = SkipMatch::substring;
    q.quantizes_linear = true;
    q.effective_method = m;
  } else if (m == "gptq" || m == "gptq_marlin" || m == "auto_gptq") {
    q.quantizes_linear = true;
    q.lm_head_quantized = c.contains("lm_head") && c["lm_head"].is_boolean() && c["lm_head"].get<bool>();
    if (auto it = c.find("dynamic"); it != c.end() && it->is_object())
      for (auto d = it->begin(); d != it->end(); ++d)
        if (d.key().rfind("-:", 0) == 0) q.gptq_dynamic_exclude.push_back(d.key().substr(2));
    q.effective_method = m;
  } else if (m == "mxfp4" || m == "gpt_oss_mxfp4") {
    // Mxfp4Config.from_config ignores the dict: only routed experts are quantized.
    q.experts_only = true;
    if (has_list(c, "modules_to_not_convert")) {
      q.unread_skip = strings(c, "modules_to_not_convert");
      q.unread_skip_key = "modules_to_not_convert";
    }
    q.effective_method = m;
  } else if (m == "bitsandbytes") {
    q.skip = strings(c, "llm_int8_skip_modules");
    q.skip_key = "llm_int8_skip_modules";
    q.skip_match = SkipMatch::bnb_component;
    q.quantizes_linear = true;
    q.effective_method = m;
  } else if (!m.empty()) {
    q.effective_method = m;
    q.notes.push_back("quant_method '" + excerpt(m) + "' is not modelled; its layer matching is not checked");
  }
  return q;
}

Json quant_shape_facts(const Json& config) {
  Json block = nullptr, group = nullptr;
  if (config.is_object()) {
    if (auto it = config.find("weight_block_size"); it != config.end() && it->is_array()) block = *it;
    if (auto it = config.find("group_size"); it != config.end() && it->is_number_integer()) group = *it;
    // compressed-tensors: config_groups.<g>.weights.{block_structure, group_size}
    if (auto groups = config.find("config_groups"); groups != config.end() && groups->is_object())
      for (const auto& [_, g] : groups->items()) {
        const Json* w = g.is_object() && g.contains("weights") ? &g["weights"] : nullptr;
        if (!w || !w->is_object()) continue;
        if (block.is_null())
          if (auto it = w->find("block_structure"); it != w->end() && it->is_array()) block = *it;
        if (group.is_null())
          if (auto it = w->find("group_size"); it != w->end() && it->is_number_integer()) group = *it;
      }
  }
  return {{"weight_block_size", block}, {"group_size", group}};
}

}  // namespace specprobe::checkpoint
