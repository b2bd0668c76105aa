// The runner's timeout, crash and restart handling with scripted fake children (no GPU).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../e2e/run_binary.hpp"
#include "probes/runner.hpp"
#include "support/test_faults.hpp"

using namespace specprobe;
using namespace specprobe::probes;

namespace {

RunnerOptions fake(const std::string& script, double timeout = 5) {
  RunnerOptions o;
  o.child_command = {"/bin/sh", "-c", script, "sh"};
  o.timeout_s = timeout;
  return o;
}

std::vector<Json> two_specs() { return {{{"probe", "a"}}, {{"probe", "b"}}}; }

}  // namespace

TEST_CASE("runner collects results from a well-behaved child", "[probes][runner]") {
  auto rs = run_probes_isolated(
      two_specs(), fake(R"(echo '@@specprobe begin 0'; echo '@@specprobe result {"status":"pass","probe":"a"}';
echo noise; echo '@@specprobe begin 1'; echo '@@specprobe result {"status":"skip","probe":"b"}')"));
  REQUIRE(rs.size() == 2);
  CHECK(rs[0]["status"] == "pass");
  CHECK(rs[1]["status"] == "skip");
}

TEST_CASE("a child killed by a signal becomes a crash and the rest runs in a new child", "[probes][runner]") {
  // First child dies in probe 0; the restarted child gets only spec b (one spec in --specs).
  auto rs =
      run_probes_isolated(two_specs(), fake(R"(case "$2" in *'"a"'*) echo '@@specprobe begin 0'; kill -SEGV $$;; esac
echo '@@specprobe begin 0'; echo '@@specprobe result {"status":"pass","probe":"b"}')"));
  REQUIRE(rs.size() == 2);
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0]["signal"] == "SIGSEGV");
  CHECK(rs[1]["status"] == "pass");
}

TEST_CASE("a hanging probe is killed at the timeout and reported", "[probes][runner]") {
  auto rs = run_probes_isolated(two_specs(), fake(R"(case "$2" in *'"a"'*) echo '@@specprobe begin 0'; sleep 30;; esac
echo '@@specprobe begin 0'; echo '@@specprobe result {"status":"pass","probe":"b"}')",
                                                  0.5));
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0].contains("timeout_s"));
  CHECK(rs[1]["status"] == "pass");
}

TEST_CASE("a child that cannot start reports an error per spec, never loops", "[probes][runner]") {
  RunnerOptions o;
  o.child_command = {"/nonexistent/specprobe", "__probe-child"};
  auto rs = run_probes_isolated(two_specs(), o);
  CHECK(rs[0]["status"] == "error");
  CHECK(rs[1]["status"] == "error");
}

TEST_CASE("exit without a result mid-probe is a crash with the exit status", "[probes][runner]") {
  auto rs = run_probes_isolated({{{"probe", "a"}}}, fake("echo '@@specprobe begin 0'; echo boom >&2; exit 7"));
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0]["reason"].get<std::string>().find("status 7") != std::string::npos);
  CHECK(rs[0]["stderr_tail"].get<std::string>().find("boom") != std::string::npos);
}

TEST_CASE("unknown probe kinds are an error result in process", "[probes][runner]") {
  Json r = run_probe_in_process({{"probe", "nope"}});
  CHECK(r["status"] == "error");
}

