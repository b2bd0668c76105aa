// Deploy YAML: docker compose files and Kubernetes manifests (one or more documents, as
// `helm template` prints them). Each compose service and each container spec found anywhere in
// a Kubernetes object (Pod, Deployment, StatefulSet, Job, LeaderWorkerSet leader/worker
// templates, KServe, Dynamo, AIBrix, OME ... ) is read as a container: image, environment, GPU
// request, entrypoint/command + args, then ServeCollector::read_container.
#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "common/paths.hpp"
#include "common/yaml_json.hpp"
#include "inputs/forms.hpp"

namespace fs = std::filesystem;

namespace specprobe::serving {

bool looks_like_deploy_yaml(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    const std::string_view line{next_line(text, start)};
    const size_t lead = line.find_first_not_of(" \t");
    if (lead == std::string_view::npos) continue;
    const std::string_view rest = line.substr(lead);
    if (rest.rfind("apiVersion:", 0) == 0 ||
        (lead == 0 && (rest.rfind("kind:", 0) == 0 || rest.rfind("services:", 0) == 0)))
      return true;
  }
  return false;
}

std::vector<uint32_t> yaml_value_offsets(const std::string& text, size_t start, const std::string& value) {
  // Word by word: each run of non-space bytes of VALUE is looked for in TEXT after the previous
  // one (block, folded and multi-line scalars, quotes); bytes not found take the place before.
  std::vector<uint32_t> offs(value.size(), static_cast<uint32_t>(std::min(start, text.size())));
  size_t cursor = start;
  const size_t limit = std::min(text.size(), start + value.size() * 2 + 4096);
  size_t i = 0;
  while (i < value.size()) {
    if (value[i] == ' ' || value[i] == '\n' || value[i] == '\t') {
      offs[i] = static_cast<uint32_t>(std::min(cursor, text.size()));
      ++i;
      continue;
    }
    size_t j = i;
    while (j < value.size() && value[j] != ' ' && value[j] != '\n' && value[j] != '\t') ++j;
    const std::string word = value.substr(i, j - i);
    const size_t at = cursor < limit ? text.find(word, cursor) : std::string::npos;
    if (at != std::string::npos && at < limit) {
      for (size_t k = 0; k < word.size(); ++k) offs[i + k] = static_cast<uint32_t>(at + k);
      cursor = at + word.size();
    } else {
      for (size_t k = i; k < j; ++k) offs[k] = static_cast<uint32_t>(std::min(cursor, text.size()));
    }
    i = j;
  }
  return offs;
}

namespace {

constexpr size_t kMaxContainers = 256;

bool is_map(const YAML::Node& n) { return n && n.IsMap(); }
bool is_seq(const YAML::Node& n) { return n && n.IsSequence(); }
bool is_scalar(const YAML::Node& n) { return n && n.IsScalar(); }
std::string scalar(const YAML::Node& n) { return is_scalar(n) ? yaml_utf8(n.Scalar()) : std::string(); }
// N[KEYS[0]][KEYS[1]]...: an undefined node as soon as one is missing or not a mapping (yaml-cpp
// throws when a missing node is indexed again).
// (Const lookups only, and Node::reset to rebind: assigning a Node overwrites the node it refers to.)
YAML::Node path(const YAML::Node& n, std::initializer_list<const char*> keys) {
  YAML::Node cur;
  cur.reset(n);
  for (const char* k : keys) {
    if (!is_map(cur)) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& c = cur;
    const YAML::Node next = c[k];
    if (!next) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(next);
  }
  return cur;
}

// Compose interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err}, ${VAR?err},
// ${VAR:+alt}, ${VAR+alt}, $VAR, and $$ for a literal $. Unknown values become markers.
class Interpolator {
 public:
  explicit Interpolator(const ShellVars& vars) : vars_(vars) {}

