// The properties of one pipeline run (run_check), shared by the property test
// (pipeline_property_test.cpp) and the libFuzzer harness (tests/fuzz/fuzz_pipeline.cpp).
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/check.hpp"
#include "pipeline/check.hpp"
#include "report/emit.hpp"
#include "report/printers.hpp"

namespace specprobe::testing {

// Why ERROR breaks the properties, or "": an error is a usage or input error with a message;
// an input error names a file; no message holds the text of a C++ exception that a reader's
// catch-all turned into an input error (nlohmann's "[json.exception", the standard library's
// names, "cannot read serving configuration:"). INPUT is the text the run read (the fuzzer's
// bytes): a word that occurs in it may be the input quoted back (an option name with "stod" in
// it), so only the words it does not hold are looked for.
inline std::string error_violation(const Error& e, std::string_view input = {}) {
  if (e.kind != ErrorKind::input && e.kind != ErrorKind::usage)
    return std::string(e.kind == ErrorKind::internal ? "internal" : "environment") + " error: " + e.str();
  if (e.message.empty()) return "an error without a message: " + e.str();
  if (e.kind == ErrorKind::input && !e.where.known()) return "an input error that names no file: " + e.str();
  // The message without its quoted excerpts of the input ("last read: '...'"): the input is the
  // fuzzer's, and may hold any of these words itself.
  std::string own;
  bool quoted = false;
  for (char c : e.message) {
    if (c == '\'')
      quoted = !quoted;
    else if (!quoted)
      own += c;
  }
  for (const char* s : {"[json.exception", "std::", "basic_string", "bad_variant", "bad_optional", "vector::", "stoi",
                        "stol", "stod", "bad_alloc", "cannot read serving configuration:",
                        "cannot read the command line:", "json logic evaluation failed", "cannot use "})
    if (own.find(s) != std::string::npos && input.find(s) == std::string_view::npos)
      return "an exception turned into an input error: " + e.str();
  return {};
}

// Renders REPORT in every format of the product's table (text, JSON, SARIF, JUnit, GitHub
// commands and job summary), plain and verbose; throws what a printer throws, and for a note
// without a message.
inline void render_all(const Report& report) {
  RenderOptions verbose;
  verbose.verbose = true;
  for (const ReportFormat& f : report_formats()) {
    (void)f.render(report, RenderOptions{});
    if (f.name == "text") (void)f.render(report, verbose);
  }
  for (const auto& n : report.notes)
    if (n.message.empty()) throw std::runtime_error("a note without a message");
}

// Why REPORT's answers disagree, or "" (issue 36: one decision, rendered everywhere):
//  - the verdict is the one decide() gives for the results and facts;
//  - the exit code (--fail-on error) is 0 / 0 / 1 / 4 for supported / supported-with-risks /
//    not-supported / unknown, and --fail-on risk makes supported-with-risks 1;
//  - the plan's own matrix cell (its k, backend and KV dtype) reads works / at-risk / fails /
//    unknown for supported / supported-with-risks / not-supported / unknown, and a working
//    (or at-risk) k is in the "working k" list;
//  - working_k is exactly the requested row's working cells and max_working_k its largest;
//  - a cell that works or fails is known by the rules; an unknown one says why;
//  - the text report prints the verdict word and the largest working k the report holds.
inline std::string agreement_violation(const Report& r) {
  const Decision d = decide(r.results, r.facts);
  if (d.verdict != r.verdict) return "the report's verdict " + r.verdict + " is not decide()'s " + d.verdict;
  const int want_exit = r.verdict == "supported" || r.verdict == "supported-with-risks" ? 0
                        : r.verdict == "not-supported"                                  ? 1
                                                                                        : 4;
  if (const int e = exit_code_for(r, "error", false); e != want_exit)
    return "verdict " + r.verdict + " but exit code " + std::to_string(e);
  if (r.verdict == "supported-with-risks" && exit_code_for(r, "risk", false) != 1)
    return "verdict supported-with-risks but --fail-on risk does not exit 1";
  const std::string text = render_text(r, TextStyle{});
  if (text.find("verdict: " + r.verdict + " ") == std::string::npos)
    return "the text report does not print the verdict " + r.verdict;
  if (!r.matrix) return {};
  const SupportMatrix& m = *r.matrix;
  const std::string backend = fact_string(r.facts, "attention.selected").value_or("");
  const std::string kv = fact_string(r.facts, "serve.kv_cache_dtype").value_or("auto");
  const bool row_named =
      std::any_of(m.cells.begin(), m.cells.end(), [&](const MatrixCell& c) { return c.backend == backend; });
  const std::string row = row_named ? backend : std::string();
  std::vector<int> working;
  for (const MatrixCell& c : m.cells) {
    if (c.verdict != "unknown" && std::find(c.known_by.begin(), c.known_by.end(), "rules") == c.known_by.end())
      return "cell k=" + std::to_string(c.k) + " " + c.backend + "/" + c.kv_cache_dtype + " is " + c.verdict +
             " but not known by the rules";
    if (c.verdict == "unknown" && c.undecided.empty())
      return "cell k=" + std::to_string(c.k) + " " + c.backend + "/" + c.kv_cache_dtype +
             " is unknown without a reason";
    if (c.backend == row && c.kv_cache_dtype == kv && (c.verdict == "works" || c.verdict == "at-risk"))
      working.push_back(c.k);
  }
  if (working != m.working_k) return "working_k is not the plan's row's working cells";
  if (working.empty() ? m.max_working_k.has_value() : m.max_working_k != working.back())
    return "max_working_k is not the largest working k";
  const std::string largest = "largest: " + (m.max_working_k ? std::to_string(*m.max_working_k) : std::string("none"));
  if (text.find(largest) == std::string::npos) return "the text report does not say '" + largest + "'";
  // The plan's own cell (when the plan's k is on the matrix: k is capped at its largest).
  const auto k = fact_int(r.facts, "spec.k");
  if (!fact_bool(r.facts, "spec.enabled").value_or(false) || !k) return {};
  const MatrixCell* cell = nullptr;
  for (const MatrixCell& c : m.cells)
    if (c.k == *k && c.backend == row && c.kv_cache_dtype == kv) cell = &c;
  if (!cell) return {};
  const std::string want = r.verdict == "supported"              ? "works"
                           : r.verdict == "supported-with-risks" ? "at-risk"
                           : r.verdict == "not-supported"        ? "fails"
                                                                 : "unknown";
  if (cell->verdict != want)
    return "verdict " + r.verdict + " but the plan's cell (k=" + std::to_string(*k) + " " + row + "/" + kv +
           ") reads " + cell->verdict;
  return {};
}

}  // namespace specprobe::testing
