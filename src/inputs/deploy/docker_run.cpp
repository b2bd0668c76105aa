// Containers: `docker run` / `podman run` / `nerdctl run` in scripts (options, image, GPUs,
// environment, entrypoint, the command after the image), and a container's command as compose
// and Kubernetes give it. Serving images whose entrypoint is the server (vllm/vllm-openai runs
// `vllm serve` with the arguments after the image) are read as that command.
#include <filesystem>
#include <fstream>
#include <set>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/paths.hpp"
#include "inputs/forms.hpp"

namespace fs = std::filesystem;

namespace specprobe::serving {
namespace {

// Long options of docker/podman/nerdctl run that take no value.
const std::set<std::string, std::less<>> kRunFlags = {"detach",
                                                      "interactive",
                                                      "tty",
                                                      "rm",
                                                      "privileged",
                                                      "init",
                                                      "publish-all",
                                                      "read-only",
                                                      "no-healthcheck",
                                                      "oom-kill-disable",
                                                      "help",
                                                      "quiet",
                                                      "replace",
                                                      "rootfs",
                                                      "no-hosts",
                                                      "tls-verify",
                                                      "http-proxy",
                                                      "disable-content-trust",
                                                      "sig-proxy",
                                                      "read-only-tmpfs",
                                                      "env-host",
                                                      "no-hostname"};

std::string image_repository(std::string_view image) {
  std::string s(image);
  if (const size_t at = s.find('@'); at != std::string::npos) s.resize(at);
  const size_t slash = s.rfind('/');
  const size_t colon = s.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) s.resize(colon);
  return ascii_lower(s);
}

// The image's own entrypoint starts the vLLM OpenAI server (`vllm serve`).
bool vllm_entrypoint_image(std::string_view image) {
  const std::string repo = image_repository(image);
  const std::string last = repo.substr(repo.rfind('/') == std::string::npos ? 0 : repo.rfind('/') + 1);
  return last.rfind("vllm-openai", 0) == 0 || last == "vllm-tpu" || last == "vllm-cpu" ||
         last.rfind("vllm-openai-", 0) == 0;
}

// A vLLM image by its name (locally built ones included): vllm-rtx5090, vllm-cpu-env ...
bool vllm_named_image(std::string_view image) {
  const std::string repo = image_repository(image);
  return repo.find("vllm") != std::string::npos && repo.find("sglang") == std::string::npos;
}

// A word that names a program (not an engine argument): the first word of a container command.
bool program_word(const std::string& w) {
  if (w.empty() || w[0] == '-') return false;
  static const std::set<std::string, std::less<>> kPrograms = {"python", "python3", "vllm", "sglang",   "sh",   "bash",
                                                               "uv",     "uvicorn", "ray",  "torchrun", "exec", "env"};
  const std::string b = w.substr(w.rfind('/') == std::string::npos ? 0 : w.rfind('/') + 1);
  if (kPrograms.count(b) || b.rfind("python3.", 0) == 0) return true;
  return w[0] == '/' && (w.size() > 3 && (w.substr(w.size() - 3) == ".sh" || w.find("/bin/") != std::string::npos));
}

// `<program> serve ...` with a program of its own (vllm-omni, ollama): another CLI's serve
// subcommand, which a locally built image named after vLLM runs as its command, not arguments to
// `vllm serve` (a model id has a '/' or is a path; an option starts with '-').
bool other_serve_cli(const std::vector<ShellWord>& argv) {
  if (argv.size() < 2 || argv[1].text != "serve") return false;
  const std::string& w = argv[0].text;
  return !w.empty() && w[0] != '-' && w.find('/') == std::string::npos && w.find('.') == std::string::npos &&
         w != "serve";
}

bool script_path(const std::string& w) { return w.size() > 3 && w.substr(w.size() - 3) == ".sh"; }

ShellWord synthetic(const std::string& text, const ShellWord& at) {
  ShellWord w;
  w.text = text;
  w.start = at.start;
  w.end = at.end;
  w.offsets.assign(text.size(), static_cast<uint32_t>(at.start));
  w.unquoted_prefix = text.size();
  return w;
}

// --gpus all | N | "device=0,1" | device=GPU-uuid
Json gpu_request(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  if (has_unresolved(v)) return nullptr;
  if (v == "all") return "all";
  if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) return std::stoll(v.substr(0, 9));
  if (const size_t d = v.find("device="); d != std::string::npos) {
    std::string list = v.substr(d + 7);
    if (const size_t q = list.find_first_of("\" "); q != std::string::npos) list.resize(q);
    if (list.empty()) return nullptr;
    return static_cast<long long>(std::count(list.begin(), list.end(), ',') + 1);
  }
  if (const size_t c = v.find("count="); c != std::string::npos) return gpu_request(v.substr(c + 6));
  return nullptr;
}

