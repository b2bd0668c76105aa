// Will the plan fit: the memory model per GPU rank (facts "memory.*"), for vLLM and SGLang.
//
// From the weights inventory (checkpoint.weights: exact bytes from the safetensors headers, or
// computed from config.json), the plan's parallel sizes, the drafter, the KV-cache dtype and the
// GPU's memory, it follows each engine's own start-up accounting:
//   vLLM    budget = gpu_memory_utilization x GPU memory; the KV cache gets the budget minus the
//           weights, the profile run's activation peak and non-torch memory (NCCL, cuBLAS); the
//           KV cache must hold one max_model_len request; CUDA graphs are captured afterwards,
//           outside the budget.
//   SGLang  the KV pool gets what is free after the weights minus (1 - mem_fraction_static) x GPU
//           memory, kept back for activations and CUDA graphs.
// Weights from headers are exact; the activation peak, non-torch memory and the graph pool are
// estimates with a stated margin (memory.breakdown), so a plan whose verdict flips inside the margin
// is "at-risk", not "fails". docs/memory.md describes the model and its measured accuracy.
#pragma once
#include "common/json.hpp"

namespace specprobe {

// memory.modelled, memory.reason (why not modelled), memory.status (fits | at-risk | fails),
// memory.problem (weights | no-kv | one-request | graph | none), memory.summary, memory.fix,
// memory.gpu_bytes, memory.budget_bytes, memory.weights_bytes, memory.drafter_bytes,
// memory.kv_bytes, memory.kv_bytes_per_token, memory.kv_tokens (+ _low, _high), memory.max_model_len,
// memory.max_concurrency, memory.graph_bytes, memory.breakdown (every term, its source and margin),
// memory.text (the figures formatted for messages).
void derive_memory(Json& facts);

}  // namespace specprobe
