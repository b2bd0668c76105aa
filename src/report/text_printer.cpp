// Text printer: compiler-style finding lines, verdict, support matrix, notes.
#include <sys/ioctl.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>

#include <fmt/color.h>

#include "report/printers.hpp"

namespace specprobe {
namespace {

// Colour through fmt's text styles; plain text when colour is off (want_color: --color,
// NO_COLOR, a terminal).
struct Paint {
  bool on;
  std::string operator()(const fmt::text_style& style, std::string_view text) const {
    return on ? fmt::format("{}", fmt::styled(text, style)) : std::string(text);
  }
};

const fmt::text_style kBold = fmt::emphasis::bold;
const fmt::text_style kDim = fmt::emphasis::faint;
fmt::text_style bold(fmt::terminal_color c) { return fmt::fg(c) | fmt::emphasis::bold; }

fmt::text_style sev_color(Severity s) {
  switch (s) {
    case Severity::error:
      return bold(fmt::terminal_color::red);
    case Severity::warning:
      return bold(fmt::terminal_color::yellow);
    case Severity::info:
      return bold(fmt::terminal_color::cyan);
  }
  return {};
}

// A plan summary field as the header shows it: FALLBACK when unknown.
std::string shown(const std::optional<std::string>& v, const std::string& fallback = "unknown") {
  return v ? *v : fallback;
}
template <typename T>
std::string shown(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string("unknown");
}

// Where a model's metadata came from: the Hub (at a commit) or the file read; empty: unknown.
std::string origin_text(const ModelSource& s) {
  if (s.from_hub()) {
    const std::string& o = *s.origin;
    return fmt::format("the Hub ({}) at commit {}{}", shown(s.endpoint_host), shown(s.commit).substr(0, 12),
                       o == "hub" ? "" : ", " + o.substr(5, o.size() - 6));
  }
  return s.path.value_or("");
}

void print_summary_header(std::string& out, const Report& r, const Paint& paint) {
  const PlanSummary& p = r.plan;
  if (r.input_form == "none") {
    out += fmt::format("{} check: {}: no server started\n", paint(kBold, "specprobe"), r.input_path);
    return;
  }
  out += fmt::format("{} {}: {} ({}), engine {}{}\n", paint(kBold, "specprobe"), r.input_path.empty() ? "-" : "check",
                     r.input_path, r.input_form, r.engine, p.engine_version ? " " + *p.engine_version : "");
  out += fmt::format("  gpu:       {} ({}, {}{})\n", shown(p.gpu.name), p.gpu.arch_label, shown(p.gpu.source),
                     p.gpu.declared_from ? " from " + *p.gpu.declared_from : "");
  const ModelSummary& model = p.model;
  if (model.config_read) {
    out += fmt::format("  model:     {} ({}), heads {}/{} kv, GQA {} per rank{}{}\n", shown(model.architecture),
                       shown(model.model_type), shown(model.num_attention_heads), shown(model.num_kv_heads),
                       shown(model.gqa_ratio), model.mla ? ", MLA" : "", model.dsa ? ", DSA indexer" : "");
    if (const std::string from = origin_text(model.source); !from.empty())
      out += fmt::format("             read from {}\n", from);
  } else {
    out += fmt::format("  model:     {} (metadata not read)\n", shown(model.id));
  }
  if (p.draft.config_read)
    out += fmt::format("  draft:     {} {} ({}), read from {}\n", shown(p.draft.model), shown(p.draft.architecture),
                       shown(p.draft.model_type), origin_text(p.draft.source));
  if (p.spec.enabled.value_or(false))
    out +=
        fmt::format("  spec:      {} k={} (next_n={})\n", shown(p.spec.method), shown(p.spec.k), shown(p.spec.next_n));
  else
    out += p.spec.enabled ? "  spec:      off\n" : "  spec:      unknown (left to what the file does not show)\n";
  const AttentionSummary& a = p.attention;
  out += fmt::format("  attention: {} ({}); kv cache {}; cudagraph {} -> {}\n", shown(a.selected), shown(a.selected_by),
                     a.kv_cache_dtype_unknown ? "unknown" : a.kv_cache_dtype, shown(a.cudagraph_requested),
                     shown(a.cudagraph_resolved));
  if (p.memory.modelled)
    out += fmt::format("  memory:    {}: {}\n", shown(p.memory.status), shown(p.memory.summary));
  else if (p.memory.reason)
    out += fmt::format("  memory:    not modelled: {}\n", *p.memory.reason);
}

std::string gib_text(const std::optional<int64_t>& bytes) {
  return bytes ? fmt::format("{:.2f} GiB", static_cast<double>(*bytes) / (1024.0 * 1024 * 1024)) : "unknown";
}

// --explain-memory: every term of the memory model, one per line, in the engine's order.
void print_memory_breakdown(std::string& out, const MemorySummary& m) {
  if (!m.present) return;
  out += "\nmemory per GPU rank:\n";
  if (!m.modelled) {
    out += fmt::format("  not modelled: {}\n", shown(m.reason));
    return;
  }
  const MemoryBreakdown& b = m.breakdown;
  const bool sglang = b.engine == "sglang";
  out += fmt::format("  accounting        {} {}; TP {}, PP {}, DP {}, EP {}\n", b.engine,
                     shown(b.engine_version, "(version unknown: the newest release's accounting)"), b.tp, b.pp, b.dp,
                     b.ep);
  out += fmt::format("  GPU memory        {}\n", gib_text(m.gpu_bytes));
  out += fmt::format("  budget            {} = {:.3f} x GPU memory{} ({}, {})\n", gib_text(m.budget_bytes),
                     b.budget_fraction, sglang ? " free before the load" : "",
                     sglang ? "mem_fraction_static" : "gpu_memory_utilization", b.budget_fraction_source);
  std::string parts;
  for (const auto& [name, bytes] : b.weights_parts)
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", name, gib_text(bytes));
  out += fmt::format("  weights           {} (from {}, within {:.0f}%){}\n", gib_text(m.weights_bytes),
                     b.weights_source == "headers" ? "safetensors headers" : "config.json", b.weights_margin * 100,
                     parts.empty() ? "" : ": " + parts);
  if (m.drafter_bytes.value_or(0) > 0) out += fmt::format("  drafter           {}\n", gib_text(m.drafter_bytes));
  out += fmt::format("  activation peak   {} (estimate, +/-50%: {} tokens, {} sequences in the profile run)\n",
                     gib_text(b.activation_bytes), b.scheduler_tokens, b.scheduler_seqs);
  out += fmt::format("  non-torch memory  {} (estimate, +/-50%: CUDA context, NCCL, cuBLAS)\n",
                     gib_text(b.overhead_bytes));
  out += fmt::format("  CUDA graphs       {} (estimate; {})\n", gib_text(m.graph_bytes),
                     b.graphs_inside_budget ? "inside the budget" : "outside the budget");
  if (b.request_table_bytes)
    out += fmt::format("  request table     {} (int32 slots per request and context token; from the reserve)\n",
                       gib_text(b.request_table_bytes));
  if (b.fa3_graph_tables_bytes)
    out += fmt::format("  FA3 graph tables  {} (int32 page tables of the decode graphs; from the reserve)\n",
                       gib_text(b.fa3_graph_tables_bytes));
  if (b.other_processes_bytes)
    out += fmt::format("  other processes   {} (in use on the GPU now beyond an idle card's; off the KV cache)\n",
                       gib_text(b.other_processes_bytes));
  if (m.kv_tokens)
    out += fmt::format(
        "  KV cache          {} = {} tokens at {} bytes per token ({}; {} to {} tokens within the margin)\n",
        gib_text(m.kv_bytes), *m.kv_tokens, m.kv_bytes_per_token.value_or(0), b.kv_dtype, m.kv_tokens_low.value_or(0),
        m.kv_tokens_high.value_or(0));
  else
    out += fmt::format("  KV cache          {} ({})\n", gib_text(m.kv_bytes), b.kv_not_modelled);
  if (m.max_concurrency)
    out += fmt::format("  max_model_len     {} tokens: {:.2f} requests at once\n", m.max_model_len.value_or(0),
                       *m.max_concurrency);
  out += fmt::format("  verdict           {}{}\n", shown(m.status), m.fix ? " (fix: " + *m.fix + ")" : "");
  if (b.engine_version_note) out += fmt::format("  note: {}\n", *b.engine_version_note);
  if (b.shared_gpu_note) out += fmt::format("  note: {}\n", *b.shared_gpu_note);
}

}  // namespace

FindingCounts count_findings(const Report& r) {
  FindingCounts c;
  for (const auto& res : r.results) {
    if (res.suppressed) {
      ++c.suppressed;
      continue;
    }
    switch (res.status) {
      case ResultStatus::pass:
        ++c.passed;
        break;
      case ResultStatus::skip:
        ++c.not_applicable;
        break;
      case ResultStatus::error:
        ++c.undecided;
        break;
      case ResultStatus::fail:
        if (blocking(res))
          ++c.errors;
        else if (at_risk(res))
          ++c.at_risk;
        else if (res.severity == Severity::warning)
          ++c.warnings;
        else {
          ++c.notes;
          if (!res.only_before.empty()) ++c.older_only;
        }
        break;
    }
  }
  return c;
}

std::string findings_line(const FindingCounts& c) {
  auto n = [](int count, const char* one, const char* many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
  };
  std::string found;
  for (const auto& [count, text] :
       {std::pair{c.errors, n(c.errors, "error", "errors")}, std::pair{c.at_risk, n(c.at_risk, "at risk", "at risk")},
        std::pair{c.warnings, n(c.warnings, "warning", "warnings")}, std::pair{c.notes, n(c.notes, "note", "notes")},
        std::pair{c.suppressed, n(c.suppressed, "suppressed", "suppressed")}})
    if (count > 0) found += (found.empty() ? "" : ", ") + text;
  if (found.empty()) found = "no findings";
  std::string rest = fmt::format("{} passed, {} not applicable", c.passed, c.not_applicable);
  if (c.undecided > 0) rest += fmt::format(", {} undecided", c.undecided);
  return found + "; " + rest;
}

namespace {
template <typename T>
std::string joined(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", item);
  return out.empty() ? "none" : out;
}
}  // namespace

std::string list_text(const std::vector<int>& items) { return joined(items); }
std::string list_text(const std::vector<std::string>& items) { return joined(items); }

std::string evaluated_count(const Report& r) {
  size_t advisories = 0;
  for (const auto& res : r.results) advisories += res.advisory ? 1 : 0;
  const size_t rules = r.results.size() - advisories;
  return advisories ? fmt::format("{} rules and {} advisories", rules, advisories) : fmt::format("{} rules", rules);
}

int text_width(int fd) {
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (end && *end == '\0' && n >= 0 && n < 100000) return static_cast<int>(n);
  }
  winsize ws{};
  if (isatty(fd) == 1 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kDefaultTextWidth;
}

bool want_color(const std::string& flag, int fd) {
  if (flag == "always") return true;
  if (flag == "never") return false;
  auto env = [](const char* n) {
    const char* v = std::getenv(n);
    return v && *v;
  };
  if (env("FORCE_COLOR") || env("CLICOLOR_FORCE")) return !env("NO_COLOR") || env("FORCE_COLOR");
  if (env("NO_COLOR")) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string_view(term) == "dumb") return false;
  return isatty(fd) == 1;
}

