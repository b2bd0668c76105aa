// Checkpoint analysis: shard discovery and path safety, parallel header reads, index cross-check,
// layer map, runtime-name translation (name_tables) and engine-exact quantization matching.
#include "inputs/checkpoint/checkpoint.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <unordered_map>

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

// Patterns come from downloaded config files and std::regex backtracks (and recurses) without
// bound: refuse, as unsupported, long or deeply nested patterns and quantified groups that hold a
// quantifier or an alternation ((a*)*, (a|a)+), the shapes that backtrack exponentially.
bool bounded_regex(std::string_view p) {
  if (p.size() > 512) return false;
  std::vector<bool> risky;  // per open group: holds a quantifier or '|'
  bool last_group_risky = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    const bool quant = c == '*' || c == '+' || c == '{' || (c == '?' && i > 0 && p[i - 1] != '(');
    if (c == '\\') {
      ++i;
    } else if (c == '[') {  // a class: skip to its end
      for (++i; i < p.size() && p[i] != ']'; ++i)
        if (p[i] == '\\') ++i;
    } else if (c == '(') {
      risky.push_back(false);
      if (risky.size() > 16) return false;
    } else if (c == ')') {
      if (risky.empty()) return false;
      last_group_risky = risky.back();
      risky.pop_back();
      if (!risky.empty() && last_group_risky) risky.back() = true;
      if (i + 1 < p.size() && (p[i + 1] == '*' || p[i + 1] == '+' || p[i + 1] == '{') && last_group_risky) return false;
      continue;
    } else if (quant || c == '|') {
      if (!risky.empty()) risky.back() = true;
    }
  }
  return true;
}

// Python re.match: anchored at the start only. Compiled patterns are cached; a pattern std::regex
// cannot compile (or that bounded_regex refuses) never matches (and is reported once).
class RegexCache {
 public:
  bool match(const std::string& pattern, const std::string& value) {
    auto it = cache_.find(pattern);
    if (it == cache_.end()) {
      std::optional<std::regex> re;
      try {
        if (bounded_regex(pattern)) re.emplace(pattern, std::regex::ECMAScript | std::regex::optimize);
        else bad_.insert(pattern);
      } catch (const std::regex_error&) {
        bad_.insert(pattern);
      }
      it = cache_.emplace(pattern, std::move(re)).first;
    }
    if (!it->second) return false;
    return std::regex_search(value, *it->second, std::regex_constants::match_continuous);
  }
  const std::set<std::string>& bad() const { return bad_; }

