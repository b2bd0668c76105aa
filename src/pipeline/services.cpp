// The real services (see services.hpp).
#include "pipeline/services.hpp"

#include "facts/derive.hpp"
#include "pipeline/suppressions.hpp"

namespace specprobe {

Expected<Services> system_services(const CatalogSource& source) {
  // The data tables (check_version_tables) are checked when the catalog is compiled, at build time
  // (tools/catalog/compile_catalog.cpp); at run time each is read when a check first needs it.
  auto catalog = load_catalog(source);
  if (!catalog) return catalog.error();
  Services s;
  s.catalog = *catalog;
  s.query_gpus = query_system_gpus;
  s.discover_python = [](const std::string& python) { return discover_python(python); };
  s.run_probes = probes::run_plan_probes;
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