  ShellWord run(const ShellWord& in, int depth = 0) const {
    ShellWord out = in;
    out.text.clear();
    out.offsets.clear();
    out.expansions.clear();
    const std::string& s = in.text;
    auto put = [&](const std::string& t, uint32_t at) {
      out.text += t;
      out.offsets.insert(out.offsets.end(), t.size(), at);
    };
    for (size_t i = 0; i < s.size(); ++i) {
      const uint32_t at = i < in.offsets.size() ? in.offsets[i] : static_cast<uint32_t>(in.start);
      if (s[i] != '$' || i + 1 >= s.size()) {
        out.text += s[i];
        out.offsets.push_back(at);
        continue;
      }
      if (s[i + 1] == '$') {
        put("$", at);
        ++i;
        continue;
      }
      if (s[i + 1] == '{') {
        size_t d = 0, j = i + 1;
        for (; j < s.size(); ++j) {
          if (s[j] == '{')
            ++d;
          else if (s[j] == '}' && --d == 0)
            break;
        }
        if (j >= s.size() || depth > 8) {
          out.text += s[i];
          out.offsets.push_back(at);
          continue;
        }
        ShellWord inner;
        inner.text = s.substr(i + 2, j - i - 2);
        for (size_t k = i + 2; k < j; ++k) inner.offsets.push_back(k < in.offsets.size() ? in.offsets[k] : at);
        const ShellWord v = braced(inner, at, depth);
        out.text += v.text;
        out.offsets.insert(out.offsets.end(), v.offsets.begin(), v.offsets.end());
        i = j;
        continue;
      }
      size_t j = i + 1;
      while (j < s.size() && shell_name_char(s[j])) ++j;
      if (j == i + 1 || !shell_name_start(s[i + 1])) {
        out.text += s[i];
        out.offsets.push_back(at);
        continue;
      }
      const std::string name = s.substr(i + 1, j - i - 1);
      auto it = vars_.find(name);
      put(it == vars_.end() ? unresolved_mark(name) : it->second.text, at);
      i = j - 1;
    }
    return out;
  }

 private:
  ShellWord braced(const ShellWord& inner, uint32_t at, int depth) const {
    const std::string& e = inner.text;
    size_t k = 0;
    while (k < e.size() && shell_name_char(e[k])) ++k;
    const std::string name = e.substr(0, k);
    auto it = vars_.find(name);
    const bool set = it != vars_.end();
    const bool empty = set && it->second.text.empty();
    ShellWord out;
    auto value = [&] {
      out.text = set ? it->second.text : unresolved_mark(name);
      out.offsets.assign(out.text.size(), at);
      return out;
    };
    if (k == e.size()) return value();
    const bool colon = e[k] == ':';
    const size_t op = k + (colon ? 1 : 0);
    if (op >= e.size()) return value();
    ShellWord word;
    word.text = e.substr(op + 1);
    word.offsets.assign(inner.offsets.begin() + static_cast<long>(std::min(op + 1, inner.offsets.size())),
                        inner.offsets.end());
    const bool missing = !set || (colon && empty);
    switch (e[op]) {
      case '-':
        return missing ? run(word, depth + 1) : value();
      case '?':
        return missing ? (out.text = unresolved_mark(name), out.offsets.assign(out.text.size(), at), out) : value();
      case '+':
        return missing ? ShellWord{} : run(word, depth + 1);
      default:
        return value();
    }
  }

