// analyze_checkpoint (checkpoint.hpp): reads config.json, then runs the phases in order over one
// Analysis record (analysis_internal.hpp says which file holds each phase).
#include "inputs/checkpoint/analysis_internal.hpp"

namespace specprobe {

namespace checkpoint {

Analysis::Analysis(const ModelConfig& config, const Json& facts)
    : cfg(config), in_facts(facts), ck(out.facts["checkpoint"]), qf(out.facts["quant"]) {
  ck = Json::object();
  qf = Json::object();
}

void Analysis::problem(std::string code, std::string file, std::string message, std::string severity) {
  out.notes.push_back({severity, code, message, file});
  if (severity == "error") {
    ++problem_count;
    push_capped(problems, Json{{"code", code}, {"file", file}, {"message", message}});
  }
}

}  // namespace checkpoint

Expected<CheckpointAnalysis> analyze_checkpoint(const std::string& dir, const Json& in_facts) {
  auto cfg = read_model_config(dir);
  if (!cfg) return cfg.error();
  checkpoint::Analysis a(*cfg, in_facts);
  checkpoint::locate_tree(a);          // checkpoint.path, .hf_cache
  checkpoint::read_index_file(a);      // checkpoint.index (present, total_size, entries)
  checkpoint::list_shards(a);          // which shards, each safe to open
  checkpoint::read_shard_headers(a);   // in parallel
  checkpoint::take_inventory(a);       // checkpoint.index (cross-check), .shards, .tensors, .bytes, .dtypes
  checkpoint::build_disk_modules(a);   // on-disk modules, sorted by name
  checkpoint::map_runtime_modules(a);  // checkpoint.arch_table, .mtp
  checkpoint::summarize_groups(a);     // summary, checkpoint.layer_groups
  checkpoint::check_quantization(a);   // quant.*
  checkpoint::tally_weights(a);        // checkpoint.weights
  a.ck["problems"] = a.problems;
  a.ck["problem_count"] = a.problem_count;
  return std::move(a.out);
}

}  // namespace specprobe
