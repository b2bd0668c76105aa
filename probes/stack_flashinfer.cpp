// The FlashInfer stack probe (adapter: stack_flashinfer.py): the installed FlashInfer's paged
// prefill (q_len = k+1, the verify step) and decode wrappers at the plan's heads, head dim, KV
// dtype and page size, for a GQA model whose attention backend is FlashInfer.
#include <algorithm>

#include "common/ascii.hpp"
#include "probes/probe_common.hpp"
#include "probes/stack_kinds.hpp"

namespace specprobe::probes {

namespace {

Json flashinfer_plan_spec(const Json& facts, const StackProbeOptions& /*opts*/, bool forced) {
  const std::string backend = ascii_upper(fact_string(facts, "attention.selected").value_or(""));
  if (fact_bool(facts, "model.mla").value_or(false))
    return stack_skip_spec("flashinfer", "MLA model: FlashInfer's paged GQA wrappers are not on its path");
  if (backend != "FLASHINFER" && !forced)
    return stack_skip_spec(
        "flashinfer", fmt::format("attention backend {} is not FlashInfer", backend.empty() ? "unknown" : backend));
  const auto shape = stack_gqa_shape(facts);
  if (!shape) return stack_skip_spec("flashinfer", "model heads / head_dim unknown (give --model)");
  // per-GPU heads do not change the kernel's tile
  const int kvh = static_cast<int>(std::clamp<int64_t>(shape->kv_heads, 1, 8));
  return stack_run_spec("flashinfer", {{"q_heads", kvh * shape->gqa},
                                       {"kv_heads", kvh},
                                       {"head_dim", shape->head_dim},
                                       {"kv_dtype", fact_bool(facts, "kv.fp8").value_or(false) ? "fp8" : "bf16"},
                                       {"page_size", int_fact(facts, "serve.block_size").value_or(16)},
                                       {"q_len", shape->k + 1},
                                       {"batch", 2},
                                       {"context", 200}});
}

Json flashinfer_option_params(const StackShape& s) {
  const auto& o = s.shape;
  const int gqa = o.gqa.empty() ? 1 : o.gqa.front(), kvh = o.heads_kv > 0 ? o.heads_kv : 2;
  return {{"q_heads", kvh * gqa},
          {"kv_heads", kvh},
          {"head_dim", o.sv_head_dim.empty() ? 128 : o.sv_head_dim.front()},
          {"kv_dtype", o.kv_dtype.empty() ? std::string("bf16") : o.kv_dtype.front()},
          {"page_size", o.block_size.empty() ? 16 : o.block_size.front()},
          {"q_len", (o.k.empty() ? 1 : o.k.front()) + 1},
          {"batch", s.batch},
          {"context", s.context}};
}

// One answer at the plan's own shape.
void flashinfer_record(const Json& r, Json& facts) { append_plan_shape_stack_answer(r, facts, "flashinfer"); }

}  // namespace

const StackKind kFlashInferStack = {
    "flashinfer",
    "FlashInfer's paged prefill (q_len = k+1) and decode wrappers at the plan's GQA shape",
    flashinfer_plan_spec,
    flashinfer_option_params,
    nullptr,
    nullptr,
    flashinfer_record,
    {"flashinfer_python", "flashinfer"},
};

}  // namespace specprobe::probes
