// The engines' option tables and the per-release option check (issues 35 and 39): every defect the
// issues name is a case here, read the way a run reads it (reader -> derivation -> options.*, the
// rule anchored at the option in the user's file).
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include <filesystem>
#include <fstream>
#include <random>

#include "facts/derive.hpp"
#include "inputs/options/check.hpp"
#include "inputs/options/tables.hpp"
#include "inputs/serving.hpp"
#include "rules/evaluate.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

const options::EngineTable& table(const char* engine) {
  auto t = options::engine_table(engine);
  REQUIRE(t.has_value());
  REQUIRE(*t != nullptr);
  return **t;
}

options::ReleaseSet only(const options::EngineTable& t, const char* version) {
  options::ReleaseSet s;
  auto i = t.index_of(version);
  REQUIRE(i.has_value());
  s.set(*i);
  return s;
}

struct TempFile {
  fs::path path;
  TempFile(const std::string& name, const std::string& content) {
    std::mt19937_64 rng(std::random_device{}());
    const fs::path dir = fs::temp_directory_path() / ("specprobe-opts-" + std::to_string(rng()));
    fs::create_directories(dir);
    path = dir / name;
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(path.parent_path(), ec);
  }
};

ParsedServing from_argv(const std::vector<std::string>& argv) {
  auto r = read_serving_argv(argv);
  INFO((r ? std::string() : r.error().str()));
  REQUIRE(r.has_value());
  return std::move(r).value();
}

ParsedServing from_file(const TempFile& f) {
  auto r = read_serving_file(f.path.string());
  INFO((r ? std::string() : r.error().str()));
  REQUIRE(r.has_value());
  return std::move(r).value();
}

// The plan as a run derives it, with the engine version given like `--lib vllm=X`.
Json derived(const ParsedServing& p, const std::string& engine_version = {}) {
  Json f = p.facts;
  if (!engine_version.empty()) f["lib"][fact_string(f, "engine.name").value_or("vllm")]["version"] = engine_version;
  derive_facts(f);
  return f;
}

std::string messages(const Json& f, const char* list) {
  std::string out;
  if (const Json* l = find_fact(f, std::string("options.") + list); l && l->is_array())
    for (const auto& x : *l) out += x.value("message", std::string()) + "\n";
  return out;
}

int64_t count(const Json& f, const char* list) {
  return fact_int(f, std::string("options.") + list + "_count").value_or(-1);
}

// The finding of rule ID for the plan, anchored with the reader's locations.
RuleResult rule_finding(const ParsedServing& p, const Json& facts, const std::string& id) {
  static const auto rules = load_rules();
  REQUIRE(rules.has_value());
  for (const auto& r : *rules)
    if (r.id == id) return evaluate_rule(r, facts, p.locations, p.path);
  FAIL("no rule " << id);
  return {};
}

bool has_unknown(const ParsedServing& p, const std::string& name) {
  for (const auto& u : p.unknown)
    if (u.name == name) return true;
  return false;
}

}  // namespace

TEST_CASE("option tables: both engines load, every release read", "[options]") {
  const auto& v = table("vllm");
  const auto& s = table("sglang");
  CHECK(v.releases.size() == 54);
  CHECK(v.releases.front() == "0.7.0");
  CHECK(v.releases.back() == "0.33.0");
  CHECK(s.releases.size() == 92);
  CHECK(s.releases.back() == "0.5.23");
  CHECK(v.options.count("tensor-parallel-size") == 1);
  CHECK(v.speculative_config.count("num_speculative_tokens") == 1);
  CHECK(v.compilation_config.count("cudagraph_mode") == 1);
  CHECK(v.enums.count("attention_backend") == 1);
  CHECK(s.options.count("speculative-algorithm") == 1);
  CHECK(v.range_text(v.options.at("speculative-model").releases) == "0.7.0-0.8.2");
  CHECK(v.range_text(v.options.at("speculative-config").releases) == "0.8.2-");
  auto none = options::engine_table("llamacpp");
  REQUIRE(none.has_value());
  CHECK(*none == nullptr);
}