TEST_CASE("an unknown MQA kernel family is an error result naming where it came from", "[probes][runner]") {
  // Checked before any GPU work, so it holds on machines without one.
  Json r = run_probe_in_process({{"probe", "mqa_logits"},
                                 {"next_n", 2},
                                 {"heads", 64},
                                 {"head_dim", 128},
                                 {"block_kv", 64},
                                 {"kernel", "fastest"}});
  CHECK(r["status"] == "error");
  const std::string why = r.value("reason", std::string());
  CHECK(why.find("'fastest'") != std::string::npos);
  CHECK(why.find("auto, tma, mma") != std::string::npos);
  CHECK(why.find("spec's \"kernel\"") != std::string::npos);
  ::setenv("SPECPROBE_MQA_KERNEL", "wgmma", 1);
  Json e = run_probe_in_process(
      {{"probe", "mqa_logits"}, {"next_n", 2}, {"heads", 64}, {"head_dim", 128}, {"block_kv", 64}});
  ::unsetenv("SPECPROBE_MQA_KERNEL");
  CHECK(e["status"] == "error");
  CHECK(e.value("reason", std::string()).find("'wgmma' (SPECPROBE_MQA_KERNEL)") != std::string::npos);
}

TEST_CASE("an unknown spec-verify kernel family is an error result naming where it came from", "[probes][runner]") {
  // SPECPROBE_SV_KERNEL=cp_async forces the portable kernel on Hopper (bench/probe_run_device.sh);
  // checked before any GPU work, like the MQA switch.
  ::setenv("SPECPROBE_SV_KERNEL", "wgmma", 1);
  Json e = run_probe_in_process(
      {{"probe", "spec_verify"}, {"k", 3}, {"gqa", 8}, {"head_dim", 128}, {"kv_dtype", "bf16"}, {"block_size", 16}});
  ::unsetenv("SPECPROBE_SV_KERNEL");
  CHECK(e["status"] == "error");
  CHECK(e.value("reason", std::string()).find("'wgmma' (SPECPROBE_SV_KERNEL)") != std::string::npos);
  CHECK(e.value("reason", std::string()).find("auto, cp_async") != std::string::npos);
}

TEST_CASE("the product's probe table has no test probes, a test binary's table adds them", "[probes][runner]") {
  std::vector<std::string> names;
  for (const auto& k : probe_kinds()) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"mqa_logits", "spec_verify", "graph_replay", "mla_verify"});
  for (const char* test_probe : {"test_fault", "test_hang"}) {
    Json r = run_probe_in_process({{"probe", test_probe}});
    CHECK(r["status"] == "error");
    CHECK(r.value("reason", std::string()) == std::string("unknown probe '") + test_probe + "'");
  }
  // Not run in process here: on a GPU machine test_fault would poison this process's context and
  // test_hang would never return. The next test runs them in a child.
  std::vector<std::string> with_tests;
  for (const auto& k : testing::probe_kinds_with_tests()) with_tests.push_back(k.name);
  CHECK(with_tests ==
        std::vector<std::string>{"mqa_logits", "spec_verify", "graph_replay", "mla_verify", "test_fault", "test_hang"});
}

TEST_CASE("this test binary is a probe child and a probe front end that knows the test probes", "[probes][runner]") {
  // /proc/self/exe __probe-child: the product's runner re-executing the test binary (what the GPU
  // isolation test does), and `<test binary> probe` (bench/probe_run_device.sh's isolation demo).
  // Without a GPU the test probes are errors (no driver) or skips (no kernels); on a GPU, crashes.
  auto rs =
      run_probes_isolated({{{"probe", "test_fault"}}, {{"probe", "nope"}}}, RunnerOptions{self_child_command(), 5});
  REQUIRE(rs.size() == 2);
  INFO(Json(rs).dump());
  CHECK(rs[0]["probe"] == "test_fault");
  CHECK(rs[0].value("reason", std::string()).find("unknown probe") == std::string::npos);
  CHECK(rs[1]["status"] == "error");
  CHECK(rs[1]["reason"] == "unknown probe 'nope'");
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  FILE* p = ::popen(
      (specprobe::test::shell_quote(self) + " probe --probe test_fault,test_hang --timeout 5 --format json 2>/dev/null")
          .c_str(),
      "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  INFO(out);
  Json records = Json::parse(out, nullptr, false);
  REQUIRE(records.is_array());
  REQUIRE(records.size() == 2);
  CHECK(records[0]["probe"] == "test_fault");
  CHECK(records[1]["probe"] == "test_hang");
  for (const auto& r : records) CHECK(r.value("reason", std::string()).find("unknown probe") == std::string::npos);
  CHECK(WIFEXITED(status));
}

TEST_CASE("a timeout in a host phase is an error that asks for a longer timeout, not a hung kernel",
          "[probes][runner]") {
  auto rs = run_probes_isolated(two_specs(), fake(R"(case "$2" in *'"a"'*) echo '@@specprobe begin 0';
echo '@@specprobe phase host generate inputs'; sleep 30;; esac
echo '@@specprobe begin 0'; echo '@@specprobe result {"status":"pass","probe":"b"}')",
                                                  0.5));
  CHECK(rs[0]["status"] == "error");
  CHECK(rs[0]["phase"] == "generate inputs");
  const std::string why = rs[0]["reason"];
  CHECK(why.find("host phase 'generate inputs'") != std::string::npos);
  CHECK(why.find("longer --timeout") != std::string::npos);
  CHECK(rs[1]["status"] == "pass");
}

