// vLLM attention-backend selection and CUDA-graph mode resolution (knowledge B.3-B.5).
#include <catch2/catch.hpp>

#include "../support/fixture_plan.hpp"
#include "facts/derive.hpp"

using namespace specprobe;

namespace {

Json backend_plan(const char* gpu, int q, int kv, int head_dim, const char* kv_dtype, int k) {
  Json f = Json::object();
  f["engine"]["name"] = "vllm";
  f["gpu"]["declared"] = gpu;
  f["model"] = {{"num_attention_heads", q},    {"num_kv_heads", kv}, {"head_dim", head_dim}, {"mla", false},
                {"dsa", {{"present", false}}}, {"dtype", "bfloat16"}};
  f["spec"] = {{"enabled", k > 0}, {"method", "mtp"}, {"num_speculative_tokens", k}};
  f["serve"] = {{"kv_cache_dtype", kv_dtype}, {"enforce_eager", false}};
  specprobe::testing::derive_plan(f);
  return f;
}

}  // namespace

TEST_CASE("auto-selection follows vLLM's per-arch priority and validation", "[facts][backends]") {
  CHECK(backend_plan("H100", 32, 8, 128, "auto", 2)["attention"]["selected"] == "FLASH_ATTN");
  CHECK(backend_plan("H100", 32, 8, 128, "fp8", 2)["attention"]["selected"] == "FLASH_ATTN");  // FA3 takes fp8 on SM90
  CHECK(backend_plan("RTX5090", 32, 8, 128, "fp8", 2)["attention"]["selected"] ==
        "FLASHINFER");  // FA rejects fp8 off SM90
  CHECK(backend_plan("GB10", 32, 2, 128, "fp8", 2)["attention"]["selected"] == "FLASHINFER");
  CHECK(backend_plan("B200", 32, 8, 128, "auto", 2)["attention"]["selected"] ==
        "FLASHINFER");  // SM10x prefers FlashInfer
  CHECK(backend_plan("A100", 32, 8, 128, "turboquant_k8v4", 2)["attention"]["selected"] == "TURBOQUANT");
  // head_dim 512 (Gemma-4): FA <= 256 and FlashInfer {64,128,256} reject it; Triton takes it.
  CHECK(backend_plan("H100", 32, 8, 512, "auto", 2)["attention"]["selected"] == "TRITON_ATTN");
}

TEST_CASE("CUDA-graph resolution takes the minimum support over target, drafter and indexer", "[facts][backends]") {
  // FlashInfer without TRTLLM (SM90) declares UNIFORM_SINGLE_TOKEN_DECODE: FULL decode graphs with
  // spec-decode are downgraded to PIECEWISE (vllm#54992).
  Json f = backend_plan("RTX5090", 32, 8, 128, "fp8", 2);
  CHECK(f["cudagraph"]["requested"] == "FULL_AND_PIECEWISE");
  CHECK(f["cudagraph"]["resolved"] == "PIECEWISE");
  CHECK(f["cudagraph"]["downgraded"] == true);
  // Without spec-decode the same backend keeps FULL decode graphs.
  Json g = backend_plan("RTX5090", 32, 8, 128, "fp8", 0);
  CHECK(g["cudagraph"]["resolved"] == "FULL_AND_PIECEWISE");
  // FA3 (ALWAYS) keeps FULL even for mixed batches.
  Json h = backend_plan("H100", 32, 8, 128, "auto", 3);
  h["serve"]["cudagraph_mode"] = "FULL";
  specprobe::testing::derive_plan(h);
  CHECK(h["cudagraph"]["resolved"] == "FULL");
  // enforce-eager means no graphs.
  Json e = backend_plan("H100", 32, 8, 128, "auto", 3);
  e["serve"]["enforce_eager"] = true;
  specprobe::testing::derive_plan(e);
  CHECK(e["cudagraph"]["resolved"] == "NONE");
  CHECK(e["cudagraph"]["full_decode"] == false);
}

TEST_CASE("VLLM_ATTENTION_BACKEND only selects on vLLM < 0.14", "[facts][backends]") {
  Json f = backend_plan("H100", 32, 8, 128, "auto", 0);
  f["attention"]["requested"] = "TRITON_ATTN";
  f["attention"]["requested_source"] = "env";
  specprobe::testing::derive_plan(f);
  CHECK(f["attention"]["selected"] == "FLASH_ATTN");  // ignored: version unknown -> newest behaviour
  f["attention"]["requested"] = "TRITON_ATTN";
  f["lib"]["vllm"]["version"] = "0.11.0";
  specprobe::testing::derive_plan(f);
  CHECK(f["attention"]["selected"] == "TRITON_ATTN");
}

TEST_CASE("MTP k defaults to the model's MTP depth (n_predict)", "[facts][spec]") {
  Json f = Json::object();
  f["spec"] = {{"enabled", true}, {"method", "mtp"}};
  f["model"]["mtp_depth"] = 1;
  specprobe::testing::derive_plan(f);
  CHECK(f["spec"]["k"] == 1);
  CHECK(f["spec"]["next_n"] == 2);
  CHECK(f["spec"]["k_source"] == "n_predict");
}
