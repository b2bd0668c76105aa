// What-if sweep (see sweep.hpp).
#include "rules/sweep.hpp"

#include <algorithm>

#include "facts/backends.hpp"
#include "facts/derive.hpp"
#include "rules/advisory.hpp"
#include "rules/engine.hpp"

namespace specprobe {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Facts the rules never read but that are large (checkpoint tensor lists): dropped from the
// variants so that each copy stays small.
Json slim(const Json& facts) {
  Json f = facts;
  if (f.contains("checkpoint") && f["checkpoint"].is_object()) f["checkpoint"].erase("tensors");
  return f;
}

// One variant: the plan's inputs with k, the backend and the KV-cache dtype replaced as a user
// would write them, then derived like the plan itself.
MatrixCell evaluate_cell(const Catalog& catalog, Json facts, int k, const std::string& backend,
                         const std::string& kv, const std::string& method, const std::set<std::string>& ignored) {
  MatrixCell cell;
  cell.k = k;
  cell.backend = backend;
  cell.kv_cache_dtype = kv;
  Json& spec = facts["spec"];
  spec["enabled"] = k > 0;
  if (k > 0 && !spec.contains("method")) spec["method"] = method;
  if (fact_string(facts, "engine.name").value_or("vllm") == "sglang") {
    // A chain of k draft steps verifies k + 1 tokens.
    spec["num_steps"] = k;
    spec["num_draft_tokens"] = k + 1;
  } else {
    spec["num_speculative_tokens"] = k;
  }
  // A variant names the backend for the whole plan: target and drafter (speculative-config
  // attention_backend), since the drafter otherwise auto-selects its own (vllm#44879).
  if (!backend.empty()) {
    facts["attention"]["requested"] = backend;
    facts["attention"]["requested_source"] = "attention-backend";
    if (k > 0) spec["attention_backend"] = backend;
  }
  facts["serve"]["kv_cache_dtype"] = kv;
  derive_facts(facts);
  bool unknown = false, fails = false;
  for (const auto& r : catalog.rules) {
    if (r.deprecated || ignored.count(r.id)) continue;
    const ResultStatus s = rule_status(r, facts);
    if (s == ResultStatus::fail) {
      if (r.severity == Severity::error) {
        fails = true;
        cell.errors.push_back(r.id);
      } else if (r.severity == Severity::warning) {
        cell.warnings.push_back(r.id);
      }
    } else if (s == ResultStatus::error) {
      unknown = true;
    }
  }
  for (const auto& a : catalog.advisories) {
    if (ignored.count(a.id)) continue;
    Severity sev = a.severity;
    const ResultStatus s = advisory_status(a, facts, &sev);
    if (s == ResultStatus::fail) {
      if (sev == Severity::error) {
        fails = true;
        cell.errors.push_back(a.id);
      } else if (sev == Severity::warning) {
        cell.warnings.push_back(a.id);
      }
    }
    // An advisory that cannot be decided (a trigger fact unknown) does not make the cell unknown:
    // the rules on the cell's path decide that; the advisory's own result says it.
  }
  if (const Json* m = find_fact(facts, "dsa.indexer_mode"); m && m->is_string()) cell.indexer = m->get<std::string>();
  cell.verdict = fails ? "fails" : unknown ? "unknown" : "works";
  return cell;
}

}  // namespace

SupportMatrix sweep_support_matrix(const Catalog& catalog, const Json& input_facts, const Json& plan_facts,
                                   const SweepOptions& options, const std::set<std::string>& ignored) {
  SupportMatrix m;
  const Json inputs = slim(input_facts);
  const Json base = slim(plan_facts);
  // Backend variants come from the vLLM selector emulation, which is CUDA's; on other GPUs (and
  // for SGLang) the matrix varies k and the KV dtype for the plan's own backend.
  const bool vllm = fact_string(base, "engine.name").value_or("vllm") == "vllm" &&
                    fact_string(base, "gpu.vendor").value_or("nvidia") == "nvidia";
  const std::string requested_backend = fact_string(base, "attention.selected").value_or("");
  const std::string requested_kv = fact_string(base, "serve.kv_cache_dtype").value_or("auto");
  const int requested_k = static_cast<int>(fact_int(base, "spec.k").value_or(0));
  std::string method = fact_string(base, "spec.method").value_or("");
  if (method.empty()) method = fact_int(base, "model.mtp_depth").value_or(0) > 0 ? "mtp" : "draft_model";

  for (int k = 0; k <= options.max_k; ++k) m.ks.push_back(k);
  // Backends the engine offers for this model on this GPU (valid with some kv dtype), in priority order.
  if (vllm) {
    Json probe = base;
    for (const std::string kv : {"auto", "fp8"}) {
      probe["serve"]["kv_cache_dtype"] = kv;
      for (const auto& b : vllm_backend_candidates(probe))
        if (b.valid && !contains(m.backends, b.name)) m.backends.push_back(b.name);
    }
    if (requested_kv.rfind("turboquant_", 0) == 0 && !contains(m.backends, "TURBOQUANT")) m.backends.push_back("TURBOQUANT");
    if (!requested_backend.empty() && !contains(m.backends, requested_backend)) m.backends.insert(m.backends.begin(), requested_backend);
  } else {
    m.backends.push_back(requested_backend);
  }
  m.kv_cache_dtypes = {"auto", "fp8"};
  if (!contains(m.kv_cache_dtypes, requested_kv)) m.kv_cache_dtypes.push_back(requested_kv);

  for (int k : m.ks)
    for (const auto& b : m.backends)
      for (const auto& kv : m.kv_cache_dtypes)
        m.cells.push_back(evaluate_cell(catalog, inputs, k, vllm ? b : std::string(), kv, method, ignored));

  auto cell = [&](int k, const std::string& b, const std::string& kv) -> const MatrixCell* {
    for (const auto& c : m.cells)
      if (c.k == k && c.backend == b && c.kv_cache_dtype == kv) return &c;
    return nullptr;
  };
  for (int k : m.ks) {
    const MatrixCell* c = cell(k, requested_backend, requested_kv);
    if (c && c->verdict == "works") {
      m.working_k.push_back(k);
      m.max_working_k = k;
    }
  }
  const MatrixCell* req = cell(requested_k, requested_backend, requested_kv);
  if (req && req->verdict != "works") {
    for (const auto& b : m.backends)
      if (b != requested_backend)
        if (const MatrixCell* c = cell(requested_k, b, requested_kv); c && c->verdict == "works")
          m.alternative_backends.push_back(b);
    for (const auto& kv : m.kv_cache_dtypes)
      if (kv != requested_kv)
        if (const MatrixCell* c = cell(requested_k, requested_backend, kv); c && c->verdict == "works")
          m.alternative_kv_cache_dtypes.push_back(kv);
  }
  return m;
}

}  // namespace specprobe
