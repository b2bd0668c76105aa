// The facts registry: the vocabulary rules and advisories are written in, one writer per fact.
// docs/facts.md is generated from it; the rule loader rejects names no module writes; and a run's
// stages, audited, write only the facts registered to them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "e2e/run_binary.hpp"
#include "facts/derive.hpp"
#include "facts/registry.hpp"
#include "pipeline/check.hpp"
#include "rules/rule.hpp"

namespace fs = std::filesystem;
using namespace specprobe;

using specprobe::test::file_text;

namespace {

const FactRegistry& reg() {
  auto r = fact_registry();
  REQUIRE(r.has_value());
  return **r;
}

}  // namespace

TEST_CASE("docs/facts.md is generated from the registry and current", "[facts][registry]") {
  const std::string doc = file_text(fs::path(SPECPROBE_SOURCE_DIR) / "docs/facts.md");
  INFO("regenerate: specprobe facts --format markdown > docs/facts.md");
  CHECK(doc == reg().markdown());
}

TEST_CASE("registry lookup: exact names, placeholders, paths below containers", "[facts][registry]") {
  const FactRegistry& r = reg();
  REQUIRE(r.find("spec.k"));
  CHECK(r.find("spec.k")->writer == "facts.spec");
  CHECK(r.find("spec.num_speculative_tokens")->writer == "inputs.serving");
  CHECK(r.find("lib.vllm.version")->name == "lib.<package>.version");
  CHECK(r.find("env.VLLM_USE_V1")->name == "env.<NAME>");
  CHECK(r.find("probe.mqa_logits.next_n.3.status")->name == "probe.mqa_logits.next_n.<n>.status");
  CHECK(r.find("quant.stored_mismatch.0.config")->name == "quant.stored_mismatch");
  CHECK(r.find("spec.config.method")->name == "spec.config");
  CHECK(r.find("stack.deep_gemm.next_n.3.status")->name == "stack.<library>.<case>");
  CHECK(r.find("stack.triton.m")->name == "stack.triton.m");  // a literal segment beats a placeholder
  CHECK_FALSE(r.find("spec.kk"));
  CHECK_FALSE(r.find("spec.k.x"));  // an int covers nothing below it
  CHECK_FALSE(r.find("golden"));
}

TEST_CASE("registry file errors are named", "[facts][registry]") {
  const std::string writers = "writers: [{name: a, what: x, input: true}]\n";
  CHECK(FactRegistry::parse(writers + "facts: [{name: f, type: int, writer: a, doc: d}]", "r.yaml"));
  auto bad_writer = FactRegistry::parse(writers + "facts: [{name: f, type: int, writer: b, doc: d}]", "r.yaml");
  REQUIRE_FALSE(bad_writer);
  CHECK(bad_writer.error().message.find("unknown writer 'b'") != std::string::npos);
  auto twice = FactRegistry::parse(
      writers + "facts: [{name: f, type: int, writer: a, doc: d}, {name: f, type: int, writer: a, doc: e}]", "r.yaml");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("registered twice") != std::string::npos);
  CHECK_FALSE(FactRegistry::parse(writers + "facts: [{name: f, type: integer, writer: a, doc: d}]", "r.yaml"));
  CHECK_FALSE(FactRegistry::parse(writers + "facts: [{name: f, type: int, writer: a}]", "r.yaml"));
}

