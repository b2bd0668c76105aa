// The weights inventory (checkpoint.weights): the checkpoint's bytes grouped by how the serving
// engines shard them across GPUs, from the safetensors headers when the shards (or their fetched
// headers) are there, else computed from config.json and the quantization config. The memory
// model (facts/derive_memory.cpp) divides each class by the parallel sizes of the plan.
//
// Classes (bytes), for the main decoder layers ("layers") and the checkpoint's MTP layers ("mtp"):
//   attn             attention projections split across tensor-parallel ranks (q, o; MLA q_b, kv_b;
//                    linear-attention projections)
//   kv_proj          GQA k/v projections: split across min(TP, KV heads) ranks, replicated beyond
//   attn_replicated  MLA's latent down-projections (q_a, kv_a) and the DSA indexer: ReplicatedLinear
//                    in vLLM and SGLang, whole on every rank
//   dense            dense MLPs and shared experts: split across TP ranks
//   experts          routed experts: split across the expert-parallel (or else TP) ranks
//   replicated       norms, MoE routers, biases of replicated layers: whole on every rank
// and outside the layers: embed, lm_head (vocabulary-parallel), vision (a multimodal encoder),
// other (final norm and anything not recognised: whole on every rank).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {

namespace {

// Layer and MTP counts the config-based inventory sums (every released model has under 200).
constexpr int64_t kMaxLayers = 4096;

constexpr const char* kLayerClasses[] = {"attn", "kv_proj", "attn_replicated", "dense", "experts", "replicated"};

Json empty_classes() {
  Json j = Json::object();
  for (const char* c : kLayerClasses) j[c] = 0;
  return j;
}

Json empty_inventory(const char* source) {
  return Json{{"source", source},
              {"bytes", 0},
              {"embed", 0},
              {"lm_head", 0},
              {"vision", 0},
              {"other", 0},
              {"layers", empty_classes()},
              {"mtp", empty_classes()}};
}

int64_t cfg_int(const Json& c, std::initializer_list<const char*> keys, int64_t fallback = 0) {
  for (const char* k : keys)
    if (auto it = c.find(k); it != c.end() && it->is_number_integer()) return it->get<int64_t>();
  return fallback;
}

bool cfg_bool(const Json& c, const char* key, bool fallback) {
  if (auto it = c.find(key); it != c.end() && it->is_boolean()) return it->get<bool>();
  return fallback;
}

// Bytes of one element of the checkpoint's unquantized weights (torch_dtype; float32 checkpoints
// are served in 16 bits by both engines' dtype "auto").
double dtype_bytes(const std::optional<std::string>& dtype) { return dtype && *dtype == "float64" ? 8 : 2; }

// The layer index in a tensor name ("model.layers.12.mlp..." -> 12), or -1.
int64_t layer_index(std::string_view name) {
  for (std::string_view key : {std::string_view("layers."), std::string_view("h."), std::string_view("blocks.")}) {
    size_t p = 0;
    while ((p = name.find(key, p)) != std::string_view::npos) {
      if (p == 0 || name[p - 1] == '.') {
        size_t q = p + key.size();
        int64_t v = 0;
        size_t digits = 0;
        while (q < name.size() && name[q] >= '0' && name[q] <= '9') {
          if (digits >= 18) return -1;  // no model has that many layers; never overflows
          v = v * 10 + (name[q] - '0');
          ++q;
          ++digits;
        }
        if (digits && q < name.size() && name[q] == '.') return v;
      }
      p += key.size();
    }
  }
  return -1;
}

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_vision(std::string_view n) {
  for (std::string_view p : {"visual.", "vision_tower", "vision_model", "multi_modal_projector", "mm_projector",
                             "vision_encoder", "image_newline", "audio_tower", "vision_embed"})
    if (has(n, p)) return true;
  return false;
}

// The class of a tensor inside a decoder layer, by its name.
const char* layer_class(std::string_view n) {
  if (has(n, "shared_expert")) return "dense";
  if (has(n, ".experts.") || has(n, ".experts_")) return "experts";
  if (has(n, "norm") || has(n, "e_score_correction_bias") || has(n, ".router.") || ends_with(n, ".gate.weight") ||
      ends_with(n, ".gate.bias") || has(n, "sink"))
    return "replicated";
  const bool attn =
      has(n, "self_attn.") || has(n, ".attn.") || has(n, ".attention.") || has(n, "linear_attn.") || has(n, ".mixer.");
  if (attn) {
    if (has(n, "q_a_proj") || has(n, "kv_a_proj") || has(n, "indexer.") || has(n, "fused_qkv_a_proj") ||
        has(n, ".wkv_a") || has(n, ".wq_a"))
      return "attn_replicated";
    if (has(n, ".k_proj.") || has(n, ".v_proj.")) return "kv_proj";
    return "attn";
  }
  if (has(n, "mlp.") || has(n, "feed_forward.") || has(n, ".ffn.")) return "dense";
  return "replicated";
}

bool is_embed(std::string_view n) {
  return has(n, "embed_tokens") || has(n, "word_embeddings") || has(n, "wte.") || has(n, "tok_emb") ||
         n == "embed.weight" || ends_with(n, ".embed.weight");
}
bool is_lm_head(std::string_view n) {
  return starts_with(n, "lm_head") || has(n, ".lm_head.") || has(n, "shared_head.head") || n == "output.weight" ||
         n == "head.weight" || ends_with(n, ".head.weight");
}

// --------------------------------------------------------------------------------------------
// From the headers

// What a tensor name says, whatever its layer and expert numbers: names are classified once per
// shape of name (DeepSeek-V3's 92k tensors have a few hundred), then summed in plain counters.
struct NameKind {
  uint8_t cls = 0;  // index into kLayerClasses
  bool vision = false, embed = false, head = false, mtp_name = false;
};

// N with every run of digits as one '#' ("model.layers.#.mlp.experts.#.w1.weight"), written into
// OUT (reused across names: this runs once per tensor, ~92,000 times on DeepSeek-V3).
void digits_folded(std::string_view n, std::string& out) {
  out.resize(n.size());
  char* o = out.data();
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    if (c >= '0' && c <= '9') {
      *o++ = '#';
      while (i + 1 < n.size() && n[i + 1] >= '0' && n[i + 1] <= '9') ++i;
    } else {
      *o++ = c;
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
}

NameKind kind_of(std::string_view n) {
  NameKind k;
  const char* cls = layer_class(n);
  for (uint8_t c = 0; c < std::size(kLayerClasses); ++c)
    if (std::string_view(kLayerClasses[c]) == cls) k.cls = c;
  k.vision = is_vision(n);
  k.embed = is_embed(n);
  k.head = is_lm_head(n);
  k.mtp_name = starts_with(n, "mtp.") || has(n, ".mtp.") || has(n, "mtp_layers.");
  return k;
}

void tally_headers(Analysis& a, Json& w) {
  const int64_t layers = a.cfg.num_hidden_layers.value_or(-1);
  constexpr size_t kClasses = std::size(kLayerClasses);
  uint64_t total = 0, vision = 0, embed = 0, head = 0, other = 0;
  uint64_t main[kClasses] = {}, mtp[kClasses] = {};
  std::unordered_map<std::string, NameKind> kinds;
  std::string folded;
  for (const TensorRef& r : a.refs) {
    const std::string_view n = r.t->name;
    const uint64_t bytes = r.t->end - r.t->begin;
    total += bytes;
    digits_folded(n, folded);
    auto it = kinds.find(folded);
    if (it == kinds.end()) it = kinds.emplace(folded, kind_of(n)).first;
    const NameKind& k = it->second;
    if (k.vision) {
      vision += bytes;
      continue;
    }
    const int64_t li = layer_index(n);
    if (k.mtp_name || (layers >= 0 && li >= layers)) {
      // An MTP layer's own copies of the embedding and the head are not loaded: the engines share
      // the target's (vLLM's EagleProposer, SGLang's NextN models).
      if (!k.embed && !k.head) mtp[k.cls] += bytes;
      continue;
    }
    if (k.embed)
      embed += bytes;
    else if (k.head)
      head += bytes;
    else if (li >= 0)
      main[k.cls] += bytes;
    else
      other += bytes;
  }
  w["bytes"] = total;
  w["vision"] = vision;
  w["embed"] = embed;
  w["lm_head"] = head;
  w["other"] = other;
  for (size_t c = 0; c < kClasses; ++c) {
    w["layers"][kLayerClasses[c]] = main[c];
    w["mtp"][kLayerClasses[c]] = mtp[c];
  }
}

// --------------------------------------------------------------------------------------------
// From config.json

// What one quantized weight element costs, with its scales and zero points; nullopt when the
// config does not say enough.
struct QuantCost {
  double bytes = 2;     // per element of a quantized linear weight
  bool linear = false;  // linear layers are quantized unless skipped
  bool experts_only = false;
  bool lm_head = false;
  std::string what;  // "fp8", "int4 g128", ...
  // ModelOpt MIXED_PRECISION: each listed module's own format, by layer and block (self_attn,
  // linear_attn, mlp.experts, mlp.shared_expert, mlp); a module not listed is not quantized.
  std::map<std::pair<int64_t, std::string>, double> mixed;
  std::optional<double> mixed_lm_head;
};

// The block of a module name inside its layer: "self_attn", "linear_attn", "mlp.experts",
// "mlp.shared_expert", "mlp" (a dense MLP's gate/up/down), "" when NAME is not in a layer.
std::string layer_block(std::string_view name) {
  const int64_t i = layer_index(name);
  if (i < 0) return "";
  const std::string idx = "layers." + std::to_string(i) + ".";
  const size_t p = name.find(idx);
  if (p == std::string_view::npos) return "";
  std::string_view rest = name.substr(p + idx.size());
  const size_t dot = rest.find('.');
  const std::string_view first = rest.substr(0, dot);
  if (first == "mlp" || first == "feed_forward" || first == "block_sparse_moe") {
    const std::string_view second =
        dot == std::string_view::npos ? "" : rest.substr(dot + 1, rest.find('.', dot + 1) - dot - 1);
    if (second == "experts" || second == "shared_expert" || second == "shared_experts")
      return "mlp." + std::string(second);
    return "mlp";
  }
  return std::string(first);
}

// Bytes per weight element of a ModelOpt quant_algo (NVFP4: e2m1 + an fp8 scale per 16; FP8;
// INT4 AWQ with a 16-bit scale per GROUP), nullopt for one not known here.
std::optional<double> modelopt_algo_bytes(const std::string& algo, int64_t group) {
  const std::string a = ascii_upper(algo);
  if (a.find("FP4") != std::string::npos) return 0.5 + 1.0 / 16;
  if (a.find("FP8") != std::string::npos || a.find("INT8") != std::string::npos || a == "W8A8") return 1.0;
  if (a.find("INT4") != std::string::npos || a.find("W4A8") != std::string::npos ||
      a.find("W4A16_AWQ") != std::string::npos)
    return 0.5 + 2.0 / static_cast<double>(group > 0 ? group : 128);
  return std::nullopt;
}

QuantCost quant_cost(const QuantSpec& q, const Json& qc, const std::string& serve_quant) {
  QuantCost c;
  const std::string m = ascii_lower(q.effective_method.empty() ? q.method : q.effective_method);
  const int64_t group = [&]() -> int64_t {
    const Json s = quant_shape_facts(qc);
    if (s.contains("group_size") && s["group_size"].is_number_integer()) return s["group_size"].get<int64_t>();
    return 128;
  }();
  auto int_bits = [&](int bits, bool zeros = true) {
    const double gs = group > 0 ? static_cast<double>(group) : 128.0;
    // packed weight + a 16-bit scale per group (+ a packed zero point per group unless symmetric)
    c.bytes = bits / 8.0 + (2.0 + (zeros ? bits / 8.0 : 0.0)) / gs;
    c.linear = true;
    c.what = fmt::format("int{} g{}", bits, group);
  };
  if (m.empty()) {
    // Online quantization of an unquantized checkpoint (--quantization fp8).
    if (serve_quant == "fp8") {
      c.bytes = 1;
      c.linear = true;
      c.what = "fp8 (online)";
    }
    return c;
  }
  if (m == "mxfp4") {
    c.bytes = 0.5 + 1.0 / 32;
    c.linear = true;
    c.experts_only = true;
    c.what = "mxfp4 experts";
    return c;
  }
  if (m.find("fp8") != std::string::npos || m == "fbgemm_fp8" || m == "deepseek_v4_fp8") {
    c.bytes = 1;
    c.linear = true;
    c.what = "fp8";
    return c;
  }
  if (m == "modelopt_mixed") {
    const Json* layers = nullptr;
    for (const Json* d : {&qc, qc.contains("quantization") ? &qc["quantization"] : nullptr})
      if (d && d->is_object() && d->contains("quantized_layers") && (*d)["quantized_layers"].is_object())
        layers = &(*d)["quantized_layers"];
    if (!layers) return c;  // nothing says which module is in which format
    std::map<std::pair<int64_t, std::string>, std::set<double>> seen;
    std::set<std::string> algos;
    for (const auto& [name, entry] : layers->items()) {
      if (!entry.is_object() || !entry.value("quant_algo", Json()).is_string()) continue;
      const std::string algo = entry["quant_algo"].get<std::string>();
      const auto b = modelopt_algo_bytes(algo, cfg_int(entry, {"group_size"}, 128));
      if (!b) continue;
      algos.insert(ascii_lower(algo));
      if (name == "lm_head" || (name.size() > 8 && name.compare(name.size() - 8, 8, ".lm_head") == 0)) {
        c.mixed_lm_head = *b;
        continue;
      }
      const std::string block = layer_block(name);
      if (!block.empty()) seen[{layer_index(name), block}].insert(*b);
    }
    // A block whose modules differ takes the larger format (within the 3% the inventory is for).
    for (const auto& [key, bytes] : seen) c.mixed[key] = *bytes.rbegin();
    c.linear = !c.mixed.empty();
    for (const std::string& a : algos) c.what += (c.what.empty() ? "" : " + ") + a;
    return c;
  }
  if (m == "modelopt" || m == "modelopt_fp4") {
    const std::string algo = ascii_upper(q.quant_algo);
    if (algo.find("FP4") != std::string::npos || m == "modelopt_fp4") {
      c.bytes = 0.5 + 1.0 / 16;
      c.what = "nvfp4";
    } else {
      c.bytes = 1;
      c.what = "fp8";
    }
    c.linear = true;
    return c;
  }
  if (m == "awq" || m == "awq_marlin" || m == "gptq" || m == "gptq_marlin" || m == "auto-round" || m == "autoround") {
    int64_t bits = cfg_int(qc, {"bits", "w_bit"}, 4);
    int_bits(static_cast<int>(bits));
    c.lm_head = q.lm_head_quantized;
    return c;
  }
  if (m == "bitsandbytes") {
    const bool four = cfg_bool(qc, "load_in_4bit", true) && !cfg_bool(qc, "load_in_8bit", false);
    c.bytes = four ? 0.5 + 4.0 / 64 : 1;
    c.linear = true;
    c.what = four ? "bnb 4-bit" : "bnb 8-bit";
    return c;
  }
  if (m == "compressed-tensors") {
    for (const QuantGroup& g : q.groups) {
      if (!g.num_bits) continue;
      const int bits = *g.num_bits;
      if (g.type == "float" && bits == 4) {
        c.bytes = 0.5 + 1.0 / 16;
        c.linear = true;
        c.what = "nvfp4";
      } else if (bits == 8) {
        c.bytes = 1;
        c.linear = true;
        c.what = g.type == "float" ? "fp8" : "int8";
      } else {
        int_bits(bits, !g.symmetric);
      }
      return c;
    }
    return c;
  }
  return c;
}

// One module of a synthesized layer.
struct Module {
  const char* cls;
  std::string name;  // vLLM runtime name, for the skip list
  double params;
  bool linear;  // a quantizable linear layer (not a norm, router or embedding)
  bool expert = false;
};

struct Synth {
  const Json& t;
  double elt;
  QuantCost qc;
  const QuantSpec& q;
  Matcher* match;
  bool per_layer_skip;  // the skip list names layers: check each layer's modules
  std::vector<std::string> skip;
};

bool is_moe_layer(const Json& t, int64_t i, int64_t experts) {
  if (experts <= 0) return false;
  const int64_t first_dense = cfg_int(t, {"first_k_dense_replace"}, 0);
  const int64_t freq = cfg_int(t, {"moe_layer_freq"}, 1);
  if (i < first_dense || (freq > 1 && i % freq != 0)) return false;
  if (auto it = t.find("mlp_only_layers"); it != t.end() && it->is_array())
    for (const Json& v : *it)
      if (v.is_number_integer() && v.get<int64_t>() == i) return false;
  const int64_t step = cfg_int(t, {"decoder_sparse_step", "interleave_moe_layer_step"}, 1);
  if (step > 1 && (i + 1) % step != 0) return false;
  return true;
}

// Linear-attention (gated delta net) layers of a hybrid model.
bool is_linear_attention_layer(const Json& t, int64_t i) {
  if (auto it = t.find("layer_types"); it != t.end() && it->is_array() && i < static_cast<int64_t>(it->size()))
    return (*it)[i].is_string() && (*it)[i].get<std::string>() == "linear_attention";
  const int64_t interval = cfg_int(t, {"full_attention_interval"}, 0);
  if (interval > 0 && t.contains("linear_num_key_heads")) return (i + 1) % interval != 0;
  return false;
}

// Gemma 4's full-attention layers: their own head size and KV heads (global_head_dim,
// num_global_key_value_heads; vLLM gemma4.py per_layer_config).
bool is_global_attention_layer(const Json& t, int64_t i) {
  if (!t.contains("global_head_dim") && !t.contains("num_global_key_value_heads")) return false;
  auto lt = t.find("layer_types");
  return lt != t.end() && lt->is_array() && i < static_cast<int64_t>(lt->size()) && (*lt)[i] == "full_attention";
}

std::vector<Module> layer_modules(const Json& t, int64_t i, const std::string& prefix) {
  std::vector<Module> m;
  const double h = static_cast<double>(cfg_int(t, {"hidden_size", "d_model", "n_embd"}));
  const int64_t heads = cfg_int(t, {"num_attention_heads", "n_head"});
  int64_t kv = cfg_int(t, {"num_key_value_heads", "num_kv_heads"}, heads);
  double hd = static_cast<double>(cfg_int(t, {"head_dim"}, heads ? static_cast<int64_t>(h) / heads : 0));
  // With attention_k_eq_v a global layer's checkpoint ships no v_proj, but vLLM's qkv_proj still
  // holds a V slot, loaded with K.
  if (is_global_attention_layer(t, i)) {
    if (const int64_t g = cfg_int(t, {"global_head_dim"}, 0); g > 0) hd = static_cast<double>(g);
    if (const int64_t g = cfg_int(t, {"num_global_key_value_heads"}, 0); g > 0) kv = g;
  }
  const std::string p = prefix + std::to_string(i) + ".";
  if (is_linear_attention_layer(t, i)) {
    const double nk = static_cast<double>(cfg_int(t, {"linear_num_key_heads"}));
    const double nv = static_cast<double>(cfg_int(t, {"linear_num_value_heads"}));
    const double dk = static_cast<double>(cfg_int(t, {"linear_key_head_dim"}));
    const double dv = static_cast<double>(cfg_int(t, {"linear_value_head_dim"}));
    const double conv = static_cast<double>(cfg_int(t, {"linear_conv_kernel_dim"}, 4));
    m.push_back({"attn", p + "linear_attn.in_proj_qkvz", h * (2 * nk * dk + 2 * nv * dv), true});
    m.push_back({"attn", p + "linear_attn.in_proj_ba", h * 2 * nv, true});
    m.push_back({"attn", p + "linear_attn.out_proj", nv * dv * h, true});
    m.push_back({"attn", p + "linear_attn.conv1d", (2 * nk * dk + nv * dv) * conv, false});
    m.push_back({"replicated", p + "linear_attn.norm", dv + 2 * nv, false});
  } else if (t.contains("kv_lora_rank") && t["kv_lora_rank"].is_number_integer()) {
    const double r = static_cast<double>(cfg_int(t, {"kv_lora_rank"}));
    const double rope = static_cast<double>(cfg_int(t, {"qk_rope_head_dim"}));
    const double nope = static_cast<double>(cfg_int(t, {"qk_nope_head_dim"}));
    const double vd = static_cast<double>(cfg_int(t, {"v_head_dim"}, static_cast<int64_t>(nope)));
    const double ql = static_cast<double>(cfg_int(t, {"q_lora_rank"}));
    const double H = static_cast<double>(heads);
    if (ql > 0) {
      m.push_back({"attn_replicated", p + "self_attn.q_a_proj", h * ql, true});
      m.push_back({"attn_replicated", p + "self_attn.q_a_layernorm", ql, false});
      m.push_back({"attn", p + "self_attn.q_b_proj", ql * H * (nope + rope), true});
    } else {
      m.push_back({"attn", p + "self_attn.q_proj", h * H * (nope + rope), true});
    }
    m.push_back({"attn_replicated", p + "self_attn.kv_a_proj_with_mqa", h * (r + rope), true});
    m.push_back({"attn_replicated", p + "self_attn.kv_a_layernorm", r, false});
    m.push_back({"attn", p + "self_attn.kv_b_proj", r * H * (nope + vd), true});
    m.push_back({"attn", p + "self_attn.o_proj", H * vd * h, true});
    const double ih = static_cast<double>(cfg_int(t, {"index_n_heads"}));
    const double id = static_cast<double>(cfg_int(t, {"index_head_dim"}));
    if (ih > 0 && id > 0) {
      m.push_back({"attn_replicated", p + "self_attn.indexer.wq_b", ql * ih * id, true});
      m.push_back({"attn_replicated", p + "self_attn.indexer.wk", h * id, true});
      m.push_back({"attn_replicated", p + "self_attn.indexer.weights_proj", h * ih, false});
      m.push_back({"attn_replicated", p + "self_attn.indexer.k_norm", 2 * id, false});
    }
  } else {
    const bool bias = cfg_bool(t, "attention_bias", false) || cfg_bool(t, "qkv_bias", false);
    const std::string mt = t.value("model_type", "");
    const bool qkv_bias = bias || mt.rfind("qwen2", 0) == 0;
    m.push_back({"attn", p + "self_attn.q_proj", h * heads * hd + (qkv_bias ? heads * hd : 0), true});
    m.push_back({"kv_proj", p + "self_attn.k_proj", 2 * (h * kv * hd + (qkv_bias ? kv * hd : 0)), true});
    m.push_back({"attn", p + "self_attn.o_proj", heads * hd * h, true});
    if (mt.rfind("qwen3", 0) == 0 || mt.rfind("gemma3", 0) == 0 || t.contains("qk_norm"))
      m.push_back({"replicated", p + "self_attn.q_norm", 2 * hd, false});
  }
  m.push_back({"replicated", p + "input_layernorm", 2 * h, false});
  const int64_t experts = cfg_int(t, {"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"});
  if (is_moe_layer(t, i, experts)) {
    const double mi = static_cast<double>(cfg_int(t, {"moe_intermediate_size", "intermediate_size"}));
    const double E = static_cast<double>(experts);
    m.push_back({"experts", p + "mlp.experts", E * 3 * h * mi, true, true});
    m.push_back({"replicated", p + "mlp.gate", h * E + E, false});
    const double shared_n = static_cast<double>(cfg_int(t, {"n_shared_experts", "num_shared_experts"}));
    const double shared_i = static_cast<double>(cfg_int(t, {"shared_expert_intermediate_size"}));
    const std::string mt = t.value("model_type", "");
    if (shared_i > 0) {
      m.push_back({"dense", p + "mlp.shared_expert", 3 * h * shared_i, true});
      m.push_back({"replicated", p + "mlp.shared_expert_gate", h, false});
    } else if (shared_n > 0) {
      m.push_back({"dense", p + "mlp.shared_experts", shared_n * 3 * h * mi, true});
    } else if (mt.rfind("llama4", 0) == 0) {
      m.push_back({"dense", p + "feed_forward.shared_expert", 3 * h * mi, true});
    }
    // Gemma 4's MoE block runs next to the layer's dense MLP (vLLM gemma4.py: `mlp` always,
    // `experts` when num_experts is set).
    if (mt.rfind("gemma4", 0) == 0)
      if (const double di = static_cast<double>(cfg_int(t, {"intermediate_size"}));
          di > 0 && t.contains("moe_intermediate_size"))
        m.push_back({"dense", p + "mlp.gate_up_proj", 3 * h * di, true});
  } else {
    const double di = static_cast<double>(cfg_int(t, {"intermediate_size_mlp", "intermediate_size", "n_inner"}));
    if (di > 0) m.push_back({"dense", p + "mlp.gate_up_proj", 3 * h * di, true});
  }
  return m;
}

bool module_skipped(Synth& s, const Module& mod) {
  if (!s.qc.linear || !mod.linear) return true;
  if (s.qc.experts_only && !mod.expert) return true;
  if (s.skip.empty() || !s.match) return false;
  bool disagree = false;
  return s.match->skipped(mod.name, s.skip, disagree);
}

// Bytes per element of MOD: its own format under mixed precision, else the checkpoint's.
double module_bytes(Synth& s, const Module& mod) {
  if (module_skipped(s, mod)) return s.elt;
  if (s.qc.mixed.empty()) return s.qc.bytes;
  auto it = s.qc.mixed.find({layer_index(mod.name), layer_block(mod.name)});
  return it == s.qc.mixed.end() ? s.elt : it->second;
}

void add_layer(Synth& s, Json& classes, const std::vector<Module>& mods) {
  for (const Module& mod : mods) {
    const double per = module_bytes(s, mod);
    Json& slot = classes[mod.cls];
    // A negative or absurd size in a hand-edited config counts as nothing, never wraps.
    const double b = mod.params * per;
    slot = slot.get<uint64_t>() + (b > 0 && b < 1e18 ? static_cast<uint64_t>(std::llround(b)) : 0);
  }
}

// A vision encoder's parameters from vision_config (ViT: per layer 4 h^2 + 2 h i, plus the patch
// embedding and a projector to the text width). Estimates only the common ViT shape.
double vision_params(const Json& raw, double text_hidden) {
  auto it = raw.find("vision_config");
  if (it == raw.end() || !it->is_object()) return 0;
  const Json& v = *it;
  const double h = static_cast<double>(cfg_int(v, {"hidden_size", "embed_dim", "width"}));
  const double i = static_cast<double>(cfg_int(v, {"intermediate_size"}, static_cast<int64_t>(4 * h)));
  const double layers = static_cast<double>(cfg_int(v, {"num_hidden_layers", "depth", "layers"}));
  const double patch = static_cast<double>(cfg_int(v, {"patch_size"}, 14));
  const double ch = static_cast<double>(cfg_int(v, {"num_channels", "in_chans"}, 3));
  if (h <= 0 || layers <= 0) return 0;
  const double out = static_cast<double>(cfg_int(v, {"out_hidden_size"}, static_cast<int64_t>(text_hidden)));
  return layers * (4 * h * h + 2 * h * i) + patch * patch * ch * h + h * out * 2;
}

}  // namespace

Json weights_from_config(const ModelConfig& cfg, const QuantSpec& q, Matcher* match, const std::string& serve_quant) {
  Json w = empty_inventory("config");
  const Json& t = cfg.text;
  const int64_t L = cfg.num_hidden_layers.value_or(0);
  const int64_t heads = cfg.num_attention_heads.value_or(0);
  const double h = static_cast<double>(cfg.hidden_size.value_or(0));
  if (L <= 0 || heads <= 0 || h <= 0) return Json();  // not enough to say
  // DeepSeek-V4 (grouped low-rank output, compressors, hyper-connections, FP4 experts): only its
  // headers say what it weighs.
  if (cfg.model_type.value_or("") == "deepseek_v4" || cfg.text_model_type.value_or("") == "deepseek_v4") return Json();
  // A layer count beyond every model (the config reader notes it) is not summed layer by layer.
  if (L > kMaxLayers || cfg.mtp_depth.value_or(0) > kMaxLayers) return Json();
  Synth s{t, dtype_bytes(cfg.dtype), quant_cost(q, cfg.quant_config, serve_quant), q, match, false, q.skip};
  for (const std::string& e : q.skip)
    if (std::any_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; })) s.per_layer_skip = true;
  if (!s.qc.mixed.empty()) s.per_layer_skip = true;  // each layer's modules as listed
  // Decoder layers: each distinct layer shape once unless the skip list names layers.
  const std::string prefix = "model.layers.";
  const int64_t experts = cfg_int(t, {"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"});
  std::map<int, Json> by_kind;  // layer shape -> its classes, when the skip list names no layer
  for (int64_t i = 0; i < L; ++i) {
    const int kind = (is_moe_layer(t, i, experts) ? 1 : 0) + (is_linear_attention_layer(t, i) ? 2 : 0) +
                     (is_global_attention_layer(t, i) ? 4 : 0);
    Json* delta = nullptr;
    if (!s.per_layer_skip) {
      auto it = by_kind.find(kind);
      if (it != by_kind.end()) delta = &it->second;
    }
    if (!delta) {
      Json d = empty_classes();
      add_layer(s, d, layer_modules(t, i, prefix));
      if (s.per_layer_skip) {
        for (const char* c : kLayerClasses) w["layers"][c] = w["layers"][c].get<uint64_t>() + d[c].get<uint64_t>();
        continue;
      }
      delta = &by_kind.emplace(kind, std::move(d)).first->second;
    }
    for (const char* c : kLayerClasses) w["layers"][c] = w["layers"][c].get<uint64_t>() + (*delta)[c].get<uint64_t>();
  }
  const int64_t mtp = cfg.mtp_depth.value_or(0);
  for (int64_t j = 0; j < mtp; ++j) {
    auto mods = layer_modules(t, L + j, prefix);
    // The MTP block around its decoder layer: enorm, hnorm, eh_proj (2h -> h), the head's norm.
    // eh_proj is a plain nn.Linear in vLLM's and SGLang's MTP modules: whole on every rank.
    mods.push_back({"replicated", prefix + std::to_string(L + j) + ".eh_proj", 2 * h * h, true});
    mods.push_back({"replicated", prefix + std::to_string(L + j) + ".enorm", 3 * h, false});
    add_layer(s, w["mtp"], mods);
  }
  const double V = static_cast<double>(cfg.vocab_size.value_or(0));
  w["embed"] = V > 0 ? static_cast<uint64_t>(std::llround(V * h * s.elt)) : 0;
  // Absent from the file: the transformers config class's default (Gemma's configs tie the head to
  // the embedding; the others the engines serve untied unless they say so).
  const bool tied_default = cfg.text_model_type.value_or(cfg.model_type.value_or("")).rfind("gemma", 0) == 0;
  const bool tied = cfg_bool(t, "tie_word_embeddings", cfg_bool(cfg.raw, "tie_word_embeddings", tied_default));
  const double head = s.qc.mixed_lm_head ? *s.qc.mixed_lm_head : s.qc.lm_head ? s.qc.bytes : s.elt;
  w["lm_head"] = tied || V <= 0 ? 0 : static_cast<uint64_t>(std::llround(V * h * head));
  w["tied"] = tied;
  w["other"] = static_cast<uint64_t>(std::llround(h * s.elt));
  const double vis = vision_params(cfg.raw, h) * s.elt;
  w["vision"] = vis > 0 && vis < 1e18 ? static_cast<uint64_t>(std::llround(vis)) : 0;
  uint64_t total = w["embed"].get<uint64_t>() + w["lm_head"].get<uint64_t>() + w["other"].get<uint64_t>() +
                   w["vision"].get<uint64_t>();
  for (const char* part : {"layers", "mtp"})
    for (const char* c : kLayerClasses) total += w[part][c].get<uint64_t>();
  w["bytes"] = total;
  if (!s.qc.what.empty()) w["quantized"] = s.qc.what;
  return w;
}

