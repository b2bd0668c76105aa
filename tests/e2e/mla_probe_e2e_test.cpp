// `specprobe check --probes all` on an MLA plan, end to end: one mla_verify probe per k of the
// what-if sweep at the plan's shape, and SP4006 / the support matrix reading each k's own result.
// Built without kernels the probes skip (and SP4006 with them); on a GPU they run, and the same
// checks hold for whatever status each k ended with.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"
#include "run_binary.hpp"

using nlohmann::json;
using specprobe::test::run_specprobe;

using specprobe::test::kExampleCheckpoints;
using specprobe::test::kExampleSeeds;

namespace {

// What SP4006 must say for a k whose probe ended with STATUS.
std::string sp4006_for(const std::string& status) {
  if (status == "pass") return "pass";
  if (status == "fail" || status == "crash") return "fail";
  return "skip";  // skip, error (SP9001's), or not run
}

}  // namespace

TEST_CASE("check --probes all on DeepSeek-V4-Flash: mla_verify per k of the sweep, SP4006 per k", "[e2e][mla]") {
  // dsv4-mtp.yaml: TP 8 (64 heads -> 8 per rank), fp8 KV, block size 256, MTP k = 2.
  auto r = run_specprobe("check dsv4-mtp.yaml --model " + kExampleCheckpoints +
                             "/deepseek-v4-flash --gpu H200 --lib vllm=0.25.1 --probes all --format json",
                         kExampleSeeds);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);  // SP4006 is a warning and SP9001 info: neither fails the default --fail-on
  const json j = json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  std::map<int, json> by_k;
  for (const auto& p : j["probes"])
    if (p["probe"] == "mla_verify") by_k[p["spec"]["k"].get<int>()] = p;
  std::vector<int> ks;
  for (const auto& [k, p] : by_k) ks.push_back(k);
  CHECK(ks == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  for (const auto& [k, p] : by_k) {
    INFO(p.dump());
    const json& s = p["spec"];
    CHECK(s["heads"] == 8);
    CHECK(s["latent_dim"] == 448);
    CHECK(s["rope_dim"] == 64);
    CHECK(s["v_dim"] == 512);
    CHECK(s["topk"] == 512);
    CHECK(s["kv_dtype"] == "fp8");
    CHECK(s["block_size"] == 256);
    if (specprobe::probe_kernels_fatbin().empty()) {
      CHECK(p["status"] == "skip");
      CHECK(p["reason"] == specprobe::kNoKernelsReason);
    }
    // The fact each k's cell reads.
    CHECK(j["facts"]["probe"]["mla_verify"]["k"][std::to_string(k)]["status"] == p["status"]);
  }
  CHECK(j["facts"]["probe"]["mla_verify"]["variant"] == "sparse");
  CHECK(j["facts"]["probe"]["mla_verify"]["kv_dtype"] == "fp8");
  // The plan's k = 2.
  REQUIRE(by_k.count(2) == 1);
  bool found = false;
  for (const auto& res : j["results"])
    if (res["id"] == "SP4006") {
      found = true;
      INFO(res.dump());
      CHECK(res["status"] == sp4006_for(by_k[2]["status"].get<std::string>()));
    }
  CHECK(found);
  // Matrix cells at the plan's fp8 KV carry SP4006 exactly at the k whose probe failed.
  int fp8_cells = 0;
  for (const auto& c : j["matrix"]["cells"]) {
    const int k = c["k"].get<int>();
    bool warned = false;
    for (const auto& w : c["warnings"]) warned |= w == "SP4006";
    INFO(c.dump());
    if (c["kv_cache_dtype"] != "fp8") continue;
    ++fp8_cells;
    if (by_k.count(k))
      CHECK(warned == (sp4006_for(by_k[k]["status"].get<std::string>()) == "fail"));
    else
      CHECK_FALSE(warned);  // k 0: no speculation, nothing verified
  }
  CHECK(fp8_cells >= 8);
}
