// Command-line readers: serve commands (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`,
// `python -m sglang.launch_server`, `sglang serve`, Dynamo's `python -m dynamo.vllm|sglang`) found
// by the deploy-script shell (shell/script.hpp) in scripts, container commands and argv after
// `specprobe check --`. Every option keeps its line:column; argv is laid out as one line, words
// joined by single spaces. Each serve command reached is one plan.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "inputs/forms.hpp"
#include "inputs/options/tables.hpp"
#include "inputs/text/text.hpp"

namespace specprobe::serving {
namespace {

enum class Engine { none, vllm, sglang };

struct ServeCommand {
  Engine engine = Engine::none;
  bool api_server = false;  // --model is the normal spelling
  bool cli = false;         // `vllm serve` / `sglang serve`: the first positional is the model
  size_t at = 0;            // the first word of the invocation
  size_t args_begin = 0;
};

bool is_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  for (size_t i = 1; i < s.size(); ++i)
    if (!(std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) return false;
  return true;
}

// The program a command word runs: its base name, or for a word that is only a variable the
// file does not set, the engine the variable is named for ("$VLLM serve ...", "${SGLANG_BIN}
// serve ...": the script is run with it set to the engine's executable).
std::string program_name(const ShellWord& w) {
  const std::string& t = w.text;
  if (t.size() > 2 && t.front() == kMarkOpen && t.back() == kMarkClose && t.find(kMarkOpen, 1) == std::string::npos) {
    std::string name = t.substr(1, t.size() - 2);
    for (char& c : name) c = ascii_lower(c);
    if (name.find("vllm") != std::string::npos) return "vllm";
    if (name.find("sglang") != std::string::npos) return "sglang";
  }
  return base_name(t);
}

ServeCommand find_serve(const std::vector<ShellWord>& words, size_t from) {
  for (size_t j = from; j + 1 < words.size(); ++j) {
    const std::string b = program_name(words[j]);
    const std::string& next = words[j + 1].text;
    if (b == "vllm" && next == "serve") return {Engine::vllm, false, true, j, j + 2};
    if (b == "sglang" && next == "serve") return {Engine::sglang, false, true, j, j + 2};
    if (words[j].text != "-m") continue;
    if (next == "vllm.entrypoints.openai.api_server" || next == "vllm.entrypoints.api_server" || next == "dynamo.vllm")
      return {Engine::vllm, true, false, j, j + 2};
    if (next == "sglang.launch_server" || next == "dynamo.sglang") return {Engine::sglang, false, false, j, j + 2};
  }
  return {};
}

// Index of `docker|podman|nerdctl run` (or `container run`) among the first words, or npos.
size_t find_container_run(const std::vector<ShellWord>& words) {
  for (size_t j = 0; j + 1 < words.size() && j < 6; ++j) {
    const std::string b = base_name(words[j].text);
    if (b != "docker" && b != "podman" && b != "nerdctl") continue;
    if (words[j + 1].text == "run") return j;
    if (words[j + 1].text == "container" && j + 2 < words.size() && words[j + 2].text == "run") return j;
  }
  return std::string::npos;
}

bool utf8_dash(std::string_view t) { return t.rfind("\xE2\x80\x94", 0) == 0 || t.rfind("\xE2\x80\x93", 0) == 0; }

// Warnings for text that a shell reads differently from how it looks.
void shell_traps(const ShellWord& w, const SourceLocation& where, std::vector<ReaderNote>& notes) {
  const std::string& t = w.text;
  if (utf8_dash(t))
    notes.push_back({"warning",
                     fmt::format("'{}' starts with a typographic dash (— or –), not `--`: the engine takes it as a "
                                 "positional argument, not an option (copied from a rendered page?)",
                                 excerpt(t)),
                     where});
  if (t.size() > 4 && t.rfind("--", 0) == 0 && t.find('=') == std::string::npos)
    for (size_t p = 3; p + 2 < t.size(); ++p)
      if (t[p] == '-' && t[p + 1] == '-' && std::isalnum(static_cast<unsigned char>(t[p - 1])) &&
          std::isalpha(static_cast<unsigned char>(t[p + 2]))) {
        notes.push_back({"warning",
                         fmt::format("'{}' looks like two options glued together (a space is missing before `{}`)",
                                     excerpt(t), excerpt(t.substr(p))),
                         where});
        break;
      }
  const size_t open = t.find('[');
  const size_t mid = t.find("](", open == std::string::npos ? 0 : open);
  if (open != std::string::npos && mid != std::string::npos && t.back() == ')' &&
      (t.find("http://", mid) == mid + 2 || t.find("https://", mid) == mid + 2))
    notes.push_back({"warning",
                     fmt::format("'{}' is a markdown link left by copying from a rendered page; the engine receives "
                                 "it literally (meant: {})",
                                 excerpt(t), excerpt(t.substr(open + 1, mid - open - 1))),
                     where});
}

}  // namespace

ShellVars ServeCollector::base_vars() const {
  ShellVars vars;
  if (src_->options.process_environment) {
    for (char** e = ::environ; e && *e; ++e) {
      const std::string kv = *e;
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      ShellValue v;
      v.text = kv.substr(eq + 1);
      v.exported = true;
      v.origin = "environment";
      vars[kv.substr(0, eq)] = std::move(v);
    }
  }
  for (const auto& [k, val] : src_->options.env) {
    ShellValue v;
    v.text = val;
    v.exported = true;
    v.origin = "--env";
    vars[k] = std::move(v);
  }
  return vars;
}

namespace {

class ArgsReader {
 public:
  ArgsReader(const ServeCollector& col, const ServeCommand& sc) : col_(col), sc_(sc) {}

