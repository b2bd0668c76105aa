// The deployment's Python, as the interpreter itself reports it: which executable runs, which
// prefixes, and where it imports from (site-packages in sys.path order), so that shims (pyenv),
// symlinks and venvs are read as Python reads them. The one place specprobe discovers a Python:
// the installed-library reader, the stack probes and the engine adapters all use its answer.
// Runs the interpreter once in an isolated child (common/isolated_runner.hpp) with a minimal
// environment and a timeout; writes nothing (-B, no user site). No GPU.
#pragma once
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// What an interpreter says about itself (inspect_python).
struct PythonEnv {
  std::string given;                       // as passed (--python), PATH-resolved
  std::string executable;                  // sys.executable: what the adapters run
  std::string prefix, base_prefix;         // sys.prefix, sys.base_prefix (they differ in a venv)
  std::string version;                     // "3.12.3"
  std::vector<std::string> site_packages;  // existing site-packages dirs, in import (sys.path) order
};

// PATH lookup for a name without '/'; an existing path is returned as is; a prefix or venv
// directory resolves to its bin/python3. Input error when neither.
Expected<std::string> resolve_python(const std::string& python);

// The environment inspect_python gives the interpreter, from PARENT ("NAME=VALUE" entries): PATH,
// HOME, LD_LIBRARY_PATH and PYENV_* (what a pyenv shim needs), nothing else.
std::vector<std::string> python_inspect_env(const std::vector<std::string>& parent);

// The process's environment as NAME=VALUE entries.
std::vector<std::string> process_env();

// Runs PYTHON once as `env -i <python_inspect_env> PYTHON -I -B -c <code>` in an isolated child
// with a timeout, and validates its JSON answer. Input error naming PYTHON when it cannot be run,
// hangs, crashes, prints no valid answer or reports no existing site-packages directory.
Expected<PythonEnv> inspect_python(const std::string& python, double timeout_s = 30,
                                   const std::string& env_program = "/usr/bin/env");

// site-packages directories derived from the path of the Python at PATH (an interpreter, a venv's
// bin/python, or a prefix/venv directory): the fallback when the interpreter cannot be asked (a
// shim or a symlink outside its prefix defeats it). Input error naming PATH when none is found.
Expected<std::vector<std::string>> site_packages_of_python(const std::string& python);

// --python as the pipeline uses it: the interpreter's own answer, else (with a warning) the
// site-packages derived from its path.
struct PythonDiscovery {
  std::vector<std::string> site_packages;  // in import order
  std::string executable;                  // what to run adapters with (empty: not asked)
  std::string warning;                     // set when the path fallback was used
  Json facts = Json::object();             // python.* (given, executable, prefix, base_prefix,
                                           // version, site_packages, found_by: interpreter | path)
};
Expected<PythonDiscovery> discover_python(const std::string& python);

// A short, printable form of child output for messages: printable ASCII, at most 100 characters.
std::string clean_child_text(std::string s);

}  // namespace specprobe
