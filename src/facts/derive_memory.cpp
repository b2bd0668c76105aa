// The memory model (see derive_memory.hpp). Engine accounting, as the releases do it:
//   vLLM  vllm/v1/worker/gpu_worker.py determine_available_memory (requested = total x
//         gpu_memory_utilization; KV = requested - weights - torch peak of the profile run -
//         non-torch increase), vllm/v1/core/kv_cache_utils.py (num_blocks = KV bytes / page bytes of
//         all layers; check_enough_kv_cache_memory refuses a max_model_len the cache cannot hold),
//         gpu_model_runner.py capture_model (after the KV cache is allocated).
//   SGLang sglang/srt/model_executor/model_runner.py profile_max_num_token (rest = free memory after
//         the weights - total x (1 - mem_fraction_static); tokens = rest / cell_size), the default
//         mem_fraction_static of server_args (reserved memory for activations and graphs).
#include "facts/derive_memory.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "common/ascii.hpp"
#include "common/version.hpp"

namespace specprobe {

namespace {

constexpr double kGiBd = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiBd = 1024.0 * 1024.0;
// What NVML shows in use on an idle card, before any process: the driver's reservation (about
// 0.6 GiB on an H100 or H200). Beyond it, the memory in use is other processes'.
constexpr double kIdleCardUsed = 0.6 * kGiBd;

std::optional<double> fact_number(const Json& f, std::string_view name) {
  const Json* v = find_fact(f, name);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

double num(const Json& o, const char* key) {
  if (!o.is_object()) return 0;
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : 0;
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiBd); }

std::string tokens_text(double t) {
  const int64_t v = static_cast<int64_t>(std::floor(std::max(0.0, t)));
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// Bytes of one KV-cache element for the effective KV dtype.
double kv_elem_bytes(const std::string& eff) {
  if (eff.rfind("fp8", 0) == 0 || eff == "int8") return 1;
  if (eff.rfind("turboquant_", 0) == 0) return eff.find("4bit") != std::string::npos ? 0.5 : 1;
  if (eff == "float32") return 4;
  return 2;
}

// The parallel layout of one rank.
struct Layout {
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  int64_t attn_dp = 1;  // SGLang --enable-dp-attention: attention data-parallel over DP ranks inside TP
  bool expert_parallel = false;
};

Layout layout_of(const Json& f, const std::string& engine) {
  Layout l;
  l.tp = std::max<int64_t>(1, fact_int(f, "serve.tp").value_or(1));
  l.pp = std::max<int64_t>(1, fact_int(f, "serve.pp").value_or(1));
  l.dp = std::max<int64_t>(1, fact_int(f, "serve.dp").value_or(1));
  l.expert_parallel = fact_bool(f, "serve.expert_parallel").value_or(false);
  if (engine == "sglang") {
    l.ep = std::max<int64_t>(1, fact_int(f, "serve.ep_size").value_or(1));
    if (fact_bool(f, "serve.dp_attention").value_or(false)) l.attn_dp = l.dp;
  } else {
    l.ep = l.expert_parallel ? l.tp * l.dp : 1;
  }
  return l;
}

// Weights on the first pipeline stage's rank (the one that also holds the embedding; the logs
// report it), and the drafter's share. CLASSES as in checkpoint.weights.
struct RankWeights {
  double target = 0, drafter = 0;
  Json parts = Json::object();
};

double layer_share(const Json& classes, const Layout& l, int64_t kv_heads, double stage_fraction) {
  // SGLang's DP attention splits attention over TP / DP ranks only (each DP group holds it whole).
  const int64_t attn_tp = std::max<int64_t>(1, l.attn_dp > 1 ? l.tp / l.attn_dp : l.tp);
  const double kv_share =
      kv_heads > 0 ? static_cast<double>(std::max<int64_t>(1, kv_heads / attn_tp)) / static_cast<double>(kv_heads)
                   : 1.0 / static_cast<double>(attn_tp);
  const double expert_div = static_cast<double>(l.ep > 1 ? l.ep : l.tp);
  const double per = num(classes, "attn") / static_cast<double>(attn_tp) + num(classes, "kv_proj") * kv_share +
                     num(classes, "attn_replicated") + num(classes, "dense") / static_cast<double>(l.tp) +
                     num(classes, "experts") / expert_div + num(classes, "replicated");
  return per * stage_fraction;
}

double vocab_share(double bytes, double vocab, const Layout& l) {
  if (bytes <= 0) return 0;
  // VocabParallelEmbedding pads the vocabulary to a multiple of 64 before splitting it.
  const double padded = vocab > 0 ? std::ceil(vocab / 64.0) * 64.0 : 0;
  const double scale = vocab > 0 ? padded / vocab : 1.0;
  return bytes * scale / static_cast<double>(l.tp);
}

RankWeights rank_weights(const Json& f, const Json& w, const Layout& l, const std::string& method) {
  RankWeights r;
  const int64_t layers = std::max<int64_t>(1, fact_int(f, "model.num_hidden_layers").value_or(num(w, "num_layers")));
  const int64_t kv_heads = fact_int(f, "model.num_kv_heads").value_or(0);
  const double stage_layers = std::ceil(static_cast<double>(layers) / static_cast<double>(l.pp));
  const double frac = stage_layers / static_cast<double>(layers);
  const double vocab = num(w, "vocab_size");
  double scale = 1.0;
  // Online FP8 quantization of a 16-bit checkpoint halves the linear layers.
  if (fact_string(f, "serve.quantization").value_or("") == "fp8" && !w.contains("quantized")) scale = 0.5;
  double layers_b = layer_share(w["layers"], l, kv_heads, frac) * scale;
  // MXFP4 experts on NVIDIA GPUs (Marlin, TRT-LLM, FlashInfer backends) are padded at load: the
  // hidden size to a multiple of 256, each rank's intermediate size to a multiple of 128.
  const bool mxfp4 = w.value("quantized", std::string()).find("mxfp4") != std::string::npos ||
                     fact_string(f, "quant.method").value_or("") == "mxfp4";
  if (mxfp4 && fact_string(f, "gpu.vendor").value_or("nvidia") != "amd") {
    const double h = static_cast<double>(fact_int(f, "model.hidden_size").value_or(0));
    double inter = static_cast<double>(
        fact_int(f, "model.moe_intermediate_size").value_or(fact_int(f, "model.intermediate_size").value_or(0)));
    inter /= static_cast<double>(l.ep > 1 ? 1 : l.tp);
    if (h > 0 && inter > 0) {
      const double pad = (std::ceil(h / 256) * 256 / h) * (std::ceil(inter / 128) * 128 / inter);
      const double experts = num(w["layers"], "experts") / static_cast<double>(l.ep > 1 ? l.ep : l.tp) * frac;
      layers_b += experts * (pad - 1);
      r.parts["mxfp4_padding"] = std::llround(experts * (pad - 1));
    }
  }
  const double embed = vocab_share(num(w, "embed"), vocab, l);
  const double head = l.pp == 1 ? vocab_share(num(w, "lm_head"), vocab, l) : 0;
  // The multimodal encoder's linear layers are split over the TP ranks as the decoder's are (vLLM's
  // mm_encoder_tp_mode "weights", its default; SGLang's vision towers), whole with "data".
  const bool encoder_whole = fact_string(f, "serve.mm_encoder_tp_mode").value_or("") == "data";
  const double vision = num(w, "vision") / static_cast<double>(encoder_whole ? 1 : l.tp);
  const double other = num(w, "other");
  r.target = layers_b + embed + head + vision + other;
  r.parts["layers"] = std::llround(layers_b);
  r.parts["embed"] = std::llround(embed);
  r.parts["lm_head"] = std::llround(head);
  if (vision > 0) r.parts["vision"] = std::llround(vision);
  // The drafter: the checkpoint's MTP layers, or a separate draft model on the same TP.
  if (method == "mtp") {
    r.drafter = layer_share(w["mtp"], l, kv_heads, 1.0) * scale;
  } else if (const Json* d = find_fact(f, "draft.weights");
             d && d->is_object() &&
             (method == "eagle" || method == "eagle3" || method == "draft_model" || method == "dflash" ||
              method == "medusa" || method == "mlp_speculator")) {
    Layout dl = l;
    dl.pp = 1;
    if (auto dtp = fact_int(f, "spec.draft_tp")) dl.tp = std::max<int64_t>(1, *dtp);
    const int64_t dkv = fact_int(f, "draft.num_kv_heads").value_or(0);
    double db = layer_share((*d)["layers"], dl, dkv, 1.0) + num(*d, "other") + num(*d, "vision");
    // An EAGLE head shares the target's embedding (and its head unless it has its own vocabulary).
    const bool eagle = method == "eagle" || method == "eagle3";
    if (!eagle || method == "draft_model") db += vocab_share(num(*d, "embed"), num(*d, "vocab_size"), dl);
    if (method == "eagle3" || !eagle) db += vocab_share(num(*d, "lm_head"), num(*d, "vocab_size"), dl);
    r.drafter = db;
  }
  if (r.drafter > 0) r.parts["drafter"] = std::llround(r.drafter);
  return r;
}

// KV-cache bytes per token on one rank: the target's attention layers on the first stage plus the
// drafter's own layers.
struct KvPerToken {
  double bytes = 0;
  std::string note;
  bool modelled = true;
  // Of BYTES, what the sliding-window layers hold per token (layer_types sliding_attention), and
  // their window: vLLM keeps only about the window of them per request (below).
  double sliding_bytes = 0;
  int64_t window = 0;
  // A gated-DeltaNet hybrid's shared pool (vLLM), when HYBRID.present; BYTES is then its attention
  // layers' KV per token.
  struct HybridPool {
    bool present = false;
    int64_t attn_layers = 0, state_layers = 0;  // on the first stage, target and MTP drafter
    double attn_token = 0;                      // one attention layer's K and V of one token on a rank
    double state = 0;                           // one linear layer's conv and recurrent state on a rank
    int64_t block = 0;                          // attention block size after vLLM raises it
    double page = 0;                            // the page every layer of the pool shares
    int64_t group_size = 0, attn_groups = 0, state_groups = 0;
    int64_t state_blocks = 1;  // a request's blocks in each state group
    std::string cache_mode;    // vLLM's mamba_cache_mode: none or align
    // Blocks of the pool BYTES hold (vLLM get_num_blocks: bytes // page // group_size).
    double blocks(double bytes) const {
      return std::max(0.0, std::floor(bytes / page / static_cast<double>(group_size)));
    }
    // Blocks one request of LEN tokens takes: every attention group its blocks, every state group
    // its state blocks (get_max_concurrency_for_kv_cache_config sums over the groups).
    double blocks_per_request(double len) const {
      return static_cast<double>(attn_groups) * std::ceil(len / static_cast<double>(block)) +
             static_cast<double>(state_groups * state_blocks);
    }
  } hybrid;
};

int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

double dtype_bytes(const std::string& dtype, double fallback) {
  if (dtype == "float32" || dtype == "fp32") return 4;
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "half" || dtype == "bf16" || dtype == "fp16") return 2;
  return fallback;
}

// vLLM's KV-cache pool for a gated-DeltaNet hybrid (Qwen3-Next, Qwen3.5/3.6), as 0.19-0.33 build it:
//   state   model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape: a conv state of
//           (2 x key_heads x key_dim + value_heads x value_dim) / TP channels x (conv_kernel - 1 + k)
//           rows in the model dtype, and a recurrent state of value_heads / TP x value_dim x key_dim
//           in mamba_ssm_cache_dtype (Qwen3.5 configs: mamba_ssm_dtype float32, models/config.py
//           Qwen3_5ForConditionalGenerationConfig).
//   page    platforms/interface.py _align_hybrid_block_size: the attention block grows to the
//           smallest multiple of the kernel alignment (16) whose page holds one state; the state
//           page is padded to it, so every layer's page is the same.
//   groups  v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: layers of one kind
//           in groups of the smaller count (the larger when under 1.5 x the smaller); the groups
//           share one pool of num_blocks = bytes // page // group_size blocks.
//   request each attention group cdiv(max_model_len, block) blocks, each state group 1 + k blocks
//           (mamba_cache_mode none), 2 + k with prefix caching (align; v1/kv_cache_interface.py
//           MambaSpec.max_memory_usage_bytes).
KvPerToken::HybridPool gdn_pool(const Json& f, const Json& gdn, const Layout& l, double elem, int64_t kv_heads,
                                int64_t head_dim, int64_t drafter_layers, int64_t k) {
  KvPerToken::HybridPool p;
  auto dim = [&](const char* key) { return gdn.value(key, Json(0)).is_number() ? gdn.value(key, int64_t{0}) : 0; };
  const int64_t nk = dim("num_key_heads"), nv = dim("num_value_heads"), dk = dim("key_head_dim"),
                dv = dim("value_head_dim"), conv = dim("conv_kernel");
  const int64_t full = dim("full_layers") + drafter_layers, linear = dim("linear_layers");
  if (nk <= 0 || nv <= 0 || dk <= 0 || dv <= 0 || conv <= 0 || full <= 0 || linear <= 0 || kv_heads <= 0 ||
      head_dim <= 0)
    return p;
  const double tp = static_cast<double>(l.tp);
  const double conv_elem = 2;  // the model dtype (vLLM serves float32 checkpoints in bfloat16)
  std::string ssm = fact_string(f, "serve.mamba_ssm_cache_dtype").value_or("auto");
  if (ssm == "auto") ssm = gdn.value("ssm_dtype", Json()).is_string() ? gdn["ssm_dtype"].get<std::string>() : "";
  const double ssm_elem = dtype_bytes(ssm, conv_elem);
  const double conv_dim = static_cast<double>(2 * nk * dk + nv * dv);
  p.state = conv_dim / tp * static_cast<double>(conv - 1 + k) * conv_elem +
            static_cast<double>(nv) / tp * static_cast<double>(dv * dk) * ssm_elem;
  p.attn_token =
      2.0 * static_cast<double>(std::max<int64_t>(1, kv_heads / l.tp)) * static_cast<double>(head_dim) * elem;
  const int64_t align = std::max<int64_t>(16, fact_int(f, "serve.block_size").value_or(16));
  const int64_t raised = align * static_cast<int64_t>(std::ceil(p.state / (static_cast<double>(align) * p.attn_token)));
  p.block = std::max(raised, fact_int(f, "serve.block_size").value_or(16));
  p.page = static_cast<double>(p.block) * p.attn_token;
  // Prefix caching turns the state layers to "align" (two blocks each: the running state and the
  // last block-aligned one); GDN has no "all" mode, vLLM falls back to align.
  const bool prefix = fact_bool(f, "effective.prefix_caching").value_or(false);
  p.cache_mode = prefix ? "align" : "none";
  p.state_blocks = (prefix ? 2 : 1) + k;
  const int64_t lo = std::min(full, linear), hi = std::max(full, linear);
  const int64_t gs = static_cast<double>(hi) < 1.5 * static_cast<double>(lo) ? hi : lo;
  p.attn_groups = ceil_div(full, gs);
  p.state_groups = ceil_div(linear, gs);
  // A pipeline stage holds its share of every group.
  p.group_size = ceil_div(gs, l.pp);
  p.attn_layers = ceil_div(full, l.pp);
  p.state_layers = ceil_div(linear, l.pp);
  p.present = true;
  return p;
}

KvPerToken kv_per_token(const Json& f, const Layout& l, double elem, const std::string& engine,
                        const std::string& method, int64_t k) {
  KvPerToken out;
  const int64_t layers = fact_int(f, "model.num_hidden_layers").value_or(0);
  const double stage_layers = std::ceil(static_cast<double>(layers) / static_cast<double>(l.pp));
  const std::string mt = fact_string(f, "model.model_type").value_or("");
  double per_layer = 0;
  if (mt == "deepseek_v4") {
    out.modelled = false;
    out.note = "DeepSeek-V4's compressed and sliding-window KV layout is not modelled";
    return out;
  }
  if (fact_bool(f, "model.hybrid").value_or(false) && fact_string(f, "model.hybrid_kind").value_or("") != "sliding") {
    const Json* gdn = find_fact(f, "model.gdn_state");
    out.modelled = false;
    if (!gdn || !gdn->is_object()) {
      out.note =
          "the recurrent state of hybrid (Mamba / linear-attention other than gated DeltaNet) layers is not "
          "modelled";
      return out;
    }
    if (engine != "vllm") {
      out.note = "SGLang's pool for the recurrent state of gated-DeltaNet layers is not modelled";
      return out;
    }
    if (!method.empty() && method != "mtp") {
      out.note = "a draft model's KV cache beside a gated-DeltaNet hybrid is not modelled";
      return out;
    }
    const int64_t depth = std::max<int64_t>(1, fact_int(f, "model.mtp_depth").value_or(1));
    const int64_t drafter = method == "mtp" ? std::min(depth, std::max<int64_t>(k, 1)) : 0;
    out.hybrid = gdn_pool(f, *gdn, l, elem, fact_int(f, "model.num_kv_heads").value_or(0),
                          fact_int(f, "model.head_dim").value_or(0), drafter, method.empty() ? 0 : k);
    if (!out.hybrid.present) {
      out.note = "the gated-DeltaNet hybrid's layer counts, KV heads or head size are unknown";
      return out;
    }
    out.modelled = true;
    out.bytes = out.hybrid.attn_token * static_cast<double>(out.hybrid.attn_layers);
    return out;
  }
  if (fact_bool(f, "model.mla").value_or(false)) {
    const double r = static_cast<double>(fact_int(f, "model.mla_dims.kv_lora_rank").value_or(512));
    const double rope = static_cast<double>(fact_int(f, "model.mla_dims.qk_rope_head_dim").value_or(64));
    per_layer = (r + rope) * elem;
    if (fact_bool(f, "model.dsa.present").value_or(false)) {
      // vLLM's fp8_ds_mla page: 512 fp8 values, 4 fp32 scales and 64 bf16 rope values (656 bytes);
      // the indexer keeps its own fp8 keys with one fp32 scale each.
      if (engine == "vllm" && elem == 1) per_layer = 656;
      const double idx = static_cast<double>(fact_int(f, "model.dsa.index_head_dim").value_or(128));
      per_layer += idx + 4;
    }
  } else {
    const int64_t kv = fact_int(f, "model.num_kv_heads").value_or(0);
    const int64_t hd = fact_int(f, "model.head_dim").value_or(0);
    if (kv <= 0 || hd <= 0) {
      out.modelled = false;
      out.note = "the model's KV heads or head size are unknown";
      return out;
    }
    per_layer = 2.0 * static_cast<double>(std::max<int64_t>(1, kv / l.tp)) * static_cast<double>(hd) * elem;
    // Sliding-window layers named by layer_types; Gemma 4's full-attention layers have their own
    // KV heads and head size.
    const int64_t sliding = std::min(fact_int(f, "model.sliding_layers").value_or(0), layers);
    const int64_t window = fact_int(f, "model.sliding_window").value_or(0);
    if (sliding > 0 && window > 0 && layers > 0) {
      const int64_t fkv = fact_int(f, "model.full_attention_kv_heads").value_or(kv);
      const int64_t fhd = fact_int(f, "model.full_attention_head_dim").value_or(hd);
      const double full_layer =
          2.0 * static_cast<double>(std::max<int64_t>(1, fkv / l.tp)) * static_cast<double>(fhd) * elem;
      const double share = static_cast<double>(sliding) / static_cast<double>(layers);
      out.sliding_bytes = per_layer * stage_layers * share;
      out.bytes = out.sliding_bytes + full_layer * stage_layers * (1 - share);
      out.window = window;
    }
  }
  if (out.bytes == 0) out.bytes = per_layer * stage_layers;
  // The drafter's layers share the pool (vLLM adds them to the KV-cache spec; SGLang sizes the
  // draft pool to the same number of tokens).
  if (method == "mtp") {
    const int64_t depth = std::max<int64_t>(1, fact_int(f, "model.mtp_depth").value_or(1));
    out.bytes +=
        per_layer * static_cast<double>(engine == "sglang" ? 1 : std::min<int64_t>(depth, std::max<int64_t>(k, 1)));
  } else if (method == "eagle" || method == "eagle3" || method == "draft_model" || method == "dflash") {
    const int64_t dl = fact_int(f, "draft.num_hidden_layers").value_or(1);
    const int64_t dkv = fact_int(f, "draft.num_kv_heads").value_or(fact_int(f, "model.num_kv_heads").value_or(0));
    const int64_t dhd = fact_int(f, "draft.head_dim").value_or(fact_int(f, "model.head_dim").value_or(0));
    const int64_t dtp = std::max<int64_t>(1, fact_int(f, "spec.draft_tp").value_or(l.tp));
    out.bytes += static_cast<double>(dl) * 2.0 * static_cast<double>(std::max<int64_t>(1, dkv / dtp)) *
                 static_cast<double>(dhd) * elem;
  }
  return out;
}

// SGLang's chunked_prefill_size and decode cuda_graph_max_bs defaults by GPU memory (0.5.4+).
int64_t sglang_chunked_prefill(const Json& f, double gpu_bytes) {
  if (auto v = fact_int(f, "serve.chunked_prefill_size")) return *v;
  const double g = gpu_bytes / kGiBd;
  return g < 20 ? 2048 : g < 35 ? 4096 : g < 60 ? 4096 : g < 160 ? 8192 : 16384;
}
int64_t sglang_graph_bs(const Json& f, const Layout& l, double gpu_bytes) {
  if (auto v = fact_int(f, "serve.cuda_graph_max_bs")) return *v;
  const double g = gpu_bytes / kGiBd;
  const bool wide = l.tp >= 4;
  return g < 20 ? 8 : g < 35 ? (wide ? 160 : 48) : g < 60 ? (wide ? 160 : 32) : g < 160 ? (wide ? 512 : 256) : 512;
}

// The profile run's activation peak on one rank (estimate): the larger of the forward pass (the
// widest intermediate tensors of one layer for the scheduler's token budget; the fused-MoE
// workspace, M x topk x max(2 I, hidden) twice, for MoE layers) and the sampler's dummy run over
// min(tokens, max_num_seqs) rows of the full vocabulary: fp32 logits, probabilities, sorted values
// and int64 indices for top-k/top-p, about 38.5 bytes per element (vLLM's own profiling reports
// 4.76 GiB for 1024 x 128,256 and 7.38 GiB for 1024 x 201,088: llm-d/llm-d-benchmark
// config_explorer/empirical-vllm-memory-results.md).
double activation_estimate(const Json& f, const Json& w, const Layout& l, double tokens, double seqs) {
  const double h = static_cast<double>(fact_int(f, "model.hidden_size").value_or(0));
  const double inter = static_cast<double>(fact_int(f, "model.intermediate_size").value_or(0));
  const double moe_inter = static_cast<double>(fact_int(f, "model.moe_intermediate_size").value_or(0));
  const bool moe = fact_bool(f, "model.is_moe").value_or(false);
  const double vocab = std::max(num(w, "vocab_size"), static_cast<double>(fact_int(f, "model.vocab_size").value_or(0)));
  const double dense = tokens * (h * 2 * 4 + inter / static_cast<double>(l.tp) * 2 * 3);
  double experts = 0;
  if (moe) {
    const double topk = static_cast<double>(fact_int(f, "model.num_experts_per_tok").value_or(8));
    const double local = (moe_inter > 0 ? moe_inter : inter) / static_cast<double>(l.ep > 1 ? 1 : l.tp);
    experts = tokens * topk * std::max(2 * local, h) * 2 * 2;
  }
  const double reqs = std::min(tokens, seqs);
  const double sampler = reqs * vocab * 38.5;
  return std::max({dense, experts, sampler});
}

// SGLang's default mem_fraction_static (server_args / arg_groups/memory_hook.py): a table by TP
// size before 0.4.10, then (GPU memory - reserved) / GPU memory, the reserve growing with the
// chunked-prefill size, the decode graphs' batch size and TP x PP (floored at 10 GiB on GPUs over
// 60 GiB), plus a speculative reserve in 0.4.10-0.5.13 (from 0.5.14 the drafter is counted in the pool).
double sglang_default_fraction(const Json& f, const Layout& l, double gpu_bytes, bool spec, bool mla) {
  const std::string ver = fact_string(f, "engine.version").value_or("");
  const bool known = !ver.empty();
  const double mem_mb = gpu_bytes / kMiBd;
  const double p = static_cast<double>(l.tp * l.pp);
  if (known && version_satisfies(ver, "<0.4.10"))
    return l.tp * l.pp >= 16  ? 0.79
           : l.tp * l.pp >= 8 ? 0.81
           : l.tp * l.pp >= 4 ? 0.85
           : l.tp * l.pp >= 2 ? 0.87
                              : 0.88;
  double reserved;
  if (known && version_satisfies(ver, "<0.5.3")) {
    const double gib_ = gpu_bytes / kGiBd;
    reserved = gib_ < 35    ? (2.8 + p / 10) * 1024
               : gib_ < 90  ? (9.5 + p / 2) * 1024
               : gib_ < 160 ? (12 + p / 2) * 1024
                            : 32768;
    if (spec) reserved += 2048;
    if (fact_bool(f, "serve.dp_attention").value_or(false)) reserved += 4096;
  } else {
    const double chunk = static_cast<double>(sglang_chunked_prefill(f, gpu_bytes));
    const double bs = static_cast<double>(sglang_graph_bs(f, l, gpu_bytes));
    reserved = 512 + 1.5 * std::max(chunk, 2048.0) + 2 * bs + p / 8 * 1024;
    if (!known || version_satisfies(ver, ">=0.5.10")) reserved += mla ? 1536 : 8 * 58;  // prefill graphs
    if (gpu_bytes > 60 * kGiBd) reserved = std::max(reserved, 10240.0);
    if (spec && known && version_satisfies(ver, "<0.5.14"))
      reserved += version_satisfies(ver, ">=0.5.10") ? 4096 : 2048;
  }
  return std::round((mem_mb - reserved) / mem_mb * 1000.0) / 1000.0;
}

// CUDA-graph pool (estimate): the largest captured batch's activations plus a fixed cost per graph.
double graph_estimate(const Json& f, const Layout& l, const std::string& engine, int64_t k, double seqs) {
  if (fact_bool(f, "serve.enforce_eager").value_or(false)) return 0;
  const double h = static_cast<double>(fact_int(f, "model.hidden_size").value_or(0));
  double max_bs;
  if (engine == "sglang")
    max_bs = static_cast<double>(fact_int(f, "serve.cuda_graph_max_bs").value_or(256));
  else
    max_bs = static_cast<double>(fact_int(f, "serve.max_cudagraph_capture_size")
                                     .value_or(std::min<int64_t>(512, static_cast<int64_t>(seqs) * 2)));
  const double rows = max_bs * static_cast<double>(std::max<int64_t>(1, k + 1));
  const double graphs = std::min(67.0, 3 + max_bs / 8);
  const double layers =
      static_cast<double>(fact_int(f, "model.num_hidden_layers").value_or(0)) / static_cast<double>(l.pp);
  return rows * h * 2 * 8 + graphs * (2 * kMiBd + layers * 16 * 1024);
}

// SGLang 0.4.5 to 0.4.10.post1 with the FA3 backend keeps, for decode CUDA graphs, int32 page tables
// as wide as the context for the largest captured batch (layers/attention/flashattention_backend.py
// init_cuda_graph_state: "page_table", "page_table_draft_decode", "encoder_page_table" and, for
// Llama 4's chunked attention, "local_block_table"), and one more copy per captured batch size:
// init_forward_metadata_capture_cuda_graph indexes the table with req_pool_indices, which copies
// bs x pages and keeps it in decode_cuda_graph_metadata[bs]. 0.4.10.post2 takes a view instead
// (sgl-project/sglang#8567, "Save cuda graph memory for fa3"). Read in the 0.4.6.post5, 0.4.9.post6,
// 0.4.10 and 0.4.10.post1 wheels; no speculative decoding (its batch sizes and tables differ).
struct Fa3GraphTables {
  double bytes = 0;
  int64_t max_bs = 0, sum_bs = 0, graphs = 0;
};

Fa3GraphTables sglang_fa3_graph_tables(const Json& f, double gpu_bytes, double ctx, double pool_size,
                                       const std::string& ver) {
  // model_executor/cuda_graph_runner.py get_batch_sizes_to_capture, without speculative decoding;
  // the GPU's memory as nvidia-smi gives it, in MiB.
  const double mib = gpu_bytes / kMiBd;
  const bool post1 = version_satisfies(ver, ">=0.4.10.post1");
  std::vector<int64_t> bs = {1, 2, 4, 8};
  for (int64_t b = 16; b <= 160; b += 8) bs.push_back(b);
  if (mib > (post1 ? 90.0 : 96.0) * 1024)
    for (int64_t b = 160; b <= 256; b += 8) bs.push_back(b);
  if (post1 && mib > 160.0 * 1000)
    for (int64_t b = 256; b <= 512; b += 16) bs.push_back(b);
  const auto pool = static_cast<int64_t>(pool_size);
  if (*std::max_element(bs.begin(), bs.end()) > pool) {
    if (!post1) bs.push_back(pool - 1);
    bs.push_back(pool);
  }
  // server_args.py: GPUs under 25,000 MiB capture up to 8 (TP < 4) or 80 sequences.
  std::optional<int64_t> cap = fact_int(f, "serve.cuda_graph_max_bs");
  if (!cap && mib < 25000) cap = fact_int(f, "serve.tp").value_or(1) < 4 ? 8 : 80;
  if (cap && *cap > 0) {
    std::erase_if(bs, [&](int64_t b) { return b > *cap; });
    const int64_t top = bs.empty() ? 0 : *std::max_element(bs.begin(), bs.end());
    if (top < *cap)
      for (int64_t b = top; b <= *cap; b += 16) bs.push_back(b);
  }
  std::set<int64_t> sizes;
  for (int64_t b : bs)
    if (b > 0 && b <= pool) sizes.insert(b);
  Fa3GraphTables t;
  if (sizes.empty()) return t;
  t.max_bs = *sizes.rbegin();
  for (int64_t b : sizes) t.sum_bs += b;
  t.graphs = static_cast<int64_t>(sizes.size());
  const double page = static_cast<double>(std::max<int64_t>(1, fact_int(f, "sglang.page_size").value_or(1)));
  const double pages = std::ceil(ctx / page);
  const double max_bs = static_cast<double>(t.max_bs);
  double slots = 2 * max_bs * pages + max_bs * ctx + static_cast<double>(t.sum_bs) * pages;
  // Llama 4's chunked attention: max_bs x cdiv(ctx, chunk) virtual batches of cdiv(chunk, page)
  // pages (attention_chunk_size 8192 in the Scout and Maverick config.json).
  if (fact_string(f, "model.model_type").value_or("") == "llama4") {
    const double chunk = 8192;
    slots += max_bs * std::ceil(ctx / chunk) * std::ceil(chunk / page);
  }
  t.bytes = slots * 4 + pages * 8;  // + strided_indices (int64)
  return t;
}

struct Terms {
  double budget = 0, weights = 0, drafter = 0, activation = 0, overhead = 0, kv = 0, kv_low = 0, kv_high = 0;
};

}  // namespace

void derive_memory(Json& f) {
  f.erase("memory");
  Json& m = f["memory"];
  m = Json::object();
  auto not_modelled = [&](const std::string& why) {
    m["modelled"] = false;
    m["reason"] = why;
    m["status"] = nullptr;
  };
  const std::string engine = fact_string(f, "engine.name").value_or("vllm");
  const Json* w = find_fact(f, "checkpoint.weights");
  if (!w || !w->is_object()) {
    if (fact_string(f, "model.model_type").value_or("") == "deepseek_v4")
      return not_modelled(
          "DeepSeek-V4's weights are modelled from the safetensors headers only: pass --model with the "
          "checkpoint's index and shards (or let specprobe read their headers from the Hub)");
    return not_modelled("the checkpoint's shapes are unknown: pass --model with its config.json");
  }
  const auto gpu_bytes_i = fact_int(f, "gpu.memory_bytes");
  if (!gpu_bytes_i || *gpu_bytes_i <= 0)
    return not_modelled("the GPU's memory is unknown: run on the GPU or pass --gpu NAME");
  const double gpu_bytes = static_cast<double>(*gpu_bytes_i);
  // A size the deploy file leaves to a variable is unknown, not its default.
  for (const char* name : {"serve.tp", "serve.pp", "serve.dp", "serve.gpu_memory_utilization", "serve.ep_size",
                           "serve.max_num_batched_tokens", "serve.chunked_prefill_size", "serve.kv_cache_dtype"}) {
    const Json* v = find_fact(f, name);
    if (v && v->is_null())
      return not_modelled(
          fmt::format("{} is not known (the deploy file leaves it to a variable): pass --env NAME=VALUE", name));
  }
  const Layout l = layout_of(f, engine);
  const bool spec = fact_bool(f, "spec.enabled").value_or(false);
  const std::string method = spec ? fact_string(f, "spec.method").value_or("") : "";
  const int64_t k = spec ? fact_int(f, "spec.k").value_or(1) : 0;

  const RankWeights rw = rank_weights(f, *w, l, method);
  const double weights = rw.target + rw.drafter;
  const bool from_headers = (*w).value("source", "") == "headers";
  const double w_margin = from_headers ? 0.01 : 0.03;

  const std::string kv_eff = fact_string(f, "kv.effective").value_or("bfloat16");
  const KvPerToken per_token = kv_per_token(f, l, kv_elem_bytes(kv_eff), engine, method, k);

  const std::string ver = fact_string(f, "engine.version").value_or("");
  auto ver_is = [&](const char* spec_) { return !ver.empty() && version_satisfies(ver, spec_); };
  const bool mla = fact_bool(f, "model.mla").value_or(false);

  // The scheduler budget of the profile run (vLLM EngineArgs batch defaults for `vllm serve`).
  const std::string gpu_name = fact_string(f, "gpu.name").value_or("");
  const bool big_gpu = gpu_bytes >= 70 * kGiBd && gpu_name.find("A100") == std::string::npos &&
                       gpu_name.find("GB10") == std::string::npos;
  const bool huge_gpu = gpu_bytes >= 160 * kGiBd && !ver_is("<0.30");
  double seqs = static_cast<double>(fact_int(f, "serve.max_num_seqs")
                                        .value_or(engine == "sglang" ? 256
                                                  : big_gpu          ? 1024
                                                                     : 256));
  double tokens = static_cast<double>(fact_int(f, "serve.max_num_batched_tokens")
                                          .value_or(huge_gpu  ? 16384
                                                    : big_gpu ? 8192
                                                              : 2048));
  if (engine == "sglang") tokens = static_cast<double>(sglang_chunked_prefill(f, gpu_bytes));

  Terms t;
  double fraction = 0;
  std::string fraction_source = "given";
  if (auto u = fact_number(f, "serve.gpu_memory_utilization")) {
    fraction = *u;
  } else {
    fraction_source = "default";
    fraction = engine == "sglang" ? sglang_default_fraction(f, l, gpu_bytes, spec, mla) : ver_is("<0.20") ? 0.90 : 0.92;
  }
  // vLLM counts CUDA graphs inside the budget from 0.20 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1).
  const bool graphs_inside = engine == "vllm" && !ver_is("<0.20");
  const double graph = graph_estimate(f, l, engine, k, seqs);
  t.weights = weights;
  t.drafter = rw.drafter;
  t.activation = activation_estimate(f, *w, l, tokens, seqs);
  const double cpu_offload = fact_number(f, "serve.cpu_offload_gb").value_or(0) * kGiBd;
  t.weights = std::max(0.0, t.weights - cpu_offload);
  if (engine == "sglang") {
    // rest = free after the load - free before it x (1 - mem_fraction_static): the CUDA context and
    // NCCL are gone before the load ("pre_model_load_memory"); the drafter loads first from 0.5.14.
    t.overhead = (l.tp * l.pp > 1 ? 1.5 : 0.6) * kGiBd;
    const double pre = gpu_bytes - t.overhead;
    t.budget = fraction * pre;
    const bool draft_first = !ver_is("<0.5.14");
    t.kv = t.budget - (draft_first ? t.weights : t.weights - t.drafter);
    const double ov_margin = 0.5 * t.overhead * fraction;
    t.kv_low = t.kv - ov_margin - w_margin * t.weights;
    t.kv_high = t.kv + ov_margin + w_margin * t.weights;
  } else {
    t.overhead = (l.tp * l.pp > 1 ? 0.55 : 0.15) * kGiBd;  // non-torch: NCCL buffers with TP
    t.budget = fraction * gpu_bytes;
    t.kv = t.budget - t.weights - t.activation - t.overhead - (graphs_inside ? graph : 0);
    const double est_margin = 0.5 * (t.activation + t.overhead + (graphs_inside ? graph : 0));
    t.kv_low = t.kv - est_margin - w_margin * t.weights;
    t.kv_high = t.kv + est_margin + w_margin * t.weights;
  }
  if (auto kvb = fact_int(f, "serve.kv_cache_memory_bytes"); kvb && engine == "vllm") {
    t.kv = t.kv_low = t.kv_high = static_cast<double>(*kvb);
  }

  // vLLM 0.8.0-0.9.0's V1 worker sized the KV cache as gpu_memory_utilization x total less the
  // profile run's torch peak less all other memory in use on the device (total - free, less
  // torch's own: Worker.determine_available_memory in vllm/v1/worker/gpu_worker.py, read in the
  // 0.8.0 and 0.9.0 wheels), so what another process holds on the card comes off the KV cache (V0
  // measured from a baseline and did not count it; 0.9.1 refuses at start instead, below). The
  // engine falls back to V0 for features its V1 lacked (EngineArgs._is_v1_supported_oracle), and
  // which ones changed with each release: the plans that surely run V1 here are those without
  // speculative decoding, a KV-cache dtype other than auto, CPU offload or a GPU below SM 8.0.
  const bool others_off_kv = engine == "vllm" && ver_is(">=0.8.0,<0.9.1");
  bool surely_v1 = false;
  std::optional<double> others_held;  // what other processes hold now, taken off the KV cache
  std::string shared_note;            // what another process on the card would change
  if (others_off_kv) {
    const std::string use_v1 = ascii_lower(fact_string(f, "env.VLLM_USE_V1").value_or(""));
    surely_v1 = use_v1 != "0" && use_v1 != "false" && !spec &&
                fact_string(f, "serve.kv_cache_dtype").value_or("auto") == "auto" && cpu_offload <= 0 &&
                fact_int(f, "gpu.sm").value_or(80) >= 80;
    if (use_v1 == "1" || use_v1 == "true") surely_v1 = true;  // asked for: V1 or a refusal to start
  }
  if (others_off_kv && surely_v1)
    if (const auto free_now = fact_number(f, "gpu.memory_free_bytes")) {
      const double others = std::max(0.0, gpu_bytes - *free_now - kIdleCardUsed);
      others_held = others;
      t.kv -= others;
      t.kv_low -= others;
      t.kv_high -= others;
    }

  m["modelled"] = true;
  m["gpu_bytes"] = std::llround(gpu_bytes);
  m["budget_bytes"] = std::llround(t.budget);
  m["weights_bytes"] = std::llround(rw.target);
  m["drafter_bytes"] = std::llround(rw.drafter);
  m["kv_bytes"] = std::llround(t.kv);

  Json& b = m["breakdown"];
  b = Json::object();
  b["engine"] = engine;
  b["layout"] = {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}};
  b["budget_fraction"] = fraction;
  b["budget_fraction_source"] = fraction_source;
  b["weights_source"] = (*w).value("source", "");
  b["weights_margin"] = w_margin;
  b["weights_parts"] = rw.parts;
  b["activation_bytes"] = std::llround(t.activation);
  b["overhead_bytes"] = std::llround(t.overhead);
  b["estimate_margin"] = 0.5;
  b["scheduler_tokens"] = tokens;
  b["scheduler_seqs"] = seqs;
  b["kv_dtype"] = kv_eff;
  if (cpu_offload > 0) b["cpu_offload_bytes"] = std::llround(cpu_offload);
  if (others_held) b["other_processes_bytes"] = std::llround(*others_held);

