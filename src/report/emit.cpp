// The format table and report writing (see emit.hpp).
#include "report/emit.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "common/output_file.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

// The depth of a report in the document of several ({"reports": [ENTRY, ...]}).
constexpr int kEntryDepth = 2;

std::string dump(const Json& j) {
  std::string out;
  dump_json(j, out, kReportIndent);
  out += '\n';
  return out;
}

std::string render_text_format(const Report& r, const RenderOptions& o) {
  return render_text(r, TextStyle{o.color, o.verbose, o.quiet, o.width, o.explain_memory});
}
std::string render_json_format(const Report& r, const RenderOptions& o) {
  std::string out;
  write_report_json(report_head_json(r, o.all_results), r, o.all_results, out);
  out += '\n';
  return out;
}
// One SARIF run for every report of the invocation (the catalog is the same for all).
std::string render_sarif_many(const std::vector<Report>& reports, const RenderOptions& o) {
  static const std::vector<Rule> kNoRules;
  const Report& r = reports.front();
  return dump(reports_to_sarif(reports, r.catalog ? r.catalog->rules : kNoRules,
                               SarifOptions{o.paths, o.sarif_category, r.catalog ? &r.catalog->advisories : nullptr}));
}
std::string render_sarif_format(const Report& r, const RenderOptions& o) { return render_sarif_many({r}, o); }
std::string render_junit_format(const Report& r, const RenderOptions&) { return reports_to_junit({r}); }
std::string render_codequality_format(const Report& r, const RenderOptions& o) {
  return dump(reports_to_codequality({r}, o.paths));
}
std::string render_github_format(const Report& r, const RenderOptions& o) { return render_github(r, o.paths).commands; }
std::string render_github_summary(const Report& r, const RenderOptions& o) {
  return render_github(r, o.paths).summary_markdown;
}

}  // namespace

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> kFormats = {
      {"text", "compiler-style findings, verdict and support matrix", true, render_text_format},
      {"json", "the canonical JSON report (docs/schema/report-1.json)", true, render_json_format},
      {"sarif", "SARIF 2.1.0 for GitHub code scanning", true, render_sarif_format},
      {"junit", "JUnit XML for GitLab and Jenkins", true, render_junit_format},
      {"codequality", "GitLab Code Quality (the merge request widget)", true, render_codequality_format},
      {"github", "GitHub Actions workflow annotations", true, render_github_format},
      {"github-summary", "the GitHub Actions job summary (Markdown)", false, render_github_summary},
  };
  return kFormats;
}

