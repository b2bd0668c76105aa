// Checkpoint analysis: shard discovery and path safety, parallel header reads, index cross-check,
// layer map, runtime-name translation (name_tables) and engine-exact quantization matching.
#include "common/py_regex.hpp"
#include "common/utf8.hpp"
#include "inputs/checkpoint/checkpoint.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <unordered_map>

#include "inputs/checkpoint/name_index.hpp"
#include "inputs/checkpoint/name_tables.hpp"
#include "inputs/checkpoint/quant_config.hpp"
#include "inputs/checkpoint/safetensors.hpp"
#include "inputs/json_relaxed.hpp"
#include "inputs/model_config.hpp"

namespace specprobe {
namespace fs = std::filesystem;
using namespace checkpoint;

namespace {

constexpr size_t kListCap = 64;

// ---------------------------------------------------------------------------------------------
// Small helpers

bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
bool starts_with(std::string_view s, std::string_view p) { return s.rfind(p, 0) == 0; }
// S ends with the dotted path SUF at a component boundary.
bool ends_with_path(std::string_view s, std::string_view suf) {
  return s == suf || (ends_with(s, suf) && s[s.size() - suf.size() - 1] == '.');
}
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string leaf_of(const std::string& s) {
  auto p = s.rfind('.');
  return p == std::string::npos ? s : s.substr(p + 1);
}

void push_capped(Json& arr, Json v) {
  if (arr.size() < kListCap) arr.push_back(std::move(v));
}

// Python re.match, anchored at the start only, for patterns from downloaded config files: PyRegex
// runs in time linear in the name (std::regex backtracks without bound). Compiled patterns are
// cached; a pattern PyRegex refuses never matches and is reported once, with the reason.
class RegexCache {
 public:
  bool match(const std::string& pattern, const std::string& value) {
    auto it = cache_.find(pattern);
    if (it == cache_.end()) {
      std::optional<PyRegex> re;
      auto compiled = PyRegex::compile(pattern);
      if (auto* why = std::get_if<std::string>(&compiled)) bad_.emplace(pattern, *why);
      else re.emplace(std::move(std::get<PyRegex>(compiled)));
      it = cache_.emplace(pattern, std::move(re)).first;
    }
    return it->second && it->second->match(value);
  }
  // Refused patterns and why.
  const std::map<std::string, std::string>& bad() const { return bad_; }

 private:
  std::unordered_map<std::string, std::optional<PyRegex>> cache_;
  std::map<std::string, std::string> bad_;
};

// ---------------------------------------------------------------------------------------------
// Name translation

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

// ---------------------------------------------------------------------------------------------
// Layer map

// Parameter names that end a tensor name of a (possibly quantized) linear module, sorted; "blocks"
// and "blocks_scales" come from gpt-oss's *_blocks / *_scales expert tensors.
constexpr std::string_view kParamNames[] = {
    "bias",          "blocks",       "blocks_scales",    "g_idx",          "input_global_scale",
    "input_scale",   "qweight",      "qzeros",           "scale",          "scales",
    "weight",        "weight_g_idx", "weight_global_scale", "weight_packed", "weight_scale",
    "weight_scale_2", "weight_scale_inv", "weight_shape", "weight_zero_point"};
constexpr size_t kParamCount = std::size(kParamNames);
enum Param : uint8_t {
  p_bias, p_blocks, p_blocks_scales, p_g_idx, p_input_global_scale, p_input_scale, p_qweight, p_qzeros, p_scale,
  p_scales, p_weight, p_weight_g_idx, p_weight_global_scale, p_weight_packed, p_weight_scale, p_weight_scale_2,
  p_weight_scale_inv, p_weight_shape, p_weight_zero_point};
static_assert(p_weight_zero_point + 1 == kParamCount);
// The suffixes a module name takes from its tensors (everything in kParamNames but the gpt-oss ones).
constexpr uint32_t kSuffixParams = ~((1u << p_blocks) | (1u << p_blocks_scales)) & ((1u << kParamCount) - 1);

std::optional<Param> param_of(std::string_view leaf) {
  const auto* it = std::lower_bound(std::begin(kParamNames), std::end(kParamNames), leaf);
  if (it == std::end(kParamNames) || *it != leaf) return std::nullopt;
  return static_cast<Param>(it - std::begin(kParamNames));
}

// An on-disk module: its name (a prefix of its tensors' names, viewing a shard header buffer) and,
// per parameter present, the stored dtype and rank (capped at 255; only rank >= 2 matters).
struct DiskModule {
  std::string_view name;
  uint32_t present = 0;  // bit per Param
  std::array<uint8_t, kParamCount> dtype{};
  std::array<uint8_t, kParamCount> rank{};
  bool has(Param p) const { return (present >> p) & 1u; }
  std::string_view dtype_of(Param p) const { return has(p) ? dtype_name(dtype[p]) : std::string_view(); }
  size_t param_count() const { return static_cast<size_t>(std::popcount(present)); }
};

enum class Kind { linear, moe, lm_head, embed, router };

struct RuntimeModule {
  std::string name;   // runtime quant-match name ("" for empty-prefix MTP leaves in old builds)
  std::string group;  // main | mtp | embed | lm_head
  Kind kind = Kind::linear;
  std::vector<uint32_t> disk;  // on-disk modules (indices; experts collapsed: one per expert shard)
  std::map<std::string_view, int, std::less<>> schemes;  // stored scheme -> count over disk modules
  std::map<std::string_view, std::set<std::string_view>, std::less<>> shard_schemes;  // shard suffix -> schemes
  std::string role;  // name without the layer prefix, for main/MTP comparison
  bool empty_prefix_leaf = false;
};

bool is_quantized_scheme(std::string_view s) { return s != "bf16" && s != "f16" && s != "f32"; }

// Lower-case dtype names, by dtype id.
std::string_view lower_dtype(std::string_view dtype) {
  static const std::array<std::string, kDtypeCount> names = [] {
    std::array<std::string, kDtypeCount> a;
    for (size_t i = 0; i < kDtypeCount; ++i) a[i] = lower(std::string(dtype_name(i)));
    return a;
  }();
  for (size_t i = 0; i < kDtypeCount; ++i)
    if (dtype_name(i) == dtype) return names[i];
  return {};
}

// The storage scheme of a module: a static string.
std::string_view stored_scheme(const DiskModule& m) {
  if (m.has(p_blocks)) return "mxfp4_blocks";
  if (m.has(p_qweight)) return "gptq_awq_packed";
  if (m.has(p_weight_packed)) return m.dtype_of(p_weight_packed) == "I32" ? "int_packed" : "fp4_packed";
  const std::string_view w = m.dtype_of(p_weight);
  const bool scale_inv = m.has(p_weight_scale_inv) || m.has(p_scale);
  const bool scale = m.has(p_weight_scale);
  if (starts_with(w, "F8_")) return scale_inv ? "fp8_block" : scale ? "fp8_scale" : "fp8_noscale";
  if (w == "F4") return "fp4";
  if (w == "I8" || w == "U8") return scale_inv || scale ? "int8_or_fp4" : "int8_noscale";
  if (w == "BF16" || w == "F16" || w == "F32") {
    if (scale_inv || scale || m.has(p_input_scale))
      return w == "BF16" ? "bf16_with_scale" : w == "F16" ? "f16_with_scale" : "f32_with_scale";
    return lower_dtype(w);
  }
  return w.empty() ? "unknown" : lower_dtype(w);
}

// "<base>.experts.<E>.<leaf>" -> (<base>.experts, leaf).
std::optional<std::pair<std::string_view, std::string_view>> split_expert(std::string_view m) {
  const size_t leaf_dot = m.rfind('.');
  if (leaf_dot == std::string::npos || leaf_dot == 0) return std::nullopt;
  const size_t num_dot = m.rfind('.', leaf_dot - 1);
  if (num_dot == std::string::npos || num_dot + 1 == leaf_dot) return std::nullopt;
  for (size_t i = num_dot + 1; i < leaf_dot; ++i)
    if (m[i] < '0' || m[i] > '9') return std::nullopt;
  if (!ends_with(m.substr(0, num_dot), ".experts")) return std::nullopt;
  return std::make_pair(m.substr(0, num_dot), m.substr(leaf_dot + 1));
}

// The MTP patterns of the naming table have the shape ^<literal>(\d+)\.(.*)$ or ^<literal>()(.*)$;
// they are matched by hand because this runs once per on-disk module (~50k for DeepSeek-V3).
struct MtpPattern {
  std::string prefix;
  bool indexed = false;
};
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
// (index or -1, rest) when NAME matches.
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

// ^(.*?)(layers|mtp_layers)\.\d+\. -> what follows; "mtp.<rest>" -> rest; else the name.
std::string role_of(const std::string& runtime) {
  const std::string_view s = runtime;
  for (size_t i = 0; i < s.size(); ++i) {
    size_t j = i;
    if (s.compare(i, 7, "layers.") == 0) j = i + 7;
    else if (s.compare(i, 11, "mtp_layers.") == 0) j = i + 11;
    else continue;
    const size_t digits = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j > digits && j < s.size() && s[j] == '.') return std::string(s.substr(j + 1));
  }
  if (starts_with(runtime, "mtp.")) return runtime.substr(4);
  return runtime;
}

// ---------------------------------------------------------------------------------------------
// Matching (knowledge file section 3)

struct Matcher {
  const QuantSpec& q;
  const ArchNames* arch;
  bool sglang;
  RegexCache& re;