  Expected<ParsedServing> read(std::vector<ShellWord> words, std::vector<std::pair<std::string, EnvSetting>> env,
                               const DeployInfo& deploy, const std::map<std::string, std::string>& reasons) {
    const bool vllm = sc_.engine == Engine::vllm;
    std::vector<ReaderNote> placeholders;
    for (size_t k = sc_.args_begin; k < words.size(); ++k) {  // "<MODEL>" quoted: still a placeholder
      std::string& t = words[k].text;
      if (t.size() > 2 && t.front() == '<' && t.back() == '>' && t.find_first_of("<> \t", 1) == t.size() - 1) {
        placeholders.push_back({"warning",
                                fmt::format("{} looks like a placeholder to fill in: its value is unknown", t),
                                loc(words[k].start)});
        t = unresolved_mark(t);
      }
    }
    ReadContext ctx;
    ctx.notes = std::move(placeholders);
    ctx.path = col_.source().path;
    ctx.form = deploy.form_set ? deploy.form : vllm ? InputForm::vllm_command : InputForm::sglang_command;
    ctx.api_server = sc_.api_server;
    ctx.env = std::move(env);
    std::vector<RawOption> config_options;  // from a --config file: before the command-line ones
    std::vector<RawOption> options;
    bool only_positional = false;
    for (size_t k = sc_.args_begin; k < words.size(); ++k) {
      const ShellWord& w = words[k];
      const std::string& t = w.text;
      shell_traps(w, loc(w.start), ctx.notes);
      if (!only_positional && t == "--" && !w.quoted) {
        only_positional = true;
        continue;
      }
      if (only_positional || t.size() < 2 || t[0] != '-' || is_number(t)) {
        // vllm serve MODEL (anywhere among the options); sglang serve MODEL (right after it)
        const bool model_place = vllm ? !sc_.api_server : sc_.cli && k == sc_.args_begin;
        if (ctx.positional_model.empty() && model_place) {
          ctx.positional_model = t;
          ctx.positional_loc = loc(w.start);
        } else {
          ctx.unknown.push_back({"<positional>", show_unresolved(t), loc(w.start)});
          if (has_unresolved(t))
            ctx.notes.push_back({"warning",
                                 fmt::format("{} has no value here and may hold more options; they are not checked",
                                             show_unresolved(t)),
                                 loc(w.start)});
        }
        continue;
      }
      RawOption o = option(words, k, vllm);
      if (vllm && !o.short_form && canonical_name(o.name) == "config" && o.value.is_string()) {
        if (auto st = read_config(o, config_options, ctx); !st) return st.error();
        continue;
      }
      options.push_back(std::move(o));
    }
    config_options.insert(config_options.end(), std::make_move_iterator(options.begin()),
                          std::make_move_iterator(options.end()));
    std::vector<UnresolvedUse> uses = neutralize_unresolved(config_options, ctx);
    if (config_use_) uses.push_back(*config_use_);
    auto plan = vllm ? build_vllm(config_options, std::move(ctx)) : build_sglang(config_options, std::move(ctx));
    if (!plan) return plan;
    apply_unresolved(*plan, uses, reasons);
    return plan;
  }

