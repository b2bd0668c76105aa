// What the probes check before they generate or allocate anything (no GPU): the request set's
// limits, the memory estimates against the buffers the probes then build, and the results a
// probe returns for a request set it cannot use or a machine too small for it.
#include <catch2/catch.hpp>

#include "probes/mqa_logits.hpp"
#include "probes/probe_gpu.hpp"
#include "probes/runner.hpp"
#include "probes/spec_verify.hpp"

using namespace specprobe;
using namespace specprobe::probes;

TEST_CASE("request set limits name the field and the bound", "[probes][limits]") {
  CHECK(probe_size_problem(2, 300, 4, "next_n").empty());
  CHECK(probe_size_problem(1, 4, 4, "next_n").empty());  // context == rows: the shortest usable request
  CHECK(probe_size_problem(kMaxProbeBatch, kMaxProbeTokens / kMaxProbeBatch, 1, "next_n").empty());
  CHECK(probe_size_problem(0, 300, 1, "next_n") == "batch 0 < 1");
  CHECK(probe_size_problem(-5, 300, 1, "next_n") == "batch -5 < 1");
  CHECK(probe_size_problem(kMaxProbeBatch + 1, 300, 1, "next_n").find("the probes' limit") != std::string::npos);
  CHECK(probe_size_problem(2, 3, 4, "next_n") ==
        "context 3 < next_n = 4: a request's context holds all its query rows");
  CHECK(probe_size_problem(2, 0, 1, "k + 1").rfind("context 0 < k + 1 = 1", 0) == 0);
  CHECK(probe_size_problem(2, kMaxProbeContext + 1, 1, "next_n").find("context") != std::string::npos);
  const std::string tokens = probe_size_problem(kMaxProbeBatch, kMaxProbeContext, 1, "next_n");
  CHECK(tokens.find("tokens >") != std::string::npos);
}

TEST_CASE("memory problems say what is needed and what there is", "[probes][limits]") {
  CHECK(memory_problem(10, 20, "device memory", "the device has free").empty());
  CHECK(memory_problem(20, 20, "device memory", "the device has free").empty());
  CHECK(memory_problem(uint64_t{1} << 40, 0, "device memory", "the device has free").empty());  // unknown: no claim
  CHECK(memory_problem(uint64_t{3} << 30, uint64_t{1} << 30, "device memory", "the device has free") ==
        "needs 3.00 GiB of device memory, the device has free 1.00 GiB");
  CHECK(format_gib(uint64_t{3} << 29) == "1.50 GiB");
  CHECK(host_memory_bytes() > 0);
}

TEST_CASE("request lengths: the last request (every one when full) has the whole context", "[probes][limits]") {
  Rng rng(3);
  const auto lens = draw_request_lengths(rng, 50, 4, 100, false);
  REQUIRE(lens.size() == 50);
  CHECK(lens.back() == 100);
  bool shorter = false;
  for (int L : lens) {
    CHECK(L >= 4);
    CHECK(L <= 100);
    shorter |= L < 100;
  }
  CHECK(shorter);
  Rng rng2(3);
  for (int L : draw_request_lengths(rng2, 7, 4, 100, true)) CHECK(L == 100);
}

TEST_CASE("mqa memory estimate is the size of the buffers the probe builds", "[probes][limits]") {
  for (const bool full : {false, true})
    for (const auto& [batch, next_n, heads, head_dim, block_kv, context] :
         std::vector<std::tuple<int, int, int, int, int, int>>{
             {3, 4, 16, 64, 32, 100}, {5, 1, 64, 128, 64, 300}, {2, 8, 32, 128, 256, 1000}}) {
      const MqaBytes est = mqa_input_bytes(batch, next_n, heads, head_dim, block_kv, context, 9, full);
      const MqaInputs in = make_mqa_inputs(batch, next_n, heads, head_dim, block_kv, context, 9, full);
      CHECK(est.q == in.q.size());
      CHECK(est.kv == in.kv.size());
      CHECK(est.weights == in.weights.size() * 4);
      CHECK(est.context_lens == in.context_lens.size() * 4);
      CHECK(est.block_table == in.block_table.size() * 4);
      CHECK(est.logits == static_cast<uint64_t>(in.batch) * in.next_n * in.logits_stride * 4);
      const MqaBytes dev = mqa_buffer_bytes(batch, next_n, heads, head_dim, block_kv, context, in.num_blocks);
      CHECK(dev.total() == est.total());
    }
}

