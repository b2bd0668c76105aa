// Command-line readers: deploy scripts holding a `vllm serve` / `python -m
// vllm.entrypoints.openai.api_server` / `python -m sglang.launch_server` / `sglang serve` command
// (env prefixes, export lines, docker wrappers, continuations, quotes), and argv after
// `specprobe check --`. Both go through the shell word splitter so every option keeps its
// line:column; argv is laid out as one line, words joined by single spaces.
#include <filesystem>
#include <memory>

#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "inputs/serving_options.hpp"
#include "inputs/shell_words.hpp"

namespace specprobe::serving {
namespace {

enum class Engine { none, vllm, sglang };

struct ServeCommand {
  Engine engine = Engine::none;
  bool api_server = false;
  size_t args_begin = 0;
};

std::string base_name(const std::string& s) {
  const size_t p = s.rfind('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// NAME=value with an unquoted NAME.
bool split_assignment(const ShellWord& w, std::string& name, std::string& value) {
  const size_t eq = w.text.find('=');
  if (eq == std::string::npos || eq == 0 || eq >= w.unquoted_prefix + 1) return false;
  if (!is_identifier(std::string_view(w.text).substr(0, eq))) return false;
  name = w.text.substr(0, eq);
  value = w.text.substr(eq + 1);
  return true;
}

bool is_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  for (size_t i = 1; i < s.size(); ++i)
    if (!(std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) return false;
  return true;
}

ServeCommand find_serve(const std::vector<ShellWord>& words, size_t from) {
  for (size_t j = from; j + 1 < words.size(); ++j) {
    const std::string b = base_name(words[j].text);
    const std::string& next = words[j + 1].text;
    if (b == "vllm" && next == "serve") return {Engine::vllm, false, j + 2};
    if (b == "sglang" && next == "serve") return {Engine::sglang, false, j + 2};
    if (words[j].text == "-m" && next == "vllm.entrypoints.openai.api_server") return {Engine::vllm, true, j + 2};
    if (words[j].text == "-m" && next == "sglang.launch_server") return {Engine::sglang, false, j + 2};
  }
  return {};
}

// Replaces $NAME / ${NAME} with values assigned earlier in the script. BUDGET bounds the bytes
// all expansions of a script may produce (A=$A$A repeated doubles A each line); false when spent.
bool substitute(ShellWord& w, const std::map<std::string, std::string>& vars, size_t& budget) {
  for (auto it = w.expansions.rbegin(); it != w.expansions.rend(); ++it) {
    auto v = vars.find(it->name);
    if (v == vars.end() || it->pos + it->len > w.text.size()) continue;
    if (v->second.size() > budget) return false;
    budget -= v->second.size();
    const uint32_t at = w.offsets[it->pos];
    w.text.replace(it->pos, it->len, v->second);
    w.offsets.erase(w.offsets.begin() + static_cast<long>(it->pos), w.offsets.begin() + static_cast<long>(it->pos + it->len));
    w.offsets.insert(w.offsets.begin() + static_cast<long>(it->pos), v->second.size(), at);
    if (w.unquoted_prefix > it->pos) w.unquoted_prefix = it->pos;
  }
  w.expansions.clear();
  return true;
}

class CommandReader {
 public:
  CommandReader(std::shared_ptr<const LineIndex> index, std::string path, bool from_file)
      : index_(std::move(index)), path_(std::move(path)), from_file_(from_file) {}

  Expected<ParsedServing> read(std::vector<ShellWord> all) {
    // Split into commands at separators; drop redirections and their targets.
    std::vector<std::vector<ShellWord>> commands(1);
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].kind == ShellWord::separator) {
        commands.emplace_back();
      } else if (all[i].kind == ShellWord::redirection) {
        if (i + 1 < all.size() && all[i + 1].kind == ShellWord::word) ++i;
      } else {
        commands.back().push_back(std::move(all[i]));
      }
    }
    std::map<std::string, std::string> vars;
    std::vector<std::pair<std::string, EnvSetting>> exported;
    auto set_env = [](std::vector<std::pair<std::string, EnvSetting>>& env, const std::string& name, EnvSetting s) {
      for (auto& [n, v] : env)
        if (n == name) {
          v = std::move(s);
          return;
        }
      env.emplace_back(name, std::move(s));
    };
    bool found = false;
    std::vector<ShellWord> serve_words;
    ServeCommand serve;
    std::vector<std::pair<std::string, EnvSetting>> serve_env;
    for (auto& words : commands) {
      if (words.empty()) continue;
      for (auto& w : words)
        if (!substitute(w, vars, expansion_budget_))
          return input_error(fmt::format("variable expansions exceed {} MiB", kMaxInputBytes >> 20), loc(w.start));
      size_t i = 0;
      std::string name, value;
      std::vector<std::pair<std::string, EnvSetting>> prefix;
      while (i < words.size() && split_assignment(words[i], name, value)) {
        prefix.emplace_back(name, EnvSetting{value, loc(words[i].start)});
        ++i;
      }
      if (i == words.size()) {  // plain assignments: shell variables (exported ones update the env)
        for (auto& [n, s] : prefix) {
          vars[n] = s.value;
          for (auto& [en, ev] : exported)
            if (en == n) ev = s;
        }
        continue;
      }
      const std::string& cmd = words[i].text;
      if (cmd == "export" || (cmd == "declare" && i + 1 < words.size() && words[i + 1].text == "-x")) {
        for (size_t j = i + 1; j < words.size(); ++j) {
          if (split_assignment(words[j], name, value)) {
            vars[name] = value;
            set_env(exported, name, EnvSetting{value, loc(words[j].start)});
          } else if (is_identifier(words[j].text) && vars.count(words[j].text)) {
            set_env(exported, words[j].text, EnvSetting{vars[words[j].text], loc(words[j].start)});
          }
        }
        continue;
      }
      if (cmd == "unset") {
        for (size_t j = i + 1; j < words.size(); ++j) {
          vars.erase(words[j].text);
          std::erase_if(exported, [&](const auto& e) { return e.first == words[j].text; });
        }
        continue;
      }
      const ServeCommand sc = find_serve(words, i);
      if (sc.engine == Engine::none) continue;
      if (found) {
        notes_.push_back({"warning", "another serve command; only the first one is checked", loc(words[i].start)});
        continue;
      }
      found = true;
      serve = sc;
      serve_env = exported;
      for (auto& [n, s] : prefix) set_env(serve_env, n, s);
      // `env A=1 ...` and `docker run -e A=1 / --env A=1 / --env=A=1 ...` before the serve words.
      for (size_t j = i; j < sc.args_begin - 2; ++j) {
        const std::string& t = words[j].text;
        ShellWord candidate;
        bool have = false;
        if ((t == "-e" || t == "--env") && j + 1 < sc.args_begin - 2) {
          candidate = words[j + 1];
          have = true;
          ++j;
        } else if (t.rfind("--env=", 0) == 0 || t.rfind("-e=", 0) == 0) {
          const size_t cut = t.find('=') + 1;
          candidate = words[j];
          candidate.text = t.substr(cut);
          candidate.start = words[j].offsets.size() > cut ? words[j].offsets[cut] : words[j].start;
          candidate.unquoted_prefix = words[j].unquoted_prefix > cut ? words[j].unquoted_prefix - cut : 0;
          have = true;
        } else if (j > i && words[i].text == "env" && split_assignment(words[j], name, value)) {
          set_env(serve_env, name, EnvSetting{value, loc(words[j].start)});
        }
        if (have && split_assignment(candidate, name, value))
          set_env(serve_env, name, EnvSetting{value, loc(candidate.start)});
      }
      serve_words = std::move(words);
    }
    if (!found)
      return input_error(
          "no serve command found: expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server "
          "...`, `python -m sglang.launch_server ...` or `sglang serve ...`",
          from_file_ ? index_->at(0) : SourceLocation{path_});
    return parse_args(serve_words, serve, std::move(serve_env));
  }

