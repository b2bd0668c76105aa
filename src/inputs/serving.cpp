// Entry points of the serving readers: detects the form of a file from its name and content and
// hands it to the matching reader; every plan then gets the engine version stated next to the
// file (requirements / lock files) when nothing closer states one.
#include "inputs/serving.hpp"

#include <filesystem>

#include "common/ascii.hpp"
#include "inputs/forms.hpp"

namespace fs = std::filesystem;

namespace specprobe {
namespace {

using namespace serving;

// A non-comment line that runs a serve command or a container (not a YAML `key: value` holding one).
bool looks_like_command(std::string_view text) {
  static constexpr std::string_view kMarkers[] = {"vllm serve",           "vllm.entrypoints.openai.api_server",
                                                  "sglang.launch_server", "sglang serve",
                                                  "docker run",           "podman run",
                                                  "nerdctl run",          "dynamo.vllm",
                                                  "dynamo.sglang"};
  size_t start = 0;
  while (start < text.size()) {
    const std::string_view line{next_line(text, start)};
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    for (std::string_view m : kMarkers) {
      const size_t at = line.find(m);
      if (at == std::string_view::npos) continue;
      const std::string_view before = line.substr(0, at);
      if (before.find(": ") != std::string_view::npos || (!before.empty() && before.back() == ':')) continue;
      const size_t lead = before.find_first_not_of(" \t");
      if (lead != std::string_view::npos && before.substr(lead, 2) == "- ") continue;  // a YAML list item
      return true;
    }
  }
  return false;
}

// The first line that is not blank or a comment starts with a long option (`--tp 8`): a list of
// serve options without a command, read as shell words (a YAML list item is "- x").
bool looks_like_option_list(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    const std::string_view line{next_line(text, start)};
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    return line.size() > first + 2 && line.compare(first, 2, "--") == 0 &&
           std::isalpha(static_cast<unsigned char>(line[first + 2]));
  }
  return false;
}

ServingFile single(Expected<ParsedServing>&& p, const std::string& path) {
  ServingFile f;
  f.path = path;
  f.plans.push_back(std::move(*p));
  return f;
}

Expected<ServingFile> read_config(const std::string& text, const LineIndex& index, InputForm form) {
  ReadContext ctx;
  ctx.path = index.file();
  ctx.form = form;
  auto opts = form == InputForm::vllm_json ? read_json_options(text, index) : read_yaml_options(text, index, ctx.notes);
  if (!opts) return opts.error();
  auto p = build_vllm(*opts, std::move(ctx));
  if (!p) return p.error();
  return single(std::move(p), index.file());
}

Expected<ServingFile> dispatch(const std::shared_ptr<const CollectorSource>& src) {
  const std::string& s = src->text;
  const LineIndex& index = *src->index;
  std::string ext = ascii_lower(fs::path(src->path).extension().string());
  if (ext == ".tpl" || ext == ".tmpl") ext = ascii_lower(fs::path(fs::path(src->path).stem()).extension().string());
  const size_t first = s.find_first_not_of(" \t\r\n");
  const char c = first == std::string::npos ? '\0' : s[first];
  const bool yaml_ext = ext == ".yaml" || ext == ".yml";
  const bool shell_ext =
      ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".cmd" || ext == ".txt" || ext == ".ps1";
  if (looks_like_dockerfile(src->path, s)) return read_dockerfile(src);
  if (c == '{' || c == '[' || ext == ".json") {
    const auto shared = src->index;
    auto doc = parse_json(
        s, [shared](size_t off) { return shared->at(off); }, "JSON file");
    if (doc && looks_like_benchmark_json(*doc)) return read_benchmark_json(src, *doc);
    // Not JSON after all: a YAML file, or a log whose first line starts with '[' (a prompt's
    // "[25 Jun 05:21 PM] ~ ❯ ./run.sh", a "[INFO]" prefix).
    if (doc || !(yaml_ext || ext == ".log" || looks_like_log(s))) {
      if (!doc) return doc.error();
      return read_config(s, index, InputForm::vllm_json);
    }
  }
  if (ext == ".log" || (!yaml_ext && looks_like_log(s))) return read_server_log(src);
  if (!shell_ext && looks_like_deploy_yaml(s) && !looks_like_log(s)) {
    auto yaml = read_deploy_yaml(src);
    if (!yaml) return yaml.error();
    if (*yaml) return std::move(**yaml);
  }
  if (shell_ext || looks_like_command(s) || looks_like_option_list(s)) return read_script_text(src);
  return read_config(s, index, InputForm::vllm_yaml);
}

// Pins in requirements / lock files next to FILE give the engine version when nothing in the
// file does (and the kernel libraries' versions: deploy.lib_pins).
void add_pinned_versions(ServingFile& f, const std::string& path) {
  const auto pins = pinned_versions(fs::path(path).parent_path().string());
  if (pins.empty()) return;
  for (ParsedServing& p : f.plans) {
    PlanWriter w(p);
    const std::string engine = fact_string(p.facts, "engine.name").value_or("vllm");
    Json libs = Json::object();
    for (const auto& [key, pin] : pins) {
      if (key == "vllm" || key == "sglang") continue;
      libs[key] = {{"version", pin.first}, {"source", pin.second}};
    }
    if (!libs.empty()) w.set("deploy.lib_pins", libs, SourceLocation{path});
    auto e = pins.find(engine);
    if (e == pins.end() || w.has("deploy.engine_version")) continue;
    DeployInfo info;
    info.engine_version = e->second.first;
    info.engine_version_engine = engine;
    info.engine_version_source = e->second.second;
    info.engine_version_where = SourceLocation{path};
    write_engine_version(w, info, engine);
  }
}

Expected<ServingFile> read_text_impl(std::string text, const std::string& path, bool from_file,
                                     const ReadOptions& options) {
  auto src = std::make_shared<CollectorSource>();
  src->path = path;
  src->from_file = from_file;
  src->options = options;
  src->index = std::make_shared<LineIndex>(path, text);
  if (auto st = check_text(*src->index, text); !st) return st.error();
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.replace(0, 3, "   ");  // BOM; keeps offsets
  src->text = std::move(text);
  auto f = dispatch(src);
  if (!f) return f;
  if (from_file) add_pinned_versions(*f, path);
  if (f->plans.size() == 1) f->plans.front().server.clear();
  return f;
}

template <class F>
auto guarded(const std::string& where, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return input_error(fmt::format("cannot read serving configuration: {}", e.what()), SourceLocation{where});
  } catch (...) {
    return input_error("cannot read serving configuration", SourceLocation{where});
  }
}

}  // namespace

