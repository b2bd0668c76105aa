// What the phases of analyze_checkpoint share; internal to src/inputs/checkpoint (the public API
// is checkpoint.hpp). One Analysis record carries a run from phase to phase: analysis.cpp calls
// the phases in order, each reads what the earlier ones left in it and adds its own part.
//   index.cpp        the index file (model.safetensors.index.json)
//   shards.cpp       shard list and path safety, header reads, index cross-check, tensor inventory
//   layer_map.cpp    on-disk modules, runtime modules and their groups, the per-group summary
//   names.cpp        on-disk -> runtime name translation (the tables are in name_tables.cpp)
//   quant_match.cpp  the regex cache and the ignore/targets matcher
//   quant_check.cpp  the quantization phase: config state against stored state per module
//   weights.cpp      the weights inventory by sharding class (checkpoint.weights)
#pragma once
#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/ascii.hpp"
#include "common/json.hpp"
#include "common/py_regex.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/checkpoint/model_config.hpp"
#include "inputs/checkpoint/name_index.hpp"
#include "inputs/checkpoint/name_tables.hpp"
#include "inputs/checkpoint/quant_config.hpp"
#include "inputs/checkpoint/safetensors.hpp"

namespace specprobe::checkpoint {

namespace fs = std::filesystem;

inline constexpr size_t kListCap = 64;  // longest list in the facts; *_count facts hold the number

// ---------------------------------------------------------------------------------------------
// Small helpers

inline bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
inline bool starts_with(std::string_view s, std::string_view p) { return s.rfind(p, 0) == 0; }
// S ends with the dotted path SUF at a component boundary.
inline bool ends_with_path(std::string_view s, std::string_view suf) {
  return s == suf || (ends_with(s, suf) && s[s.size() - suf.size() - 1] == '.');
}
std::string leaf_of(const std::string& s);
inline void push_capped(Json& arr, Json v) {
  if (arr.size() < kListCap) arr.push_back(std::move(v));
}

// ---------------------------------------------------------------------------------------------
// Name translation (names.cpp)

// vLLM's WeightsMapper._map_name over RULES.
std::string apply_renames(std::string name, const std::vector<Rename>& rules);
// A module name mapped as its "<module>.weight" tensor is.
std::string map_module(const std::string& module, const std::vector<Rename>& rules);
// Load-time fusion: a shard leaf path replaced by its fused module.
std::string fuse(const std::string& name, const FusedMap& load_fuse);

// The MTP patterns of the naming table have the shape ^<literal>(\d+)\.(.*)$ or ^<literal>()(.*)$;
// they are matched by hand because this runs once per on-disk module (~50k for DeepSeek-V3).
struct MtpPattern {
  std::string prefix;
  bool indexed = false;
};
MtpPattern parse_mtp_pattern(const std::string& re);
// (index or -1, rest) when NAME matches.
std::optional<std::pair<int64_t, std::string>> match_mtp(const MtpPattern& p, const std::string& name);
// ^(.*?)(layers|mtp_layers)\.\d+\. -> what follows; "mtp.<rest>" -> rest; else the name.
std::string role_of(const std::string& runtime);

// ---------------------------------------------------------------------------------------------
// Modules (layer_map.cpp)

// Parameter names that end a tensor name of a (possibly quantized) linear module, sorted; "blocks"
// and "blocks_scales" come from gpt-oss's *_blocks / *_scales expert tensors.
inline constexpr std::string_view kParamNames[] = {"bias",
                                                   "blocks",
                                                   "blocks_scales",
                                                   "g_idx",
                                                   "input_global_scale",
                                                   "input_scale",
                                                   "qweight",
                                                   "qzeros",
                                                   "scale",
                                                   "scales",
                                                   "weight",
                                                   "weight_g_idx",
                                                   "weight_global_scale",
                                                   "weight_packed",
                                                   "weight_scale",
                                                   "weight_scale_2",
                                                   "weight_scale_inv",
                                                   "weight_shape",
                                                   "weight_zero_point"};
inline constexpr size_t kParamCount = std::size(kParamNames);
enum Param : uint8_t {
  p_bias,
  p_blocks,
  p_blocks_scales,
  p_g_idx,
  p_input_global_scale,
  p_input_scale,
  p_qweight,
  p_qzeros,
  p_scale,
  p_scales,
  p_weight,
  p_weight_g_idx,
  p_weight_global_scale,
  p_weight_packed,
  p_weight_scale,
  p_weight_scale_2,
  p_weight_scale_inv,
  p_weight_shape,
  p_weight_zero_point
};
static_assert(p_weight_zero_point + 1 == kParamCount);

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

inline bool is_quantized_scheme(std::string_view s) { return s != "bf16" && s != "f16" && s != "f32"; }
// The storage scheme of a module: a static string.
std::string_view stored_scheme(const DiskModule& m);

// ---------------------------------------------------------------------------------------------
// Matching (quant_match.cpp; knowledge file section 3)

// Python re.match, anchored at the start only, for patterns from downloaded config files: PyRegex
// runs in time linear in the name (std::regex backtracks without bound). Compiled patterns are
// cached; a pattern PyRegex refuses never matches and is reported once, with the reason.
class RegexCache {
 public:
  bool match(const std::string& pattern, const std::string& value);
  // Refused patterns and why.
  const std::map<std::string, std::string>& bad() const { return bad_; }