TEST_CASE("spec-verify memory estimate is the size of the buffers the probe builds", "[probes][limits]") {
  for (const bool fp8 : {false, true})
    for (const auto& [batch, k, gqa, heads_kv, head_dim, block_size, context] :
         std::vector<std::tuple<int, int, int, int, int, int, int>>{
             {2, 3, 8, 2, 128, 16, 300}, {4, 0, 6, 1, 64, 32, 77}, {3, 7, 1, 4, 256, 128, 500}}) {
      const SpecVerifyBytes est =
          spec_verify_input_bytes(batch, k, gqa, heads_kv, head_dim, fp8, block_size, context, 4);
      const SpecVerifyInputs in =
          make_spec_verify_inputs(batch, k, gqa, heads_kv, head_dim, fp8, block_size, context, 4);
      CHECK(est.q == in.q.size() * 2);
      CHECK(est.caches == in.k_cache.size() + in.v_cache.size());
      CHECK(est.block_table == in.block_table.size() * 4);
      CHECK(est.seq_lens == in.seq_lens.size() * 4);
      CHECK(est.out == in.out_elems() * 2);
      CHECK(spec_verify_buffer_bytes(in, 0).host() == est.host());
      // Split partials: fp32 output rows plus one log-sum-exp per row and split.
      const uint64_t rows = static_cast<uint64_t>(batch) * (k + 1) * heads_kv * gqa;
      CHECK(spec_verify_buffer_bytes(in, 3).partials == 3 * rows * (head_dim + 1) * 4);
      CHECK(spec_verify_buffer_bytes(in, 3).device() > spec_verify_buffer_bytes(in, 1).device());
    }
}

TEST_CASE("a probe refuses an unusable request set before it touches the GPU", "[probes][limits]") {
  // No GPU is needed: these return before the driver is loaded (CI has none).
  Json mqa = {{"probe", "mqa_logits"}, {"next_n", 8},    {"heads", 64},
              {"head_dim", 128},       {"block_kv", 64}, {"context", 5}};
  Json r = run_mqa_logits_probe(mqa);
  CHECK(r["status"] == kError);
  CHECK(r["reason"].get<std::string>().find("context 5 < next_n = 8") != std::string::npos);
  mqa["context"] = 300;
  mqa["batch"] = 0;
  CHECK(run_mqa_logits_probe(mqa)["status"] == kError);

  Json sv = {{"probe", "spec_verify"}, {"k", 3},           {"gqa", 8},   {"head_dim", 128},
             {"kv_dtype", "bf16"},     {"block_size", 16}, {"batch", -1}};
  CHECK(run_spec_verify_probe(sv)["status"] == kError);
  sv["probe"] = "graph_replay";
  CHECK(run_graph_replay_probe(sv)["reason"].get<std::string>().find("batch -1 < 1") != std::string::npos);
}

TEST_CASE("a probe too large for this machine's memory is a skip with the figures", "[probes][limits]") {
  // Up to 2^30 tokens of 128 KV heads x 256 dims in bf16, K and V: 128 TiB at full lengths, about
  // half with the probe's random lengths; more than any host has either way.
  Json sv = {{"probe", "spec_verify"},
             {"k", 3},
             {"gqa", 1},
             {"heads_kv", 128},
             {"head_dim", 256},
             {"kv_dtype", "bf16"},
             {"block_size", 16},
             {"batch", kMaxProbeBatch},
             {"context", static_cast<int>(kMaxProbeTokens / kMaxProbeBatch)}};
  for (const char* kind : {"spec_verify", "graph_replay"}) {
    sv["probe"] = kind;
    const Json r = kind == std::string("spec_verify") ? run_spec_verify_probe(sv) : run_graph_replay_probe(sv);
    CHECK(r["status"] == kSkip);
    const std::string why = r["reason"];
    CHECK(why.rfind("needs ", 0) == 0);
    CHECK(why.find("GiB of host memory") != std::string::npos);
    CHECK(why.find("this machine has") != std::string::npos);
  }
  CHECK(spec_verify_input_bytes(kMaxProbeBatch, 3, 1, 128, 256, false, 16, 16384, 1).caches > (uint64_t{32} << 40));
}

