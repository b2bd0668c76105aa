// The isolated probe runner and the probe table (see runner.hpp).
#include "probes/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <tuple>
#include <utility>

#include "common/run_cleanup.hpp"
#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"

namespace specprobe::probes {

namespace {

// The spec keys the probes read as int, bool or string. A spec comes from specprobe itself
// (the CLI, the plan), but the child takes any JSON on its command line: a wrong type or an
// out-of-range number is an error result naming the key, never a json exception or a float
// converted to int out of range.
std::string spec_type_problem(const Json& spec) {
  static const char* const kInts[] = {"next_n",        "heads",      "head_dim", "block_kv", "batch",      "context",
                                      "seed",          "k",          "gqa",      "heads_kv", "block_size", "splits",
                                      "tiles_per_cta", "latent_dim", "rope_dim", "v_dim",    "topk"};
  static const char* const kBools[] = {"bench", "time"};
  static const char* const kStrings[] = {"probe", "lengths", "kv_dtype"};
  for (const char* key : kInts)
    if (spec.contains(key)) {
      const Json& v = spec[key];
      // is_number_integer() is true for unsigned values too, whose get<int64_t>() would wrap.
      const bool ok = v.is_number_unsigned()
                          ? v.get<uint64_t>() <= static_cast<uint64_t>(INT32_MAX)
                          : v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
      if (!ok) return fmt::format("spec key '{}' is {}, not a 32-bit integer", key, v.dump());
    }
  for (const char* key : kBools)
    if (spec.contains(key) && !spec[key].is_boolean())
      return fmt::format("spec key '{}' is {}, not true or false", key, spec[key].dump());
  for (const char* key : kStrings)
    if (spec.contains(key) && !spec[key].is_string())
      return fmt::format("spec key '{}' is {}, not a string", key, spec[key].dump());
  return "";
}

}  // namespace

Json run_probe_in_process(const Json& spec, const std::vector<ProbeKind>& kinds) {
  if (!spec.is_object())
    return make_result(Json::object(), kError, "a probe spec is not a JSON object: " + spec.dump().substr(0, 200));
  if (auto why = spec_type_problem(spec); !why.empty()) return make_result(spec, kError, why);
  const std::string kind = spec.value("probe", "");
  for (const auto& k : kinds)
    if (kind == k.name) {
      try {
        return k.run(spec);
      } catch (const std::exception& e) {
        return make_result(spec, kError, std::string("internal error: ") + e.what());
      }
    }
  return make_result(spec, kError, "unknown probe '" + kind + "'");
}

int run_probe_child(const std::vector<Json>& specs, const std::vector<ProbeKind>& kinds) {
  enable_probe_phase_markers(true);
  // The parent kills a probe at its timeout; should the parent be gone or stuck, the child's own
  // watchdog does, a little later (so that the parent's kill, with its report, normally comes first).
  const double timeout_s = child_timeout_from_env();
  int n = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (timeout_s > 0) arm_child_watchdog(timeout_s + kChildWatchdogGraceS);
    std::printf("@@specprobe begin %zu\n", i);
    std::fflush(stdout);
    Json r = run_probe_in_process(specs[i], kinds);
    std::printf("@@specprobe result %s\n", r.dump().c_str());
    std::fflush(stdout);
    ++n;
    if (r.value("status", "") == kCrash) break;
  }
  arm_child_watchdog(0);
  return n;
}

int run_probe_child_json(const std::string& specs_json, const std::vector<ProbeKind>& kinds) {
  Json specs = Json::parse(specs_json, nullptr, false);
  if (specs.is_discarded() || !specs.is_array()) {
    std::fprintf(stderr, "specprobe: error: --specs is not a JSON array\n");
    return 2;
  }
  run_probe_child(std::vector<Json>(specs.begin(), specs.end()), kinds);
  return 0;
}

int run_probe_child_stdin(const std::vector<ProbeKind>& kinds) {
  if (!probe_kernels_fatbin().empty()) (void)GpuSession::open(probe_kernels_fatbin(), 0);
  std::string line;
  if (!std::getline(std::cin, line)) return 0;
  return run_probe_child_json(line, kinds);
}

std::vector<std::string> self_child_command() { return {"/proc/self/exe", "__probe-child"}; }

std::vector<Json> run_probes_isolated(const std::vector<Json>& specs, const RunnerOptions& opts,
                                      const std::shared_ptr<PrestartedChild>& prestarted) {
  RunnerOptions o = opts;
  o.record = make_result;
  return run_isolated(specs, o, prestarted);
}

}  // namespace specprobe::probes
