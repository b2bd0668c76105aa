// The plan at a glance, typed: what the printers show of a deployment (engine, GPU, model and
// draft and where they were read from, speculative decoding, attention, KV cache, CUDA graphs, the
// memory model), read from the facts document once, by the pipeline (summarize_plan), so that no
// printer reads a fact by its dotted name (issue 53). The JSON report still carries the whole
// facts document; this is the part the other formats render.
//
// Every field is what its fact holds (docs/facts.md gives the types): an std::optional is empty
// when the fact is absent or null, so each printer chooses how it says "unknown".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.hpp"

namespace specprobe {

struct GpuSummary {
  std::optional<std::string> name;             // gpu.name
  std::string arch_label = "?";                // gpu.arch (AMD gfx target), else "sm_<gpu.sm>", else "?"
  std::optional<int64_t> sm;                   // gpu.sm: major*10+minor; empty for AMD
  std::optional<std::string> source;           // gpu.source: driver or declared
  std::optional<std::string> declared;         // gpu.declared: the name given with --gpu (or the fallback)
  std::optional<std::string> declared_from;    // gpu.declared_from: the deploy file's label and line
  bool fallback = false;                       // gpu.fallback: no GPU queried or declared; the fallback one
  std::optional<std::string> fallback_reason;  // gpu.fallback_reason: why none could be queried
  bool operator==(const GpuSummary&) const = default;
};

// Where a model's config.json was read from: the Hub at a commit, or a file.
struct ModelSource {
  std::optional<std::string> origin;         // resolve.<role>.origin: --model, local path, hub (cached) ...
  std::optional<std::string> endpoint_host;  // resolve.<role>.endpoint_host (the Hub)
  std::optional<std::string> commit;         // resolve.<role>.commit (the Hub)
  std::optional<std::string> path;           // <role>.path: the config.json read
  bool from_hub() const { return origin && origin->rfind("hub", 0) == 0; }
  bool operator==(const ModelSource&) const = default;
};

struct ModelSummary {
  std::optional<std::string> id;  // model.id: the model argument as given
  // Whether config.json was read (model.architecture is written, null when config.json names no
  // architecture); the fields below are empty without it.
  bool config_read = false;
  std::optional<std::string> architecture;  // model.architecture
  std::optional<std::string> model_type;    // model.model_type
  std::optional<int64_t> num_attention_heads, num_kv_heads;
  std::optional<double> gqa_ratio;  // model.gqa_ratio: query heads per KV head on one rank (not always whole)
  bool mla = false;                 // model.mla
  bool dsa = false;                 // model.dsa.present: the DeepSeek sparse-attention indexer
  ModelSource source;               // resolve.model.*, model.path
  bool operator==(const ModelSummary&) const = default;
};

struct DraftSummary {
  bool config_read = false;                 // draft.architecture is written: the draft's config.json was read
  std::optional<std::string> model;         // spec.draft_model: the draft model or head as named
  std::optional<std::string> architecture;  // draft.architecture
  std::optional<std::string> model_type;    // draft.model_type
  ModelSource source;                       // resolve.draft.*, draft.path
  bool operator==(const DraftSummary&) const = default;
};

struct SpecSummary {
  std::optional<bool> enabled;  // spec.enabled; empty: the file does not show it
  std::optional<std::string> method;
  std::optional<int64_t> k, next_n;  // spec.k, spec.next_n
  bool operator==(const SpecSummary&) const = default;
};

struct AttentionSummary {
  std::optional<std::string> selected;     // attention.selected: the target's backend
  std::optional<std::string> selected_by;  // attention.selected_by: requested, auto, engine ...
  // serve.kv_cache_dtype as written, "auto" when not given; a dtype the deploy file leaves to a
  // variable (null) is "auto" here, as the support matrix's rows name it, and KV_CACHE_DTYPE_UNKNOWN.
  std::string kv_cache_dtype = "auto";
  bool kv_cache_dtype_unknown = false;
  std::optional<std::string> cudagraph_requested, cudagraph_resolved;  // cudagraph.requested / .resolved
  bool operator==(const AttentionSummary&) const = default;
};

// memory.breakdown: every term of the memory model (facts/derive_memory.cpp), with the defaults
// --explain-memory shows for a term the model did not write.
struct MemoryBreakdown {
  std::string engine = "vllm";
  std::optional<std::string> engine_version;       // whose accounting; empty: unknown, the newest release's
  std::optional<std::string> engine_version_note;  // why the version matters, when unknown
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  double budget_fraction = 0;
  std::string budget_fraction_source = "given";
  std::string weights_source = "config";  // config or headers (safetensors)
  double weights_margin = 0.03;
  std::vector<std::pair<std::string, std::optional<int64_t>>> weights_parts;  // bytes, in name order
  std::optional<int64_t> activation_bytes, overhead_bytes;
  std::optional<int64_t> request_table_bytes;     // SGLang's request-to-token table, from the reserve
  std::optional<int64_t> fa3_graph_tables_bytes;  // SGLang 0.4.5-0.4.10.post1 FA3 decode graphs' page tables
  std::optional<int64_t> other_processes_bytes;   // held by other processes now, off vLLM 0.8.x V1's KV cache
  std::optional<std::string> shared_gpu_note;     // what other processes on the card change, or would
  double scheduler_tokens = 0, scheduler_seqs = 0;
  bool graphs_inside_budget = false;
  std::string kv_dtype = "auto";
  std::string kv_not_modelled = "tokens not modelled";  // why KV tokens are not modelled
  bool operator==(const MemoryBreakdown&) const = default;
};

// memory.*: the memory model's verdict per GPU rank.
struct MemorySummary {
  bool present = false;                // the memory facts exist (the model ran, or says why it could not)
  bool modelled = false;               // memory.modelled
  std::optional<std::string> reason;   // why not modelled
  std::optional<std::string> status;   // fits, at-risk or fails
  std::optional<std::string> summary;  // the verdict in one line
  std::optional<std::string> fix;      // the knob that makes the plan fit
  std::optional<int64_t> gpu_bytes, budget_bytes, weights_bytes, drafter_bytes, graph_bytes, kv_bytes;
  std::optional<int64_t> kv_tokens, kv_tokens_low, kv_tokens_high, kv_bytes_per_token, max_model_len;
  std::optional<double> max_concurrency;
  MemoryBreakdown breakdown;
  bool operator==(const MemorySummary&) const = default;
};

struct PlanSummary {
  std::optional<std::string> engine_version;  // engine.version (the engine's name: Report::engine)
  GpuSummary gpu;
  ModelSummary model;
  DraftSummary draft;
  SpecSummary spec;
  AttentionSummary attention;
  MemorySummary memory;
  bool operator==(const PlanSummary&) const = default;
};

// The summary of the derived facts document FACTS. A default PlanSummary is that of an empty
// document (a report that evaluated nothing). Never fails: a fact of another type than its
// documented one reads as absent.
PlanSummary summarize_plan(const Json& facts);

}  // namespace specprobe
