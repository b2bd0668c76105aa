// libFuzzer harness: config.json as Python writes it (bare NaN / Infinity / -Infinity), read from
// a file by read_model_config (read_json_relaxed_file -> parse_json_relaxed, then the field
// readers) and, when it reads, turned into model.* facts at several tensor-parallel sizes.
// The text is parsed once, through the production file path: parse_json_relaxed is most of the
// cost of an input, and calling it in memory as well only doubled that cost.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "inputs/checkpoint/model_config.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_model_config_one) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = specprobe::fuzz::scratch_dir() + "/config.json";
  specprobe::fuzz::write_file(path, text);
  auto cfg = specprobe::read_model_config(path);
  if (!cfg) {
    // every error says what is wrong and names the file
    if (cfg.error().message.empty() || cfg.error().where.file.empty()) SPECPROBE_FUZZ_FAIL("property violated");
    return 0;
  }
  for (int tp : {0, 1, 3, 8, -1}) {
    const specprobe::Json facts = specprobe::model_facts(*cfg, tp);
    (void)facts.dump();
  }
  return 0;
}
