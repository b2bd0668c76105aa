// Engine environments in specprobe's cache (see engine_envs.hpp).
#include "probes/engine_envs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.hpp"
#include "common/output_file.hpp"
#include "common/run_cleanup.hpp"
#include "inputs/versions/installed_libs.hpp"
#include "probes/answer_cache.hpp"

namespace fs = std::filesystem;

namespace specprobe::probes {
namespace {

constexpr const char* kStamp = ".specprobe-engine.json";

// The first executable NAME on PATH ("" when none).
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string p = path;
  for (size_t start = 0; start <= p.size();) {
    const size_t end = std::min(p.find(':', start), p.size());
    const std::string dir = p.substr(start, end - start);
    if (!dir.empty()) {
      const std::string f = dir + "/" + name;
      if (access(f.c_str(), X_OK) == 0 && fs::is_regular_file(f)) return f;
    }
    start = end + 1;
  }
  return {};
}

// Runs ARGV with stdout and stderr appended to LOG, in a process group of its own (killed on
// timeout or when specprobe is interrupted). The exit status, or -1 when it could not run or timed
// out (WHY says which).
int run_logged(const std::vector<std::string>& argv, const std::string& log, double timeout_s, std::string& why) {
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv;
  for (auto& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = "cannot write the log " + log;
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fd);
    why = "fork failed";
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  ::close(fd);
  setpgid(pid, pid);
  track_child_group(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill_group_and_wait(pid, 10);
      waitpid(pid, &status, 0);
      untrack_child_group(pid);
      why = fmt::format("timed out after {:.0f} s", timeout_s);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  untrack_child_group(pid);
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 127) why = fmt::format("{} could not be run", argv[0]);
    return WEXITSTATUS(status);
  }
  why = fmt::format("killed by signal {}", WTERMSIG(status));
  return -1;
}

std::string site_packages_of(const std::string& venv) {
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"})
    for (fs::directory_iterator it(fs::path(venv) / lib, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind("python", 0) == 0 && fs::is_directory(it->path() / "site-packages"))
        return (it->path() / "site-packages").string();
  return {};
}

}  // namespace

std::string engine_envs_dir(const std::string& override_dir) { return user_cache_dir("engines", override_dir); }

std::string engine_env_name(const std::string& engine, const std::string& version) { return engine + "-" + version; }

std::optional<std::pair<std::string, std::string>> engine_requirement(const std::string& requirement) {
  const size_t eq = requirement.find("==");
  if (eq == std::string::npos) return std::nullopt;
  const std::string engine = requirement.substr(0, eq), version = requirement.substr(eq + 2);
  if (engine != "vllm" && engine != "sglang") return std::nullopt;
  if (version.empty() || version.find_first_not_of("0123456789.abcdefghijklmnopqrstuvwxyz+-_") != std::string::npos ||
      version.find("..") != std::string::npos || version.front() == '.')
    return std::nullopt;
  return std::make_pair(engine, version);
}

std::vector<EngineEnv> list_engine_envs(const std::string& dir) {
  std::vector<EngineEnv> out;
  std::error_code ec;
  if (dir.empty()) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path d = it->path();
    if (!fs::is_directory(d) || d.filename().string().find(".partial") != std::string::npos) continue;
    std::ifstream f(d / kStamp);
    if (!f) continue;
    const Json stamp = Json::parse(f, nullptr, false);
    if (!stamp.is_object() || stamp.value("schema", "") != kEngineEnvSchema) continue;
    EngineEnv e;
    e.name = d.filename().string();
    e.engine = stamp.value("engine", "");
    e.version = stamp.value("version", "");
    e.dir = d.string();
    e.python = (d / "bin" / "python").string();
    e.stamp = stamp;
    if (e.name != engine_env_name(e.engine, e.version) || access(e.python.c_str(), X_OK) != 0) continue;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const EngineEnv& a, const EngineEnv& b) { return a.name < b.name; });
  return out;
}

std::optional<EngineEnv> find_engine_env(const std::string& dir, const std::string& engine,
                                         const std::string& version) {
  for (auto& e : list_engine_envs(dir))
    if (e.engine == engine && e.version == version) return e;
  return std::nullopt;
}