TEST_CASE("shape limits: heads_kv and block sizes stay where int arithmetic is exact", "[probes][limits]") {
  Json sv = {{"k", 3}, {"gqa", 8}, {"head_dim", 128}, {"kv_dtype", "bf16"}, {"block_size", 16}};
  CHECK(spec_verify_shape_problem(sv).empty());
  sv["heads_kv"] = 0;
  CHECK(spec_verify_shape_problem(sv) == "heads_kv 0 outside 1..128");
  sv["heads_kv"] = 8;
  sv["block_size"] = 1 << 20;
  CHECK(spec_verify_shape_problem(sv).find("block_size") != std::string::npos);
  Json mqa = {{"next_n", 2}, {"heads", 64}, {"head_dim", 128}, {"block_kv", 1 << 20}};
  CHECK(mqa_shape_problem(mqa).find("block_kv") != std::string::npos);
  mqa["block_kv"] = 64;
  CHECK(mqa_shape_problem(mqa).empty());
}

TEST_CASE("a hostile spec is an error result naming the key, never an exception", "[probes][limits]") {
  // The probe child takes any JSON on its command line; run_probe_in_process is what it calls.
  const std::vector<std::pair<Json, std::string>> cases = {
      {Json(5), "not a JSON object"},
      {Json::array({1, 2}), "not a JSON object"},
      {{{"probe", 7}}, "spec key 'probe' is 7, not a string"},
      {{{"probe", "mqa_logits"}, {"batch", "x"}}, "spec key 'batch' is \"x\""},
      {{{"probe", "spec_verify"}, {"k", 1.5}}, "spec key 'k' is 1.5"},
      {{{"probe", "graph_replay"}, {"context", 1e30}}, "spec key 'context'"},
      {{{"probe", "mqa_logits"}, {"seed", uint64_t{18446744073709551615ull}}}, "spec key 'seed'"},
      {{{"probe", "mqa_logits"}, {"next_n", int64_t{1} << 40}}, "spec key 'next_n'"},
      {{{"probe", "mqa_logits"}, {"bench", 1}}, "spec key 'bench' is 1, not true or false"},
      {{{"probe", "spec_verify"}, {"kv_dtype", nullptr}}, "spec key 'kv_dtype' is null, not a string"},
  };
  for (const auto& [spec, expect] : cases) {
    INFO(spec.dump());
    Json r;
    REQUIRE_NOTHROW(r = run_probe_in_process(spec));
    CHECK(r["status"] == kError);
    CHECK(r["reason"].get<std::string>().find(expect) != std::string::npos);
  }
  // In range: reaches the probe (here: its shape check, since next_n is missing).
  const Json ok = run_probe_in_process({{"probe", "mqa_logits"}, {"seed", -2147483648LL}});
  CHECK(ok["status"] == kSkip);
}

TEST_CASE("a context that cannot get memory is a GPU-busy error with the fix - other session failures stay plain",
          "[probes]") {
  const Json spec = {{"probe", "mla_verify"}, {"k", 2}};
  const Json busy = specprobe::probes::session_failure(
      spec,
      specprobe::environment_error("cuCtxCreate(&s->ctx_, 0, dev) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"));
  CHECK(busy["status"] == "error");
  CHECK(busy["gpu_busy"] == true);
  CHECK(busy["cuda_error"] == "CUDA_ERROR_OUT_OF_MEMORY");
  const std::string why = busy["reason"];
  CHECK(why.rfind("GPU busy: ", 0) == 0);
  CHECK(why.find("--probes off") != std::string::npos);
  const Json other =
      specprobe::probes::session_failure(spec, specprobe::environment_error("cuInit failed: CUDA_ERROR_NO_DEVICE"));
  CHECK(other["status"] == "error");
  CHECK_FALSE(other.contains("gpu_busy"));
  CHECK(other["reason"] == "cuInit failed: CUDA_ERROR_NO_DEVICE");
}