  // compressed-tensors _is_equal_or_regex_match (SGLang: check_contains for ignore).
  bool ct_match(const std::string& value, const std::string& target, bool contains) {
    if (starts_with(target, "re:")) return re.match(target.substr(3), value);
    if (contains) return lower(value).find(lower(target)) != std::string::npos;
    return value == target;
  }

  // One skip-list entry against one runtime (or shard) name, with the method's semantics.
  bool skip_entry_matches(const std::string& name, const std::string& entry) {
    switch (q.skip_match) {
      case SkipMatch::exact_or_re: return ct_match(name, entry, sglang);
      case SkipMatch::exact_fused:
        if (name == entry) return true;
        return name.find("experts") != std::string::npos && entry.find("experts") != std::string::npos &&
               entry.find(name) != std::string::npos;
      case SkipMatch::substring: return name.find(entry) != std::string::npos;
      case SkipMatch::modelopt: {
        if (name == entry || name.find(entry) != std::string::npos) return true;
        const std::string stripped = starts_with(name, "language_model.") ? name.substr(15) : name;
        if (stripped.find(entry) != std::string::npos) return true;
        // glibc fnmatch backtracks once per '*' (time ~ len^stars): bound the stars of a downloaded glob.
        if (std::count(entry.begin(), entry.end(), '*') > 8) return false;
        return fnmatch(entry.c_str(), name.c_str(), 0) == 0;
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
      case SkipMatch::none: return false;
    }
    return false;
  }

  bool skipped_single(const std::string& name, const std::vector<std::string>& skip) {
    for (const std::string& e : skip)
      if (skip_entry_matches(name, e)) return true;
    return false;
  }

  // should_ignore_layer / is_layer_skipped with fused expansion through packed_map. DISAGREE is
  // set when the shards of a fused module disagree (vLLM raises).
  bool skipped(const std::string& name, const std::vector<std::string>& skip, bool& disagree,
               std::vector<std::string>* shard_names = nullptr) {
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

  // find_matched_target: name (exact / re:), class name (contains, case-insensitive), fused shards.
  bool target_matched(const std::string& name, Kind kind) {
    const std::string cls = kind == Kind::moe ? "FusedMoE RoutedExperts" : kind == Kind::lm_head ? "ParallelLMHead"
                                                                                                  : "ReplicatedLinear";
    for (const QuantGroup& g : q.groups)
      for (const std::string& t : g.targets) {
        if (ct_match(name, t, false)) return true;
        if (!starts_with(t, "re:") && lower(cls).find(lower(t)) != std::string::npos) return true;
        if (kind == Kind::moe && lower(t) == "linear") return true;  // "RoutedExperts" alias of a Linear target
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
};

// ---------------------------------------------------------------------------------------------

// model.safetensors.index.json. A DeepSeek-size index has ~90k entries; it is read by a strict
// scanner that keeps the tensor names in the file's buffer (unescaped in place). Anything the
// scanner does not accept goes through nlohmann's SAX parser instead, which then decides (and
// words the error) exactly as before.
struct IndexData {
  bool valid = false;
  std::vector<std::string> files;                           // distinct shard files, first-seen order
  std::vector<std::pair<std::string_view, uint32_t>> entries;  // tensor -> file id, in file order
  std::vector<std::string> non_string;
  std::optional<uint64_t> total_size;
  std::string text;                 // the file; entries view it (fast path)
  std::deque<std::string> names;    // entry names (SAX path)
};

class IndexSax : public nlohmann::json_sax<Json> {
 public:
  explicit IndexSax(IndexData& d) : d_(d) {}
  bool null() override { return scalar(false); }
  bool boolean(bool) override { return scalar(false); }
  bool number_integer(number_integer_t v) override {
    if (in_metadata() && key_ == "total_size" && v >= 0) d_.total_size = static_cast<uint64_t>(v);
    return scalar(false);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (in_metadata() && key_ == "total_size") d_.total_size = v;
    return scalar(false);
  }
  bool number_float(number_float_t, const string_t&) override { return scalar(false); }
  bool string(string_t& v) override {
    if (in_weight_map()) {
      auto [it, fresh] = file_ids_.emplace(v, d_.files.size());
      if (fresh) d_.files.push_back(v);
      d_.entries.emplace_back(d_.names.emplace_back(key_), static_cast<uint32_t>(it->second));
      return true;
    }
    return scalar(false);
  }
  bool binary(binary_t&) override { return scalar(false); }
  bool start_object(std::size_t) override {
    if (in_weight_map()) d_.non_string.push_back(key_);
    path_.push_back(depth() == 0 ? std::string() : key_);
    if (depth() == 2 && key_ == "weight_map") seen_map_ = true;
    return true;
  }
  bool end_object() override {
    path_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (in_weight_map()) d_.non_string.push_back(key_);
    path_.push_back("[");
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    error = fmt::format("invalid JSON at byte {}: {}", pos, e.what());
    return false;
  }
  bool weight_map_seen() const { return seen_map_; }
  bool top_is_object = false;
  std::string error;

 private:
  size_t depth() const { return path_.size(); }
  bool in_weight_map() const { return depth() == 2 && path_[1] == "weight_map"; }
  bool in_metadata() const { return depth() == 2 && path_[1] == "metadata"; }
  bool scalar(bool) {
    if (in_weight_map()) d_.non_string.push_back(key_);
    return true;
  }
  IndexData& d_;
  std::vector<std::string> path_;
  std::string key_;
  std::unordered_map<std::string, size_t> file_ids_;
  bool seen_map_ = false;
};

// The strict scanner: RFC 8259 JSON (the text is already known to be valid UTF-8), recording what
// IndexSax records. Returns false, leaving D partly filled, on anything it does not accept.
class IndexScanner {
 public:
  IndexScanner(char* s, size_t n, IndexData& d) : s_(s), n_(n), d_(d) {}

  bool run() {
    if (!members([&](std::string_view key) {
          ws();
          if (pos_ < n_ && s_[pos_] == '{') {
            if (key == "weight_map") {
              seen_map = true;
              return members([&](std::string_view name) { return weight_map_value(name); });
            }
            if (key == "metadata") return members([&](std::string_view k) { return metadata_value(k); });
          }
          return skip_value(0);
        }))
      return false;
    ws();
    return pos_ == n_;
  }
  bool seen_map = false;

 private:
  void ws() {
    while (pos_ < n_ && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool expect(char c) {
    ws();
    if (pos_ < n_ && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // The members of an object (at '{'): VALUE(key) consumes each value.
  template <typename Value>
  bool members(Value value) {
    if (!expect('{')) return false;
    ws();
    if (pos_ < n_ && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      std::string_view key;
      if (!string(key) || !expect(':') || !value(key)) return false;
      ws();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return expect('}');
    }
  }
  bool weight_map_value(std::string_view name) {
    ws();
    if (pos_ < n_ && s_[pos_] == '"') {
      std::string_view file;
      if (!string(file)) return false;
      auto [id, fresh] = file_ids_.insert(file, static_cast<uint32_t>(d_.files.size()));
      if (fresh) d_.files.emplace_back(file);
      d_.entries.emplace_back(name, *id);
      return true;
    }
    d_.non_string.emplace_back(name);
    return skip_value(0);
  }
  bool metadata_value(std::string_view key) {
    ws();
    if (key != "total_size" || pos_ >= n_ || (s_[pos_] != '-' && (s_[pos_] < '0' || s_[pos_] > '9')))
      return skip_value(0);
    // nlohmann: an integer literal that fits uint64 (or int64 when negative) is an integer,
    // anything else a float; IndexSax keeps non-negative integers.
    const size_t start = pos_;
    if (!number()) return false;
    const std::string_view lit(s_ + start, pos_ - start);
    if (lit.find_first_of(".eE") != std::string_view::npos) return true;
    if (lit[0] == '-') {
      if (lit == "-0") d_.total_size = 0;
      return true;
    }
    uint64_t v = 0;
    for (char c : lit) {
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - digit) / 10) return true;  // a float to nlohmann
      v = v * 10 + digit;
    }
    d_.total_size = v;
    return true;
  }
  bool number() {
    if (pos_ < n_ && s_[pos_] == '-') ++pos_;
    if (pos_ >= n_) return false;
    if (s_[pos_] == '0') {
      ++pos_;
    } else if (s_[pos_] >= '1' && s_[pos_] <= '9') {
      while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    } else {
      return false;
    }
    auto digits = [&] {
      const size_t d0 = pos_;
      while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d0;
    };
    if (pos_ < n_ && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return false;
    }
    if (pos_ < n_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < n_ && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    return true;
  }
  bool skip_value(int depth) {
    if (depth > 256) return false;  // deeper nesting: left to the SAX parser
    ws();
    if (pos_ >= n_) return false;
    const char c = s_[pos_];
    std::string_view tmp;
    if (c == '"') return string(tmp);
    if (c == '{') return members([&](std::string_view) { return skip_value(depth + 1); });
    if (c == '[') {
      ++pos_;
      ws();
      if (pos_ < n_ && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        if (!skip_value(depth + 1)) return false;
        ws();
        if (pos_ < n_ && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return expect(']');
      }
    }
    for (std::string_view lit : {"true", "false", "null"})
      if (std::string_view(s_ + pos_, n_ - pos_).substr(0, lit.size()) == lit) {
        pos_ += lit.size();
        return true;
      }
    return number();
  }
  // A string, unescaped in place (an escape never grows); OUT views the result.
  bool string(std::string_view& out) {
    ws();
    if (pos_ >= n_ || s_[pos_] != '"') return false;
    const size_t start = ++pos_;
    while (pos_ < n_ && s_[pos_] != '"' && s_[pos_] != '\\' && static_cast<unsigned char>(s_[pos_]) >= 0x20) ++pos_;
    size_t w = pos_;
    while (pos_ < n_ && s_[pos_] != '"') {
      const char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        s_[w++] = c;
        continue;
      }
      if (pos_ >= n_) return false;
      switch (s_[pos_++]) {
        case '"': s_[w++] = '"'; break;
        case '\\': s_[w++] = '\\'; break;
        case '/': s_[w++] = '/'; break;
        case 'b': s_[w++] = '\b'; break;
        case 'f': s_[w++] = '\f'; break;
        case 'n': s_[w++] = '\n'; break;
        case 'r': s_[w++] = '\r'; break;
        case 't': s_[w++] = '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (pos_ + 1 >= n_ || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') return false;
            pos_ += 2;
            if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
          }
          if (cp < 0x80) {
            s_[w++] = static_cast<char>(cp);
          } else if (cp < 0x800) {
            s_[w++] = static_cast<char>(0xC0 | (cp >> 6));
            s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
          } else if (cp < 0x10000) {
            s_[w++] = static_cast<char>(0xE0 | (cp >> 12));
            s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            s_[w++] = static_cast<char>(0xF0 | (cp >> 18));
            s_[w++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            s_[w++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s_[w++] = static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: return false;
      }
    }
    if (pos_ >= n_) return false;
    out = std::string_view(s_ + start, w - start);
    ++pos_;
    return true;
  }
  bool hex4(uint32_t& out) {
    if (pos_ + 4 > n_) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      out <<= 4;
      if (h >= '0' && h <= '9') out |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') out |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') out |= static_cast<uint32_t>(h - 'A' + 10);
      else return false;
    }
    return true;
  }

  char* s_;
  size_t n_;
  size_t pos_ = 0;
  IndexData& d_;
  NameIndex file_ids_;
};


bool read_index(const std::string& path, IndexData& d, std::string& err) {
  // A FIFO or device would block or never end; the largest real indexes are a few MiB.
  constexpr uintmax_t kMaxIndexBytes = 256u << 20;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    err = "the index is not a regular file";
    return false;
  }
  if (const uintmax_t size = fs::file_size(path, ec); ec || size > kMaxIndexBytes) {
    err = ec ? "cannot stat the index" : fmt::format("the index has {} bytes, more than the {} MiB cap", size, kMaxIndexBytes >> 20);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot open the index";
    return false;
  }
  std::string text;
  {
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<size_t>(in.gcount()));
      if (text.size() > kMaxIndexBytes) {  // grew since the stat
        err = fmt::format("the index has more than the {} MiB cap", kMaxIndexBytes >> 20);
        return false;
      }
    }
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    err = "index is not a JSON object";
    return false;
  }
  if (valid_utf8(text)) {
    d.text = text;  // scanned (and unescaped) in its own copy; TEXT stays for the SAX path
    IndexScanner scan(d.text.data(), d.text.size(), d);
    if (scan.run()) {
      if (!scan.seen_map) {
        err = "index has no weight_map object";
        return false;
      }
      d.valid = true;
      return true;
    }
    d = IndexData{};
  }
  IndexSax sax(d);
  if (!Json::sax_parse(text, &sax) ) {
    err = sax.error.empty() ? "invalid JSON" : sax.error;
    return false;
  }
  if (!sax.weight_map_seen()) {
    err = "index has no weight_map object";
    return false;
  }
  d.valid = true;
  return true;
}

struct ShardJob {
  std::string rel;   // as named by the index / directory listing
  fs::path path;
  bool referenced = true;  // named by the index (or no index)
  HeaderResult result;
};

}  // namespace

Expected<CheckpointAnalysis> analyze_checkpoint(const std::string& dir, const Json& in_facts) {
  auto cfg_r = read_model_config(dir);
  if (!cfg_r) return cfg_r.error();
  const ModelConfig& cfg = *cfg_r;
  CheckpointAnalysis out;
  Json& ck = out.facts["checkpoint"];
  Json& qf = out.facts["quant"];
  ck = Json::object();
  qf = Json::object();
  Json problems = Json::array();
  size_t problem_count = 0;
  auto problem = [&](std::string code, std::string file, std::string message, std::string severity = "error") {
    out.notes.push_back({severity, code, message, file});
    if (severity == "error") {
      ++problem_count;
      push_capped(problems, Json{{"code", code}, {"file", file}, {"message", message}});
    }
  };

  std::error_code ec;
  const fs::path root = cfg.dir;
  const fs::path root_canon = fs::canonical(root, ec);
  fs::path blobs_canon;
  if (!cfg.cache_repo.empty()) {
    blobs_canon = fs::canonical(fs::path(cfg.cache_repo) / "blobs", ec);
  } else if (root.has_parent_path() && root.parent_path().filename() == "snapshots") {
    blobs_canon = fs::canonical(root.parent_path().parent_path() / "blobs", ec);
  }
  ck["path"] = root.string();
  ck["hf_cache"] = !blobs_canon.empty();

  auto inside = [](const fs::path& p, const fs::path& base) {
    if (base.empty()) return false;
    auto pi = p.begin();
    for (auto bi = base.begin(); bi != base.end(); ++bi, ++pi)
      if (pi == p.end() || *pi != *bi) return false;
    return true;
  };

  // --- the index
  const fs::path index_path = root / "model.safetensors.index.json";
  IndexData index;
  Json index_facts = {{"present", false}};
  if (fs::exists(index_path, ec)) {
    index_facts["present"] = true;
    std::string err;
    if (!read_index(index_path.string(), index, err)) {
      problem("index_invalid", index_path.string(), err);
    } else {
      if (index.total_size) index_facts["total_size"] = *index.total_size;
      index_facts["weight_map_entries"] = index.entries.size();
      for (const std::string& bad : index.non_string)
        problem("index_invalid", index_path.string(), fmt::format("weight_map entry '{}' is not a string", bad));
    }
  }
  const bool has_index = index.valid;

  // --- shard list and path safety
  std::vector<ShardJob> jobs;
  std::set<std::string> listed;
  auto add_job = [&](const std::string& rel, bool referenced) {
    if (!listed.insert(rel).second) return;
    const fs::path relp(rel);
    if (relp.is_absolute()) {
      problem("weight_map_absolute", index_path.string(), fmt::format("weight_map names the absolute path '{}'", rel));
      return;
    }
    for (const auto& part : relp)
      if (part == "..") {
        problem("weight_map_escape", index_path.string(), fmt::format("weight_map path '{}' leaves the checkpoint", rel));
        return;
      }
    const fs::path p = root / relp;
    if (!fs::exists(fs::symlink_status(p, ec)) || !fs::exists(p, ec)) {
      problem("missing_shard", p.string(), fmt::format("shard '{}' does not exist", rel));
      return;
    }
    const fs::path canon = fs::canonical(p, ec);
    if (ec || !(inside(canon, root_canon) || inside(canon, blobs_canon))) {
      problem("symlink_escape", p.string(), fmt::format("shard '{}' resolves outside the checkpoint tree", rel));
      return;
    }
    jobs.push_back({rel, p, referenced, {}});
  };
  for (const std::string& f : index.files) add_job(f, true);
  {
    std::vector<std::string> on_disk;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (ends_with(it->path().filename().string(), ".safetensors")) on_disk.push_back(it->path().filename().string());
    std::sort(on_disk.begin(), on_disk.end());
    for (const std::string& f : on_disk) {
      if (listed.count(f)) continue;
      if (has_index)
        problem("unreferenced_shard", (root / f).string(), fmt::format("shard '{}' is not named by the index", f),
                "warning");
      add_job(f, !has_index);
    }
  }

  // --- headers, read in parallel
  {
    std::atomic<size_t> next{0};
    const size_t nthreads =
        std::max<size_t>(1, std::min<size_t>({jobs.size(), std::thread::hardware_concurrency(), 16}));
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < jobs.size();) jobs[i].result = read_safetensors_header(jobs[i].path.string());
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < nthreads; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
  }

  // --- cross-check, tensor inventory. Names stay in the shard header buffers; the table maps a
  // name to its slot in REFS (header order, shard after shard).
  struct TensorRef {
    const TensorInfo* t;
    const ShardJob* job;
    uint32_t index_file;  // the file the index names for it last (kNoFile: none)
  };
  constexpr uint32_t kNoFile = UINT32_MAX;
  size_t tensor_total = 0;
  for (const ShardJob& j : jobs)
    if (j.result.header) tensor_total += j.result.header->tensors.size();
  std::vector<TensorRef> refs;
  refs.reserve(tensor_total);
  NameIndex tensors(tensor_total);
  std::array<size_t, kDtypeCount> dtype_counts{};
  uint64_t bytes = 0;
  size_t shard_ok = 0;
  for (const ShardJob& j : jobs) {
    if (!j.result.header) {
      problem(j.result.error.code, j.path.string(), j.result.error.message);
      continue;
    }
    ++shard_ok;
    if (!j.referenced && has_index) continue;  // not loaded by the engine
    for (const TensorInfo& t : j.result.header->tensors) {
      auto [slot, fresh] = tensors.insert(t.name, static_cast<uint32_t>(refs.size()));
      if (!fresh) {
        problem("duplicate_tensor", j.path.string(),
                fmt::format("tensor '{}' is also stored in {}", t.name, refs[*slot].job->rel));
        continue;
      }
      refs.push_back({&t, &j, kNoFile});
      ++dtype_counts[t.dtype_id];
      bytes += t.end - t.begin;
    }
  }
  std::map<std::string, int> dtypes;
  for (size_t i = 0; i < kDtypeCount; ++i)
    if (dtype_counts[i]) dtypes[std::string(dtype_name(i))] = static_cast<int>(dtype_counts[i]);
  Json missing_in_shards = Json::array(), not_in_index = Json::array();
  size_t missing_count = 0, not_in_index_count = 0;
  if (has_index) {
    std::vector<const ShardJob*> job_by_file(index.files.size(), nullptr);
    std::vector<uint32_t> file_of_job(jobs.size(), kNoFile);
    for (size_t k = 0; k < jobs.size(); ++k)
      if (auto f = std::find(index.files.begin(), index.files.end(), jobs[k].rel); f != index.files.end()) {
        job_by_file[static_cast<size_t>(f - index.files.begin())] = &jobs[k];
        file_of_job[k] = static_cast<uint32_t>(f - index.files.begin());
      }
    for (const auto& [name, file_id] : index.entries) {
      const uint32_t* slot = tensors.find(name);
      if (slot) refs[*slot].index_file = file_id;  // a repeated name: the last entry counts
      const ShardJob* job = job_by_file[file_id];
      if (!job || !job->result.header) continue;  // shard problem already reported
      if (!slot || refs[*slot].job != job) {
        ++missing_count;
        push_capped(missing_in_shards, std::string(name));
        if (missing_count <= 8)
          problem("index_tensor_missing", job->path.string(),
                  fmt::format("index names tensor '{}' but {} does not hold it", name, job->rel));
      }
    }
    for (const TensorRef& r : refs) {
      if (r.index_file == kNoFile || r.index_file != file_of_job[static_cast<size_t>(r.job - jobs.data())]) {
        ++not_in_index_count;
        push_capped(not_in_index, std::string(r.t->name));
        if (not_in_index_count <= 8)
          problem("tensor_not_in_index", r.job->path.string(),
                  fmt::format("tensor '{}' is stored in {} but the index does not say so", r.t->name, r.job->rel));
      }
    }
    if (missing_count > 8 || not_in_index_count > 8)
      out.notes.push_back({"error", "index_drift",
                           fmt::format("{} index entries missing from shards, {} shard tensors not in the index",
                                       missing_count, not_in_index_count),
                           index_path.string()});
    if (index_facts.contains("total_size") && index_facts["total_size"].is_number_unsigned() &&
        index_facts["total_size"].get<uint64_t>() != bytes && missing_count == 0 && not_in_index_count == 0)
      out.notes.push_back({"info", "index_total_size",
                           fmt::format("index total_size {} differs from the {} bytes the shards hold",
                                       index_facts["total_size"].get<uint64_t>(), bytes),
                           index_path.string()});
  }
  std::sort(missing_in_shards.begin(), missing_in_shards.end());
  std::sort(not_in_index.begin(), not_in_index.end());
  index_facts["missing_in_shards"] = missing_in_shards;
  index_facts["missing_in_shards_count"] = missing_count;
  index_facts["not_in_index"] = not_in_index;
  index_facts["not_in_index_count"] = not_in_index_count;
  ck["index"] = index_facts;
  ck["shards"] = jobs.size();
  ck["shards_valid"] = shard_ok;
  ck["tensors"] = refs.size();
  ck["bytes"] = bytes;
  ck["dtypes"] = dtypes;

  // --- layer map: on-disk modules, sorted by name (names view the shard header buffers)
  std::vector<DiskModule> disk;
  {
    std::vector<DiskModule> found;
    NameIndex module_ids(refs.size() / 2 + 16);
    for (const TensorRef& r : refs) {
      const std::string_view name = r.t->name;
      std::string_view module;
      Param param = p_weight;
      if (const size_t dot = name.rfind('.'); dot != std::string_view::npos)
        if (auto p = param_of(name.substr(dot + 1)); p && ((kSuffixParams >> *p) & 1u)) {
          module = name.substr(0, dot);
          param = *p;
        }
      if (module.empty()) {
        // gpt-oss MXFP4 experts: experts.gate_up_proj_blocks / _scales.
        for (std::string_view suf : {std::string_view("_blocks"), std::string_view("_scales")})
          if (ends_with(name, suf) && name.find(".experts.") != std::string_view::npos) {
            module = name.substr(0, name.size() - suf.size());
            param = suf == "_blocks" ? p_blocks : p_blocks_scales;
          }
      }
      if (module.empty()) continue;
      auto [id, fresh] = module_ids.insert(module, static_cast<uint32_t>(found.size()));
      if (fresh) found.push_back(DiskModule{module});
      DiskModule& m = found[*id];
      m.present |= 1u << param;
      m.dtype[param] = r.t->dtype_id;
      m.rank[param] = static_cast<uint8_t>(std::min<uint32_t>(r.t->rank, 255));
    }
    std::vector<uint32_t> order(found.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return found[x].name < found[y].name; });
    disk.reserve(found.size());
    for (uint32_t i : order) disk.push_back(found[i]);
  }