  m["graph_bytes"] = std::llround(graph);
  b["graphs_inside_budget"] = graphs_inside;
  b["engine_version"] = ver.empty() ? Json(nullptr) : Json(ver);
  if (ver.empty())
    b["engine_version_note"] = "the engine version is unknown: the newest release's accounting is assumed";

  // The max_model_len the engine will serve.
  // --max-model-len auto (-1) fits the length to the KV cache (vLLM 0.14+): no one-request check;
  // one left to a variable is unknown.
  std::optional<int64_t> max_len = fact_int(f, "serve.max_model_len");
  const Json* given_len = find_fact(f, "serve.max_model_len");
  const bool len_auto = given_len && given_len->is_string();
  const bool len_unknown = given_len && given_len->is_null();
  if (!max_len && !len_auto && !len_unknown) max_len = fact_int(f, "model.max_position_embeddings");
  m["max_model_len"] = max_len ? Json(*max_len) : Json(nullptr);
  if (len_auto) b["max_model_len"] = "auto: vLLM fits it to the KV cache";

  Json& tx = m["text"];
  tx = Json::object();
  tx["weights"] = gib(rw.target);
  tx["drafter"] = gib(rw.drafter);
  tx["budget"] = fmt::format("{:.2f} x {}", fraction, gib(gpu_bytes));
  tx["kv"] = gib(std::max(0.0, t.kv));
  tx["graph"] = gib(graph);

