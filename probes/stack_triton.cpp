// The Triton stack probe (adapter: stack_triton.py): whether the installed Triton compiles and
// runs the tl.dot tile a spec-verify kernel needs, M = (k+1) x GQA query rows, as is and padded
// to a power of two, for a GQA model on a Triton-based attention backend (or TurboQuant KV).
#include "common/ascii.hpp"
#include "probes/probe_common.hpp"
#include "probes/stack_kinds.hpp"

namespace specprobe::probes {

namespace {

Json triton_plan_spec(const Json& facts, const StackProbeOptions& /*opts*/, bool forced) {
  const std::string backend = ascii_upper(fact_string(facts, "attention.selected").value_or(""));
  const bool on_path = backend.find("TRITON") != std::string::npos || fact_bool(facts, "kv.turboquant").value_or(false);
  if (fact_bool(facts, "model.mla").value_or(false))
    return stack_skip_spec("triton", "MLA model: the spec-verify tile probe models GQA attention only");
  if (!on_path && !forced)
    return stack_skip_spec(
        "triton", fmt::format("attention backend {} is not Triton-based", backend.empty() ? "unknown" : backend));
  const auto shape = stack_gqa_shape(facts);
  if (!shape) return stack_skip_spec("triton", "model heads / head_dim unknown (give --model)");
  return stack_run_spec("triton", {{"k", shape->k},
                                   {"gqa", shape->gqa},
                                   {"head_dim", shape->head_dim},
                                   {"dtype", fact_bool(facts, "kv.fp8").value_or(false) ? "fp8" : "bf16"}});
}

Json triton_option_params(const StackShape& s) {
  const auto& o = s.shape;
  return {{"k", o.k.empty() ? 1 : o.k.front()},
          {"gqa", o.gqa.empty() ? 1 : o.gqa.front()},
          {"head_dim", o.sv_head_dim.empty() ? 128 : o.sv_head_dim.front()},
          {"dtype", o.kv_dtype.empty() ? std::string("bf16") : o.kv_dtype.front()}};
}

// stack.triton.m / padded_m (SP4053's message) and one answer at the plan's own shape.
void triton_record(const Json& r, Json& facts) {
  for (const auto& c : r.value("cases", Json::array())) {
    if (!c.contains("params")) continue;
    if (c["key"] == "unpadded") set_fact(facts, "stack.triton.m", c["params"].value("m", Json()));
    if (c["key"] == "padded") set_fact(facts, "stack.triton.padded_m", c["params"].value("m", Json()));
  }
  append_plan_shape_stack_answer(r, facts, "triton");
}

}  // namespace

const StackKind kTritonStack = {
    "triton",         "whether Triton compiles and runs the (k+1) x GQA-row tl.dot tile of a spec-verify kernel",
    triton_plan_spec, triton_option_params,
    nullptr,          nullptr,
    triton_record,    {"triton", "pytorch_triton"},
};

}  // namespace specprobe::probes