namespace {

// Columns a line takes on a terminal: UTF-8 code points, less ANSI colour sequences.
size_t visible_width(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b') {
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// LINE broken at spaces into lines of at most WIDTH columns where it can be (a word longer than
// the width stays whole); continuation lines are indented four more than the line.
void wrap_line(std::string_view line, size_t width, std::string& out) {
  size_t indent = 0;
  while (indent < line.size() && line[indent] == ' ') ++indent;
  const std::string hang(indent + 4, ' ');
  bool first = true;
  while (true) {
    const size_t avail = first ? width : width - std::min(width - 8, hang.size());
    if (visible_width(line) <= avail) break;
    // The last space at or before the width, outside colour sequences and leading indentation.
    size_t cut = std::string_view::npos, cols = 0;
    bool in_escape = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') in_escape = true;
      if (in_escape) {
        in_escape = line[i] != 'm';
        continue;
      }
      if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
      if (cols >= avail) break;
      if (line[i] == ' ' && i > indent) cut = i;
      ++cols;
    }
    if (cut == std::string_view::npos) break;
    out.append(line.substr(0, cut));
    out += '\n';
    out += hang;
    line.remove_prefix(cut + 1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    first = false;
  }
  out.append(line);
}

}  // namespace

std::string wrap_text(std::string_view text, int width) {
  if (width < 20) return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    wrap_line(text.substr(start, end - start), static_cast<size_t>(width), out);
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string render_text(const Report& r, const TextStyle& style) {
  std::string out = render_text_lines(r, style);
  return style.width > 0 ? wrap_text(out, style.width) : out;
}

std::string render_text_lines(const Report& r, const TextStyle& style) {
  const Paint paint{style.color};
  std::string out;
  if (!style.quiet) print_summary_header(out, r, paint);

  const FindingCounts counts = count_findings(r);
  std::vector<std::string> ids_seen;
  bool any_line = false;
  // Findings about older releases only (the engine version unknown): one line at the end, each
  // listed with --verbose.
  std::string older_than;
  for (const auto& res : r.results) {
    const bool older = res.status == ResultStatus::fail && !res.only_before.empty() && !res.suppressed;
    if (older && (older_than.empty() || res.only_before > older_than)) older_than = res.only_before;
    const bool show = (res.status == ResultStatus::fail && (!older || style.verbose)) ||
                      (style.verbose && !style.quiet) || (!style.quiet && res.status == ResultStatus::error);
    if (!show) continue;
    if (!any_line && !style.quiet) out += "\n";
    any_line = true;
    const std::string loc = res.location.str();
    if (res.status == ResultStatus::fail) {
      // A conditional error is "at risk", with its condition; the rest by severity.
      const std::string label =
          at_risk(res) || (res.suppressed && res.certainty == Certainty::conditional && res.severity == Severity::error)
              ? paint(fmt::fg(fmt::terminal_color::yellow), "at risk")
              : paint(sev_color(res.severity), to_string(res.severity));
      out += fmt::format("{}{}: {} [{}]{}\n", loc.empty() ? "" : loc + ": ", label, res.message, res.id,
                         res.suppressed ? " (suppressed: " + res.suppressed->reason + ")" : "");
      if (!style.quiet) {
        if (res.certainty == Certainty::conditional && !res.condition.empty())
          out += fmt::format("    condition: {}\n", res.condition);
        out += fmt::format("    stage: {} — {}\n", to_string(res.stage), res.title);
        out += fmt::format("    fix: {}\n", res.remediation);
      }
      ids_seen.push_back(res.id);
    } else {
      out += fmt::format("{}: {} [{}] {}{}\n",
                         paint(res.status == ResultStatus::error ? fmt::fg(fmt::terminal_color::magenta) : kDim,
                               to_string(res.status)),
                         res.title, res.id, res.message.empty() ? "" : "— ", res.message);
    }
    if (style.verbose && !res.evidence.empty())
      out += fmt::format("    evidence: {}\n", res.evidence.dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  if (style.explain_memory) print_memory_breakdown(out, r.plan.memory);

  if (r.matrix && !style.quiet) {
    const SupportMatrix& m = *r.matrix;
    out += fmt::format("\nsupport matrix ({}):\n", matrix_legend());
    const std::string req_b = r.plan.attention.selected.value_or("-");
    const std::string& req_kv = r.plan.attention.kv_cache_dtype;
    out += render_matrix_rows(m, req_b);
    out += fmt::format("  working k with {} / {}: {}; largest: {}\n", req_b, req_kv, list_text(m.working_k),
                       m.max_working_k ? std::to_string(*m.max_working_k) : "none");
    // How the plan's row is known, cell by cell (the other rows: --format json).
    const bool row_named =
        std::any_of(m.cells.begin(), m.cells.end(), [&](const MatrixCell& c) { return c.backend == req_b; });
    if (const std::string ev = render_cell_evidence(m, row_named ? req_b : std::string(), req_kv); !ev.empty())
      out += "  that row beyond the rules (what was measured or asked, and why a cell is unknown):\n" + ev;
    if (!m.alternative_backends.empty())
      out += fmt::format("  the requested k works with backend {}\n", list_text(m.alternative_backends));
    if (!m.alternative_kv_cache_dtypes.empty())
      out += fmt::format("  the requested k works with kv cache dtype {}\n", list_text(m.alternative_kv_cache_dtypes));
  }

  if (!r.notes.empty() && !style.quiet) {
    out += "\nnotes:\n";
    for (const auto& n : r.notes) {
      const std::string loc = n.where.str();
      out += fmt::format("  {}{}: {}\n", loc.empty() ? "" : loc + ": ", n.severity, n.message);
    }
  }
  // What the evaluation assumed and what it could not decide: shown in every mode, -q included.
  if (!r.assumptions.empty()) {
    out += "\nassumed:\n";
    for (const auto& a : r.assumptions) out += fmt::format("  {}\n", a);
  }
  if (!r.missing.empty()) {
    out += "\ncould not decide without:\n";
    for (const auto& m : r.missing) {
      std::string by;
      for (const auto& b : m.needed_by) by += (by.empty() ? "" : ", ") + b;
      out += fmt::format("  {} (needed by {}): {}\n", m.fact, by, m.supply);
    }
  }
  if (style.verbose && !style.quiet) {
    out += "\nfacts:\n";
    const Json flat = flatten_facts(r.facts);
    for (auto it = flat.begin(); it != flat.end(); ++it)
      out += fmt::format("  {} = {}\n", it.key(), it.value().dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  if (counts.older_only > 0 && !style.verbose && !style.quiet) {
    const std::string engine = r.engine.empty() ? "engine" : r.engine;
    out += fmt::format(
        "\n{} known issue{} apply only to releases older than the newest ({} at the latest): give the "
        "version (--lib {}=VERSION or --python) to check {}, --verbose to list {}\n",
        counts.older_only, counts.older_only == 1 ? "" : "s", older_than, engine,
        counts.older_only == 1 ? "it" : "them", counts.older_only == 1 ? "it" : "them");
  }
  std::string verdict = r.verdict;
  const fmt::text_style vcolor = bold(verdict == "supported"              ? fmt::terminal_color::green
                                      : verdict == "supported-with-risks" ? fmt::terminal_color::yellow
                                      : verdict == "not-supported"        ? fmt::terminal_color::red
                                                                          : fmt::terminal_color::magenta);
  out += fmt::format("\n{}: {} — {} ({})\n", paint(kBold, "verdict"), paint(vcolor, verdict), findings_line(counts),
                     evaluated_count(r));
  if (!ids_seen.empty() && !style.quiet) {
    out += "for more information:";
    for (const auto& id : ids_seen) out += " specprobe explain " + id + ";";
    out.back() = '\n';
  }
  return out;
}

}  // namespace specprobe
