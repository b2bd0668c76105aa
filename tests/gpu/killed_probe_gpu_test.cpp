// GPU (label gpu): a `specprobe probe --probe test_hang` run killed from outside leaves no probe
// child holding the GPU, whichever signal ends it; a stuck parent's hung child still dies at its
// timeout (the child's own watchdog). Written against the CLI only, so that it holds wherever the
// test_hang probe itself lives. The CPU variant with fake interpreters: tests/probes/killed_run_test.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../support/killed_run.hpp"
#include "common/json.hpp"
#include "probes/runner.hpp"

using namespace specprobe;

namespace {

// The `specprobe probe` front end that knows test_hang: this GPU test binary itself (the fault
// probes live in the test library, not in the product; tests/support/test_main.hpp), found through
// /proc so that it holds wherever the build dir was copied to (the device machine). SPECPROBE_BIN
// overrides it.
std::string specprobe_binary() {
  if (const char* bin = std::getenv("SPECPROBE_BIN")) return bin;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("specprobe_gpu_tests") : self.string();
}

// The marked processes that are probe children.
std::vector<std::string> probe_children(const std::string& marker) {
  std::vector<std::string> out;
  for (const auto& p : test::processes_marked(marker))
    if (p.find("__probe-child") != std::string::npos) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("a killed `specprobe probe --probe test_hang` leaves no probe child", "[gpu][killed]") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGKILL}) {
    const std::string marker = fmt::format("specprobe-gpu-killtest-{}-{}", getpid(), sig);
    const pid_t pid = test::start_process(specprobe_binary(), {"probe", "--probe", "test_hang", "--timeout", "20"},
                                          {"SPECPROBE_KILLTEST_MARKER=" + marker});
    REQUIRE(pid > 0);
    CHECK(test::eventually([&] { return !probe_children(marker).empty(); }, 20));
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the kernel is spinning by now
    const int status = test::kill_and_reap(pid, sig);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    std::vector<std::string> left;
    test::eventually([&] { return (left = test::processes_marked(marker)).empty(); }, 2);
    INFO("signal " << sig << ", processes left: " << fmt::format("{}", fmt::join(left, "; ")));
    CHECK(left.empty());
  }
  // The GPU is usable again: a real probe passes.
  Json r = probes::run_probe_in_process(
      {{"probe", "mqa_logits"}, {"next_n", 1}, {"heads", 64}, {"head_dim", 128}, {"block_kv", 64}});
  INFO(r.dump());
  CHECK(r["status"] == "pass");
}

TEST_CASE("a hung probe child dies at its timeout when its parent is stopped", "[gpu][killed]") {
  const std::string marker = fmt::format("specprobe-gpu-watchdog-{}", getpid());
  const pid_t pid = test::start_process(specprobe_binary(), {"probe", "--probe", "test_hang", "--timeout", "3"},
                                        {"SPECPROBE_KILLTEST_MARKER=" + marker});
  REQUIRE(pid > 0);
  REQUIRE(test::eventually([&] { return !probe_children(marker).empty(); }, 20));
  kill(pid, SIGSTOP);  // the parent neither reads nor kills from now on
  // timeout 3 s from its "begin" plus the watchdog's grace (kChildWatchdogGraceS), with slack
  std::vector<std::string> left;
  test::eventually([&] { return (left = probe_children(marker)).empty(); }, 3 + probes::kChildWatchdogGraceS + 3);
  INFO("left: " << fmt::format("{}", fmt::join(left, "; ")));
  CHECK(left.empty());
  kill(pid, SIGCONT);
  test::kill_and_reap(pid, SIGKILL);
  CHECK(test::eventually([&] { return test::processes_marked(marker).empty(); }, 2));
}
