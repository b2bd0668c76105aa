// vLLM attention-backend emulation, from vllm-project/vllm @9aaf83ef5: declarations from the
// backends' files (vllm/v1/attention/backends/*.py, mla/*.py); priorities from
// vllm/platforms/cuda.py L79-147; CUDA-graph resolution from vllm/config/compilation.py L1318-1440.
#include "facts/backends.hpp"

#include "common/version.hpp"

#include <algorithm>
#include <array>

namespace specprobe {
namespace {

struct Ctx {
  int cc_major = 0, cc_minor = 0;
  bool gpu_known = false;
  bool mla = false, sparse = false, v4 = false;
  int64_t head_dim = 0;
  int64_t q_heads = 0, kv_heads = 0;
  std::string kv;     // serve.kv_cache_dtype as given ("auto", "fp8", ...)
  int64_t block = 0;  // 0 = unset
};

Ctx read_ctx(const Json& f) {
  Ctx c;
  if (auto v = fact_int(f, "gpu.cc_major")) {
    c.cc_major = static_cast<int>(*v);
    c.gpu_known = true;
  }
  if (auto v = fact_int(f, "gpu.cc_minor")) c.cc_minor = static_cast<int>(*v);
  c.mla = fact_bool(f, "model.mla").value_or(false);
  c.sparse = fact_bool(f, "model.dsa.present").value_or(false);
  c.v4 = fact_string(f, "model.model_type").value_or("") == "deepseek_v4";
  c.head_dim = fact_int(f, "model.head_dim").value_or(0);
  c.q_heads = fact_int(f, "model.num_attention_heads").value_or(0);
  c.kv_heads = fact_int(f, "model.num_kv_heads").value_or(0);
  c.kv = fact_string(f, "serve.kv_cache_dtype").value_or("auto");
  c.block = fact_int(f, "serve.block_size").value_or(0);
  return c;
}

bool in(std::string_view v, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

bool sm100_family(const Ctx& c) { return c.cc_major == 10 || c.cc_major == 11; }

// FlashInfer's TRTLLM-gen kernels (utils/flashinfer.py L299-333): SM100 family and q % kv == 0.
bool trtllm_usable(const Ctx& c) {
  return sm100_family(c) && (c.kv_heads <= 0 || c.q_heads % std::max<int64_t>(c.kv_heads, 1) == 0);
}

BackendVerdict validate(const Ctx& c, const std::string& name) {
  BackendVerdict v;
  v.name = name;
  auto reject = [&](std::string why) { v.reasons.push_back(std::move(why)); };
  const int cc = c.cc_major * 10 + c.cc_minor;
  const std::string& kv = c.kv;
  auto need_kv = [&](std::initializer_list<std::string_view> ok) {
    if (!in(kv, ok)) reject(fmt::format("kv-cache-dtype {} is not supported", kv));
  };
  auto need_major = [&](std::initializer_list<int> majors, std::string_view what) {
    if (c.gpu_known && std::find(majors.begin(), majors.end(), c.cc_major) == majors.end())
      reject(fmt::format("needs {} (this GPU is sm_{})", what, cc));
  };
  auto need_block = [&](std::initializer_list<int64_t> ok) {
    if (c.block > 0 && std::find(ok.begin(), ok.end(), c.block) == ok.end())
      reject(fmt::format("block size {} is not supported", c.block));
  };
  auto need_block_mult16 = [&] {
    if (c.block > 0 && c.block % 16 != 0) reject(fmt::format("block size {} is not a multiple of 16", c.block));
  };
  const bool dense_mla = c.mla && !c.sparse;

  if (name == "FLASH_ATTN") {
    if (c.mla) reject("not an MLA backend");
    if (c.gpu_known && cc < 80) reject("needs compute capability >= 8.0");
    // fp8 KV only with FA3, i.e. the SM90 family (flash_attn.py L183-194).
    if (in(kv, {"fp8", "fp8_e4m3"})) {
      if (c.gpu_known && c.cc_major != 9) reject("fp8 KV cache needs FlashAttention 3, which runs on SM90 only");
    } else {
      need_kv({"auto", "float16", "bfloat16"});
    }
    if (c.head_dim > 0 && (c.head_dim % 8 != 0 || c.head_dim > 256))
      reject(fmt::format("head size {} is not supported (multiple of 8, at most 256)", c.head_dim));
    need_block_mult16();
    v.cg_support = (c.cc_major == 9) ? CgSupport::always : CgSupport::uniform_batch;
    v.spec_as_decode = true;  // one varlen kernel, no reorder
  } else if (name == "FLASHINFER") {
    if (c.mla) reject("not an MLA backend");
    if (c.gpu_known && (cc < 75 || cc > 121)) reject("needs compute capability 7.5 to 12.1");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"});
    if (c.head_dim > 0 && !in(std::to_string(c.head_dim), {"64", "128", "256"}))
      reject(fmt::format("head size {} is not supported (64, 128, 256)", c.head_dim));
    need_block({16, 32, 64});
    const bool trt = trtllm_usable(c);
    v.cg_support = trt ? CgSupport::uniform_batch : CgSupport::uniform_single_token_decode;
    v.spec_as_decode = trt;
  } else if (name == "TRITON_ATTN") {
    if (c.mla) reject("not an MLA backend");
    need_kv(
        {"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8_per_token_head", "fp8_per_token_head"});
    if (c.head_dim > 0 && c.head_dim < 32) reject(fmt::format("head size {} is below 32", c.head_dim));
    need_block_mult16();
    v.cg_support = CgSupport::always;
    v.spec_as_decode = true;
  } else if (name == "FLEX_ATTENTION") {
    if (c.mla) reject("not an MLA backend");
    need_kv({"auto", "float16", "bfloat16"});
    v.cg_support = CgSupport::never;
  } else if (name == "TURBOQUANT") {
    if (c.mla) reject("not an MLA backend");
    if (kv.rfind("turboquant_", 0) != 0) reject(fmt::format("kv-cache-dtype {} is not a turboquant_* type", kv));
    need_block({16, 32, 64, 128});
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = false;  // _init_reorder_batch_threshold(1, supports_spec_as_decode=False)
  } else if (name == "FLASH_ATTN_MLA") {
    if (!dense_mla) reject(c.sparse ? "the model needs a sparse MLA backend" : "the model does not use MLA");
    need_major({9}, "SM90");
    need_kv({"auto", "float16", "bfloat16"});
    need_block_mult16();
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = true;
  } else if (name == "FLASHMLA") {
    if (!dense_mla) reject(c.sparse ? "the model needs a sparse MLA backend" : "the model does not use MLA");
    need_major({9, 10}, "SM90 or SM100");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"});
    need_block({64});
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = true;
  } else if (name == "FLASHINFER_MLA") {
    if (!dense_mla) reject(c.sparse ? "the model needs a sparse MLA backend" : "the model does not use MLA");
    need_major({10}, "SM100");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"});
    need_block({32, 64});
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = true;
  } else if (name == "TRITON_MLA") {
    if (!dense_mla) reject(c.sparse ? "the model needs a sparse MLA backend" : "the model does not use MLA");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"});
    need_block_mult16();
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = false;  // query_len_support left at SINGLE_ONLY (B.5)
  } else if (name == "CUTLASS_MLA") {
    if (!dense_mla) reject(c.sparse ? "the model needs a sparse MLA backend" : "the model does not use MLA");
    need_major({10}, "SM100");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"});
    need_block({128});
    v.cg_support = CgSupport::uniform_single_token_decode;
    v.spec_as_decode = false;
  } else if (name == "FLASHMLA_SPARSE") {
    if (!c.sparse) reject("the model has no DSA indexer (sparse MLA)");
    need_major({9, 10}, "SM90 or SM100");
    need_kv({"auto", "bfloat16", "fp8_ds_mla", "fp8"});
    need_block({c.v4 ? 256 : 64});
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = true;
  } else if (name == "FLASHINFER_MLA_SPARSE") {
    if (!c.sparse) reject("the model has no DSA indexer (sparse MLA)");
    need_major({10}, "SM100 (in vLLM @9aaf83ef5; later builds add SM90/SM120 variants)");
    need_kv({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"});
    need_block({32, 64, 256});
    v.cg_support = CgSupport::uniform_batch;
    v.spec_as_decode = true;
  } else {
    reject("not modelled by specprobe");
  }
  v.valid = v.reasons.empty();
  return v;
}

std::vector<std::string> priorities(const Ctx& c, const Json& f) {
  const bool sm10x = sm100_family(c);
  if (c.mla) {
    std::vector<std::string> p;
    if (sm10x) {
      p = {"FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"};
      const bool kv_quant = c.kv.find("fp8") != std::string::npos;
      if (kv_quant || (c.q_heads > 0 && c.q_heads <= 16)) {
        p.push_back("FLASHINFER_MLA_SPARSE");
        p.push_back("FLASHMLA_SPARSE");
      } else {
        p.push_back("FLASHMLA_SPARSE");
        p.push_back("FLASHINFER_MLA_SPARSE");
      }
    } else {
      p = {"FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", "FLASHMLA_SPARSE"};
    }
    (void)f;
    return p;
  }
  if (sm10x) return {"FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"};
  return {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"};
}

constexpr std::array<std::string_view, 27> kVllmBackends = {"FLASH_ATTN",
                                                            "FLASH_ATTN_DIFFKV",
                                                            "TRITON_ATTN",
                                                            "ROCM_ATTN",
                                                            "ROCM_AITER_MLA",
                                                            "ROCM_AITER_TRITON_MLA",
                                                            "ROCM_AITER_FA",
                                                            "ROCM_AITER_MLA_SPARSE",
                                                            "XPU_MLA_SPARSE",
                                                            "TORCH_SDPA",
                                                            "FLASHINFER",
                                                            "FLASHINFER_MLA",
                                                            "FLASHINFER_MLA_SPARSE",
                                                            "TRITON_MLA",
                                                            "TRITON_MLA_SPARSE",
                                                            "CUTLASS_MLA",
                                                            "FLASHMLA",
                                                            "FLASHMLA_SPARSE",
                                                            "FLASH_ATTN_MLA",
                                                            "NO_ATTENTION",
                                                            "FLEX_ATTENTION",
                                                            "TREE_ATTN",
                                                            "ROCM_AITER_UNIFIED_ATTN",
                                                            "CPU_ATTN",
                                                            "TURBOQUANT",
                                                            "CUSTOM",
                                                            "TOKENSPEED_MLA"};

// Mode -> (mixed, decode) components: 0 none, 1 piecewise, 2 full.
struct ModePair {
  int mixed, decode;
};
ModePair split_mode(std::string_view m) {
  if (m == "NONE") return {0, 0};
  if (m == "PIECEWISE") return {1, 1};
  if (m == "FULL") return {2, 2};
  if (m == "FULL_DECODE_ONLY") return {0, 2};
  return {1, 2};  // FULL_AND_PIECEWISE
}

}  // namespace

std::string_view to_string(CgSupport s) {
  switch (s) {
    case CgSupport::never:
      return "NEVER";
    case CgSupport::uniform_single_token_decode:
      return "UNIFORM_SINGLE_TOKEN_DECODE";
    case CgSupport::uniform_batch:
      return "UNIFORM_BATCH";
    case CgSupport::always:
      return "ALWAYS";
  }
  return "NEVER";
}

std::vector<BackendVerdict> vllm_backend_candidates(const Json& facts) {
  const Ctx c = read_ctx(facts);
  std::vector<BackendVerdict> out;
  for (const auto& name : priorities(c, facts)) out.push_back(validate(c, name));
  return out;
}

BackendVerdict vllm_validate_backend(const Json& facts, const std::string& name) {
  return validate(read_ctx(facts), name);
}

bool vllm_backend_known(const std::string& name) {
  return std::find(kVllmBackends.begin(), kVllmBackends.end(), name) != kVllmBackends.end();
}

void derive_vllm_attention(Json& facts) {
  const Ctx c = read_ctx(facts);
  const auto cands = vllm_backend_candidates(facts);
  Json valid = Json::array();
  for (const auto& b : cands)
    if (b.valid) valid.push_back(b.name);
  facts["attention"]["candidates"] = valid;
  Json all = Json::array();
  for (const auto& b : cands) all.push_back(b.name);
  facts["attention"]["offered"] = all;

  const auto requested = fact_string(facts, "attention.effective_request");
  BackendVerdict sel;
  if (requested && !requested->empty()) {
    sel = validate(c, *requested);
    facts["attention"]["requested_known"] = vllm_backend_known(*requested);
    facts["attention"]["requested_valid"] = sel.valid;
    facts["attention"]["invalid_reasons"] = sel.reasons;
    facts["attention"]["selected_by"] = "requested";
  } else {
    for (const char* key : {"requested_known", "requested_valid", "invalid_reasons"}) facts["attention"].erase(key);
    facts["attention"]["selected_by"] = "auto";
    auto it = std::find_if(cands.begin(), cands.end(), [](const auto& b) { return b.valid; });
    if (it != cands.end()) sel = *it;
  }
  facts["attention"]["selected"] = sel.name.empty() ? Json(nullptr) : Json(sel.name);
  facts["attention"]["cg_support"] = sel.name.empty() ? Json(nullptr) : Json(to_string(sel.cg_support));
  facts["attention"]["spec_as_decode"] = sel.spec_as_decode;

  // The drafter's backend. speculative-config attention_backend, when set, wins. Otherwise vLLM
  // >= 0.21.0 never inherits --attention-backend and auto-selects for the draft layers
  // (v0.21.0 vllm/v1/spec_decode/llm_base_proposer.py: "Never inherit the attention backend from
  // base"; vllm#44879), while earlier releases built the draft layers with the target's attention
  // config and so ran the requested backend. Unknown version: the newest release's behaviour.
  BackendVerdict draft = sel;
  const bool spec = fact_bool(facts, "spec.enabled").value_or(false);
  if (spec) {
    const auto version = fact_string(facts, "engine.version");
    const bool inherits = version && version_satisfies(*version, "<0.21.0");
    std::string source;
    if (auto d = fact_string(facts, "spec.attention_backend"); d && !d->empty() && *d != "auto") {
      std::string up = *d;
      for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      draft = validate(c, up);
      source = "speculative-config";
    } else if (requested && !requested->empty() && inherits) {
      draft = sel;
      source = "inherited";
    } else {
      auto it = std::find_if(cands.begin(), cands.end(), [](const auto& b) { return b.valid; });
      if (it != cands.end()) draft = *it;
      source = "auto";
    }
    facts["attention"]["drafter"] = draft.name.empty() ? Json(nullptr) : Json(draft.name);
    facts["attention"]["drafter_source"] = source;
  } else {
    facts["attention"].erase("drafter");
    facts["attention"].erase("drafter_source");
  }

  // CUDA-graph mode resolution: minimum declared support over all attention groups.
  const bool eager = fact_bool(facts, "serve.enforce_eager").value_or(false);
  std::string requested_mode = fact_string(facts, "serve.cudagraph_mode").value_or("");
  for (auto& ch : requested_mode) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (requested_mode.empty()) requested_mode = eager ? "NONE" : "FULL_AND_PIECEWISE";
  if (eager) requested_mode = "NONE";
  Json& cg = facts["cudagraph"];
  cg["requested"] = requested_mode;
  if (sel.name.empty()) {
    cg["resolved"] = nullptr;
    cg["full_decode"] = nullptr;
    return;
  }
  CgSupport min_support = sel.cg_support;
  Json by_group = Json::object();
  by_group["target"] = to_string(sel.cg_support);
  if (spec && !draft.name.empty()) {
    by_group["drafter"] = to_string(draft.cg_support);
    min_support = std::min(min_support, draft.cg_support);
  }
  if (fact_bool(facts, "model.dsa.present").value_or(false)) {
    by_group["indexer"] = to_string(CgSupport::uniform_batch);
    min_support = std::min(min_support, CgSupport::uniform_batch);
  }
  cg["support_by_group"] = by_group;
  cg["min_support"] = to_string(min_support);
  const int64_t k = fact_int(facts, "spec.k").value_or(0);
  ModePair m = split_mode(requested_mode);
  std::string reason;
  if (m.mixed == 2 && min_support != CgSupport::always) {
    m.mixed = 1;  // FULL -> FULL_AND_PIECEWISE
    reason = fmt::format("mixed batches need ALWAYS; minimum support is {}", to_string(min_support));
  }
  if (m.decode == 2 && min_support == CgSupport::never) {
    m.decode = 1;
    reason = "an attention group declares NEVER";
  }
  if (m.decode == 2 && spec && k >= 1 && min_support < CgSupport::uniform_batch) {
    m.decode = 1;
    m.mixed = std::max(m.mixed, 1);
    reason = fmt::format("FULL decode graphs with spec-decode need UNIFORM_BATCH; minimum support is {}",
                         to_string(min_support));
  }
  std::string resolved;
  if (m.mixed == 0 && m.decode == 0)
    resolved = "NONE";
  else if (m.mixed == 1 && m.decode == 1)
    resolved = "PIECEWISE";
  else if (m.mixed == 2 && m.decode == 2)
    resolved = "FULL";
  else if (m.mixed == 0 && m.decode == 2)
    resolved = "FULL_DECODE_ONLY";
  else if (m.mixed == 1 && m.decode == 2)
    resolved = "FULL_AND_PIECEWISE";
  else
    resolved = "PIECEWISE";
  cg["resolved"] = resolved;
  cg["downgraded"] = resolved != requested_mode;
  cg["downgrade_reason"] = reason.empty() ? Json(nullptr) : Json(reason);
  cg["full_decode"] = m.decode == 2;
}

}  // namespace specprobe