  const ShellVars& vars_;
};

// The documents of a YAML stream as (offset, size) pieces of TEXT: a line that starts with the
// marker `---` or `...` (followed by a blank or the line's end) ends the document before it, as
// YAML 1.2 reads them at any nesting (a document marker is never content); `---` stays with the
// document it opens, `...` with the one it closes. Directives (`%YAML`) go with the next document.
std::vector<std::pair<size_t, size_t>> split_yaml_documents(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t begin = 0;
  auto marker = [&](size_t at, char c) {
    if (text.compare(at, 3, std::string(3, c)) != 0) return false;
    return at + 3 == text.size() || text[at + 3] == ' ' || text[at + 3] == '\t' || text[at + 3] == '\n' ||
           text[at + 3] == '\r';
  };
  for (size_t line = 0; line < text.size();) {
    const size_t end = std::min(text.find('\n', line), text.size());
    if (line > begin && marker(line, '-')) {
      out.emplace_back(begin, line - begin);
      begin = line;
    } else if (marker(line, '.')) {
      out.emplace_back(begin, std::min(end + 1, text.size()) - begin);
      begin = std::min(end + 1, text.size());
    }
    line = end + 1;
  }
  if (begin < text.size()) out.emplace_back(begin, text.size() - begin);
  return out;
}

struct Container {
  std::string label;              // "service vllm", "Deployment x container y"
  YAML::Node node;                // the container map
  std::vector<YAML::Node> up;     // ancestors, nearest last
  std::vector<std::string> path;  // keys / names from the document root
};

class YamlDeploy {
 public:
  YamlDeploy(ServeCollector& col, std::string yaml, std::vector<uint32_t> offsets)
      : col_(col), yaml_(std::move(yaml)), map_(std::move(offsets)) {}

  Status read() {
    // Document by document (split_yaml_documents), not YAML::LoadAll: yaml-cpp 0.7's LoadAll can
    // loop on a malformed stream, building empty documents until memory runs out (a 952-byte file
    // found by the pipeline fuzzer took 24 GB). Node marks are then relative to the document:
    // base_ is its offset in yaml_.
    std::vector<std::pair<YAML::Node, size_t>> docs;
    const std::vector<std::pair<size_t, size_t>> pieces = split_yaml_documents(yaml_);
    if (pieces.size() > kMaxDocuments)
      return input_error(fmt::format("more than {} YAML documents in one file", kMaxDocuments),
                         col_.loc(off(pieces[kMaxDocuments].first)));
    for (const auto& [begin, size] : pieces) {
      base_ = begin;
      try {
        docs.emplace_back(YAML::Load(yaml_.substr(begin, size)), begin);
      } catch (const YAML::Exception& e) {
        return yaml_error(e.msg, e.mark);
      }
    }
    try {
      for (const auto& [doc, begin] : docs) {
        base_ = begin;
        if (!is_map(doc)) continue;
        if (is_map(doc["services"]) && !doc["apiVersion"] && !doc["kind"]) {
          if (auto st = compose(doc); !st) return st;
        } else if (doc["apiVersion"] || doc["kind"]) {
          if (auto st = kube(doc); !st) return st;
        }
      }
    } catch (const YAML::Exception& e) {
      return yaml_error(e.msg, e.mark);
    }
    return Ok{};
  }

 private:
  Status yaml_error(const std::string& msg, const YAML::Mark& m) const {
    SourceLocation where{col_.source().path};
    if (m.pos >= 0) where = col_.loc(off(base_ + static_cast<size_t>(m.pos)));
    std::string hint;
    if (yaml_.find("\n<<<<<<< ") != std::string::npos || yaml_.rfind("<<<<<<< ", 0) == 0)
      hint = " (the file holds git merge-conflict markers <<<<<<< / ======= / >>>>>>>: resolve the conflict first)";
    else if (yaml_.find("{{") != std::string::npos)
      hint = " (the file holds {{ ... }} template actions: render it first, e.g. `helm template`)";
    return input_error(fmt::format("invalid YAML: {}{}", msg, hint), where);
  }

  size_t off(size_t yaml_offset) const {
    if (map_.empty()) return yaml_offset;
    return yaml_offset < map_.size() ? map_[yaml_offset] : (map_.empty() ? 0 : map_.back());
  }

  // A scalar node as a word whose bytes sit in the collector's text.
  ShellWord word(const YAML::Node& n) const {
    ShellWord w;
    w.text = scalar(n);
    const size_t start = base_ + (n.Mark().pos >= 0 ? static_cast<size_t>(n.Mark().pos) : 0);
    for (uint32_t o : yaml_value_offsets(yaml_, start, w.text)) w.offsets.push_back(static_cast<uint32_t>(off(o)));
    w.start = off(start);
    w.end = w.offsets.empty() ? w.start : w.offsets.back() + 1;
    w.unquoted_prefix = w.text.size();
    return w;
  }

