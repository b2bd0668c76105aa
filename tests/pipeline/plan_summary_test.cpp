// summarize_plan: each typed field of the plan summary from its fact, the defaults of a document
// without it, null and mistyped facts as unknown (issue 53: the printers read only this).
#include <catch2/catch.hpp>

#include "pipeline/plan_summary.hpp"

using namespace specprobe;

namespace {

Json full_facts() {
  return Json::parse(R"json({
    "engine": {"name": "vllm", "version": "0.11.0"},
    "gpu": {"name": "NVIDIA H100 80GB HBM3", "sm": 90, "source": "declared", "declared": "H100",
            "declared_from": "nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 at line 12"},
    "model": {"id": "deepseek-ai/DeepSeek-V3.2", "path": "/m/config.json", "architecture": "DeepseekV32ForCausalLM",
              "model_type": "deepseek_v32", "num_attention_heads": 128, "num_kv_heads": 1, "gqa_ratio": 2.5,
              "mla": true, "dsa": {"present": true, "index_n_heads": 64}},
    "draft": {"path": "/d/config.json", "architecture": "LlamaForCausalLMEagle3", "model_type": "llama"},
    "resolve": {"model": {"origin": "hub (cached)", "endpoint_host": "huggingface.co",
                          "commit": "0123456789abcdef0123"},
                "draft": {"origin": "local path"}},
    "spec": {"enabled": true, "method": "eagle3", "k": 3, "next_n": 4, "draft_model": "yuhuili/EAGLE3"},
    "attention": {"selected": "FLASHMLA", "selected_by": "auto"},
    "serve": {"kv_cache_dtype": "fp8"},
    "cudagraph": {"requested": "FULL_AND_PIECEWISE", "resolved": "PIECEWISE"},
    "memory": {"modelled": true, "status": "at-risk", "summary": "tight", "fix": "raise TP",
               "gpu_bytes": 85899345920, "budget_bytes": 79027398246, "weights_bytes": 1000, "drafter_bytes": 20,
               "graph_bytes": 30, "kv_bytes": 40, "kv_tokens": 4096, "kv_tokens_low": 2048, "kv_tokens_high": 8192,
               "kv_bytes_per_token": 70272, "max_model_len": 163840, "max_concurrency": 0.03,
               "breakdown": {"engine": "vllm", "engine_version": "0.11.0",
                             "layout": {"tp": 8, "pp": 1, "dp": 2, "ep": 16},
                             "budget_fraction": 0.92, "budget_fraction_source": "default",
                             "weights_source": "headers", "weights_margin": 0.01,
                             "weights_parts": {"lm_head": 7, "embed": 5, "layers": 900},
                             "activation_bytes": 11, "overhead_bytes": 12, "scheduler_tokens": 8192.0,
                             "scheduler_seqs": 1024.0, "graphs_inside_budget": true, "kv_dtype": "fp8_e4m3"}}
  })json");
}

}  // namespace

TEST_CASE("plan summary: an empty document gives the default summary", "[pipeline][plan_summary]") {
  const PlanSummary p = summarize_plan(Json::object());
  CHECK(p == PlanSummary{});
  CHECK(p.gpu.arch_label == "?");
  CHECK(p.attention.kv_cache_dtype == "auto");
  CHECK_FALSE(p.attention.kv_cache_dtype_unknown);
  CHECK_FALSE(p.model.config_read);
  CHECK_FALSE(p.draft.config_read);
  CHECK_FALSE(p.spec.enabled.has_value());
  CHECK_FALSE(p.memory.present);
}