struct RunArgs {
  size_t image = std::string::npos;
  std::vector<ShellWord> entrypoint;
  bool entrypoint_given = false;
  Json gpus;
  SourceLocation gpus_where;
  long long cdi_gpus = 0;
  std::vector<std::pair<std::string, EnvSetting>> env;
  bool interactive = false, tty = false;
};

class RunParser {
 public:
  RunParser(const ServeCollector& col, const std::vector<ShellWord>& words, const ShellVars* vars, DeployInfo& info)
      : col_(col), w_(words), vars_(vars), info_(info) {}

  RunArgs parse(size_t i) {
    RunArgs a;
    while (i < w_.size()) {
      const std::string& t = w_[i].text;
      if (t == "--") {
        ++i;
        break;
      }
      if (t.size() < 2 || t[0] != '-') break;
      i = t[1] == '-' ? long_option(a, i) : short_option(a, i);
    }
    if (i < w_.size()) a.image = i;
    return a;
  }

 private:
  size_t long_option(RunArgs& a, size_t i) {
    const std::string& t = w_[i].text;
    const size_t eq = t.find('=');
    const std::string name = t.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq == std::string::npos && kRunFlags.count(name)) {
      a.interactive |= name == "interactive";
      a.tty |= name == "tty";
      return i + 1;
    }
    const bool attached = eq != std::string::npos;
    if (!attached && i + 1 >= w_.size()) return i + 1;
    const ShellWord& vw = attached ? w_[i] : w_[i + 1];
    const std::string value = attached ? t.substr(eq + 1) : vw.text;
    apply(a, name, value, vw);
    return i + (attached ? 1 : 2);
  }

  size_t short_option(RunArgs& a, size_t i) {
    const std::string& t = w_[i].text;
    for (size_t k = 1; k < t.size(); ++k) {
      const char c = t[k];
      if (c == 'i' || c == 't' || c == 'd' || c == 'P' || c == 'q') {
        a.interactive |= c == 'i';
        a.tty |= c == 't';
        continue;
      }
      const std::string name = c == 'e' ? "env" : std::string(1, c);
      if (k + 1 < t.size()) {
        apply(a, name, t.substr(k + 1 + (t[k + 1] == '=' ? 1 : 0)), w_[i]);
        return i + 1;
      }
      if (i + 1 < w_.size()) apply(a, name, w_[i + 1].text, w_[i + 1]);
      return i + 2;
    }
    return i + 1;
  }

  void apply(RunArgs& a, const std::string& name, const std::string& value, const ShellWord& at) {
    const SourceLocation where = col_.loc(at.start);
    if (name == "gpus") {
      a.gpus = gpu_request(value);
      a.gpus_where = where;
      if (a.gpus.is_null())
        info_.notes.push_back(
            {"info", fmt::format("--gpus {}: the GPU count is not known", show_unresolved(value)), where});
    } else if (name == "device") {
      if (value.rfind("nvidia.com/gpu=", 0) == 0 || value.rfind("amd.com/gpu=", 0) == 0) {
        const std::string which = value.substr(value.find('=') + 1);
        if (which == "all")
          a.gpus = "all";
        else if (!a.gpus.is_string())
          a.gpus = ++a.cdi_gpus;
        a.gpus_where = where;
      }
    } else if (name == "env") {
      env_setting(a, value, where);
    } else if (name == "env-file") {
      env_file(a, value, where);
    } else if (name == "entrypoint") {
      a.entrypoint_given = true;
      a.entrypoint.clear();
      if (!value.empty()) a.entrypoint.push_back(at.text == value ? at : synthetic(value, at));
    }
  }

  void env_setting(RunArgs& a, const std::string& kv, const SourceLocation& where) {
    const size_t eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) {
      value = kv.substr(eq + 1);
    } else if (vars_ && vars_->count(name)) {  // -e NAME: passed through from the host
      value = vars_->at(name).text;
    } else {
      value = unresolved_mark(name);
    }
    set_env(a.env, name, {value, where});
  }

  static void set_env(std::vector<std::pair<std::string, EnvSetting>>& env, const std::string& name, EnvSetting s) {
    for (auto& [n, v] : env)
      if (n == name) {
        v = std::move(s);
        return;
      }
    env.emplace_back(name, std::move(s));
  }

  // --env-file FILE: read when it sits next to the deploy file (or at its path), else noted. From a
  // deploy file, only a file inside that file's directory tree (links resolved) is read: a file
  // under review may name any local file (SECURITY.md).
  void env_file(RunArgs& a, const std::string& file, const SourceLocation& where) {
    std::vector<fs::path> candidates;
    if (col_.source().from_file) candidates.push_back(fs::path(col_.source().path).parent_path() / file);
    candidates.push_back(fs::path(file));
    std::error_code ec;
    for (const auto& p : candidates) {
      if (has_unresolved(file) || !fs::is_regular_file(p, ec) || fs::file_size(p, ec) > (1u << 20)) continue;
      if (col_.source().from_file && !inside_tree(p, fs::path(col_.source().path).parent_path())) continue;
      std::ifstream in(p);
      std::string line;
      int n = 0;
      while (std::getline(in, line) && ++n < 10000) {
        if (line.empty() || line[0] == '#' || line.find('=') == std::string::npos) continue;
        if (line.rfind("export ", 0) == 0) line = line.substr(7);
        std::string value = line.substr(line.find('=') + 1);
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
          value = value.substr(1, value.size() - 2);
        set_env(a.env, line.substr(0, line.find('=')), {value, SourceLocation{p.string(), n, 1}});
      }
      info_.notes.push_back({"info", fmt::format("read the environment from the env file {}", p.string()), where});
      return;
    }
    info_.notes.push_back(
        {"info",
         fmt::format("env file {} is not next to the deploy file: the variables it sets are not known "
                     "here",
                     excerpt_name(show_unresolved(file))),
         where});
  }

  const ServeCollector& col_;
  const std::vector<ShellWord>& w_;
  const ShellVars* vars_;
  DeployInfo& info_;
};

