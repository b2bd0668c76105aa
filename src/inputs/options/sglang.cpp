// SGLang option builder: `python -m sglang.launch_server` / `sglang serve` flags -> the same plan
// facts as vLLM. The speculative depth is kept as given (spec.num_steps, spec.topk,
// spec.num_draft_tokens); facts/derive.cpp turns it into spec.k and spec.next_n.
#include <cmath>
#include <set>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "inputs/options/options.hpp"

namespace specprobe::serving {
namespace {

const std::set<std::string, std::less<>> kSglangFlags = {"trust-remote-code",
                                                         "disable-cuda-graph",
                                                         "disable-cuda-graph-padding",
                                                         "enable-dp-attention",
                                                         "disable-radix-cache",
                                                         "enable-torch-compile",
                                                         "disable-overlap-schedule",
                                                         "enable-mixed-chunk",
                                                         "skip-server-warmup",
                                                         "enable-metrics",
                                                         "disable-custom-all-reduce",
                                                         "enable-ep-moe",
                                                         "enable-deepep-moe",
                                                         "enable-two-batch-overlap",
                                                         "enable-nan-detection",
                                                         "enable-p2p-check",
                                                         "log-requests",
                                                         "show-time-cost",
                                                         "enable-cache-report",
                                                         "enable-hierarchical-cache",
                                                         "enable-dp-lm-head",
                                                         "disable-shared-experts-fusion",
                                                         "enable-eplb",
                                                         "enable-lora",
                                                         "skip-tokenizer-init",
                                                         "is-embedding",
                                                         "enable-multimodal",
                                                         "disable-chunked-prefix-cache"};

const std::set<std::string, std::less<>> kSglangLists = {"cuda-graph-bs", "served-model-name", "lora-paths", "api-key"};

// Older or alternative spellings -> the canonical SGLang flag; used only when the option tables
// cannot be loaded (the tables know every alias and abbreviation per release).
const std::map<std::string, std::string, std::less<>> kSpellings = {
    {"model", "model-path"},
    {"tp", "tp-size"},
    {"tensor-parallel-size", "tp-size"},
    {"dp", "dp-size"},
    {"data-parallel-size", "dp-size"},
    {"pipeline-parallel-size", "pp-size"},
    {"ep", "ep-size"},
    {"expert-parallel-size", "ep-size"},
    {"speculative-algo", "speculative-algorithm"},
    {"speculative-draft", "speculative-draft-model-path"},
    {"speculative-draft-model", "speculative-draft-model-path"},
    {"mem-fraction", "mem-fraction-static"}};

struct SglangEntry {
  std::string written;
  Json value;
  SourceLocation where;
  bool known = true;  // some release accepts the name (else SP1014 reports it, not the reader)
};

}  // namespace

bool sglang_flag_option(std::string_view c) {
  return kSglangFlags.count(c) > 0 || c.substr(0, 7) == "enable-" || c.substr(0, 8) == "disable-" ||
         table_arity("sglang", c) == Arity::flag;
}
bool sglang_list_option(std::string_view c) {
  return kSglangLists.count(c) > 0 || table_arity("sglang", c) == Arity::list;
}

Expected<ParsedServing> build_sglang(const std::vector<RawOption>& options, ReadContext ctx) {
  ParsedServing out = start_plan(ctx);
  PlanWriter w(out);
  record_given_options(options, w);

  std::map<std::string, SglangEntry> opts;
  RepeatedOptions repeated;
  for (const RawOption& o : options) {
    std::string name = canonical_name(o.name);
    // The tables name the option (aliases, unambiguous prefixes); names no release accepts are
    // reported by SP1014, the flag keeping its dashes as written.
    const size_t extra_dashes = o.textual ? std::min(o.name.find_first_not_of('-'), o.name.size()) : 0;
    const TableName tn =
        table_name("sglang", (o.textual && o.short_form ? "-" : "--") + std::string(extra_dashes, '-') + name);
    if (tn.table && !tn.known) continue;
    if (tn.table) {
      name = tn.option;
    } else {
      if (o.short_form) {
        out.unknown.push_back({o.name, o.value, o.where});
        continue;
      }
      if (auto s = kSpellings.find(name); s != kSpellings.end()) name = s->second;
    }
    if (opts.count(name)) repeated.again("--" + name, o.where);
    Json value = o.value;
    if (tn.negative) {
      auto b = to_bool(o.value, o.name, o.where);
      if (!b) return b.error();
      value = !*b;
    }
    opts[name] = SglangEntry{o.name, std::move(value), o.where};
  }
  repeated.note_all(w);

  write_common_facts(w, ctx, "sglang");
  std::set<std::string> used;
  auto use = [&](const std::string& name) -> SglangEntry* {
    auto it = opts.find(name);
    if (it == opts.end()) return nullptr;
    used.insert(name);
    return &it->second;
  };

  if (SglangEntry* e = use("model-path")) w.set("model.id", to_text(e->value), e->where);
  if (!ctx.positional_model.empty()) w.set("model.id", ctx.positional_model, ctx.positional_loc);

  struct Map {
    const char* option;
    const char* fact;
  };
  for (const Map& m :
       {Map{"tp-size", "serve.tp"}, Map{"dp-size", "serve.dp"}, Map{"pp-size", "serve.pp"},
        Map{"ep-size", "serve.ep_size"}, Map{"page-size", "serve.block_size"},
        Map{"context-length", "serve.max_model_len"}, Map{"max-running-requests", "serve.max_num_seqs"},
        Map{"chunked-prefill-size", "serve.chunked_prefill_size"}, Map{"cuda-graph-max-bs", "serve.cuda_graph_max_bs"},
        Map{"speculative-num-steps", "spec.num_steps"}, Map{"speculative-eagle-topk", "spec.topk"},
        Map{"speculative-num-draft-tokens", "spec.num_draft_tokens"}, Map{"max-lora-rank", "serve.max_lora_rank"},
        Map{"max-loras-per-batch", "serve.max_loras"}, Map{"nnodes", "serve.nnodes"},
        Map{"max-total-tokens", "serve.max_total_tokens"}}) {
    if (SglangEntry* e = use(m.option)) {
      auto v = to_int(e->value, m.option, e->where);
      if (!v) return v.error();
      w.set(m.fact, *v, e->where);
    }
  }
  if (const Json* ep = find_fact(out.facts, "serve.ep_size"))
    w.set("serve.expert_parallel", ep->get<int64_t>() > 1, out.locations["serve.ep_size"]);
  for (const Map& m :
       {Map{"disable-cuda-graph", "serve.enforce_eager"}, Map{"trust-remote-code", "serve.trust_remote_code"},
        Map{"enable-dp-attention", "serve.dp_attention"}, Map{"enable-lora", "serve.enable_lora"},
        Map{"enable-eplb", "serve.enable_eplb"}, Map{"enable-torch-compile", "serve.torch_compile"}}) {
    if (SglangEntry* e = use(m.option)) {
      auto v = to_bool(e->value, m.option, e->where);
      if (!v) return v.error();
      w.set(m.fact, *v, e->where);
    }
  }
  if (SglangEntry* e = use("disable-radix-cache")) {
    auto v = to_bool(e->value, "disable-radix-cache", e->where);
    if (!v) return v.error();
    w.set("serve.enable_prefix_caching", !*v, e->where);
  }
  for (const Map& m :
       {Map{"kv-cache-dtype", "serve.kv_cache_dtype"}, Map{"quantization", "serve.quantization"},
        Map{"dtype", "serve.dtype"}, Map{"speculative-draft-model-path", "spec.draft_model"},
        Map{"speculative-draft-model-quantization", "spec.quantization"},
        Map{"prefill-attention-backend", "attention.prefill_backend"},
        Map{"decode-attention-backend", "attention.decode_backend"},
        Map{"moe-runner-backend", "serve.moe_runner_backend"}, Map{"moe-a2a-backend", "serve.all2all_backend"},
        Map{"grammar-backend", "serve.structured_outputs_backend"}, Map{"reasoning-parser", "serve.reasoning_parser"},
        Map{"tool-call-parser", "serve.tool_call_parser"}, Map{"deepep-mode", "serve.deepep_mode"},
        Map{"mamba-scheduler-strategy", "serve.mamba_scheduler_strategy"},
        Map{"mamba-ssm-dtype", "serve.mamba_ssm_cache_dtype"}, Map{"load-format", "serve.load_format"},
        Map{"revision", "serve.revision"}, Map{"tokenizer-path", "serve.tokenizer"},
        Map{"speculative-draft-model-revision", "spec.draft_revision"}}) {
    if (SglangEntry* e = use(m.option)) w.set(m.fact, to_text(e->value), e->where);
  }
  // LoRA is on when adapters are given (SGLang turns --enable-lora on for --lora-paths).
  if (SglangEntry* e = use("lora-paths"))
    if (!w.has("serve.enable_lora")) w.set("serve.enable_lora", true, e->where);
  // Prefill / decode disaggregation moves the KV cache between servers.
  if (SglangEntry* e = use("disaggregation-mode"))
    w.set("serve.kv_transfer", ascii_lower(to_text(e->value)) != "null", e->where);
  if (SglangEntry* e = use("speculative-draft-attention-backend")) {
    w.set("spec.draft_attention_backend", to_text(e->value), e->where);
    w.set("spec.attention_backend", to_text(e->value), e->where);
  }
  if (SglangEntry* e = use("mem-fraction-static")) {
    auto v = to_float(e->value, "mem-fraction-static", e->where);
    if (!v) return v.error();
    w.set("serve.gpu_memory_utilization", *v, e->where);
  }
  if (SglangEntry* e = use("cpu-offload-gb")) {
    auto v = to_float(e->value, "cpu-offload-gb", e->where);
    if (!v) return v.error();
    w.set("serve.cpu_offload_gb", *v, e->where);
  }
  if (SglangEntry* e = use("attention-backend")) {
    w.set("attention.requested", to_text(e->value), e->where);
    w.set("attention.requested_source", "attention-backend", e->where);
  }

  if (SglangEntry* e = use("speculative-algorithm")) {
    const std::string raw = to_text(e->value);
    const std::string l = ascii_lower(raw);
    w.set("spec.enabled", true, e->where);
    w.set("spec.method_raw", raw, e->where);
    w.set("spec.method", l == "nextn" ? std::string("mtp") : l, e->where);
    w.set("spec.method_source", "given", e->where);
    const Json* steps = find_fact(out.facts, "spec.num_steps");
    const Json* draft_tokens = find_fact(out.facts, "spec.num_draft_tokens");
    if (draft_tokens) {
      const SourceLocation loc = out.locations["spec.num_draft_tokens"];
      if (std::abs(draft_tokens->get<double>()) > 1e6)  // k = n - 1 and next_n must not overflow
        return input_error(fmt::format("--speculative-num-draft-tokens {} is out of range", excerpt(*draft_tokens)),
                           loc);
      w.locate("spec.k", loc);
      w.locate("spec.next_n", loc);
    } else if (steps) {
      const SourceLocation loc = out.locations["spec.num_steps"];
      if (std::abs(steps->get<double>()) > 1e6)
        return input_error(fmt::format("--speculative-num-steps {} is out of range", excerpt(*steps)), loc);
      w.locate("spec.k", loc);
      w.locate("spec.next_n", loc);
    } else {
      w.locate("spec.k", e->where);
    }
  } else {
    w.set("spec.enabled", false, SourceLocation{out.path});
  }

  for (auto& [name, e] : opts)
    if (!used.count(name)) out.unknown.push_back({e.written, e.value, e.where});

  w.set_plan_defaults();
  return out;
}

}  // namespace specprobe::serving