  std::string status = "fits", problem = "none", summary, fix, base_summary;
  auto set = [&](const char* s, const char* p, std::string text, std::string how) {
    // The worse status wins; the first problem of that status is reported.
    const int rank_new = std::string(s) == "fails" ? 2 : std::string(s) == "at-risk" ? 1 : 0;
    const int rank_old = status == "fails" ? 2 : status == "at-risk" ? 1 : 0;
    if (rank_new <= rank_old) return;
    status = s;
    problem = p;
    summary = std::move(text);
    fix = std::move(how);
  };

  const std::string weights_text =
      rw.drafter > 0 ? fmt::format("weights {} per rank + drafter {}", gib(rw.target), gib(rw.drafter))
                     : fmt::format("weights {} per rank", gib(rw.target));
  const std::string budget_name = engine == "sglang" ? "mem_fraction_static" : "gpu_memory_utilization";
  // Weights alone: more than the GPU holds (less the CUDA context) fails while loading; more than
  // the budget leaves no KV cache (below).
  const double weights_low = weights * (1 - w_margin), weights_high = weights * (1 + w_margin);
  const double context = 0.5 * kGiBd;
  if (weights_low + context > gpu_bytes)
    set("fails", "weights", fmt::format("{} exceed the GPU's {} (with the CUDA context)", weights_text, gib(gpu_bytes)),
        fmt::format("raise tensor parallelism (TP {} -> {}), use a quantized checkpoint, or offload weights to the CPU "
                    "(--cpu-offload-gb)",
                    l.tp, l.tp * 2));
  else if (weights_high + context > gpu_bytes)
    set("at-risk", "weights",
        fmt::format("{} are within {}% of the GPU's {}", weights_text, static_cast<int>(w_margin * 100),
                    gib(gpu_bytes)),
        fmt::format("raise tensor parallelism (TP {} -> {})", l.tp, l.tp * 2));

