// Benchmark (not a test): `specprobe check` without probes on the DeepSeek-V4 + MTP case, the
// full what-if matrix sweep included. Reports the in-process pipeline time and the wall time of
// the whole binary (process start to exit), median and p90 over repeated runs.
//
// usage: check_bench [SOURCE_DIR] [RUNS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "facts/registry.hpp"
#include "pipeline/check.hpp"
#include "report/emit.hpp"
#include "report/printers.hpp"
#include "rules/advisory.hpp"
#include "rules/rule.hpp"

using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, v.size() * 9 / 10)];
}

}  // namespace

// Milliseconds FN takes, median over RUNS calls.
template <class Fn>
double timed_median(int runs, Fn&& fn) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median(t);
}

int main(int argc, char** argv) {
  const std::string src = argc > 1 ? argv[1] : SPECPROBE_SOURCE_DIR;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 200;
  // The catalog's parts, each decoded from the compiled catalog as a check's first use does.
  const auto t0 = Clock::now();
  if (!specprobe::fact_registry()) return 1;
  const double registry_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const double rules_ms = timed_median(std::max(1, runs / 10), [] { (void)specprobe::load_rules(); });
  const double advisories_ms = timed_median(std::max(1, runs / 10), [] { (void)specprobe::load_advisories(); });
  auto services = specprobe::system_services();
  if (!services) {
    std::fprintf(stderr, "%s\n", services.error().str().c_str());
    return 1;
  }
  specprobe::CheckRequest o;
  o.file = src + "/docs/examples/seeds/dsv4-mtp.yaml";
  o.model = src + "/docs/examples/checkpoints/deepseek-v4-flash";
  o.gpu = "H200";
  o.libs = {"vllm=0.25.1"};
  o.probes = "off";

  std::vector<double> inproc;
  size_t cells = 0, rules = 0;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    auto r = specprobe::run_check(o, *services);
    inproc.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r) {
      std::fprintf(stderr, "check failed: %s\n", r.error().str().c_str());
      return 1;
    }
    cells = r->matrix ? r->matrix->cells.size() : 0;
    rules = r->results.size();
  }
  auto report = specprobe::run_check(o, *services);
  const double json_ms = timed_median(
      runs, [&] { (void)specprobe::find_report_format("json")->render(*report, specprobe::RenderOptions{}); });
  std::vector<double> wall;
  const std::string cmd = std::string(SPECPROBE_BINARY) + " check " + o.file + " --model " + o.model +
                          " --gpu H200 --lib vllm=0.25.1 --probes off --format json >/dev/null";
  for (int i = 0; i < std::min(runs, 50); ++i) {
    const auto t0 = Clock::now();
    const int rc = std::system(cmd.c_str());
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (rc != 0) {
      std::fprintf(stderr, "binary exited %d\n", rc);
      return 1;
    }
  }
  std::printf("check (DeepSeek-V4-Flash + MTP k=2, H200 declared, %zu rules, %zu matrix cells)\n", rules, cells);
  std::printf("  catalog: facts registry %.2f ms (once), rules %.2f ms, advisories %.2f ms (median)\n", registry_ms,
              rules_ms, advisories_ms);
  std::printf("  JSON report rendered: median %.2f ms\n", json_ms);
  std::printf("  in-process pipeline: median %.2f ms, p90 %.2f ms over %d runs\n", median(inproc), p90(inproc), runs);
  std::printf("  whole binary (wall): median %.2f ms, p90 %.2f ms over %zu runs\n", median(wall), p90(wall),
              wall.size());
  return 0;
}
