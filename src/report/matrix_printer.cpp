// The support matrix as a table (text report and `specprobe matrix`) and the `matrix` command's
// JSON document: one renderer for the cells, used by both.
#include <algorithm>

#include "report/printers.hpp"

namespace specprobe {
namespace {

// Largest working k per backend for the plan's kv-cache dtype (null: none).
Json max_k_by_backend(const Report& r) {
  Json out = Json::object();
  if (!r.matrix) return out;
  const std::string& kv = r.plan.attention.kv_cache_dtype;
  for (const auto& b : r.matrix->backends) {
    int best = -1;
    for (const auto& c : r.matrix->cells)
      if (c.backend == b && c.kv_cache_dtype == kv && (c.verdict == "works" || c.verdict == "at-risk"))
        best = std::max(best, c.k);
    const std::string name = b.empty() ? r.plan.attention.selected.value_or("default") : b;
    out[name] = best >= 0 ? Json(best) : Json(nullptr);
  }
  return out;
}

}  // namespace

std::string matrix_cell_token(const MatrixCell& c) {
  std::string t;
  if (c.verdict == "fails")
    t = "x";
  else if (c.verdict == "unknown")
    t = "?";
  else if (c.verdict == "at-risk")
    t = "ok!";
  else if (c.indexer == "flattened")
    t = "flat";
  else
    t = c.warnings.empty() ? "ok" : "ok*";
  // How it is known beyond the rules (MatrixCell::known_by): P probed, S stack, E engine.
  for (const auto& [kind, mark] : {std::pair{"probe", "P"}, std::pair{"stack", "S"}, std::pair{"engine", "E"}})
    if (std::find(c.known_by.begin(), c.known_by.end(), kind) != c.known_by.end()) t += mark;
  return t;
}

const char* matrix_legend() {
  return "k = num_speculative_tokens; ok, ok* with warnings, ok! at risk (fails only under a condition), flat = DSA "
         "indexer flattened, x fails, ? unknown; "
         "known by the rules and versions, and P = probed on this GPU by specprobe's kernels, S = the installed "
         "library asked, E = the installed engine asked";
}

std::string render_matrix_rows(const SupportMatrix& m, const std::string& default_backend) {
  std::string out;
  size_t width = 4;
  for (const auto& c : m.cells) width = std::max(width, matrix_cell_token(c).size());
  std::string head = fmt::format("  {:<22} {:<16}", "backend", "kv cache");
  for (int k : m.ks) head += fmt::format(" {:>{}}", fmt::format("k={}", k), width);
  out += head + "\n";
  for (const auto& b : m.backends)
    for (const auto& kv : m.kv_cache_dtypes) {
      std::string line = fmt::format("  {:<22} {:<16}", b.empty() ? default_backend : b, kv);
      for (int k : m.ks)
        for (const auto& c : m.cells)
          if (c.k == k && c.backend == b && c.kv_cache_dtype == kv)
            line += fmt::format(" {:>{}}", matrix_cell_token(c), width);
      out += line + "\n";
    }
  return out;
}

std::string render_cell_evidence(const SupportMatrix& m, const std::string& backend, const std::string& kv) {
  std::string out;
  for (const auto& c : m.cells) {
    if (c.backend != backend || c.kv_cache_dtype != kv) continue;
    if (c.verdict == "unknown") {
      std::string ids;
      for (const auto& id : c.undecided) ids += (ids.empty() ? "" : ", ") + id;
      out += fmt::format("    k={}: unknown: not decided: {} (a fact on its path is missing; see the verdict)\n", c.k,
                         ids.empty() ? std::string("a rule") : ids);
      continue;
    }
    for (const auto& e : c.evidence) out += fmt::format("    k={}: {}\n", c.k, e);
  }
  return out;
}

std::string render_matrix_table(const std::vector<std::string>& gpus, const std::vector<Report>& reports,
                                const std::string& what) {
  std::string out = fmt::format("specprobe matrix: {}\n", what);
  out += fmt::format("cells: {}\n", matrix_legend());
  for (size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    out += fmt::format("\n{} ({}, {}): plan {}", gpus[i], r.plan.gpu.name.value_or("unknown"), r.plan.gpu.arch_label,
                       r.verdict);
    if (!r.matrix) {
      out += "; no matrix\n";
      continue;
    }
    const SupportMatrix& m = *r.matrix;
    const std::string backend = r.plan.attention.selected.value_or("-");
    out += fmt::format("; largest working k with {} / {}: {}\n", backend, r.plan.attention.kv_cache_dtype,
                       m.max_working_k ? std::to_string(*m.max_working_k) : "none");
    out += render_matrix_rows(m, backend);
  }
  return out;
}

Json matrix_report_json(const std::vector<std::string>& gpus, const std::vector<Report>& reports, const Json& model,
                        const Json& config) {
  Json j = Json::object();
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = report_tool_json();
  j["model"] = model;
  j["config"] = config;
  Json list = Json::array();
  for (size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    Json g = Json::object();
    g["gpu"] = gpus[i];
    g["name"] = r.plan.gpu.name ? Json(*r.plan.gpu.name) : Json(nullptr);
    g["sm"] = r.plan.gpu.sm ? Json(*r.plan.gpu.sm) : Json(nullptr);
    g["engine"] = r.engine;
    g["attention_backend"] = r.plan.attention.selected ? Json(*r.plan.attention.selected) : Json(nullptr);
    g["kv_cache_dtype"] = r.plan.attention.kv_cache_dtype;
    g["verdict"] = r.verdict;
    g["max_k_by_backend"] = max_k_by_backend(r);
    g["findings"] = Json::array();
    for (const auto& res : r.results)
      if (res.status == ResultStatus::fail)
        g["findings"].push_back(
            {{"id", res.id}, {"severity", to_string(res.severity)}, {"suppressed", res.suppressed.has_value()}});
    g["matrix"] = r.matrix ? matrix_json(*r.matrix) : Json(nullptr);
    list.push_back(std::move(g));
  }
  j["gpus"] = list;
  return j;
}

}  // namespace specprobe