  // vLLM's V1 worker at start: the memory free on the device after its own CUDA context must hold
  // gpu_memory_utilization x total, or it refuses (vllm/v1/worker/utils.py request_memory; in
  // 0.9.1, vllm#20305). What other processes hold shows in gpu.memory_free_bytes when the GPU was
  // queried on this machine (NVML, gpu/nvml.hpp); a declared GPU has no such fact. vLLM's own
  // context and torch's start take 0.25-1.5 GiB before it measures: below the low end it fails,
  // within the range it is at risk.
  if (engine == "vllm" && !ver_is("<0.9.1"))
    if (const auto free_now = fact_number(f, "gpu.memory_free_bytes")) {
      const double want = std::ceil(fraction * gpu_bytes);
      // In use: what the driver's total has that is not free (NVML's own "used" also counts the
      // memory the driver reserves, about 0.6 GiB on an idle H200).
      const double used = std::max(0.0, gpu_bytes - *free_now);
      const double ctx_low = 0.25 * kGiBd, ctx_high = 1.5 * kGiBd;
      const double most = std::floor(100.0 * std::max(0.0, *free_now - ctx_high) / gpu_bytes) / 100.0;
      const std::string what = fmt::format(
          "{} of the GPU's {} are free now ({} in use by other processes); vLLM asks for gpu_memory_utilization "
          "{:g} x {} = {} at start and refuses with less (\"Free memory on device ... on startup is less than "
          "desired GPU memory utilization\")",
          gib(*free_now), gib(gpu_bytes), gib(used), fraction, gib(gpu_bytes), gib(want));
      const std::string how = fmt::format(
          "free the GPU (stop the processes that hold {}), or lower --gpu-memory-utilization to {:.2f} or less",
          gib(used), most);
      if (*free_now - ctx_low < want)
        set("fails", "free-memory", what, how);
      else if (*free_now - ctx_high < want)
        set("at-risk", "free-memory", what + ", within the CUDA context's margin", how);
    }
  if (engine == "vllm" && !ver_is("<0.9.1") && !fact_number(f, "gpu.memory_free_bytes"))
    shared_note = fmt::format(
        "the GPU is assumed idle: vLLM refuses to start unless gpu_memory_utilization x its memory ({}) is free "
        "when it starts (run specprobe on the serving host to read what other processes hold)",
        gib(std::ceil(fraction * gpu_bytes)));
  if (others_off_kv && !surely_v1)
    if (const auto free_now = fact_number(f, "gpu.memory_free_bytes");
        free_now && gpu_bytes - *free_now - kIdleCardUsed > 0.5 * kGiBd)
      shared_note = fmt::format(
          "other processes hold {} on the GPU now: vLLM {} takes it off the KV cache when this plan runs its V1 "
          "engine, not when it falls back to V0 (for speculative decoding, a KV-cache dtype, CPU offload or an "
          "older GPU), so it is not counted here",
          gib(gpu_bytes - *free_now - kIdleCardUsed), ver);
  if (others_held && *others_held > 0)
    shared_note = fmt::format(
        "other processes hold {} on the GPU now, which vLLM {}'s V1 engine takes off the KV cache (counted above)",
        gib(*others_held), ver);