// The image's engine version (and its why) into INFO.
void image_version(DeployInfo& info) {
  const EngineVersion v = image_engine_version(info.image);
  info.engine_version = v.version;
  info.engine_version_engine = v.engine;
  info.engine_version_source = v.why;
  info.engine_version_where = info.image_where;
}

}  // namespace

Status ServeCollector::container_run(const ShellCommand& c, size_t at, const DeployInfo& context) {
  const auto& words = c.words;
  DeployInfo info = context;
  info.form = InputForm::docker_run;
  info.form_set = true;
  const size_t opts = at + (words[at + 1].text == "container" ? 3 : 2);
  RunParser parser(*this, words, c.vars, info);
  RunArgs a = parser.parse(opts);
  if (a.image == std::string::npos) {
    notes_.push_back({"warning", fmt::format("`{} run` without an image: nothing would start", words[at].text),
                      loc(words[at].start)});
    return Ok{};
  }
  const ShellWord& image = words[a.image];
  if (image.text.size() > 1 && image.text[0] == '-') {
    notes_.push_back({"warning", "no image before the command arguments", loc(image.start)});
  }
  info.image = image.text;
  info.image_where = loc(image.start);
  info.image_offset = image.start;
  if (info.server.empty()) info.server = fmt::format("{} run at line {}", words[at].text, loc(words[at].start).line);
  image_version(info);
  if (!a.gpus.is_null()) {
    info.gpus = a.gpus;
    info.gpus_where = a.gpus_where;
  }
  info.env = a.env;  // the host's VAR=x prefixes reach docker, not the container
  std::vector<ShellWord> argv = a.entrypoint;
  argv.insert(argv.end(), words.begin() + static_cast<long>(a.image + 1), words.end());
  if (argv.empty() && !a.entrypoint_given && a.interactive && a.tty) {
    notes_.push_back(
        {"info",
         fmt::format("`{} run -it {}` with no command: an interactive container; no server is started here",
                     words[at].text, image.text),
         loc(words[at].start)});
    return Ok{};
  }
  return read_container(std::move(argv), std::move(info), a.entrypoint_given, a.interactive && a.tty);
}