 private:
  SourceLocation loc(size_t offset) const { return index_->at(offset); }

  PosMap pos_map(const ShellWord& w, size_t skip) const {
    std::vector<uint32_t> offs(w.offsets.begin() + static_cast<long>(std::min(skip, w.offsets.size())), w.offsets.end());
    auto index = index_;
    const SourceLocation fallback = loc(w.start);
    return [index, offs = std::move(offs), fallback](size_t off) {
      return off < offs.size() ? index->at(offs[off]) : fallback;
    };
  }

  Expected<ParsedServing> parse_args(const std::vector<ShellWord>& words, const ServeCommand& sc,
                                     std::vector<std::pair<std::string, EnvSetting>> env) {
    const bool vllm = sc.engine == Engine::vllm;
    ReadContext ctx;
    ctx.path = path_;
    ctx.form = vllm ? InputForm::vllm_command : InputForm::sglang_command;
    ctx.api_server = sc.api_server;
    ctx.env = std::move(env);
    std::vector<RawOption> config_options;  // from a --config file: before the command-line ones
    std::vector<RawOption> options;
    bool only_positional = false;
    for (size_t k = sc.args_begin; k < words.size(); ++k) {
      const ShellWord& w = words[k];
      const std::string& t = w.text;
      if (!only_positional && t == "--" && !w.quoted) {
        only_positional = true;
        continue;
      }
      if (only_positional || t.size() < 2 || t[0] != '-' || is_number(t)) {
        if (ctx.positional_model.empty() && !sc.api_server) {
          ctx.positional_model = t;
          ctx.positional_loc = loc(w.start);
        } else {
          ctx.unknown.push_back({"<positional>", t, loc(w.start)});
        }
        continue;
      }
      RawOption o;
      o.short_form = t[1] != '-';
      o.textual = true;
      o.where = loc(w.start);
      const size_t name_start = o.short_form ? 1 : 2;
      const size_t eq = t.find('=', name_start);
      bool has_value = eq != std::string::npos;
      o.name = t.substr(name_start, has_value ? eq - name_start : std::string::npos);
      if (has_value) {
        o.value = t.substr(eq + 1);
        o.value_pos = pos_map(w, eq + 1);
      }
      if (vllm && o.short_form && o.name.size() > 1 && o.name[0] == 'O' && o.name.find('.') == std::string::npos &&
          std::isdigit(static_cast<unsigned char>(o.name[1]))) {  // -O3
        o.value = o.name.substr(1);
        o.value_pos = pos_map(w, 2);
        o.name = "O";
        has_value = true;
      }
      const std::string canon = canonical_name(o.name);
      const std::string root = canon.substr(0, canon.find('.'));
      const bool dotted = canon.find('.') != std::string::npos;
      const bool flag = !dotted && (vllm ? (vllm_flag_option(root) || (o.short_form && root == "ep"))
                                         : sglang_flag_option(root));
      const bool list = !dotted && (vllm ? vllm_list_option(root) : sglang_list_option(root));
      if (!has_value) {
        auto takes = [&](size_t j) {
          return j < words.size() && (words[j].text.empty() || words[j].text[0] != '-' || is_number(words[j].text) ||
                                      words[j].text == "-");
        };
        if (flag) {
          o.value = true;
        } else if (list) {
          Json arr = Json::array();
          while (takes(k + 1)) arr.push_back(words[++k].text);
          o.value = std::move(arr);
        } else if (takes(k + 1)) {
          ++k;
          o.value = words[k].text;
          o.value_pos = pos_map(words[k], 0);
        } else {
          o.value = true;
        }
      }
      if (vllm && !o.short_form && root == "config" && o.value.is_string()) {
        if (auto st = read_config(o, config_options, ctx); !st) return st.error();
        continue;
      }
      options.push_back(std::move(o));
    }
    config_options.insert(config_options.end(), std::make_move_iterator(options.begin()),
                          std::make_move_iterator(options.end()));
    ctx.notes.insert(ctx.notes.begin(), notes_.begin(), notes_.end());
    return vllm ? build_vllm(config_options, std::move(ctx)) : build_sglang(config_options, std::move(ctx));
  }