  SourceLocation where(const YAML::Node& n) const {
    return col_.loc(off(base_ + (n.Mark().pos >= 0 ? static_cast<size_t>(n.Mark().pos) : 0)));
  }

  Status compose(const YAML::Node& doc);
  Status compose_service(const std::string& name, const YAML::Node& svc, const Interpolator& interp);
  Status kube(const YAML::Node& doc);
  void find_containers(const YAML::Node& n, std::vector<YAML::Node>& up, std::vector<std::string>& path,
                       std::vector<Container>& out, int depth) const;
  Status kube_container(const Container& c, const std::string& kind, const std::string& name);

  static constexpr size_t kMaxDocuments = 10000;
  ServeCollector& col_;
  std::string yaml_;
  std::vector<uint32_t> map_;
  size_t base_ = 0;  // offset in yaml_ of the document being read (its nodes' marks start there)
};

// The variables compose interpolates with: the reader's environment and .env next to the file.
ShellVars compose_vars(const ServeCollector& col) {
  ShellVars vars = col.base_vars();
  if (!col.source().from_file) return vars;
  const fs::path env = fs::path(col.source().path).parent_path() / ".env";
  std::error_code ec;
  if (!fs::is_regular_file(env, ec) || fs::file_size(env, ec) > (1u << 20)) return vars;
  if (!inside_tree(env, env.parent_path())) return vars;  // a link out of the tree (SECURITY.md)
  std::ifstream in(env);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    const std::string name = line.substr(0, eq);
    if (vars.count(name) && vars[name].origin != "environment") continue;  // --env wins over .env
    ShellValue v;
    v.text = line.substr(eq + 1);
    if (v.text.size() >= 2 && (v.text.front() == '"' || v.text.front() == '\'') && v.text.back() == v.text.front())
      v.text = v.text.substr(1, v.text.size() - 2);
    v.origin = ".env";
    vars[name] = std::move(v);
  }
  return vars;
}

Status YamlDeploy::compose(const YAML::Node& doc) {
  const ShellVars vars = compose_vars(col_);
  const Interpolator interp(vars);
  size_t n = 0;
  for (const auto& kv : doc["services"]) {
    if (++n > kMaxContainers) break;
    if (!is_map(kv.second)) continue;
    if (auto st = compose_service(scalar(kv.first), kv.second, interp); !st) return st;
  }
  return Ok{};
}