Status ServeCollector::read_container(std::vector<ShellWord> argv, DeployInfo context, bool entrypoint_given,
                                      bool interactive) {
  const size_t before = plans_.size();
  const std::string image = show_unresolved(context.image);
  const ShellWord at = argv.empty() ? ShellWord{} : argv.front();
  auto implied = [&](std::vector<ShellWord> args, const std::string& why) -> Status {
    ShellWord anchor = at;
    if (argv.empty()) anchor.start = anchor.end = context.image_offset;
    std::vector<ShellWord> words{synthetic("vllm", anchor), synthetic("serve", anchor)};
    if (!args.empty() && args.front().text == "--model") {  // older images ran the api_server module
      words = {synthetic("python3", anchor), synthetic("-m", anchor),
               synthetic("vllm.entrypoints.openai.api_server", anchor)};
    }
    words.insert(words.end(), args.begin(), args.end());
    ShellCommand c;
    c.words = std::move(words);
    notes_.push_back({"info", why, context.image_where});
    return on_command(c, context, {});
  };
  if (!argv.empty()) {
    ShellOptions opts;
    opts.vars = base_vars();
    for (const auto& [k, setting] : context.env) {
      ShellValue v;
      v.text = setting.value;
      v.exported = true;
      v.origin = "container";
      opts.vars[k] = std::move(v);
    }
    const auto index = src_->index;
    ShellReader shell(
        src_->text, [index](size_t off) { return index->at(off); }, std::move(opts));
    DeployInfo inner = context;
    inner.env.clear();  // already in the shell's exported variables
    Status st = shell.run_argv(argv, [&](const ShellCommand& c) { return on_command(c, inner, shell.reasons()); });
    if (!st) return st;
    for (auto& n : shell.notes()) notes_.push_back(std::move(n));
    // The container's environment reached the shell as variables without a place in the file:
    // its env.* facts are located at the -e / environment entry.
    for (size_t k = before; k < plans_.size(); ++k)
      for (const auto& [name, setting] : context.env)
        if (auto it = plans_[k].locations.find("env." + name);
            it != plans_[k].locations.end() && it->second.file.empty())
          it->second = setting.where;
    if (plans_.size() > before) return Ok{};
  }
  const bool vllm_image =
      vllm_entrypoint_image(context.image) || (vllm_named_image(context.image) && !entrypoint_given);
  // -it matters only without a command: arguments after the image go to its entrypoint either way.
  if (!entrypoint_given && vllm_image && (!interactive || !argv.empty()) &&
      (argv.empty() || !(program_word(argv.front().text) || other_serve_cli(argv))))
    return implied(std::move(argv), fmt::format("the image {} runs `vllm serve` with the arguments after it", image));
  const bool external =
      !argv.empty() && (script_path(argv.front().text) ||
                        (argv.size() > 1 && script_path(argv[1].text) && program_word(argv.front().text)));
  if (vllm_named_image(context.image) && external && !interactive) {
    notes_.push_back(
        {"warning",
         fmt::format("the container runs {}, which is not part of this file: the server's settings are "
                     "not known here",
                     argv.size() > 1 && !script_path(argv.front().text) ? argv[1].text : argv.front().text),
         loc(at.start)});
    return implied(
        {}, fmt::format("the image {} is a vLLM image; its server's options come from a script not shown here", image));
  }
  if (!argv.empty() && plans_.size() == before &&
      (vllm_named_image(context.image) || image.find("sglang") != std::string::npos))
    notes_.push_back({"info",
                      fmt::format("the container's command `{}` starts no vLLM/SGLang server that specprobe can see",
                                  argv.front().text),
                      loc(at.start)});
  return Ok{};
}

}  // namespace specprobe::serving
