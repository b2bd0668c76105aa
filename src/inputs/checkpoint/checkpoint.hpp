// Checkpoint analysis: reads a checkpoint's metadata only (config.json, hf_quant_config.json,
// model.safetensors.index.json and each shard's safetensors header; never tensor data), builds a
// layer map (stored dtype and scale tensors per linear module, grouped into main / mtp / embed /
// lm_head), translates on-disk names into the serving engine's runtime module names (data tables
// in name_tables.cpp) and matches the quantization config's ignore/targets exactly as the engine
// does. Opens files read-only and never writes anywhere in the checkpoint tree; never follows a
// path outside it (an HF cache's blobs/ excepted). No GPU.
#pragma once
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"

namespace specprobe {

// A checkpoint that is not on disk, fetched from the Hugging Face Hub by resolve/hub.hpp: the
// snapshot directory holds the metadata files, this manifest (repo, commit, and each shard's size
// on the Hub) and each shard's header (its first 8 + N bytes) under the headers directory, at the
// shard's own relative name. The analysis reads those headers as it reads local shards.
inline constexpr const char* kRemoteManifest = ".specprobe-snapshot.json";
inline constexpr const char* kRemoteHeadersDir = ".specprobe-headers";

struct CheckpointNote {
  std::string severity;  // "error" | "warning" | "info"
  std::string code;      // stable: e.g. "invalid_offset", "missing_shard", "index_tensor_missing"
  std::string message;   // lower-case first word, no trailing period
  std::string file;      // the file it concerns (shard, index, config), or ""
};

struct CheckpointAnalysis {
  // Subtrees "checkpoint" and "quant", ready to merge into the facts document:
  //   checkpoint.path, checkpoint.hf_cache, checkpoint.metadata_only (index but no shard present: header
  //   checks skipped with one note), checkpoint.shards, checkpoint.tensors, checkpoint.bytes,
  //   checkpoint.dtypes {dtype: count}, checkpoint.index.{present, total_size, weight_map_entries,
  //   missing_in_shards[], missing_in_shards_count, not_in_index[], not_in_index_count},
  //   checkpoint.problems [{code, file, message}], checkpoint.problem_count,
  //   checkpoint.arch_table (naming table used, or null), checkpoint.mtp.{expected_depth,
  //   layers_present[], present, tensors}, checkpoint.layer_groups {group: module count}
  //   quant.method, quant.effective_method, quant.source, quant.format, quant.engine,
  //   quant.ignore[], quant.ignore_key, quant.unread_ignore_key, quant.ignore_unmatched
  //   [{entry, mapped, on_disk_match}], quant.ignore_unmatched_count,
  //   quant.stored_mismatch [{module, runtime, group, config, stored}], quant.stored_mismatch_count,
  //   quant.mtp_differs [{module, runtime, role, mtp, main}], quant.mtp_unquantized_layers[],
  //   quant.fused_disagree [{runtime, reason, shards}], quant.scale_inv_missing [{module, runtime, group, stored}]
  //   (DeepSeek-V4 wo_a not FP8-block), quant.scale_inv_missing_unquantized (the subset stored without any scale),
  //   quant.never_quantized_stored_quantized [], quant.unmatched_layers [] (match no target:
  //   raise before vllm#41965 and in SGLang), quant.empty_prefix.{modules[], fix,
  //   matched_by_targets, stored_quantized}, quant.kv_cache_scheme
  // Lists are capped at 64 entries; the *_count facts hold the full number.
  Json facts = Json::object();
  // Compact quantization summary per layer group for reports: {group: {modules, schemes{scheme:
  // n}, weight_dtypes{dtype: n}, scale_tensors{param: n}}}.
  Json summary = Json::object();
  std::vector<CheckpointNote> notes;
};

// DIR: a checkpoint directory, an HF cache repo dir or a snapshot dir. FACTS: the facts document so
// far; engine.name ("vllm" default, "sglang") selects the matching semantics, model.mtp_depth may
// be used when config.json lacks it. Errors (input): DIR missing or config.json unusable. Invalid
// shards or index drift are notes + checkpoint.problems, not errors. The pipeline remembers an
// analysis per (DIR, engine.name, model.mtp_depth) (pipeline/services.cpp): a new fact read here
// must join that key.
Expected<CheckpointAnalysis> analyze_checkpoint(const std::string& dir, const Json& facts);

// checkpoint.weights: the checkpoint's bytes by how the engines shard them (src/inputs/checkpoint/
// weights.cpp): {source: headers|config, bytes, embed, lm_head, tied, vision, other, layers{attn, kv_proj,
// attn_replicated, dense, experts, replicated}, mtp{same classes}, num_layers, mtp_layers, vocab_size,
// quantized}. From config.json alone (a draft model, a checkpoint without shards): null when the
// config lacks the shapes. ENGINE selects the skip-list semantics; SERVE_QUANT is --quantization.
struct ModelConfig;
Json weights_inventory_from_config(const ModelConfig& cfg, const std::string& engine, const std::string& serve_quant);

}  // namespace specprobe
