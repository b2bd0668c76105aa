// The PyTorch stack probe (adapter: stack_torch.py): whether the deployment's PyTorch can drive
// the plan's GPU at all: its build (CUDA / ROCm / CPU-only) against the GPU's vendor, the
// architectures it carries kernels for against the GPU's, the CUDA release it was built with
// against the driver's and, on a queried GPU, a bf16 matmul. On every engine's path; answers
// for a declared GPU too (no GPU needed for the first three).
#include <algorithm>

#include "facts/answers.hpp"
#include "probes/probe_common.hpp"
#include "probes/stack_kinds.hpp"

namespace specprobe::probes {

namespace {

Json torch_plan_spec(const Json& facts, const StackProbeOptions& /*opts*/, bool /*forced*/) {
  if (fact_bool(facts, "gpu.fallback").value_or(false))
    return stack_skip_spec("torch",
                           "no GPU was queried or declared (give --gpu): the fallback GPU is not the "
                           "deployment's");
  const bool queried = fact_string(facts, "gpu.source").value_or("") == "driver";
  Json params = {{"gpu_vendor", fact_string(facts, "gpu.vendor").value_or("nvidia")},
                 {"gpu_name", fact_string(facts, "gpu.name").value_or("")},
                 {"gpu_sm", int_fact(facts, "gpu.sm") ? Json(*int_fact(facts, "gpu.sm")) : Json()},
                 {"gpu_arch", fact_string(facts, "gpu.arch") ? Json(*fact_string(facts, "gpu.arch")) : Json()},
                 {"run", queried}};
  if (auto drv = int_fact(facts, "driver.version"); drv && queried) params["driver_cuda"] = *drv;
  return stack_run_spec("torch", params);
}

// `specprobe probe --stack torch`: the GPU torch sees, no driver figure.
Json torch_option_params(const StackShape& /*s*/) { return {{"run", "if-visible"}}; }

std::string torch_check_case(const Json& c) {
  static const std::vector<std::string> kKeys = {"build", "arch", "driver", "run"};
  if (std::find(kKeys.begin(), kKeys.end(), c["key"].get<std::string>()) == kKeys.end())
    return "a torch case key is not build, arch, driver or run";
  return "";
}

// stack.torch.arch_list / cuda_version (the rule's message) and one answer for every cell: the
// build runs every plan on this GPU or none.
void torch_record(const Json& r, Json& facts) {
  for (const auto& c : r.value("cases", Json::array())) {
    const Json p = c.value("params", Json::object());
    if (c["key"] == "arch" && p.value("arch_list", Json()).is_string())
      set_fact(facts, "stack.torch.arch_list", p["arch_list"]);
    if (c["key"] == "driver" && p.value("cuda", Json()).is_string())
      set_fact(facts, "stack.torch.cuda_version", p["cuda"]);
  }
  const std::string st = r.value("status", std::string(kError));
  if (st != kPass && st != kFail) return;  // a skip or error answers nothing
  Json rec = {{"probe", "stack_torch"}, {"status", st}};
  if (!r.value("reason", "").empty()) rec["reason"] = r["reason"];
  const std::string version = stack_version_text(r, "?");
  Json& a = append_answer(facts, rec, fmt::format("PyTorch {} on this GPU", version), "stack.torch", Json::object(),
                          false, kStackAnswers);
  a["says"] = fmt::format("PyTorch {} {} this GPU{}", version, st == kPass ? "can drive" : "cannot drive",
                          stack_cached_words(r));
}

}  // namespace

const StackKind kTorchStack = {
    "torch",
    "whether the deployment's PyTorch build carries kernels for the GPU, fits its driver and runs a matmul on it",
    torch_plan_spec,
    torch_option_params,
    torch_check_case,
    nullptr,
    torch_record,
    {"torch", nullptr},
    true,
};

}  // namespace specprobe::probes
