// The catalog compiled at build time (issue 49) is the YAML it came from: every compiled document
// decodes to what the YAML reader gives for the embedded file, and the loaders find all of them.
#include <random>

#include <catch2/catch.hpp>

#include "common/embedded.hpp"
#include "common/yaml_json.hpp"
#include "facts/registry.hpp"
#include "inputs/options/tables.hpp"
#include "rules/advisory.hpp"
#include "rules/ids.hpp"
#include "rules/rule.hpp"

using namespace specprobe;

TEST_CASE("every compiled catalog document equals its YAML parsed now", "[common][embedded]") {
  const auto docs = embedded_documents();
  REQUIRE(docs.size() > 300);  // 78 rules, 253 advisories, the registry, builds and two option tables
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string path(docs[i].path);
    INFO(path);
    if (i > 0) CHECK(docs[i - 1].path < docs[i].path);  // sorted: embedded_document() bisects
    const auto text = embedded_file(path);
    REQUIRE(text.has_value());
    const auto yaml = parse_yaml_text(*text, path);
    REQUIRE(yaml.has_value());
    const auto compiled = embedded_document(path);
    REQUIRE(compiled.has_value());
    CHECK(*compiled == *yaml);
  }
  for (const char* path : {"src/facts/registry.yaml", "rules/data/builds.yaml", "rules/data/options/vllm.yaml",
                           "rules/data/options/sglang.yaml"})
    CHECK(embedded_document(path).has_value());
  CHECK_FALSE(embedded_document("rules/3xxx/SP3020-not-a-rule.yaml").has_value());
  CHECK_FALSE(embedded_document("").has_value());
}

TEST_CASE("the built-in catalog loads every rule and advisory file that is embedded", "[common][embedded]") {
  size_t rule_files = 0, advisory_files = 0;
  for (const auto& f : embedded_files()) {
    const std::string_view p = f.path;
    if (!p.ends_with(".yaml") || p.ends_with(".test.yaml")) continue;
    if (p.starts_with("rules/") && !p.starts_with("rules/data/")) ++rule_files;
    if (p.starts_with("advisories/") && p.find("/SPA-") != std::string_view::npos) ++advisory_files;
  }
  auto rules = load_rules();
  REQUIRE(rules.has_value());
  auto advisories = load_advisories();
  REQUIRE(advisories.has_value());
  CHECK(rules->size() == rule_files);
  CHECK(advisories->size() == advisory_files);
}

TEST_CASE("catalog ids and dates are checked by form", "[common][embedded]") {
  CHECK(is_rule_id("SP3020"));
  CHECK_FALSE(is_rule_id("SP0020"));
  CHECK_FALSE(is_rule_id("SP302"));
  CHECK_FALSE(is_rule_id("SP30200"));
  CHECK_FALSE(is_rule_id("sp3020"));
  CHECK(is_advisory_id("SPA-VLLM-12"));
  CHECK(is_advisory_id("SPA-DEEPGEMM-3a"));
  CHECK_FALSE(is_advisory_id("SPA-VLLM-"));
  CHECK_FALSE(is_advisory_id("SPA-VLLM-a"));
  CHECK_FALSE(is_advisory_id("SPA-VLLM-12ab"));
  CHECK_FALSE(is_advisory_id("SPA-ROCM-12"));
  CHECK_FALSE(is_advisory_id("SPA-VLLM12"));
  CHECK(is_iso_date("2026-08-31"));
  CHECK_FALSE(is_iso_date("2026-8-31"));
  CHECK_FALSE(is_iso_date("26 May 2025"));
  CHECK_FALSE(is_iso_date("2026-08-31T00"));
}

// The advisories a check loads come from the compiled image: they are the ones the YAML gives,
// field for field (an advisory written again gives the same bytes), each with its trigger rule.
TEST_CASE("the built-in advisory image holds every advisory as its YAML gives it", "[common][embedded]") {
  const std::string_view image = embedded_advisory_image();
  REQUIRE_FALSE(image.empty());
  auto from_image = read_advisory_image(image);
  REQUIRE(from_image.has_value());
  auto from_yaml = load_advisories(SPECPROBE_SOURCE_DIR "/advisories");
  REQUIRE(from_yaml.has_value());
  REQUIRE(from_image->size() == from_yaml->size());
  for (size_t i = 0; i < from_yaml->size(); ++i) {
    const Advisory& a = (*from_image)[i];
    Advisory y = (*from_yaml)[i];
    INFO(y.id);
    // The YAML loader names a file by its path under the directory it was given; the image keeps
    // the repository path the catalog compiler read.
    const std::string root = SPECPROBE_SOURCE_DIR "/";
    REQUIRE(y.source_file.rfind(root, 0) == 0);
    y.source_file.erase(0, root.size());
    CHECK(advisory_image({a}) == advisory_image({y}));
    CHECK(a.trigger_facts() == y.trigger_facts());
    CHECK(a.trigger_rule().applies == y.trigger_rule().applies);
    CHECK(a.trigger_rule().condition == y.trigger_rule().condition);
    CHECK(a.trigger_rule().skip_reason == y.trigger_rule().skip_reason);
    REQUIRE(a.trigger_rule().compiled);
    CHECK(a.trigger_rule().compiled->status_facts == y.trigger_rule().compiled->status_facts);
    CHECK(a.head_rule().applies == a.trigger_rule().applies);
    CHECK(a.head_rule().condition.is_null());
  }
}

