// Known-GPU table for offline evaluation (--gpu NAME|sm_XY) and GPU facts.
// Figures are datasheet values (memory, bandwidth, SM count) and the per-block opt-in shared memory
// limits used by DeepGEMM/FlashInfer (232448 B on SM90/SM100, 101376 B on SM86/89/12x:
// deepseek-ai/DeepGEMM csrc/jit_kernels/heuristics/sm90.hpp L14, sm100.hpp L15 @54e2261 and
// sm120.hpp L14 @a6b593d; flashinfer-ai/flashinfer include/flashinfer/utils.cuh @fb28d724). A
// declared GPU is a stand-in: facts carry gpu.source = "declared" and the report says so.
#include "gpu/gpu_info.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>

namespace specprobe {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr int64_t kGBps = 1000LL * 1000 * 1000;

struct KnownGpu {
  const char* aliases;  // '|'-separated, matched case-insensitively after removing ' ', '-', '_'
  const char* name;
  int cc_major, cc_minor, sm_count;
  int64_t smem_optin, smem_per_sm, l2, memory, bandwidth;
};

// Per-arch opt-in shared memory per block (bytes).
constexpr int64_t kSmem227 = 232448;  // SM90, SM100 (227 KB)
constexpr int64_t kSmem163 = 166912;  // SM80 (163 KB)
constexpr int64_t kSmem99 = 101376;   // SM86, SM89, SM120, SM121 (99 KB)

// Memory: what the driver reports (cuDeviceTotalMem = torch total_memory: the datasheet figure less
// ECC and driver reservations), as public logs print it (PyTorch "total capacity of X GiB", vLLM
// "Free memory on device (free/total GiB)", deviceQuery bytes); the datasheet figure where no log
// was found (H100 PCIe, H800, L40S, A5000, GB200, B300, most AMD parts). Sources per GPU:
// docs/memory.md. drv(G): G GiB to the MiB.
constexpr int64_t drv(double gib) { return static_cast<int64_t>(gib * 1024 + 0.5) * kMiB; }

const KnownGpu kKnownGpus[] = {
    {"v100|v100sxm2", "Tesla V100-SXM2-32GB", 7, 0, 80, 98304, 98304, 6 * kMiB, drv(31.74), 900 * kGBps},
    {"t4", "Tesla T4", 7, 5, 40, 65536, 65536, 4 * kMiB, drv(14.75), 320 * kGBps},
    {"a100|a100sxm|a10080gb|a100sxm480gb", "NVIDIA A100-SXM4-80GB", 8, 0, 108, kSmem163, 167936, 40 * kMiB, drv(79.15),
     2039 * kGBps},
    {"a800|a800sxm4|a800sxm480gb", "NVIDIA A800-SXM4-80GB", 8, 0, 108, kSmem163, 167936, 40 * kMiB, drv(79.33),
     2039 * kGBps},
    {"a10040gb|a100pcie", "NVIDIA A100-PCIE-40GB", 8, 0, 108, kSmem163, 167936, 40 * kMiB, 42298834944, 1555 * kGBps},
    // The 40 GB SXM4 part (HBM2, 1,555 GB/s: NVIDIA A100 datasheet); without it, "A100-SXM4-40GB"
    // lost its size to the tail rule in lookup_keys and was read as the 80 GB card.
    {"a100sxm440gb|a100sxm40gb", "NVIDIA A100-SXM4-40GB", 8, 0, 108, kSmem163, 167936, 40 * kMiB, 42298834944,
     1555 * kGBps},
    {"a10|a10g", "NVIDIA A10", 8, 6, 72, kSmem99, 102400, 6 * kMiB, drv(21.99), 600 * kGBps},
    {"rtx3090|3090|geforcertx3090", "NVIDIA GeForce RTX 3090", 8, 6, 82, kSmem99, 102400, 6 * kMiB, drv(23.70),
     936 * kGBps},
    {"a4000|rtxa4000", "NVIDIA RTX A4000", 8, 6, 48, kSmem99, 102400, 4 * kMiB, drv(15.61), 448 * kGBps},
    {"a5000|rtxa5000", "NVIDIA RTX A5000", 8, 6, 64, kSmem99, 102400, 6 * kMiB, 24 * kGiB, 768 * kGBps},
    {"a6000|rtxa6000", "NVIDIA RTX A6000", 8, 6, 84, kSmem99, 102400, 6 * kMiB, drv(47.53), 768 * kGBps},
    {"l4", "NVIDIA L4", 8, 9, 58, kSmem99, 102400, 48 * kMiB, drv(22.03), 300 * kGBps},
    {"l40s", "NVIDIA L40S", 8, 9, 142, kSmem99, 102400, 96 * kMiB, 48 * kGiB, 864 * kGBps},
    {"rtx4090|4090|geforcertx4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, kSmem99, 102400, 72 * kMiB, drv(23.64),
     1008 * kGBps},
    {"h100|h100sxm|h100sxm5|h10080gbhbm3", "NVIDIA H100 80GB HBM3", 9, 0, 132, kSmem227, 233472, 50 * kMiB, drv(79.11),
     3350 * kGBps},
    {"h800|h800sxm|h800sxm5", "NVIDIA H800", 9, 0, 132, kSmem227, 233472, 50 * kMiB, 80 * kGiB, 3350 * kGBps},
    {"h100pcie", "NVIDIA H100 PCIe", 9, 0, 114, kSmem227, 233472, 50 * kMiB, 80 * kGiB, 2000 * kGBps},
    {"h100nvl", "NVIDIA H100 NVL", 9, 0, 132, kSmem227, 233472, 50 * kMiB, drv(93.00), 3900 * kGBps},
    {"h200|h200sxm", "NVIDIA H200", 9, 0, 132, kSmem227, 233472, 60 * kMiB, 150109880320, 4800 * kGBps},
    {"h20", "NVIDIA H20", 9, 0, 78, kSmem227, 233472, 60 * kMiB, drv(95.08), 4000 * kGBps},
    {"gh200", "NVIDIA GH200 480GB", 9, 0, 132, kSmem227, 233472, 60 * kMiB, drv(94.88), 4000 * kGBps},
    {"b200", "NVIDIA B200", 10, 0, 148, kSmem227, 233472, 126 * kMiB, drv(178.35), 8000 * kGBps},
    {"gb200", "NVIDIA GB200", 10, 0, 148, kSmem227, 233472, 126 * kMiB, 186 * kGiB, 8000 * kGBps},
    {"b300|gb300", "NVIDIA B300", 10, 3, 148, kSmem227, 233472, 126 * kMiB, 288 * kGiB, 8000 * kGBps},
    {"rtx5090|5090|geforcertx5090", "NVIDIA GeForce RTX 5090", 12, 0, 170, kSmem99, 102400, 96 * kMiB, drv(31.36),
     1792 * kGBps},
    {"rtxpro6000|rtxpro6000blackwell|pro6000", "NVIDIA RTX PRO 6000 Blackwell", 12, 0, 188, kSmem99, 102400, 128 * kMiB,
     drv(94.97), 1792 * kGBps},
    {"gb10|dgxspark|spark", "NVIDIA GB10", 12, 1, 48, kSmem99, 102400, 24 * kMiB, drv(121.69), 273 * kGBps},
};

// AMD Instinct and Radeon parts the engines serve on (ROCm). CUs in sm_count; LDS per workgroup
// in smem_optin; datasheet memory and bandwidth.
struct KnownAmdGpu {
  const char* aliases;
  const char* name;
  const char* arch;  // gfx target
  int cus;
  int64_t lds, l2, memory, bandwidth;
};
const KnownAmdGpu kKnownAmdGpus[] = {
    {"mi210", "AMD Instinct MI210", "gfx90a", 104, 64 * kKiB, 8 * kMiB, 64 * kGiB, 1638 * kGBps},
    {"mi250|mi250x", "AMD Instinct MI250X", "gfx90a", 220, 64 * kKiB, 16 * kMiB, 128 * kGiB, 3277 * kGBps},
    {"mi300x|mi300", "AMD Instinct MI300X", "gfx942", 304, 64 * kKiB, 32 * kMiB, 192 * kGiB, 5300 * kGBps},
    {"mi300a", "AMD Instinct MI300A", "gfx942", 228, 64 * kKiB, 32 * kMiB, 128 * kGiB, 5300 * kGBps},
    {"mi325x", "AMD Instinct MI325X", "gfx942", 304, 64 * kKiB, 32 * kMiB, drv(255.98), 6000 * kGBps},
    {"mi350x|mi350", "AMD Instinct MI350X", "gfx950", 256, 160 * kKiB, 32 * kMiB, 288 * kGiB, 8000 * kGBps},
    {"mi355x|mi355", "AMD Instinct MI355X", "gfx950", 256, 160 * kKiB, 32 * kMiB, 288 * kGiB, 8000 * kGBps},
    {"rx7900xtx|7900xtx", "AMD Radeon RX 7900 XTX", "gfx1100", 96, 64 * kKiB, 6 * kMiB, 24 * kGiB, 960 * kGBps},
    {"w7900|radeonprow7900", "AMD Radeon PRO W7900", "gfx1100", 96, 64 * kKiB, 6 * kMiB, 48 * kGiB, 864 * kGBps},
    {"rx9070xt|9070xt", "AMD Radeon RX 9070 XT", "gfx1201", 64, 64 * kKiB, 8 * kMiB, 16 * kGiB, 640 * kGBps},
    {"r9700|radeonaipror9700", "AMD Radeon AI PRO R9700", "gfx1201", 64, 64 * kKiB, 8 * kMiB, 32 * kGiB, 640 * kGBps},
};

struct ArchDefault {
  int major, minor;
  int64_t smem_optin;
};
const ArchDefault kArchDefaults[] = {
    {7, 0, 98304},    {7, 5, 65536},     {8, 0, kSmem163},  {8, 6, kSmem99},   {8, 7, kSmem163}, {8, 9, kSmem99},
    {9, 0, kSmem227}, {10, 0, kSmem227}, {10, 3, kSmem227}, {11, 0, kSmem227}, {12, 0, kSmem99}, {12, 1, kSmem99},
};

std::string squash(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_' && c != '.')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

GpuInfo from_known(const KnownGpu& k) {
  GpuInfo g;
  g.ordinal = 0;
  g.name = k.name;
  g.cc_major = k.cc_major;
  g.cc_minor = k.cc_minor;
  g.sm_count = k.sm_count;
  g.smem_per_block_optin = k.smem_optin;
  g.smem_per_sm = k.smem_per_sm;
  g.l2_bytes = k.l2;
  g.memory_bytes = k.memory;
  g.memory_bandwidth_bytes_per_s = k.bandwidth;
  g.source = "declared";
  return g;
}

// "sm_90", "sm90", "sm_90a", "9.0", "90", "sm121" -> (major, minor)
bool parse_arch(std::string s, int& major, int& minor) {
  s = squash(s);
  if (s.rfind("sm", 0) == 0) s = s.substr(2);
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.pop_back();
  if (s.empty() || s.size() > 3) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const int v = std::stoi(s);
  major = v / 10;
  minor = v % 10;
  return major >= 5;
}

GpuInfo from_known_amd(const KnownAmdGpu& k) {
  GpuInfo g;
  g.ordinal = 0;
  g.name = k.name;
  g.vendor = "amd";
  g.arch = k.arch;
  g.sm_count = k.cus;
  g.smem_per_block_optin = k.lds;
  g.smem_per_sm = k.lds;
  g.l2_bytes = k.l2;
  g.memory_bytes = k.memory;
  g.memory_bandwidth_bytes_per_s = k.bandwidth;
  g.source = "declared";
  return g;
}

}  // namespace

std::string GpuInfo::arch_family() const {
  if (vendor == "amd") {
    if (arch.rfind("gfx9", 0) == 0) return "gfx9";
    if (arch.rfind("gfx11", 0) == 0) return "gfx11";
    if (arch.rfind("gfx12", 0) == 0) return "gfx12";
    return arch;
  }
  if (cc_major == 9) return "sm90";
  if (cc_major == 10 || cc_major == 11) return "sm100";
  if (cc_major == 12) return "sm12x";
  return fmt::format("sm{}x", cc_major);
}

Json gpu_facts(const GpuInfo& g) {
  Json j = Json::object();
  j["name"] = g.name;
  j["vendor"] = g.vendor;
  const bool nvidia = g.vendor == "nvidia";
  j["sm"] = nvidia ? Json(g.sm()) : Json(nullptr);
  j["cc_major"] = nvidia ? Json(g.cc_major) : Json(nullptr);
  j["cc_minor"] = nvidia ? Json(g.cc_minor) : Json(nullptr);
  j["cc"] = nvidia ? Json(fmt::format("{}.{}", g.cc_major, g.cc_minor)) : Json(nullptr);
  j["arch_family"] = g.arch_family();
  if (!nvidia) j["arch"] = g.arch;
  j["sm_count"] = g.sm_count > 0 ? Json(g.sm_count) : Json(nullptr);
  j["smem_optin_bytes"] = g.smem_per_block_optin > 0 ? Json(g.smem_per_block_optin) : Json(nullptr);
  j["smem_per_sm_bytes"] = g.smem_per_sm > 0 ? Json(g.smem_per_sm) : Json(nullptr);
  j["l2_bytes"] = g.l2_bytes > 0 ? Json(g.l2_bytes) : Json(nullptr);
  j["memory_bytes"] = g.memory_bytes > 0 ? Json(g.memory_bytes) : Json(nullptr);
  j["memory_bandwidth_bytes_per_s"] =
      g.memory_bandwidth_bytes_per_s > 0 ? Json(g.memory_bandwidth_bytes_per_s) : Json(nullptr);
  j["source"] = g.source;
  if (!g.pci_bus_id.empty()) j["pci_bus_id"] = g.pci_bus_id;
  if (g.memory_free_bytes >= 0) j["memory_free_bytes"] = g.memory_free_bytes;
  if (g.memory_used_bytes >= 0) j["memory_used_bytes"] = g.memory_used_bytes;
  if (!g.uuid_hash.empty()) j["uuid_hash"] = g.uuid_hash;
  return j;
}

// The names a GPU goes by in logs and deploy files, reduced to a table alias: "NVIDIA GeForce RTX
// 4090" -> rtx4090, "NVIDIA A100 80GB PCIe" -> a100, "H20 96GB" -> h20 (tried after the name as given).
std::vector<std::string> lookup_keys(const std::string& name) {
  std::vector<std::string> keys{squash(name)};
  std::string k = keys.front();
  for (const char* p : {"nvidia", "geforce", "tesla", "quadro"})
    if (k.rfind(p, 0) == 0 && k.size() > std::strlen(p)) k = k.substr(std::strlen(p));
  keys.push_back(k);
  // A trailing memory size and form factor: "80gb", "80gbhbm3", "sxm480gb", "96gb", "pcie". The
  // sizes are the cards' (a bare \d+gb also took the model number: "a10080gbpcie" became "a").
  static const std::regex tail(
      R"((sxm\d?|pcie)?((?:8|10|11|12|16|20|24|32|40|46|48|64|80|94|96|128|141|144|180|188|192|256|288)gb)?)"
      R"((hbm\de?|pcie|sxm\d?)?$)");
  const std::string stripped = std::regex_replace(k, tail, "");
  if (!stripped.empty() && stripped != k) keys.push_back(stripped);
  return keys;
}

Expected<GpuInfo> declared_gpu(const std::string& name) {
  const std::string key0 = squash(name);
  if (key0.empty()) return usage_error("--gpu needs a GPU name or an arch such as sm_90");
  for (const std::string& key : lookup_keys(name)) {
    for (const auto& k : kKnownGpus) {
      std::string_view aliases = k.aliases;
      while (!aliases.empty()) {
        const size_t bar = aliases.find('|');
        if (aliases.substr(0, bar) == key || squash(k.name) == key) return from_known(k);
        if (bar == std::string_view::npos) break;
        aliases.remove_prefix(bar + 1);
      }
    }
    for (const auto& k : kKnownAmdGpus) {
      std::string_view aliases = k.aliases;
      while (true) {
        const size_t bar = aliases.find('|');
        if (aliases.substr(0, bar) == key || squash(k.name) == key) return from_known_amd(k);
        if (bar == std::string_view::npos) break;
        aliases.remove_prefix(bar + 1);
      }
    }
  }
  const std::string& key = key0;
  if (key.rfind("gfx", 0) == 0 && key.size() >= 5 && key.size() <= 8) {
    GpuInfo g;
    g.ordinal = 0;
    g.vendor = "amd";
    g.arch = key;
    g.name = "AMD " + key;
    g.source = "declared";
    for (const auto& k : kKnownAmdGpus)
      if (k.arch == key) g.smem_per_block_optin = k.lds;
    return g;
  }
  int major = 0, minor = 0;
  if (parse_arch(name, major, minor)) {
    GpuInfo g;
    g.ordinal = 0;
    g.name = fmt::format("sm_{}{}", major, minor);
    g.cc_major = major;
    g.cc_minor = minor;
    for (const auto& a : kArchDefaults)
      if (a.major == major && a.minor == minor) g.smem_per_block_optin = a.smem_optin;
    g.source = "declared";
    return g;
  }
  std::string names;
  for (const auto& n : known_gpu_names()) names += (names.empty() ? "" : ", ") + n;
  return usage_error(
      fmt::format("unknown GPU '{}'; known: {}, or an arch such as sm_90, sm_121 or gfx942", name, names));
}

std::optional<std::string> gpu_name_from_label(std::string_view label) {
  // Words of the label, lower case, without the vendor words in front.
  std::vector<std::string> words;
  std::string cur;
  for (char c : label) {
    if (c == '-' || c == '_' || c == ' ' || c == '.') {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!cur.empty()) words.push_back(cur);
  // GKE's nvidia-tesla-a100 is the 40 GB part (nvidia-a100-80gb the 80 GB one).
  if (words == std::vector<std::string>{"nvidia", "tesla", "a100"}) return std::string("NVIDIA A100-PCIE-40GB");
  size_t first = 0;
  while (first < words.size() &&
         (words[first] == "nvidia" || words[first] == "tesla" || words[first] == "amd" || words[first] == "instinct"))
    ++first;
  auto lookup = [](const std::string& key) -> std::optional<std::string> {
    auto in = [&](std::string_view aliases, const char* name) {
      if (squash(name) == key) return true;
      while (true) {
        const size_t bar = aliases.find('|');
        if (aliases.substr(0, bar) == key) return true;
        if (bar == std::string_view::npos) return false;
        aliases.remove_prefix(bar + 1);
      }
    };
    for (const auto& k : kKnownGpus)
      if (in(k.aliases, k.name)) return std::string(k.name);
    for (const auto& k : kKnownAmdGpus)
      if (in(k.aliases, k.name)) return std::string(k.name);
    return std::nullopt;
  };
  // The most words that, joined, name a GPU of the table: "h100 80gb hbm3" before "h100".
  for (size_t n = words.size() - std::min(first, words.size()); n > 0; --n) {
    std::string key;
    for (size_t i = first; i < first + n; ++i) key += words[i];
    if (auto name = lookup(key)) return name;
  }
  return std::nullopt;
}

std::vector<std::string> known_gpu_names() {
  std::vector<std::string> out;
  for (const auto& k : kKnownGpus) {
    std::string_view a = k.aliases;
    out.emplace_back(a.substr(0, a.find('|')));
  }
  for (const auto& k : kKnownAmdGpus) {
    std::string_view a = k.aliases;
    out.emplace_back(a.substr(0, a.find('|')));
  }
  for (auto& s : out)
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Expected<Json> declared_gpu_facts(const std::string& name) {
  auto g = declared_gpu(name);
  if (!g) return g.error();
  Json f = gpu_facts(*g);
  f["declared"] = name;
  return f;
}

std::string gpu_arch_label(const Json& facts) {
  if (auto arch = fact_string(facts, "gpu.arch")) return *arch;
  if (auto sm = fact_int(facts, "gpu.sm")) return fmt::format("sm_{}", *sm);
  return "?";
}

}  // namespace specprobe