  const std::string model_type = cfg.text_model_type && cfg.model_type && *cfg.model_type != *cfg.text_model_type &&
                                         !find_arch_names(*cfg.model_type, "")
                                     ? *cfg.text_model_type
                                     : cfg.model_type.value_or("");
  const ArchNames* arch = find_arch_names(model_type, cfg.architecture.value_or(""));
  ck["arch_table"] = arch ? Json(arch->family) : Json(nullptr);
  int64_t n_layers = cfg.num_hidden_layers.value_or(-1);
  std::optional<int64_t> mtp_depth = cfg.mtp_depth;
  if (!mtp_depth)
    if (const Json* f = find_fact(in_facts, "model.mtp_depth"); f && f->is_number_integer()) mtp_depth = f->get<int64_t>();
  std::optional<MtpPattern> mtp_re;
  if (arch && !arch->mtp_regex.empty()) mtp_re = parse_mtp_pattern(arch->mtp_regex);

  std::map<std::string, RuntimeModule> runtime;
  std::set<int64_t> mtp_layers;
  size_t mtp_tensors = 0;
  std::vector<uint32_t> empty_prefix_disk;
  // Consecutive modules (the experts of one layer) share a base name and so a runtime module:
  // its name translation is computed once per run of equal (base, kind).
  struct Placement {
    std::string_view base;
    Kind split_kind = Kind::linear;
    RuntimeModule* r = nullptr;
    std::string group;
    Kind kind = Kind::linear;
    bool is_mtp = false, empty_leaf = false, mtp_layer = false;
    int64_t k = 0;
  } last;
  for (uint32_t di = 0; di < disk.size(); ++di) {
    const DiskModule& dm = disk[di];
    const std::string_view module = dm.name;
    const bool linear_like = dm.has(p_weight_packed) || dm.has(p_qweight) || dm.has(p_blocks) ||
                             (dm.has(p_weight) && dm.rank[p_weight] >= 2);
    if (!linear_like) continue;
    std::string_view base = module, shard_leaf;
    Kind kind = Kind::linear;
    if (auto ex = split_expert(module)) {
      base = ex->first;
      shard_leaf = ex->second;
      kind = Kind::moe;
    } else if (ends_with(module, ".experts.gate_up_proj") || ends_with(module, ".experts.down_proj")) {
      base = module.substr(0, module.rfind('.'));
      shard_leaf = module.substr(module.rfind('.') + 1);
      kind = Kind::moe;
    }
    if (!last.r || base != last.base || kind != last.split_kind) {
      last = Placement{};
      last.base = base;
      last.split_kind = kind;
      const std::string base_s(base);
      const std::string leaf = leaf_of(base_s);
      // Group and runtime name.
      std::string group = "main", rt;
      bool is_mtp = false, empty_leaf = false, mtp_layer = false;
      int64_t k = 0;
      std::optional<std::pair<int64_t, std::string>> mm;
      if (mtp_re) mm = match_mtp(*mtp_re, base_s);
      if (mm) {
        bool ok = true;
        if (mm->first >= 0) {
          const int64_t idx = mm->first;
          if (arch->index_is_layer_id) {
            ok = n_layers >= 0 && idx >= n_layers;
            k = idx - n_layers;
          } else {
            k = idx;
          }
        }
        if (ok) {
          is_mtp = mtp_layer = true;
          std::string rest = mm->second;
          std::string t = arch->mtp_runtime;
          auto put = [&](const std::string& key, const std::string& val) {
            if (auto p = t.find(key); p != std::string::npos) t.replace(p, key.size(), val);
          };
          put("{L}", n_layers >= 0 ? std::to_string(n_layers + k) : "?");
          put("{k}", std::to_string(k));
          put("{rest}", rest);
          rt = fuse(apply_renames(t, arch->mtp_renames), arch->load_fuse);
          for (const std::string& l : arch->mtp_empty_prefix_leaves)
            if (rest == l) empty_leaf = true;
        }
      }
      if (!is_mtp && !arch && base.find("mtp") != std::string_view::npos) is_mtp = true;
      if (rt.empty()) rt = arch ? fuse(map_module(base_s, arch->mapper), arch->load_fuse) : base_s;
      if (is_mtp) group = "mtp";
      if (kind == Kind::linear) {
        if (leaf.find("embed") != std::string::npos || leaf == "tok_emb" || leaf == "wte" || leaf == "embeddings") {
          kind = Kind::embed;
        } else if (leaf == "lm_head" || leaf == "head") {
          kind = Kind::lm_head;
        } else if (leaf == "router" || leaf == "shared_expert_gate" ||
                   (leaf == "gate" && (ends_with(base, "mlp.gate") || ends_with(base, "ffn.gate")))) {
          kind = Kind::router;
        }
      }
      if (!is_mtp && kind == Kind::embed) group = "embed";
      if (!is_mtp && kind == Kind::lm_head) group = "lm_head";
      last.r = &runtime[rt];
      last.r->name = rt;
      last.group = std::move(group);
      last.kind = kind;
      last.is_mtp = is_mtp;
      last.empty_leaf = empty_leaf;
      last.k = k;
      last.mtp_layer = mtp_layer;
    }
    RuntimeModule& r = *last.r;
    if (last.mtp_layer) mtp_layers.insert(last.k);
    if (last.is_mtp) mtp_tensors += dm.param_count();
    r.group = last.group;
    r.kind = last.kind;
    if (r.disk.empty()) r.role = role_of(r.name);
    r.empty_prefix_leaf = r.empty_prefix_leaf || last.empty_leaf;
    if (last.empty_leaf) empty_prefix_disk.push_back(di);
    r.disk.push_back(di);
    const std::string_view sch = stored_scheme(dm);
    ++r.schemes[sch];
    const std::string_view shard_key = last.kind == Kind::moe ? shard_leaf : module.substr(module.find_last_of('.') + 1);
    r.shard_schemes[shard_key].insert(sch);
  }
  Json mtp_f = {{"expected_depth", mtp_depth ? Json(*mtp_depth) : Json(nullptr)},
                {"layers_present", Json(std::vector<int64_t>(mtp_layers.begin(), mtp_layers.end()))},
                {"present", !mtp_layers.empty()},
                {"tensors", mtp_tensors}};
  ck["mtp"] = mtp_f;

