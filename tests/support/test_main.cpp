// The test binaries' entry point (see test_main.hpp). Holds Catch2's implementation, so each test
// binary's main is one call.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/test_main.hpp"

#include <cstdlib>
#include <string>

#include "cli/probe.hpp"
#include "support/test_faults.hpp"

namespace specprobe::testing {

int test_main(int argc, char** argv) {
  // No test reaches the network: the Hub is asked only where a test points HF_ENDPOINT at its own
  // stand-in (tests/support/hub_standin.hpp) and turns offline mode off; everything else, and
  // every binary a test starts, inherits offline mode and an endpoint on a closed local port.
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "probe" && mode != "__probe-child") return Catch::Session().run(argc, argv);
  CLI::App app{"specprobe test binary: the probe command and its child, with the test-only probes"};
  app.require_subcommand(1);
  ProbeOptions probe_opts;
  CLI::App* probe_cmd = add_probe_command(app, probe_opts);
  ProbeChildOptions child_opts;
  add_probe_child_command(app, child_opts);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const auto& kinds = probe_kinds_with_tests();
  return probe_cmd->parsed() ? run_probe_command(probe_opts, kinds) : run_probe_child_command(child_opts, kinds);
}

}  // namespace specprobe::testing
