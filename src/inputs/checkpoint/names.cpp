// On-disk -> runtime name translation: vLLM's hf_to_vllm_mapper renames, load-time fusion of shard
// modules, MTP layer names and the role of a module without its layer prefix. The per-architecture
// data these functions apply is in name_tables.cpp.
#include <cctype>
#include <regex>

#include "common/ascii.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {

std::string leaf_of(const std::string& s) {
  auto p = s.rfind('.');
  return p == std::string::npos ? s : s.substr(p + 1);
}

std::string apply_renames(std::string name, const std::vector<Rename>& rules) {
  // WeightsMapper._map_name order: exact renamings, regex, substr, prefix, suffix.
  for (Rename::Kind kind : {Rename::exact, Rename::regex, Rename::substr, Rename::prefix, Rename::suffix}) {
    for (const Rename& r : rules) {
      if (r.kind != kind) continue;
      if (kind == Rename::exact && name == r.from) {
        name = r.to;
        break;
      }
      if (kind == Rename::regex) {
        std::regex re(r.from);
        if (std::regex_search(name, re)) {
          name = std::regex_replace(name, re, r.to, std::regex_constants::format_first_only);
          break;
        }
      }
      if (kind == Rename::substr) {
        if (auto p = name.find(r.from); p != std::string::npos) {
          name.replace(p, r.from.size(), r.to);
          break;
        }
      }
      if (kind == Rename::prefix && starts_with(name, r.from)) {
        name = r.to + name.substr(r.from.size());
        break;
      }
      if (kind == Rename::suffix && ends_with(name, r.from)) {
        name = name.substr(0, name.size() - r.from.size()) + r.to;
        break;
      }
    }
  }
  return name;
}

std::string map_module(const std::string& module, const std::vector<Rename>& rules) {
  std::string w = apply_renames(module + ".weight", rules);
  return ends_with(w, ".weight") ? w.substr(0, w.size() - 7) : w;
}

std::string fuse(const std::string& name, const FusedMap& load_fuse) {
  for (const auto& [fused, shards] : load_fuse)
    for (const std::string& sh : shards)
      if (ends_with_path(name, sh)) return name.substr(0, name.size() - sh.size()) + fused;
  return name;
}

MtpPattern parse_mtp_pattern(const std::string& re) {
  MtpPattern p;
  size_t i = re[0] == '^' ? 1 : 0;
  for (; i < re.size() && re[i] != '('; ++i) {
    if (re[i] == '\\' && i + 1 < re.size()) ++i;
    p.prefix.push_back(re[i]);
  }
  p.indexed = re.compare(i, 5, "(\\d+)") == 0;
  return p;
}

std::optional<std::pair<int64_t, std::string>> match_mtp(const MtpPattern& p, const std::string& name) {
  if (!starts_with(name, p.prefix)) return std::nullopt;
  size_t i = p.prefix.size();
  if (!p.indexed) return std::make_pair(int64_t{-1}, name.substr(i));
  const size_t start = i;
  int64_t idx = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - start < 9) idx = idx * 10 + (name[i++] - '0');
  if (i == start || i >= name.size() || name[i] != '.') return std::nullopt;
  return std::make_pair(idx, name.substr(i + 1));
}

std::string role_of(const std::string& runtime) {
  const std::string_view s = runtime;
  for (size_t i = 0; i < s.size(); ++i) {
    size_t j = i;
    if (s.compare(i, 7, "layers.") == 0)
      j = i + 7;
    else if (s.compare(i, 11, "mtp_layers.") == 0)
      j = i + 11;
    else
      continue;
    const size_t digits = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j > digits && j < s.size() && s[j] == '.') return std::string(s.substr(j + 1));
  }
  if (starts_with(runtime, "mtp.")) return runtime.substr(4);
  return runtime;
}

}  // namespace specprobe::checkpoint