  // --- summary per group (counted in arrays, written once)
  struct GroupCounts {
    std::array<size_t, kDtypeCount> weight_dtypes{};
    std::array<size_t, kParamCount> scale_tensors{};
  };
  std::map<std::string, GroupCounts> group_counts;
  Json summary = Json::object();
  Json layer_groups = Json::object();
  for (const auto& [name, r] : runtime) {
    Json& g = summary[r.group];
    if (g.is_null()) g = {{"modules", 0}, {"schemes", Json::object()}, {"weight_dtypes", Json::object()},
                          {"scale_tensors", Json::object()}};
    g["modules"] = g["modules"].get<int>() + 1;
    for (const auto& [sv, n] : r.schemes) {
      const std::string sch(sv);
      g["schemes"][sch] = g["schemes"].value(sch, 0) + n;
    }
    GroupCounts& c = group_counts[r.group];
    for (uint32_t d : r.disk) {
      const DiskModule& dm = disk[d];
      for (uint32_t bits = dm.present; bits; bits &= bits - 1) {
        const auto p = static_cast<Param>(std::countr_zero(bits));
        if (p == p_weight || p == p_weight_packed || p == p_qweight || p == p_blocks)
          ++c.weight_dtypes[dm.dtype[p]];
        else if (p != p_bias)
          ++c.scale_tensors[p];
      }
    }
    layer_groups[r.group] = g["modules"];
  }
  for (const auto& [group, c] : group_counts) {
    Json& g = summary[group];
    for (size_t i = 0; i < kDtypeCount; ++i)
      if (c.weight_dtypes[i]) g["weight_dtypes"][std::string(dtype_name(i))] = c.weight_dtypes[i];
    for (size_t i = 0; i < kParamCount; ++i)
      if (c.scale_tensors[i]) g["scale_tensors"][std::string(kParamNames[i])] = c.scale_tensors[i];
  }
  out.summary = summary;
  ck["layer_groups"] = layer_groups;

