// Replays the pipeline harness's corpus (tests/fuzz/seeds/pipeline, kept minimized) and every
// input that once broke it (tests/fuzz/regressions/pipeline) through the harness body without
// libFuzzer, so the release and ASan+UBSan suites keep them fixed (the other harnesses replay in
// tests/hostile/fuzz_replay_test.cpp). A property that fails throws here instead of trapping.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define SPECPROBE_FUZZ_REPLAY
#include "../fuzz/fuzz_pipeline.cpp"

TEST_CASE("fuzz replay: the pipeline harness's corpus and past crashes", "[pipeline][fuzz-replay]") {
  namespace fs = std::filesystem;
  const fs::path root = SPECPROBE_SOURCE_DIR;
  std::vector<fs::path> inputs;
  for (const char* d : {"tests/fuzz/seeds/pipeline", "tests/fuzz/regressions/pipeline"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root / d, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file() && it->path().filename() != "README.md") inputs.push_back(it->path());
  }
  std::sort(inputs.begin(), inputs.end());
  CHECK(inputs.size() >= 20);
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    INFO(p.string());
    CHECK_NOTHROW(fuzz_pipeline_one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}
