// SGLang server-args emulation as facts (sgl-project/sglang python/sglang/srt/server_args.py,
// early-2026 content, no commit pinned; docs/advanced_features/speculative_decoding.md): effective
// EAGLE topk, page size after the backend's own adjustments, the attention backends in play and the
// spec-v2 switch, for the config-time ValueErrors of ServerArgs._handle_speculative_decoding and
// _handle_attention_backend_compatibility. Pure, no GPU.
#pragma once
#include "common/json.hpp"

namespace specprobe {

// Sets sglang.* (SGLang plans only; removed otherwise):
//   sglang.topk             --speculative-eagle-topk, or 1 for built-in MTP (NEXTN auto params), else null
//   sglang.topk_source      "given" | "auto-mtp" | "unknown"
//   sglang.page_size        --page-size, else the size the backend forces (flashmla/dsa 64,
//                           cutlass_mla 128), else 1
//   sglang.backends         attention, prefill and decode backends in use (lower case, unique)
//   sglang.paged_topk_ok    every backend in {flashinfer, fa3} ({flashinfer} for NGRAM)
//   sglang.spec_v2          SGLANG_ENABLE_SPEC_V2 set to 1/true
//   sglang.uses_trtllm_mha, sglang.uses_flex_attention, sglang.uses_trtllm_mla, sglang.uses_flashinfer
void derive_sglang(Json& facts);

}  // namespace specprobe
