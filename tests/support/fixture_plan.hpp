// Turns a rule or advisory fixture case into the facts document a real run would have: its base
// (tests/rules/bases/ or tests/advisories/bases/) deep-merged with the case's facts, the declared
// GPU expanded as `--gpu NAME` does, then derived. A fixture states the plan as a user gives it:
// every fact it sets must be registered to an input writer (src/facts/registry.yaml); setting a
// derived fact (spec.k, kv.fp8, attention.selected ...) is a fixture error, since derivation
// would overwrite it.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/yaml_json.hpp"
#include "facts/derive.hpp"
#include "facts/registry.hpp"
#include "gpu/gpu_info.hpp"

namespace specprobe::testing {

// The catalog (SUB: "rules" or "advisories") fixtures run against: the one embedded at build time
// (""), or, with SPECPROBE_FIXTURES_FROM_SOURCE=1, the YAML in the source tree as it is now (to edit
// rules and advisories and check their fixtures without a rebuild).
inline std::string fixture_catalog_dir(const std::string& sub) {
  const char* v = std::getenv("SPECPROBE_FIXTURES_FROM_SOURCE");
  return v && std::string(v) == "1" ? (std::filesystem::path(SPECPROBE_SOURCE_DIR) / sub).string() : std::string();
}

inline Json load_fixture_yaml(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = parse_yaml_text(ss.str(), p.string());
  if (!j) throw std::runtime_error(j.error().str());
  return *j;
}

// The base named NAME from the first of DIRS that has it (cached).
inline const Json& fixture_base(const std::string& name, const std::vector<std::filesystem::path>& dirs) {
  static std::map<std::string, Json> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  for (const auto& d : dirs)
    if (std::filesystem::exists(d / (name + ".yaml"))) return cache[name] = load_fixture_yaml(d / (name + ".yaml"));
  throw std::runtime_error("no fixture base '" + name + "'");
}

// What `--gpu NAME` adds: gpu.declared expanded into the table's gpu.* facts (facts given
// explicitly win), then the derivation.
inline void derive_plan(Json& facts) {
  if (auto name = fact_string(facts, "gpu.declared"); name && !find_fact(facts, "gpu.sm")) {
    if (auto g = declared_gpu_facts(*name)) {
      Json gpu = *g;
      gpu.merge_patch(facts["gpu"]);
      facts["gpu"] = gpu;
    }
  }
  derive_facts(facts);
}

// Plans for tests that compare two ways of evaluating the catalog (the sweep reusing answers, results
// counted only): each rule fixture base (tests/rules/bases/) as it is and with one input changed
// (KV cache fp8, older vLLM and FlashInfer, speculation at k 5), as (label, inputs), not derived.
inline std::vector<std::pair<std::string, Json>> neighbour_plans() {
  const std::vector<std::filesystem::path> dirs = {std::filesystem::path(SPECPROBE_SOURCE_DIR) / "tests/rules/bases"};
  std::vector<std::pair<std::string, Json>> out;
  for (const char* base : {"dsv4-h200", "gemma4-h200", "gqa16-gb10", "llama-h200", "llama-rtx5090",
                           "llama8b-memory-h100", "sglang-llama-h200"}) {
    for (const Json& extra :
         {Json::object(), Json{{"serve", {{"kv_cache_dtype", "fp8"}}}},
          Json{{"lib", {{"vllm", {{"version", "0.10.1"}}}, {"flashinfer", {{"version", "0.2.5"}}}}}},
          Json{{"spec", {{"enabled", true}, {"num_speculative_tokens", 5}}}}}) {
      Json inputs = fixture_base(base, dirs);
      inputs.merge_patch(extra);
      out.emplace_back(std::string(base) + " + " + extra.dump(), std::move(inputs));
    }
  }
  return out;
}

// The derived facts of CASE, or an error naming a fact the fixture may not set.
inline Expected<Json> fixture_facts(const Json& c, const std::vector<std::filesystem::path>& base_dirs) {
  Json facts = c.contains("base") ? fixture_base(c["base"].get<std::string>(), base_dirs) : Json::object();
  if (c.contains("facts")) facts.merge_patch(c["facts"]);
  auto registry = fact_registry();
  if (!registry) return registry.error();
  for (const auto& path : changed_fact_paths(Json::object(), facts)) {
    const FactSpec* f = (*registry)->find(path);
    if (!f) return input_error("fixture sets '" + path + "', which no module writes");
    const auto* w = (*registry)->writer(f->writer);
    if (!w || !w->input)
      return input_error("fixture sets '" + path + "', which " + f->writer +
                         " derives: set the plan's input instead (docs/facts.md)");
  }
  if (auto name = fact_string(facts, "gpu.declared"); name && !declared_gpu(*name)) return declared_gpu(*name).error();
  derive_plan(facts);
  return facts;
}

}  // namespace specprobe::testing
