// The PyTorch stack probe's adapter (probes/stack_torch.py, the embedded copy) under this
// machine's python3 with a stand-in `torch` package that reports a chosen build: CUDA major
// against the driver's, the architecture list against the GPU's compute capability or gfx target,
// CPU-only and ROCm builds, torch seeing no GPU where the driver reports one. The real PyTorch of
// the engine venvs answers the same questions in tests/engines (label engines); a GPU answers the
// matmul case (tests/gpu).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probes/stack_kinds.hpp"
#include "probes/stack_probes.hpp"

using namespace specprobe;
using namespace specprobe::probes;
namespace fs = std::filesystem;

namespace {

// python3 with a `torch` package that reports BUILD ({version, cuda, hip, arch, warn}).
struct StandInTorch {
  std::string dir;
  std::string python;
  explicit StandInTorch(const Json& build) {
    std::string t = (fs::temp_directory_path() / "specprobe-torch-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()));
    dir = t;
    fs::create_directories(dir + "/site/torch");
    std::ofstream(dir + "/site/torch/build.json") << build.dump();
    std::ofstream(dir + "/site/torch/__init__.py") << R"(import json, os, warnings
_b = json.load(open(os.path.join(os.path.dirname(__file__), "build.json")))
__version__ = _b["version"]
class version:
    cuda = _b.get("cuda")
    hip = _b.get("hip")
class _C:
    @staticmethod
    def _cuda_getArchFlags():
        return _b.get("arch")
class cuda:
    @staticmethod
    def is_available():
        if _b.get("warn"):
            warnings.warn(_b["warn"])
        return False
)";
    python = dir + "/python";
    std::ofstream(python) << "#!/bin/sh\nPYTHONPATH='" << dir << "/site' exec python3 \"$@\"\n";
    chmod(python.c_str(), 0755);
  }
  ~StandInTorch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Json run(const Json& facts) const {
    StackProbeOptions o;
    o.python = python;
    o.ask_interpreter = false;
    o.use_cache = false;
    o.timeout_s = 60;
    o.libraries = {"torch"};
    auto specs = stack_probe_specs(facts, o);
    REQUIRE(specs.size() == 1);
    return run_stack_probe(specs[0], o);
  }
};

Json nvidia(int sm, const char* source = "declared") {
  return {{"gpu", {{"source", source}, {"name", "the GPU"}, {"sm", sm}, {"vendor", "nvidia"}}}};
}

Json case_of(const Json& r, const std::string& key) {
  for (const auto& c : r["cases"])
    if (c["key"] == key) return c;
  return Json();
}

const Json kCu130 = {{"version", "2.14.0+cu130"}, {"cuda", "13.0"}, {"arch", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"}};

}  // namespace

TEST_CASE("torch: an architecture list without the GPU's is a failure, same-major later minors run",
          "[probes][stack]") {
  const StandInTorch torch(kCu130);
  Json r = torch.run(nvidia(70));  // V100: CUDA 13 builds start at sm_75
  REQUIRE(r["status"] == "fail");
  CHECK(r["reason"].get<std::string>().find("sm_70 (compute capability 7.0): no kernel image") != std::string::npos);
  CHECK(case_of(r, "build")["status"] == "pass");
  CHECK(case_of(r, "run")["status"] == "skip");  // a declared GPU: nothing to run on here

  for (int sm : {75, 89, 90, 103, 121}) {  // 8.9 runs sm_86, 10.3 sm_100, 12.1 sm_120 cubins
    INFO("sm " << sm);
    Json ok = torch.run(nvidia(sm));
    CHECK(ok["status"] == "pass");
    CHECK(case_of(ok, "arch")["params"]["covered_by"].is_string());
  }
  // vllm#21633 (2025-07-25): the vLLM 0.10.0 image's PyTorch "supports CUDA capabilities sm_50
  // sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" on an RTX 5070 Ti, sm_120: no kernel image. Its
  // neighbour, an H100 (sm_90) with the same build, passes.
  const StandInTorch vllm_0_10(
      Json{{"version", "2.7.0+cu126"}, {"cuda", "12.6"}, {"arch", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"}});
  Json rtx5070 = nvidia(120);
  rtx5070["gpu"]["name"] = "NVIDIA GeForce RTX 5070 Ti";
  Json blocked = vllm_0_10.run(rtx5070);
  CHECK(blocked["status"] == "fail");
  CHECK(blocked["reason"].get<std::string>().find("NVIDIA GeForce RTX 5070 Ti is sm_120") != std::string::npos);
  CHECK(vllm_0_10.run(nvidia(90))["status"] == "pass");
  // an sm_90a cubin runs on 9.0 only; PTX compute_90 on anything later
  const StandInTorch special(Json{{"version", "x"}, {"cuda", "12.8"}, {"arch", "sm_80 sm_90a compute_90"}});
  CHECK(case_of(special.run(nvidia(120)), "arch")["params"]["covered_by"] == "compute_90");
  const StandInTorch arch_only(Json{{"version", "x"}, {"cuda", "12.8"}, {"arch", "sm_80 sm_90a"}});
  CHECK(arch_only.run(nvidia(100))["status"] == "fail");
  CHECK(case_of(arch_only.run(nvidia(90)), "arch")["params"]["covered_by"] == "sm_90a");
}

TEST_CASE("torch: a CUDA major newer than the driver's fails, a newer minor runs", "[probes][stack]") {
  // The spec carries the driver's CUDA for a queried GPU (run = true would want a GPU here), so
  // the adapter is asked directly, as for a queried H100 whose matmul is not run.
  const StandInTorch torch(kCu130);
  StackProbeOptions o;
  o.python = torch.python;
  o.ask_interpreter = false;
  o.use_cache = false;
  Json spec = stack_run_spec(
      "torch",
      {{"gpu_vendor", "nvidia"}, {"gpu_name", "NVIDIA H100"}, {"gpu_sm", 90}, {"driver_cuda", 12080}, {"run", false}});
  Json r = run_stack_probe(spec, o);
  REQUIRE(r["status"] == "fail");
  CHECK(case_of(r, "driver")["reason"] ==
        "PyTorch 2.14.0+cu130 was built with CUDA 13.0; the driver supports CUDA 12.8 (a newer major needs a newer "
        "driver)");
  const StandInTorch cu129(Json{{"version", "2.9.0+cu129"}, {"cuda", "12.9"}, {"arch", "sm_90"}});
  o.python = cu129.python;
  Json minor = run_stack_probe(spec, o);
  CHECK(minor["status"] == "pass");
  CHECK(case_of(minor, "driver")["reason"].get<std::string>().find("minor version compatibility") != std::string::npos);
  Json f = stack_facts_patch({r}, o.python);
  CHECK(*find_fact(f, "stack.torch.cuda_version") == "13.0");
  CHECK(*find_fact(f, "stack.torch.arch_list") == "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
}

TEST_CASE("torch: a queried GPU torch cannot see fails with torch's own warning", "[probes][stack]") {
  const StandInTorch torch(Json{{"version", "2.11.0+cu130"},
                                {"cuda", "13.0"},
                                {"arch", "sm_90"},
                                {"warn",
                                 "CUDA initialization: The NVIDIA driver on your system is too old (found version "
                                 "12080). Please update your GPU driver"}});
  Json r = torch.run(nvidia(90, "driver"));  // run = true: specprobe's driver query found the GPU
  REQUIRE(r["status"] == "fail");
  const Json run = case_of(r, "run");
  CHECK(run["reason"] == "torch sees no GPU, though the driver reports one here");
  CHECK(run["error_text"].get<std::string>().find("too old (found version 12080)") != std::string::npos);
  // The same build asked by `specprobe probe --stack` (run if visible) only skips the matmul.
  StackProbeOptions o;
  o.python = torch.python;
  o.ask_interpreter = false;
  o.use_cache = false;
  Json probe = run_stack_probe(stack_run_spec("torch", {{"run", "if-visible"}}), o);
  CHECK(probe["status"] == "pass");  // the build case answered; arch and driver unknown, no GPU
  CHECK(case_of(probe, "run")["status"] == "skip");
}

TEST_CASE("torch: CPU-only and other-vendor builds fail on the build case, ROCm matches gfx targets",
          "[probes][stack]") {
  const StandInTorch cpu(Json{{"version", "2.14.0+cpu"}});
  Json r = cpu.run(nvidia(90));
  REQUIRE(r["status"] == "fail");
  CHECK(r["reason"].get<std::string>().find("is a CPU-only build") != std::string::npos);

  Json mi300 = {{"gpu", {{"source", "declared"}, {"name", "MI300X"}, {"vendor", "amd"}, {"arch", "gfx942"}}}};
  const StandInTorch rocm(Json{{"version", "2.9.0+rocm6.4"}, {"hip", "6.4"}, {"arch", "gfx90a gfx942:xnack- gfx950"}});
  CHECK(rocm.run(mi300)["status"] == "pass");
  Json mi250 = mi300;
  mi250["gpu"]["arch"] = "gfx90b";
  CHECK(rocm.run(mi250)["status"] == "fail");
  const StandInTorch cuda_on_amd(kCu130);
  Json wrong = cuda_on_amd.run(mi300);
  CHECK(wrong["status"] == "fail");
  CHECK(wrong["reason"].get<std::string>().find("needs a ROCm build for this AMD GPU") != std::string::npos);
}

TEST_CASE("torch: its answer is one record for every cell, not plan-shape-only", "[probes][stack]") {
  const StandInTorch torch(kCu130);
  Json r = torch.run(nvidia(70));
  Json f = stack_facts_patch({r}, torch.python);
  const Json* answers = find_fact(f, "stack.answers");
  REQUIRE(answers);
  REQUIRE(answers->size() == 1);
  CHECK((*answers)[0]["plan_shape_only"] == false);
  CHECK((*answers)[0]["says"] == "PyTorch 2.14.0+cu130 cannot drive this GPU");
}
