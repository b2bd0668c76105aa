// Advisories: publicly reported failures of the engines and their kernel libraries, each a
// configuration trigger over the facts plus the versions it lives in (advisories/README.md is the
// format). Loaded like rules (embedded, validated, every fact name checked against the registry),
// evaluated next to them into the same RuleResult, and swept with them for the support matrix.
//
// Version semantics:
//  - every affected package's version known: fires only inside its ranges; the remediation names
//    the first fixed release;
//  - a version unknown: an advisory whose range reaches the newest release (no `fixed`) fires at
//    its severity; one that affects only older releases is a note (info) "if you run vllm <
//    0.12.0: ..."; both say how to give the version;
//  - dev and nightly builds are placed by their base version (PEP 440 orders 0.21.1rc1.dev202
//    before 0.21.1), and by commit where the advisory names the introducing or fixing commit.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "rules/affected.hpp"
#include "rules/result.hpp"
#include "rules/rule.hpp"

namespace specprobe {

struct Advisory {
  Advisory();

  std::string id;       // SPA-VLLM-37754
  std::string summary;  // one line
  std::string details;
  std::string published;  // YYYY-MM-DD the primary report was opened
  std::string engine;     // vllm | sglang | any
  std::vector<std::string> requires_facts;
  bool request_dependent = false;
  std::vector<AffectedPackage> affected;  // all of them
  std::vector<std::string> gpu;           // arch families / exact archs; empty = every GPU
  Stage stage = Stage::config;
  Severity severity = Severity::error;
  Certainty certainty = Certainty::deterministic;
  std::string condition_text;                  // when conditional: the condition, in words
  std::map<std::string, std::string> upgrade;  // package -> first fixed release
  std::string fix_config;                      // a working alternative configuration
  struct Reference {
    std::string type, url;
  };
  std::vector<Reference> references;  // the first `report` is the primary report
  std::string source_file;

  // The trigger: JSON Logic over facts. One read from the built-in image is decoded when it is
  // first asked for (issue 49: a check reads the triggers of the advisories that apply to its
  // engine and GPU; decoding and compiling all of them was most of start-up). Safe from several
  // threads; copies share it.
  const Json& trigger() const;
  // Every fact the trigger reads by name (jsonlogic::referenced_vars), known without decoding it.
  const std::vector<std::string>& trigger_facts() const;
  void set_trigger(Json trigger);
  // The trigger bytes of a built-in image record (common/byte_image.hpp) and the facts it reads.
  void set_trigger_image(std::string bytes, std::vector<std::string> facts);

  // The advisory as rules, each built once from the advisory's fields at its first use (the what-if
  // sweep evaluates advisories in every cell; a copy whose fields are edited after that must call
  // set_trigger again). head_rule: its applicability (engine, GPU) and what a result names (id,
  // summary, severity, stage, certainty, references), without the trigger's condition.
  // trigger_rule: the same with the trigger as its condition and `requires`.
  const Rule& head_rule() const;
  const Rule& trigger_rule() const;
  // Every fact advisory_status reads: the trigger rule's status facts (rules/rule.hpp) and the
  // affected packages' versions ("lib.<package>.version"), built with trigger_rule.
  const std::vector<std::string>& status_facts() const;

  // The primary report's URL (or the first reference's).
  std::string primary_url() const;

 private:
  struct Lazy;
  std::shared_ptr<Lazy> lazy_;
  Lazy& lazy() const;
};

// How surely it bites: a failure that needs some request content is conditional on it.
inline Certainty certainty_of(const Advisory& a) { return a.request_dependent ? Certainty::conditional : a.certainty; }

// Parses one advisory file; errors (input) name FILE and the field.
Expected<Advisory> parse_advisory(std::string_view text, const std::string& file);
// The same for a document parsed already (the build-time compiled catalog, common/embedded.hpp).
// CHECKED_AT_BUILD: as parse_rule_json (rules/rule.hpp): the trigger's JSON Logic and fact names
// are not checked again.
Expected<Advisory> parse_advisory_json(const Json& doc, const std::string& file, bool checked_at_build = false);

// Every advisory embedded in the binary (DIR empty) or under DIR (advisories/<project>/SPA-*.yaml;
// fixtures, the ledger and proposals are skipped). Ids are unique and match their file names.
Expected<std::vector<Advisory>> load_advisories(const std::string& dir = {});

// The advisories as a flat byte image (common/byte_image.hpp): tools/catalog/compile_catalog writes
// the built-in ones, checked by parse_advisory, and load_advisories reads them back without
// decoding a document per file (start-up, issue 49). Reading gives exactly the advisories written,
// their trigger rules built again; an image that is cut short or corrupt is an internal error.
std::string advisory_image(const std::vector<Advisory>& advisories);
Expected<std::vector<Advisory>> read_advisory_image(std::string_view image);

// How the installed versions place the plan against the advisory's ranges (rules/affected.hpp).
VersionVerdict place_versions(const Advisory& a, const Json& facts);

// Status only (for the what-if sweep); SEVERITY receives the severity it fires with (a note is info).
ResultStatus advisory_status(const Advisory& a, const Json& facts, Severity* severity = nullptr);

// The full result, as evaluate_rule gives for rules (DETAIL: rules/result.hpp).
RuleResult evaluate_advisory(const Advisory& a, const Json& facts,
                             const std::map<std::string, SourceLocation>& locations, const std::string& default_file,
                             PassDetail detail = PassDetail::full);

}  // namespace specprobe