  // --- quantization
  const std::string engine = [&] {
    const Json* e = find_fact(in_facts, "engine.name");
    return e && e->is_string() ? e->get<std::string>() : std::string("vllm");
  }();
  const bool sglang = engine == "sglang";
  QuantSpec q = parse_quant_config(cfg.quant_config, cfg.quant_config_source, model_type);
  qf["engine"] = engine;
  qf["method"] = q.method.empty() ? Json(nullptr) : Json(q.method);
  qf["effective_method"] = q.effective_method.empty() ? Json(nullptr) : Json(q.effective_method);
  qf["source"] = cfg.quant_config_source.empty() ? Json(nullptr) : Json(cfg.quant_config_source);
  qf["format"] = q.format.empty() ? Json(nullptr) : Json(q.format);
  qf["ignore"] = q.skip;
  qf["ignore_key"] = q.skip_key.empty() ? Json(nullptr) : Json(q.skip_key);
  qf["unread_ignore_key"] = q.unread_skip_key.empty() ? Json(nullptr) : Json(q.unread_skip_key);
  qf["unread_ignore"] = q.unread_skip;
  qf["kv_cache_scheme"] = q.kv_cache_scheme;
  qf.update(quant_shape_facts(cfg.quant_config));
  for (const std::string& n : q.notes) out.notes.push_back({"info", "quant_config", n, cfg.quant_config_file});

