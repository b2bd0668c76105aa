// What the pipeline asks the outside world through: the GPU driver, the deployment's Python, the
// probe and stack-probe runners, the Hub resolver, the rule catalog (loaded once), the clock and a
// progress sink.
// system_services() wires the real ones; tests replace any member (a scripted driver, a fixed
// date) without touching the pipeline.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "facts/derive.hpp"
#include "gpu/driver.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "inputs/versions/python_env.hpp"
#include "probes/engine_check.hpp"
#include "probes/plan_probes.hpp"
#include "probes/stack_probes.hpp"
#include "resolve/resolver.hpp"
#include "rules/catalog.hpp"

namespace specprobe {

struct Services {
  CatalogRef catalog;  // may still be loading: the first use waits (rules/catalog.hpp)
  // Where models named by Hub id are read from (null: the local disk only).
  std::shared_ptr<const resolve::Resolver> resolver;
  std::function<DriverReport()> query_gpus;
  // A checkpoint's metadata (inputs/checkpoint/checkpoint.hpp). system_services' reads each
  // directory once per process for the facts analyze_checkpoint reads (engine.name,
  // model.mtp_depth): several files checked in one call against one --model share it (issue 49).
  // Empty: analyze_checkpoint each time.
  std::function<Expected<CheckpointAnalysis>(const std::string& dir, const Json& facts)> analyze_checkpoint;
  std::function<Expected<PythonDiscovery>(const std::string& python)> discover_python;
  std::function<probes::ProbeRun(const Json& facts, const probes::PlanProbeOptions&)> run_probes;
  // Starts the probe child before the specs are known (probes/plan_probes.hpp); null or returning
  // null: none (the probes start their child when they run).
  std::function<std::shared_ptr<PrestartedChild>(const probes::PlanProbeOptions&)> prestart_probes;
  std::function<probes::StackRun(const Json& facts, const probes::StackProbeOptions&)> run_stack_probes;
  std::function<Json(const Json& request, const probes::EngineCheckOptions&)> run_engine_check;
  std::function<std::chrono::steady_clock::time_point()> clock;
  std::function<std::string()> today;  // "YYYY-MM-DD", for suppression expiry
  // One line of progress ("" clears it); empty function = silent.
  std::function<void(const std::string& line)> progress;
  // Called after every stage that writes facts, with its writer (src/facts/registry.yaml) and the
  // document before and after: tests check one writer per fact with it. Empty = no audit.
  FactAudit audit;
};

// The real driver, interpreter, runners and clock, with the catalog CATALOG names (default: the
// built-in rules and advisories). Errors: the catalog does not load (internal for the built-in
// one, input for --rules-dir / --advisories-dir), or the embedded version tables do not load
// (internal).
Expected<Services> system_services(const CatalogSource& catalog = {});

// The Hub resolver with the process environment's settings (resolve/hub_settings.hpp), offline when
// OFFLINE (--offline), with TIMEOUT_S as --network-timeout.
std::shared_ptr<const resolve::Resolver> hub_resolver(bool offline, double timeout_s);

}  // namespace specprobe
