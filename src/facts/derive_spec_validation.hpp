// vLLM speculative-config validation emulated as facts: what vllm/config/speculative.py
// (vllm-project/vllm @9aaf83ef5, the same logic @002e77c1), vllm/config/vllm.py (@9aaf83ef5) and
// the scheduler's batch defaults (vllm/engine/arg_utils.py get_batch_defaults) would reject at
// startup, computed before the engine runs. Pure function of the facts, no GPU; cheap enough for
// the what-if sweep (runs once per variant).
#pragma once
#include "common/json.hpp"

namespace specprobe {

// Sets specval.* (vLLM plans only; removed otherwise):
//   specval.n_predict            draft n_predict when known (MTP: model.mtp_depth), else null
//   specval.k_divisible          k <= n_predict or k % n_predict == 0 (null when n_predict unknown)
//   specval.draft_tp_ok          draft TP in {1, target TP} (true when not given)
//   specval.tp_key_given         speculative-config holds the rejected key tensor_parallel_size
//   specval.needs_draft_model    the method loads a separate draft/head checkpoint
//   specval.draft_model_missing  ... and speculative-config names none
//   specval.max_model_len_ok     spec max_model_len <= target max_model_len (null when either unknown)
//   specval.draft_slots          extra KV slots per request reserved for drafting (per method)
//   specval.max_num_seqs, specval.max_num_batched_tokens   given or vLLM's per-GPU default
//   specval.scheduler_defaults   which of the two were defaulted ("given" | "seqs" | "tokens" | "both")
//   specval.scheduled_budget     max_num_batched_tokens - draft_slots * max_num_seqs
//   specval.sp_enabled, specval.sp_divisible   sequence parallelism on; (k+1) and TP divide one another
//   specval.async_ok             the method may run with explicitly enabled async scheduling
//   specval.draft_backend, specval.draft_backend_known   speculative-config attention_backend (upper case)
//   specval.prompt_lookup_min/max, specval.prompt_lookup_ok   ngram window after vLLM's defaults
// and, for every engine, triton.verify_rows = (k+1) * GQA, triton.verify_rows_pow2,
// triton.next_n_pow2, triton.num_draft_tokens_pow2 (SGLang draft tokens).
void derive_spec_validation(Json& facts);

}  // namespace specprobe