  // `vllm serve MODEL --config FILE`: FILE's options come before the command-line ones (the
  // command line wins). FILE is looked up as given, then next to the script.
  Status read_config(const RawOption& o, std::vector<RawOption>& out, ReadContext& ctx) {
    namespace fs = std::filesystem;
    const std::string given = o.value.get<std::string>();
    std::vector<fs::path> candidates{fs::path(given)};
    if (from_file_ && fs::path(given).is_relative()) candidates.push_back(fs::path(path_).parent_path() / given);
    std::error_code ec;
    for (const fs::path& p : candidates) {
      if (!fs::is_regular_file(p, ec)) continue;
      // A script under review may name any local file: only its own directory tree is read.
      if (from_file_ && !inside_tree(p, fs::path(path_).parent_path())) {
        ctx.notes.push_back({"warning",
                             fmt::format("--config {} lies outside the directory of {}: not read; its options are not checked",
                                         excerpt_name(given), fs::path(path_).filename().string()),
                             o.where});
        ctx.unknown.push_back({o.name, o.value, o.where});
        return Ok{};
      }
      auto text = read_text_file(p.string());
      if (!text) return text.error();
      LineIndex index(p.string(), *text);
      if (auto st = check_text(index, *text); !st) return st.error();
      const std::string ext = lower(p.extension().string());
      size_t first = text->find_first_not_of(" \t\r\n");
      const bool json = ext == ".json" || (first != std::string::npos && (*text)[first] == '{');
      auto opts = json ? read_json_options(*text, index) : read_yaml_options(*text, index, ctx.notes);
      if (!opts) return opts.error();
      ctx.notes.push_back({"info", fmt::format("read options from --config {}", p.string()), o.where});
      out.insert(out.end(), opts->begin(), opts->end());
      return Ok{};
    }
    ctx.notes.push_back(
        {"warning", fmt::format("--config {} cannot be read here; its options are not checked", excerpt_name(given)), o.where});
    ctx.unknown.push_back({o.name, o.value, o.where});
    return Ok{};
  }

