// Project settings from `.specprobe.yaml` files (see project_settings.hpp).
#include "pipeline/project_settings.hpp"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "rules/ids.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

SourceLocation at(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return SourceLocation{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

// The file's YAML, read as a file under review is read: a regular file of at most 1 MiB that is
// not a link out of its folder (SECURITY.md). nullopt: the file does not exist.
Expected<std::optional<YAML::Node>> load(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::optional<YAML::Node>();
  const fs::path dir = fs::path(path).parent_path();
  if (!inside_tree(path, dir.empty() ? fs::path(".") : dir))
    return input_error("the settings file is a link out of its directory; not read", SourceLocation{path});
  if (!fs::is_regular_file(path, ec))
    return input_error("the settings file is not a regular file", SourceLocation{path});
  constexpr uintmax_t kMaxBytes = 1u << 20;
  if (const uintmax_t size = fs::file_size(path, ec); ec || size > kMaxBytes)
    return input_error("the settings file is larger than 1 MiB; not read", SourceLocation{path});
  std::ifstream f(path, std::ios::binary);
  if (!f) return input_error("cannot read the settings file", SourceLocation{path});
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return std::optional<YAML::Node>(YAML::Load(ss.str()));
  } catch (const YAML::Exception& e) {
    return input_error(
        fmt::format("invalid YAML: {}", e.msg),
        SourceLocation{path, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0});
  }
}

Expected<std::vector<IgnoreEntry>> parse_ignore(const std::string& path, const YAML::Node& list) {
  std::vector<IgnoreEntry> out;
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return input_error("`ignore:` must be a list of {id, reason, until?}", at(path, list));
  for (const auto& item : list) {
    if (!item.IsMap()) return input_error("an ignore entry must be a mapping {id, reason, until?}", at(path, item));
    for (const auto& kv : item) {
      const std::string key = scalar(kv.first);
      if (key != "id" && key != "reason" && key != "until")
        return input_error(fmt::format("unknown key '{}' in an ignore entry (id, reason, until)", excerpt(key)),
                           at(path, kv.first));
    }
    IgnoreEntry e;
    const YAML::Node id = item["id"];
    if (!id || scalar(id).empty()) return input_error("an ignore entry needs an `id` (SPnnnn)", at(path, item));
    e.id = ascii_upper(scalar(id));
    e.where = at(path, id);
    e.reason = std::string(ascii_trim(scalar(item["reason"])));
    if (e.reason.empty())
      return input_error(fmt::format("the ignore entry for {} needs a `reason` (why it is safe to ignore here)", e.id),
                         at(path, item));
    if (const YAML::Node until = item["until"]) {
      e.until = scalar(until);
      if (!is_iso_date(e.until))
        return input_error(fmt::format("`until` must be a date YYYY-MM-DD, not '{}'", excerpt(e.until)),
                           at(path, until));
    }
    e.source = fmt::format("{}:{}", path, e.where.line);
    out.push_back(std::move(e));
  }
  return out;
}

// One layer of settings: the top of a file, or one of its `overrides:` entries.
struct Layer {
  std::optional<std::string> gpu, model, fail_on;
  std::optional<bool> unknown_ok;
  std::map<std::string, std::string> libs;        // name -> version
  std::map<std::string, std::string> model_dirs;  // id -> dir
  std::vector<IgnoreEntry> ignore;
  std::vector<std::string> sources;
};

std::string relative_to_file(const std::string& file, const std::string& value) {
  if (value.empty() || fs::path(value).is_absolute()) return value;
  const fs::path dir = fs::path(file).parent_path();
  return (dir / value).lexically_normal().string();
}

Status parse_layer(const std::string& path, const YAML::Node& map, bool top, Layer& out) {
  for (const auto& kv : map) {
    const std::string key = scalar(kv.first);
    const YAML::Node& v = kv.second;
    const SourceLocation where = at(path, kv.first);
    auto need_scalar = [&](const char* what) -> Expected<std::string> {
      if (!v.IsScalar() || v.Scalar().empty())
        return input_error(fmt::format("`{}:` must be {}", key, what), at(path, v));
      return v.Scalar();
    };
    auto note = [&](const std::string& what) {
      out.sources.push_back(fmt::format("{} from {}:{}", what, path, where.line));
    };
    if (key == "gpu") {
      auto s = need_scalar("a GPU name or architecture (H100, GB10, sm_90)");
      if (!s) return s.error();
      out.gpu = *s;
      note("--gpu " + *s);
    } else if (key == "model") {
      auto s = need_scalar("a checkpoint directory (relative to this file)");
      if (!s) return s.error();
      out.model = relative_to_file(path, *s);
      note("--model " + *out.model);
    } else if (key == "fail-on") {
      auto s = need_scalar("one of error, risk, warning, info, none");
      if (!s) return s.error();
      if (*s != "error" && *s != "risk" && *s != "warning" && *s != "info" && *s != "none")
        return input_error(
            fmt::format("`fail-on:` must be one of error, risk, warning, info, none, not '{}'", excerpt(*s)),
            at(path, v));
      out.fail_on = *s;
      note("--fail-on " + *s);
    } else if (key == "unknown-ok") {
      const std::string s = scalar(v);
      if (s != "true" && s != "false") return input_error("`unknown-ok:` must be true or false", at(path, v));
      out.unknown_ok = s == "true";
      note("unknown-ok " + s);
    } else if (key == "lib") {
      auto add = [&](const std::string& name, const std::string& version, const YAML::Node& at_node) -> Status {
        if (name.empty() || version.empty())
          return input_error("a `lib:` entry is NAME: VERSION (or \"NAME=VERSION\" in a list)", at(path, at_node));
        out.libs[ascii_lower(name)] = version;
        return Ok{};
      };
      if (v.IsMap()) {
        for (const auto& e : v)
          if (auto st = add(scalar(e.first), scalar(e.second), e.first); !st) return st;
      } else if (v.IsSequence()) {
        for (const auto& e : v) {
          const std::string s = scalar(e);
          const size_t eq = s.find('=');
          if (auto st = add(eq == std::string::npos ? "" : s.substr(0, eq),
                            eq == std::string::npos ? "" : s.substr(eq + 1), e);
              !st)
            return st;
        }
      } else {
        return input_error("`lib:` must be a mapping NAME: VERSION or a list of \"NAME=VERSION\"", at(path, v));
      }
      note(fmt::format("{} library version(s)", v.size()));
    } else if (key == "models") {
      if (!v.IsMap())
        return input_error("`models:` must map a model id to a directory (relative to this file)", at(path, v));
      for (const auto& e : v) {
        const std::string id = scalar(e.first), dir = scalar(e.second);
        if (id.empty() || dir.empty())
          return input_error("a `models:` entry is ID: DIR (a model id and its local directory)", at(path, e.first));
        out.model_dirs[id] = relative_to_file(path, dir);
      }
      note(fmt::format("{} model director{}", v.size(), v.size() == 1 ? "y" : "ies"));
    } else if (key == "ignore") {
      auto entries = parse_ignore(path, v);
      if (!entries) return entries.error();
      out.ignore.insert(out.ignore.end(), entries->begin(), entries->end());
    } else if (key == "overrides" && top) {
      continue;  // read by the caller, for the config it matches
    } else if (key == "files" && !top) {
      continue;
    } else {
      return input_error(fmt::format("unknown key '{}' (gpu, lib, model, models, fail-on, unknown-ok, ignore{})",
                                     excerpt(key), top ? ", overrides" : ", files"),
                         where);
    }
  }
  return Ok{};
}

void merge(ProjectSettings& into, Layer&& layer) {
  if (layer.gpu) into.gpu = layer.gpu;
  if (layer.model) into.model = layer.model;
  if (layer.fail_on) into.fail_on = layer.fail_on;
  if (layer.unknown_ok) into.unknown_ok = layer.unknown_ok;
  auto put = [](std::vector<std::string>& list, const std::string& key, const std::string& value) {
    for (auto& item : list)
      if (item.compare(0, key.size() + 1, key + "=") == 0) {
        item = key + "=" + value;
        return;
      }
    list.push_back(key + "=" + value);
  };
  for (const auto& [name, version] : layer.libs) put(into.libs, name, version);
  for (const auto& [id, dir] : layer.model_dirs) put(into.model_dirs, id, dir);
  into.ignore.insert(into.ignore.end(), layer.ignore.begin(), layer.ignore.end());
  into.sources.insert(into.sources.end(), layer.sources.begin(), layer.sources.end());
}

// CONFIG relative to the folder of FILE, '/'-separated; empty when it is not under it.
std::string relative_config(const std::string& file, const std::string& config) {
  std::error_code ec;
  const fs::path dir =
      fs::absolute(fs::path(file).parent_path().empty() ? fs::path(".") : fs::path(file).parent_path(), ec)
          .lexically_normal();
  const fs::path cfg = fs::absolute(config, ec).lexically_normal();
  const fs::path rel = cfg.lexically_relative(dir);
  if (rel.empty() || *rel.begin() == "..") return {};
  return rel.generic_string();
}

bool glob_at(std::string_view g, std::string_view p) {
  while (!g.empty()) {
    if (g.substr(0, 2) == "**") {
      g.remove_prefix(2);
      if (!g.empty() && g.front() == '/') g.remove_prefix(1);
      if (g.empty()) return true;  // a trailing ** matches everything below
      for (size_t i = 0; i <= p.size(); ++i)
        if ((i == 0 || p[i - 1] == '/') && glob_at(g, p.substr(i))) return true;
      return false;
    }
    if (g.front() == '*') {
      g.remove_prefix(1);
      for (size_t i = 0; i <= p.size(); ++i) {
        if (glob_at(g, p.substr(i))) return true;
        if (i < p.size() && p[i] == '/') return false;
      }
      return false;
    }
    if (p.empty()) return false;
    if (g.front() != '?' ? g.front() != p.front() : p.front() == '/') return false;
    g.remove_prefix(1);
    p.remove_prefix(1);
  }
  return p.empty();
}

}  // namespace

