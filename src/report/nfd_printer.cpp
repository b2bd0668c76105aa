// Node Feature Discovery feature-file printer (see printers.hpp). NFD's local source reads
// `name=value` lines from /etc/kubernetes/node-feature-discovery/features.d/*; '#' lines are
// comments. Names and values must be valid Kubernetes label segments (63 characters,
// alphanumeric at both ends), so model and backend names are folded into that alphabet.
#include <algorithm>
#include <cctype>

#include "build_info.hpp"
#include "report/printers.hpp"

namespace specprobe {

std::string nfd_label_segment(std::string_view s, size_t max) {
  std::string out;
  for (unsigned char c : s) {
    const char l = static_cast<char>(std::tolower(c));
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') out += l;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  if (out.size() > max) out.resize(max);
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !alnum(out[start])) ++start;
  return out.substr(start);
}

std::string render_nfd(const Report& report, const std::string& model_in) {
  std::string model = model_in;
  while (!model.empty() && model.back() == '/') model.pop_back();
  if (const auto slash = model.rfind('/'); slash != std::string::npos) model = model.substr(slash + 1);
  const std::string kv = fact_string(report.facts, "serve.kv_cache_dtype").value_or("auto");
  const std::string gpu = fact_string(report.facts, "gpu.name").value_or("unknown");

  std::string out;
  out += fmt::format("# specprobe {} feature file: largest num_speculative_tokens that passes every rule\n", kToolVersion);
  out += fmt::format("# gpu: {}; engine: {}; kv cache dtype: {}; config: {}\n", gpu, report.engine, kv,
                     report.input_path.empty() ? "-" : report.input_path);
  if (!report.matrix) return out + "# no support matrix was computed\n";
  const SupportMatrix& m = *report.matrix;

  // Each label name (after the prefix) is at most 63 characters: "<model>.<backend>.max-k".
  constexpr size_t kSuffix = 6;  // ".max-k"
  int best = -1;
  std::vector<std::pair<std::string, int>> rows;
  for (const auto& b : m.backends) {
    const std::string backend =
        b.empty() ? fact_string(report.facts, "attention.selected").value_or("default") : b;
    int max_k = -1;
    for (const auto& c : m.cells)
      if (c.backend == b && c.kv_cache_dtype == kv && c.verdict == "works") max_k = std::max(max_k, c.k);
    rows.emplace_back(backend, max_k);
    best = std::max(best, max_k);
  }
  size_t backend_len = 0;
  for (const auto& [b, k] : rows) backend_len = std::max(backend_len, nfd_label_segment(b).size());
  const size_t room = 63 - kSuffix - 1 - std::min<size_t>(backend_len, 24);
  const std::string model_seg = nfd_label_segment(model.empty() ? "model" : model, room);
  for (const auto& [b, k] : rows) {
    const std::string name = fmt::format("specprobe.io/{}.{}.max-k", model_seg, nfd_label_segment(b, 24));
    if (k < 0) out += fmt::format("# {}: no k works with kv cache dtype {} on this GPU\n", name, kv);
    else out += fmt::format("{}={}\n", name, k);
  }
  if (best >= 0) out += fmt::format("specprobe.io/{}.max-k={}\n", model_seg, best);
  return out;
}

}  // namespace specprobe