const ReportFormat* find_report_format(std::string_view name) {
  for (const auto& f : report_formats())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> selectable_format_names() {
  std::vector<std::string> out;
  for (const auto& f : report_formats())
    if (f.selectable) out.emplace_back(f.name);
  return out;
}

namespace {

// TEXT to OUT: its stream (STREAM's pending output flushed first, so that it stays ahead), or its
// file (replaced atomically, or appended to).
Status write_output(const ReportOutput& out, std::FILE* stream, const std::string& text) {
  if (out.path.empty()) {
    std::FILE* fp = out.stream ? out.stream : stream;
    std::fflush(stream);  // what went to STREAM before stays ahead (checked when it is written to)
    return write_stream(fp, text);
  }
  return out.append ? append_file(out.path, text) : write_file_atomic(out.path, text);
}

std::string server_header(const Report& r, size_t i, size_t n) {
  return fmt::format("== server {} of {}: {}{} ==\n", i + 1, n, r.input_path,
                     r.server.empty() ? "" : " (" + r.server + ")");
}

// The document of several JSON reports (docs/schema/reports-1.json) around ENTRIES, each written
// by WRITE_ENTRY(i, out, depth) at its place in "reports".
template <class WriteEntry>
std::string json_document(size_t n, int worst_exit, const std::vector<std::string>& argv, const RenderOptions& o,
                          WriteEntry&& write_entry, size_t size_hint = 0) {
  std::string out;
  out.reserve(size_hint);
  Json j = Json::object();
  j["$schema"] = "https://specprobe.dev/schema/reports-1.json";
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = report_tool_json();
  if (!o.all_results) j["invocation"] = {{"argv", argv}};
  j["exit_code"] = worst_exit;
  write_object_with(j, "reports", out, kReportIndent, 0, [&](int depth) {
    out += '[';
    for (size_t i = 0; i < n; ++i) {
      if (i) out += ',';
      json_newline(out, kReportIndent, depth + 1);
      write_entry(i, out, depth + 1);
    }
    if (n) json_newline(out, kReportIndent, depth);
    out += ']';
  });
  out += '\n';
  return out;
}

// REPORT as an entry of the document's "reports" (at DEPTH).
void write_json_entry(const Report& r, const RenderOptions& o, std::string& out, int depth) {
  Json head = report_head_json(r, o.all_results);
  if (!r.server.empty()) head["input"]["server"] = r.server;
  // A compact report gives the command line once, in the document, not in each report (with a
  // thousand files it grew as their square).
  if (!o.all_results) head["invocation"]["argv"] = Json::array();
  write_report_json(head, r, o.all_results, out, depth);
}

std::string render_many(const std::string& format, const std::vector<Report>& reports, const RenderOptions& o) {
  const size_t n = reports.size();
  std::string out;
  if (format == "json") {
    int worst = 0;
    for (const auto& r : reports) worst = worse_exit(worst, r.exit_code);
    return json_document(n, worst, reports.front().argv, o,
                         [&](size_t i, std::string& text, int depth) { write_json_entry(reports[i], o, text, depth); });
  }
  if (format == "sarif") return render_sarif_many(reports, o);
  if (format == "junit") return reports_to_junit(reports);
  if (format == "codequality") return dump(reports_to_codequality(reports, o.paths));
  const ReportFormat* f = find_report_format(format);
  for (size_t i = 0; i < n; ++i) {
    if (format == "text") out += (i ? "\n" : "") + server_header(reports[i], i, n);
    out += f ? f->render(reports[i], o) : std::string();
  }
  return out;
}

}  // namespace

std::vector<Error> emit_reports(const std::vector<Report>& reports, const std::vector<ReportOutput>& outputs,
                                const RenderOptions& options, std::FILE* stream) {
  if (reports.size() == 1) return emit_report(reports.front(), outputs, options, stream);
  std::vector<Error> problems;
  for (const auto& out : outputs) {
    if (!find_report_format(out.format)) {
      problems.push_back(internal_error(fmt::format("no report format '{}'", out.format)));
      continue;
    }
    RenderOptions o = options;
    if (!out.path.empty()) o.color = false;
    if (auto st = write_output(out, stream, render_many(out.format, reports, o)); !st) problems.push_back(st.error());
  }
  return problems;
}

std::vector<Error> emit_report(const Report& report, const std::vector<ReportOutput>& outputs,
                               const RenderOptions& options, std::FILE* stream) {
  std::vector<Error> problems;
  for (const auto& out : outputs) {
    const ReportFormat* f = find_report_format(out.format);
    if (!f) {
      problems.push_back(internal_error(fmt::format("no report format '{}'", out.format)));
      continue;
    }
    RenderOptions o = options;
    if (!out.path.empty()) o.color = false;
    if (auto st = write_output(out, stream, f->render(report, o)); !st) problems.push_back(st.error());
  }
  return problems;
}

namespace {

// The document of several reports from entries rendered ahead, written whole to OUTPUT.
std::vector<Error> emit_json_entries(const std::vector<RenderedReport>& entries, const std::vector<std::string>& argv,
                                     const ReportOutput& output, const RenderOptions& options, std::FILE* stream) {
  int worst = 0;
  for (const auto& e : entries) worst = worse_exit(worst, e.exit_code);
  size_t size = 4096;  // the head, the separators
  for (const auto& e : entries) size += e.json.size() + 16;
  const std::string text = json_document(
      entries.size(), worst, argv, options,
      [&](size_t i, std::string& out, int depth) {
        if (depth != kEntryDepth) throw std::logic_error("report entry depth");
        out += entries[i].json;
      },
      size);
  std::vector<Error> problems;
  if (auto st = write_output(output, stream, text); !st) problems.push_back(st.error());
  return problems;
}

}  // namespace

struct JsonReportsWriter::Stream {
  std::unique_ptr<AtomicFileWriter> file;
  std::string tail;         // after the last entry
  size_t exit_code_at = 0;  // where the document's exit code digit is in the file
  bool any = false;
};

JsonReportsWriter::JsonReportsWriter(ReportOutput output, RenderOptions options, std::FILE* stream,
                                     std::vector<std::string> argv)
    : output_(std::move(output)), options_(std::move(options)), stream_(stream), argv_(std::move(argv)) {
  if (output_.path.empty()) return;
  auto file = AtomicFileWriter::open(output_.path);
  if (!file) {
    problems_.push_back(file.error());
    failed_ = true;
    return;
  }
  if (!(*file)->rewritable()) return;  // a device or a FIFO: the document at the end
  // The document around one marked entry, cut at the mark: what comes before the first entry and
  // after the last, with the exit code (a digit, known at the end) at a place found now.
  static constexpr std::string_view kMark = "\x01entry\x01";
  const std::string doc = json_document(1, 0, argv_, options_, [&](size_t, std::string& out, int) { out += kMark; });
  const size_t mark = doc.find(kMark);
  const size_t code = doc.find("\"exit_code\": 0");
  if (mark == std::string::npos || code == std::string::npos || code > mark) return;
  auto s = std::make_unique<Stream>();
  s->file = std::move(*file);
  s->tail = doc.substr(mark + kMark.size());
  s->exit_code_at = code + std::string_view("\"exit_code\": ").size();
  if (auto st = s->file->write(std::string_view(doc).substr(0, mark)); !st) {
    problems_.push_back(st.error());
    failed_ = true;
    return;
  }
  stream_state_ = std::move(s);
}

JsonReportsWriter::~JsonReportsWriter() = default;

void JsonReportsWriter::add(std::vector<RenderedReport> entries) {
  if (failed_) return;
  for (RenderedReport& e : entries) {
    worst_ = worse_exit(worst_, e.exit_code);
    if (!stream_state_) {
      kept_.push_back(std::move(e));
      continue;
    }
    Stream& s = *stream_state_;
    std::string piece;
    if (s.any) {
      piece += ',';
      json_newline(piece, kReportIndent, kEntryDepth);
    }
    s.any = true;
    if (auto st = s.file->write(piece); !st || !(st = s.file->write(e.json))) {
      problems_.push_back(st.error());
      stream_state_.reset();  // the temporary file is removed; nothing more is written
      failed_ = true;
    }
  }
}

std::vector<Error> JsonReportsWriter::finish() {
  if (failed_) return problems_;
  if (stream_state_) {
    Stream& s = *stream_state_;
    if (!s.any) return problems_;  // no report: nothing written, as without streaming
    Status st = s.file->write(s.tail);
    // A report's exit code is 0, 1 or 4 (cli/check.cpp exit_code_for): one digit.
    if (st && worst_ != 0) st = s.file->write_at(s.exit_code_at, std::to_string(worst_));
    if (st) st = s.file->commit();
    if (!st) problems_.push_back(st.error());
    stream_state_.reset();
    return problems_;
  }
  if (!problems_.empty() || kept_.empty()) return problems_;
  return emit_json_entries(kept_, argv_, output_, options_, stream_);
}

RenderedReport render_json_entry(const Report& report, const RenderOptions& options) {
  RenderedReport r;
  write_json_entry(report, options, r.json, kEntryDepth);
  r.exit_code = report.exit_code;
  return r;
}

}  // namespace specprobe