TEST_CASE("plan summary: every field from its fact", "[pipeline][plan_summary]") {
  const PlanSummary p = summarize_plan(full_facts());
  CHECK(p.engine_version == "0.11.0");

  CHECK(p.gpu.name == "NVIDIA H100 80GB HBM3");
  CHECK(p.gpu.arch_label == "sm_90");
  CHECK(p.gpu.sm == 90);
  CHECK(p.gpu.source == "declared");
  CHECK(p.gpu.declared == "H100");
  CHECK(p.gpu.declared_from == "nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 at line 12");

  CHECK(p.model.id == "deepseek-ai/DeepSeek-V3.2");
  CHECK(p.model.config_read);
  CHECK(p.model.architecture == "DeepseekV32ForCausalLM");
  CHECK(p.model.model_type == "deepseek_v32");
  CHECK(p.model.num_attention_heads == 128);
  CHECK(p.model.num_kv_heads == 1);
  CHECK(p.model.gqa_ratio == 2.5);
  CHECK(p.model.mla);
  CHECK(p.model.dsa);
  CHECK(p.model.source.from_hub());
  CHECK(p.model.source.origin == "hub (cached)");
  CHECK(p.model.source.endpoint_host == "huggingface.co");
  CHECK(p.model.source.commit == "0123456789abcdef0123");
  CHECK(p.model.source.path == "/m/config.json");

  CHECK(p.draft.config_read);
  CHECK(p.draft.model == "yuhuili/EAGLE3");
  CHECK(p.draft.architecture == "LlamaForCausalLMEagle3");
  CHECK(p.draft.model_type == "llama");
  CHECK_FALSE(p.draft.source.from_hub());
  CHECK(p.draft.source.origin == "local path");
  CHECK(p.draft.source.path == "/d/config.json");

  CHECK(p.spec.enabled == true);
  CHECK(p.spec.method == "eagle3");
  CHECK(p.spec.k == 3);
  CHECK(p.spec.next_n == 4);

  CHECK(p.attention.selected == "FLASHMLA");
  CHECK(p.attention.selected_by == "auto");
  CHECK(p.attention.kv_cache_dtype == "fp8");
  CHECK_FALSE(p.attention.kv_cache_dtype_unknown);
  CHECK(p.attention.cudagraph_requested == "FULL_AND_PIECEWISE");
  CHECK(p.attention.cudagraph_resolved == "PIECEWISE");

  const MemorySummary& m = p.memory;
  CHECK(m.present);
  CHECK(m.modelled);
  CHECK_FALSE(m.reason.has_value());
  CHECK(m.status == "at-risk");
  CHECK(m.summary == "tight");
  CHECK(m.fix == "raise TP");
  CHECK(m.gpu_bytes == 85899345920);
  CHECK(m.budget_bytes == 79027398246);
  CHECK(m.weights_bytes == 1000);
  CHECK(m.drafter_bytes == 20);
  CHECK(m.graph_bytes == 30);
  CHECK(m.kv_bytes == 40);
  CHECK(m.kv_tokens == 4096);
  CHECK(m.kv_tokens_low == 2048);
  CHECK(m.kv_tokens_high == 8192);
  CHECK(m.kv_bytes_per_token == 70272);
  CHECK(m.max_model_len == 163840);
  CHECK(m.max_concurrency == 0.03);
  const MemoryBreakdown& b = m.breakdown;
  CHECK(b.engine == "vllm");
  CHECK(b.engine_version == "0.11.0");
  CHECK_FALSE(b.engine_version_note.has_value());
  CHECK((b.tp == 8 && b.pp == 1 && b.dp == 2 && b.ep == 16));
  CHECK(b.budget_fraction == 0.92);
  CHECK(b.budget_fraction_source == "default");
  CHECK(b.weights_source == "headers");
  CHECK(b.weights_margin == 0.01);
  // In name order, as the facts document holds them.
  using Part = std::pair<std::string, std::optional<int64_t>>;
  CHECK(b.weights_parts == std::vector<Part>{{"embed", 5}, {"layers", 900}, {"lm_head", 7}});
  CHECK(b.activation_bytes == 11);
  CHECK(b.overhead_bytes == 12);
  CHECK(b.scheduler_tokens == 8192);
  CHECK(b.scheduler_seqs == 1024);
  CHECK(b.graphs_inside_budget);
  CHECK(b.kv_dtype == "fp8_e4m3");
  CHECK(b.kv_not_modelled == "tokens not modelled");
}

TEST_CASE("plan summary: null, absent and mistyped facts are unknown", "[pipeline][plan_summary]") {
  Json f = full_facts();
  // config.json read, but it names no architecture: the model's metadata was still read.
  f["model"]["architecture"] = nullptr;
  f["model"]["gqa_ratio"] = 4;
  f["draft"].erase("architecture");
  // A kv-cache dtype left to a variable: unknown, and "auto" as the matrix rows name it.
  f["serve"]["kv_cache_dtype"] = nullptr;
  f["spec"] = {{"enabled", false}, {"k", "three"}};
  f["gpu"] = {{"name", 7}, {"arch", "gfx942"}, {"sm", nullptr}};
  f["resolve"]["model"]["origin"] = nullptr;
  f["memory"] = {{"modelled", false}, {"reason", "the GPU's memory is unknown"}, {"status", nullptr}};
  const PlanSummary p = summarize_plan(f);
  CHECK(p.model.config_read);
  CHECK_FALSE(p.model.architecture.has_value());
  CHECK(p.model.gqa_ratio == 4.0);
  CHECK_FALSE(p.draft.config_read);
  CHECK(p.attention.kv_cache_dtype == "auto");
  CHECK(p.attention.kv_cache_dtype_unknown);
  CHECK(p.spec.enabled == false);
  CHECK_FALSE(p.spec.k.has_value());
  CHECK_FALSE(p.gpu.name.has_value());
  CHECK(p.gpu.arch_label == "gfx942");
  CHECK_FALSE(p.gpu.sm.has_value());
  CHECK_FALSE(p.model.source.from_hub());
  CHECK(p.model.source.path == "/m/config.json");
  CHECK(p.memory.present);
  CHECK_FALSE(p.memory.modelled);
  CHECK(p.memory.reason == "the GPU's memory is unknown");
  CHECK_FALSE(p.memory.status.has_value());
  CHECK(p.memory.breakdown == MemoryBreakdown{});

  f["gpu"] = {{"sm", 120}};
  CHECK(summarize_plan(f).gpu.arch_label == "sm_120");
}