  RegexCache re;
  Matcher match{q, arch, sglang, re};
  // The skip list as the engine sees it: vLLM maps entries through the model's mapper
  // (compressed-tensors: only dotted, non-"re:" entries); SGLang is not modelled as mapping.
  std::vector<std::string> mapped_skip;
  for (const std::string& e : q.skip) {
    const bool mappable = arch && !sglang && !starts_with(e, "re:") &&
                          (q.skip_match != SkipMatch::exact_or_re || e.find('.') != std::string::npos);
    mapped_skip.push_back(mappable ? apply_renames(e, arch->mapper) : e);
  }

  const bool modelled = !q.method.empty() && (q.skip_match != SkipMatch::none || q.quantizes_linear ||
                                               q.experts_only || q.method == "compressed-tensors");
  Json stored_mismatch = Json::array(), fused_disagree = Json::array(), unmatched_layers = Json::array(),
       never_q = Json::array(), scale_inv_missing = Json::array(), scale_inv_unquantized = Json::array(), mtp_differs = Json::array(),
       mtp_unquantized = Json::array();
  size_t stored_mismatch_count = 0, unmatched_count = 0;
  std::set<std::string> candidate_names;  // every name an ignore entry could address
  // Main-model stored scheme per role, for the MTP comparison.
  std::map<std::string, std::map<std::string, int>> main_roles;
  for (const auto& [name, r] : runtime)
    if (r.group == "main")
      for (const auto& [s, n] : r.schemes) main_roles[r.role][std::string(s)] += n;

