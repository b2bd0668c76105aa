// SGLang server-args emulation (see derive_sglang.hpp), from python/sglang/srt/server_args.py
// (~early-2026 content, commit not pinned; knowledge C).
#include "facts/derive_sglang.hpp"
#include "common/ascii.hpp"

#include <algorithm>

namespace specprobe {
namespace {

bool has(const Json& list, std::string_view v) {
  return std::find(list.begin(), list.end(), Json(std::string(v))) != list.end();
}

}  // namespace

void derive_sglang(Json& f) {
  if (fact_string(f, "engine.name").value_or("") != "sglang") {
    f.erase("sglang");
    return;
  }
  Json& s = f["sglang"];
  s = Json::object();
  const std::string method = fact_string(f, "spec.method").value_or("");
  const bool spec = fact_bool(f, "spec.enabled").value_or(false);

  Json backends = Json::array();
  for (const char* name : {"attention.selected", "attention.prefill_backend", "attention.decode_backend"})
    if (auto b = fact_string(f, name); b && !b->empty())
      if (!has(backends, ascii_lower(*b))) backends.push_back(ascii_lower(*b));
  s["backends"] = backends;

  if (auto t = fact_int(f, "spec.topk")) {
    s["topk"] = *t;
    s["topk_source"] = "given";
  } else if (spec && method == "mtp" && !fact_int(f, "spec.num_steps") && !fact_int(f, "spec.num_draft_tokens")) {
    s["topk"] = 1;  // auto_choose_speculative_params: DeepSeek-style MTP -> (3, 1, 4)
    s["topk_source"] = "auto-mtp";
  } else {
    s["topk"] = nullptr;
    s["topk_source"] = "unknown";
  }

  int64_t page = fact_int(f, "serve.block_size").value_or(0);
  if (page <= 0) {
    page = 1;
    if (fact_bool(f, "model.dsa.present").value_or(false) || has(backends, "flashmla") || has(backends, "dsa") ||
        has(backends, "nsa"))
      page = 64;
    if (has(backends, "cutlass_mla")) page = 128;
  }
  s["page_size"] = page;

  bool paged_ok = !backends.empty();
  for (const auto& b : backends) {
    const std::string n = b.get<std::string>();
    if (method == "ngram" ? n != "flashinfer" : (n != "flashinfer" && n != "fa3")) paged_ok = false;
  }
  s["paged_topk_ok"] = paged_ok;

  const std::string v2 = ascii_lower(fact_string(f, "env.SGLANG_ENABLE_SPEC_V2").value_or(""));
  s["spec_v2"] = v2 == "1" || v2 == "true";
  s["uses_trtllm_mha"] = has(backends, "trtllm_mha");
  s["uses_trtllm_mla"] = has(backends, "trtllm_mla");
  s["uses_flex_attention"] = has(backends, "flex_attention");
  s["uses_flashinfer"] = has(backends, "flashinfer");
}

}  // namespace specprobe
