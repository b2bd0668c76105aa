// libFuzzer harness: a vLLM --config file (YAML or JSON) or any file `specprobe check --config`
// accepts, through read_serving_file (form detection, YAML/JSON readers, vLLM/SGLang builders).
// The file name's extension comes from the input's length (.yaml, .yml, .json, none) so that
// seeds can be plain fixture files and every extension branch is reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "inputs/serving.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_serving_config_one) {
  static const char* const kExt[] = {".yaml", ".yml", ".json", ""};
  const std::string path = specprobe::fuzz::scratch_dir() + "/config" + kExt[size % 4];
  specprobe::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  auto r = specprobe::read_serving_file(path);
  if (!r) {
    if (r.error().where.file.empty() || r.error().message.empty())
      SPECPROBE_FUZZ_FAIL("property violated");  // must name the file
    return 0;
  }
  (void)r->facts.dump();
  return 0;
}