TEST_CASE("the rule loader rejects a fact no module writes, with a did-you-mean", "[facts][registry][rules]") {
  const std::string rule = R"(id: SP1999
slug: t
title: t
severity: error
stage: config
certainty: deterministic
message: "m {spec.next_n}"
remediation: r
)";
  CHECK(parse_rule(rule + "when: {\">\": [{\"var\": \"spec.k\"}, 2]}\n", "SP1999-t.yaml"));
  auto typo = parse_rule(rule + "when: {\">\": [{\"var\": \"spec.kk\"}, 2]}\n", "SP1999-t.yaml");
  REQUIRE_FALSE(typo);
  CHECK(typo.error().message.find("fact 'spec.kk' is written by no module") != std::string::npos);
  CHECK(typo.error().message.find("did you mean 'spec.k'") != std::string::npos);
  CHECK(typo.error().where.file == "SP1999-t.yaml");
  // requires, location and message placeholders are checked too; per-item names inside map are not.
  CHECK_FALSE(parse_rule(rule + "requires: [serve.tpp]\nwhen: true\n", "SP1999-t.yaml"));
  CHECK_FALSE(parse_rule(rule + "location: spec.kay\nwhen: true\n", "SP1999-t.yaml"));
  CHECK_FALSE(parse_rule(rule + "when: true\n" + "params: {x: {\"var\": \"gpu.smm\"}}\n", "SP1999-t.yaml"));
  CHECK(parse_rule(
      rule + "when: {\"some\": [{\"var\": \"quant.stored_mismatch\"}, {\"==\": [{\"var\": \"stored\"}, \"bf16\"]}]}\n",
      "SP1999-t.yaml"));
  auto placeholder = parse_rule(R"(id: SP1999
slug: t
title: t
severity: error
stage: config
certainty: deterministic
message: "m {spec.nextn}"
remediation: r
when: true
)",
                                "SP1999-t.yaml");
  CHECK_FALSE(placeholder);
}

TEST_CASE("every derivation step writes only its own facts, and derives again identically", "[facts][registry]") {
  std::set<std::string> writers;
  for (const auto& w : reg().writers()) writers.insert(w.name);
  for (const auto& s : derive_steps()) {
    INFO(s.writer);
    CHECK(writers.count(s.writer) == 1);
    CHECK_FALSE(reg().writer(s.writer)->input);
  }
}

TEST_CASE("a run's stages write only the facts registered to them (audited over real inputs)",
          "[facts][registry][pipeline]") {
  auto services = system_services();
  REQUIRE(services.has_value());
  std::vector<std::string> violations;
  size_t audited = 0;
  services->audit = [&](std::string_view writer, const Json& before, const Json& after) {
    ++audited;
    for (auto& v : reg().write_violations(writer, before, after)) violations.push_back(std::string(writer) + ": " + v);
  };
  const fs::path src(SPECPROBE_SOURCE_DIR);
  struct Plan {
    std::string file, model, gpu, lib;
  };
  std::vector<Plan> plans;
  for (const char* seed : {"dsv4-mtp", "gb10-flashinfer-gqa16", "turboquant-ngram"})
    for (const char* ext : {".yaml", ".json", ".sh"})
      for (const char* gpu : {"H100", "GB10", "B200"})
        for (const char* lib : {"vllm=0.25.1", "vllm=0.13.0", "sglang=0.5.9"}) {
          const std::string s(seed);
          const std::string model = s == "dsv4-mtp"           ? "deepseek-v4-flash"
                                    : s == "turboquant-ngram" ? "llama-3.1-8b"
                                                              : "gqa16-mtp";
          plans.push_back({(src / "docs/examples/seeds" / (s + ext)).string(),
                           (src / "docs/examples/checkpoints" / model).string(), gpu, lib});
        }
  for (const auto& e : fs::directory_iterator(src / "tests/data/serving"))
    if (e.is_regular_file())
      plans.push_back({e.path().string(), (src / "docs/examples/checkpoints/llama-3.1-8b").string(), "H200", ""});
  size_t ran = 0;
  for (const auto& p : plans) {
    CheckRequest req;
    req.file = p.file;
    req.model = p.model;
    req.gpu = p.gpu;
    if (!p.lib.empty()) req.libs = {p.lib};
    req.probes = "off";
    req.suppression_file = false;
    auto r = run_check(req, *services);
    if (r) ++ran;
  }
  CHECK(ran > 80);
  CHECK(audited > ran * 10);
  INFO("first violations: " << (violations.empty() ? "" : violations.front()));
  CHECK(violations.empty());
}
