// Every report format in one table (name, renderer), and the one place reports are written to
// their destinations: the CLI turns --format/-o/--json/--sarif/--junit/--github into a list of
// outputs, and emit_report renders and writes each.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "pipeline/report.hpp"
#include "report/printers.hpp"

namespace specprobe {

struct RenderOptions {
  bool color = false;           // text only, and only when its destination is a terminal
  bool verbose = false;         // text: every fact and every rule's evaluation
  bool quiet = false;           // text: failures and the summary line only
  bool explain_memory = false;  // text: the memory model's breakdown (--explain-memory)
  int width = 0;                // text: wrap at this many columns (0: none; the CLI: the terminal's, else 100)
  PathBase paths;               // SARIF / GitHub: input paths are made relative to paths.root
  std::string sarif_category;   // SARIF automationDetails category (--sarif-category)
  // JSON: list every result (true), or only those that are not passed or not applicable (false:
  // --results failing, the default for several files; the counts stay whole). Issue 49.
  bool all_results = true;
};

struct ReportFormat {
  std::string_view name;  // "text", "json", "sarif", "junit", "github", "github-summary"
  std::string_view what;  // for help text
  bool selectable;        // may be named with --format
  std::string (*render)(const Report&, const RenderOptions&);
};

// The table, in help order.
const std::vector<ReportFormat>& report_formats();
const ReportFormat* find_report_format(std::string_view name);
// "text, json, sarif, junit or github": the --format choices.
std::vector<std::string> selectable_format_names();

struct ReportOutput {
  std::string format;
  std::string path;             // a file; empty = a stream
  std::FILE* stream = nullptr;  // with an empty path: this stream (nullptr = the one given to emit_report)
  bool append = false;          // add to the file (the GitHub job summary)
};

// Renders and writes each output (common/output_file.hpp: files replaced atomically, appends and
// streams checked). Errors (io_error for a failed write) name the destination; every output is
// attempted.
std::vector<Error> emit_report(const Report& report, const std::vector<ReportOutput>& outputs,
                               const RenderOptions& options, std::FILE* stream);

// Several reports (a file that starts several servers, several files) in one output each: text
// with a header line per server; JSON as {"schema_version", "tool", "exit_code", "reports": [one
// report-1 object each, input.server naming the server]} (docs/schema/reports-1.json); SARIF
// with one run per report; JUnit with one testsuite per report; GitHub annotations and summaries
// one after the other. One report: exactly emit_report.
std::vector<Error> emit_reports(const std::vector<Report>& reports, const std::vector<ReportOutput>& outputs,
                                const RenderOptions& options, std::FILE* stream);

// A report rendered ahead as its entry in the JSON document of several reports, with what the
// document's head reads from it. A many-file run renders each file's reports on the thread that
// checked it and frees them (issue 49: a thousand files' facts and results were held to the end,
// and growing the heap for them was a sixth of the run).
struct RenderedReport {
  std::string json;  // the entry in "reports"
  int exit_code = 0;
};
RenderedReport render_json_entry(const Report& report, const RenderOptions& options);
// The document of several reports (as emit_reports writes it, however many there are) from
// entries rendered ahead, written as they come, in order: to a file, each entry
// as it is added (the document's exit code is written in its place at the end; a thousand files'
// report is on disk when the last is checked, issue 49), replacing the file atomically at
// finish(); to a stream or a device, whole at finish(). Nothing is written without an entry.
// ARGV: the command line the document names.
class JsonReportsWriter {
 public:
  JsonReportsWriter(ReportOutput output, RenderOptions options, std::FILE* stream, std::vector<std::string> argv);
  ~JsonReportsWriter();
  void add(std::vector<RenderedReport> entries);
  std::vector<Error> finish();

 private:
  struct Stream;
  ReportOutput output_;
  RenderOptions options_;
  std::FILE* stream_;
  std::vector<std::string> argv_;
  std::unique_ptr<Stream> stream_state_;
  std::vector<RenderedReport> kept_;
  std::vector<Error> problems_;
  int worst_ = 0;
  bool failed_ = false;
};

}  // namespace specprobe
