// libFuzzer harness: a rule file (YAML) through parse_rule (YAML -> JSON with core-schema typing,
// field validation, JSON Logic validation, placeholder checks) and, when it loads, evaluate_rule
// against a small facts document (applicability, requires, condition, params, message template).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "rules/evaluate.hpp"
#include "rules/rule.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_rule_file_one) {
  using specprobe::Json;
  static const Json facts = Json::parse(R"({
    "engine": {"name": "vllm", "version": "0.11.1rc2.dev7+g3424fba5"},
    "spec": {"enabled": true, "method": "mtp", "k": 3, "next_n": 4},
    "serve": {"tp": 8, "kv_cache_dtype": "fp8", "cudagraph_mode": null},
    "model": {"model_type": "deepseek_v32", "mla": true, "num_kv_heads": 1},
    "gpu": {"sm": 90, "name": "NVIDIA H100 80GB HBM3"},
    "quant": {"ignore_unmatched_count": 2, "ignore_unmatched": [{"entry": "re:.*mtp.*"}]},
    "checkpoint": {"path": "/ckpt"}
  })");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rule = specprobe::parse_rule(text, "rules/1xxx/SP1999-fuzz.yaml");
  if (!rule) {
    if (rule.error().message.empty()) SPECPROBE_FUZZ_FAIL("property violated");
    return 0;
  }
  auto result = specprobe::evaluate_rule(*rule, facts, {}, "plan.yaml");
  (void)result;
  return 0;
}
