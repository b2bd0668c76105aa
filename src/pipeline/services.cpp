// The real services (see services.hpp).
#include "pipeline/services.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include "facts/derive.hpp"
#include "pipeline/suppressions.hpp"
#include "probes/probe_common.hpp"

namespace specprobe {

namespace {

// analyze_checkpoint, remembered per (directory, engine.name, model.mtp_depth): the only facts it
// reads (checkpoint.hpp). Safe across threads.
std::function<Expected<CheckpointAnalysis>(const std::string&, const Json&)> remembered_checkpoints() {
  struct Memo {
    std::mutex mu;
    std::map<std::string, CheckpointAnalysis> by_key;
  };
  auto memo = std::make_shared<Memo>();
  return [memo](const std::string& dir, const Json& facts) -> Expected<CheckpointAnalysis> {
    const Json* engine = find_fact(facts, "engine.name");
    const Json* mtp = find_fact(facts, "model.mtp_depth");
    const std::string key = dir + '\0' + (engine ? engine->dump() : "") + '\0' + (mtp ? mtp->dump() : "");
    {
      std::lock_guard<std::mutex> lock(memo->mu);
      if (auto it = memo->by_key.find(key); it != memo->by_key.end()) return it->second;
    }
    auto a = analyze_checkpoint(dir, facts);
    if (a) {
      std::lock_guard<std::mutex> lock(memo->mu);
      memo->by_key.emplace(key, *a);
    }
    return a;
  };
}

}  // namespace

Expected<Services> system_services(const CatalogSource& source) {
  // The data tables (check_version_tables) are checked when the catalog is compiled, at build time
  // (tools/catalog/compile_catalog.cpp); at run time each is read when a check first needs it.
  auto catalog = start_loading_catalog(source);
  if (!catalog) return catalog.error();
  Services s;
  s.catalog = std::move(*catalog);
  s.query_gpus = query_system_gpus;
  s.analyze_checkpoint = remembered_checkpoints();
  s.discover_python = [](const std::string& python) { return discover_python(python); };
  s.run_probes = probes::run_plan_probes;
  // Only where the NVIDIA driver's control node is there (any GPU given to this machine or
  // container, /dev/nvidia0 or another): elsewhere (CPU CI, a declared GPU) the child would be
  // started for nothing, once per checked file.
  s.prestart_probes = [](const probes::PlanProbeOptions& o) -> std::shared_ptr<PrestartedChild> {
    std::error_code ec;
    if (probe_kernels_fatbin().empty() || !std::filesystem::exists("/dev/nvidiactl", ec)) return nullptr;
    return probes::prestart_plan_probes(o);
  };
  s.run_stack_probes = probes::run_stack_probes;
  s.run_engine_check = probes::run_engine_check;
  s.resolver = hub_resolver(false, 60);
  s.clock = std::chrono::steady_clock::now;
  s.today = today_iso;
  return s;
}

std::shared_ptr<const resolve::Resolver> hub_resolver(bool offline, double timeout_s) {
  resolve::HubSettings settings = resolve::hub_settings_from_process();
  if (offline && !settings.offline) {
    settings.offline = true;
    settings.offline_reason = "--offline";
  }
  settings.timeout_s = timeout_s;
  return std::make_shared<const resolve::Resolver>(std::make_shared<resolve::Hub>(std::move(settings)));
}

}  // namespace specprobe
