// Replays every fuzz seed and every input that once crashed a harness (tests/fuzz/regressions/
// <harness>/) through the harness bodies, without libFuzzer, so the regular and the ASan+UBSan
// suites keep them fixed. A harness property that fails throws here instead of trapping.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#define SPECPROBE_FUZZ_REPLAY
#include "../fuzz/fuzz_checkpoint.cpp"
#include "../fuzz/fuzz_command_line.cpp"
#include "../fuzz/fuzz_hub_answers.cpp"
#include "../fuzz/fuzz_jsonlogic.cpp"
#include "../fuzz/fuzz_model_config.cpp"
#include "../fuzz/fuzz_rule_file.cpp"
#include "../fuzz/fuzz_safetensors_header.cpp"
#include "../fuzz/fuzz_serving_config.cpp"
#include "../fuzz/fuzz_stack_result.cpp"
#include "../fuzz/fuzz_version.cpp"

namespace {

namespace fs = std::filesystem;
using Harness = std::function<int(const uint8_t*, size_t)>;

// Every regular file under the harness's seed and regression directories.
std::vector<fs::path> inputs_of(const std::string& name, const std::vector<std::string>& extra) {
  const fs::path root = SPECPROBE_SOURCE_DIR;
  std::vector<fs::path> dirs = {root / "tests/fuzz/regressions" / name};
  for (const std::string& e : extra) dirs.push_back(root / e);
  std::vector<fs::path> out;
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(d, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file()) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void replay(const std::string& name, const Harness& harness, const std::vector<std::string>& seed_dirs) {
  for (const fs::path& p : inputs_of(name, seed_dirs)) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    INFO(name << " <- " << p.string());
    CHECK_NOTHROW(harness(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}

// The JSON Logic harness's seeds as tests/fuzz/CMakeLists.txt writes them for libFuzzer: each
// [logic, data, expected] case of tests/data/jsonlogic/cases.json as "logic\n----\ndata\n" (the
// fuzz tree generates them; the regular tree replays them from the cases themselves).
size_t replay_jsonlogic_cases() {
  std::ifstream in(fs::path(SPECPROBE_SOURCE_DIR) / "tests/data/jsonlogic/cases.json");
  const nlohmann::json cases = nlohmann::json::parse(in, nullptr, false);
  REQUIRE(cases.is_array());
  size_t n = 0;
  for (const auto& c : cases) {
    if (!c.is_array() || c.size() < 2) continue;
    const std::string bytes = c[0].dump() + "\n----\n" + c[1].dump() + "\n";
    INFO("jsonlogic <- " << bytes);
    CHECK_NOTHROW(fuzz_jsonlogic_one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz replay: seeds and past crashes of every harness", "[hostile][fuzz-replay]") {
  replay("safetensors_header", fuzz_safetensors_header_one, {"tests/fuzz/seeds/safetensors"});
  replay("checkpoint", fuzz_checkpoint_one, {"tests/fuzz/seeds/checkpoint", "docs/examples/checkpoints"});
  replay("model_config", fuzz_model_config_one, {"tests/data/checkpoint"});
  replay("serving_config", fuzz_serving_config_one, {"tests/data/serving", "docs/examples/seeds"});
  replay("command_line", fuzz_command_line_one, {"tests/fuzz/seeds/command", "tests/data/serving"});
  replay("rule_file", fuzz_rule_file_one, {"rules/1xxx", "rules/3xxx"});
  replay("jsonlogic", fuzz_jsonlogic_one, {});
  CHECK(replay_jsonlogic_cases() > 100);
  replay("version", fuzz_version_one, {"tests/fuzz/seeds/version"});
  replay("stack_result", fuzz_stack_result_one, {"tests/fuzz/seeds/stack"});
  replay("hub_answers", fuzz_hub_answers_one, {"tests/fuzz/seeds/hub"});
}