 private:
  std::unordered_map<std::string, std::optional<std::regex>> cache_;
  std::set<std::string> bad_;
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

// Parameter names that end a tensor name of a (possibly quantized) linear module.
const std::vector<std::string> kParams = {
    "weight_scale_inv", "weight_scale_2", "weight_global_scale", "input_global_scale", "weight_zero_point",
    "weight_g_idx",     "weight_packed",  "weight_shape",        "weight_scale",       "input_scale",
    "weight",           "bias",           "scale",               "qweight",            "qzeros",
    "scales",           "g_idx"};

struct ParamInfo {
  std::string dtype;
  size_t rank = 0;
};

struct DiskModule {
  std::map<std::string, ParamInfo> params;
  std::string file;
};

enum class Kind { linear, moe, lm_head, embed, router };

struct RuntimeModule {
  std::string name;   // runtime quant-match name ("" for empty-prefix MTP leaves in old builds)
  std::string group;  // main | mtp | embed | lm_head
  Kind kind = Kind::linear;
  std::vector<std::string> disk;           // on-disk modules (experts collapsed: one per expert shard)
  std::map<std::string, int> schemes;      // stored scheme -> count over disk modules
  std::map<std::string, std::set<std::string>> shard_schemes;  // shard suffix -> schemes
  std::string role;                        // name without the layer prefix, for main/MTP comparison
  bool empty_prefix_leaf = false;
};

bool is_quantized_scheme(const std::string& s) { return s != "bf16" && s != "f16" && s != "f32"; }

std::string stored_scheme(const DiskModule& m) {
  auto has = [&](const char* p) { return m.params.count(p) > 0; };
  auto dtype = [&](const char* p) { return m.params.count(p) ? m.params.at(p).dtype : std::string(); };
  if (has("blocks")) return "mxfp4_blocks";
  if (has("qweight")) return "gptq_awq_packed";
  if (has("weight_packed")) return dtype("weight_packed") == "I32" ? "int_packed" : "fp4_packed";
  const std::string w = dtype("weight");
  const bool scale_inv = has("weight_scale_inv") || has("scale");
  const bool scale = has("weight_scale");
  if (starts_with(w, "F8_")) return scale_inv ? "fp8_block" : scale ? "fp8_scale" : "fp8_noscale";
  if (w == "F4") return "fp4";
  if (w == "I8" || w == "U8") return scale_inv || scale ? "int8_or_fp4" : "int8_noscale";
  if (w == "BF16" || w == "F16" || w == "F32") {
    if (scale_inv || scale || has("input_scale")) return lower(w) + "_with_scale";
    return lower(w);
  }
  return w.empty() ? "unknown" : lower(w);
}

// "<base>.experts.<E>.<leaf>" -> (<base>.experts, leaf).
std::optional<std::pair<std::string, std::string>> split_expert(const std::string& m) {
  const size_t leaf_dot = m.rfind('.');
  if (leaf_dot == std::string::npos || leaf_dot == 0) return std::nullopt;
  const size_t num_dot = m.rfind('.', leaf_dot - 1);
  if (num_dot == std::string::npos || num_dot + 1 == leaf_dot) return std::nullopt;
  for (size_t i = num_dot + 1; i < leaf_dot; ++i)
    if (m[i] < '0' || m[i] > '9') return std::nullopt;
  if (!ends_with(std::string_view(m).substr(0, num_dot), ".experts")) return std::nullopt;
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

std::string role_of(const std::string& runtime) {
  static const std::regex re(R"(^(.*?)(layers|mtp_layers)\.\d+\.)");
  std::smatch m;
  if (std::regex_search(runtime, m, re)) return m.suffix().str();
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

// model.safetensors.index.json, read with a SAX handler straight into hash maps (a DeepSeek-size
// index has ~90k entries; a DOM with std::map nodes costs more than all shard headers together).
struct IndexData {
  bool valid = false;
  std::vector<std::string> files;                      // distinct shard files, first-seen order
  std::vector<std::pair<std::string, size_t>> entries;  // tensor -> file id, in file order
  std::unordered_map<std::string, size_t> by_name;
  std::vector<std::string> non_string;
  std::optional<uint64_t> total_size;
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
      d_.entries.emplace_back(key_, it->second);
      d_.by_name[key_] = it->second;
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
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    err = "index is not a JSON object";
    return false;
  }
  IndexSax sax(d);
  d.by_name.reserve(1 << 17);
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

  // --- cross-check, tensor inventory
  std::unordered_map<std::string, std::pair<const TensorInfo*, const ShardJob*>> tensors;
  tensors.reserve(1 << 16);
  std::map<std::string, int> dtypes;
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
      auto [it, fresh] = tensors.emplace(t.name, std::make_pair(&t, &j));
      if (!fresh) {
        problem("duplicate_tensor", j.path.string(),
                fmt::format("tensor '{}' is also stored in {}", t.name, it->second.second->rel));
        continue;
      }
      ++dtypes[t.dtype];
      bytes += t.end - t.begin;
    }
  }
  Json missing_in_shards = Json::array(), not_in_index = Json::array();
  size_t missing_count = 0, not_in_index_count = 0;
  if (has_index) {
    std::vector<const ShardJob*> job_by_file(index.files.size(), nullptr);
    for (const ShardJob& j : jobs)
      if (auto f = std::find(index.files.begin(), index.files.end(), j.rel); f != index.files.end())
        job_by_file[static_cast<size_t>(f - index.files.begin())] = &j;
    for (const auto& [name, file_id] : index.entries) {
      const ShardJob* job = job_by_file[file_id];
      if (!job || !job->result.header) continue;  // shard problem already reported
      auto t = tensors.find(name);
      if (t == tensors.end() || t->second.second != job) {
        ++missing_count;
        push_capped(missing_in_shards, name);
        if (missing_count <= 8)
          problem("index_tensor_missing", job->path.string(),
                  fmt::format("index names tensor '{}' but {} does not hold it", name, job->rel));
      }
    }
    for (const auto& [name, tj] : tensors) {
      auto w = index.by_name.find(name);
      if (w == index.by_name.end() || index.files[w->second] != tj.second->rel) {
        ++not_in_index_count;
        push_capped(not_in_index, name);
        if (not_in_index_count <= 8)
          problem("tensor_not_in_index", tj.second->path.string(),
                  fmt::format("tensor '{}' is stored in {} but the index does not say so", name, tj.second->rel));
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
  ck["tensors"] = tensors.size();
  ck["bytes"] = bytes;
  ck["dtypes"] = dtypes;

  // --- layer map
  std::map<std::string, DiskModule> disk;
  for (const auto& [name, tj] : tensors) {
    std::string module, param;
    if (const size_t dot = name.rfind('.'); dot != std::string::npos) {
      const std::string_view last = std::string_view(name).substr(dot + 1);
      if (std::find(kParams.begin(), kParams.end(), last) != kParams.end()) {
        module = name.substr(0, dot);
        param = std::string(last);
      }
    }
    if (module.empty()) {
      // gpt-oss MXFP4 experts: experts.gate_up_proj_blocks / _scales.
      for (const char* suf : {"_blocks", "_scales"})
        if (ends_with(name, suf) && name.find(".experts.") != std::string::npos) {
          module = name.substr(0, name.size() - std::string_view(suf).size());
          param = std::string(suf + 1);
        }
      if (param == "scales" && !module.empty()) param = "blocks_scales";
    }
    if (module.empty()) continue;
    DiskModule& m = disk[module];
    m.params[param] = {tj.first->dtype, tj.first->shape.size()};
    m.file = tj.second->rel;
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
  std::vector<std::string> empty_prefix_disk;
  for (const auto& [module, dm] : disk) {
    const auto w = dm.params.find("weight");
    const bool linear_like = dm.params.count("weight_packed") || dm.params.count("qweight") ||
                             dm.params.count("blocks") || (w != dm.params.end() && w->second.rank >= 2);
    if (!linear_like) continue;
    std::string base = module, shard_leaf;
    Kind kind = Kind::linear;
    if (auto ex = split_expert(module)) {
      base = ex->first;
      shard_leaf = ex->second;
      kind = Kind::moe;
    } else if (ends_with(module, ".experts.gate_up_proj") || ends_with(module, ".experts.down_proj")) {
      base = module.substr(0, module.rfind('.'));
      shard_leaf = leaf_of(module);
      kind = Kind::moe;
    }
    const std::string leaf = leaf_of(base);
    // Group and runtime name.
    std::string group = "main", rt;
    bool is_mtp = false, empty_leaf = false;
    std::optional<std::pair<int64_t, std::string>> mm;
    if (mtp_re) mm = match_mtp(*mtp_re, base);
    if (mm) {
      int64_t k = 0;
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
        is_mtp = true;
        std::string rest = mm->second;
        std::string t = arch->mtp_runtime;
        auto put = [&](const std::string& key, const std::string& val) {
          if (auto p = t.find(key); p != std::string::npos) t.replace(p, key.size(), val);
        };
        put("{L}", n_layers >= 0 ? std::to_string(n_layers + k) : "?");
        put("{k}", std::to_string(k));
        put("{rest}", rest);
        rt = fuse(apply_renames(t, arch->mtp_renames), arch->load_fuse);
        mtp_layers.insert(k);
        for (const std::string& l : arch->mtp_empty_prefix_leaves)
          if (rest == l) empty_leaf = true;
      }
    }
    if (!is_mtp && !arch && base.find("mtp") != std::string::npos) is_mtp = true;
    if (rt.empty()) rt = arch ? fuse(map_module(base, arch->mapper), arch->load_fuse) : base;
    if (is_mtp) {
      group = "mtp";
      mtp_tensors += dm.params.size();
    }
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
    RuntimeModule& r = runtime[rt];
    r.name = rt;
    r.group = group;
    r.kind = kind;
    if (r.disk.empty()) r.role = role_of(rt);
    r.empty_prefix_leaf = r.empty_prefix_leaf || empty_leaf;
    if (empty_leaf) empty_prefix_disk.push_back(module);
    r.disk.push_back(module);
    const std::string sch = stored_scheme(dm);
    ++r.schemes[sch];
    const std::string shard_key = kind == Kind::moe ? shard_leaf : module.substr(module.find_last_of('.') + 1);
    r.shard_schemes[shard_key].insert(sch);
  }
  Json mtp_f = {{"expected_depth", mtp_depth ? Json(*mtp_depth) : Json(nullptr)},
                {"layers_present", Json(std::vector<int64_t>(mtp_layers.begin(), mtp_layers.end()))},
                {"present", !mtp_layers.empty()},
                {"tensors", mtp_tensors}};
  ck["mtp"] = mtp_f;

  // --- summary per group
  Json summary = Json::object();
  Json layer_groups = Json::object();
  for (const auto& [name, r] : runtime) {
    Json& g = summary[r.group];
    if (g.is_null()) g = {{"modules", 0}, {"schemes", Json::object()}, {"weight_dtypes", Json::object()},
                          {"scale_tensors", Json::object()}};
    g["modules"] = g["modules"].get<int>() + 1;
    for (const auto& [s, n] : r.schemes) g["schemes"][s] = g["schemes"].value(s, 0) + n;
    for (const std::string& d : r.disk) {
      const DiskModule& dm = disk.at(d);
      for (const auto& [p, info] : dm.params) {
        if (p == "weight" || p == "weight_packed" || p == "qweight" || p == "blocks")
          g["weight_dtypes"][info.dtype] = g["weight_dtypes"].value(info.dtype, 0) + 1;
        else if (p != "bias")
          g["scale_tensors"][p] = g["scale_tensors"].value(p, 0) + 1;
      }
    }
    layer_groups[r.group] = g["modules"];
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
      for (const auto& [s, n] : r.schemes) main_roles[r.role][s] += n;

  for (auto& [name, r] : runtime) {
    candidate_names.insert(name);
    if (r.kind == Kind::embed || r.kind == Kind::router) continue;
    // Stored state.
    std::string stored = r.schemes.size() == 1 ? r.schemes.begin()->first : "mixed";
    bool shards_disagree = false;
    if (r.kind != Kind::moe && r.shard_schemes.size() > 1) {
      std::set<std::string> all;
      for (const auto& [k, s] : r.shard_schemes) all.insert(s.begin(), s.end());
      shards_disagree = all.size() > 1;
    }
    if (r.kind == Kind::moe && r.schemes.size() > 1) shards_disagree = true;
    if (shards_disagree) {
      Json sh = Json::object();
      for (const auto& [k, s] : r.shard_schemes) sh[k] = std::vector<std::string>(s.begin(), s.end());
      push_capped(fused_disagree, Json{{"runtime", name}, {"reason", "stored"}, {"shards", sh}});
    }
    bool stored_q = false;
    for (const auto& [s, n] : r.schemes) stored_q = stored_q || is_quantized_scheme(s);

    bool never = false;
    if (arch)
      for (const std::string& nq : arch->never_quantized) never = never || ends_with_path(name, nq);
    if (never && stored_q) push_capped(never_q, Json{{"runtime", name}, {"stored", stored}, {"module", r.disk.front()}});

    if (arch)
      for (const std::string& need : arch->needs_scale_inv)
        if (ends_with_path(name, need) && stored != "fp8_block") {
          Json e{{"module", r.disk.front()}, {"runtime", name}, {"group", r.group}, {"stored", stored}};
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
                      Json{{"module", r.disk.front()}, {"runtime", name}, {"role", r.role}, {"mtp", stored}, {"main", main_s}});
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
      push_capped(stored_mismatch, Json{{"module", r.disk.front()},
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
      for (const auto& [module, dm] : disk)
        if (match.skip_entry_matches(module, q.skip[i]) ||
            (!starts_with(q.skip[i], "re:") && starts_with(module, q.skip[i] + "."))) {
          on_disk = true;
          break;
        }
      ++ignore_unmatched_count;
      push_capped(ignore_unmatched, Json{{"entry", q.skip[i]}, {"mapped", mapped_skip[i]}, {"on_disk_match", on_disk}});
    }
  }
  for (const std::string& bad : re.bad())
    out.notes.push_back({"warning", "regex_unsupported",
                         fmt::format("pattern '{}' is not understood by specprobe's regex engine; treated as matching nothing", bad),
                         cfg.quant_config_file});

  // Draft modules built without prefix= (matched as "") in builds before the table's fix.
  Json empty_prefix = Json::object();
  if (!empty_prefix_disk.empty()) {
    bool d = false;
    const bool ignored = match.skipped("", mapped_skip, d);
    const bool matched = q.method == "compressed-tensors" ? match.target_matched("", Kind::linear) : q.quantizes_linear;
    bool stored_q = false;
    for (const std::string& m : empty_prefix_disk) stored_q = stored_q || is_quantized_scheme(stored_scheme(disk.at(m)));
    const bool config_q = !ignored && matched;
    const bool raises = q.method == "compressed-tensors" && !ignored && !matched;
    empty_prefix = {{"modules", empty_prefix_disk},
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