Json weights_from_config_for(const ModelConfig& cfg, const std::string& engine, const std::string& serve_quant) {
  const std::string mt = cfg.text_model_type.value_or(cfg.model_type.value_or(""));
  const QuantSpec q = parse_quant_config(cfg.quant_config, cfg.quant_config_source, mt);
  RegexCache re;
  Matcher m{q, find_arch_names(mt, cfg.architecture.value_or("")), engine == "sglang", re};
  return weights_from_config(cfg, q, &m, serve_quant);
}

void tally_weights(Analysis& a) {
  Json w;
  if (!a.refs.empty()) {
    w = empty_inventory("headers");
    tally_headers(a, w);
  } else {
    const Json* e = find_fact(a.in_facts, "engine.name");
    w = weights_from_config_for(a.cfg, e && e->is_string() ? e->get<std::string>() : "vllm", "");
    if (w.is_null()) return;
  }
  w["num_layers"] = a.cfg.num_hidden_layers.value_or(0);
  w["mtp_layers"] = a.cfg.mtp_depth.value_or(0);
  w["vocab_size"] = a.cfg.vocab_size.value_or(0);
  a.ck["weights"] = std::move(w);
}

}  // namespace specprobe::checkpoint

namespace specprobe {

Json weights_inventory_from_config(const ModelConfig& cfg, const std::string& engine, const std::string& serve_quant) {
  return checkpoint::weights_from_config_for(cfg, engine, serve_quant);
}

}  // namespace specprobe
