// config.json reader: resolves the directory forms (plain, HF cache), finds the LM parameters
// (top level or text_config) and the quantization config the way vLLM's get_quant_config does.
#include "inputs/checkpoint/model_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/paths.hpp"

namespace specprobe {
namespace fs = std::filesystem;
namespace {

std::string trim_space(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// Picks the snapshot directory of an HF cache repo dir (one holding snapshots/).
Expected<fs::path> pick_snapshot(const fs::path& repo, ModelConfig& cfg) {
  const fs::path snaps = repo / "snapshots";
  std::error_code ec;
  const fs::path ref = repo / "refs" / "main";
  if (fs::is_regular_file(ref, ec)) {
    std::ifstream in(ref);
    char buf[256];  // a revision is a 40-hex commit; never slurp a huge file
    in.read(buf, sizeof buf);
    std::string rev(buf, static_cast<size_t>(in.gcount()));
    rev = trim_space(rev.substr(0, rev.find('\n')));
    if (!rev.empty() && rev.find('/') == std::string::npos && rev != "." && rev != ".." &&
        fs::is_directory(snaps / rev, ec)) {
      cfg.snapshot = rev;
      cfg.snapshot_choice = "refs/main";
      return snaps / rev;
    }
    cfg.notes.push_back(fmt::format("{} names snapshot '{}', which is missing", ref.string(), excerpt(rev)));
  }
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(snaps, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) entries.push_back(*it);
  if (ec) return input_error(fmt::format("cannot list snapshots: {}", ec.message()), {snaps.string()});
  if (entries.empty()) return input_error("HF cache has no snapshot", {snaps.string()});
  if (entries.size() == 1) {
    cfg.snapshot_choice = "only";
  } else {
    std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
      std::error_code e1, e2;
      auto ta = a.last_write_time(e1), tb = b.last_write_time(e2);
      if (ta != tb) return ta > tb;
      return a.path().filename() < b.path().filename();
    });
    cfg.snapshot_choice = "newest";
  }
  cfg.snapshot = entries.front().path().filename().string();
  return entries.front().path();
}

// Looks KEY up in OBJ; an object-valued key holding something else is an input error.
Expected<const Json*> object_field(const Json& obj, const char* key, const std::string& file,
                                   const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return static_cast<const Json*>(nullptr);
  if (!it->is_object())
    return input_error(fmt::format("{}{} must be an object, found {}", where, key, it->type_name()), {file});
  return &*it;
}

Expected<std::optional<int64_t>> int_field(const Json& obj, const char* key, const std::string& file,
                                           const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>{};
  if (it->is_number_integer()) return std::optional<int64_t>{it->get<int64_t>()};
  if (it->is_number_float()) {
    const double d = it->get<double>();
    // Range first: casting a double outside int64's range is undefined (1e22 in a config.json).
    if (std::isfinite(d) && std::abs(d) < 9e15 && d == static_cast<double>(static_cast<int64_t>(d)))
      return std::optional<int64_t>{static_cast<int64_t>(d)};
  }
  return input_error(fmt::format("{}{} must be an integer, found {}", where, key, excerpt(*it)), {file});
}

std::optional<std::string> string_field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it != obj.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}

// FILE, links resolved, lies in the checkpoint tree DIR or in its HF cache's blobs/ (a snapshot's
// files are links there). A metadata file linked out of the tree is not read (SECURITY.md).
bool in_checkpoint_tree(const fs::path& file, const fs::path& dir, const std::string& cache_repo) {
  std::error_code ec;
  const fs::path canon = fs::canonical(file, ec);
  if (ec) return false;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return false;
  if (path_under(canon, root)) return true;
  const fs::path repo = !cache_repo.empty()                            ? fs::path(cache_repo)
                        : root.parent_path().filename() == "snapshots" ? root.parent_path().parent_path()
                                                                       : fs::path();
  if (repo.empty()) return false;
  const fs::path blobs = fs::canonical(repo / "blobs", ec);
  return !ec && path_under(canon, blobs);
}

}  // namespace

bool looks_like_repo_id(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string_view::npos)
    return false;
  if (s.front() == '.' || s[slash + 1] == '.' || s.size() > 200) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