TEST_CASE("a timeout in a device phase is a crash that names the phase", "[probes][runner]") {
  auto rs = run_probes_isolated({{{"probe", "a"}}},
                                fake(R"(echo '@@specprobe begin 0'; echo '@@specprobe phase host generate inputs';
echo '@@specprobe phase device run kernel'; sleep 30)",
                                     0.5));
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0]["phase"] == "run kernel");
  CHECK(rs[0]["reason"].get<std::string>().find("hung in phase 'run kernel'") != std::string::npos);
}

TEST_CASE("a phase belongs to its probe: the next probe starts without one", "[probes][runner]") {
  // Probe a passes after a host phase; probe b then hangs before marking any phase: a crash as
  // before phases existed, not an error carried over from a's host phase.
  auto rs = run_probes_isolated(two_specs(), fake(R"(echo '@@specprobe begin 0'; echo '@@specprobe phase host check';
echo '@@specprobe result {"status":"pass","probe":"a"}'; echo '@@specprobe begin 1'; sleep 30)",
                                                  0.5));
  CHECK(rs[0]["status"] == "pass");
  CHECK(rs[1]["status"] == "crash");
  CHECK_FALSE(rs[1].contains("phase"));
}

TEST_CASE("a death by signal in a host phase is an error naming the phase - phase names are cleaned",
          "[probes][runner]") {
  auto rs = run_probes_isolated({{{"probe", "a"}}}, fake(R"(echo '@@specprobe begin 0';
printf '@@specprobe phase host check \033[31mred\n'; kill -SEGV $$)"));
  CHECK(rs[0]["status"] == "error");
  CHECK(rs[0]["signal"] == "SIGSEGV");
  CHECK(rs[0]["phase"] == "check [31mred");  // the escape byte dropped
  CHECK(rs[0]["reason"].get<std::string>().find("SIGSEGV in host phase") != std::string::npos);
}

TEST_CASE("a phase marker without host or device counts as device work", "[probes][runner]") {
  auto rs = run_probes_isolated(
      {{{"probe", "a"}}}, fake(R"(echo '@@specprobe begin 0'; echo '@@specprobe phase import x'; sleep 30)", 0.5));
  CHECK(rs[0]["status"] == "crash");
  CHECK(rs[0]["phase"] == "import x");
}

namespace {

// A child that answers from its stdin when prestarted, from its argv otherwise, saying which.
const char* kEitherWay = R"(if [ "$1" = --specs-on-stdin ]; then read line; from=stdin; else from=argv; fi
echo '@@specprobe begin 0'; echo "@@specprobe result {\"status\":\"pass\",\"probe\":\"a\",\"reason\":\"$from\"}"
echo '@@specprobe begin 1'; echo "@@specprobe result {\"status\":\"pass\",\"probe\":\"b\",\"reason\":\"$from\"}")";

bool process_gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("a prestarted child takes its specs on stdin and runs the first batch", "[probes][runner]") {
  const RunnerOptions o = fake(kEitherWay);
  auto warm = PrestartedChild::start(o);
  REQUIRE(warm);
  auto rs = run_probes_isolated(two_specs(), o, warm);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0]["reason"] == "stdin");
  CHECK(rs[1]["reason"] == "stdin");
  // Adopted once: the next run starts its own child.
  auto again = run_probes_isolated(two_specs(), o, warm);
  CHECK(again[0]["reason"] == "argv");
}