bool glob_matches(std::string_view glob, std::string_view path) {
  if (glob.substr(0, 2) == "./") glob.remove_prefix(2);
  return glob_at(glob, path);
}

std::vector<std::string> settings_files_for(const std::string& config_path) {
  const bool from_command_line = config_path.empty() || config_path == "<command line>" || config_path == "-";
  fs::path dir = from_command_line ? fs::path() : fs::path(config_path).parent_path();
  std::error_code ec;
  fs::path abs = fs::absolute(dir.empty() ? fs::path(".") : dir, ec).lexically_normal();
  std::vector<std::string> found;  // nearest first
  bool in_repository = false;
  for (int depth = 0; depth < 64; ++depth) {
    const fs::path file = dir / kSuppressionFile;
    if (fs::exists(fs::symlink_status(file, ec)))
      found.push_back(file.lexically_normal().string());
    else if (depth == 0)
      found.emplace_back();  // keeps the config's own folder first
    if (fs::exists(abs / ".git", ec)) {
      in_repository = true;
      break;
    }
    if (!abs.has_relative_path()) break;  // the filesystem's root
    abs = abs.parent_path();
    dir = (dir.empty() ? fs::path("..") : dir / "..").lexically_normal();
  }
  // Outside a repository only the config's own folder counts (a stray file in /tmp or $HOME must
  // not change a check).
  if (!in_repository) found.resize(std::min<size_t>(found.size(), 1));
  std::vector<std::string> out;
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    if (!it->empty()) out.push_back(*it);
  return out;
}