TEST_CASE("option tables: flags resolve the way argparse resolves them", "[options]") {
  const auto& v = table("vllm");
  const auto& s = table("sglang");
  auto r = options::resolve_flag(v, "--tensor-parallel-size", v.all);
  CHECK(r.option == "tensor-parallel-size");
  CHECK_FALSE(r.abbreviation);
  CHECK(r.accepted == v.all);
  CHECK(options::resolve_flag(v, "-tp", v.all).option == "tensor-parallel-size");
  CHECK(options::resolve_flag(v, "--tp", v.all).accepted.none());  // -tp is a one-dash alias
  CHECK(options::resolve_flag(v, "----speculative-config", v.all).accepted.none());
  // allow_abbrev: an unambiguous prefix is that option, an ambiguous one is refused.
  r = options::resolve_flag(v, "--tensor-parallel", v.all);
  CHECK(r.option == "tensor-parallel-size");
  CHECK(r.abbreviation);
  r = options::resolve_flag(v, "--data-parallel-s", only(v, "0.20.0"));
  CHECK(r.accepted.none());
  CHECK(r.ambiguous.any());
  CHECK(r.candidates.size() >= 2);
  // BooleanOptionalAction negations; vLLM 0.33's --disable-X inverse of --enable-X.
  r = options::resolve_flag(v, "--no-enable-prefix-caching", only(v, "0.20.0"));
  CHECK(r.option == "enable-prefix-caching");
  CHECK(r.negative);
  CHECK(options::resolve_flag(v, "--disable-prefix-caching", only(v, "0.33.0")).option == "enable-prefix-caching");
  CHECK(options::resolve_flag(v, "--disable-prefix-caching", only(v, "0.32.0")).accepted.none());
  // Aliases by release: -sc from 0.19.0, --device-memory-utilization (two dashes) from 0.31.0.
  CHECK(options::resolve_flag(v, "-sc", only(v, "0.19.0")).option == "speculative-config");
  CHECK(options::resolve_flag(v, "-sc", only(v, "0.18.1")).accepted.none());
  CHECK(options::resolve_flag(v, "--device-memory-utilization", only(v, "0.31.0")).option == "gpu-memory-utilization");
  // SGLang: long aliases, abbreviations that later became ambiguous.
  CHECK(options::resolve_flag(s, "--tensor-parallel-size", s.all).option == "tp-size");
  CHECK(options::resolve_flag(s, "--speculative-algo", only(s, "0.5.9")).option == "speculative-algorithm");
  CHECK(options::resolve_flag(s, "--speculative-num-step", only(s, "0.5.9")).option == "speculative-num-steps");
  CHECK(options::resolve_flag(s, "--speculative-draft", only(s, "0.5.23")).ambiguous.any());
  CHECK(options::resolve_flag(s, "--tp_size", s.all).accepted.none());  // SGLang does not fold '_'
}

TEST_CASE("option tables: the release a check uses", "[options]") {
  const auto& v = table("vllm");
  auto sel = options::select_releases(v, std::nullopt);
  CHECK(sel.releases == v.all);
  CHECK_FALSE(sel.exact);
  CHECK(sel.label.find("engine version is unknown") != std::string::npos);
  sel = options::select_releases(v, "0.20.0");
  CHECK(sel.exact);
  CHECK(sel.label == "vLLM 0.20.0");
  sel = options::select_releases(v, "0.20.0+cu128");
  CHECK(sel.label == "vLLM 0.20.0");
  sel = options::select_releases(v, "0.21.1rc1.dev202+g3424fba5");
  CHECK(sel.releases.count() == 2);
  CHECK(sel.short_label == "vLLM 0.21.0 or 0.22.0");
  sel = options::select_releases(v, "0.40.0");
  CHECK(sel.short_label == "vLLM 0.33.0");
  sel = options::select_releases(v, "not-a-version");
  CHECK(sel.releases == v.all);
}

