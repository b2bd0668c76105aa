// Serving-configuration readers: vLLM --config files (YAML or JSON), deploy scripts holding a
// `vllm serve ...` or `python -m sglang.launch_server ...` command line, and a command line given
// directly after `specprobe check --`. Each reader detects its form, normalizes options into the
// plan subtree of the facts document and remembers where in the user's file each fact was set.
// Pure functions: no GPU, no network, reads only the named file.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

enum class InputForm { vllm_yaml, vllm_json, vllm_command, sglang_command };
std::string_view to_string(InputForm form);  // "vllm-yaml", "vllm-json", "vllm-command", "sglang-command"

// An option specprobe does not model: kept and reported as info, never dropped.
struct UnknownOption {
  std::string name;   // as written, without leading dashes
  Json value;         // parsed value (string when it was a bare token)
  SourceLocation where;
};

// A non-fatal remark from the reader (deprecated spelling, ignored env var, duplicate key ...).
struct ReaderNote {
  std::string severity;  // "info" | "warning"
  std::string message;
  SourceLocation where;
};

struct ParsedServing {
  InputForm form = InputForm::vllm_yaml;
  std::string path;  // the file read, or "<command line>"
  // The plan, as a facts subtree. Names (all optional except input.*, engine.name):
  //   input.form, input.path
  //   engine.name                  "vllm" | "sglang"
  //   model.id                     the model argument as given (path or hub id)
  //   spec.enabled (bool), spec.method (normalized: "mtp", "eagle", "eagle3", "ngram", "draft_model",
  //     "suffix", "medusa", "mlp_speculator", "dflash", "dspark", "standalone", ...; model-specific
  //     *_mtp and SGLang NEXTN become "mtp"), spec.method_raw, spec.k (int, null when left to the
  //     engine's default), spec.next_n (= k+1 when k known), spec.draft_model, spec.draft_tp,
  //     spec.attention_backend, spec.kv_cache_dtype, spec.max_model_len, spec.parallel_drafting,
  //     spec.config (the whole speculative-config object as given),
  //     SGLang: spec.num_steps, spec.topk, spec.num_draft_tokens, spec.draft_attention_backend
  //   serve.tp, serve.pp, serve.dp, serve.expert_parallel (bool), serve.block_size,
  //   serve.max_model_len (int, or "auto"), serve.max_num_seqs, serve.max_num_batched_tokens,
  //   serve.kv_cache_dtype ("auto" when unset), serve.quantization, serve.dtype ("auto" when unset),
  //   serve.enforce_eager (bool, false when unset), serve.cudagraph_mode (string or null),
  //   serve.compilation_config (object), serve.gpu_memory_utilization, serve.async_scheduling,
  //   serve.trust_remote_code
  //   attention.requested          backend name upper-cased, or null (vLLM --attention-backend,
  //                                --attention-config.backend; SGLang --attention-backend as given)
  //   attention.requested_source   "attention-backend" | "attention-config" | "env"
  //   attention.env_backend        VLLM_ATTENTION_BACKEND as set in the script/env, or absent
  //   env.<NAME>                   every VAR=x / export VAR=x before the command
  // Also set (additive): spec.method_source ("given" | "draft-model-name"), spec.prompt_lookup_max,
  //   spec.prompt_lookup_min, spec.quantization, spec.enforce_eager, serve.enable_prefix_caching,
  //   serve.enable_chunked_prefill, serve.optimization_level, serve.cudagraph_capture_sizes,
  //   serve.max_cudagraph_capture_size, serve.attention_config, serve.hf_overrides;
  //   SGLang: serve.ep_size, serve.dp_attention, serve.chunked_prefill_size, serve.cuda_graph_max_bs,
  //   attention.prefill_backend, attention.decode_backend.
  // Every plan carries serve.tp/pp/dp (1), serve.expert_parallel (false), serve.kv_cache_dtype and
  // serve.dtype ("auto"), serve.enforce_eager (false), serve.cudagraph_mode and attention.requested
  // (null), spec.enabled; defaults are located at the file itself (line 0).
  // SGLang: spec.k = --speculative-num-draft-tokens - 1 when given, else --speculative-num-steps.
  // Command lines given as argv are laid out as one line "<command line>", words joined by one
  // space; columns index that line.
  Json facts = Json::object();
  // Dotted fact name -> where it was set in the user's file ("spec.k" -> the speculative-config
  // line). Findings anchor here.
  std::map<std::string, SourceLocation> locations;
  std::vector<UnknownOption> unknown;
  std::vector<ReaderNote> notes;
};

// Reads FILE; the form (YAML/JSON config or shell script with a command line) is detected from
// content. Errors are input errors naming the file and line/column where known.
Expected<ParsedServing> read_serving_file(const std::string& path);

// Reads a command line given as argv (everything after `specprobe check --`).
Expected<ParsedServing> read_serving_argv(const std::vector<std::string>& argv);

}  // namespace specprobe
