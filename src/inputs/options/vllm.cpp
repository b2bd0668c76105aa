// vLLM option builder: folds RawOptions the way vLLM's FlexibleArgumentParser does (dash/underscore
// names, aliases, JSON-valued options given as mappings or JSON strings, dotted keys merged into
// the object, `no-X` negations, later wins) and writes the plan facts: one table row per option
// whose value becomes a fact as is (kOptionFacts), one handler per option that needs more
// (kSpecials). Options in neither are kept and reported as not modelled.
#include <algorithm>
#include <functional>
#include <set>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "inputs/options/options.hpp"

namespace specprobe::serving {
namespace {

constexpr long kMaxDottedDepth = 64;

// Options whose value is a JSON object (vllm/engine/arg_utils.py: json.loads-typed arguments).
const std::set<std::string, std::less<>> kJsonOptions = {"speculative-config",
                                                         "compilation-config",
                                                         "attention-config",
                                                         "hf-overrides",
                                                         "kv-transfer-config",
                                                         "kv-events-config",
                                                         "ec-transfer-config",
                                                         "additional-config",
                                                         "override-generation-config",
                                                         "model-loader-extra-config",
                                                         "structured-outputs-config",
                                                         "limit-mm-per-prompt",
                                                         "mm-processor-kwargs",
                                                         "pooler-config",
                                                         "override-pooler-config",
                                                         "profiler-config",
                                                         "weight-transfer-config",
                                                         "kernel-config",
                                                         "ir-op-priority"};

// Single-dash aliases (`add_argument("--compilation-config", "-cc", ...)`), used only when the
// option tables cannot be loaded; the tables know every alias per release.
const std::map<std::string, std::string, std::less<>> kAliases = {
    {"tp", "tensor-parallel-size"}, {"pp", "pipeline-parallel-size"},
    {"dp", "data-parallel-size"},   {"ep", "enable-expert-parallel"},
    {"cc", "compilation-config"},   {"ac", "attention-config"},
    {"O", "optimization-level"},    {"q", "quantization"},
    {"sc", "speculative-config"}};

const std::set<std::string, std::less<>> kFlags = {"trust-remote-code",
                                                   "enforce-eager",
                                                   "enable-prefix-caching",
                                                   "enable-chunked-prefill",
                                                   "async-scheduling",
                                                   "enable-expert-parallel",
                                                   "disable-log-requests",
                                                   "disable-log-stats",
                                                   "enable-log-requests",
                                                   "enable-auto-tool-choice",
                                                   "disable-custom-all-reduce",
                                                   "enable-lora",
                                                   "enable-sleep-mode",
                                                   "headless",
                                                   "disable-frontend-multiprocessing",
                                                   "enable-eplb",
                                                   "enable-dbo",
                                                   "skip-tokenizer-init",
                                                   "disable-sliding-window",
                                                   "enable-prompt-tokens-details",
                                                   "enable-force-include-usage",
                                                   "disable-fastapi-docs",
                                                   "enable-server-load-tracking",
                                                   "calculate-kv-scales",
                                                   "data-parallel-hybrid-lb",
                                                   "data-parallel-external-lb",
                                                   "enable-reasoning",
                                                   "enable-request-id-headers",
                                                   "disable-uvicorn-access-log",
                                                   "enable-log-outputs",
                                                   "enable-tokenizer-info-endpoint",
                                                   "return-tokens-as-token-ids",
                                                   "disable-cascade-attn",
                                                   "enable-return-routed-experts",
                                                   "use-tqdm-on-load",
                                                   "enable-mfu-metrics",
                                                   "fully-sharded-loras",
                                                   "enable-lora-bias",
                                                   "enable-chunked-local-attn",
                                                   "disable-hybrid-kv-cache-manager",
                                                   "enable-multimodal-encoder-data-parallel",
                                                   "kv-sharing-fast-prefill",
                                                   "enable-dp-attention"};

const std::set<std::string, std::less<>> kLists = {
    "cudagraph-capture-sizes", "served-model-name", "lora-modules",    "prompt-adapters", "middleware",
    "allowed-origins",         "allowed-methods",   "allowed-headers", "api-key",         "allowed-local-media-path"};

struct Entry {
  std::string written;
  Json value;
  bool textual = false;
  SourceLocation where;
  std::map<std::string, SourceLocation> inner;
  bool known = true;  // some release accepts the name (else SP1014 reports it, not the reader)
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// A JSON-valued option's value as an object, with key locations.
Expected<Json> json_object_value(const RawOption& o, const std::string& name,
                                 std::map<std::string, SourceLocation>& inner) {
  if (o.value.is_object()) {
    inner = o.inner;
    return o.value;
  }
  if (o.value.is_string()) {
    const std::string text = o.value.get<std::string>();
    const SourceLocation where = o.where;
    const PosMap pos = o.value_pos ? o.value_pos : PosMap([where](size_t) { return where; });
    auto parsed = parse_json(text, pos, name);
    if (!parsed) return parsed.error();
    if (!parsed->is_object())
      return input_error(
          fmt::format("{} must be a JSON object, got {}", name, parsed->is_array() ? "a list" : parsed->type_name()),
          where);
    if (o.value_pos)
      for (const auto& [key, off] : json_key_offsets(text)) inner[key] = o.value_pos(off);
    return parsed;
  }
  if (o.value.is_array())
    return input_error(fmt::format("{} must be a mapping (JSON object), got a list", name), o.where);
  return input_error(fmt::format("{} must be a mapping (JSON object), got {}", name, excerpt(o.value)), o.where);
}

std::string normalize_method(const std::string& raw) {
  const std::string l = ascii_lower(raw);
  if (l == "mtp" || ends_with(l, "_mtp") || l == "nextn") return "mtp";
  return l;
}

bool dotted_python_path(const std::string& s) {
  if (s.find('/') != std::string::npos || s.find('.') == std::string::npos) return false;
  bool start = true;
  for (char c : s) {
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
               (!start && std::isdigit(static_cast<unsigned char>(c)))) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

// Folds the options as vLLM's FlexibleArgumentParser does: canonical names, one-dash aliases,
// dotted keys merged into their JSON option, `no-X` negations, JSON strings parsed; later wins.
Expected<std::map<std::string, Entry>> fold_options(const std::vector<RawOption>& options, PlanWriter& w,
                                                    ParsedServing& out) {
  std::map<std::string, Entry> opts;
  RepeatedOptions repeated;
  // Options no release accepts are reported by SP1014 (options/check.cpp); the rest that the
  // builder does not model stay notes.
  auto keep_unknown = [&](const RawOption& o, bool known) {
    if (known) out.unknown.push_back({o.name, o.value, o.where});
  };

  for (const RawOption& o : options) {
    std::string name = canonical_name(o.name);
    const size_t dot = name.find('.');
    std::string root = name.substr(0, dot);
    std::string path = dot == std::string::npos ? std::string() : name.substr(dot + 1);
    // The tables name the option: aliases, --no-X, --disable-X (0.33), unambiguous prefixes. The
    // flag keeps the dashes as written: "----speculative-config" is no option of any release.
    bool negative = false, known = true;
    const std::string written_root = canonical_name(o.name.substr(0, o.name.find('.')));
    const size_t extra_dashes = o.textual ? std::min(o.name.find_first_not_of('-'), o.name.size()) : 0;
    const TableName tn =
        table_name("vllm", (o.textual && o.short_form ? "-" : "--") + std::string(extra_dashes, '-') + written_root);
    if (tn.table) {
      known = tn.known;
      if (known) {
        root = tn.option;
        negative = tn.negative;
      } else {
        keep_unknown(o, false);
        continue;
      }
    } else if (o.short_form) {
      auto a = kAliases.find(root);
      if (a == kAliases.end()) {
        keep_unknown(o, true);
        continue;
      }
      root = a->second;
    }
    if (!path.empty()) {
      if (!kJsonOptions.count(root)) {
        keep_unknown(o, false);  // SP1015: not a JSON option
        continue;
      }
      // Real dotted keys are a few levels deep; a hostile one would build a JSON nest deep enough
      // to overflow the stack when copied or destroyed.
      if (std::count(path.begin(), path.end(), '.') >= kMaxDottedDepth)
        return input_error(fmt::format("--{}: dotted key nests deeper than {} levels", root, kMaxDottedDepth), o.where);
      Entry& e = opts[root];
      if (e.value.is_null()) {
        e.value = Json::object();
        e.where = o.where;
        e.written = o.name.substr(0, o.name.find('.'));
      }
      const bool append = ends_with(path, "+");
      if (append) path.pop_back();
      Json v = o.value.is_string() ? cli_value(o.value.get<std::string>()) : o.value;
      if (append) {
        Json list = Json::array();
        if (const Json* old = find_fact(e.value, path); old && old->is_array()) list = *old;
        if (o.value.is_string() && !v.is_array()) {
          const std::string s = o.value.get<std::string>();
          size_t start = 0;
          while (start <= s.size()) {
            const size_t comma = s.find(',', start);
            list.push_back(cli_value(s.substr(start, comma - start)));
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
        } else if (v.is_array()) {
          for (auto& x : v) list.push_back(x);
        } else {
          list.push_back(v);
        }
        v = std::move(list);
      } else if (find_fact(e.value, path)) {
        w.note("warning", fmt::format("duplicate key {}.{}; the later value wins", root, path), o.where);
      }
      set_fact(e.value, path, std::move(v));
      e.inner[path] = o.where;
      continue;
    }
    Json value = o.value;
    if (!tn.table && starts_with(root, "no-") && kFlags.count(root.substr(3))) {
      negative = true;
      root = root.substr(3);
    }
    if (negative) {
      auto b = to_bool(o.value, o.name, o.where);
      if (!b) return b.error();
      value = !*b;
    }
    Entry e{o.name, std::move(value), o.textual, o.where, {}, known};
    if (kJsonOptions.count(root)) {
      if (root == "compilation-config" &&
          (o.value.is_number_integer() || (o.value.is_string() && human_readable_int(o.value.get<std::string>())))) {
        w.note("warning", "a number for --compilation-config is the old optimization-level form; use -O", o.where);
        Json level = o.value.is_string() ? Json(*human_readable_int(o.value.get<std::string>())) : o.value;
        e.value = Json{{"level", level}};
      } else {
        RawOption named = o;
        auto obj = json_object_value(named, root, e.inner);
        if (!obj) return obj.error();
        e.value = std::move(*obj);
      }
    }
    if (auto old = opts.find(root); old != opts.end()) {
      repeated.again(root, o.where);
      // a full JSON value after dotted keys: vLLM keeps the last; dotted keys after it merge (above)
      opts.erase(old);
    }
    opts.emplace(root, std::move(e));
  }
  repeated.note_all(w);
  return opts;
}

// The plan facts of an option: one row per option whose value becomes a fact as is.
enum class Kind { integer, human_integer, boolean, text, number, present };
struct OptionFact {
  const char* option;
  const char* fact;
  Kind kind;
};
const OptionFact kOptionFacts[] = {
    {"tensor-parallel-size", "serve.tp", Kind::human_integer},
    {"pipeline-parallel-size", "serve.pp", Kind::human_integer},
    {"data-parallel-size", "serve.dp", Kind::human_integer},
    {"block-size", "serve.block_size", Kind::human_integer},
    {"max-num-seqs", "serve.max_num_seqs", Kind::human_integer},
    {"max-num-batched-tokens", "serve.max_num_batched_tokens", Kind::human_integer},
    {"max-cudagraph-capture-size", "serve.max_cudagraph_capture_size", Kind::human_integer},
    {"max-lora-rank", "serve.max_lora_rank", Kind::integer},
    {"max-loras", "serve.max_loras", Kind::integer},
    {"nnodes", "serve.nnodes", Kind::integer},
    {"enable-expert-parallel", "serve.expert_parallel", Kind::boolean},
    {"enforce-eager", "serve.enforce_eager", Kind::boolean},
    {"async-scheduling", "serve.async_scheduling", Kind::boolean},
    {"trust-remote-code", "serve.trust_remote_code", Kind::boolean},
    {"enable-prefix-caching", "serve.enable_prefix_caching", Kind::boolean},
    {"enable-chunked-prefill", "serve.enable_chunked_prefill", Kind::boolean},
    {"enable-lora", "serve.enable_lora", Kind::boolean},
    {"enable-eplb", "serve.enable_eplb", Kind::boolean},
    {"disable-hybrid-kv-cache-manager", "serve.disable_hybrid_kv_cache_manager", Kind::boolean},
    {"language-model-only", "serve.language_model_only", Kind::boolean},
    {"kv-cache-dtype", "serve.kv_cache_dtype", Kind::text},
    {"quantization", "serve.quantization", Kind::text},
    {"dtype", "serve.dtype", Kind::text},
    {"all2all-backend", "serve.all2all_backend", Kind::text},
    {"moe-backend", "serve.moe_backend", Kind::text},
    {"mamba-cache-mode", "serve.mamba_cache_mode", Kind::text},
    {"mamba-ssm-cache-dtype", "serve.mamba_ssm_cache_dtype", Kind::text},
    {"reasoning-parser", "serve.reasoning_parser", Kind::text},
    {"tool-call-parser", "serve.tool_call_parser", Kind::text},
    {"distributed-executor-backend", "serve.distributed_executor_backend", Kind::text},
    {"load-format", "serve.load_format", Kind::text},
    {"mm-encoder-tp-mode", "serve.mm_encoder_tp_mode", Kind::text},
    {"revision", "serve.revision", Kind::text},
    {"tokenizer", "serve.tokenizer", Kind::text},
    {"tokenizer-revision", "serve.tokenizer_revision", Kind::text},
    {"guided-decoding-backend", "serve.structured_outputs_backend", Kind::text},
    {"gpu-memory-utilization", "serve.gpu_memory_utilization", Kind::number},
    {"kv-cache-memory-bytes", "serve.kv_cache_memory_bytes", Kind::human_integer},
    {"cpu-offload-gb", "serve.cpu_offload_gb", Kind::number},
    {"num-gpu-blocks-override", "serve.num_gpu_blocks_override", Kind::integer},
    {"hf-overrides", "serve.hf_overrides", Kind::present},
};

Status write_option_fact(const OptionFact& of, const Entry& e, PlanWriter& w) {
  switch (of.kind) {
    case Kind::integer:
    case Kind::human_integer: {
      auto v = to_int(e.value, of.option, e.where, of.kind == Kind::human_integer);
      if (!v) return v.error();
      w.set(of.fact, *v, e.where);
      break;
    }
    case Kind::boolean: {
      auto v = to_bool(e.value, of.option, e.where);
      if (!v) return v.error();
      w.set(of.fact, *v, e.where);
      break;
    }
    case Kind::number: {
      auto v = to_float(e.value, of.option, e.where);
      if (!v) return v.error();
      w.set(of.fact, *v, e.where);
      break;
    }
    case Kind::text:
      w.set(of.fact, to_text(e.value), e.where);
      break;
    case Kind::present:
      w.set(of.fact, e.value, e.where);
      break;
  }
  return Ok{};
}

// The options that need more than a row: they write several facts, or read inside a JSON value.
using Use = std::function<Entry*(const std::string&)>;
struct Special {
  const char* what;
  Status (*write)(const Use& use, PlanWriter& w, const ReadContext& ctx);
};

Status write_max_model_len(const Use& use, PlanWriter& w, const ReadContext&) {
  Entry* e = use("max-model-len");
  if (!e) return Ok{};
  const std::string s = ascii_lower(to_text(e->value));
  if (s == "auto" || s == "-1") {
    w.set("serve.max_model_len", "auto", e->where);
    return Ok{};
  }
  auto v = to_int(e->value, "max-model-len", e->where, true);
  if (!v) return v.error();
  w.set("serve.max_model_len", *v, e->where);
  return Ok{};
}

Status write_optimization_level(const Use& use, PlanWriter& w, const ReadContext&) {
  if (Entry* e = use("optimization-level")) {
    auto v = to_int(e->value, "optimization-level", e->where);
    w.set("serve.optimization_level", v ? Json(*v) : Json(to_text(e->value)), e->where);
  }
  return Ok{};
}

Status write_capture_sizes(const Use& use, PlanWriter& w, const ReadContext&) {
  if (Entry* e = use("cudagraph-capture-sizes")) {
    Json list = Json::array();
    for (const Json& x : e->value.is_array() ? e->value : Json::array({e->value})) {
      auto v = to_int(x, "cudagraph-capture-sizes", e->where);
      if (!v) return v.error();
      list.push_back(*v);
    }
    w.set("serve.cudagraph_capture_sizes", list, e->where);
  }
  return Ok{};
}

// --compilation-config: CUDA-graph mode and sizes, sequence parallelism.
Status write_compilation_config(const Use& use, PlanWriter& w, const ReadContext&) {
  Entry* e = use("compilation-config");
  if (!e) return Ok{};
  w.set("serve.compilation_config", e->value, e->where);
  auto loc = [&](const std::string& k) { return e->inner.count(k) ? e->inner.at(k) : e->where; };
  if (auto it = e->value.find("cudagraph_mode"); it != e->value.end() && !it->is_null())
    w.set("serve.cudagraph_mode", it->is_string() ? Json(ascii_upper(it->get<std::string>())) : *it,
          loc("cudagraph_mode"));
  if (auto it = e->value.find("cudagraph_capture_sizes");
      it != e->value.end() && !w.has("serve.cudagraph_capture_sizes"))
    w.set("serve.cudagraph_capture_sizes", *it, loc("cudagraph_capture_sizes"));
  if (auto it = e->value.find("max_cudagraph_capture_size");
      it != e->value.end() && !w.has("serve.max_cudagraph_capture_size"))
    w.set("serve.max_cudagraph_capture_size", *it, loc("max_cudagraph_capture_size"));
  if (const Json* sp = find_fact(e->value, "pass_config.enable_sp"); sp && sp->is_boolean())
    w.set("serve.sequence_parallel", *sp, loc("pass_config.enable_sp"));
  return Ok{};
}

// KV transfer (disaggregated prefill / decode, KV offloading connectors) and KV-cache events.
Status write_kv_configs(const Use& use, PlanWriter& w, const ReadContext&) {
  if (Entry* e = use("kv-transfer-config")) {
    w.set("serve.kv_transfer", true, e->where);
    if (auto it = e->value.find("kv_connector"); it != e->value.end() && it->is_string())
      w.set("serve.kv_connector", *it, e->inner.count("kv_connector") ? e->inner.at("kv_connector") : e->where);
  }
  if (Entry* e = use("kv-events-config")) {
    const Json* on = find_fact(e->value, "enable_kv_cache_events");
    w.set("serve.kv_events", on && on->is_boolean() ? *on : Json(true), e->where);
  }
  return Ok{};
}

Status write_structured_outputs(const Use& use, PlanWriter& w, const ReadContext&) {
  if (Entry* e = use("structured-outputs-config"))
    if (auto it = e->value.find("backend"); it != e->value.end() && it->is_string())
      w.set("serve.structured_outputs_backend", *it, e->inner.count("backend") ? e->inner.at("backend") : e->where);
  return Ok{};
}

// Attention backend: --attention-backend, else --attention-config.backend, else the env var.
Status write_attention(const Use& use, PlanWriter& w, const ReadContext& ctx) {
  if (Entry* e = use("attention-config")) {
    w.set("serve.attention_config", e->value, e->where);
    if (auto it = e->value.find("backend"); it != e->value.end() && it->is_string()) {
      const SourceLocation loc = e->inner.count("backend") ? e->inner.at("backend") : e->where;
      w.set("attention.requested", ascii_upper(it->get<std::string>()), loc);
      w.set("attention.requested_source", "attention-config", loc);
    }
  }
  if (Entry* e = use("attention-backend")) {
    if (w.has("attention.requested"))
      w.note("info", "--attention-backend and --attention-config.backend are both set; --attention-backend is used",
             e->where);
    w.set("attention.requested", ascii_upper(to_text(e->value)), e->where);
    w.set("attention.requested_source", "attention-backend", e->where);
  }
  for (const auto& [name, setting] : ctx.env) {
    if (name != "VLLM_ATTENTION_BACKEND") continue;
    w.set("attention.env_backend", setting.value, setting.where);
    w.note("warning",
           "VLLM_ATTENTION_BACKEND is ignored by vLLM >= ~0.14 (deprecated, then removed); use --attention-backend",
           setting.where);
    if (!w.has("attention.requested")) {
      w.set("attention.requested", ascii_upper(setting.value), setting.where);
      w.set("attention.requested_source", "env", setting.where);
    }
  }
  return Ok{};
}

Status write_speculative(const Use& use, PlanWriter& w, const ReadContext& ctx);

const Special kSpecials[] = {
    {"max-model-len", write_max_model_len},
    {"optimization-level", write_optimization_level},
    {"cudagraph-capture-sizes", write_capture_sizes},
    {"compilation-config", write_compilation_config},
    {"kv-transfer-config, kv-events-config", write_kv_configs},
    {"structured-outputs-config", write_structured_outputs},
    {"attention-backend, attention-config, VLLM_ATTENTION_BACKEND", write_attention},
    {"speculative-config and the removed top-level speculative options", write_speculative},
};
// --speculative-config, plus the removed top-level options folded into it.
Status write_speculative(const Use& use, PlanWriter& w, const ReadContext&) {
  Json sc = Json::object();
  SourceLocation sc_where;
  std::map<std::string, SourceLocation> sc_inner;
  bool have_sc = false;
  if (Entry* e = use("speculative-config")) {
    sc = e->value;
    sc_where = e->where;
    sc_inner = e->inner;
    have_sc = true;
  }
  struct Legacy {
    const char* option;
    const char* key;
  };
  for (const Legacy& l :
       {Legacy{"speculative-model", "model"}, Legacy{"num-speculative-tokens", "num_speculative_tokens"},
        Legacy{"speculative-draft-tensor-parallel-size", "draft_tensor_parallel_size"},
        Legacy{"speculative-max-model-len", "max_model_len"}, Legacy{"ngram-prompt-lookup-max", "prompt_lookup_max"},
        Legacy{"ngram-prompt-lookup-min", "prompt_lookup_min"}}) {
    Entry* e = use(l.option);
    if (!e) continue;
    w.note("warning",
           fmt::format("--{} was removed from vLLM (V1 engine); use --speculative-config '{{\"{}\": ...}}'", l.option,
                       l.key),
           e->where);
    if (!sc.contains(l.key)) {
      sc[l.key] = e->textual && e->value.is_string() ? cli_value(e->value.get<std::string>()) : e->value;
      sc_inner[l.key] = e->where;
      if (!have_sc) sc_where = e->where;
      have_sc = true;
    }
  }
  auto sc_loc = [&](const std::string& k) { return sc_inner.count(k) ? sc_inner.at(k) : sc_where; };
  if (have_sc && sc.empty()) {
    w.note("info", "speculative-config is empty: speculative decoding is off", sc_where);
    have_sc = false;
  }
  if (have_sc) {
    w.set("spec.enabled", true, sc_where);
    w.set("spec.config", sc, sc_where);
    std::string draft;
    if (auto it = sc.find("model"); it != sc.end() && !it->is_null()) {
      draft = to_text(*it);
      w.set("spec.draft_model", draft, sc_loc("model"));
    }
    if (auto it = sc.find("revision"); it != sc.end() && it->is_string())
      w.set("spec.draft_revision", it->get<std::string>(), sc_loc("revision"));
    if (auto it = sc.find("method"); it != sc.end() && !it->is_null()) {
      const std::string raw = to_text(*it);
      w.set("spec.method_raw", raw, sc_loc("method"));
      w.set("spec.method", normalize_method(raw), sc_loc("method"));
      w.set("spec.method_source", "given", sc_loc("method"));
      if (normalize_method(raw) == "mtp" && ascii_lower(raw) != "mtp")
        w.note("info", fmt::format("speculative method '{}' is deprecated and replaced with 'mtp'", excerpt(raw)),
               sc_loc("method"));
    } else if (!draft.empty()) {
      // vLLM's SpeculativeConfig.__post_init__ without a method, from the draft name alone;
      // checkpoint-based detection (medusa, mlp_speculator, MTP model types) is left to later stages.
      const std::string l = ascii_lower(draft);
      std::string m = "draft_model";
      if (dotted_python_path(draft))
        m = "custom_class";
      else if (l == "ngram")
        m = "ngram";
      else if (l.find("eagle3") != std::string::npos)
        m = "eagle3";
      else if (l.find("eagle-") != std::string::npos)
        m = "eagle";
      else if (l.find("dflash") != std::string::npos)
        m = "dflash";
      else if (l.find("dspark") != std::string::npos)
        m = "dspark";
      w.set("spec.method", m, sc_loc("model"));
      w.set("spec.method_source", "draft-model-name", sc_loc("model"));
    }
    if (auto it = sc.find("num_speculative_tokens"); it != sc.end() && !it->is_null()) {
      const SourceLocation loc = sc_loc("num_speculative_tokens");
      if (it->is_boolean() || !(it->is_number() || it->is_string()))
        return input_error(fmt::format("num_speculative_tokens must be a non-negative integer, got {}", excerpt(*it)),
                           loc);
      auto k = to_int(*it, "num_speculative_tokens", loc);
      if (!k)
        return input_error(fmt::format("num_speculative_tokens must be a non-negative integer, got {}", excerpt(*it)),
                           loc);
      if (*k < 0)
        return input_error(fmt::format("num_speculative_tokens must be a non-negative integer, got {}", *k), loc);
      if (*k > 1'000'000)  // k + 1 (next_n) must not overflow; no engine drafts a million tokens
        return input_error(fmt::format("num_speculative_tokens {} is out of range", *k), loc);
      w.set("spec.num_speculative_tokens", *k, loc);
      w.locate("spec.k", loc);
      w.locate("spec.next_n", loc);
    } else {
      w.set("spec.num_speculative_tokens", nullptr, sc_where);
      w.locate("spec.k", sc_where);
    }
    struct Key {
      const char* key;
      const char* fact;
      int type;  // 0 int, 1 string, 2 bool, 3 upper-case string
    };
    for (const Key& k :
         {Key{"draft_tensor_parallel_size", "spec.draft_tp", 0}, Key{"max_model_len", "spec.max_model_len", 0},
          Key{"prompt_lookup_max", "spec.prompt_lookup_max", 0}, Key{"prompt_lookup_min", "spec.prompt_lookup_min", 0},
          Key{"kv_cache_dtype", "spec.kv_cache_dtype", 1}, Key{"quantization", "spec.quantization", 1},
          Key{"parallel_drafting", "spec.parallel_drafting", 2}, Key{"enforce_eager", "spec.enforce_eager", 2},
          Key{"disable_padded_drafter_batch", "spec.disable_padded_drafter_batch", 2},
          Key{"attention_backend", "spec.attention_backend", 3}}) {
      auto it = sc.find(k.key);
      if (it == sc.end() || it->is_null()) continue;
      const SourceLocation loc = sc_loc(k.key);
      const std::string what = std::string("speculative-config ") + k.key;
      if (k.type == 0) {
        auto v = to_int(*it, what, loc, true);
        if (!v) return v.error();
        w.set(k.fact, *v, loc);
      } else if (k.type == 2) {
        auto v = to_bool(*it, what, loc);
        if (!v) return v.error();
        w.set(k.fact, *v, loc);
      } else {
        const std::string s = to_text(*it);
        w.set(k.fact, k.type == 3 && ascii_lower(s) != "auto" ? ascii_upper(s) : s, loc);
      }
    }
    if (sc.contains("tensor_parallel_size"))
      w.note("warning",
             "speculative-config 'tensor_parallel_size' is rejected by vLLM; use 'draft_tensor_parallel_size'",
             sc_loc("tensor_parallel_size"));
  } else {
    w.set("spec.enabled", false, SourceLocation{w.plan().path});
  }

  return Ok{};
}
}  // namespace

bool vllm_flag_option(std::string_view c) {
  return kFlags.count(c) > 0 || starts_with(c, "no-") || starts_with(c, "enable-") || starts_with(c, "disable-") ||
         table_arity("vllm", c) == Arity::flag;
}
bool vllm_list_option(std::string_view c) { return kLists.count(c) > 0 || table_arity("vllm", c) == Arity::list; }

Expected<ParsedServing> build_vllm(const std::vector<RawOption>& options, ReadContext ctx) {
  ParsedServing out = start_plan(ctx);
  PlanWriter w(out);
  record_given_options(options, w);
  auto folded = fold_options(options, w, out);
  if (!folded) return folded.error();
  std::map<std::string, Entry>& opts = *folded;

  write_common_facts(w, ctx, "vllm");
  std::set<std::string> used;
  const Use use = [&](const std::string& name) -> Entry* {
    auto it = opts.find(name);
    if (it == opts.end()) return nullptr;
    used.insert(name);
    return &it->second;
  };

  // model.id: positional wins over --model / model:
  if (Entry* m = use("model")) {
    if (!ctx.positional_model.empty()) {
      w.note("info", "the positional model wins over --model / model:", m->where);
    } else {
      w.set("model.id", to_text(m->value), m->where);
      if (m->textual && !ctx.api_server)
        w.note("warning", "`vllm serve --model` is deprecated; give the model as the positional argument", m->where);
    }
  }
  if (!ctx.positional_model.empty()) w.set("model.id", ctx.positional_model, ctx.positional_loc);
  for (const OptionFact& of : kOptionFacts)
    if (Entry* e = use(of.option))
      if (auto st = write_option_fact(of, *e, w); !st) return st.error();
  for (const Special& sp : kSpecials)
    if (auto st = sp.write(use, w, ctx); !st) return st.error();

  for (auto& [name, e] : opts)
    if (!used.count(name) && e.known) out.unknown.push_back({e.written.empty() ? name : e.written, e.value, e.where});

  // An unread --config may set any option the command line does not: unknown, not vLLM's default.
  // (attention.requested, serve.cudagraph_mode and serve.max_model_len stay: null or absent already
  // means "not requested" there, so the file's value cannot be told unknown yet.)
  if (ctx.options_file_unknown) {
    const SourceLocation at = *ctx.options_file_unknown;
    for (const OptionFact& of : kOptionFacts)
      if (!w.has(of.fact)) w.set(of.fact, nullptr, at);
    if (!w.has("model.id")) w.set("model.id", nullptr, at);
    if (!find_fact(out.facts, "spec.config")) w.set("spec.enabled", nullptr, at);
  }

  // Defaults every plan carries (file-level location).
  w.set_plan_defaults();
  return out;
}

}  // namespace specprobe::serving