  for (auto& [name, r] : runtime) {
    candidate_names.insert(name);
    if (r.kind == Kind::embed || r.kind == Kind::router) continue;
    // Stored state.
    const std::string stored = r.schemes.size() == 1 ? std::string(r.schemes.begin()->first) : "mixed";
    const std::string first_module(disk[r.disk.front()].name);
    bool shards_disagree = false;
    if (r.kind != Kind::moe && r.shard_schemes.size() > 1) {
      std::set<std::string_view> all;
      for (const auto& [k, s] : r.shard_schemes) all.insert(s.begin(), s.end());
      shards_disagree = all.size() > 1;
    }
    if (r.kind == Kind::moe && r.schemes.size() > 1) shards_disagree = true;
    if (shards_disagree) {
      Json sh = Json::object();
      for (const auto& [k, s] : r.shard_schemes) sh[std::string(k)] = std::vector<std::string>(s.begin(), s.end());
      push_capped(fused_disagree, Json{{"runtime", name}, {"reason", "stored"}, {"shards", sh}});
    }
    bool stored_q = false;
    for (const auto& [s, n] : r.schemes) stored_q = stored_q || is_quantized_scheme(s);

    bool never = false;
    if (arch)
      for (const std::string& nq : arch->never_quantized) never = never || ends_with_path(name, nq);
    if (never && stored_q) push_capped(never_q, Json{{"runtime", name}, {"stored", stored}, {"module", first_module}});

    if (arch)
      for (const std::string& need : arch->needs_scale_inv)
        if (ends_with_path(name, need) && stored != "fp8_block") {
          Json e{{"module", first_module}, {"runtime", name}, {"group", r.group}, {"stored", stored}};
          if (!stored_q) push_capped(scale_inv_unquantized, e);
          push_capped(scale_inv_missing, std::move(e));
        }

    // MTP vs main by role.
    if (r.group == "mtp" && r.kind != Kind::lm_head) {
      auto mr = main_roles.find(r.role);
      if (mr != main_roles.end()) {
        const std::string main_s =
            std::max_element(mr->second.begin(), mr->second.end(), [](auto& a, auto& b) { return a.second < b.second; })
                ->first;
        if (main_s != stored && !(r.schemes.count(main_s))) {
          push_capped(mtp_differs,
                      Json{{"module", first_module}, {"runtime", name}, {"role", r.role}, {"mtp", stored}, {"main", main_s}});
          if (is_quantized_scheme(main_s) && !stored_q) push_capped(mtp_unquantized, name);
        }
      }
    }

    // Config state.
    if (!modelled || never) continue;
    std::string config_state;  // "quantized" | "unquantized"
    bool disagree = false;
    if (q.experts_only) {
      config_state = r.kind == Kind::moe ? "quantized" : "unquantized";
    } else if (q.method == "compressed-tensors") {
      if (r.kind == Kind::moe) {
        int ign = 0;
        for (const char* p : {".0.gate_proj", ".0.up_proj", ".0.down_proj"}) {
          const std::string probe = name + p;
          candidate_names.insert(probe);
          bool d = false;
          ign += match.skipped(probe, mapped_skip, d) ? 1 : 0;
        }
        if (ign != 0 && ign != 3) disagree = true;
        config_state = ign == 3 ? "unquantized" : match.target_matched(name + ".0.gate_proj", Kind::moe) ? "quantized"
                                                                                                          : "unmatched";
      } else {
        std::vector<std::string> shard_names;
        const bool ign = match.skipped(name, mapped_skip, disagree, &shard_names);
        candidate_names.insert(shard_names.begin(), shard_names.end());
        config_state = ign ? "unquantized" : match.target_matched(name, r.kind) ? "quantized" : "unmatched";
      }
      if (config_state == "unmatched") {
        if (r.kind != Kind::lm_head) {  // ParallelLMHead errors are swallowed
          ++unmatched_count;
          push_capped(unmatched_layers, name);
        }
        config_state = "unquantized";
      }
    } else {
      std::vector<std::string> shard_names;
      bool ign = match.skipped(name, mapped_skip, disagree, &shard_names);
      candidate_names.insert(shard_names.begin(), shard_names.end());
      if (q.method.rfind("gptq", 0) == 0 || q.method == "auto_gptq")
        for (const std::string& p : q.gptq_dynamic_exclude) ign = ign || re.match(p, name);
      const bool quantizable = r.kind != Kind::lm_head || q.lm_head_quantized;
      config_state = !ign && quantizable && q.quantizes_linear ? "quantized" : "unquantized";
    }
    if (disagree)
      push_capped(fused_disagree, Json{{"runtime", name}, {"reason", "ignore"}, {"shards", Json::object()}});
    if ((config_state == "quantized") != stored_q) {
      // lm_head kept in higher precision while the config would not quantize it anyway is normal;
      // BF16 MTP heads etc. are reported like any other module.
      ++stored_mismatch_count;
      push_capped(stored_mismatch, Json{{"module", first_module},
                                        {"runtime", name},
                                        {"group", r.group},
                                        {"config", config_state},
                                        {"stored", stored}});
    }
  }