TEST_CASE("option tables: did-you-mean", "[options]") {
  const std::vector<std::string> names = {"--speculative-config",
                                          "--kv-cache-dtype",
                                          "--tensor-parallel-size",
                                          "--speculative-num-steps",
                                          "--speculative-num-draft-tokens",
                                          "-tp",
                                          "-pp"};
  CHECK(options::did_you_mean("--speculative-confg", names) == "--speculative-config");
  CHECK(options::did_you_mean("--kv-cache-dtpye", names) == "--kv-cache-dtype");
  CHECK(options::did_you_mean("--num-speculative-steps", names) == "--speculative-num-steps");  // words reordered
  CHECK(options::did_you_mean("--num-draft-tokens", names) ==
        "--speculative-num-draft-tokens");  // leading word missing
  CHECK(options::did_you_mean("--frobnicate", names).empty());
  CHECK(options::did_you_mean("--xy", names).empty());  // too short to guess
  CHECK(options::did_you_mean("mpt", {"mtp", "ngram"}, 2) == "mtp");
}

TEST_CASE("options: unknown flags and JSON keys are SP1014 findings at the option, with a did-you-mean", "[options]") {
  // --speculative-confg used to pass as "info: option is not modelled; kept as given".
  auto p = from_argv({"vllm", "serve", "m", "--speculative-confg", R"({"method":"ngram","num_speculative_tokens":3})",
                      "--kv-cache-dtpye", "fp8", "--port", "8000"});
  Json f = derived(p);
  CHECK(count(f, "unknown") == 2);
  CHECK(messages(f, "unknown").find("--speculative-confg is not a vLLM option (did you mean --speculative-config?)") !=
        std::string::npos);
  CHECK(messages(f, "unknown").find("did you mean --kv-cache-dtype?") != std::string::npos);
  CHECK_FALSE(has_unknown(p, "speculative-confg"));  // a finding now, not a "not modelled" note
  CHECK(has_unknown(p, "port"));                     // known, not modelled: still a note
  RuleResult r = rule_finding(p, f, "SP1014");
  CHECK(r.status == ResultStatus::fail);
  CHECK(r.severity == Severity::error);
  CHECK(r.location_fact == "options.given.0");
  CHECK(r.location.column == 14);  // `--speculative-confg` on the argv line "vllm serve m --speculative-confg ..."
  CHECK(r.message.find("checked against vLLM 0.33.0, the newest table (the engine version is unknown") !=
        std::string::npos);

  // With the version known: that release's table, and an option of other releases.
  p = from_argv({"vllm", "serve", "m", "--speculative-model", "[ngram]", "--num-speculative-tokens", "3"});
  f = derived(p, "0.20.0");
  CHECK(messages(f, "unknown").find("--speculative-model is not an option of vLLM 0.20.0 (vLLM has it up to 0.8.2)") !=
        std::string::npos);
  CHECK(fact_string(f, "options.table") == "vLLM 0.20.0");
  f = derived(p, "0.8.2");
  CHECK(count(f, "unknown") == 0);

  // ----speculative-config: no release accepts four dashes.
  p = from_argv({"vllm", "serve", "m", "----speculative-config", R"({"method":"ngram"})"});
  f = derived(p);
  CHECK(messages(f, "unknown").find("written with 4 dashes; did you mean --speculative-config?") != std::string::npos);
  CHECK(fact_bool(f, "spec.enabled") == false);  // not read as speculative-config either
}