std::string_view to_string(InputForm form) {
  switch (form) {
    case InputForm::vllm_yaml:
      return "vllm-yaml";
    case InputForm::vllm_json:
      return "vllm-json";
    case InputForm::vllm_command:
      return "vllm-command";
    case InputForm::sglang_command:
      return "sglang-command";
    case InputForm::docker_run:
      return "docker-run";
    case InputForm::compose:
      return "compose";
    case InputForm::kubernetes:
      return "kubernetes";
    case InputForm::dockerfile:
      return "dockerfile";
    case InputForm::vllm_log:
      return "vllm-log";
    case InputForm::sglang_log:
      return "sglang-log";
    case InputForm::vllm_benchmark_json:
      return "vllm-benchmark-json";
  }
  return "unknown";
}

Expected<ServingFile> read_serving_plans(const std::string& path, const ReadOptions& options) {
  return guarded(path, [&]() -> Expected<ServingFile> {
    auto text = read_text_file(path);
    if (!text) return text.error();
    return read_text_impl(std::move(*text), path, true, options);
  });
}

Expected<ServingFile> read_serving_text(std::string text, const std::string& name, const ReadOptions& options) {
  return guarded(name, [&]() -> Expected<ServingFile> {
    if (text.size() > kMaxInputBytes)
      return input_error(fmt::format("input is larger than {} MiB; not a serving configuration", kMaxInputBytes >> 20),
                         SourceLocation{name});
    return read_text_impl(std::move(text), name, false, options);
  });
}

Expected<ParsedServing> read_serving_file(const std::string& path, const ReadOptions& options) {
  auto f = read_serving_plans(path, options);
  if (!f) return f.error();
  if (f->plans.empty()) {
    std::string why;
    for (const auto& n : f->notes) why += "; " + n.message;
    return input_error(
        fmt::format("no serve command found: expected `vllm serve MODEL ...`, `python -m "
                    "vllm.entrypoints.openai.api_server ...`, `python -m sglang.launch_server ...` or `sglang serve "
                    "...`{}",
                    why),
        SourceLocation{path, 1, 1});
  }
  return std::move(f->plans.front());
}

Expected<ParsedServing> read_serving_argv(const std::vector<std::string>& argv, const ReadOptions& options) {
  return guarded("<command line>", [&]() -> Expected<ParsedServing> { return read_command_argv(argv, options); });
}

}  // namespace specprobe