Expected<EngineEnv> install_engine_env(const std::vector<std::string>& requirements, const EngineInstallOptions& opts) {
  if (requirements.empty())
    return usage_error("engines install needs the engine pinned: vllm==VERSION or sglang==VERSION");
  const auto req = engine_requirement(requirements.front());
  if (!req)
    return usage_error(
        fmt::format("engines install: '{}' is not an engine pinned to a release (vllm==0.29.0, sglang==0.5.23)",
                    requirements.front()));
  const auto& [engine, version] = *req;
  if (opts.dir.empty())
    return environment_error("no cache directory for engine environments (set XDG_CACHE_HOME or HOME)");
  std::error_code ec;
  fs::create_directories(opts.dir, ec);
  if (ec) return environment_error(fmt::format("cannot create {}: {}", opts.dir, ec.message()));
  const std::string name = engine_env_name(engine, version);
  const std::string final_dir = (fs::path(opts.dir) / name).string();
  const std::string work = fmt::format("{}.partial-{}", final_dir, getpid());
  const std::string log = (fs::path(opts.dir) / (name + ".install.log")).string();
  fs::remove_all(work, ec);
  std::ofstream(log, std::ios::trunc) << fmt::format("specprobe engines install {} ({})\n", name, utc_now_iso());
  auto say = [&](const std::string& s) {
    if (opts.log) opts.log(s);
  };

  std::string uv;
  if (opts.installer == "uv" || opts.installer == "auto") {
    const char* env_uv = std::getenv("SPECPROBE_UV");
    uv = env_uv && *env_uv ? std::string(env_uv) : on_path("uv");
    if (uv.empty() && opts.installer == "uv")
      return environment_error("engines install --installer uv: uv is not on the PATH");
  }
  std::vector<std::string> index_args;
  for (const auto& l : opts.find_links) index_args.insert(index_args.end(), {"--find-links", l});
  if (!opts.index_url.empty()) index_args.insert(index_args.end(), {"--index-url", opts.index_url});
  if (opts.no_index) index_args.push_back("--no-index");

  const auto t0 = std::chrono::steady_clock::now();
  auto left = [&] {
    return std::max(1.0, opts.timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  auto fail = [&](const std::string& what, const std::string& why) -> Error {
    fs::remove_all(work, ec);
    return environment_error(
        fmt::format("engines install {}: {} failed{}{} (log: {})", name, what, why.empty() ? "" : ": ", why, log));
  };
  std::string why;
  std::string installer;
  if (!uv.empty()) {
    installer = "uv";
    say(fmt::format("creating {} with uv ({})", work, uv));
    int rc = run_logged({uv, "venv", "--quiet", "--python", opts.python, work}, log, left(), why);
    if (rc != 0) return fail("uv venv", why.empty() ? fmt::format("exit {}", rc) : why);
    std::vector<std::string> argv = {uv, "pip", "install", "--python", work + "/bin/python"};
    argv.insert(argv.end(), index_args.begin(), index_args.end());
    argv.insert(argv.end(), requirements.begin(), requirements.end());
    say("installing " + requirements.front() + " (uv pip install)");
    rc = run_logged(argv, log, left(), why);
    if (rc != 0) return fail("uv pip install", why.empty() ? fmt::format("exit {}", rc) : why);
  } else {
    installer = "pip";
    say(fmt::format("creating {} ({} -m venv)", work, opts.python));
    int rc = run_logged({opts.python, "-m", "venv", work}, log, left(), why);
    if (rc != 0) return fail(opts.python + " -m venv", why.empty() ? fmt::format("exit {}", rc) : why);
    std::vector<std::string> argv = {work + "/bin/python", "-m", "pip", "install", "--disable-pip-version-check"};
    argv.insert(argv.end(), index_args.begin(), index_args.end());
    argv.insert(argv.end(), requirements.begin(), requirements.end());
    say("installing " + requirements.front() + " (pip install)");
    rc = run_logged(argv, log, left(), why);
    if (rc != 0) return fail("pip install", why.empty() ? fmt::format("exit {}", rc) : why);
  }
  // The engine at the asked release must be what the venv imports.
  const std::string site = site_packages_of(work);
  std::string got;
  if (auto libs = read_site_packages(site))
    for (const auto& l : *libs)
      if (l.key == engine) got = l.version;
  if (got != version)
    return fail("the check of the result", got.empty() ? engine + " is not in the new environment"
                                                       : fmt::format("it holds {} {}, not {}", engine, got, version));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Json stamp = {{"schema", kEngineEnvSchema},
                {"engine", engine},
                {"version", version},
                {"requirements", requirements},
                {"installer", installer},
                {"python", opts.python},
                {"installed_at", utc_now_iso()},
                {"install_s", std::round(secs * 10) / 10}};
  if (auto st = write_file_atomic((fs::path(work) / kStamp).string(), stamp.dump(2) + "\n"); !st)
    return fail("writing the stamp", st.error().message);
  fs::remove_all(final_dir, ec);
  fs::rename(work, final_dir, ec);
  if (ec) return fail("renaming it into place", ec.message());
  say(fmt::format("{} ready in {:.1f} s: {}", name, secs, final_dir));
  auto made = find_engine_env(opts.dir, engine, version);
  if (!made)
    return environment_error(fmt::format("engines install {}: the environment is not usable after the install", name));
  return *made;
}

Status remove_engine_env(const std::string& dir, const std::string& name) {
  for (const auto& e : list_engine_envs(dir))
    if (e.name == name) {
      std::error_code ec;
      fs::remove_all(e.dir, ec);
      if (ec) return environment_error(fmt::format("cannot remove {}: {}", e.dir, ec.message()));
      fs::remove(fs::path(dir) / (name + ".install.log"), ec);
      return Ok{};
    }
  return input_error(fmt::format("no engine environment '{}' in {} (see `specprobe engines list`)", name, dir));
}

}  // namespace specprobe::probes