TEST_CASE("options: keys inside --speculative-config are checked, located at the key", "[options]") {
  // num_speculative_token (a typo) silently became the default k.
  TempFile yaml("serve.yaml",
                "model: m\n"
                "speculative-config:\n"
                "  method: mtp\n"
                "  num_speculative_token: 2\n");
  auto p = from_file(yaml);
  Json f = derived(p, "0.20.0");
  REQUIRE(count(f, "unknown") == 1);
  CHECK(messages(f, "unknown")
            .find("key 'num_speculative_token' is not a SpeculativeConfig field (did you mean "
                  "'num_speculative_tokens'?); vLLM stops at startup") != std::string::npos);
  RuleResult r = rule_finding(p, f, "SP1014");
  CHECK(r.location.line == 4);
  CHECK(r.location.column == 3);
  f = derived(p, "0.12.0");  // a pydantic dataclass that ignores extra keys
  CHECK(messages(f, "unknown").find("ignores it silently") != std::string::npos);

  // In JSON text on a command line, and as a dotted key.
  p = from_argv({"vllm", "serve", "m", "--speculative-config", R"({"method": "mtp", "num_speculative_token": 2})"});
  f = derived(p, "0.20.0");
  CHECK(count(f, "unknown") == 1);
  CHECK(fact_string(f, "options.unknown_at") == "options.given.0.value.num_speculative_token");
  r = rule_finding(p, f, "SP1014");
  CHECK(r.location.column == 1 + std::string("vllm serve m --speculative-config {\"method\": \"mtp\", ").size());
  p = from_argv(
      {"vllm", "serve", "m", "--speculative-config.num_speculative_token", "2", "--speculative-config.method", "mtp"});
  CHECK(count(derived(p, "0.20.0"), "unknown") == 1);
}

TEST_CASE("options: enumerated values against the release's list", "[options]") {
  TempFile yaml("serve.yaml",
                "model: m\n"
                "speculative-config: {method: mpt, num_speculative_tokens: 1}\n"
                "kv-cache-dtype: fp9\n"
                "attention-backend: FLASHINFERR\n"
                "compilation-config: {cudagraph_mode: FULL_DECODE}\n");
  auto p = from_file(yaml);
  Json f = derived(p, "0.20.0");
  const std::string m = messages(f, "invalid");
  CHECK(count(f, "invalid") == 4);
  CHECK(m.find("speculative-config method mpt: 'mpt' is not a value vLLM 0.20.0 accepts (did you mean 'mtp'?)") !=
        std::string::npos);
  CHECK(m.find("kv-cache-dtype fp9: 'fp9' is not a value vLLM 0.20.0 accepts (did you mean 'fp8'?)") !=
        std::string::npos);
  CHECK(m.find("'FLASHINFERR' is not a value vLLM 0.20.0 accepts (did you mean 'FLASHINFER'?)") != std::string::npos);
  CHECK(m.find("cudagraph_mode FULL_DECODE") != std::string::npos);
  RuleResult r = rule_finding(p, f, "SP1015");
  CHECK(r.status == ResultStatus::fail);
  CHECK(r.location.line == 2);
  // Unknown version: a value no release accepts and close to one is still refused; one close to
  // none (FULL_DECODE) may belong to a release newer than the tables: a note (SP1016).
  f = derived(p);
  CHECK(count(f, "invalid") == 3);
  CHECK(messages(f, "notes").find("'FULL_DECODE' is not a value any vLLM release accepts") != std::string::npos);
  CHECK(messages(f, "notes").find("a later release may accept it") != std::string::npos);
  // Values the engine accepts, case as the engine folds it.
  TempFile good("serve.yaml",
                "model: m\n"
                "speculative-config: {method: mtp, num_speculative_tokens: 1}\n"
                "kv-cache-dtype: fp8_e4m3\n"
                "attention-backend: flashinfer\n"
                "compilation-config: {cudagraph_mode: full_and_piecewise}\n");
  f = derived(from_file(good), "0.20.0");
  CHECK(count(f, "invalid") == 0);
  CHECK(count(f, "unknown") == 0);
}