  if (per_token.modelled && per_token.bytes > 0) {
    const double block = static_cast<double>(fact_int(f, "serve.block_size").value_or(16));
    auto to_tokens = [&](double bytes) { return std::max(0.0, std::floor(bytes / (per_token.bytes * block)) * block); };
    const double len = max_len && *max_len > 0 ? static_cast<double>(*max_len) : 0;
    // Requests of max_model_len tokens that BYTES of KV cache hold.
    std::function<double(double)> requests = [&](double bytes) { return len > 0 ? to_tokens(bytes) / len : 0; };
    double tok = to_tokens(t.kv), tok_low = to_tokens(t.kv_low), tok_high = to_tokens(t.kv_high);
    // vLLM's hybrid allocator (0.10+) keeps a sliding-window layer's KV for the window plus the
    // tokens in flight only (v1/kv_cache_interface.py SlidingWindowSpec.max_admission_blocks_per_request:
    // cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1 blocks), and counts
    // the requests it holds by those bytes (v1/core/kv_cache_utils.py
    // get_max_concurrency_for_kv_cache_config). The size it logs in tokens is blocks x block size
    // in 0.10.1 (tests/corpus/memory vllm-repo-dennislee22-4xa100-gpt-oss-120b-tp4-ray) and
    // requests x max_model_len by 0.26.0 (vllm-issue-50722; the release between is not
    // established: the later definition is assumed from 0.11).
    if (engine == "vllm" && per_token.sliding_bytes > 0 && len > 0 && !ver_is("<0.10")) {
      const double window_tokens =
          (std::ceil(std::min(static_cast<double>(per_token.window) - 1 + tokens, len) / block) + 1) * block;
      const double per_request =
          (per_token.bytes - per_token.sliding_bytes) * len + per_token.sliding_bytes * std::min(window_tokens, len);
      b["kv_bytes_per_request"] = std::llround(per_request);
      requests = [per_request](double bytes) { return std::max(0.0, bytes / per_request); };
      if (!ver_is("<0.11")) {
        tok = std::floor(requests(t.kv) * len);
        tok_low = std::floor(requests(t.kv_low) * len);
        tok_high = std::floor(requests(t.kv_high) * len);
      }
    }
    // A gated-DeltaNet hybrid: its groups share one pool of pages; a request takes blocks of every
    // group. "GPU KV cache size" is requests x max_model_len from 0.20 (vllm-issue-40691: 0.19.0
    // logged num_blocks // groups x the smallest block size; the fix, vllm-project/vllm#40694 or
    // #38364, landed in a release between 0.19 and 0.24, 0.20 is assumed).
    const auto& hp = per_token.hybrid;
    if (hp.present && len > 0) {
      const double per_request = hp.blocks_per_request(len);
      requests = [&hp, per_request](double bytes) { return hp.blocks(bytes) / per_request; };
      auto pool_tokens = [&](double bytes) {
        if (ver_is("<0.20")) {
          const double groups = static_cast<double>(hp.attn_groups + hp.state_groups);
          const double smallest = std::min(static_cast<double>(hp.block), hp.cache_mode == "align" ? 1e18 : len);
          return std::floor(hp.blocks(bytes) / groups) * smallest;
        }
        return std::floor(hp.blocks(bytes) / per_request * len);
      };
      tok = pool_tokens(t.kv);
      tok_low = pool_tokens(t.kv_low);
      tok_high = pool_tokens(t.kv_high);
      m["kv_blocks"] = std::llround(hp.blocks(t.kv));
      tx["kv_blocks"] = tokens_text(hp.blocks(t.kv));
      b["hybrid"] = {{"attention_layers", hp.attn_layers},
                     {"state_layers", hp.state_layers},
                     {"state_bytes", std::llround(hp.state)},
                     {"attention_block_size", hp.block},
                     {"page_bytes", std::llround(hp.page)},
                     {"group_size", hp.group_size},
                     {"attention_groups", hp.attn_groups},
                     {"state_groups", hp.state_groups},
                     {"mamba_cache_mode", hp.cache_mode},
                     {"blocks_per_request", per_request},
                     {"blocks_low", std::llround(hp.blocks(t.kv_low))},
                     {"blocks_high", std::llround(hp.blocks(t.kv_high))}};
    }
    m["kv_bytes_per_token"] = std::llround(per_token.bytes);
    m["kv_tokens"] = std::llround(tok);
    m["kv_tokens_low"] = std::llround(tok_low);
    m["kv_tokens_high"] = std::llround(tok_high);
    tx["kv_tokens"] = tokens_text(tok);
    if (len > 0) {
      m["max_concurrency"] = std::round(requests(t.kv) * 100.0) / 100.0;
      tx["max_model_len"] = tokens_text(len);
    }
    // What shares the budget with the KV cache, and the first fix, when other processes hold part of it.
    const bool held = others_held && *others_held > 0;
    const std::string kv_users =
        held ? fmt::format("{} and the {} other processes hold", weights_text, gib(*others_held)) : weights_text;
    const std::string free_first =
        held ? fmt::format("free the GPU (stop the processes that hold {}), or ", gib(*others_held)) : "";
    const std::string kv_line = fmt::format("{} leave {} of the {} x {} budget for the KV cache: {} tokens", kv_users,
                                            gib(std::max(0.0, t.kv)), fraction, gib(gpu_bytes), tokens_text(tok));
    base_summary = kv_line;
    if (t.kv_high <= 0) {
      set("fails", "no-kv",
          fmt::format("{} leave no memory for the KV cache under {}={}", kv_users, budget_name, fraction),
          fmt::format("{}raise {} or tensor parallelism, or lower max_num_batched_tokens", free_first, budget_name));
    } else if (t.kv_low <= 0) {
      set("at-risk", "no-kv",
          fmt::format("{} leave at most {} for the KV cache under {}={} (estimates)", kv_users, gib(t.kv_high),
                      budget_name, fraction),
          fmt::format("{}raise {} or tensor parallelism", free_first, budget_name));
    } else if (max_len && *max_len > 0 && engine == "vllm") {
      const double need = static_cast<double>(*max_len);
      const std::string fit = tokens_text(std::floor(tok_low / 1024) * 1024);
      if (requests(t.kv_high) < 1)
        set("fails", "one-request",
            fmt::format("{}, less than one max_model_len={} request", kv_line, tokens_text(need)),
            fmt::format("{}set --max-model-len {} or less, raise {}, use an fp8 KV cache, or raise TP", free_first, fit,
                        budget_name));
      else if (requests(t.kv_low) < 1)
        set("at-risk", "one-request",
            fmt::format("{}; one max_model_len={} request needs {} tokens, within the estimate's margin", kv_line,
                        tokens_text(need), tokens_text(need)),
            fmt::format("{}set --max-model-len {} or less, or raise {}", free_first, fit, budget_name));
    }
    // A declared GPU is assumed idle: say how much another process may hold before the plan stops
    // fitting, where vLLM takes it off the KV cache.
    if (others_off_kv && surely_v1 && !others_held && len > 0 && requests(t.kv_low) >= 1) {
      // The KV cache beyond one request: what another process may hold before the plan stops fitting.
      auto headroom = [&](double kv) { return kv * (1 - 1 / requests(kv)); };
      shared_note = fmt::format(
          "the GPU is assumed idle: vLLM {}'s V1 engine takes what other processes hold on the card off the KV "
          "cache, and with about {} held elsewhere (as little as {} at the estimates' pessimistic end) one "
          "max_model_len={} request no longer fits (run specprobe on the serving host to read what is held)",
          ver, gib(headroom(t.kv)), gib(headroom(t.kv_low)), tokens_text(len));
    }
    // FULL decode graphs give every sequence one Mamba cache block: vLLM 0.19+ refuses to capture
    // when max_num_seqs exceeds the pool's blocks (config/compilation.py
    // _check_and_update_cudagraph_mode, vllm-project/vllm#38270); 0.17-0.18 capped the capture
    // sizes instead.
    const std::string cg = fact_string(f, "cudagraph.resolved").value_or("FULL_AND_PIECEWISE");
    const bool full_graphs =
        !fact_bool(f, "serve.enforce_eager").value_or(false) && cg.find("FULL") != std::string::npos;
    if (hp.present && engine == "vllm" && full_graphs && !ver_is("<0.19") && t.kv_low > 0) {
      const double blocks = hp.blocks(t.kv), low = hp.blocks(t.kv_low), high = hp.blocks(t.kv_high);
      const std::string what = fmt::format(
          "max_num_seqs ({:.0f}) exceeds available Mamba cache blocks (about {}): {} leave {} of the "
          "{} x {} budget for the KV cache, cut into blocks of {:.0f} MiB (a {}-token attention page or "
          "one sequence's recurrent state, for each of {} layers); each decode sequence requires one "
          "Mamba cache block, so CUDA graph capture cannot proceed",
          seqs, tokens_text(blocks), weights_text, gib(std::max(0.0, t.kv)), fraction, gib(gpu_bytes),
          hp.page * static_cast<double>(hp.group_size) / kMiBd, tokens_text(hp.block), hp.group_size);
      const std::string how =
          fmt::format("lower --max-num-seqs to {} or less, raise {}, or raise tensor parallelism (TP {} -> {})",
                      tokens_text(low), budget_name, l.tp, l.tp * 2);
      if (seqs > high)
        set("fails", "mamba-blocks", what, how);
      else if (seqs > low)
        set("at-risk", "mamba-blocks", what + ", within the estimate's margin", how);
    }
  } else {
    m["kv_bytes_per_token"] = nullptr;
    m["kv_tokens"] = nullptr;
    m["kv_tokens_low"] = nullptr;
    m["kv_tokens_high"] = nullptr;
    b["kv_not_modelled"] = per_token.note;
    base_summary = fmt::format("{}; {} for the KV cache (tokens not modelled: {})", weights_text,
                               gib(std::max(0.0, t.kv)), per_token.note);
  }

