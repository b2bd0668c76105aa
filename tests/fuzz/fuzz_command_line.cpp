// libFuzzer harness: serving command lines, vLLM and SGLang. An input whose first line is
// exactly "#argv" is an argv vector (one word per following line) for read_serving_argv, as
// after `specprobe check --`; anything else is a deploy script read by read_serving_file (.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "inputs/serving.hpp"

SPECPROBE_FUZZ_ENTRY(fuzz_command_line_one) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kArgv = "#argv\n";
  if (text.substr(0, kArgv.size()) == kArgv) {
    text.remove_prefix(kArgv.size());
    std::vector<std::string> argv;
    while (!text.empty() && argv.size() < 4096) {
      const size_t nl = text.find('\n');
      argv.emplace_back(text.substr(0, nl));
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    auto r = specprobe::read_serving_argv(argv);
    if (r)
      (void)r->facts.dump();  // throws on invalid UTF-8, as the JSON printer would
    else if (r.error().message.empty())
      SPECPROBE_FUZZ_FAIL("property violated");
    return 0;
  }
  const std::string path = specprobe::fuzz::scratch_dir() + "/serve.sh";
  specprobe::fuzz::write_file(path, text);
  auto r = specprobe::read_serving_file(path);
  if (r)
    (void)r->facts.dump();
  else if (r.error().where.file.empty())
    SPECPROBE_FUZZ_FAIL("property violated");
  return 0;
}
