// --python is asked, not guessed: inspect_python runs the interpreter once (-I, clean environment,
// timeout) and takes sys.executable and site-packages from its answer. Fake interpreters (shell
// scripts) cover the protocol, the environment and failures without Python; a real venv made
// with this machine's python3, reached through a pyenv-style shim and a symlink, covers the cases
// that the old path logic got wrong; `specprobe check --python` reads versions from what the
// interpreter reported and falls back to the path, with a warning, when it cannot be asked.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "../../e2e/run_binary.hpp"
#include "inputs/versions/installed_libs.hpp"
#include "inputs/versions/python_env.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

struct PyEnvTempDir {
  fs::path path;
  PyEnvTempDir() {
    std::string t = (fs::temp_directory_path() / "specprobe-pyenv-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()));
    path = t;
  }
  ~PyEnvTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_exec(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  chmod(p.c_str(), 0755);
}

void write_dist(const fs::path& site, const std::string& dir, const std::string& name, const std::string& version) {
  fs::create_directories(site / dir);
  std::ofstream(site / dir / "METADATA") << "Metadata-Version: 2.1\nName: " << name << "\nVersion: " << version
                                         << "\n\n";
}

std::map<std::string, std::string> versions_in(const std::vector<std::string>& dirs) {
  std::map<std::string, std::string> got;
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {  // the first dir on sys.path wins
    auto libs = read_site_packages(*d);
    REQUIRE(libs.has_value());
    for (const auto& l : *libs) got[l.key] = l.version;
  }
  return got;
}

// A fake interpreter answering the inspect protocol with SITE as its only site-packages dir.
std::string fake_answer(const fs::path& exe, const fs::path& site) {
  return "echo '@@specprobe begin 0'; echo '@@specprobe result {\"specprobe_python\": 1, \"executable\": \"" +
         exe.string() +
         "\", \"prefix\": \"/fake\", \"base_prefix\": \"/usr\", \"version\": \"3.12.3\", \"site_packages\": "
         "[\"/nonexistent/site-packages\", \"" +
         site.string() + "\"]}'";
}

}  // namespace

TEST_CASE("inspect_python: runs the interpreter with -I in a clean environment and takes its answer",
          "[probes][stack][python]") {
  PyEnvTempDir t;
  const fs::path site = t.path / "real" / "lib" / "python3.12" / "site-packages";
  write_dist(site, "flashinfer_python-0.5.0.dist-info", "flashinfer-python", "0.5.0");
  const fs::path real = t.path / "real" / "bin" / "python3";
  write_exec(real, "#!/bin/sh\nexit 99\n");  // never run: only named as sys.executable
  // The "shim": records its argv and environment, then answers for the real interpreter.
  const fs::path shim = t.path / "shims" / "python3";
  write_exec(shim,
             "#!/bin/sh\necho \"$1 $2 $3|HOME=$HOME|PYENV_VERSION=$PYENV_VERSION|SECRET=$SPECPROBE_TEST_SECRET\" > " +
                 (t.path / "seen").string() + "\n" + fake_answer(real, site) + "\n");
  setenv("SPECPROBE_TEST_SECRET", "leaked", 1);
  setenv("PYENV_VERSION", "3.12.3", 1);
  auto env = inspect_python(shim.string(), 5);
  unsetenv("SPECPROBE_TEST_SECRET");
  unsetenv("PYENV_VERSION");
  REQUIRE(env.has_value());
  CHECK(env->given == shim.string());
  CHECK(env->executable == real.string());
  CHECK(env->version == "3.12.3");
  REQUIRE(env->site_packages == std::vector<std::string>{site.string()});  // the nonexistent one dropped
  CHECK(versions_in(env->site_packages).at("flashinfer") == "0.5.0");
  std::string seen;
  std::getline(std::ifstream(t.path / "seen"), seen);
  CHECK(seen.rfind("-I -B -c|", 0) == 0);
  CHECK(seen.find("HOME=" + std::string(std::getenv("HOME") ? std::getenv("HOME") : "")) != std::string::npos);
  CHECK(seen.find("PYENV_VERSION=3.12.3") != std::string::npos);
  CHECK(seen.find("SECRET=") != std::string::npos);
  CHECK(seen.find("leaked") == std::string::npos);  // only PATH, HOME, LD_LIBRARY_PATH, PYENV_* pass
}

TEST_CASE("inspect_python: failures are input errors naming the interpreter", "[probes][stack][python]") {
  PyEnvTempDir t;
  auto error_of = [&](const std::string& body, double timeout = 5) {
    const fs::path py = t.path / "bin" / "python";
    write_exec(py, "#!/bin/sh\n" + body + "\n");
    auto env = inspect_python(py.string(), timeout);
    REQUIRE_FALSE(env.has_value());
    CHECK(exit_code(env.error().kind) == 2);
    CHECK(env.error().message.find(py.string() + ": asking the interpreter") == 0);
    return env.error().message;
  };
  CHECK(error_of("echo 'Unknown option: -I' >&2; exit 2").find("Unknown option: -I") != std::string::npos);
  CHECK(error_of("echo '@@specprobe begin 0'; echo '@@specprobe result {\"executable\": '").find("unreadable") !=
        std::string::npos);
  CHECK(error_of("echo '@@specprobe begin 0'; sleep 30", 0.5).find("no answer within 0.5 s") != std::string::npos);
  CHECK(error_of(fake_answer("relative/python", t.path)).find("not an absolute path") != std::string::npos);
  CHECK(error_of(fake_answer(t.path / "bin" / "python", t.path / "missing")).find("no existing site-packages") !=
        std::string::npos);
  auto missing = inspect_python("/nonexistent/bin/python3");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("/nonexistent/bin/python3") != std::string::npos);
}

