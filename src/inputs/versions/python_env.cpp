// Discovering the deployment's Python (see versions/python_env.hpp).
#include "inputs/versions/python_env.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/isolated_runner.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace specprobe {
namespace {

// Asks the interpreter where it imports from; prints the runner protocol. Python 3.3+ (-I: 3.4+).
// Site-packages candidates are site.getsitepackages() (venv-aware, includes the base's with
// --system-site-packages), sysconfig's purelib/platlib and any other site-packages / dist-packages
// directory on sys.path (one a .pth file chains in), ordered as they appear on sys.path.
constexpr const char* kInspectCode = R"py(import json, os, site, sys, sysconfig
cand = [p for p in sys.path if os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")]
try:
    cand += list(site.getsitepackages())
except Exception:
    pass
for key in ("purelib", "platlib"):
    try:
        cand.append(sysconfig.get_paths()[key])
    except Exception:
        pass
order = {p: i for i, p in reversed(list(enumerate(sys.path)))}
seen = []
for p in sorted(cand, key=lambda p: order.get(p, len(sys.path))):
    if p not in seen:
        seen.append(p)
print("@@specprobe begin 0")
print("@@specprobe result " + json.dumps({"specprobe_python": 1, "executable": sys.executable or "",
      "prefix": sys.prefix, "base_prefix": getattr(sys, "base_prefix", sys.prefix),
      "version": "%d.%d.%d" % tuple(sys.version_info[:3]), "site_packages": seen}))
)py";

}  // namespace

std::vector<std::string> process_env() {
  std::vector<std::string> parent;
  for (char** e = environ; e && *e; ++e) parent.emplace_back(*e);
  return parent;
}

std::string clean_child_text(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.size() > 100) s = s.substr(0, 100) + "...";
  for (auto& c : s)
    if (c < 0x20 || c > 0x7e) c = '?';
  return s;
}

Expected<std::string> resolve_python(const std::string& python) {
  if (python.empty()) return usage_error("no Python given (--python PATH)");
  std::error_code ec;
  if (python.find('/') != std::string::npos) {
    if (fs::is_regular_file(python, ec) && access(python.c_str(), X_OK) == 0) return python;
    if (fs::is_directory(python, ec))
      for (const char* rel : {"bin/python3", "bin/python"})
        if (fs::is_regular_file(fs::path(python) / rel, ec)) return (fs::path(python) / rel).string();
    return input_error(fmt::format("{}: not an executable Python", python));
  }
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= p.size()) {
    const size_t colon = p.find(':', pos);
    const std::string dir = p.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (!dir.empty()) {
      const fs::path cand = fs::path(dir) / python;
      if (fs::is_regular_file(cand, ec) && access(cand.c_str(), X_OK) == 0) return cand.string();
    }
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return input_error(fmt::format("{}: not found on PATH", python));
}

std::vector<std::string> python_inspect_env(const std::vector<std::string>& parent) {
  std::vector<std::string> env;
  bool have_path = false;
  for (const auto& e : parent) {
    const std::string name = e.substr(0, e.find('='));
    if (name == "PATH" || name == "HOME" || name == "LD_LIBRARY_PATH" || name.rfind("PYENV_", 0) == 0) {
      env.push_back(e);
      have_path |= name == "PATH";
    }
  }
  if (!have_path) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  std::sort(env.begin(), env.end());
  return env;
}

