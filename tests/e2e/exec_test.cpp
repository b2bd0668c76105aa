// `specprobe exec -- vllm serve ...` with a real child process: a fake `vllm` script first on
// PATH records its pid, argv and environment and then exits with a code or kills itself with a
// signal, so the tests see that exec replaced specprobe (same pid) and that the exit code and
// the signal reach the parent unchanged.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_binary.hpp"

using specprobe::test::c_strings;
using specprobe::test::child_environment;
using specprobe::test::temp_dir;

using specprobe::test::file_text;

namespace {

struct Child {
  pid_t pid = -1;
  int status = 0;
  std::string out, err;
};

// Starts SPECPROBE_BINARY with ARGS in DIR with ENV added (KEY=VALUE) and waits for it.
Child spawn(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& dir) {
  const std::string outf = dir + "/stdout", errf = dir + "/stderr";
  Child c;
  // Built before fork: the child calls only async-signal-safe functions (see child_environment).
  std::vector<std::string> overrides = env;
  overrides.push_back("NO_COLOR=1");
  std::vector<std::string> env_s = child_environment(overrides);
  std::vector<char*> envp = c_strings(env_s);
  std::vector<std::string> argv_s{SPECPROBE_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = c_strings(argv_s);
  const int o = open(outf.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int e = open(errf.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(o >= 0);
  REQUIRE(e >= 0);
  c.pid = fork();
  if (c.pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(120);
    if (dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(121);
    execve(argv[0], argv.data(), envp.data());
    _exit(122);
  }
  close(o);
  close(e);
  waitpid(c.pid, &c.status, 0);
  c.out = file_text(outf);
  c.err = file_text(errf);
  return c;
}

// A temp dir with bin/vllm (the fake) and the log prefix it writes to.
struct Fake {
  std::string dir, bin, log;
};

Fake make_fake() {
  Fake f;
  f.dir = temp_dir();
  f.bin = f.dir + "/bin";
  f.log = f.dir + "/vllm";
  std::filesystem::create_directories(f.bin);
  const std::string script = f.bin + "/vllm";
  std::ofstream(script) << "#!/bin/sh\n"
                           "# fake vllm: records how it was started, then exits or dies as FAKE_VLLM_MODE says\n"
                           "echo $$ > \"$FAKE_VLLM_LOG.pid\"\n"
                           "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$FAKE_VLLM_LOG.argv\"\n"
                           "printf '%s\\n' \"$DEPLOY_MARK\" > \"$FAKE_VLLM_LOG.env\"\n"
                           "echo 'fake vllm serving'\n"
                           "case \"$FAKE_VLLM_MODE\" in\n"
                           "  exit*) exit \"${FAKE_VLLM_MODE#exit}\" ;;\n"
                           "  term) kill -TERM $$; sleep 5; exit 99 ;;\n"
                           "esac\n"
                           "exit 0\n";
  chmod(script.c_str(), 0755);
  return f;
}

std::vector<std::string> env_for(const Fake& f, const std::string& mode) {
  return {"PATH=" + f.bin + ":/usr/bin:/bin", "FAKE_VLLM_LOG=" + f.log, "FAKE_VLLM_MODE=" + mode,
          "DEPLOY_MARK=from-the-deploy-script"};
}

// The checkpoint metadata of the plan's model: without it the verdict is unknown and exec refuses.
const std::string kLlamaCheckpoint = std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/llama-3.1-8b";

const std::vector<std::string> kServe = {
    "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "1", "--max-model-len", "8192"};

std::vector<std::string> exec_args(std::vector<std::string> opts, const std::vector<std::string>& cmd) {
  std::vector<std::string> a = {"exec"};
  a.insert(a.end(), opts.begin(), opts.end());
  a.push_back("--");
  a.insert(a.end(), cmd.begin(), cmd.end());
  return a;
}

}  // namespace

TEST_CASE("exec: a passing plan execs the command unchanged - its exit code passes through", "[e2e][exec]") {
  const Fake f = make_fake();
  const Child c =
      spawn(exec_args({"--gpu", "H100", "--quiet", "--model", kLlamaCheckpoint}, kServe), env_for(f, "exit7"), f.dir);
  INFO("stderr: " << c.err);
  REQUIRE(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 7);
  // Same process: execvp replaced specprobe, no fork in between.
  CHECK(std::stoi(file_text(f.log + ".pid")) == c.pid);
  CHECK(file_text(f.log + ".argv") ==
        "serve\nmeta-llama/Llama-3.1-8B-Instruct\n--tensor-parallel-size\n1\n--max-model-len\n8192\n");
  CHECK(file_text(f.log + ".env") == "from-the-deploy-script\n");
  CHECK(c.out == "fake vllm serving\n");  // stdout belongs to the server; the report went to stderr
  CHECK(c.err.find("verdict: supported") != std::string::npos);
}

TEST_CASE("exec: exit code 0 and a signal pass through", "[e2e][exec]") {
  const Fake f = make_fake();
  const Child ok =
      spawn(exec_args({"--gpu", "H100", "--quiet", "--model", kLlamaCheckpoint}, kServe), env_for(f, "exit0"), f.dir);
  REQUIRE(WIFEXITED(ok.status));
  CHECK(WEXITSTATUS(ok.status) == 0);

  const Child sig =
      spawn(exec_args({"--gpu", "H100", "--quiet", "--model", kLlamaCheckpoint}, kServe), env_for(f, "term"), f.dir);
  INFO("stderr: " << sig.err);
  REQUIRE(WIFSIGNALED(sig.status));
  CHECK(WTERMSIG(sig.status) == SIGTERM);
  CHECK(std::stoi(file_text(f.log + ".pid")) == sig.pid);
}

TEST_CASE("exec: a failing plan is refused with the report - the command never starts", "[e2e][exec]") {
  const Fake f = make_fake();
  const std::vector<std::string> bad = {"vllm",
                                        "serve",
                                        "meta-llama/Llama-3.1-8B-Instruct",
                                        "--kv-cache-dtype",
                                        "turboquant_k8v4",
                                        "--speculative-config",
                                        R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})"};
  const Child c = spawn(exec_args({"--gpu", "RTX5090", "--model", kLlamaCheckpoint}, bad), env_for(f, "exit0"), f.dir);
  REQUIRE(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 1);
  CHECK_FALSE(std::filesystem::exists(f.log + ".pid"));
  CHECK(c.err.find("refusing to start vllm") != std::string::npos);
  CHECK(c.err.find("error:") != std::string::npos);
  CHECK(c.out.empty());

  // --exit-zero: findings do not gate, so the command runs.
  const Child z = spawn(exec_args({"--gpu", "RTX5090", "--exit-zero", "--quiet", "--model", kLlamaCheckpoint}, bad),
                        env_for(f, "exit3"), f.dir);
  REQUIRE(WIFEXITED(z.status));
  CHECK(WEXITSTATUS(z.status) == 3);
  CHECK(std::filesystem::exists(f.log + ".pid"));
}

TEST_CASE("exec --dry-run prints the command and runs nothing", "[e2e][exec]") {
  const Fake f = make_fake();
  std::vector<std::string> cmd = kServe;
  cmd.push_back("--served-model-name");
  cmd.push_back("my model's name");
  const Child c = spawn(exec_args({"--gpu", "H100", "--dry-run", "--quiet", "--model", kLlamaCheckpoint}, cmd),
                        env_for(f, "exit7"), f.dir);
  REQUIRE(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 0);
  CHECK(c.out ==
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1 --max-model-len 8192 "
        "--served-model-name 'my model'\\''s name'\n");
  CHECK_FALSE(std::filesystem::exists(f.log + ".pid"));
}

TEST_CASE("exec: usage errors and a command that cannot start", "[e2e][exec]") {
  const Fake f = make_fake();
  const Child none = spawn({"exec", "--gpu", "H100"}, env_for(f, "exit0"), f.dir);
  REQUIRE(WIFEXITED(none.status));
  CHECK(WEXITSTATUS(none.status) == 2);
  CHECK(none.err.find("after `--`") != std::string::npos);

  const Child file = spawn({"exec", "serve.yaml", "--", "vllm", "serve", "m"}, env_for(f, "exit0"), f.dir);
  REQUIRE(WIFEXITED(file.status));
  CHECK(WEXITSTATUS(file.status) == 2);

  // vllm is not on PATH: 127, as env(1) and shells report it.
  std::vector<std::string> env = env_for(f, "exit0");
  env[0] = "PATH=" + f.dir + "/empty";
  const Child missing = spawn(exec_args({"--gpu", "H100", "--quiet", "--model", kLlamaCheckpoint}, kServe), env, f.dir);
  REQUIRE(WIFEXITED(missing.status));
  CHECK(WEXITSTATUS(missing.status) == 127);
  CHECK(missing.err.find("cannot run vllm") != std::string::npos);
}

TEST_CASE("exec: a plan specprobe cannot decide is refused (exit 4) unless --unknown-ok", "[e2e][exec]") {
  // No checkpoint metadata: the model's shapes are unknown, so the verdict is unknown.
  const Fake f = make_fake();
  const Child c = spawn(exec_args({"--gpu", "H100"}, kServe), env_for(f, "exit0"), f.dir);
  REQUIRE(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 4);
  CHECK_FALSE(std::filesystem::exists(f.log + ".pid"));
  CHECK(c.err.find("could not be decided") != std::string::npos);
  CHECK(c.err.find("pass --model DIR") != std::string::npos);
  const Child ok = spawn(exec_args({"--gpu", "H100", "--unknown-ok", "--quiet"}, kServe), env_for(f, "exit7"), f.dir);
  REQUIRE(WIFEXITED(ok.status));
  CHECK(WEXITSTATUS(ok.status) == 7);
  CHECK(std::filesystem::exists(f.log + ".pid"));
}
