// libFuzzer harness: what a stack-probe adapter (probes/stack_<library>.py) prints, as the runner
// hands it over (one JSON value), through validate_stack_result for every library's spec and then
// stack_facts_patch. Output from the child is untrusted: anything malformed must become an
// "error" record, never an exception or a crash.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "probes/stack_probes.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_stack_result_one) {
  namespace p = specprobe::probes;
  using specprobe::Json;
  static const std::vector<Json> specs = [] {
    const Json facts = Json::parse(R"({
      "spec": {"next_n": 4}, "model": {"mla": false, "num_attention_heads": 32, "num_kv_heads": 8,
      "head_dim": 128, "gqa_ratio": 4, "dsa": {"index_n_heads": 64, "index_head_dim": 128}},
      "attention": {"selected": "FLASHINFER"}, "gpu": {"arch_family": "sm90"}, "kv": {"fp8": false}})");
    p::StackProbeOptions opts;
    opts.libraries = p::stack_libraries();
    return p::stack_probe_specs(facts, opts);
  }();
  const Json raw = Json::parse(data, data + size, nullptr, false);
  if (raw.is_discarded()) return 0;
  std::vector<Json> results;
  for (const Json& spec : specs) {
    Json r = p::validate_stack_result(raw, spec);
    if (!r.is_object() || !r.contains("status")) SPECPROBE_FUZZ_FAIL("property violated");
    results.push_back(std::move(r));
  }
  const Json patch = p::stack_facts_patch(results, "python3");
  (void)patch.dump();
  return 0;
}
