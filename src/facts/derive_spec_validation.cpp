// vLLM speculative-config validation as facts (see derive_spec_validation.hpp). Sources:
// vllm/config/speculative.py (B.2: k vs n_predict L762-777, _verify_and_get_draft_tp,
// _maybe_override_draft_max_model_len, _verify_args), vllm/config/vllm.py L898-911 (async
// scheduling), SpeculativeConfig.max_num_new_slots_for_drafting (draft slots), PR #29036 (SP).
#include "facts/derive_spec_validation.hpp"

#include <algorithm>
#include <numeric>

#include "facts/backends.hpp"

namespace specprobe {
namespace {

bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

bool one_of(const std::string& v, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// Extra KV slots a request reserves for drafting, per method (max_num_new_slots_for_drafting
// docstring): EAGLE/EAGLE3/MTP/ngram 0, P-EAGLE (parallel drafting) k-1, DFlash k, DSpark k-1,
// draft model 1.
int64_t draft_slots(const std::string& method, int64_t k, bool parallel) {
  if (method == "dflash") return k;
  if (method == "dspark") return std::max<int64_t>(k - 1, 0);
  if (method == "draft_model") return 1;
  if ((method == "eagle" || method == "eagle3") && parallel) return std::max<int64_t>(k - 1, 0);
  return 0;
}

void derive_triton(Json& f) {
  const int64_t k = fact_int(f, "spec.k").value_or(0);
  Json& t = f["triton"];
  t = Json::object();
  t["next_n_pow2"] = pow2(k + 1);
  if (auto g = fact_int(f, "model.gqa_ratio"); g && *g > 0) {
    t["verify_rows"] = (k + 1) * *g;
    t["verify_rows_pow2"] = pow2((k + 1) * *g);
  } else {
    t["verify_rows"] = nullptr;
    t["verify_rows_pow2"] = nullptr;
  }
  // SGLang: with topk 1 the draft tokens are num_steps + 1 (server_args), else as given.
  std::optional<int64_t> draft = fact_int(f, "spec.num_draft_tokens");
  if (fact_int(f, "spec.topk").value_or(1) == 1)
    if (auto s = fact_int(f, "spec.num_steps")) draft = *s + 1;
  t["num_draft_tokens"] = draft ? Json(*draft) : Json(nullptr);
  t["num_draft_tokens_pow2"] = draft ? Json(pow2(*draft)) : Json(nullptr);
}

}  // namespace

void derive_spec_validation(Json& f) {
  derive_triton(f);
  if (fact_string(f, "engine.name").value_or("vllm") != "vllm" || !fact_bool(f, "spec.enabled").value_or(false)) {
    f.erase("specval");
    return;
  }
  Json& v = f["specval"];
  v = Json::object();
  const std::string method = fact_string(f, "spec.method").value_or("");
  const auto k = fact_int(f, "spec.k");
  const int64_t tp = std::max<int64_t>(fact_int(f, "serve.tp").value_or(1), 1);

  // k vs n_predict: only MTP's n_predict is known before the draft checkpoint is read.
  std::optional<int64_t> n_predict;
  if (method == "mtp")
    if (auto d = fact_int(f, "model.mtp_depth"); d && *d > 0) n_predict = *d;
  v["n_predict"] = n_predict ? Json(*n_predict) : Json(nullptr);
  if (n_predict && k)
    v["k_divisible"] = *k <= *n_predict || *k % *n_predict == 0;
  else
    v["k_divisible"] = nullptr;

  const auto draft_tp = fact_int(f, "spec.draft_tp");
  v["draft_tp_ok"] = !draft_tp || *draft_tp == 1 || *draft_tp == tp;

  const Json* cfg = find_fact(f, "spec.config");
  v["tp_key_given"] = cfg && cfg->is_object() && cfg->contains("tensor_parallel_size");

  const bool needs = one_of(method, {"eagle", "eagle3", "draft_model", "medusa", "mlp_speculator", "dflash",
                                     "custom_class", "extract_hidden_states"});
  v["needs_draft_model"] = needs;
  const auto draft = fact_string(f, "spec.draft_model");
  v["draft_model_missing"] = needs && (!draft || draft->empty());

  const auto spec_len = fact_int(f, "spec.max_model_len");
  const auto target_len = fact_int(f, "serve.max_model_len");
  if (spec_len && target_len)
    v["max_model_len_ok"] = *spec_len <= *target_len;
  else
    v["max_model_len_ok"] = nullptr;

  // The drafter's own backend name (speculative-config attention_backend), checked against the enum.
  std::string draft_backend = fact_string(f, "spec.attention_backend").value_or("");
  for (auto& c : draft_backend) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!draft_backend.empty() && draft_backend != "AUTO") {
    v["draft_backend"] = draft_backend;
    v["draft_backend_known"] = vllm_backend_known(draft_backend);
  }

