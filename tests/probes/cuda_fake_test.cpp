// The driver layer against the scripted fake: `specprobe gpu`'s query, failures recorded with
// call text, site and CUresult name, and no crash without a device.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/probe.hpp"
#include "gpu/driver.hpp"
#include "pipeline/check.hpp"
#include "pipeline/services.hpp"
#include "probes/plan_probes.hpp"
#include "support/cuda_fake.hpp"

using namespace specprobe;

TEST_CASE("query over the fake reports deviceQuery fields", "[probes][gpu-fake]") {
  auto drv = cu::make_fake_driver({});
  DriverReport r = query_gpus(*drv);
  REQUIRE_FALSE(r.problem.has_value());
  REQUIRE(r.gpus.size() == 1);
  const GpuInfo& g = r.gpus[0];
  CHECK(g.name == "NVIDIA H200");
  CHECK(g.cc_major == 9);
  CHECK(g.sm_count == 132);
  CHECK(g.smem_per_block_optin == 232448);
  CHECK(g.memory_bandwidth_bytes_per_s == 3201000LL * 1000 * 768 * 2);
  CHECK(g.uuid_hash.rfind("fnv1a64:", 0) == 0);
  CHECK(g.uuid_hash.find("0102") == std::string::npos);  // never the raw UUID
  CHECK(g.pci_bus_id == "0000:19:00.0");
  CHECK(r.driver_version == 13000);
  CHECK(driver_report_json(r)["gpus"][0]["cc"] == "9.0");
}

TEST_CASE("no device is a problem, not a crash", "[probes][gpu-fake]") {
  cu::FakeScript s;
  s.gpus.clear();
  auto r = query_gpus(*cu::make_fake_driver(s));
  REQUIRE(r.problem.has_value());
  CHECK(r.gpus.empty());
}

