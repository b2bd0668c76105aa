// system_services reads a checkpoint once per process for what the analysis depends on (issue 49:
// several files checked in one call against one --model share it).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "e2e/run_binary.hpp"
#include "pipeline/services.hpp"

using namespace specprobe;
using namespace specprobe::test;
namespace fs = std::filesystem;

TEST_CASE("services: a checkpoint is read once per directory, engine and MTP depth", "[pipeline][services]") {
  auto services = system_services();
  REQUIRE(services.has_value());
  REQUIRE(services->analyze_checkpoint);
  const std::string dir = temp_dir() + "/ckpt";
  fs::create_directories(dir);
  fs::copy_file(kExampleCheckpoints + "/llama-3.1-8b/config.json", dir + "/config.json");
  const Json vllm = {{"engine", {{"name", "vllm"}}}};
  auto first = services->analyze_checkpoint(dir, vllm);
  REQUIRE(first.has_value());
  // The directory loses its config.json: an analysis now fails (input error)...
  fs::remove(dir + "/config.json");
  CHECK_FALSE(analyze_checkpoint(dir, vllm).has_value());
  // ...but the same directory for the same facts is the analysis already made,
  auto again = services->analyze_checkpoint(dir, vllm);
  REQUIRE(again.has_value());
  CHECK(again->facts == first->facts);
  // while another engine or MTP depth is read anew.
  CHECK_FALSE(services->analyze_checkpoint(dir, Json{{"engine", {{"name", "sglang"}}}}).has_value());
  CHECK_FALSE(services->analyze_checkpoint(dir, Json{{"engine", {{"name", "vllm"}}}, {"model", {{"mtp_depth", 1}}}})
                  .has_value());
  // A failed read is not remembered.
  CHECK_FALSE(services->analyze_checkpoint(dir + "-missing", vllm).has_value());
  fs::create_directories(dir + "-missing");
  fs::copy_file(kExampleCheckpoints + "/llama-3.1-8b/config.json", dir + "-missing/config.json");
  CHECK(services->analyze_checkpoint(dir + "-missing", vllm).has_value());
}
