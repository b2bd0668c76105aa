// libFuzzer harness: config.json as Python writes it (bare NaN / Infinity / -Infinity), parsed
// in memory by parse_json_relaxed and, when it is an object, read from a file by
// read_model_config and turned into model.* facts at several tensor-parallel sizes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "inputs/json_relaxed.hpp"
#include "inputs/model_config.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_model_config_one) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = specprobe::parse_json_relaxed(text, "config.json");
  if (!parsed) {
    if (parsed.error().message.empty()) SPECPROBE_FUZZ_FAIL("property violated");
    return 0;
  }
  if (!parsed->value.is_object()) return 0;
  const std::string path = specprobe::fuzz::scratch_dir() + "/config.json";
  specprobe::fuzz::write_file(path, text);
  auto cfg = specprobe::read_model_config(path);
  if (!cfg) return 0;
  for (int tp : {0, 1, 3, 8, -1}) {
    const specprobe::Json facts = specprobe::model_facts(*cfg, tp);
    (void)facts.dump();
  }
  return 0;
}
