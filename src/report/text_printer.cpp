// Text printer: compiler-style finding lines, verdict, support matrix, notes.
#include <sys/ioctl.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>

#include <fmt/color.h>

#include "gpu/gpu_info.hpp"
#include "report/printers.hpp"
#include "rules/evaluate.hpp"

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

void print_summary_header(std::string& out, const Report& r, const Paint& paint) {
  const Json& f = r.facts;
  auto s = [&](std::string_view path, std::string fallback = "unknown") {
    const Json* v = find_fact(f, path);
    return v && !v->is_null() ? display_value(*v) : fallback;
  };
  if (r.input_form == "none") {
    out += fmt::format("{} check: {}: no server started\n", paint(kBold, "specprobe"), r.input_path);
    return;
  }
  out += fmt::format(
      "{} {}: {} ({}), engine {}{}\n", paint(kBold, "specprobe"), r.input_path.empty() ? "-" : "check", r.input_path,
      r.input_form, r.engine,
      f.contains("engine") && !f["engine"].value("version", Json(nullptr)).is_null() ? " " + s("engine.version") : "");
  out += fmt::format("  gpu:       {} ({}, {}{})\n", s("gpu.name"), gpu_arch_label(f), s("gpu.source"),
                     find_fact(f, "gpu.declared_from") ? " from " + s("gpu.declared_from") : "");
  if (find_fact(f, "model.architecture"))
    out += fmt::format("  model:     {} ({}), heads {}/{} kv, GQA {} per rank{}{}\n", s("model.architecture"),
                       s("model.model_type"), s("model.num_attention_heads"), s("model.num_kv_heads"),
                       s("model.gqa_ratio"), fact_bool(f, "model.mla").value_or(false) ? ", MLA" : "",
                       fact_bool(f, "model.dsa.present").value_or(false) ? ", DSA indexer" : "");
  // Where a model's metadata came from: the Hub (at a commit) or the file read.
  auto origin = [&](const std::string& role, const std::string& path_fact) -> std::string {
    const std::string o = s("resolve." + role + ".origin", "");
    if (o.rfind("hub", 0) == 0)
      return fmt::format("the Hub ({}) at commit {}{}", s("resolve." + role + ".endpoint_host"),
                         s("resolve." + role + ".commit").substr(0, 12),
                         o == "hub" ? "" : ", " + o.substr(5, o.size() - 6));
    const Json* p = find_fact(f, path_fact);
    return p && p->is_string() ? p->get<std::string>() : std::string();
  };
  if (const std::string from = origin("model", "model.path"); !from.empty() && find_fact(f, "model.architecture"))
    out += fmt::format("             read from {}\n", from);
  if (!find_fact(f, "model.architecture")) out += fmt::format("  model:     {} (metadata not read)\n", s("model.id"));
  if (find_fact(f, "draft.architecture"))
    out += fmt::format("  draft:     {} {} ({}), read from {}\n", s("spec.draft_model"), s("draft.architecture"),
                       s("draft.model_type"), origin("draft", "draft.path"));
  const std::optional<bool> spec_on = fact_bool(f, "spec.enabled");
  if (spec_on.value_or(false))
    out += fmt::format("  spec:      {} k={} (next_n={})\n", s("spec.method"), s("spec.k"), s("spec.next_n"));
  else
    out += spec_on ? "  spec:      off\n" : "  spec:      unknown (left to what the file does not show)\n";
  const Json* kv = find_fact(f, "serve.kv_cache_dtype");
  out += fmt::format("  attention: {} ({}); kv cache {}; cudagraph {} -> {}\n", s("attention.selected"),
                     s("attention.selected_by"), kv && kv->is_null() ? "unknown" : s("serve.kv_cache_dtype", "auto"),
                     s("cudagraph.requested"), s("cudagraph.resolved"));
  if (fact_bool(f, "memory.modelled").value_or(false))
    out += fmt::format("  memory:    {}: {}\n", s("memory.status"), s("memory.summary"));
  else if (find_fact(f, "memory.reason"))
    out += fmt::format("  memory:    not modelled: {}\n", s("memory.reason"));
}

std::string gib_text(const Json* v) {
  return v && v->is_number() ? fmt::format("{:.2f} GiB", v->get<double>() / (1024.0 * 1024 * 1024)) : "unknown";
}