Expected<PythonEnv> inspect_python(const std::string& python, double timeout_s, const std::string& env_program) {
  auto resolved = resolve_python(python);
  if (!resolved) return resolved.error();
  const std::string& py = *resolved;
  RunnerOptions ro;
  ro.timeout_s = timeout_s;
  ro.child_command = {env_program, "-i"};
  for (auto& e : python_inspect_env(process_env())) ro.child_command.push_back(e);
  ro.child_command.insert(ro.child_command.end(), {py, "-I", "-B", "-c", kInspectCode});
  const auto raw = run_isolated({Json{{"probe", "python_env"}}}, ro);
  const Json r = raw.empty() ? Json() : raw[0];
  auto fail = [&](const std::string& why) {
    return input_error(fmt::format("{}: asking the interpreter where it imports from failed: {}", py, why));
  };
  if (!r.is_object()) return fail("no answer");
  if (!r.contains("specprobe_python")) {
    // A runner record: hung, crashed, exited early (not Python 3, a broken shim) or printed garbage.
    std::string why = r.value("reason", Json()).is_string() ? r["reason"].get<std::string>() : "";
    if (why.empty()) why = "it printed no valid answer";
    if (r.contains("timeout_s")) why = fmt::format("no answer within {}", fmt::format("{:g} s", timeout_s));
    if (r.value("stderr_tail", Json()).is_string()) {
      std::string tail = r["stderr_tail"].get<std::string>();
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
      const size_t nl = tail.rfind('\n');
      if (!tail.empty()) why += ": " + clean_child_text(nl == std::string::npos ? tail : tail.substr(nl + 1));
    }
    return fail(why);
  }
  auto str = [&](const char* key) {
    return r.value(key, Json()).is_string() ? r[key].get<std::string>() : std::string();
  };
  PythonEnv env;
  env.given = py;
  env.executable = str("executable");
  env.prefix = str("prefix");
  env.base_prefix = str("base_prefix");
  env.version = str("version");
  if (env.executable.empty() || env.executable.front() != '/') return fail("sys.executable is not an absolute path");
  std::error_code ec;
  if (!fs::is_regular_file(env.executable, ec) || access(env.executable.c_str(), X_OK) != 0)
    return fail(fmt::format("sys.executable {} is not an executable file", env.executable));
  if (!r.value("site_packages", Json()).is_array()) return fail("no site-packages list");
  for (const auto& d : r["site_packages"]) {
    if (!d.is_string() || d.get<std::string>().empty() || d.get<std::string>().front() != '/') continue;
    if (fs::is_directory(d.get<std::string>(), ec)) env.site_packages.push_back(d.get<std::string>());
  }
  if (env.site_packages.empty())
    return fail(fmt::format("it reports no existing site-packages directory (sys.prefix {})", env.prefix));
  return env;
}

Expected<std::vector<std::string>> site_packages_of_python(const std::string& python) {
  std::error_code ec;
  fs::path p(python);
  if (!fs::exists(p, ec)) return input_error(fmt::format("{}: no such file or directory", python));
  fs::path prefix;
  if (fs::is_directory(p, ec)) {
    prefix = p;
  } else {
    // <prefix>/bin/python3 -> <prefix>. Symlinks are not resolved: a venv's python links to the
    // base interpreter, but the venv's own site-packages is what the server imports.
    prefix = p.parent_path().parent_path();
  }
  std::vector<std::string> out;
  for (const char* lib : {"lib", "lib64"}) {
    const fs::path libdir = prefix / lib;
    if (!fs::is_directory(libdir, ec)) continue;
    for (const auto& e : fs::directory_iterator(libdir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("python", 0) != 0) continue;
      for (const char* sub : {"site-packages", "dist-packages"}) {
        const fs::path sp = e.path() / sub;
        if (fs::is_directory(sp, ec)) out.push_back(sp.string());
      }
    }
  }
  if (fs::is_directory(prefix / "site-packages", ec)) out.push_back((prefix / "site-packages").string());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty())
    return input_error(fmt::format("{}: no site-packages directory found under {}", python, prefix.string()));
  return out;
}

Expected<PythonDiscovery> discover_python(const std::string& python) {
  PythonDiscovery d;
  auto env = inspect_python(python);
  if (env) {
    d.site_packages = env->site_packages;
    d.executable = env->executable;
    d.facts = {{"given", env->given},      {"executable", env->executable},
               {"prefix", env->prefix},    {"base_prefix", env->base_prefix},
               {"version", env->version},  {"site_packages", env->site_packages},
               {"found_by", "interpreter"}};
    return d;
  }
  auto resolved = resolve_python(python);  // "python3" is looked up on PATH
  auto sp = site_packages_of_python(resolved ? *resolved : python);
  if (!sp) return input_error(fmt::format("{} (and {})", sp.error().message, env.error().message));
  std::string list;
  for (const auto& dir : *sp) list += (list.empty() ? "" : ", ") + dir;
  d.site_packages = *sp;
  d.warning = fmt::format("{}; read site-packages from the path instead: {}", env.error().message, list);
  d.facts = {
      {"given", resolved ? *resolved : python}, {"executable", nullptr}, {"site_packages", *sp}, {"found_by", "path"}};
  return d;
}

}  // namespace specprobe