Expected<ProjectSettings> read_settings_file(const std::string& path, const std::string& overrides_for) {
  ProjectSettings out;
  auto doc = load(path);
  if (!doc) return doc.error();
  if (!*doc) return out;
  const YAML::Node& root = **doc;
  out.files.push_back(path);
  if (!root || root.IsNull()) return out;
  if (!root.IsMap())
    return input_error("expected a mapping (gpu, lib, model, models, fail-on, unknown-ok, ignore, overrides)",
                       at(path, root));
  Layer top;
  if (auto st = parse_layer(path, root, true, top); !st) return st.error();
  merge(out, std::move(top));
  const YAML::Node overrides = root["overrides"];
  if (!overrides || overrides.IsNull()) return out;
  if (!overrides.IsSequence()) return input_error("`overrides:` must be a list of {files, ...}", at(path, overrides));
  const std::string rel = overrides_for.empty() ? std::string() : relative_config(path, overrides_for);
  for (const auto& o : overrides) {
    if (!o.IsMap()) return input_error("an `overrides:` entry must be a mapping {files, gpu, lib, ...}", at(path, o));
    const YAML::Node files = o["files"];
    std::vector<std::string> globs;
    if (files && files.IsScalar())
      globs.push_back(files.Scalar());
    else if (files && files.IsSequence())
      for (const auto& g : files) globs.push_back(scalar(g));
    if (globs.empty() || std::any_of(globs.begin(), globs.end(), [](const std::string& g) { return g.empty(); }))
      return input_error(
          "an `overrides:` entry needs `files:`, a glob or a list of globs relative to this file's folder",
          at(path, o));
    Layer layer;
    if (auto st = parse_layer(path, o, false, layer); !st) return st.error();  // checked even when it does not apply
    const bool applies = !rel.empty() && std::any_of(globs.begin(), globs.end(),
                                                     [&](const std::string& g) { return glob_matches(g, rel); });
    if (applies) merge(out, std::move(layer));
  }
  return out;
}

