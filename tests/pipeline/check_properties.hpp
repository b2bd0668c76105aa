// The properties of one pipeline run (run_check), shared by the property test
// (pipeline_property_test.cpp) and the libFuzzer harness (tests/fuzz/fuzz_pipeline.cpp).
#pragma once
#include <stdexcept>
#include <string>

#include "pipeline/check.hpp"
#include "report/emit.hpp"

namespace specprobe::testing {

// Why ERROR breaks the properties, or "": an error is a usage or input error with a message;
// an input error names a file; no message holds the text of a C++ exception that a reader's
// catch-all turned into an input error (nlohmann's "[json.exception", the standard library's
// names, "cannot read serving configuration:").
inline std::string error_violation(const Error& e) {
  if (e.kind != ErrorKind::input && e.kind != ErrorKind::usage)
    return std::string(e.kind == ErrorKind::internal ? "internal" : "environment") + " error: " + e.str();
  if (e.message.empty()) return "an error without a message: " + e.str();
  if (e.kind == ErrorKind::input && !e.where.known()) return "an input error that names no file: " + e.str();
  for (const char* s : {"[json.exception", "std::", "basic_string", "bad_variant", "bad_optional", "vector::", "stoi",
                        "stol", "stod", "bad_alloc", "cannot read serving configuration:",
                        "cannot read the command line:", "json logic evaluation failed", "cannot use "})
    if (e.message.find(s) != std::string::npos) return "an exception turned into an input error: " + e.str();
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

}  // namespace specprobe::testing
