// Entry points of the serving readers: detects the form of a file from its content (JSON object,
// shell text with a serve command, YAML mapping) and hands it to the matching reader.
#include "inputs/serving.hpp"

#include <filesystem>

#include "inputs/serving_options.hpp"

namespace specprobe {
namespace {

using namespace serving;

// A non-comment line that runs a serve command (not a YAML `key: value` holding one).
bool looks_like_command(std::string_view text) {
  static constexpr std::string_view kMarkers[] = {"vllm serve", "vllm.entrypoints.openai.api_server",
                                                  "sglang.launch_server", "sglang serve"};
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    for (std::string_view m : kMarkers) {
      const size_t at = line.find(m);
      if (at == std::string_view::npos) continue;
      const std::string_view before = line.substr(0, at);
      if (before.find(": ") != std::string_view::npos || (!before.empty() && before.back() == ':')) continue;
      return true;
    }
  }
  return false;
}

Expected<ParsedServing> read_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  std::string s = std::move(*text);
  const LineIndex index(path, s);
  if (auto st = check_text(index, s); !st) return st.error();
  if (s.rfind("\xEF\xBB\xBF", 0) == 0) s.replace(0, 3, "   ");  // BOM; keeps offsets
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  const size_t first = s.find_first_not_of(" \t\r\n");
  const char c = first == std::string::npos ? '\0' : s[first];
  const bool yaml_ext = ext == ".yaml" || ext == ".yml";
  if (c == '{' || c == '[' || ext == ".json") {
    auto opts = read_json_options(s, index);
    if (opts) {
      ReadContext ctx;
      ctx.path = path;
      ctx.form = InputForm::vllm_json;
      return build_vllm(*opts, std::move(ctx));
    }
    if (!yaml_ext) return opts.error();  // a YAML flow mapping falls through
  } else if (ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".cmd" || ext == ".txt" ||
             looks_like_command(s)) {
    return read_command_text(s, index);
  }
  ReadContext ctx;
  ctx.path = path;
  ctx.form = InputForm::vllm_yaml;
  auto opts = read_yaml_options(s, index, ctx.notes);
  if (!opts) return opts.error();
  return build_vllm(*opts, std::move(ctx));
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
  }
  return "unknown";
}

Expected<ParsedServing> read_serving_file(const std::string& path) {
  try {
    return read_file(path);
  } catch (const std::exception& e) {
    return input_error(fmt::format("cannot read serving configuration: {}", e.what()), SourceLocation{path});
  } catch (...) {
    return input_error("cannot read serving configuration", SourceLocation{path});
  }
}

Expected<ParsedServing> read_serving_argv(const std::vector<std::string>& argv) {
  try {
    return read_command_argv(argv);
  } catch (const std::exception& e) {
    return input_error(fmt::format("cannot read the command line: {}", e.what()), SourceLocation{"<command line>"});
  } catch (...) {
    return input_error("cannot read the command line", SourceLocation{"<command line>"});
  }
}

}  // namespace specprobe