Status YamlDeploy::compose_service(const std::string& name, const YAML::Node& svc, const Interpolator& interp) {
  DeployInfo info;
  info.form = InputForm::compose;
  info.form_set = true;
  info.server = "service " + name;
  if (is_scalar(svc["image"])) {
    const ShellWord image = interp.run(word(svc["image"]));
    info.image = image.text;
    info.image_where = where(svc["image"]);
    info.image_offset = image.offsets.empty() ? 0 : image.offsets.front();
    const EngineVersion v = image_engine_version(info.image);
    info.engine_version = v.version;
    info.engine_version_engine = v.engine;
    info.engine_version_source = v.why;
    info.engine_version_where = info.image_where;
  }
  // environment: list of K=V (or K) / map; env_file read when it is next to the file.
  auto set_env = [&](const std::string& k, const std::string& v, const SourceLocation& at) {
    for (auto& [n, s] : info.env)
      if (n == k) {
        s = {v, at};
        return;
      }
    info.env.emplace_back(k, EnvSetting{v, at});
  };
  const YAML::Node env = svc["environment"];
  if (is_seq(env)) {
    for (const auto& item : env) {
      const ShellWord w = interp.run(word(item));
      const size_t eq = w.text.find('=');
      if (eq == std::string::npos) continue;
      set_env(w.text.substr(0, eq), w.text.substr(eq + 1), where(item));
    }
  } else if (is_map(env)) {
    for (const auto& kv : env)
      if (is_scalar(kv.second) || !kv.second)
        set_env(scalar(kv.first), interp.run(word(kv.second)).text, where(kv.first));
  }
  // GPUs: deploy.resources.reservations.devices[] count / device_ids, or `gpus:`.
  const YAML::Node devices = path(svc, {"deploy", "resources", "reservations", "devices"});
  if (is_seq(devices))
    for (const auto& d : devices) {
      if (is_scalar(d["count"])) {
        const std::string c = interp.run(word(d["count"])).text;
        info.gpus = c == "all"                                                   ? Json("all")
                    : (!c.empty() && std::all_of(c.begin(), c.end(), ::isdigit)) ? Json(std::stoll(c.substr(0, 9)))
                                                                                 : Json(nullptr);
        info.gpus_where = where(d["count"]);
      } else if (is_seq(d["device_ids"])) {
        info.gpus = d["device_ids"].size();
        info.gpus_where = where(d["device_ids"]);
      }
    }
  if (is_scalar(svc["gpus"]) && scalar(svc["gpus"]) == "all") {
    info.gpus = "all";
    info.gpus_where = where(svc["gpus"]);
  } else if (is_seq(svc["gpus"])) {
    info.gpus = svc["gpus"].size();
    info.gpus_where = where(svc["gpus"]);
  }
  // entrypoint + command: a list is the argv, a string is split like a shell line.
  auto argv_of = [&](const YAML::Node& n, std::vector<ShellWord>& out) -> Status {
    if (is_seq(n)) {
      for (const auto& item : n)
        if (is_scalar(item)) out.push_back(interp.run(word(item)));
    } else if (is_scalar(n)) {
      const ShellWord w = interp.run(word(n));
      const auto index = col_.source().index;
      const std::vector<uint32_t> offs = w.offsets;
      auto words = split_shell_words(w.text, PosMap([index, offs](size_t k) {
                                       return index->at(k < offs.size() ? offs[k] : (offs.empty() ? 0 : offs.back()));
                                     }));
      if (!words) return words.error();
      for (auto& x : *words) {
        if (x.kind != ShellWord::word) continue;
        for (auto& o : x.offsets) o = o < offs.size() ? offs[o] : (offs.empty() ? 0 : offs.back());
        x.start = x.offsets.empty() ? 0 : x.offsets.front();
        x.expansions.clear();
        out.push_back(std::move(x));
      }
    }
    return Ok{};
  };
  std::vector<ShellWord> argv;
  const bool entrypoint_given = svc["entrypoint"] && !svc["entrypoint"].IsNull();
  if (auto st = argv_of(svc["entrypoint"], argv); !st) return st;
  if (auto st = argv_of(svc["command"], argv); !st) return st;
  if (!info.image.empty() || !argv.empty())
    return col_.read_container(std::move(argv), std::move(info), entrypoint_given, false);
  return Ok{};
}

// Keys under which Kubernetes-style objects hold containers that do not start servers.
bool skipped_key(const std::string& k) {
  return k == "initContainers" || k == "ephemeralContainers" || k == "lifecycle";
}

void YamlDeploy::find_containers(const YAML::Node& n, std::vector<YAML::Node>& up, std::vector<std::string>& path,
                                 std::vector<Container>& out, int depth) const {
  if (depth > 48 || out.size() >= kMaxContainers) return;
  if (is_map(n)) {
    const bool container =
        (is_scalar(n["image"]) && (n["command"] || n["args"] || n["resources"] || n["env"] || n["name"])) ||
        ((is_seq(n["args"]) || is_seq(n["command"])) && (n["modelFormat"] || n["resources"]));
    if (container) {
      Container c{"", n, up, path};
      out.push_back(std::move(c));
      return;
    }
    up.push_back(n);
    for (const auto& kv : n) {
      const std::string k = scalar(kv.first);
      if (skipped_key(k)) continue;
      path.push_back(k);
      find_containers(kv.second, up, path, out, depth + 1);
      path.pop_back();
    }
    up.pop_back();
  } else if (is_seq(n)) {
    up.push_back(n);
    for (const auto& item : n) {
      path.push_back(is_map(item) && is_scalar(item["name"]) ? scalar(item["name"]) : "-");
      find_containers(item, up, path, out, depth + 1);
      path.pop_back();
    }
    up.pop_back();
  }
}