  std::shared_ptr<const LineIndex> index_;
  std::string path_;
  bool from_file_;
  size_t expansion_budget_ = kMaxInputBytes;  // bytes all $NAME expansions may add
  std::vector<ReaderNote> notes_;
};

}  // namespace

Expected<ParsedServing> read_command_text(const std::string& text, const LineIndex& index) {
  auto words = split_shell_words(text, index);
  if (!words) return words.error();
  CommandReader reader(std::make_shared<LineIndex>(index), index.file(), true);
  return reader.read(std::move(*words));
}

Expected<ParsedServing> read_command_argv(const std::vector<std::string>& argv) {
  const std::string path = "<command line>";
  std::string line;
  std::vector<ShellWord> words;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    ShellWord w;
    w.text = arg;
    w.start = line.size();
    for (size_t i = 0; i < arg.size(); ++i) w.offsets.push_back(static_cast<uint32_t>(line.size() + i));
    w.unquoted_prefix = arg.size();
    line += arg;
    words.push_back(std::move(w));
  }
  if (line.size() > kMaxInputBytes) return input_error("command line is too long", SourceLocation{path});
  auto index = std::make_shared<LineIndex>(path, line);
  if (auto st = check_text(*index, line); !st) return st.error();
  CommandReader reader(index, path, false);
  return reader.read(std::move(words));
}

}  // namespace specprobe::serving