std::optional<std::string> find_in_hf_cache(const std::string& repo_id, std::string* hub_out) {
  if (!looks_like_repo_id(repo_id)) return std::nullopt;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  // huggingface_hub/constants.py: HF_HUB_CACHE (legacy HUGGINGFACE_HUB_CACHE), default
  // HF_HOME/hub, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface.
  fs::path hub;
  if (!env("HF_HUB_CACHE").empty())
    hub = env("HF_HUB_CACHE");
  else if (!env("HUGGINGFACE_HUB_CACHE").empty())
    hub = env("HUGGINGFACE_HUB_CACHE");
  else if (!env("HF_HOME").empty())
    hub = fs::path(env("HF_HOME")) / "hub";
  else if (!env("XDG_CACHE_HOME").empty())
    hub = fs::path(env("XDG_CACHE_HOME")) / "huggingface" / "hub";
  else if (!env("HOME").empty())
    hub = fs::path(env("HOME")) / ".cache" / "huggingface" / "hub";
  else
    return std::nullopt;
  if (hub_out) *hub_out = hub.string();
  std::string folder = "models--" + repo_id;
  for (size_t i = 0; (i = folder.find('/', i)) != std::string::npos;) folder.replace(i, 1, "--");
  const fs::path repo = hub / folder;
  std::error_code ec;
  if (!fs::is_directory(repo / "snapshots", ec)) return std::nullopt;
  ModelConfig probe;
  auto snap = pick_snapshot(repo, probe);
  if (!snap || !fs::is_regular_file(*snap / "config.json", ec)) return std::nullopt;
  return repo.string();
}

