// A rule: one data file under rules/<band>/SPnnnn-slug.yaml, loaded into this struct.
// Condition and parameters are JSON Logic over the facts document.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "rules/affected.hpp"
#include "rules/jsonlogic.hpp"

namespace specprobe {

enum class Severity { info, warning, error };
std::string_view to_string(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

// Where a failure would bite if the server were started.
enum class Stage { config, load, capture, first_request, runtime, silent };
std::string_view to_string(Stage s);  // "config", "load", "capture", "first-request", "runtime", "silent"
std::optional<Stage> parse_stage(std::string_view s);

// How surely a finding bites when its condition holds (issue 48): deterministic = every time the
// plan runs (the engine refuses it, load or capture fails, the first request fails, every output is
// wrong); conditional = only under a condition the plan does not fix (load, long contexts, some
// request content, intermittently, or reported once and not reproduced), said in words.
enum class Certainty { deterministic, conditional };
std::string_view to_string(Certainty c);  // "deterministic", "conditional"
std::optional<Certainty> parse_certainty(std::string_view s);

// Reads `certainty:` and `condition:` of a rule or advisory file D into C and CONDITION; the
// condition is required (and only allowed) when conditional. Input error naming FILE otherwise.
Status parse_certainty_fields(const Json& d, const std::string& file, Certainty& c, std::string& condition);

struct Rule {
  std::string id;           // "SP3001"
  std::string slug;         // "dsa-indexer-next-n-sm90"
  std::string title;        // one line; SARIF shortDescription
  std::string description;  // a paragraph; SARIF fullDescription
  Severity severity = Severity::error;
  Stage stage = Stage::config;
  Certainty certainty = Certainty::deterministic;
  std::string condition_text;  // when conditional: the condition, in words
  std::string category;        // "speculative", "attention", "cudagraph", "checkpoint", "probe", ...
  // Applicability: when it evaluates false the rule is "skip" with skip_reason.
  Json applies = true;
  std::string skip_reason;
  // The GPU vendor the rule is about ("nvidia" for CUDA kernels, libraries and arch limits);
  // empty: any. A plan on another vendor's GPU skips it.
  std::string vendor;
  // Facts that must be known (non-null) to decide; missing ones make the result "error"
  // ("could not determine") unless `unknown` below handles them.
  std::vector<std::string> requires_facts;
  Json condition;                // fires when truthy
  Json params = Json::object();  // name -> JSON Logic expression, evaluated when the rule fires
  std::string message;           // template: {name} from params, {fact.path} from facts
  std::string remediation;       // one imperative sentence naming a working alternative
  std::vector<std::string> references;
  std::string location;  // fact name whose source location anchors the finding ("spec.k")
  // The releases the failure lives in (rules/affected.hpp), applied as advisories apply theirs: a
  // known version outside every range passes; an unknown one is the newest release (a range that
  // ends before it makes the finding a note about older releases). Empty: the condition alone.
  std::vector<AffectedPackage> affected;
  // Version bounds, documentation only; the condition and `affected` enforce them.
  Json versions = Json::object();
  bool deprecated = false;
  std::string source_file;  // rules/3xxx/SP3001-....yaml

  // `applies` and `condition` compiled, with what the evaluation reads of them on every call: the
  // facts they name (a result's evidence) and whether they read the GPU's model. Set by
  // compile_rule (rules/evaluate.hpp), which the loaders call; null for a rule built by hand, which
  // is then interpreted. A rule whose applies or condition is edited afterwards is compiled again.
  struct Compiled {
    jsonlogic::Program applies, condition;
    std::vector<std::string> evidence_facts;
    bool reads_gpu = false;
    // Every fact its status depends on (rule_status: the vendor, applies, requires, condition and
    // the affected packages' versions), and whether that list is complete (both programs closed):
    // then two documents that agree on these facts give the same status.
    std::vector<std::string> status_facts;
    bool closed = false;
  };
  std::shared_ptr<const Compiled> compiled;
};

// Loads every rule embedded in the binary (or, when dir is set, every rules/**/*.yaml under it).
// Validates ids (SPnnnn, unique, band matches directory), severities, stages and JSON Logic.
Expected<std::vector<Rule>> load_rules(const std::string& dir = {});

// Every fact name a rule reads: JSON Logic vars of applies/when/params (not the per-item names
// inside map/filter/...), requires, location, and dotted {placeholders} of message/remediation.
std::vector<std::string> rule_fact_names(const Rule& rule);
// The fact names JSON Logic LOGIC reads.
std::vector<std::string> logic_fact_names(const Json& logic);

// The rules as a flat byte image (common/byte_image.hpp), as rules/advisory.hpp advisory_image:
// written by tools/catalog/compile_catalog from the rules it checked, read by load_rules with each
// rule compiled again; a corrupt image is an internal error.
std::string rule_image(const std::vector<Rule>& rules);
// A rule's or advisory's stage, severity and certainty in an image record; reading gives false
// for a value out of range.
class ByteWriter;
class ByteReader;
void write_kinds(ByteWriter& w, Stage stage, Severity severity, Certainty certainty);
bool read_kinds(ByteReader& r, Stage& stage, Severity& severity, Certainty& certainty);
Expected<std::vector<Rule>> read_rule_image(std::string_view image);

class FactRegistry;
// Input error naming the first name no module writes (with a did-you-mean).
Status check_fact_names(const std::vector<std::string>& names, const FactRegistry& registry);

// Parses one rule file's text. `file` is used in error messages. Every fact it reads must be in
// the facts registry (facts/registry.hpp).
Expected<Rule> parse_rule(std::string_view text, const std::string& file);
// The same for a document parsed already (the build-time compiled catalog, common/embedded.hpp).
// CHECKED_AT_BUILD: DOC is a compiled catalog document (common/embedded.hpp), whose JSON Logic,
// placeholders and fact names tools/catalog/compile_catalog checked when the binary was built.
Expected<Rule> parse_rule_json(const Json& doc, const std::string& file, bool checked_at_build = false);

}  // namespace specprobe
