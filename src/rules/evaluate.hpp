// Evaluating rules over a facts document: one RuleResult per rule (pass / fail / skip / error),
// messages rendered from templates, evidence and source locations attached.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "rules/result.hpp"
#include "rules/rule.hpp"

namespace specprobe {

// Compiles RULE's applies and condition into RULE.compiled (rules/rule.hpp). SAME_APPLIES: another
// rule's compiled form whose applicability is RULE's (and whose condition reads nothing), reused
// instead of compiling it again: an advisory's trigger rule has its head rule's (start-up, issue 49).
void compile_rule(Rule& rule, const Rule::Compiled* same_applies = nullptr);

// Whether RULE's applicability or condition reads a fact of the GPU's model or architecture
// (gpu.arch_family, gpu.sm, gpu.name, ...; not gpu.vendor): its answer depends on which GPU it is.
bool reads_gpu_facts(const Rule& rule);

// The GPU was not visible and not declared (gpu.fallback): a deterministic error that depends on
// the GPU is only as sure as the assumption, so it is conditional on the GPU being the one assumed.
// Returns the condition to state ("" when the plan's GPU is known or the rule does not read it).
std::string fallback_gpu_condition(const Json& facts, bool reads_gpu);

// Status only, for the what-if sweep (no message rendering).
ResultStatus rule_status(const Rule& rule, const Json& facts, Severity* severity = nullptr);

// Full evaluation of one rule. LOCATIONS maps fact names to places in the user's file;
// DEFAULT_FILE anchors findings whose fact has no recorded place (line 1). DETAIL: how much of a
// passing or not applicable result is built (rules/result.hpp).
RuleResult evaluate_rule(const Rule& rule, const Json& facts, const std::map<std::string, SourceLocation>& locations,
                         const std::string& default_file, PassDetail detail = PassDetail::full);

// Only releases older than the newest have the failure, and the installed version is unknown
// (PLACED: unknown_older): R becomes a note "if you run <older releases>: WHAT (... version unknown:
// how to give it)".
void note_older_releases(RuleResult& r, const VersionVerdict& placed, const std::string& what);

std::vector<RuleResult> evaluate_rules(const std::vector<Rule>& rules, const Json& facts,
                                       const std::map<std::string, SourceLocation>& locations,
                                       const std::string& default_file);

// How a result is known from the facts it read (EVIDENCE: name -> value): "engine", "library",
// "probe" or "rule" (see RuleResult::known_by).
std::string known_by(const Json& evidence);

// Where a finding about FACT anchors in the user's file: the fact's recorded place, else the
// nearest recorded place under the same dotted prefix, else line 1 of DEFAULT_FILE.
SourceLocation anchor_location(const std::string& fact, const std::map<std::string, SourceLocation>& locations,
                               const std::string& default_file);

// Renders "{param}" and "{fact.path}" placeholders. Unknown names render as "unknown".
std::string render_template(const std::string& tmpl, const Json& params, const Json& facts);

// Human form of a JSON value in messages: strings bare, arrays "1, 2, 4", null "unknown".
std::string display_value(const Json& v);

}  // namespace specprobe
