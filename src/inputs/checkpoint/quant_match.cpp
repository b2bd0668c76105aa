// Matching the quantization config's ignore list and targets against runtime module names exactly
// as the serving engine does (vLLM's compressed_tensors/utils.py should_ignore_layer and
// find_matched_target, and each method's own skip check): the regex cache for
// "re:" entries and the matcher, one branch per skip-list semantics of a method.
#include <fnmatch.h>

#include <algorithm>

#include "common/ascii.hpp"
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe::checkpoint {

bool RegexCache::match(const std::string& pattern, const std::string& value) {
  auto it = cache_.find(pattern);
  if (it == cache_.end()) {
    std::optional<PyRegex> re;
    auto compiled = PyRegex::compile(pattern);
    if (auto* why = std::get_if<std::string>(&compiled))
      bad_.emplace(pattern, *why);
    else
      re.emplace(std::move(std::get<PyRegex>(compiled)));
    it = cache_.emplace(pattern, std::move(re)).first;
  }
  return it->second && it->second->match(value);
}

bool Matcher::ct_match(const std::string& value, const std::string& target, bool contains) {
  if (starts_with(target, "re:")) return re.match(target.substr(3), value);
  if (contains) return ascii_lower(value).find(ascii_lower(target)) != std::string::npos;
  return value == target;
}

namespace {

// NAME in a text-only model's naming: the multimodal wrappers' prefixes of the language model
// ("model.language_model.", "language_model.model.") become "model.".
std::string text_model_name(const std::string& name) {
  for (const char* wrapped : {"model.language_model.", "language_model.model."})
    if (starts_with(name, wrapped)) return "model." + name.substr(std::string_view(wrapped).size());
  return name;
}

}  // namespace

bool Matcher::skip_entry_matches(const std::string& name, const std::string& entry) {
  switch (q.skip_match) {
    case SkipMatch::exact_or_re:
      return ct_match(name, entry, sglang);
    case SkipMatch::exact_fused:
      if (name == entry) return true;
      return name.find("experts") != std::string::npos && entry.find("experts") != std::string::npos &&
             entry.find(name) != std::string::npos;
    case SkipMatch::substring:
      return name.find(entry) != std::string::npos;
    case SkipMatch::modelopt: {
      if (name == entry || name.find(entry) != std::string::npos) return true;
      const std::string stripped = starts_with(name, "language_model.") ? name.substr(15) : name;
      if (stripped.find(entry) != std::string::npos) return true;
      // glibc fnmatch backtracks once per '*' (time ~ len^stars): bound the stars of a downloaded glob.
      if (std::count(entry.begin(), entry.end(), '*') > 8) return false;
      if (fnmatch(entry.c_str(), name.c_str(), 0) == 0) return true;
      // A multimodal export names its text model's modules "model.language_model.layers.N..."; the
      // engine maps the list through the model's HF-to-runtime names before matching
      // (modelopt.py apply_vllm_mapper with e.g. gemma4_mm.py's hf_to_vllm_mapper), so an entry
      // and a name in either naming meet in the text-only one ("model.layers.N...").
      const std::string e = text_model_name(entry), n = text_model_name(name);
      if (e == entry && n == name) return false;
      return n == e || n.find(e) != std::string::npos || fnmatch(e.c_str(), n.c_str(), 0) == 0;
    }
    case SkipMatch::bnb_component: {
      if (starts_with(name, entry + ".") || name == entry) return true;
      size_t s = 0;
      while (s <= name.size()) {
        size_t e = name.find('.', s);
        if (e == std::string::npos) e = name.size();
        if (name.compare(s, e - s, entry) == 0) return true;
        s = e + 1;
      }
      return false;
    }
    case SkipMatch::none:
      return false;
  }
  return false;
}

bool Matcher::skipped_single(const std::string& name, const std::vector<std::string>& skip) {
  for (const std::string& e : skip)
    if (skip_entry_matches(name, e)) return true;
  return false;
}

bool Matcher::skipped(const std::string& name, const std::vector<std::string>& skip, bool& disagree,
                      std::vector<std::string>* shard_names) {
  const std::string proj = leaf_of(name);
  const bool literal = std::find(skip.begin(), skip.end(), name) != skip.end();
  if (arch && !literal) {
    for (const auto& [fused, shards] : arch->packed_map) {
      if (fused != proj) continue;
      int hits = 0;
      for (const std::string& sh : shards) {
        std::string shard_name = name;
        shard_name.replace(shard_name.rfind(proj), proj.size(), sh);
        if (shard_names) shard_names->push_back(shard_name);
        hits += skipped_single(shard_name, skip) ? 1 : 0;
      }
      if (hits != 0 && hits != static_cast<int>(shards.size())) disagree = true;
      return hits == static_cast<int>(shards.size());
    }
  }
  return skipped_single(name, skip);
}

bool Matcher::target_matched(const std::string& name, Kind kind) {
  const std::string cls = kind == Kind::moe       ? "FusedMoE RoutedExperts"
                          : kind == Kind::lm_head ? "ParallelLMHead"
                                                  : "ReplicatedLinear";
  for (const QuantGroup& g : q.groups)
    for (const std::string& t : g.targets) {
      if (ct_match(name, t, false)) return true;
      if (!starts_with(t, "re:") && ascii_lower(cls).find(ascii_lower(t)) != std::string::npos) return true;
      if (kind == Kind::moe && ascii_lower(t) == "linear") return true;  // "RoutedExperts" alias of a Linear target
    }
  if (arch) {
    const std::string proj = leaf_of(name);
    for (const auto& [fused, shards] : arch->packed_map) {
      if (fused != proj) continue;
      bool all = true;
      for (const std::string& sh : shards) {
        std::string s = name;
        s.replace(s.rfind(proj), proj.size(), sh);
        bool any = false;
        for (const QuantGroup& g : q.groups)
          for (const std::string& t : g.targets) any = any || ct_match(s, t, false);
        all = all && any;
      }
      if (all) return true;
    }
  }
  return false;
}

}  // namespace specprobe::checkpoint