 private:
  std::unordered_map<std::string, std::optional<PyRegex>> cache_;
  std::map<std::string, std::string> bad_;
};

// The quantization config's ignore list and targets against runtime names, with the semantics of
// the engine (vLLM, or SGLang where it differs) and of the method that reads the list.
struct Matcher {
  const QuantSpec& q;
  const ArchNames* arch;
  bool sglang;
  RegexCache& re;

  // compressed-tensors _is_equal_or_regex_match (SGLang: check_contains for ignore).
  bool ct_match(const std::string& value, const std::string& target, bool contains);
  // One skip-list entry against one runtime (or shard) name, with the method's semantics.
  bool skip_entry_matches(const std::string& name, const std::string& entry);
  bool skipped_single(const std::string& name, const std::vector<std::string>& skip);
  // should_ignore_layer / is_layer_skipped with fused expansion through packed_map. DISAGREE is
  // set when the shards of a fused module disagree (vLLM raises); SHARD_NAMES gets the shard names.
  bool skipped(const std::string& name, const std::vector<std::string>& skip, bool& disagree,
               std::vector<std::string>* shard_names = nullptr);
  // find_matched_target: name (exact / re:), class name (contains, case-insensitive), fused shards.
  bool target_matched(const std::string& name, Kind kind);
};

// ---------------------------------------------------------------------------------------------
// Index and shards (index.cpp, shards.cpp)

// model.safetensors.index.json. A DeepSeek-size index has ~90k entries; it is read by the strict
// scanner (common/json_scan), which keeps the tensor names in the file's buffer (unescaped in
// place). Anything the scanner does not accept goes through nlohmann's SAX parser instead, which
// then decides (and words the error).
struct IndexData {
  bool valid = false;
  std::vector<std::string> files;                              // distinct shard files, first-seen order
  std::vector<std::pair<std::string_view, uint32_t>> entries;  // tensor -> file id, in file order
  std::vector<std::string> non_string;
  std::optional<uint64_t> total_size;
  std::string text;               // the file; entries view it (fast path)
  std::deque<std::string> names;  // entry names (SAX path)
};
// Reads PATH into D; false with ERR on an unusable index.
bool read_index(const std::string& path, IndexData& d, std::string& err);

struct ShardJob {
  std::string rel;  // as named by the index / directory listing
  fs::path path;
  bool referenced = true;  // named by the index (or no index)
  HeaderResult result;
  // A shard on the Hub, not on disk: its fetched header (resolve/hub.hpp) and its size there.
  fs::path stub;
  uint64_t remote_size = 0;
};

// A tensor of the inventory: names stay in the shard header buffers.
struct TensorRef {
  const TensorInfo* t;
  const ShardJob* job;
  uint32_t index_file;  // the file the index names for it last (kNoFile: none)
};
inline constexpr uint32_t kNoFile = UINT32_MAX;

// ---------------------------------------------------------------------------------------------
// One run

struct Analysis {
  Analysis(const ModelConfig& config, const Json& facts);
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  // A note; errors also go to checkpoint.problems.
  void problem(std::string code, std::string file, std::string message, std::string severity = "error");

  const ModelConfig& cfg;
  const Json& in_facts;
  CheckpointAnalysis out;
  Json& ck;  // out.facts["checkpoint"]
  Json& qf;  // out.facts["quant"]
  Json problems = Json::array();
  size_t problem_count = 0;

  // locate_tree
  fs::path root, root_canon, blobs_canon;
  // A snapshot of a Hub repository (resolve/hub.hpp): shard -> its size on the Hub, read from the
  // snapshot's manifest; the headers are under root/.specprobe-headers/.
  std::map<std::string, uint64_t> remote_shards;
  bool remote = false;
  // read_index_file
  fs::path index_path;
  IndexData index;
  Json index_facts = {{"present", false}};
  bool has_index = false;
  // list_shards, read_shard_headers
  std::vector<ShardJob> jobs;
  // take_inventory: REFS in header order, shard after shard; TENSORS maps a name to its slot
  std::vector<TensorRef> refs;
  NameIndex tensors;
  uint64_t bytes = 0;
  // build_disk_modules, map_runtime_modules
  std::vector<DiskModule> disk;  // sorted by name
  std::string model_type;
  const ArchNames* arch = nullptr;
  std::map<std::string, RuntimeModule> runtime;
  std::vector<uint32_t> empty_prefix_disk;  // MTP leaves older builds build without prefix=
};

// The phases, in the order analysis.cpp calls them.
void locate_tree(Analysis& a);          // shards.cpp: root, its canonical path, an HF cache's blobs/
void read_index_file(Analysis& a);      // index.cpp
void list_shards(Analysis& a);          // shards.cpp
void read_shard_headers(Analysis& a);   // shards.cpp
void take_inventory(Analysis& a);       // shards.cpp
void build_disk_modules(Analysis& a);   // layer_map.cpp
void map_runtime_modules(Analysis& a);  // layer_map.cpp
void summarize_groups(Analysis& a);     // layer_map.cpp
void check_quantization(Analysis& a);   // quant_check.cpp
void tally_weights(Analysis& a);        // weights.cpp: checkpoint.weights
// The weights inventory computed from config.json (no headers): null when the config lacks the shapes.
Json weights_from_config_for(const ModelConfig& cfg, const std::string& engine, const std::string& serve_quant);

}  // namespace specprobe::checkpoint
