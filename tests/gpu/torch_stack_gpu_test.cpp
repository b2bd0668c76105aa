// GPU (label gpu): the PyTorch stack probe on the GPU itself. With the machine's python3 (its torch
// is a CUDA build), `specprobe check` of a vLLM plan queries the GPU, asks torch for it and runs
// the bf16 matmul: every case passes and SP4055 passes; the same torch asked for a declared GPU its
// build has no kernels for fails SP4055 without touching the GPU. Skips where python3 has no torch.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/json.hpp"
#include "product_binary.hpp"

using namespace specprobe;

namespace {

std::string read_command(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

Json check_report(const std::string& gpu_option) {
  const std::string cmd = test::product_binary() + " check --probes off --no-engine --no-cache --python python3 " +
                          gpu_option + " --lib vllm=0.25.1 --format json --results all -- vllm serve " +
                          std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/llama-3.1-8b 2>/dev/null";
  Json report = Json::parse(read_command(cmd), nullptr, false);
  REQUIRE(report.is_object());
  return report;
}

std::string status_of(const Json& report, const std::string& id) {
  for (const auto& r : report.value("results", Json::array()))
    if (r.value("id", "") == id) return r.value("status", "");
  return "absent";
}

}  // namespace

TEST_CASE("the deployment's torch drives this GPU: build, arch, driver and a bf16 matmul pass (SP4055)",
          "[gpu][stack]") {
  if (read_command("python3 -c 'import torch' 2>/dev/null && echo yes") != "yes\n") {
    WARN("python3 has no torch here: skipped");
    return;
  }
  const Json here = check_report("");
  const Json* torch = find_fact(here["facts"], "stack.torch");
  REQUIRE(torch);
  INFO(torch->dump());
  CHECK((*torch)["status"] == "pass");
  for (const char* c : {"build", "arch", "driver", "run"}) CHECK((*torch)[c]["status"] == "pass");
  CHECK((*torch)["device_sm"].is_number_integer());
  CHECK(status_of(here, "SP4055") == "pass");

  const Json v100 = check_report("--gpu V100");  // answered from the build's architecture list
  const Json* declared = find_fact(v100["facts"], "stack.torch");
  REQUIRE(declared);
  INFO(declared->dump());
  CHECK((*declared)["run"]["status"] == "skip");  // a declared GPU: the matmul is not run
  const std::string list = find_fact(v100["facts"], "stack.torch.arch_list")->get<std::string>();
  const bool sm70 = list.find("sm_70") != std::string::npos;  // CUDA 13 builds start at sm_75
  if (sm70) CHECK(status_of(v100, "SP4055") == "pass");
  if (list.find("compute_") == std::string::npos && !sm70) CHECK(status_of(v100, "SP4055") == "fail");
}