TEST_CASE("inspect_python: a venv reached through a shim and through a symlink (this machine's python3)",
          "[probes][stack][python]") {
  auto base = inspect_python("python3");
  if (!base) {
    WARN("no usable python3: " << base.error().message);
    return;
  }
  PyEnvTempDir t;
  const fs::path venv = t.path / "venv";
  const std::string make =
      base->executable + " -I -m venv --without-pip " + test::shell_quote(venv.string()) + " >/dev/null 2>&1";
  if (std::system(make.c_str()) != 0) {
    WARN("python3 -m venv failed; venv case not exercised");
    return;
  }
  const std::string mm = base->version.substr(0, base->version.rfind('.'));
  const fs::path site = venv / "lib" / ("python" + mm) / "site-packages";
  REQUIRE(fs::is_directory(site));
  write_dist(site, "flashinfer_python-0.5.0.dist-info", "flashinfer-python", "0.5.0");
  write_dist(site, "deep_gemm-2.5.0+a6b593d.dist-info", "deep_gemm", "2.5.0+a6b593d");

  // A pyenv-style shim elsewhere: a shell script that execs the venv's python.
  const fs::path shim = t.path / "shims" / "python";
  write_exec(shim, "#!/bin/sh\nexec " + test::shell_quote((venv / "bin" / "python").string()) + " \"$@\"\n");
  auto old = site_packages_of_python(shim.string());  // what the path logic made of it
  CHECK_FALSE(old.has_value());
  auto env = inspect_python(shim.string());
  REQUIRE(env.has_value());
  CHECK(env->executable == (venv / "bin" / "python").string());
  CHECK(fs::equivalent(env->prefix, venv));
  REQUIRE_FALSE(env->site_packages.empty());
  CHECK(fs::equivalent(env->site_packages.front(), site));
  auto got = versions_in(env->site_packages);
  CHECK(got["flashinfer"] == "0.5.0");
  CHECK(got["deep_gemm"] == "2.5.0+a6b593d");

  // The venv's own bin/python is a symlink (to the base interpreter): Python still finds pyvenv.cfg.
  auto direct = inspect_python((venv / "bin" / "python").string());
  REQUIRE(direct.has_value());
  CHECK(direct->site_packages == env->site_packages);

  // A symlink outside the venv: whatever Python makes of it (CPython reads pyvenv.cfg next to the
  // path it was started as) is what a server started through it imports; specprobe reports that.
  const fs::path link = t.path / "links" / "python";
  fs::create_directories(link.parent_path());
  fs::create_symlink(venv / "bin" / "python", link);
  auto linked = inspect_python(link.string());
  REQUIRE(linked.has_value());
  CHECK(linked->executable == link.string());
  for (const auto& d : linked->site_packages) CHECK(fs::is_directory(d));

  // specprobe check reads the versions from the site-packages the interpreter reported.
  auto r = test::run_specprobe("check --gpu H100 --stack-probes off --no-matrix --unknown-ok --format json --python " +
                               test::shell_quote(shim.string()) + " -- vllm serve meta-llama/Llama-3.1-8B-Instruct");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json rep = Json::parse(r.out);
  CHECK(rep["facts"]["lib"]["flashinfer"]["version"] == "0.5.0");
  CHECK(rep["facts"]["lib"]["deep_gemm"]["git_hash"] == "a6b593d");
  CHECK(rep["facts"]["python"]["found_by"] == "interpreter");
  CHECK(rep["facts"]["python"]["executable"] == (venv / "bin" / "python").string());
  CHECK(rep["facts"]["python"]["given"] == shim.string());
}

TEST_CASE("check --python: an interpreter that cannot be asked falls back to its path and says so",
          "[probes][stack][python]") {
  PyEnvTempDir t;
  const fs::path site = t.path / "venv" / "lib" / "python3.12" / "site-packages";
  write_dist(site, "vllm-0.25.1.dist-info", "vllm", "0.25.1");
  const fs::path py = t.path / "venv" / "bin" / "python3";
  write_exec(py, "#!/bin/sh\necho 'python3: cannot start' >&2\nexit 99\n");
  const std::string cmd = " -- vllm serve meta-llama/Llama-3.1-8B-Instruct";
  auto r = test::run_specprobe("check --gpu H100 --stack-probes off --no-matrix --unknown-ok --format json --python " +
                               test::shell_quote(py.string()) + cmd);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json rep = Json::parse(r.out);
  CHECK(rep["facts"]["lib"]["vllm"]["version"] == "0.25.1");
  CHECK(rep["facts"]["python"]["found_by"] == "path");
  bool noted = false;
  for (const auto& n : rep["notes"]) {
    const std::string m = n.value("message", "");
    noted |= m.find(py.string() + ": asking the interpreter") != std::string::npos &&
             m.find("cannot start") != std::string::npos && m.find("from the path instead") != std::string::npos;
  }
  CHECK(noted);

  // Neither works: exit 2, naming the interpreter.
  const fs::path bare = t.path / "bare" / "python3";
  write_exec(bare, "#!/bin/sh\nexit 99\n");
  auto e =
      test::run_specprobe("check --gpu H100 --stack-probes off --python " + test::shell_quote(bare.string()) + cmd);
  CHECK(e.exit_code == 2);
  CHECK(e.err.find(bare.string() + ": no site-packages") != std::string::npos);
  CHECK(e.err.find("asking the interpreter") != std::string::npos);
}
