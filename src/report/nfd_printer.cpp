// Node Feature Discovery feature-file printer (see printers.hpp). NFD's local source reads
// `name=value` lines from /etc/kubernetes/node-feature-discovery/features.d/* (dot-files are
// skipped); `#` lines are comments, and a `# +expiry-time=<RFC 3339>` directive makes the lines
// after it lapse at that time (source/local/local.go, NFD v0.13+). Names must be valid Kubernetes
// label keys (k8s.io/apimachinery validation: a DNS-subdomain prefix, a name of at most 63
// characters of [A-Za-z0-9._-], alphanumeric at both ends), so model and backend names are folded
// into that alphabet, and every name written is checked.
#include <algorithm>
#include <cctype>

#include "build_info.hpp"
#include "report/printers.hpp"

namespace specprobe {
namespace {

constexpr std::string_view kPrefix = "specprobe.io";
bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A DNS-1123 subdomain: dot-separated labels of [a-z0-9-], alphanumeric at both ends, 253 at most.
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t dot = std::min(s.find('.', start), s.size());
    const std::string_view label = s.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || !alnum(label.front()) || !alnum(label.back())) return false;
    for (char c : label)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
        return false;
    start = dot + 1;
  }
  return true;
}

}  // namespace

std::string nfd_label_segment(std::string_view s, size_t max) {
  std::string out;
  for (unsigned char c : s) {
    const char l = static_cast<char>(std::tolower(c));
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-')
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  if (out.size() > max) out.resize(max);
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !alnum(out[start])) ++start;
  return out.substr(start);
}

std::string nfd_label_problem(std::string_view key) {
  const size_t slash = key.find('/');
  const std::string_view prefix = slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos && !dns_subdomain(prefix))
    return fmt::format("the prefix '{}' is not a DNS subdomain", prefix);
  if (name.empty()) return "the name is empty";
  if (name.size() > 63) return fmt::format("the name has {} characters (at most 63)", name.size());
  if (!alnum(name.front()) || !alnum(name.back()))
    return fmt::format("the name '{}' must begin and end with a letter or digit", name);
  for (char c : name)
    if (!(alnum(c) || c == '.' || c == '_' || c == '-'))
      return fmt::format("the name '{}' has the character '{}'", name, c);
  return {};
}

Expected<NfdOutput> render_nfd(const Report& report, const NfdOptions& options) {
  std::string model = options.model;
  while (!model.empty() && model.back() == '/') model.pop_back();
  if (const auto slash = model.rfind('/'); slash != std::string::npos) model = model.substr(slash + 1);
  const std::string& kv = report.plan.attention.kv_cache_dtype;
  const std::string gpu = report.plan.gpu.name.value_or("unknown");

  NfdOutput result;
  std::string& out = result.text;
  // The directive comes first: it governs the lines after it.
  if (!options.expiry.empty()) out += fmt::format("# +expiry-time={}\n", options.expiry);
  out += fmt::format("# specprobe {} feature file: largest num_speculative_tokens that passes every rule{}\n",
                     kToolVersion, options.include_warnings ? " (warnings allowed)" : " with no warning");
  out += fmt::format("# gpu: {}; engine: {}; kv cache dtype: {}; config: {}\n", gpu, report.engine, kv,
                     report.input_path.empty() ? "-" : report.input_path);
  if (!report.matrix) {
    out += "# no support matrix was computed\n";
    return result;
  }
  const SupportMatrix& m = *report.matrix;

  // Each label name (after the prefix) is at most 63 characters: "<model>.<backend>.max-k".
  constexpr size_t kSuffix = 6;  // ".max-k"
  int best = -1;
  std::vector<std::pair<std::string, int>> rows;
  for (const auto& b : m.backends) {
    const std::string backend = b.empty() ? report.plan.attention.selected.value_or("default") : b;
    int max_k = -1;
    for (const auto& c : m.cells)
      if (c.backend == b && c.kv_cache_dtype == kv && c.verdict == "works" &&
          (options.include_warnings || c.warnings.empty()))
        max_k = std::max(max_k, c.k);
    rows.emplace_back(backend, max_k);
    best = std::max(best, max_k);
  }
  size_t backend_len = 0;
  for (const auto& [b, k] : rows) backend_len = std::max(backend_len, nfd_label_segment(b).size());
  const size_t room = 63 - kSuffix - 1 - std::min<size_t>(backend_len, 24);
  const std::string model_seg = nfd_label_segment(model, room);
  if (model_seg.empty())
    return input_error(
        fmt::format("the model name '{}' has no letter or digit to make an NFD label of (give --model-name)", model));
  std::string folded = model;
  std::transform(folded.begin(), folded.end(), folded.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (folded != model_seg) {
    result.notes.push_back(
        fmt::format("the model name '{}' is written as '{}' in the labels (Kubernetes label names: at most 63 "
                    "characters of [A-Za-z0-9._-], a letter or digit at both ends)",
                    model, model_seg));
    out += "# note: " + result.notes.back() + "\n";
  }
  auto label = [&](const std::string& name, int value) -> Status {
    const std::string key = fmt::format("{}/{}", kPrefix, name);
    if (const std::string why = nfd_label_problem(key); !why.empty())
      return internal_error(fmt::format("NFD label {} is not valid: {}", key, why));
    out += fmt::format("{}={}\n", key, value);
    return Ok{};
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [b, k] = rows[i];
    const std::string name = fmt::format("{}.{}.max-k", model_seg, nfd_label_segment(b, 24));
    if (k < 0) {
      out += fmt::format("# {}/{}: no k works with kv cache dtype {} on this GPU\n", kPrefix, name, kv);
      continue;
    }
    // How the label's value is known (MatrixCell::known_by of its cell), as the JSON report says.
    for (const auto& c : m.cells)
      if (c.backend == m.backends[i] && c.kv_cache_dtype == kv && c.k == k) {
        std::string by;
        for (const auto& s : c.known_by) by += (by.empty() ? "" : ", ") + s;
        out += fmt::format("# {}/{}: k={} known by {}\n", kPrefix, name, k, by.empty() ? "nothing" : by);
      }
    if (auto st = label(name, k); !st) return st.error();
  }
  if (best >= 0)
    if (auto st = label(fmt::format("{}.max-k", model_seg), best); !st) return st.error();
  return result;
}

}  // namespace specprobe