// --explain-memory: every term of the memory model, one per line, in the engine's order.
void print_memory_breakdown(std::string& out, const Json& f) {
  const Json* m = find_fact(f, "memory");
  if (!m || !m->is_object()) return;
  out += "\nmemory per GPU rank:\n";
  if (!m->value("modelled", false)) {
    out += fmt::format("  not modelled: {}\n", m->value("reason", std::string("unknown")));
    return;
  }
  const Json& b = m->contains("breakdown") ? (*m)["breakdown"] : Json::object();
  auto g = [&](const char* key) { return gib_text(m->contains(key) ? &(*m)[key] : nullptr); };
  auto bg = [&](const char* key) { return gib_text(b.contains(key) ? &b[key] : nullptr); };
  const std::string engine = b.value("engine", std::string("vllm"));
  const Json lay = b.value("layout", Json::object());
  out += fmt::format("  accounting        {} {}; TP {}, PP {}, DP {}, EP {}\n", engine,
                     b.contains("engine_version") && b["engine_version"].is_string()
                         ? b["engine_version"].get<std::string>()
                         : std::string("(version unknown: the newest release's accounting)"),
                     lay.value("tp", 1), lay.value("pp", 1), lay.value("dp", 1), lay.value("ep", 1));
  out += fmt::format("  GPU memory        {}\n", g("gpu_bytes"));
  out += fmt::format("  budget            {} = {:.3f} x GPU memory{} ({}, {})\n", g("budget_bytes"),
                     b.value("budget_fraction", 0.0), engine == "sglang" ? " free before the load" : "",
                     engine == "sglang" ? "mem_fraction_static" : "gpu_memory_utilization",
                     b.value("budget_fraction_source", std::string("given")));
  std::string parts;
  if (b.contains("weights_parts") && b["weights_parts"].is_object())
    for (auto it = b["weights_parts"].begin(); it != b["weights_parts"].end(); ++it)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", it.key(), gib_text(&it.value()));
  out +=
      fmt::format("  weights           {} (from {}, within {:.0f}%){}\n", g("weights_bytes"),
                  b.value("weights_source", std::string("config")) == "headers" ? "safetensors headers" : "config.json",
                  b.value("weights_margin", 0.03) * 100, parts.empty() ? "" : ": " + parts);
  if (m->value("drafter_bytes", 0) > 0) out += fmt::format("  drafter           {}\n", g("drafter_bytes"));
  out += fmt::format("  activation peak   {} (estimate, +/-50%: {} tokens, {} sequences in the profile run)\n",
                     bg("activation_bytes"), b.value("scheduler_tokens", 0.0), b.value("scheduler_seqs", 0.0));
  out += fmt::format("  non-torch memory  {} (estimate, +/-50%: CUDA context, NCCL, cuBLAS)\n", bg("overhead_bytes"));
  out += fmt::format("  CUDA graphs       {} (estimate; {})\n", g("graph_bytes"),
                     b.value("graphs_inside_budget", false) ? "inside the budget" : "outside the budget");
  if (m->contains("kv_tokens") && (*m)["kv_tokens"].is_number())
    out += fmt::format(
        "  KV cache          {} = {} tokens at {} bytes per token ({}; {} to {} tokens within the margin)\n",
        g("kv_bytes"), (*m)["kv_tokens"].get<int64_t>(), m->value("kv_bytes_per_token", 0),
        b.value("kv_dtype", std::string("auto")), m->value("kv_tokens_low", 0), m->value("kv_tokens_high", 0));
  else
    out += fmt::format("  KV cache          {} ({})\n", g("kv_bytes"),
                       b.value("kv_not_modelled", std::string("tokens not modelled")));
  if (m->contains("max_concurrency") && (*m)["max_concurrency"].is_number())
    out += fmt::format("  max_model_len     {} tokens: {:.2f} requests at once\n", m->value("max_model_len", 0),
                       (*m)["max_concurrency"].get<double>());
  out += fmt::format(
      "  verdict           {}{}\n", m->value("status", std::string("unknown")),
      m->contains("fix") && (*m)["fix"].is_string() ? " (fix: " + (*m)["fix"].get<std::string>() + ")" : "");
  if (b.contains("engine_version_note"))
    out += fmt::format("  note: {}\n", b["engine_version_note"].get<std::string>());
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

  if (style.explain_memory) print_memory_breakdown(out, r.facts);

  if (r.matrix && !style.quiet) {
    const SupportMatrix& m = *r.matrix;
    out += fmt::format("\nsupport matrix ({}):\n", matrix_legend());
    out += render_matrix_rows(m, fact_string(r.facts, "attention.selected").value_or("-"));
    const std::string req_b = fact_string(r.facts, "attention.selected").value_or("-");
    const std::string req_kv = fact_string(r.facts, "serve.kv_cache_dtype").value_or("auto");
    out += fmt::format("  working k with {} / {}: {}; largest: {}\n", req_b, req_kv, display_value(Json(m.working_k)),
                       m.max_working_k ? std::to_string(*m.max_working_k) : "none");
    // How the plan's row is known, cell by cell (the other rows: --format json).
    const bool row_named =
        std::any_of(m.cells.begin(), m.cells.end(), [&](const MatrixCell& c) { return c.backend == req_b; });
    if (const std::string ev = render_cell_evidence(m, row_named ? req_b : std::string(), req_kv); !ev.empty())
      out += "  that row beyond the rules (what was measured or asked, and why a cell is unknown):\n" + ev;
    if (!m.alternative_backends.empty())
      out += fmt::format("  the requested k works with backend {}\n", display_value(Json(m.alternative_backends)));
    if (!m.alternative_kv_cache_dtypes.empty())
      out += fmt::format("  the requested k works with kv cache dtype {}\n",
                         display_value(Json(m.alternative_kv_cache_dtypes)));
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