  // SGLang's request-to-token table, (max_num_reqs + 1) x (context_len + 4) int32, is allocated with
  // the KV pool from what mem_fraction_static leaves (mem_cache/memory_pool.py ReqToTokenPool;
  // mem_cache/kv_cache_configurator.py resolve_max_num_reqs: kv_tokens / context_len x 512 held
  // between 2048 and 4096, at most kv_tokens / 2; --max-running-requests per DP worker instead). A
  // long default context makes it the largest allocation of the start-up: Llama-4-Scout's
  // 10,485,760 positions need 80.04 GiB (sglang issue 5755).
  double request_table = 0, table_reqs = 0;
  if (engine == "sglang" && max_len && *max_len > 0) {
    const double ctx = static_cast<double>(*max_len);
    const std::optional<double> kv_tokens =
        m.value("kv_tokens", Json()).is_number() ? std::optional<double>(m["kv_tokens"].get<double>()) : std::nullopt;
    double reqs;
    if (auto given = fact_int(f, "serve.max_num_seqs"); given && *given > 0) {
      reqs = std::max<double>(1, static_cast<double>(*given / std::max<int64_t>(1, l.attn_dp)));
    } else {
      reqs = kv_tokens ? std::clamp(std::floor(*kv_tokens / ctx * 512), 2048.0, 4096.0) : 2048.0;
    }
    if (kv_tokens) reqs = std::min(reqs, std::floor(*kv_tokens / 2));
    request_table = (reqs + 1) * (ctx + 4) * 4;
    table_reqs = reqs;
    b["request_table_bytes"] = std::llround(request_table);
    b["request_table_requests"] = reqs;
    const double reserve = (gpu_bytes - t.overhead) * (1 - fraction);
    const std::string what = fmt::format(
        "SGLang's request table for {:.0f} requests x context_len {} is {} (int32), allocated with the KV pool "
        "from the {} that {}={} leaves",
        reqs, tokens_text(ctx), gib(request_table), gib(reserve), budget_name, fraction);
    const std::string how = "set --context-length to what requests need, or lower --max-running-requests";
    if (request_table > reserve)
      set("fails", "request-table", what, how);
    else if (request_table + t.activation > reserve)
      set("at-risk", "request-table",
          what + fmt::format(", with about {} of activations (estimate)", gib(t.activation)), how);
  }