  // Scheduler budget (vllm#50708). Defaults from EngineArgs.get_batch_defaults for `vllm serve`:
  // >= 70 GiB GPUs other than A100 get 1024 sequences / 8192 tokens, others 256 / 2048.
  const int64_t slots = draft_slots(method, k.value_or(0), fact_bool(f, "spec.parallel_drafting").value_or(false));
  v["draft_slots"] = slots;
  const auto mem = fact_int(f, "gpu.memory_bytes");
  const bool a100 = fact_string(f, "gpu.name").value_or("").find("A100") != std::string::npos;
  std::optional<int64_t> def_seqs, def_tokens;
  if (mem) {
    const bool big = *mem >= 70LL * 1024 * 1024 * 1024 && !a100;
    def_seqs = big ? 1024 : 256;
    def_tokens = big ? 8192 : 2048;
  }
  const auto seqs_given = fact_int(f, "serve.max_num_seqs");
  const auto tokens_given = fact_int(f, "serve.max_num_batched_tokens");
  const auto seqs = seqs_given ? seqs_given : def_seqs;
  const auto tokens = tokens_given ? tokens_given : def_tokens;
  v["max_num_seqs"] = seqs ? Json(*seqs) : Json(nullptr);
  v["max_num_batched_tokens"] = tokens ? Json(*tokens) : Json(nullptr);
  v["scheduler_defaults"] = seqs_given && tokens_given ? "given"
                            : seqs_given               ? "tokens"
                            : tokens_given             ? "seqs"
                                                       : "both";
  v["scheduled_budget"] = seqs && tokens ? Json(*tokens - slots * *seqs) : Json(nullptr);

  // Sequence parallelism (PR #29036): FULL decode capture sizes must be multiples of k+1 and of TP.
  const Json* sp = find_fact(f, "serve.compilation_config.pass_config.enable_sp");
  v["sp_enabled"] = sp && sp->is_boolean() && sp->get<bool>();
  if (k) {
    const int64_t n = *k + 1;
    v["sp_divisible"] = n % tp == 0 || tp % n == 0;
    v["sp_lcm"] = std::lcm(n, tp);
  }

  // Explicit async scheduling accepts only EAGLE-type, MTP, draft_model and ngram_gpu drafters.
  v["async_ok"] = method.empty() || one_of(method, {"eagle", "eagle3", "extract_hidden_states", "mtp", "dflash",
                                                    "dspark", "draft_model", "ngram_gpu"});

  // ngram window: both unset -> 5/5; one set -> the other copies it.
  if (method == "ngram") {
    auto lo = fact_int(f, "spec.prompt_lookup_min");
    auto hi = fact_int(f, "spec.prompt_lookup_max");
    if (!lo && !hi)
      lo = hi = 5;
    else if (!lo)
      lo = hi;
    else if (!hi)
      hi = lo;
    v["prompt_lookup_min"] = *lo;
    v["prompt_lookup_max"] = *hi;
    v["prompt_lookup_ok"] = *lo <= *hi;
  }
}

}  // namespace specprobe
