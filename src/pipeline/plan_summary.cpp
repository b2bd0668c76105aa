// summarize_plan: the facts the printers show, read by name here and nowhere else (see
// plan_summary.hpp).
#include "pipeline/plan_summary.hpp"

#include "gpu/gpu_info.hpp"

namespace specprobe {
namespace {

std::optional<double> fact_double(const Json& facts, std::string_view dotted) {
  const Json* v = find_fact(facts, dotted);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

ModelSource model_source(const Json& f, const std::string& role) {
  ModelSource s;
  s.origin = fact_string(f, "resolve." + role + ".origin");
  s.endpoint_host = fact_string(f, "resolve." + role + ".endpoint_host");
  s.commit = fact_string(f, "resolve." + role + ".commit");
  s.path = fact_string(f, role + ".path");
  return s;
}

MemorySummary memory_summary(const Json& f) {
  MemorySummary m;
  const Json* doc = find_fact(f, "memory");
  if (!doc || !doc->is_object()) return m;
  m.present = true;
  m.modelled = fact_bool(f, "memory.modelled").value_or(false);
  m.reason = fact_string(f, "memory.reason");
  m.status = fact_string(f, "memory.status");
  m.summary = fact_string(f, "memory.summary");
  m.fix = fact_string(f, "memory.fix");
  m.gpu_bytes = fact_int(f, "memory.gpu_bytes");
  m.budget_bytes = fact_int(f, "memory.budget_bytes");
  m.weights_bytes = fact_int(f, "memory.weights_bytes");
  m.drafter_bytes = fact_int(f, "memory.drafter_bytes");
  m.graph_bytes = fact_int(f, "memory.graph_bytes");
  m.kv_bytes = fact_int(f, "memory.kv_bytes");
  m.kv_tokens = fact_int(f, "memory.kv_tokens");
  m.kv_tokens_low = fact_int(f, "memory.kv_tokens_low");
  m.kv_tokens_high = fact_int(f, "memory.kv_tokens_high");
  m.kv_bytes_per_token = fact_int(f, "memory.kv_bytes_per_token");
  m.max_model_len = fact_int(f, "memory.max_model_len");
  m.max_concurrency = fact_double(f, "memory.max_concurrency");

  MemoryBreakdown& b = m.breakdown;
  const MemoryBreakdown defaults;
  b.engine = fact_string(f, "memory.breakdown.engine").value_or(defaults.engine);
  b.engine_version = fact_string(f, "memory.breakdown.engine_version");
  b.engine_version_note = fact_string(f, "memory.breakdown.engine_version_note");
  b.tp = fact_int(f, "memory.breakdown.layout.tp").value_or(defaults.tp);
  b.pp = fact_int(f, "memory.breakdown.layout.pp").value_or(defaults.pp);
  b.dp = fact_int(f, "memory.breakdown.layout.dp").value_or(defaults.dp);
  b.ep = fact_int(f, "memory.breakdown.layout.ep").value_or(defaults.ep);
  b.budget_fraction = fact_double(f, "memory.breakdown.budget_fraction").value_or(defaults.budget_fraction);
  b.budget_fraction_source =
      fact_string(f, "memory.breakdown.budget_fraction_source").value_or(defaults.budget_fraction_source);
  b.weights_source = fact_string(f, "memory.breakdown.weights_source").value_or(defaults.weights_source);
  b.weights_margin = fact_double(f, "memory.breakdown.weights_margin").value_or(defaults.weights_margin);
  if (const Json* parts = find_fact(f, "memory.breakdown.weights_parts"); parts && parts->is_object())
    for (auto it = parts->begin(); it != parts->end(); ++it)
      b.weights_parts.emplace_back(
          it.key(), it.value().is_number_integer() ? std::optional<int64_t>(it.value().get<int64_t>()) : std::nullopt);
  b.activation_bytes = fact_int(f, "memory.breakdown.activation_bytes");
  b.overhead_bytes = fact_int(f, "memory.breakdown.overhead_bytes");
  b.request_table_bytes = fact_int(f, "memory.breakdown.request_table_bytes");
  b.fa3_graph_tables_bytes = fact_int(f, "memory.breakdown.fa3_graph_tables_bytes");
  b.other_processes_bytes = fact_int(f, "memory.breakdown.other_processes_bytes");
  b.shared_gpu_note = fact_string(f, "memory.breakdown.shared_gpu_note");
  b.scheduler_tokens = fact_double(f, "memory.breakdown.scheduler_tokens").value_or(defaults.scheduler_tokens);
  b.scheduler_seqs = fact_double(f, "memory.breakdown.scheduler_seqs").value_or(defaults.scheduler_seqs);
  b.graphs_inside_budget =
      fact_bool(f, "memory.breakdown.graphs_inside_budget").value_or(defaults.graphs_inside_budget);
  b.kv_dtype = fact_string(f, "memory.breakdown.kv_dtype").value_or(defaults.kv_dtype);
  b.kv_not_modelled = fact_string(f, "memory.breakdown.kv_not_modelled").value_or(defaults.kv_not_modelled);
  return m;
}

}  // namespace

PlanSummary summarize_plan(const Json& f) {
  PlanSummary p;
  p.engine_version = fact_string(f, "engine.version");

  p.gpu.name = fact_string(f, "gpu.name");
  p.gpu.arch_label = gpu_arch_label(f);
  p.gpu.sm = fact_int(f, "gpu.sm");
  p.gpu.source = fact_string(f, "gpu.source");
  p.gpu.declared = fact_string(f, "gpu.declared");
  p.gpu.declared_from = fact_string(f, "gpu.declared_from");
  p.gpu.fallback = fact_bool(f, "gpu.fallback").value_or(false);
  p.gpu.fallback_reason = fact_string(f, "gpu.fallback_reason");

  p.model.id = fact_string(f, "model.id");
  p.model.config_read = find_fact(f, "model.architecture") != nullptr;
  p.model.architecture = fact_string(f, "model.architecture");
  p.model.model_type = fact_string(f, "model.model_type");
  p.model.num_attention_heads = fact_int(f, "model.num_attention_heads");
  p.model.num_kv_heads = fact_int(f, "model.num_kv_heads");
  p.model.gqa_ratio = fact_double(f, "model.gqa_ratio");
  p.model.mla = fact_bool(f, "model.mla").value_or(false);
  p.model.dsa = fact_bool(f, "model.dsa.present").value_or(false);
  p.model.source = model_source(f, "model");

  p.draft.config_read = find_fact(f, "draft.architecture") != nullptr;
  p.draft.model = fact_string(f, "spec.draft_model");
  p.draft.architecture = fact_string(f, "draft.architecture");
  p.draft.model_type = fact_string(f, "draft.model_type");
  p.draft.source = model_source(f, "draft");

  p.spec.enabled = fact_bool(f, "spec.enabled");
  p.spec.method = fact_string(f, "spec.method");
  p.spec.k = fact_int(f, "spec.k");
  p.spec.next_n = fact_int(f, "spec.next_n");

  p.attention.selected = fact_string(f, "attention.selected");
  p.attention.selected_by = fact_string(f, "attention.selected_by");
  const Json* kv = find_fact(f, "serve.kv_cache_dtype");
  p.attention.kv_cache_dtype = fact_string(f, "serve.kv_cache_dtype").value_or("auto");
  p.attention.kv_cache_dtype_unknown = kv && kv->is_null();
  p.attention.cudagraph_requested = fact_string(f, "cudagraph.requested");
  p.attention.cudagraph_resolved = fact_string(f, "cudagraph.resolved");

  p.memory = memory_summary(f);
  return p;
}

}  // namespace specprobe