  // SGLang 0.4.5-0.4.10.post1 with FA3: the decode graphs' page tables (sglang_fa3_graph_tables) come
  // out of the same reserve when the graph runner starts, after the KV pool and the request table.
  // sglang#6817: Llama-4-Scout with --context-length 1000000 at 0.8 on 8 H200s, 0.4.6.post5: 7.6 GiB
  // of request table and 19.6 GiB of these tables in a reserve of 27.7 GiB.
  double fa3_tables = 0;
  const Json* sg_backends = find_fact(f, "sglang.backends");
  const bool fa3 = sg_backends && sg_backends->is_array() &&
                   std::find(sg_backends->begin(), sg_backends->end(), Json("fa3")) != sg_backends->end();
  if (engine == "sglang" && table_reqs > 0 && fa3 && !spec && !fact_bool(f, "serve.enforce_eager").value_or(false) &&
      ver_is(">=0.4.5,<0.4.10.post2")) {
    const double ctx = static_cast<double>(*max_len);
    const Fa3GraphTables ft = sglang_fa3_graph_tables(f, gpu_bytes, ctx, table_reqs + 1, ver);
    fa3_tables = ft.bytes;
    if (fa3_tables > 0) {
      b["fa3_graph_tables_bytes"] = std::llround(fa3_tables);
      b["fa3_graph_batch_sizes"] = {{"largest", ft.max_bs}, {"sum", ft.sum_bs}, {"count", ft.graphs}};
      const double reserve = (gpu_bytes - t.overhead) * (1 - fraction);
      const std::string what = fmt::format(
          "SGLang {}'s FA3 decode graphs keep int32 page tables of context_len {} for {} captured batch sizes "
          "(largest {}, {} rows in all): {}, allocated after the KV pool from the {} that {}={} leaves, next to "
          "the request table's {}",
          ver, tokens_text(ctx), ft.graphs, ft.max_bs, tokens_text(static_cast<double>(ft.sum_bs)), gib(fa3_tables),
          gib(reserve), budget_name, fraction, gib(request_table));
      const std::string how =
          "set --context-length to what requests need, lower --cuda-graph-max-bs, or use SGLang 0.4.10.post2 or "
          "later";
      if (request_table + fa3_tables > reserve)
        set("fails", "fa3-graph-tables", what, how);
      else if (request_table + fa3_tables + t.activation + graph > reserve)
        set("at-risk", "fa3-graph-tables",
            what + fmt::format(", with about {} of activations and {} of CUDA graphs (estimates)", gib(t.activation),
                               gib(graph)),
            how);
    }
  }