Status YamlDeploy::kube(const YAML::Node& doc) {
  const std::string kind = scalar(doc["kind"]);
  const std::string name = scalar(path(doc, {"metadata", "name"}));
  std::vector<YAML::Node> up;
  std::vector<std::string> path;
  std::vector<Container> found;
  find_containers(doc, up, path, found, 0);
  for (const Container& c : found)
    if (auto st = kube_container(c, kind, name); !st) return st;
  return Ok{};
}

// The GPU limit of a container (nvidia.com/gpu, amd.com/gpu; Dynamo's `gpu`), or of the nearest
// enclosing object that states one.
void kube_gpus(const Container& c, DeployInfo& info, const std::function<SourceLocation(const YAML::Node&)>& where) {
  auto from = [&](const YAML::Node& res) {
    for (const char* section : {"limits", "requests"}) {
      const YAML::Node s = res[section];
      if (!is_map(s)) continue;
      for (const auto& kv : s) {
        std::string k = scalar(kv.first);
        while (!k.empty() && k.back() == ' ') k.pop_back();
        if (k != "nvidia.com/gpu" && k != "amd.com/gpu" && k != "gpu") continue;
        const std::string v = scalar(kv.second);
        if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) info.gpus = std::stoll(v.substr(0, 9));
        info.gpus_where = where(kv.second);
        return true;
      }
    }
    return false;
  };
  if (is_map(c.node["resources"]) && from(c.node["resources"])) return;
  for (auto it = c.up.rbegin(); it != c.up.rend(); ++it)
    if (is_map(*it) && is_map((*it)["resources"]) && from((*it)["resources"])) return;
}

