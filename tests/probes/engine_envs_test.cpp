// `specprobe engines` (probes/engine_envs.hpp) and `check --engine-env` against a local wheel
// directory (--find-links, --no-index: no test reaches the network): install, list, remove, a
// failed install leaving nothing half-built, and the engine check picking the environment of the
// release the deploy names. The wheels stand in for the engine's distribution (its metadata only):
// what is tested here is the environment manager; the real engines answer in the engines label.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../e2e/run_binary.hpp"
#include "common/json.hpp"
#include "probes/engine_envs.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

// A wheel of NAME at VERSION holding its dist-info only (tests/support/fake_wheel.py).
void make_wheel(const std::string& dir, const std::string& name, const std::string& version) {
  const std::string script = std::string(SPECPROBE_SOURCE_DIR) + "/tests/support/fake_wheel.py";
  REQUIRE(std::system(("python3 " + test::shell_quote(script) + " " + test::shell_quote(dir) + " " + name + " " +
                       version + " >/dev/null")
                          .c_str()) == 0);
}

}  // namespace

TEST_CASE("engines: install from a wheel directory, list, use with --engine-env auto, remove", "[engines_env][e2e]") {
  if (std::system("python3 -c 'import venv, ensurepip' >/dev/null 2>&1") != 0) {
    WARN("python3 has no venv module (apt-get install python3-venv): skipped");
    return;
  }
  const std::string wheels = test::temp_dir(), cache = test::temp_dir();
  make_wheel(wheels, "vllm", "0.29.0");
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + cache};
  const std::string from = " --find-links " + test::shell_quote(wheels) + " --no-index --installer pip";

  auto made = test::run_specprobe_env(env, "engines install vllm==0.29.0" + from);
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string envs = cache + "/specprobe/engines";
  CHECK(fs::exists(envs + "/vllm-0.29.0/bin/python"));
  CHECK(fs::exists(envs + "/vllm-0.29.0/.specprobe-engine.json"));
  auto listed = test::run_specprobe_env(env, "engines list --format json");
  const Json l = Json::parse(listed.out);
  REQUIRE(l["environments"].size() == 1);
  CHECK(l["environments"][0]["name"] == "vllm-0.29.0");
  CHECK(l["environments"][0]["installer"] == "pip");

  // A release the wheels do not have: exit 3 naming the log, nothing half-built left behind.
  auto missing = test::run_specprobe_env(env, "engines install vllm==0.28.0" + from);
  CHECK(missing.exit_code == 3);
  CHECK(missing.err.find("vllm-0.28.0.install.log") != std::string::npos);
  for (const auto& e : fs::directory_iterator(envs))
    CHECK(e.path().filename().string().find(".partial") == std::string::npos);
  CHECK(Json::parse(test::run_specprobe_env(env, "engines list --format json").out)["environments"].size() == 1);
  // Not an engine, or not pinned: a usage error.
  CHECK(test::run_specprobe_env(env, "engines install torch==2.9.0" + from).exit_code == 2);
  CHECK(test::run_specprobe_env(env, "engines install vllm" + from).exit_code == 2);

  // check --engine-env auto asks the environment of the release the deploy names (this stand-in
  // has no engine code: the adapter cannot import it, a note, and the verdict comes from the rest).
  const std::string model = std::string(SPECPROBE_SOURCE_DIR) + "/tests/data/checkpoint/llama-3.1-8b";
  const std::string check = "check --gpu H100 --no-matrix --probes off --stack-probes off --format json --model " +
                            test::shell_quote(model) + " --engine-env auto";
  auto asked = test::run_specprobe_env(env, check + " --lib vllm=0.29.0 -- vllm serve m");
  const Json a = Json::parse(asked.out);
  CHECK(a["facts"]["engine_check"]["environment"].get<std::string>().find("/specprobe/engines/vllm-0.29.0/") !=
        std::string::npos);
  CHECK(a["facts"]["engine_check"]["installed_version"] == "0.29.0");
  CHECK(a["verdict"] != "unknown");
  // No environment of the deploy's release: not asked, the note names the command that makes it.
  auto none = test::run_specprobe_env(env, check + " --lib vllm=0.30.0 -- vllm serve m");
  const Json n = Json::parse(none.out);
  CHECK(n["facts"]["engine_check"]["outcome"] == "no-environment");
  CHECK(n["notes"].dump().find("specprobe engines install vllm==0.30.0") != std::string::npos);
  CHECK(n["verdict"] != "unknown");
  CHECK(test::run_specprobe_env(env, check + " --lib vllm=0.30.0 --require engine -- vllm serve m").exit_code == 4);
  // A deploy that names no release: the newest environment of the engine, by version (0.29.0 after
  // 0.9.0, which sorts after it as text), and a note saying which.
  fs::copy(envs + "/vllm-0.29.0", envs + "/vllm-0.9.0", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  {
    std::ifstream in(envs + "/vllm-0.9.0/.specprobe-engine.json");
    Json stamp = Json::parse(in);
    stamp["version"] = "0.9.0";
    test::write_bytes(envs + "/vllm-0.9.0/.specprobe-engine.json", stamp.dump());
  }
  auto unnamed = test::run_specprobe_env(env, check + " -- vllm serve m");
  const Json u = Json::parse(unnamed.out);
  CHECK(u["facts"]["engine_check"]["environment"].get<std::string>().find("/specprobe/engines/vllm-0.29.0/") !=
        std::string::npos);
  CHECK(u["facts"]["engine_check"]["environment_picked"] == "newest");
  CHECK(u["notes"].dump().find("names no vLLM release; asked the newest environment here, vllm-0.29.0") !=
        std::string::npos);
  CHECK(u["verdict"] != "unknown");
  fs::remove_all(envs + "/vllm-0.9.0");
  // No environment of the engine at all: not asked, naming the command.
  auto sgl = test::run_specprobe_env(env, check + " -- python3 -m sglang.launch_server --model-path m");
  const Json g = Json::parse(sgl.out);
  CHECK(g["facts"]["engine_check"]["outcome"] == "no-environment");
  CHECK(g["notes"].dump().find("specprobe engines install sglang==VERSION") != std::string::npos);

  CHECK(test::run_specprobe_env(env, "engines remove vllm-0.29.0").exit_code == 0);
  CHECK_FALSE(fs::exists(envs + "/vllm-0.29.0"));
  CHECK(test::run_specprobe_env(env, "engines remove vllm-0.29.0").exit_code == 2);
}

TEST_CASE("engines: requirement parsing and names", "[engines_env]") {
  CHECK(probes::engine_requirement("vllm==0.29.0") == std::make_pair(std::string("vllm"), std::string("0.29.0")));
  CHECK(probes::engine_requirement("sglang==0.5.23") == std::make_pair(std::string("sglang"), std::string("0.5.23")));
  CHECK_FALSE(probes::engine_requirement("vllm>=0.29"));
  CHECK_FALSE(probes::engine_requirement("torch==2.9.0"));
  CHECK_FALSE(probes::engine_requirement("vllm==../../x"));
  CHECK(probes::engine_env_name("vllm", "0.29.0") == "vllm-0.29.0");
  CHECK(probes::list_engine_envs(test::temp_dir()).empty());
}