TEST_CASE("a prestarted child with other options is not adopted", "[probes][runner]") {
  auto warm = PrestartedChild::start(fake(kEitherWay, 7));
  REQUIRE(warm);
  auto rs = run_probes_isolated(two_specs(), fake(kEitherWay, 5), warm);
  CHECK(rs[0]["reason"] == "argv");
}

TEST_CASE("an unused prestarted child is killed and reaped when let go, even mid start-up", "[probes][runner]") {
  const std::string pid_file = (std::filesystem::temp_directory_path() / "specprobe-prestart-pid").string();
  std::remove(pid_file.c_str());
  // Its start-up never ends (a hung cuInit): it does not read its stdin.
  auto warm = PrestartedChild::start(fake("echo $$ > " + pid_file + "; exec sleep 60"));
  REQUIRE(warm);
  pid_t pid = -1;
  for (int i = 0; i < 200 && pid < 0; ++i) {
    if (FILE* f = std::fopen(pid_file.c_str(), "r")) {
      if (std::fscanf(f, "%d", &pid) != 1) pid = -1;
      std::fclose(f);
    }
    if (pid < 0) usleep(10000);
  }
  REQUIRE(pid > 0);
  CHECK_FALSE(process_gone(pid));
  warm.reset();
  CHECK(process_gone(pid));
  std::remove(pid_file.c_str());
}

TEST_CASE("a prestarted child that died before its specs leaves them to a new child", "[probes][runner]") {
  const RunnerOptions o = fake(R"(if [ "$1" = --specs-on-stdin ]; then exit 3; fi
echo '@@specprobe begin 0'; echo '@@specprobe result {"status":"pass","probe":"a","reason":"argv"}'
echo '@@specprobe begin 1'; echo '@@specprobe result {"status":"pass","probe":"b","reason":"argv"}')");
  auto warm = PrestartedChild::start(o);
  REQUIRE(warm);
  usleep(200000);  // it has exited: its stdin has no reader
  auto rs = run_probes_isolated(two_specs(), o, warm);
  CHECK(rs[0]["reason"] == "argv");
  CHECK(rs[1]["reason"] == "argv");
}

TEST_CASE("the product's probe child reads its specs from stdin when prestarted", "[probes][runner]") {
  // No GPU here: its warm-up finds none and says nothing; the specs then run (and error) as usual.
  const std::string specs = test::write_file(test::temp_dir(), "specs", "[{\"probe\": \"nope\"}]\n");
  test::RunResult r = test::run_specprobe("__probe-child --specs-on-stdin < " + test::shell_quote(specs));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("@@specprobe begin 0") != std::string::npos);
  CHECK(r.out.find("unknown probe 'nope'") != std::string::npos);
  test::RunResult none = test::run_specprobe("__probe-child --specs-on-stdin < /dev/null");  // let go: nothing to run
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());
  CHECK(test::run_specprobe("__probe-child").exit_code == 2);  // one of --specs / --specs-on-stdin
  // A line that is not a JSON array of specs: exit 2 naming it, nothing run.
  const std::string bad = test::write_file(test::temp_dir(), "bad", "{\"probe\": \n");
  test::RunResult broken = test::run_specprobe("__probe-child --specs-on-stdin < " + test::shell_quote(bad));
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("not a JSON array") != std::string::npos);
  CHECK(broken.out.empty());
}