 private:
  SourceLocation loc(size_t off) const { return col_.loc(off); }

  PosMap pos_map(const ShellWord& w, size_t skip) const {
    std::vector<uint32_t> offs(w.offsets.begin() + static_cast<long>(std::min(skip, w.offsets.size())),
                               w.offsets.end());
    auto index = col_.source().index;
    const SourceLocation fallback = loc(w.start);
    return [index, offs = std::move(offs), fallback](size_t off) {
      return off < offs.size() ? index->at(offs[off]) : fallback;
    };
  }

  RawOption option(const std::vector<ShellWord>& words, size_t& k, bool vllm) const {
    const ShellWord& w = words[k];
    const std::string& t = w.text;
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
    if (has_value) return o;
    const std::string canon = canonical_name(o.name);
    const std::string root = canon.substr(0, canon.find('.'));
    const bool dotted = canon.find('.') != std::string::npos;
    const bool flag =
        !dotted && (vllm ? (vllm_flag_option(root) || (o.short_form && root == "ep")) : sglang_flag_option(root));
    const bool list = !dotted && (vllm ? vllm_list_option(root) : sglang_list_option(root));
    auto takes = [&](size_t j) {
      return j < words.size() &&
             (words[j].text.empty() || words[j].text[0] != '-' || is_number(words[j].text) || words[j].text == "-");
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
    return o;
  }

  // `vllm serve MODEL --config FILE`: FILE's options come before the command-line ones (the
  // command line wins). FILE is looked up as given, then next to the script.
  Status read_config(const RawOption& o, std::vector<RawOption>& out, ReadContext& ctx) {
    namespace fs = std::filesystem;
    const std::string given = o.value.get<std::string>();
    if (has_unresolved(given)) {
      // The variable is named with the facts it leaves unknown (apply_unresolved), like any other.
      config_use_ = UnresolvedUse{o.where, unresolved_names(given), o.name, given};
      ctx.options_file_unknown = o.where;
      return Ok{};
    }
    std::vector<fs::path> candidates{fs::path(given)};
    const bool from_file = col_.source().from_file;
    if (from_file && fs::path(given).is_relative())
      candidates.push_back(fs::path(col_.source().path).parent_path() / given);
    std::error_code ec;
    for (const fs::path& p : candidates) {
      if (!fs::is_regular_file(p, ec)) continue;
      // A script under review may name any local file: only its own directory tree is read.
      const fs::path script(col_.source().path);
      if (from_file && !inside_tree(p, script.parent_path())) {
        ctx.notes.push_back({"warning",
                             fmt::format("--config {} lies outside the directory of {}: not read; the options it may "
                                         "set are unknown",
                                         excerpt_name(given), script.filename().string()),
                             o.where});
        ctx.options_file_unknown = o.where;
        return Ok{};
      }
      auto text = read_text_file(p.string());
      if (!text) return text.error();
      LineIndex index(p.string(), *text);
      if (auto st = check_text(index, *text); !st) return st.error();
      const std::string ext = ascii_lower(p.extension().string());
      size_t first = text->find_first_not_of(" \t\r\n");
      const bool json = ext == ".json" || (first != std::string::npos && (*text)[first] == '{');
      auto opts = json ? read_json_options(*text, index) : read_yaml_options(*text, index, ctx.notes);
      if (!opts) return opts.error();
      ctx.notes.push_back({"info", fmt::format("read options from --config {}", p.string()), o.where});
      out.insert(out.end(), opts->begin(), opts->end());
      return Ok{};
    }
    ctx.notes.push_back(
        {"warning",
         fmt::format("--config {} cannot be read here; the options it may set are unknown", excerpt_name(given)),
         o.where});
    ctx.options_file_unknown = o.where;
    return Ok{};
  }

  const ServeCollector& col_;
  const ServeCommand& sc_;
  std::optional<UnresolvedUse> config_use_;  // `--config $VAR`: its variable, named like any other
};

// `env A=1 ...` and `docker run -e A=1 / --env A=1 / --env=A=1 ...` before the serve words.
void prefix_env(const std::vector<ShellWord>& words, size_t from, size_t to, const ServeCollector& col,
                std::vector<std::pair<std::string, EnvSetting>>& env) {
  auto set = [&](const std::string& name, EnvSetting s) {
    for (auto& [n, v] : env)
      if (n == name) {
        v = std::move(s);
        return;
      }
    env.emplace_back(name, std::move(s));
  };
  auto assignment = [](const std::string& t, std::string& name, std::string& value) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    name = t.substr(0, eq);
    value = t.substr(eq + 1);
    return std::all_of(name.begin(), name.end(), [](char c) { return shell_name_char(c); }) &&
           shell_name_start(name[0]);
  };
  std::string name, value;
  const bool env_cmd = from < words.size() && base_name(words[from].text) == "env";
  for (size_t j = from; j < to; ++j) {
    const std::string& t = words[j].text;
    if ((t == "-e" || t == "--env") && j + 1 < to) {
      if (assignment(words[j + 1].text, name, value)) set(name, {value, col.loc(words[j + 1].start)});
      ++j;
    } else if (t.rfind("--env=", 0) == 0 || t.rfind("-e=", 0) == 0) {
      if (assignment(t.substr(t.find('=') + 1), name, value)) set(name, {value, col.loc(words[j].start)});
    } else if (env_cmd && j > from && assignment(t, name, value)) {
      set(name, {value, col.loc(words[j].start)});
    }
  }
}

}  // namespace

Status ServeCollector::serve(const std::vector<ShellWord>& words, size_t begin, const ShellCommand& c,
                             const DeployInfo& context, const std::map<std::string, std::string>& reasons) {
  // Each server becomes a report: a file that starts more is read up to the limit, and says so.
  if (plans_.size() >= kMaxServers) {
    if (!servers_capped_)
      plans_.back().notes.push_back(
          {"warning",
           fmt::format("more than {} servers are started in this file: the ones after the {}th are not "
                       "checked",
                       kMaxServers, kMaxServers),
           loc(words[begin].start)});
    servers_capped_ = true;
    return Ok{};
  }
  const ServeCommand sc = find_serve(words, begin);
  if (sc.engine != Engine::none && sc.cli && has_unresolved(words[sc.at].text)) {
    const std::string name = unresolved_names(words[sc.at].text).front();
    notes_.push_back({"info",
                      fmt::format("`${} serve` is read as `{} serve`: {} is not set in this file, and is taken to name "
                                  "the engine's executable",
                                  name, sc.engine == Engine::vllm ? "vllm" : "sglang", name),
                      loc(words[sc.at].start)});
  }
  std::vector<std::pair<std::string, EnvSetting>> env = context.env;
  for (const auto& [k, v] : c.env) {
    const std::string& name = k;  // clang before 16 cannot capture a structured binding
    auto it = std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
    if (it != env.end())
      it->second = v;
    else
      env.emplace_back(k, v);
  }
  prefix_env(words, begin, sc.at, *this, env);
  // A prompt (`$ `, `user@host:~$ `) pasted before the command.
  for (size_t j = begin; j < sc.at; ++j) {
    const std::string& t = words[j].text;
    if (t == "$" || t == "#" ||
        (t.size() > 1 && (t.back() == '$' || t.back() == '#') && t.find('@') != std::string::npos)) {
      notes_.push_back({"warning",
                        fmt::format("'{}' looks like a shell prompt copied with the command; a shell would try to run "
                                    "it: read the command after it",
                                    excerpt(t)),
                        loc(words[j].start)});
      break;
    }
  }
  continuation_traps(c.end);
  markdown_links(words[begin].start, c.end);
  ArgsReader reader(*this, sc);
  auto plan = reader.read(words, std::move(env), context, reasons);
  if (!plan) return plan.error();
  PlanWriter w(*plan);
  const std::string engine = sc.engine == Engine::vllm ? "vllm" : "sglang";
  plan->server = context.server.empty() ? fmt::format("line {}", loc(words[sc.at].start).line) : context.server;
  w.set("deploy.server", plan->server, loc(words[sc.at].start));
  if (!context.image.empty()) w.set("deploy.image", show_unresolved(context.image), context.image_where);
  if (!context.gpus.is_null()) w.set("deploy.gpus", context.gpus, context.gpus_where);
  if (!context.gpu_product.empty())
    w.set("deploy.gpu_product", Json{{"value", context.gpu_product}, {"label", context.gpu_product_key}},
          context.gpu_product_where);
  const bool from_context = !context.engine_version.empty() && context.engine_version_engine == engine;
  write_engine_version(w, from_context || fallback_version_.engine_version_source.empty() ? context : fallback_version_,
                       engine);
  for (const auto& n : context.notes) plan->notes.push_back(n);
  plan->notes.insert(plan->notes.begin(), notes_.begin(), notes_.end());
  notes_.clear();
  plans_.push_back(std::move(*plan));
  return Ok{};
}

// `[0.0.0.0](http://0.0.0.0/)` between FROM and TO in the file: a link a rendered page made of a
// value. A shell reads the `(` as a syntax error or a subshell, so the word is not what it looks
// like (the shell words no longer hold it whole: the file text is searched).
void ServeCollector::markdown_links(size_t from, size_t to) {
  const std::string& t = src_->text;
  if (to <= from) return;  // where the command ends is not known (a YAML list: words are whole)
  to = std::min(to, t.size());
  for (size_t mid = t.find("](http", from); mid != std::string::npos && mid < to; mid = t.find("](http", mid + 2)) {
    const size_t open = t.rfind('[', mid);
    const size_t close = t.find(')', mid);
    if (open == std::string::npos || open < from || close == std::string::npos ||
        t.find_first_of(" \t\n", open) < close)
      continue;
    notes_.push_back(
        {"warning",
         fmt::format("'{}' is a markdown link left by copying from a rendered page: a shell does not read "
                     "it as one word (meant: {})",
                     excerpt(t.substr(open, close + 1 - open)), excerpt(t.substr(open + 1, mid - open - 1))),
         loc(open)});
  }
}

// After a serve command's last line: a backslash that continues into a blank line or a comment
// ends the command there; whatever the author meant to follow is not part of it.
void ServeCollector::continuation_traps(size_t end) {
  const std::string& t = src_->text;
  if (end == 0 || end >= t.size()) return;
  size_t i = end;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  if (i + 1 >= t.size() || t[i] != '\\' || (t[i + 1] != '\n' && t[i + 1] != '\r')) return;
  const size_t next = t.find('\n', i) + 1;
  if (next == 0 || next >= t.size()) return;
  size_t j = next;
  while (j < t.size() && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r')) ++j;
  if (j >= t.size()) return;
  if (t[j] == '\n')
    notes_.push_back({"warning",
                      "the command's last line ends with a backslash and the next line is blank: the command ends "
                      "there, and a line after the blank one would run as a separate command",
                      loc(i)});
  else if (t[j] == '#')
    notes_.push_back({"warning",
                      "the command continues into a comment line (a commented-out option?): the comment ends the "
                      "command, so the lines after it are not part of it",
                      loc(j)});
}

Status ServeCollector::on_command(const ShellCommand& c, const DeployInfo& context,
                                  const std::map<std::string, std::string>& reasons) {
  const auto& words = c.words;
  if (words.empty()) return Ok{};
  if (const size_t run = find_container_run(words); run != std::string::npos) return container_run(c, run, context);
  // A here-document holding Kubernetes objects (or a compose file): `kubectl apply -f - <<EOF`,
  // `cat <<EOF | kubectl apply -f -`, `cat > deploy.yaml <<EOF`.
  for (const auto& h : c.heredocs)
    if (looks_like_deploy_yaml(h.text))
      if (auto st = read_kubernetes_docs(h.text, h.offsets, *this); !st) return st;
  if (auto pip = pip_engine_version(words)) {  // a version the rest of the script installs
    fallback_version_.engine_version = pip->version;
    fallback_version_.engine_version_engine = pip->engine;
    fallback_version_.engine_version_source = pip->why;
    fallback_version_.engine_version_where = loc(words[0].start);
    return Ok{};
  }
  if (find_serve(words, 0).engine == Engine::none) {
    // Options alone, at the top of a file (a container's arguments go to its image's entrypoint).
    if (!context.form_set && context.image.empty() && words[0].kind == ShellWord::word && words[0].text.size() > 1 &&
        words[0].text[0] == '-' && words[0].unquoted_prefix > 0 &&
        !std::isdigit(static_cast<unsigned char>(words[0].text[1])))
      option_lists_.push_back({c, context, reasons});
    return Ok{};
  }
  return serve(words, 0, c, context, reasons);
}

namespace {

// Whether ENGINE's option table (any release) takes FLAG as argparse would: a spelling, a --no-X
// negation or an unambiguous prefix (underscores folded to dashes, as vLLM folds them).
bool engine_knows(const options::EngineTable& t, std::string flag) {
  const size_t dot = flag.find('.');
  std::replace(flag.begin(), dot == std::string::npos ? flag.end() : flag.begin() + static_cast<long>(dot), '_', '-');
  return options::resolve_flag(t, flag, t.all).accepted.any();
}

}  // namespace

Status ServeCollector::finish() {
  std::vector<PendingOptions> pending = std::move(option_lists_);
  option_lists_.clear();
  if (!plans_.empty()) return Ok{};
  for (const auto& p : pending)
    if (auto st = option_list(p.command, p.context, p.reasons); !st) return st;
  return Ok{};
}

Status ServeCollector::option_list(const ShellCommand& c, const DeployInfo& context,
                                   const std::map<std::string, std::string>& reasons) {
  const auto& words = c.words;
  std::vector<std::string> names;
  for (const auto& w : words)
    if (w.kind == ShellWord::word && w.text.size() > 1 && w.text[0] == '-' &&
        !std::isdigit(static_cast<unsigned char>(w.text[1]))) {
      names.push_back(w.text.substr(0, w.text.find('=')));
    }
  std::string engine = src_->options.engine;
  std::string why;
  if (engine.empty()) {
    auto vllm = options::engine_table("vllm");
    auto sglang = options::engine_table("sglang");
    if (!vllm || !sglang || !*vllm || !*sglang) return Ok{};
    size_t v = 0, s = 0;
    for (const auto& n : names) {
      v += engine_knows(**vllm, n);
      s += engine_knows(**sglang, n);
    }
    if (v == names.size() && s < names.size())
      engine = "vllm";
    else if (s == names.size() && v < names.size())
      engine = "sglang";
    const std::string at = fmt::format("line {}", loc(words[0].start).line);
    if (engine.empty()) {
      notes_.push_back(
          {"info",
           v == names.size()
               ? fmt::format("{} lists serve options without a command, and every one of them is both a "
                             "vLLM and an SGLang option: pass --engine vllm or --engine sglang to read them",
                             at)
               : fmt::format("{} lists options without a command, which no single engine takes all of "
                             "({} of {} are vLLM options, {} SGLang options): not read",
                             at, v, names.size(), s),
           loc(words[0].start)});
      return Ok{};
    }
    why = fmt::format("every option name is {}'s and not all are {}'s", engine == "vllm" ? "vLLM" : "SGLang",
                      engine == "vllm" ? "SGLang" : "vLLM");
  } else {
    why = "--engine " + engine;
  }
  // The command the options belong to, in front of them (no characters of the file).
  std::vector<ShellWord> full;
  auto synthetic = [&](const char* text) {
    ShellWord w = words[0];
    w.text = text;
    w.offsets.assign(w.text.size(), static_cast<uint32_t>(words[0].start));
    w.end = w.start;
    w.unquoted_prefix = w.text.size();
    full.push_back(std::move(w));
  };
  if (engine == "vllm") {
    synthetic("vllm");
    synthetic("serve");
  } else {
    synthetic("python");
    synthetic("-m");
    synthetic("sglang.launch_server");
  }
  full.insert(full.end(), words.begin(), words.end());
  ShellCommand cmd = c;
  cmd.words = full;
  const size_t before = plans_.size();
  if (auto st = serve(full, 0, cmd, context, reasons); !st) return st;
  for (size_t i = before; i < plans_.size(); ++i)
    plans_[i].notes.insert(
        plans_[i].notes.begin(),
        {"info",
         fmt::format("these are {} serve options without a command ({}): read as `{}` arguments; the "
                     "model is not given here (pass --model DIR, or name it in the file)",
                     engine == "vllm" ? "vLLM" : "SGLang", why,
                     engine == "vllm" ? "vllm serve" : "python -m sglang.launch_server"),
         loc(words[0].start)});
  return Ok{};
}

// Reads SRC's text as a shell would run it, every command going to COL (which starts with the
// variables of the environment and --env). START begins the run: ShellReader::run for a file's
// text, run_argv for a command line. The reader's own notes are appended to NOTES.
Status run_shell(ServeCollector& col, const CollectorSource& src,
                 const std::function<Status(ShellReader&, const std::function<Status(const ShellCommand&)>&)>& start,
                 std::vector<ReaderNote>& notes) {
  ShellOptions opts;
  opts.vars = col.base_vars();
  const auto index = src.index;
  ShellReader shell(
      src.text, [index](size_t off) { return index->at(off); }, std::move(opts));
  DeployInfo none;
  Status st = start(shell, [&](const ShellCommand& c) { return col.on_command(c, none, shell.reasons()); });
  for (auto& n : shell.notes()) notes.push_back(std::move(n));
  return st;
}

Expected<ServingFile> read_script_text(std::shared_ptr<const CollectorSource> src) {
  ServeCollector col(src);
  ServingFile out;
  Status st = run_shell(
      col, *src, [](ShellReader& shell, const auto& on) { return shell.run(on); }, out.notes);
  if (!st) return st.error();
  if (auto fin = col.finish(); !fin) return fin.error();
  out.path = src->path;
  out.plans = std::move(col.plans());
  for (auto& n : col.notes()) out.notes.push_back(std::move(n));
  if (!out.plans.empty()) {  // notes about the script as a whole go to every plan
    for (auto& p : out.plans) p.notes.insert(p.notes.begin(), out.notes.begin(), out.notes.end());
  }
  return out;
}

Expected<ParsedServing> read_command_argv(const std::vector<std::string>& argv, const ReadOptions& options) {
  auto src = std::make_shared<CollectorSource>();
  src->path = "<command line>";
  src->from_file = false;
  src->options = options;
  std::vector<ShellWord> words;
  for (const std::string& arg : argv) {
    if (!src->text.empty()) src->text += ' ';
    ShellWord w;
    w.text = arg;
    w.start = src->text.size();
    for (size_t i = 0; i < arg.size(); ++i) w.offsets.push_back(static_cast<uint32_t>(src->text.size() + i));
    w.end = w.start + arg.size();
    w.unquoted_prefix = arg.size();
    src->text += arg;
    words.push_back(std::move(w));
  }
  if (src->text.size() > kMaxInputBytes) return input_error("command line is too long", SourceLocation{src->path});
  src->index = std::make_shared<LineIndex>(src->path, src->text);
  if (auto st = check_text(*src->index, src->text); !st) return st.error();
  // `NAME=VALUE vllm serve ...` as argv: the assignments are the command's environment, as a
  // shell would make them (read through `env NAME=VALUE ...`).
  if (!words.empty()) {
    const std::string& t = words.front().text;
    const size_t eq = t.find('=');
    if (eq != std::string::npos && eq > 0 && shell_name_start(t[0]) &&
        std::all_of(t.begin(), t.begin() + static_cast<long>(eq), [](char c) { return shell_name_char(c); })) {
      ShellWord env = words.front();
      env.text = "env";
      env.offsets.assign(3, static_cast<uint32_t>(env.start));
      env.end = env.start;
      words.insert(words.begin(), std::move(env));
    }
  }
  ServeCollector col(src);
  std::vector<ReaderNote> notes;  // the plan's own notes carry what matters on a command line
  Status st = run_shell(
      col, *src, [&](ShellReader& shell, const auto& on) { return shell.run_argv(std::move(words), on); }, notes);
  if (!st) return st.error();
  if (col.plans().empty())
    return input_error(
        "no serve command found: expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server "
        "...`, `python -m sglang.launch_server ...` or `sglang serve ...`",
        SourceLocation{src->path});
  ParsedServing p = std::move(col.plans().front());
  p.server.clear();
  return p;
}

}  // namespace specprobe::serving
