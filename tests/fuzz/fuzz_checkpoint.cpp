// libFuzzer harness: a whole checkpoint directory through analyze_checkpoint (config.json with
// NaN/Infinity, model.safetensors.index.json read by the SAX index reader, hf_quant_config.json,
// two shard headers, quantization config parsing, name tables and ignore matching).
// Input: up to five sections separated by "\n----\n" lines:
//   config.json / model.safetensors.index.json / hf_quant_config.json /
//   header of model-00001-of-00002.safetensors / header of model-00002-of-00002.safetensors
// A missing or empty section leaves that file out. Shards get their 8-byte length and a sparse
// data region sized to the largest data_offsets end found (capped), so valid headers validate.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "inputs/checkpoint/checkpoint.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_checkpoint_one) {
  using specprobe::fuzz::write_file;
  // The directory is made once and only ever holds the five names below: each input rewrites the
  // files it has and unlinks the others (cheaper than removing and re-creating the tree; the
  // reader sees the same directory either way).
  static const std::string dir = [] {
    std::string d = specprobe::fuzz::scratch_dir() + "/ckpt";
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto parts = specprobe::fuzz::split_sections(std::string_view(reinterpret_cast<const char*>(data), size), 5);
  static const char* const kNames[] = {"config.json", "model.safetensors.index.json", "hf_quant_config.json",
                                       "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  for (size_t i = 0; i < 5; ++i) {
    const std::string path = dir + "/" + kNames[i];
    if (i >= parts.size() || parts[i].empty())
      ::unlink(path.c_str());
    else if (i >= 3)
      specprobe::fuzz::write_shard(path, parts[i]);
    else
      write_file(path, parts[i]);
  }
  for (const char* engine : {"vllm", "sglang"}) {
    const specprobe::Json facts = {{"engine", {{"name", engine}}}};
    auto r = specprobe::analyze_checkpoint(dir, facts);
    if (r) (void)r->facts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
