// The what-if sweep never says more than it knows (issue 36): each cell says how it is known
// (MatrixCell::known_by), a measurement taken at one cell's shape never decides another cell,
// and the plan's row and the "largest working k" come from the same cells for every engine.
// The contradictions quoted in the issue, each as a regression test on the sweep itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "probes/plan_probes.hpp"
#include "probes/probe_common.hpp"
#include "probes/stack_probes.hpp"
#include "rules/catalog.hpp"
#include "rules/sweep.hpp"
#include "support/fixture_plan.hpp"

using namespace specprobe;

namespace {

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = [] {
    auto r = load_catalog();
    if (!r) throw std::runtime_error(r.error().str());
    return *r;
  }();
  return *c;
}

// The inputs expanded as `--gpu NAME` does (gpu.* from the table), and their derivation.
std::pair<Json, Json> evidence_plan(Json inputs) {
  Json expanded = inputs;
  if (auto name = fact_string(expanded, "gpu.declared"))
    if (auto g = declared_gpu_facts(*name)) {
      Json gpu = *g;
      gpu.merge_patch(expanded["gpu"]);
      expanded["gpu"] = gpu;
    }
  Json derived = expanded;
  derive_facts(derived);
  return {expanded, derived};
}

const MatrixCell& cell(const SupportMatrix& m, int k, const std::string& backend, const std::string& kv) {
  for (const auto& c : m.cells)
    if (c.k == k && c.backend == backend && c.kv_cache_dtype == kv) return c;
  throw std::runtime_error("no cell k=" + std::to_string(k) + " " + backend + "/" + kv);
}

bool known_by(const MatrixCell& c, const std::string& kind) {
  return std::find(c.known_by.begin(), c.known_by.end(), kind) != c.known_by.end();
}

// A Llama-3.1-8B-shaped model (GQA 4) as the model reader writes it, on a declared H100, auto KV
// cache, for ENGINE ({"name", ...}); each test adds its speculative config and probe answers.
Json llama_h100_inputs(const Json& engine) {
  return {{"engine", engine},
          {"model",
           {{"architecture", "LlamaForCausalLM"},
            {"num_attention_heads", 32},
            {"num_kv_heads", 8},
            {"head_dim", 128},
            {"num_hidden_layers", 32},
            {"hybrid", false}}},
          {"gpu", {{"declared", "H100"}}},
          {"serve", {{"kv_cache_dtype", "auto"}}}};
}

// DeepSeek V3.2-style DSA plan on an H200 with a vLLM build that hands next_n to the kernel.
Json dsa_inputs() {
  return {{"engine", {{"name", "vllm"}}},
          {"model",
           {{"architecture", "DeepseekV32ForCausalLM"},
            {"mla", true},
            {"num_attention_heads", 128},
            {"num_kv_heads", 128},
            {"dsa", {{"present", true}, {"index_n_heads", 64}, {"index_head_dim", 128}, {"index_topk", 2048}}}}},
          {"gpu", {{"declared", "H200"}}},
          {"serve", {{"tp", 8}, {"kv_cache_dtype", "auto"}}},
          {"spec", {{"enabled", true}, {"method", "mtp"}, {"num_speculative_tokens", 2}}},
          {"lib", {{"vllm", {{"version", "0.21.1rc1.dev202+g3424fba5"}}}, {"deep_gemm", {{"version", "2.6.1"}}}}}};
}

}  // namespace

