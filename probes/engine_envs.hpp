// Engine environments: one venv per engine release in specprobe's cache, so that the engine check
// asks the release the deploy runs (issue 50), not whatever --python happens to have.
//
//   $XDG_CACHE_HOME/specprobe/engines/vllm-0.29.0/        (else ~/.cache/specprobe/engines/...)
//     bin/python, lib/pythonX.Y/site-packages/...           a venv with vllm==0.29.0 and its pins
//     .specprobe-engine.json                                 what it holds and how it was made
//
// `specprobe engines install vllm==0.29.0` makes one from PyPI (or --find-links / --index-url):
// with `uv` when it is on the PATH (much faster, and it shares uv's wheel cache), else `python -m
// venv` + pip. The venv is built under a temporary name and renamed when the engine at the asked
// version is in it, so a half-built environment is never used. `check --engine-env auto` picks the
// environment of the release the deploy names (an image tag, a pin, --lib); a missing one is a
// note with the command that makes it (`--install-engines` makes it then and there).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe::probes {

inline constexpr const char* kEngineEnvSchema = "specprobe-engine-env/1";

struct EngineEnv {
  std::string name;             // "vllm-0.29.0"
  std::string engine;           // vllm | sglang
  std::string version;          // 0.29.0
  std::string dir;              // the venv
  std::string python;           // dir/bin/python
  Json stamp = Json::object();  // .specprobe-engine.json
};

// The directory that holds them ("" without XDG_CACHE_HOME and HOME). OVERRIDE wins when given.
std::string engine_envs_dir(const std::string& override_dir = {});

// "vllm-0.29.0": the environment's name for ENGINE at VERSION.
std::string engine_env_name(const std::string& engine, const std::string& version);

// The complete environments under DIR (a stamp, and bin/python), by name.
std::vector<EngineEnv> list_engine_envs(const std::string& dir);
std::optional<EngineEnv> find_engine_env(const std::string& dir, const std::string& engine, const std::string& version);

struct EngineInstallOptions {
  std::string dir;                              // engine_envs_dir()
  std::string python = "python3";               // the interpreter the venv is made from
  std::vector<std::string> find_links;          // pip/uv --find-links
  std::string index_url;                        // pip/uv --index-url
  bool no_index = false;                        // pip/uv --no-index
  double timeout_s = 3600;                      // venv + install
  std::string installer = "auto";               // auto (uv when on PATH), uv, pip
  std::function<void(const std::string&)> log;  // progress lines
};

// REQUIREMENTS: the engine first, pinned ("vllm==0.29.0", "sglang==0.5.23"), then anything else the
// environment needs ("cuda-python>=13"). Replaces an environment of the same name. Input error for a
// first requirement that is not vllm/sglang==VERSION; environment error (3) when the venv or the
// install fails (the installer's log is named) or the installed version is not the one asked for.
Expected<EngineEnv> install_engine_env(const std::vector<std::string>& requirements, const EngineInstallOptions& opts);

// Removes the environment NAME ("vllm-0.29.0") under DIR; input error when there is none.
Status remove_engine_env(const std::string& dir, const std::string& name);

// The engine and version of a requirement "vllm==0.29.0" (nullopt when it is not one).
std::optional<std::pair<std::string, std::string>> engine_requirement(const std::string& requirement);

}  // namespace specprobe::probes