TEST_CASE("options: SGLang options, abbreviations and case-sensitive choices", "[options]") {
  auto p = from_argv({"python", "-m", "sglang.launch_server", "--model-path", "m", "--speculative-algo", "EAGLE",
                      "--speculative-num-step", "3", "--speculative-num-stpes", "3", "--tp_size", "2"});
  CHECK(fact_bool(p.facts, "spec.enabled") == true);  // the abbreviation is the option
  CHECK(fact_int(p.facts, "spec.num_steps") == 3);
  Json f = derived(p, "0.5.9");
  const std::string m = messages(f, "unknown");
  CHECK(count(f, "unknown") == 2);
  CHECK(m.find("--speculative-num-stpes is not a SGLang option (did you mean --speculative-num-steps?)") !=
        std::string::npos);
  CHECK(m.find("--tp_size is not a SGLang option (did you mean --tp-size?)") != std::string::npos);
  CHECK(messages(f, "notes").find("--speculative-algo is accepted as an abbreviation of --speculative-algorithm") !=
        std::string::npos);
  // Up to 0.5.11 the algorithm is an argparse choice, upper case only.
  p = from_argv({"python", "-m", "sglang.launch_server", "--model-path", "m", "--speculative-algorithm", "eagle"});
  CHECK(messages(derived(p, "0.5.9"), "invalid").find("did you mean 'EAGLE'?") != std::string::npos);
  CHECK(count(derived(p, "0.5.23"), "invalid") == 0);
}

TEST_CASE("options: sizes and fractions out of range are SP1015 findings", "[options]") {
  TempFile yaml("serve.yaml", "model: m\ntensor-parallel-size: 0\ngpu-memory-utilization: 1.5\n");
  auto p = from_file(yaml);
  Json f = derived(p);
  const std::string m = messages(f, "invalid");
  CHECK(m.find("--tensor-parallel-size 0: vLLM requires at least 1") != std::string::npos);
  CHECK(m.find("--gpu-memory-utilization 1.5: vLLM requires a fraction in (0, 1]") != std::string::npos);
  RuleResult r = rule_finding(p, f, "SP1015");
  CHECK(r.location.line == 2);
  p = from_argv(
      {"python", "-m", "sglang.launch_server", "--model-path", "m", "--mem-fraction-static", "0", "--tp-size", "0"});
  f = derived(p);
  CHECK(messages(f, "invalid").find("--mem-fraction-static 0") != std::string::npos);
  CHECK(messages(f, "invalid").find("--tp-size 0") != std::string::npos);
  p = from_argv({"vllm", "serve", "m", "--swap-space", "lots"});
  CHECK(messages(derived(p, "0.10.0"), "invalid").find("--swap-space lots: vLLM 0.10.0 expects a number") !=
        std::string::npos);
}

TEST_CASE("option check: a plan no single release accepts - what the plan needs", "[options]") {
  auto p = from_argv({"vllm", "serve", "m", "--speculative-model", "[ngram]", "--attention-backend", "FLASH_ATTN"});
  Json f = derived(p);
  CHECK(messages(f, "unknown").find("no vLLM release accepts all of these together") != std::string::npos);
  // The version unknown: the newest release decides, so options it has are not noted...
  p = from_argv({"vllm", "serve", "m", "--attention-backend", "FLASH_ATTN", "--tensor-parallel-size", "2"});
  f = derived(p);
  CHECK(count(f, "unknown") == 0);
  CHECK(count(f, "notes") == 0);
  // ...but a build between two releases is checked against both.
  f = derived(p, "0.12.1rc1.dev5+gabc");
  CHECK(messages(f, "notes").find("only vLLM 0.13.0 accepts the plan as written") != std::string::npos);
  RuleResult r = rule_finding(p, f, "SP1016");
  CHECK(r.status == ResultStatus::fail);
  CHECK(r.severity == Severity::info);
}

TEST_CASE("option check: the reader models aliases and abbreviations from the tables", "[options]") {
  auto p = from_argv({"vllm", "serve", "m", "--tensor-parallel", "4", "-sc",
                      R"({"method":"ngram","num_speculative_tokens":2})", "--no-enable-prefix-caching"});
  CHECK(fact_int(p.facts, "serve.tp") == 4);
  CHECK(fact_bool(p.facts, "spec.enabled") == true);
  CHECK(fact_bool(p.facts, "serve.enable_prefix_caching") == false);
  // Every option as written is in options.given, located.
  const Json* given = find_fact(p.facts, "options.given");
  REQUIRE(given);
  REQUIRE(given->size() == 3);
  CHECK((*given)[0]["flag"] == "--tensor-parallel");
  CHECK((*given)[1]["value"]["method"] == "ngram");  // JSON text parsed
  CHECK(p.locations.count("options.given.2") == 1);
  CHECK(p.locations.count("options.given.1.value.num_speculative_tokens") == 1);
}