Expected<ProjectSettings> project_settings_for(const std::string& config_path) {
  ProjectSettings out;
  for (const auto& file : settings_files_for(config_path)) {
    auto one = read_settings_file(file, config_path);
    if (!one) return one.error();
    out.files.insert(out.files.end(), one->files.begin(), one->files.end());
    Layer layer;
    layer.gpu = one->gpu;
    layer.model = one->model;
    layer.fail_on = one->fail_on;
    layer.unknown_ok = one->unknown_ok;
    for (const auto& l : one->libs) layer.libs[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
    for (const auto& m : one->model_dirs) layer.model_dirs[m.substr(0, m.find('='))] = m.substr(m.find('=') + 1);
    layer.ignore = std::move(one->ignore);
    layer.sources = std::move(one->sources);
    merge(out, std::move(layer));
  }
  return out;
}

Expected<std::vector<InlineSuppression>> inline_suppressions(const std::string& path, const std::string& text) {
  std::vector<InlineSuppression> out;
  std::vector<size_t> pending;    // own-line comments waiting for the next line with content
  std::vector<size_t> extending;  // ... whose line goes on (a shell line ending in a backslash)
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, end - start);
    ++line_no;
    start = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos;
    const bool comment_only = !blank && line[first] == '#';
    // A shell command continued with `\` is one line for an own-line comment above it: the
    // findings on any of its physical lines (`--kv-cache-dtype fp8 \`) are covered.
    std::string_view content = line;
    while (!content.empty() && (content.back() == '\r' || content.back() == ' ' || content.back() == '\t'))
      content.remove_suffix(1);
    const bool continues = !content.empty() && content.back() == '\\';
    if (!extending.empty() && !blank) {
      for (size_t i : extending) out[i].end_line = line_no;
      if (!continues) extending.clear();
    }
    if (!blank && !comment_only) {
      for (size_t i : pending) {
        out[i].line = out[i].end_line = line_no;
        if (continues) extending.push_back(i);
      }
      pending.clear();
    }
    const size_t mark = line.find("specprobe:");
    if (mark == std::string_view::npos) {
      if (end == text.size()) break;
      continue;
    }
    const size_t hash = line.rfind('#', mark);
    if (hash == std::string_view::npos ||
        line.substr(hash + 1, mark - hash - 1).find_first_not_of(" \t") != std::string_view::npos) {
      if (end == text.size()) break;
      continue;
    }
    std::string rest(ascii_trim(line.substr(mark + 10)));
    bool whole_file = false;
    if (rest.rfind("ignore-file", 0) == 0) {
      whole_file = true;
      rest = rest.substr(11);
    } else if (rest.rfind("ignore", 0) == 0) {
      rest = rest.substr(6);
    } else {
      if (end == text.size()) break;
      continue;  // another tool's "specprobe:" (a YAML key in a comment, prose)
    }
    const SourceLocation where{path, line_no, static_cast<int>(mark) + 1};
    const size_t dashes = rest.find(" --");
    const std::string ids = std::string(ascii_trim(rest.substr(0, dashes)));
    const std::string reason =
        dashes == std::string::npos ? std::string() : std::string(ascii_trim(rest.substr(dashes + 3)));
    if (ids.empty())
      return input_error("an inline suppression names the rules it ignores: `# specprobe: ignore SP3019 -- reason`",
                         where);
    if (reason.empty())
      return input_error(
          fmt::format("the inline suppression of {} needs a reason after ` -- ` (why it is safe to ignore here)", ids),
          where);
    std::string id;
    std::stringstream list(ids);
    while (std::getline(list, id, ',')) {
      std::stringstream words(id);
      std::string word;
      while (words >> word) {
        InlineSuppression s;
        s.entry.id = ascii_upper(word);
        s.entry.reason = reason;
        s.entry.where = where;
        s.entry.source = fmt::format("{}:{}", path, line_no);
        s.line = s.end_line = whole_file ? 0 : line_no;
        if (!whole_file && comment_only) pending.push_back(out.size());
        out.push_back(std::move(s));
      }
    }
    if (end == text.size()) break;
  }
  // An own-line comment with nothing after it applies to nothing: say so rather than ignore it.
  if (!pending.empty())
    return input_error(
        fmt::format("the inline suppression of {} is followed by no line to apply to", out[pending.front()].entry.id),
        out[pending.front()].entry.where);
  return out;
}

}  // namespace specprobe
