// `specprobe engines` (see engines.hpp).
#include "cli/engines.hpp"

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "common/json.hpp"
#include "probes/engine_envs.hpp"

namespace specprobe {

CLI::App* add_engines_command(CLI::App& app, EnginesOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "engines",
      "engine environments for the engine check: one venv per vLLM / SGLang release (check --engine-env auto)");
  cmd->require_subcommand(1);
  cmd->add_option("--dir", o.dir, "where the environments are (default $XDG_CACHE_HOME/specprobe/engines)");
  CLI::App* list = cmd->add_subcommand("list", "list the installed engine environments");
  list->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  CLI::App* install = cmd->add_subcommand(
      "install", "make the environment of an engine release: `engines install vllm==0.29.0 [more requirements]`");
  install
      ->add_option("requirement", o.requirements,
                   "vllm==VERSION or sglang==VERSION first, then anything the environment needs")
      ->required();
  install->add_option("--python", o.python, "the interpreter the venv is made from (default python3)");
  install
      ->add_option("--find-links", o.find_links,
                   "a directory or URL of wheels (repeatable; pip's and uv's --find-links)")
      ->allow_extra_args(false);
  install->add_option("--index-url", o.index_url, "the package index (default PyPI)");
  install->add_flag("--no-index", o.no_index, "only --find-links: never ask an index");
  install
      ->add_option("--installer", o.installer, "auto (uv when it is on the PATH, else python -m venv + pip), uv, pip")
      ->check(CLI::IsMember({"auto", "uv", "pip"}));
  install->add_option("--timeout", o.timeout_s, "seconds the whole install may take (default 3600)")
      ->check(CLI::PositiveNumber);
  CLI::App* remove = cmd->add_subcommand("remove", "remove engine environments by name (vllm-0.29.0)");
  remove->add_option("name", o.names, "the environment's name, as `engines list` shows it")->required();
  return cmd;
}

int run_engines_command(const CLI::App& engines, const EnginesOptions& o) {
  const std::string dir = probes::engine_envs_dir(o.dir);
  if (dir.empty()) {
    std::fprintf(
        stderr,
        "specprobe: error: no cache directory for engine environments (set XDG_CACHE_HOME or HOME, or --dir)\n");
    return 3;
  }
  if (engines.get_subcommand("list")->parsed()) {
    const auto envs = probes::list_engine_envs(dir);
    if (o.format == "json") {
      Json list = Json::array();
      for (const auto& e : envs)
        list.push_back({{"name", e.name},
                        {"engine", e.engine},
                        {"version", e.version},
                        {"python", e.python},
                        {"installer", e.stamp.value("installer", "")},
                        {"installed_at", e.stamp.value("installed_at", "")}});
      std::printf("%s\n", Json{{"dir", dir}, {"environments", list}}.dump(2).c_str());
      return 0;
    }
    if (envs.empty())
      std::printf("no engine environments in %s (make one: specprobe engines install vllm==VERSION)\n", dir.c_str());
    for (const auto& e : envs)
      std::printf("%-20s %-7s %-10s %s (%s, %s)\n", e.name.c_str(), e.engine.c_str(), e.version.c_str(),
                  e.python.c_str(), e.stamp.value("installer", "?").c_str(),
                  e.stamp.value("installed_at", "?").c_str());
    return 0;
  }
  if (engines.get_subcommand("install")->parsed()) {
    probes::EngineInstallOptions io;
    io.dir = dir;
    io.python = o.python;
    io.find_links = o.find_links;
    io.index_url = o.index_url;
    io.no_index = o.no_index;
    io.installer = o.installer;
    io.timeout_s = o.timeout_s;
    io.log = [](const std::string& line) { std::fprintf(stderr, "specprobe: %s\n", line.c_str()); };
    auto env = probes::install_engine_env(o.requirements, io);
    if (!env) {
      std::fprintf(stderr, "specprobe: %s\n", env.error().str().c_str());
      return exit_code(env.error().kind);
    }
    std::printf("%s %s\n", env->name.c_str(), env->python.c_str());
    return 0;
  }
  if (engines.get_subcommand("remove")->parsed()) {
    int rc = 0;
    for (const auto& name : o.names)
      if (auto st = probes::remove_engine_env(dir, name); !st) {
        std::fprintf(stderr, "specprobe: %s\n", st.error().str().c_str());
        rc = exit_code(st.error().kind);
      } else {
        std::printf("removed %s\n", name.c_str());
      }
    return rc;
  }
  return 2;
}

}  // namespace specprobe