TEST_CASE("the installed DeepGEMM's answer decides only the k whose next_n it was asked", "[sweep][evidence]") {
  // The case: DeepGEMM passes next_n 1 and 2 and refuses 3 on this GPU; next_n 4 and up
  // were not asked. k=2 (next_n 3) fails known by the stack probe; k=1 works known by it; k=3
  // is never "works" on the strength of a neighbour's answer.
  Json inputs = dsa_inputs();
  // As the stack probe writes it (probes/stack_probes.cpp stack_facts_patch): facts and answers.
  const Json result = {{"library", "deep_gemm"},
                       {"source", "adapter"},
                       {"status", "fail"},
                       {"version", "2.6.1"},
                       {"device", {{"sm", 90}, {"name", "NVIDIA H200"}}},
                       {"cases",
                        {{{"key", "next_n.1"}, {"name", "next_n=1"}, {"status", "pass"}},
                         {{"key", "next_n.2"}, {"name", "next_n=2"}, {"status", "pass"}},
                         {{"key", "next_n.3"},
                          {"name", "next_n=3"},
                          {"status", "fail"},
                          {"error_text", "Assertion error: next_n == 1 or next_n == 2"}}}}};
  inputs["stack"] = probes::stack_facts_patch({result}, "")["stack"];
  auto [in, derived] = evidence_plan(inputs);
  const SupportMatrix m = sweep_support_matrix(catalog(), in, derived);
  const std::string b = fact_string(derived, "attention.selected").value_or("");
  REQUIRE_FALSE(b.empty());
  const MatrixCell& k1 = cell(m, 1, b, "auto");
  const MatrixCell& k2 = cell(m, 2, b, "auto");
  const MatrixCell& k3 = cell(m, 3, b, "auto");
  INFO("k1 " << k1.verdict << " k2 " << k2.verdict << " k3 " << k3.verdict);
  CHECK(k1.verdict == "works");
  CHECK(known_by(k1, "stack"));
  CHECK(k2.verdict == "fails");
  CHECK(known_by(k2, "stack"));
  CHECK(std::any_of(k2.evidence.begin(), k2.evidence.end(), [](const std::string& e) {
    return e.find("DeepGEMM 2.6.1 refused next_n=3") != std::string::npos;
  }));
  CHECK(k3.verdict != "works");
  CHECK_FALSE(known_by(k3, "stack"));  // next_n 4 was never asked
  CHECK(m.max_working_k == 1);
  CHECK(std::find(m.working_k.begin(), m.working_k.end(), 3) == m.working_k.end());
}

TEST_CASE("a probe measured at the plan's shape decides only the plan's cell", "[sweep][evidence]") {
  // The spec-verify probe ran the plan's k=2 with the plan's KV dtype and failed: that is the
  // plan's cell's evidence, not k=1's nor the fp8 row's.
  Json inputs = llama_h100_inputs({{"name", "vllm"}, {"version", "0.15.1"}});
  inputs["spec"] = {{"enabled", true}, {"method", "ngram"}, {"num_speculative_tokens", 2}};
  // As the probes write it (probes/kinds.hpp record): its facts and its answer record.
  inputs["probe"] = probes::probe_facts_patch(
      {probes::make_result({{"probe", "spec_verify"}, {"k", 2}}, probes::kFail, "max error 3.2")})["probe"];
  auto [in, derived] = evidence_plan(inputs);
  const SupportMatrix m = sweep_support_matrix(catalog(), in, derived);
  const std::string b = fact_string(derived, "attention.selected").value_or("");
  REQUIRE_FALSE(b.empty());
  const MatrixCell& own = cell(m, 2, b, "auto");
  CHECK(known_by(own, "probe"));
  CHECK(std::find(own.warnings.begin(), own.warnings.end(), "SP4004") != own.warnings.end());
  for (const auto& [k, kv] : {std::pair{1, std::string("auto")}, std::pair{2, std::string("fp8")}}) {
    const MatrixCell& other = cell(m, k, b, kv);
    INFO("k=" << k << " kv " << kv);
    CHECK_FALSE(known_by(other, "probe"));
    CHECK(std::find(other.warnings.begin(), other.warnings.end(), "SP4004") == other.warnings.end());
  }
}