TEST_CASE("an advisory image cut short or corrupted is an error, never a crash", "[common][embedded]") {
  const std::string image(embedded_advisory_image());
  REQUIRE(image.size() > 1000);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{30}, image.size() / 2, image.size() - 1}) {
    INFO("cut at " << cut);
    auto r = read_advisory_image(image.substr(0, cut));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::internal);
  }
  std::string flipped = image;
  for (size_t i = 40; i < flipped.size(); i += 997) flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
  auto r = read_advisory_image(flipped);  // may decode or not; must not crash or throw
  if (!r) CHECK(r.error().kind == ErrorKind::internal);
}

TEST_CASE("the built-in rule image holds every rule as its YAML gives it", "[common][embedded]") {
  auto from_image = read_rule_image(embedded_rule_image());
  REQUIRE(from_image.has_value());
  auto from_yaml = load_rules(SPECPROBE_SOURCE_DIR "/rules");
  REQUIRE(from_yaml.has_value());
  REQUIRE(from_image->size() == from_yaml->size());
  for (size_t i = 0; i < from_yaml->size(); ++i) {
    const Rule& r = (*from_image)[i];
    const Rule& y = (*from_yaml)[i];
    INFO(y.id);
    CHECK(rule_image({r}) == rule_image({y}));
    REQUIRE(r.compiled);
    CHECK(r.compiled->evidence_facts == y.compiled->evidence_facts);
    CHECK(r.compiled->closed == y.compiled->closed);
  }
  const std::string image(embedded_rule_image());
  for (size_t cut : {size_t{0}, size_t{5}, image.size() / 3, image.size() - 1}) {
    auto r = read_rule_image(image.substr(0, cut));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::internal);
  }
  // Random bytes flipped (lengths and the JSON Logic's CBOR among them: nlohmann's CBOR reader
  // throws on some of those): an error or a catalog, never an exception or a crash.
  std::mt19937 rng(49);
  for (int i = 0; i < 300; ++i) {
    std::string flipped = image;
    for (int k = 0; k < 4; ++k) flipped[rng() % flipped.size()] = static_cast<char>(rng());
    std::optional<Expected<std::vector<Rule>>> r;
    REQUIRE_NOTHROW(r.emplace(read_rule_image(flipped)));
    if (!*r) CHECK((*r).error().kind == ErrorKind::internal);
  }
}

TEST_CASE("the built-in facts registry image is the registry its YAML gives", "[common][embedded]") {
  auto from_image = FactRegistry::from_image(embedded_registry_image());
  REQUIRE(from_image.has_value());
  auto text = embedded_file("src/facts/registry.yaml");
  REQUIRE(text.has_value());
  auto from_yaml = FactRegistry::parse(*text, "src/facts/registry.yaml");
  REQUIRE(from_yaml.has_value());
  CHECK(from_image->image() == from_yaml->image());
  CHECK(from_image->markdown() == from_yaml->markdown());
  REQUIRE(from_image->find("spec.k"));
  CHECK(from_image->find("lib.vllm.version") ==
        &from_image->facts()[static_cast<size_t>(from_yaml->find("lib.vllm.version") - &from_yaml->facts()[0])]);
  const std::string image(embedded_registry_image());
  for (size_t cut : {size_t{0}, size_t{7}, image.size() / 2, image.size() - 1}) {
    auto r = FactRegistry::from_image(image.substr(0, cut));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::internal);
  }
}

TEST_CASE("the built-in option table images are the tables their YAML gives", "[common][embedded]") {
  for (const char* engine : {"vllm", "sglang"}) {
    INFO(engine);
    const std::string_view image = embedded_option_image(engine);
    REQUIRE_FALSE(image.empty());
    auto from_image = options::read_table_image(image);
    REQUIRE(from_image.has_value());
    auto from_yaml = options::load_table_yaml(engine);
    REQUIRE(from_yaml.has_value());
    CHECK(options::table_image(*from_yaml) == std::string(image));
    CHECK(from_image->options.size() == from_yaml->options.size());
    CHECK(from_image->enums.size() == from_yaml->enums.size());
    CHECK(from_image->releases == from_yaml->releases);
    const std::string tp = std::string(engine) == "vllm" ? "tensor-parallel-size" : "tp-size";
    REQUIRE(from_image->options.count(tp));
    CHECK(from_image->options.at(tp).releases == from_yaml->options.at(tp).releases);
    CHECK(from_image->options.at(tp).aliases.size() == from_yaml->options.at(tp).aliases.size());
    for (size_t cut : {size_t{0}, size_t{9}, image.size() / 2, image.size() - 1})
      CHECK_FALSE(options::read_table_image(image.substr(0, cut)).has_value());
  }
  CHECK(embedded_option_image("trtllm").empty());
}