Expected<ModelConfig> read_model_config(const std::string& dir_or_file) {
  ModelConfig cfg;
  std::error_code ec;
  fs::path p(dir_or_file);
  if (!fs::exists(p, ec)) return input_error("no such file or directory", {dir_or_file});
  fs::path config_path;
  if (fs::is_directory(p, ec)) {
    fs::path dir = p;
    if (fs::is_directory(p / "snapshots", ec) && !fs::exists(p / "config.json", ec)) {
      auto snap = pick_snapshot(p, cfg);
      if (!snap) return snap.error();
      cfg.cache_repo = p.string();
      dir = *snap;
      cfg.notes.push_back(fmt::format("HF cache {}: using snapshot {} ({})", p.filename().string(), cfg.snapshot,
                                      cfg.snapshot_choice == "refs/main" ? "refs/main"
                                      : cfg.snapshot_choice == "only"    ? "the only one"
                                                                         : "the newest"));
    }
    config_path = dir / "config.json";
    cfg.dir = dir.string();
    if (!fs::exists(config_path, ec)) return input_error("no config.json in directory", {dir.string()});
    if (!in_checkpoint_tree(config_path, dir, cfg.cache_repo))
      return input_error("config.json is a link out of the checkpoint's directory tree; not read",
                         {config_path.string()});
  } else {
    config_path = p;
    cfg.dir = p.has_parent_path() ? p.parent_path().string() : ".";
  }
  cfg.path = config_path.string();
  if (!fs::is_regular_file(config_path, ec))  // follows symlinks (HF cache blobs)
    return input_error("not a regular file", {cfg.path});

  auto parsed = read_json_relaxed_file(cfg.path);
  if (!parsed) return parsed.error();
  cfg.raw = std::move(parsed->value);
  cfg.non_finite = std::move(parsed->non_finite);
  if (!cfg.raw.is_object())
    return input_error(fmt::format("config.json must hold a JSON object, found {}", cfg.raw.type_name()), {cfg.path});

  auto text = object_field(cfg.raw, "text_config", cfg.path, "");
  if (!text) return text.error();
  cfg.has_text_config = *text != nullptr;
  cfg.text = cfg.has_text_config ? **text : cfg.raw;
  const std::string tw = cfg.has_text_config ? "text_config." : "";

  // Identity: the wrapper's architecture/model_type (what the engine dispatches on).
  if (auto it = cfg.raw.find("architectures"); it != cfg.raw.end() && !it->is_null()) {
    if (!it->is_array()) return input_error("architectures must be a list", {cfg.path});
    if (!it->empty() && (*it)[0].is_string()) cfg.architecture = (*it)[0].get<std::string>();
  }
  if (!cfg.architecture && cfg.has_text_config)
    if (auto it = cfg.text.find("architectures");
        it != cfg.text.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
      cfg.architecture = (*it)[0].get<std::string>();
  cfg.model_type = string_field(cfg.raw, "model_type");
  if (cfg.has_text_config) cfg.text_model_type = string_field(cfg.text, "model_type");
  if (!cfg.model_type) cfg.model_type = cfg.text_model_type;

  // Integer fields from the LM part (text_config when present, top level as fallback).
  auto get_int = [&](const char* key, std::optional<int64_t>& out) -> Status {
    auto v = int_field(cfg.text, key, cfg.path, tw);
    if (!v) return v.error();
    out = *v;
    if (!out && cfg.has_text_config) {
      auto top = int_field(cfg.raw, key, cfg.path, "");
      if (!top) return top.error();
      out = *top;
    }
    return Ok{};
  };
  struct IntKey {
    const char* key;
    std::optional<int64_t>* out;
  };
  std::optional<int64_t> raw_head_dim, nextn, mtp_layers;
  const IntKey keys[] = {
      {"num_attention_heads", &cfg.num_attention_heads},
      {"num_key_value_heads", &cfg.num_kv_heads},
      {"head_dim", &raw_head_dim},
      {"hidden_size", &cfg.hidden_size},
      {"kv_lora_rank", &cfg.kv_lora_rank},
      {"qk_rope_head_dim", &cfg.qk_rope_head_dim},
      {"qk_nope_head_dim", &cfg.qk_nope_head_dim},
      {"v_head_dim", &cfg.v_head_dim},
      {"q_lora_rank", &cfg.q_lora_rank},
      {"index_n_heads", &cfg.index_n_heads},
      {"index_head_dim", &cfg.index_head_dim},
      {"index_topk", &cfg.index_topk},
      {"num_nextn_predict_layers", &nextn},
      {"mtp_num_hidden_layers", &mtp_layers},
      {"num_hidden_layers", &cfg.num_hidden_layers},
      {"max_position_embeddings", &cfg.max_position_embeddings},
      {"vocab_size", &cfg.vocab_size},
  };
  for (const IntKey& k : keys)
    if (auto s = get_int(k.key, *k.out); !s) return s.error();
  // A size the file leaves out is the transformers config class's default, which the engines then
  // build with (google/gemma-3-*-it write no vocab_size: Gemma3TextConfig's 262,208 rows).
  struct ClassDefault {
    const char* model_type;
    const char* key;
    std::optional<int64_t>* out;
    int64_t value;
  };
  const ClassDefault class_defaults[] = {
      {"gemma3_text", "vocab_size", &cfg.vocab_size, 262208},  // transformers Gemma3TextConfig
  };
  for (const ClassDefault& d : class_defaults)
    if (!*d.out && (cfg.text_model_type == d.model_type || cfg.model_type == d.model_type)) *d.out = d.value;
  // Bounds from what the engines do with the value (issue 48: a value the engine accepts is never a
  // corrupt file). A negative count, or no query heads (vLLM divides the hidden size by them), is a
  // config no engine builds: an input error naming the field, as a count of the wrong type is. A
  // value beyond every released model (the largest have ~160 layers, 128 heads, ~20k hidden size,
  // ~1M vocabulary entries, 10M-token contexts) that the engine would still build is a note, and
  // the value stands. A field the model's attention does not use is not checked: head_dim of an
  // MLA config (vLLM sizes MLA heads from kv_lora_rank + qk_rope_head_dim), where 0 or a stale
  // value is common.
  struct Plausible {
    const char* key;
    std::optional<int64_t>* v;
    int64_t lo;  // below: an error (lo = 1: the engine divides by it), or, when soft_lo, a note
    int64_t hi;  // above: a note
    bool soft_lo;
  };
  const bool mla_config = cfg.kv_lora_rank.has_value();
  const Plausible plausible[] = {
      {"num_hidden_layers", &cfg.num_hidden_layers, 1, 100000, true},
      {"num_attention_heads", &cfg.num_attention_heads, 1, 1000000, false},
      {"num_key_value_heads", &cfg.num_kv_heads, 1, 1000000, true},
      {"head_dim", mla_config ? nullptr : &raw_head_dim, 1, 1 << 20, true},
      {"hidden_size", &cfg.hidden_size, 1, 1 << 24, true},
      {"vocab_size", &cfg.vocab_size, 1, int64_t{1} << 32, true},
      {"max_position_embeddings", &cfg.max_position_embeddings, 1, int64_t{1} << 40, true},
      {"num_nextn_predict_layers", &nextn, 0, 1000, true},
      {"mtp_num_hidden_layers", &mtp_layers, 0, 1000, true},
      {"kv_lora_rank", &cfg.kv_lora_rank, 1, 1 << 20, true},
      {"qk_rope_head_dim", &cfg.qk_rope_head_dim, 0, 1 << 20, true},
      {"index_n_heads", &cfg.index_n_heads, 1, 1000000, true},
      {"index_head_dim", &cfg.index_head_dim, 1, 1 << 20, true},
  };
  for (const Plausible& p : plausible) {
    if (!p.v || !*p.v) continue;
    const int64_t x = **p.v;
    const bool nested = cfg.has_text_config && cfg.text.contains(p.key);
    const std::string name = fmt::format("{}{}", nested ? "text_config." : "", p.key);
    if (x < 0 || (x < p.lo && !p.soft_lo))
      return input_error(fmt::format("{} = {} is a size no engine builds a model with: a corrupt config.json", name, x),
                         {cfg.path});
    if (x < p.lo) {
      cfg.notes.push_back(
          fmt::format("{} = {}: the engines refuse the model at load (a size of 0); left unknown here", name, x));
      p.v->reset();
    } else if (x > p.hi) {
      cfg.notes.push_back(
          fmt::format("{} = {} is beyond every released model (up to {}): read as given; check the "
                      "config.json",
                      name, x, p.hi));
    }
  }
  if (cfg.num_attention_heads && cfg.num_kv_heads && *cfg.num_kv_heads > *cfg.num_attention_heads)
    return input_error(fmt::format("num_key_value_heads = {} exceeds num_attention_heads = {}: a corrupt config.json",
                                   *cfg.num_kv_heads, *cfg.num_attention_heads),
                       {cfg.path});

  if (!cfg.num_kv_heads) cfg.num_kv_heads = cfg.num_attention_heads;
  const bool is_v4 = cfg.model_type == "deepseek_v4" || cfg.text_model_type == "deepseek_v4";
  cfg.mla = cfg.kv_lora_rank.has_value() || is_v4;
  if (raw_head_dim && !mla_config) {
    cfg.head_dim = raw_head_dim;
  } else if (int64_t sum = 0; cfg.kv_lora_rank && cfg.qk_rope_head_dim) {
    // MLA latent cache entry (vLLM get_head_size); a sum that overflows stays unknown
    if (!__builtin_add_overflow(*cfg.kv_lora_rank, *cfg.qk_rope_head_dim, &sum)) cfg.head_dim = sum;
  } else if (!cfg.kv_lora_rank && cfg.hidden_size && cfg.num_attention_heads && *cfg.num_attention_heads > 0 &&
             *cfg.hidden_size % *cfg.num_attention_heads == 0) {
    cfg.head_dim = *cfg.hidden_size / *cfg.num_attention_heads;
  }
  cfg.dsa = cfg.index_n_heads && cfg.index_head_dim && cfg.index_topk;
  cfg.mtp_depth = nextn ? nextn : mtp_layers;

  cfg.dtype = string_field(cfg.text, "torch_dtype");
  if (!cfg.dtype) cfg.dtype = string_field(cfg.text, "dtype");
  if (!cfg.dtype) cfg.dtype = string_field(cfg.raw, "torch_dtype");
  if (!cfg.dtype) cfg.dtype = string_field(cfg.raw, "dtype");

  // Quantization config, in vLLM's order.
  struct QSource {
    const Json* obj;
    const char* key;
    const char* name;
  };
  const QSource qsources[] = {
      {&cfg.raw, "quantization_config", "quantization_config"},
      {cfg.has_text_config ? &cfg.text : nullptr, "quantization_config", "text_config.quantization_config"},
      {&cfg.raw, "compression_config", "compression_config"}};
  for (const QSource& q : qsources) {
    if (!q.obj) continue;
    auto f = object_field(*q.obj, q.key, cfg.path, q.obj == &cfg.raw ? "" : "text_config.");
    if (!f) return f.error();
    if (*f) {
      cfg.quant_config = **f;
      cfg.quant_config_source = q.name;
      cfg.quant_config_file = cfg.path;
      break;
    }
  }
  if (cfg.quant_config.is_object()) {
    if (auto m = string_field(cfg.quant_config, "quant_method")) cfg.quant_method = ascii_lower(*m);
    auto kv = cfg.quant_config.find("kv_cache_scheme");
    cfg.kv_cache_scheme = kv != cfg.quant_config.end() && !kv->is_null();
  }
  const fs::path hfq = fs::path(cfg.dir) / "hf_quant_config.json";
  if (fs::exists(hfq, ec) && !in_checkpoint_tree(hfq, cfg.dir, cfg.cache_repo)) {
    cfg.notes.push_back(fmt::format("{} is a link out of the checkpoint's directory tree; not read", hfq.string()));
  } else if (fs::exists(hfq, ec)) {
    auto hq = read_json_relaxed_file(hfq.string());
    if (!hq) return hq.error();
    if (!hq->value.is_object())
      return input_error(fmt::format("hf_quant_config.json must hold a JSON object, found {}", hq->value.type_name()),
                         {hfq.string()});
    auto qobj = object_field(hq->value, "quantization", hfq.string(), "");
    if (!qobj) return qobj.error();
    if (cfg.quant_config.is_null() || cfg.quant_method == "modelopt") {
      if (cfg.quant_config.is_null()) {
        cfg.quant_config = hq->value;
        cfg.quant_config_source = "hf_quant_config.json";
        cfg.quant_config_file = hfq.string();
        cfg.quant_method = "modelopt";
      }
      if (*qobj)
        if (auto kv = (*qobj)->find("kv_cache_quant_algo"); kv != (*qobj)->end() && !kv->is_null())
          cfg.kv_cache_scheme = true;
    }
  }
  return cfg;
}

namespace {

// The first of KEYS present as an integer in the text config, else in the whole config.
std::optional<int64_t> first_int(const ModelConfig& c, std::initializer_list<const char*> keys) {
  for (const Json* cfg : {&c.text, &c.raw})
    if (cfg->is_object())
      for (const char* k : keys)
        if (auto it = cfg->find(k); it != cfg->end() && it->is_number_integer()) return it->get<int64_t>();
  return std::nullopt;
}

const Json* first_of(const ModelConfig& c, const char* key) {
  for (const Json* cfg : {&c.text, &c.raw})
    if (cfg->is_object())
      if (auto it = cfg->find(key); it != cfg->end() && !it->is_null()) return &*it;
  return nullptr;
}

// Hybrid models interleave attention with Mamba / linear-attention / gated-DeltaNet layers; the
// config says so through a per-layer type list or pattern, or only through its model_type.
std::optional<std::string> hybrid_kind(const ModelConfig& c) {
  auto contains = [](const Json* list, std::string_view needle) {
    if (!list || !list->is_array()) return false;
    for (const auto& x : *list)
      if (x.is_string() && x.get<std::string>().find(needle) != std::string::npos) return true;
    return false;
  };
  const Json* types = first_of(c, "layer_types");
  if (!types) types = first_of(c, "layers_block_type");
  if (contains(types, "linear_attention")) return "linear_attention";
  if (contains(types, "mamba")) return "mamba";
  if (const Json* pattern = first_of(c, "hybrid_override_pattern");
      pattern && pattern->is_string() && pattern->get<std::string>().find('M') != std::string::npos)
    return "mamba2";
  const std::string mt = c.text_model_type.value_or(c.model_type.value_or(""));
  static const std::pair<const char*, const char*> kTypes[] = {{"qwen3_next", "gated_deltanet"},
                                                               {"qwen3_5", "gated_deltanet"},
                                                               {"qwen3_5_moe", "gated_deltanet"},
                                                               {"kimi_linear", "linear_attention"},
                                                               {"minimax", "linear_attention"},
                                                               {"minimax_text_01", "linear_attention"},
                                                               {"jamba", "mamba"},
                                                               {"bamba", "mamba2"},
                                                               {"nemotron_h", "mamba2"},
                                                               {"falcon_h1", "mamba2"},
                                                               {"granitemoehybrid", "mamba2"},
                                                               {"zamba2", "mamba2"},
                                                               {"plamo2", "mamba2"},
                                                               {"lfm2", "short_conv"},
                                                               {"mamba", "mamba"},
                                                               {"mamba2", "mamba2"}};
  for (const auto& [type, kind] : kTypes)
    if (mt == type) return kind;
  return std::nullopt;
}

// A gated-DeltaNet hybrid's (Qwen3-Next, Qwen3.5/3.6) recurrent-state dimensions and how many of
// its layers are linear attention: layer_types, else every full_attention_interval-th layer is
// full attention (the HF config classes' rule). Null unless every dimension is given.
Json gdn_state(const ModelConfig& c) {
  const auto nk = first_int(c, {"linear_num_key_heads"}), nv = first_int(c, {"linear_num_value_heads"});
  const auto dk = first_int(c, {"linear_key_head_dim"}), dv = first_int(c, {"linear_value_head_dim"});
  const auto conv = first_int(c, {"linear_conv_kernel_dim"});
  if (!nk || !nv || !dk || !dv || !conv || !c.num_hidden_layers) return nullptr;
  int64_t linear = 0, full = 0;
  if (const Json* types = first_of(c, "layer_types"); types && types->is_array()) {
    for (const auto& x : *types) {
      linear += x == "linear_attention";
      full += x == "full_attention";
    }
  } else if (auto every = first_int(c, {"full_attention_interval"}); every && *every > 0) {
    full = *c.num_hidden_layers / *every;
    linear = *c.num_hidden_layers - full;
  }
  if (linear <= 0) return nullptr;
  const Json* ssm = first_of(c, "mamba_ssm_dtype");
  return {{"linear_layers", linear}, {"full_layers", full},
          {"num_key_heads", *nk},    {"num_value_heads", *nv},
          {"key_head_dim", *dk},     {"value_head_dim", *dv},
          {"conv_kernel", *conv},    {"ssm_dtype", ssm && ssm->is_string() ? *ssm : Json(nullptr)}};
}

// Architecture traits rules and advisories read: MoE, hybrid layers, sliding windows, multimodal
// towers, M-RoPE, widths.
void add_traits(const ModelConfig& c, Json& m) {
  auto opt = [](const auto& o) -> Json { return o ? Json(*o) : Json(nullptr); };
  const auto experts = first_int(c, {"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"});
  m["num_experts"] = opt(experts);
  m["is_moe"] = experts.value_or(0) > 1;
  m["intermediate_size"] = opt(first_int(c, {"intermediate_size"}));
  m["moe_intermediate_size"] = opt(first_int(c, {"moe_intermediate_size"}));
  m["linear_num_value_heads"] = opt(first_int(c, {"linear_num_value_heads"}));
  const auto kind = hybrid_kind(c);
  m["hybrid"] = kind.has_value();
  m["hybrid_kind"] = opt(kind);
  m["gdn_state"] = gdn_state(c);
  const auto window = first_int(c, {"sliding_window"});
  const Json* use_window = first_of(c, "use_sliding_window");
  const Json* types = first_of(c, "layer_types");
  bool sliding_layers = false;
  std::optional<int64_t> sliding_count;
  if (types && types->is_array()) {
    sliding_count = 0;
    for (const auto& x : *types)
      if (x.is_string() && x.get<std::string>() == "sliding_attention") ++*sliding_count;
    sliding_layers = *sliding_count > 0;
  }
  m["sliding_window"] = opt(window);
  m["sliding_layers"] = opt(sliding_count);
  // Gemma 4's full-attention layers have their own KV heads and head size (vLLM gemma4.py
  // per_layer_config); other models' full layers have the model's.
  m["full_attention_kv_heads"] = opt(first_int(c, {"num_global_key_value_heads"}));
  m["full_attention_head_dim"] = opt(first_int(c, {"global_head_dim"}));
  m["has_sliding_window"] = sliding_layers || (window.value_or(0) > 0 &&
                                               !(use_window && use_window->is_boolean() && !use_window->get<bool>()));
  bool multimodal = c.has_text_config;
  for (const char* k : {"vision_config", "audio_config", "vision_tower", "mm_vision_tower"})
    multimodal |= c.raw.is_object() && c.raw.contains(k) && !c.raw[k].is_null();
  m["multimodal"] = multimodal;
  bool mrope = false;
  for (const char* k : {"rope_scaling", "rope_parameters"})
    if (const Json* r = first_of(c, k); r && r->is_object()) mrope |= r->contains("mrope_section");
  m["mrope"] = mrope;
  const Json* tie = first_of(c, "tie_word_embeddings");
  m["tie_word_embeddings"] = tie && tie->is_boolean() ? *tie : Json(nullptr);
}

// Whether the engine finds MTP layers to draft with in this checkpoint. vLLM's
// SpeculativeConfig.hf_config_override (vllm/config/speculative.py @v0.33.0) reads
// num_nextn_predict_layers or mtp_num_hidden_layers, and defaults the depth to 1 (or a constant)
// only for these model types and architectures.
bool has_mtp_layers(const ModelConfig& c) {
  if (c.mtp_depth) return *c.mtp_depth > 0;
  static const char* const kDefaultTypes[] = {"dots3_note", "longcat_flash", "step3p5", "step3p7", "step5", "step5_vl"};
  static const char* const kDefaultArchs[] = {"MiMoV2ForCausalLM",
                                              "MiMoV2OmniForCausalLM",
                                              "MiMoV2FlashForCausalLM",
                                              "Step3p5ForCausalLM",
                                              "Step3p7ForConditionalGeneration",
                                              "Step5ForCausalLM",
                                              "Step5ForConditionalGeneration"};
  for (const char* t : kDefaultTypes)
    if (c.model_type == t || c.text_model_type == t) return true;
  for (const char* a : kDefaultArchs)
    if (c.architecture == a) return true;
  return false;
}

}  // namespace

Json model_facts(const ModelConfig& c, int tp) {
  if (tp < 1) tp = 1;
  auto opt = [](const auto& o) -> Json { return o ? Json(*o) : Json(nullptr); };
  // A ratio: an integer when it divides, else a double.
  auto ratio = [](double num, double den) -> Json {
    if (den <= 0) return nullptr;
    const double r = num / den;
    if (r == static_cast<double>(static_cast<int64_t>(r))) return static_cast<int64_t>(r);
    return r;
  };
  Json m = Json::object();
  m["path"] = c.path;
  m["architecture"] = opt(c.architecture);
  m["model_type"] = opt(c.model_type);
  m["num_attention_heads"] = opt(c.num_attention_heads);
  m["num_kv_heads"] = opt(c.num_kv_heads);
  m["head_dim"] = opt(c.head_dim);
  m["hidden_size"] = opt(c.hidden_size);
  if (c.num_attention_heads && c.num_kv_heads && *c.num_kv_heads > 0) {
    const double heads = static_cast<double>(*c.num_attention_heads);
    const double kv = static_cast<double>(*c.num_kv_heads);
    const double q_per_rank = heads / tp;
    const double kv_per_rank = std::max(1.0, kv / tp);
    m["gqa_ratio"] = ratio(q_per_rank, kv_per_rank);
    m["gqa_ratio_global"] = ratio(heads, kv);
  } else {
    m["gqa_ratio"] = nullptr;
    m["gqa_ratio_global"] = nullptr;
  }
  m["mla"] = c.mla;
  m["mla_dims"] = {{"kv_lora_rank", opt(c.kv_lora_rank)},
                   {"qk_rope_head_dim", opt(c.qk_rope_head_dim)},
                   {"qk_nope_head_dim", opt(c.qk_nope_head_dim)},
                   {"v_head_dim", opt(c.v_head_dim)},
                   {"q_lora_rank", opt(c.q_lora_rank)}};
  m["dsa"] = {{"present", c.dsa},
              {"index_n_heads", opt(c.index_n_heads)},
              {"index_head_dim", opt(c.index_head_dim)},
              {"index_topk", opt(c.index_topk)}};
  m["mtp_depth"] = opt(c.mtp_depth);
  m["has_mtp_layers"] = has_mtp_layers(c);
  m["num_hidden_layers"] = opt(c.num_hidden_layers);
  m["dtype"] = opt(c.dtype);
  m["quant_method"] = opt(c.quant_method);
  m["quant_config_source"] = c.quant_config_source.empty() ? Json(nullptr) : Json(c.quant_config_source);
  m["kv_cache_scheme"] = c.kv_cache_scheme;
  m["max_position_embeddings"] = opt(c.max_position_embeddings);
  m["vocab_size"] = opt(c.vocab_size);
  if (!c.cache_repo.empty())
    m["hf_cache"] = {{"repo", c.cache_repo}, {"snapshot", c.snapshot}, {"choice", c.snapshot_choice}};
  if (!c.non_finite.empty()) m["non_finite_values"] = c.non_finite.size();
  add_traits(c, m);
  return Json{{"model", std::move(m)}};
}

}  // namespace specprobe