// The GPU model the pod asks for: a nodeSelector on a GPU product label, or a required node
// affinity `In` one value of it (several values: none, with a note). The nearest pod spec wins.
void kube_gpu_product(const Container& c, DeployInfo& info,
                      const std::function<SourceLocation(const YAML::Node&)>& where) {
  static const char* kLabels[] = {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator",
                                  "amd.com/gpu.product-name"};
  auto is_label = [](const std::string& k) {
    return std::any_of(std::begin(kLabels), std::end(kLabels), [&](const char* l) { return k == l; });
  };
  for (auto it = c.up.rbegin(); it != c.up.rend(); ++it) {
    if (!is_map(*it)) continue;
    const YAML::Node sel = path(*it, {"nodeSelector"});
    if (is_map(sel))
      for (const auto& kv : sel) {
        const std::string k = scalar(kv.first);
        if (!is_label(k) || !is_scalar(kv.second) || scalar(kv.second).empty()) continue;
        info.gpu_product = scalar(kv.second);
        info.gpu_product_key = "nodeSelector " + k;
        info.gpu_product_where = where(kv.second);
        return;
      }
    const YAML::Node terms =
        path(*it, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
    if (!is_seq(terms)) continue;
    for (const auto& term : terms) {
      const YAML::Node exprs = path(term, {"matchExpressions"});
      if (!is_seq(exprs)) continue;
      for (const auto& e : exprs) {
        const std::string k = scalar(path(e, {"key"}));
        const YAML::Node values = path(e, {"values"});
        if (!is_label(k) || scalar(path(e, {"operator"})) != "In" || !is_seq(values) || values.size() == 0) continue;
        if (values.size() > 1) {
          info.notes.push_back({"info",
                                fmt::format("node affinity allows {} GPU products ({}): the GPU is not known from the "
                                            "file; pass --gpu NAME",
                                            values.size(), k),
                                where(values)});
          return;
        }
        info.gpu_product = scalar(values[0]);
        info.gpu_product_key = "node affinity " + k;
        info.gpu_product_where = where(values[0]);
        return;
      }
    }
  }
}

std::string kube_label(const Container& c, const std::string& kind, const std::string& name) {
  std::string role;
  for (size_t i = 0; i < c.path.size(); ++i) {
    const std::string& k = c.path[i];
    if (k == "leaderTemplate")
      role += " leader";
    else if (k == "workerTemplate")
      role += " worker";
    else if (k == "headGroupSpec")
      role += " head";
    else if (k == "workerGroupSpecs")
      role += " workers";
    else if ((k == "engineConfig" || k == "decoderConfig" || k == "routerConfig") && i + 1 < c.path.size())
      role += " " + k.substr(0, k.size() - 6);
    else if (i > 0 && (c.path[i - 1] == "services" || c.path[i - 1] == "roles") && k != "-")
      role += " " + k;
  }
  std::string cname = scalar(c.node["name"]);
  return fmt::format("{}{}{}{}", kind.empty() ? "object" : kind, name.empty() ? "" : " " + name, role,
                     cname.empty() ? "" : " container " + cname);
}

// KServe's Hugging Face runtime serves text generation with vLLM: its --model_id is the model.
std::vector<ShellWord> kserve_args(const std::vector<ShellWord>& args) {
  std::vector<ShellWord> out;
  for (size_t i = 0; i < args.size(); ++i) {
    ShellWord w = args[i];
    for (const char* from : {"--model_id", "--model_dir"}) {
      const std::string f(from);
      if (w.text == f)
        w.text = "--model";
      else if (w.text.rfind(f + "=", 0) == 0) {
        w.text = "--model=" + w.text.substr(f.size() + 1);
        w.offsets.erase(w.offsets.begin(),
                        w.offsets.begin() + static_cast<long>(std::min<size_t>(f.size() - 7, w.offsets.size())));
      }
    }
    if (w.text == "--model_name" && i + 1 < args.size()) {
      ++i;
      continue;
    }
    if (w.text.rfind("--model_name=", 0) == 0) continue;
    out.push_back(std::move(w));
  }
  return out;
}

Status YamlDeploy::kube_container(const Container& c, const std::string& kind, const std::string& name) {
  const YAML::Node& n = c.node;
  DeployInfo info;
  info.form = InputForm::kubernetes;
  info.form_set = true;
  info.server = kube_label(c, kind, name);
  ShellVars env;  // the container's env: $(VAR) in command/args
  if (is_seq(n["env"]))
    for (const auto& e : n["env"]) {
      const std::string k = scalar(e["name"]);
      if (k.empty()) continue;
      ShellValue v;
      v.text = is_scalar(e["value"]) ? scalar(e["value"]) : unresolved_mark(k);
      if (!is_scalar(e["value"]) && e["valueFrom"]) v.origin = "valueFrom";
      v.exported = true;
      env[k] = v;
      info.env.emplace_back(k, EnvSetting{v.text, where(e["name"])});
    }
  if (is_scalar(n["image"])) {
    info.image = scalar(n["image"]);
    info.image_where = where(n["image"]);
    info.image_offset = word(n["image"]).start;
    const EngineVersion v = image_engine_version(info.image);
    info.engine_version = v.version;
    info.engine_version_engine = v.engine;
    info.engine_version_source = v.why;
    info.engine_version_where = info.image_where;
  }
  kube_gpus(c, info, [this](const YAML::Node& x) { return where(x); });
  kube_gpu_product(c, info, [this](const YAML::Node& x) { return where(x); });
  // command + args with $(VAR) from the container's env ($$(VAR) is a literal $(VAR)).
  auto expand = [&](const YAML::Node& item) {
    ShellWord w = word(item);
    std::string out;
    std::vector<uint32_t> offs;
    for (size_t i = 0; i < w.text.size(); ++i) {
      const uint32_t at = i < w.offsets.size() ? w.offsets[i] : static_cast<uint32_t>(w.start);
      if (w.text.compare(i, 3, "$$(") == 0) {
        out += "$(";
        offs.insert(offs.end(), 2, at);
        i += 2;
        continue;
      }
      // ${VAR}: not Kubernetes' syntax but a template's (envsubst, a deploy script's sed) when no
      // env entry defines VAR (one that does is left to a `sh -c` that expands it).
      const bool braced = w.text.compare(i, 2, "${") == 0;
      const size_t close = w.text.compare(i, 2, "$(") == 0 ? w.text.find(')', i)
                           : braced                        ? w.text.find('}', i)
                                                           : std::string::npos;
      const std::string var = close == std::string::npos ? "" : w.text.substr(i + 2, close - i - 2);
      if (close == std::string::npos || var.empty() || !std::all_of(var.begin(), var.end(), shell_name_char) ||
          (braced && env.count(var))) {
        out += w.text[i];
        offs.push_back(at);
        continue;
      }
      auto it = env.find(var);
      const std::string v = it != env.end() ? it->second.text : unresolved_mark(var);
      out += v;
      offs.insert(offs.end(), v.size(), at);
      i = close;
    }
    w.text = std::move(out);
    w.offsets = std::move(offs);
    return w;
  };
  std::vector<ShellWord> argv, args;
  if (is_seq(n["command"]))
    for (const auto& item : n["command"]) argv.push_back(expand(item));
  else if (is_scalar(n["command"]))
    argv.push_back(expand(n["command"]));
  if (is_seq(n["args"]))
    for (const auto& item : n["args"]) args.push_back(expand(item));
  else if (is_scalar(n["args"]))
    args.push_back(expand(n["args"]));
  const bool kserve = n["modelFormat"] || info.image.find("huggingfaceserver") != std::string::npos;
  if (kserve && argv.empty()) {
    info.notes.push_back({"info",
                          "KServe's Hugging Face runtime serves text generation with vLLM: its arguments are read "
                          "as vLLM's (--model_id is the model)",
                          where(n)});
    info.image = info.image.empty() ? "vllm/vllm-openai" : info.image;
    if (info.engine_version_engine != "vllm")
      info.engine_version_source = "KServe Hugging Face runtime image: no vLLM version";
    info.engine_version_engine = "vllm";
    args = kserve_args(args);
    std::vector<ShellWord> words;
    ShellWord anchor = args.empty() ? word(n[n["args"] ? "args" : "modelFormat"]) : args.front();
    for (const char* t : {"python3", "-m", "vllm.entrypoints.openai.api_server"}) {
      ShellWord s = anchor;
      s.text = t;
      s.offsets.assign(s.text.size(), static_cast<uint32_t>(anchor.start));
      words.push_back(std::move(s));
    }
    words.insert(words.end(), args.begin(), args.end());
    return col_.read_container(std::move(words), std::move(info), true, false);
  }
  const bool entrypoint_given = !argv.empty();
  argv.insert(argv.end(), args.begin(), args.end());
  if (info.image.empty() && argv.empty()) return Ok{};
  return col_.read_container(std::move(argv), std::move(info), entrypoint_given, false);
}

}  // namespace

Status read_kubernetes_docs(const std::string& text, const std::vector<uint32_t>& offsets, ServeCollector& into) {
  YamlDeploy reader(into, text, offsets);
  return reader.read();
}

Expected<std::optional<ServingFile>> read_deploy_yaml(std::shared_ptr<const CollectorSource> src) {
  ServeCollector col(src);
  YamlDeploy reader(col, src->text, {});
  if (auto st = reader.read(); !st) return st.error();
  ServingFile out;
  out.path = src->path;
  out.plans = std::move(col.plans());
  out.notes = std::move(col.notes());
  return std::optional<ServingFile>(std::move(out));
}

}  // namespace specprobe::serving