  // CUDA graphs: vLLM captures after the KV cache is allocated, outside the budget; SGLang inside its
  // reserve of (1 - mem_fraction_static), next to the request table.
  if (graph > 0) {
    const double room = engine == "sglang"
                            ? (gpu_bytes - t.overhead) * (1 - fraction) - t.activation - request_table - fa3_tables
                        : graphs_inside ? t.kv_high + graph
                                        : gpu_bytes - t.budget;
    const double need = graph * 1.5 + (engine == "sglang" ? 0 : 0.5 * kGiBd);
    m["graph_room_bytes"] = std::llround(room);
    if (room < graph * 0.5)
      set("at-risk", "graph",
          fmt::format("CUDA-graph capture needs about {} beyond the budget, and {} x {} leaves {}", gib(graph),
                      fraction, gib(gpu_bytes), gib(room)),
          fmt::format("lower {} or the capture sizes, or pass --enforce-eager", budget_name));
    else if (room < need && engine == "vllm" && fraction > 0.95)
      set("at-risk", "graph",
          fmt::format("CUDA-graph capture needs about {} outside the {}={} budget, which leaves {}", gib(graph),
                      budget_name, fraction, gib(room)),
          fmt::format("lower {} to 0.92 or less, or lower the capture sizes", budget_name));
  }
  if (!shared_note.empty()) b["shared_gpu_note"] = shared_note;
  m["status"] = status;
  m["problem"] = problem;
  m["summary"] = problem == "none" ? base_summary : summary;
  m["fix"] = fix.empty() ? Json(nullptr) : Json(fix);
}

}  // namespace specprobe