TEST_CASE("option check: no table for another engine, nothing written", "[options]") {
  Json f = {{"engine", {{"name", "llamacpp"}}}, {"options", {{"given", Json::array({{{"flag", "--x"}}})}}}};
  derive_option_checks(f);
  CHECK_FALSE(f["options"].contains("unknown"));
  CHECK_FALSE(f["options"].contains("table"));
}

TEST_CASE("options: a list in a start-up log is the JSON value the engine parsed, not text to check", "[options]") {
  // vLLM's Namespace line prints --allowed-origins (json.loads) as the list it parsed.
  TempFile log("serve.log",
               "INFO 04-29 00:57:50 [api_server.py:1044] args: Namespace(host=None, port=8000, "
               "allowed_origins=['*'], allowed_methods=['*'], model='Qwen/Qwen3-30B-A3B', tensor_parallel_size=4)\n");
  const Json f = derived(from_file(log));
  CHECK(count(f, "invalid") == 0);
  CHECK(messages(f, "invalid").empty());
  // Written by hand on a command line, the same value is text the engine parses, and is checked.
  const Json cli = derived(from_argv({"vllm", "serve", "m", "--allowed-origins", "*"}));
  CHECK(messages(cli, "invalid").find("--allowed-origins") != std::string::npos);
}

TEST_CASE("option check: the answer depends on the facts it lists as read, and no other", "[options][sweep]") {
  // Issue 49: derive_option_checks keeps its answer per thread by the values of the facts it
  // reads (the sweep derives every cell again). Every other fact of real deploy plans is changed
  // in turn, and the checks, made afresh on a new thread, give the same answer.
  const fs::path corpus = fs::path(SPECPROBE_SOURCE_DIR) / "tests/corpus/deploy/files";
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(corpus))
    if (e.is_regular_file() && e.path().string().find("malformed") == std::string::npos) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  auto fresh = [](Json f) {  // on a new thread: nothing remembered
    std::thread([&f] { derive_option_checks(f); }).join();
    return f["options"];
  };
  size_t plans = 0, changed = 0, with_findings = 0;
  for (size_t i = 0; i < files.size(); i += 7) {
    auto file = read_serving_plans(files[i].string());
    if (!file) continue;
    for (const auto& p : file->plans) {
      INFO(files[i].string());
      Json f = p.facts;
      derive_facts(f);
      const Json expected = fresh(f);
      for (const char* count : {"unknown_count", "invalid_count", "notes_count"})
        if (expected.contains(std::string(count)) && expected[count].get<int>() > 0) {
          ++with_findings;
          break;
        }
      ++plans;
      const Json leaves = f.flatten();
      for (const auto& leaf : leaves.items()) {
        const std::string name = leaf.key().substr(1);                                         // "/spec/k" -> "spec/k"
        if (name.rfind("options/", 0) == 0 && name.rfind("options/given/", 0) != 0) continue;  // what it writes
        std::string dotted = name;
        std::replace(dotted.begin(), dotted.end(), '/', '.');
        bool read = false;
        for (const char* r : option_check_reads()) read |= dotted == r || dotted.rfind(std::string(r) + ".", 0) == 0;
        if (read) continue;
        Json g = f;
        g[Json::json_pointer(leaf.key())] = "changed " + name;
        INFO("changed " << dotted);
        CHECK(fresh(g) == expected);
        ++changed;
      }
    }
  }
  CHECK(plans >= 10);
  CHECK(with_findings >= 2);
  CHECK(changed > 500);
}
