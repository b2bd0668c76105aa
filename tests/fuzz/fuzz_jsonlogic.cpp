// libFuzzer harness: a JSON Logic expression and a facts document. Input: the logic (JSON), a
// "\n----\n" line, then the data (JSON; absent -> null). Runs validate, evaluate and
// referenced_vars with limits small enough to keep one input fast, and checks that evaluation
// of logic that validates never yields an internal error.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "rules/jsonlogic.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_jsonlogic_one) {
  namespace jl = specprobe::jsonlogic;
  const auto parts = specprobe::fuzz::split_sections(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  const nlohmann::json logic = nlohmann::json::parse(parts[0], nullptr, false);
  if (logic.is_discarded()) return 0;
  nlohmann::json facts = nullptr;
  if (parts.size() > 1) {
    facts = nlohmann::json::parse(parts[1], nullptr, false);
    if (facts.is_discarded()) facts = nullptr;
  }
  jl::Limits limits;
  limits.max_steps = 20'000;
  limits.max_size = 100'000;
  (void)jl::validate(logic, limits);
  auto r = jl::evaluate(logic, facts, limits);
  if (r) {
    (void)jl::truthy(*r);
    (void)r->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else if (r.error().kind == specprobe::ErrorKind::internal) {
    SPECPROBE_FUZZ_FAIL("property violated");
  }
  (void)jl::referenced_vars(logic);
  if (facts.is_array() && facts.size() == 2) {
    (void)jl::loose_equals(facts[0], facts[1]);
    (void)jl::strict_equals(facts[0], facts[1]);
  }
  return 0;
}