  // Ignore entries that match no runtime module.
  Json ignore_unmatched = Json::array();
  size_t ignore_unmatched_count = 0;
  // Without shard headers there is no runtime module list to match against: say nothing.
  if (modelled && !q.skip.empty() && !runtime.empty()) {
    for (size_t i = 0; i < q.skip.size(); ++i) {
      bool hit = false;
      for (const std::string& n : candidate_names)
        if (match.skip_entry_matches(n, mapped_skip[i])) {
          hit = true;
          break;
        }
      if (hit) continue;
      bool on_disk = false;
      for (const DiskModule& dm : disk)
        if (const std::string module(dm.name); match.skip_entry_matches(module, q.skip[i]) ||
            (!starts_with(q.skip[i], "re:") && starts_with(module, q.skip[i] + "."))) {
          on_disk = true;
          break;
        }
      ++ignore_unmatched_count;
      push_capped(ignore_unmatched, Json{{"entry", q.skip[i]}, {"mapped", mapped_skip[i]}, {"on_disk_match", on_disk}});
    }
  }
  for (const auto& [bad, why] : re.bad())
    out.notes.push_back({"warning", "regex_unsupported",
                         fmt::format("pattern '{}' is not understood by specprobe's regex engine ({}); treated as matching nothing", bad, why),
                         cfg.quant_config_file});

  // Draft modules built without prefix= (matched as "") in builds before the table's fix.
  Json empty_prefix = Json::object();
  if (!empty_prefix_disk.empty()) {
    bool d = false;
    const bool ignored = match.skipped("", mapped_skip, d);
    const bool matched = q.method == "compressed-tensors" ? match.target_matched("", Kind::linear) : q.quantizes_linear;
    bool stored_q = false;
    std::vector<std::string> modules;
    for (uint32_t m : empty_prefix_disk) {
      modules.emplace_back(disk[m].name);
      stored_q = stored_q || is_quantized_scheme(stored_scheme(disk[m]));
    }
    const bool config_q = !ignored && matched;
    const bool raises = q.method == "compressed-tensors" && !ignored && !matched;
    empty_prefix = {{"modules", modules},
                    {"fix", arch->empty_prefix_fix},
                    {"ignored", ignored},
                    {"matched_by_targets", matched},
                    {"stored_quantized", stored_q},
                    {"before_41965", raises ? "raises" : config_q != stored_q ? "mismatch" : "ok"},
                    {"before_44821", (config_q && !raises) != stored_q ? "mismatch" : "ok"}};
  }

  qf["ignore_unmatched"] = ignore_unmatched;
  qf["ignore_unmatched_count"] = ignore_unmatched_count;
  qf["stored_mismatch"] = stored_mismatch;
  qf["stored_mismatch_count"] = stored_mismatch_count;
  qf["fused_disagree"] = fused_disagree;
  qf["unmatched_layers"] = unmatched_layers;
  qf["unmatched_layers_count"] = unmatched_count;
  qf["never_quantized_stored_quantized"] = never_q;
  qf["scale_inv_missing"] = scale_inv_missing;
  qf["scale_inv_missing_unquantized"] = scale_inv_unquantized;
  qf["mtp_differs"] = mtp_differs;
  qf["mtp_unquantized_layers"] = mtp_unquantized;
  qf["empty_prefix"] = empty_prefix;
  qf["modelled"] = modelled && !runtime.empty();
  ck["problems"] = problems;
  ck["problem_count"] = problem_count;
  return out;
}

}  // namespace specprobe