TEST_CASE("a failing cuInit is recorded with call text, site and result name", "[probes][gpu-fake]") {
  cu::FakeScript s;
  s.init_result = cu::kErrorNoDevice;
  auto r = query_gpus(*cu::make_fake_driver(s));
  REQUIRE(r.problem.has_value());
  REQUIRE(r.failed_calls.size() == 1);
  CHECK(r.failed_calls[0].call == "cuInit(0)");
  CHECK(r.failed_calls[0].result_name == "CUDA_ERROR_NO_DEVICE");
  CHECK(r.failed_calls[0].site.rfind("src/gpu/driver.cpp:", 0) == 0);
  CHECK(r.problem->message.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
}

TEST_CASE("one failing attribute query leaves the rest of the report", "[probes][gpu-fake]") {
  cu::FakeScript s;
  s.failing["cuDeviceGetUuid"] = cu::kErrorInvalidValue;
  auto r = query_gpus(*cu::make_fake_driver(s));
  REQUIRE(r.gpus.size() == 1);
  CHECK(r.gpus[0].uuid_hash.empty());
  CHECK(r.gpus[0].sm_count == 132);
  REQUIRE(r.failed_calls.size() == 1);
  CHECK(r.failed_calls[0].result_name == "CUDA_ERROR_INVALID_VALUE");
}

TEST_CASE("probe argument handling", "[probes][cli]") {
  CHECK(*parse_int_list("1-8") == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(*parse_int_list("1,2,4") == std::vector<int>{1, 2, 4});
  CHECK_FALSE(parse_int_list("x").has_value());
  CHECK_FALSE(parse_int_list("3-1").has_value());
  ProbeOptions o;
  o.kinds = {"mqa_logits"};
  o.next_n = "1-8";
  o.heads = {32, 64};
  auto specs = probe_specs_from_options(o);
  REQUIRE(specs.has_value());
  CHECK(specs->size() == 16);
  o.kinds = {"spec_verify"};
  o.gqa = {1, 2, 4, 6, 8, 16};
  o.kv_dtype = {"bf16", "fp8"};
  CHECK(probe_specs_from_options(o)->size() == 12);
  o.kinds = {"bogus"};
  CHECK_FALSE(probe_specs_from_options(o).has_value());
  // A context shorter than a request's query rows is a usage error naming the options.
  o.kinds = {"mqa_logits"};
  o.context = 4;
  auto short_ctx = probe_specs_from_options(o);
  REQUIRE_FALSE(short_ctx.has_value());
  CHECK(short_ctx.error().message.find("--batch / --context: context 4 < next_n = 5") != std::string::npos);
  o.next_n = "1-4";
  CHECK(probe_specs_from_options(o).has_value());
  o.next_n = "0";  // a next_n the kernel lacks stays a skip at run time, not a usage error
  CHECK(probe_specs_from_options(o).has_value());
  o.kinds = {"spec_verify"};
  o.k = {3};
  o.context = 3;
  CHECK_FALSE(probe_specs_from_options(o).has_value());
}

// Issue 39 item 6: a driver without a visible device is an environment error naming the variables
// that hide GPUs; only where no driver library exists does check evaluate a declared GPU.
TEST_CASE("a driver that shows no device is an error naming CUDA_VISIBLE_DEVICES, not a declared fallback",
          "[probes][gpu-fake]") {
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  ::unsetenv("NVIDIA_VISIBLE_DEVICES");
  cu::FakeScript s;
  s.init_result = cu::kErrorNoDevice;
  const DriverReport hidden = query_gpus(*cu::make_fake_driver(s));
  const auto e = driver_without_device(hidden);
  REQUIRE(e.has_value());
  CHECK(e->kind == ErrorKind::environment);
  CHECK(e->message.find("CUDA_VISIBLE_DEVICES=\"\"") != std::string::npos);
  CHECK(e->message.find("NVIDIA_VISIBLE_DEVICES unset") != std::string::npos);
  CHECK(e->message.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
  CHECK(e->message.find("--gpu NAME") != std::string::npos);
  // A device count of 0 after a good cuInit is the same.
  cu::FakeScript none;
  none.gpus.clear();
  CHECK(driver_without_device(query_gpus(*cu::make_fake_driver(none))).has_value());
  // The toolkit's stub (CUDA_ERROR_STUB_LIBRARY) is no driver; no library at all is no driver.
  cu::FakeScript stub;
  stub.init_result = 34;
  CHECK_FALSE(driver_without_device(query_gpus(*cu::make_fake_driver(stub))).has_value());
  CHECK_FALSE(driver_without_device(DriverReport{}).has_value());
  CHECK_FALSE(driver_without_device(query_gpus(*cu::make_fake_driver({}))).has_value());
  ::unsetenv("CUDA_VISIBLE_DEVICES");

  // check --gpu auto through the pipeline: exit 3 with that message, no report for a made-up GPU.
  auto services = system_services();
  REQUIRE(services.has_value());
  services->query_gpus = [&] { return hidden; };
  CheckRequest req;
  req.argv = {"vllm", "serve", "m"};
  req.gpu = "auto";
  req.probes = "off";
  req.suppression_file = false;
  const auto r = run_check(req, *services);
  REQUIRE_FALSE(r.has_value());
  CHECK(exit_code(r.error().kind) == 3);
  CHECK(r.error().message.find("CUDA_VISIBLE_DEVICES") != std::string::npos);
  // No driver library: the declared fallback, said in the facts and a note.
  services->query_gpus = [] { return DriverReport{}; };
  const auto fb = run_check(req, *services);
  REQUIRE(fb.has_value());
  CHECK(find_fact(fb->facts, "gpu.fallback") != nullptr);
}

TEST_CASE("a busy GPU leaves the plan unknown with the probe's reason and the fix - never a pass",
          "[probes][gpu-fake]") {
  // Issue 39: another process holds all but 64 MiB of the GPU. Each probe the plan implies ends
  // with status error and a "GPU busy" reason (probes/probe_gpu.cpp device_memory_skip and
  // cuda_failure make that record on the GPU; the gpu label tests them there). The pipeline must
  // turn the missing evidence into verdict unknown, name the probe and the fix, and make the
  // plan's matrix cell unknown too.
  auto services = system_services();
  REQUIRE(services.has_value());
  services->query_gpus = [] { return query_gpus(*cu::make_fake_driver({})); };
  int calls = 0;
  services->run_probes = [&](const Json& facts, const probes::PlanProbeOptions&) {
    ++calls;
    std::vector<Json> results;
    for (const Json& spec : probes::plan_probe_specs(facts, "auto"))
      results.push_back({{"probe", spec.value("probe", "")},
                         {"name", spec.value("probe", "")},
                         {"spec", spec},
                         {"status", "error"},
                         {"gpu_busy", true},
                         {"reason",
                          "GPU busy: 64 MiB free, the probe needs 610 MiB (needs 0.60 GiB of device memory, "
                          "the device has free 0.06 GiB); run specprobe before the server starts, or pass "
                          "--probes off to accept the rules' answer"}});
    probes::ProbeRun run;
    run.results = results;
    run.facts_patch = probes::probe_facts_patch(results);
    return run;
  };
  CheckRequest req;
  req.argv = {"vllm", "serve", "m", "--speculative-config",
              R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 4})"};
  req.model = std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/llama-3.1-8b";
  req.gpu = "auto";
  req.probes = "auto";
  req.suppression_file = false;
  const auto r = run_check(req, *services);
  REQUIRE(r.has_value());
  CHECK(calls == 1);
  CHECK(r->verdict == "unknown");
  bool named = false;
  for (const auto& m : r->missing)
    if (m.fact == "probe.spec_verify.status") {
      named = true;
      CHECK(m.supply.find("GPU busy: 64 MiB free") != std::string::npos);
      CHECK(m.supply.find("--probes off") != std::string::npos);
    }
  CHECK(named);
  REQUIRE(r->matrix.has_value());
  const std::string backend = fact_string(r->facts, "attention.selected").value_or("");
  for (const auto& c : r->matrix->cells)
    if (c.k == 2 && c.backend == backend && c.kv_cache_dtype == "auto") {
      CHECK(c.verdict == "unknown");
      CHECK(std::find(c.undecided.begin(), c.undecided.end(), "probe.spec_verify.status") != c.undecided.end());
    }
  CHECK(r->matrix->max_working_k != 2);

  // --probes off accepts the rules' answer: no probe, a decided verdict.
  req.probes = "off";
  const auto off = run_check(req, *services);
  REQUIRE(off.has_value());
  CHECK(calls == 1);
  CHECK(off->verdict != "unknown");
}