TEST_CASE("the installed engine's answer for a cell decides that cell only, through its answer record",
          "[sweep][evidence]") {
  // The engine check asked the plan (k=2) and one cell (k=3, auto backend and KV): it accepted
  // the plan and refused k=3. As the engine check writes it (engine_facts_patch): the k=3 cell
  // gets the refusal (SP4100 fails there, known by the engine), k=1 was not asked (no engine
  // answer: SP4100 does not apply), the plan's cell keeps the plan's answer.
  Json inputs = llama_h100_inputs({{"name", "vllm"}, {"version", "0.33.0"}});
  inputs["spec"] = {{"enabled", true}, {"method", "ngram"}, {"num_speculative_tokens", 2}};
  auto [pre_in, pre_derived] = evidence_plan(inputs);
  const std::string b = fact_string(pre_derived, "attention.selected").value_or("");
  REQUIRE_FALSE(b.empty());
  const std::string k3 = engine_cell_id(3, b, "auto");
  const Json record = {{"engine", "vllm"},
                       {"version", "0.33.0"},
                       {"status", "ok"},
                       {"plan", {{"status", "ok"}, {"facts", {{"attention_backend", b}, {"kv_cache_dtype", "auto"}}}}},
                       {"cells",
                        {{{"id", k3},
                          {"status", "refused"},
                          {"stage", "config"},
                          {"message", "num_speculative_tokens 3 is not supported here"},
                          {"missing", nullptr},
                          {"raised_at", "vllm/config/speculative.py:1"},
                          {"facts", Json::object()}}}}};
  inputs.merge_patch(probes::engine_facts_patch(record, {}));  // as the pipeline merges it (stages.cpp)
  auto [in, derived] = evidence_plan(inputs);
  const SupportMatrix m = sweep_support_matrix(catalog(), in, derived);
  auto has = [](const std::vector<std::string>& v, const char* id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  const MatrixCell& refused = cell(m, 3, b, "auto");
  INFO("k3 " << refused.verdict);
  CHECK(refused.verdict == "fails");
  CHECK(has(refused.errors, "SP4100"));
  CHECK(known_by(refused, "engine"));
  CHECK(std::any_of(refused.evidence.begin(), refused.evidence.end(), [](const std::string& e) {
    return e.find("num_speculative_tokens 3 is not supported here") != std::string::npos;
  }));
  const MatrixCell& unasked = cell(m, 1, b, "auto");
  CHECK_FALSE(has(unasked.errors, "SP4100"));
  CHECK_FALSE(known_by(unasked, "engine"));
  const MatrixCell& plan = cell(m, 2, b, "auto");
  CHECK(known_by(plan, "engine"));
  CHECK_FALSE(has(plan.errors, "SP4100"));
}

TEST_CASE("an SGLang plan's row is its working k and never none", "[sweep][evidence]") {
  // SGLang's sweep has no backend variants: its cells carried backend "" while the plan's row,
  // and with it "working k", "largest" and the text table's row, was looked up under the plan's
  // backend name, and came out empty.
  Json inputs = llama_h100_inputs({{"name", "sglang"}});
  inputs["spec"] = {{"enabled", true}, {"method", "ngram"}, {"num_steps", 3}};
  auto [in, derived] = evidence_plan(inputs);
  const SupportMatrix m = sweep_support_matrix(catalog(), in, derived);
  REQUIRE(m.backends.size() == 1);
  std::vector<int> row_works;
  std::string cells;
  for (const auto& c : m.cells) {
    cells += " k=" + std::to_string(c.k) + "/" + c.kv_cache_dtype + ":" + c.verdict;
    for (const auto& u : c.undecided) cells += "," + u;
    for (const auto& e : c.errors) cells += ",x" + e;
    CHECK(c.backend == m.backends[0]);  // the row's cells carry its name (the text table's rows were blank)
    if (c.kv_cache_dtype == "auto" && c.verdict == "works") row_works.push_back(c.k);
  }
  INFO(cells);
  REQUIRE_FALSE(row_works.empty());
  CHECK(m.working_k == row_works);
  CHECK(m.max_working_k == row_works.back());
}

TEST_CASE("a cell whose plan cannot be decided is unknown and says why - decided cells are known by the rules",
          "[sweep][evidence]") {
  Json inputs = {{"engine", {{"name", "vllm"}}},
                 {"gpu", {{"declared", "H100"}}},
                 {"serve", {{"kv_cache_dtype", "auto"}}},
                 {"spec", {{"enabled", true}, {"method", "ngram"}, {"num_speculative_tokens", 2}}}};
  auto [in, derived] = evidence_plan(inputs);  // no model
  const SupportMatrix m = sweep_support_matrix(catalog(), in, derived);
  REQUIRE_FALSE(m.cells.empty());
  for (const auto& c : m.cells) {
    INFO("k=" << c.k << " " << c.backend << "/" << c.kv_cache_dtype << " " << c.verdict);
    if (c.verdict == "unknown") {
      CHECK(c.known_by.empty());
      CHECK(std::find(c.undecided.begin(), c.undecided.end(), "model.architecture") != c.undecided.end());
    } else {
      CHECK(known_by(c, "rules"));
    }
  }
  CHECK_FALSE(m.max_working_k.has_value());
}

TEST_CASE(
    "matrix: cells that take the plan's answer for rules reading nothing they change are the cells evaluated in full",
    "[matrix][sweep]") {
  size_t compared = 0;
  for (const auto& [label, inputs] : specprobe::testing::neighbour_plans()) {
    const auto [expanded, derived] = evidence_plan(inputs);
    INFO(label);
    SweepOptions full;
    full.reuse_plan_answers = false;
    SweepOptions reused;
    reused.threads = 2;
    const SupportMatrix a = sweep_support_matrix(catalog(), expanded, derived, full);
    // The plan's answers evaluated by the sweep, or read from the plan's own results.
    const std::vector<RuleResult> results = evaluate_catalog(catalog(), derived, {}, "serve.yaml");
    SweepOptions given = reused;
    given.plan_results = &results;
    const SupportMatrix b = sweep_support_matrix(catalog(), expanded, derived, reused);
    const SupportMatrix c = sweep_support_matrix(catalog(), expanded, derived, given);
    REQUIRE(a.cells.size() == c.cells.size());
    for (size_t i = 0; i < a.cells.size(); ++i) {
      INFO("cell k=" << a.cells[i].k << " " << a.cells[i].backend << "/" << a.cells[i].kv_cache_dtype);
      CHECK(std::tie(a.cells[i].verdict, a.cells[i].errors, a.cells[i].risks, a.cells[i].warnings,
                     a.cells[i].undecided) == std::tie(c.cells[i].verdict, c.cells[i].errors, c.cells[i].risks,
                                                       c.cells[i].warnings, c.cells[i].undecided));
    }
    REQUIRE(a.cells.size() == b.cells.size());
    for (size_t i = 0; i < a.cells.size(); ++i) {
      const MatrixCell& x = a.cells[i];
      const MatrixCell& y = b.cells[i];
      INFO("cell k=" << x.k << " " << x.backend << "/" << x.kv_cache_dtype);
      CHECK(std::tie(x.k, x.backend, x.kv_cache_dtype, x.verdict, x.indexer) ==
            std::tie(y.k, y.backend, y.kv_cache_dtype, y.verdict, y.indexer));
      CHECK(x.errors == y.errors);
      CHECK(x.risks == y.risks);
      CHECK(x.warnings == y.warnings);
      CHECK(x.undecided == y.undecided);
      CHECK(x.known_by == y.known_by);
      CHECK(x.evidence == y.evidence);
      ++compared;
    }
    CHECK(a.working_k == b.working_k);
    CHECK(a.alternative_backends == b.alternative_backends);
    CHECK(a.alternative_kv_cache_dtypes == b.alternative_kv_cache_dtypes);
  }
  CHECK(compared > 300);
}
