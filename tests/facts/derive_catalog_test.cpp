// Derived facts behind the rule catalog: vLLM speculative-config validation (specval.*, triton.*),
// SGLang server args (sglang.*) and DSA indexer shape limits (dsa.shape.*), through derive_facts.
#include <catch2/catch.hpp>

#include "../support/fixture_plan.hpp"
#include "facts/derive.hpp"

using namespace specprobe;

namespace {

Json vllm_plan() {
  return Json::parse(R"({"engine": {"name": "vllm"}, "gpu": {"declared": "H200"},
    "model": {"model_type": "llama", "num_attention_heads": 32, "num_kv_heads": 8, "head_dim": 128,
              "gqa_ratio": 4, "mla": false, "dsa": {"present": false}},
    "spec": {"enabled": true, "method": "eagle3", "num_speculative_tokens": 3, "draft_model": "x/eagle3"},
    "serve": {"tp": 1, "kv_cache_dtype": "auto"}})");
}

}  // namespace

TEST_CASE("specval: k vs n_predict, draft TP, draft model, max_model_len", "[facts][specval]") {
  Json f = vllm_plan();
  f["spec"]["method"] = "mtp";
  f["model"]["mtp_depth"] = 2;
  f["spec"]["num_speculative_tokens"] = 3;
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["n_predict"] == 2);
  CHECK(f["specval"]["k_divisible"] == false);
  f["spec"]["num_speculative_tokens"] = 4;
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["k_divisible"] == true);

  Json g = vllm_plan();
  g["serve"]["tp"] = 8;
  g["spec"]["draft_tp"] = 4;
  g["spec"]["draft_model"] = nullptr;
  g["spec"]["max_model_len"] = 4096;
  g["serve"]["max_model_len"] = 2048;
  specprobe::testing::derive_plan(g);
  CHECK(g["specval"]["draft_tp_ok"] == false);
  CHECK(g["specval"]["draft_model_missing"] == true);
  CHECK(g["specval"]["max_model_len_ok"] == false);
  CHECK(g["specval"]["k_divisible"].is_null());  // EAGLE3 head not read
}

TEST_CASE("specval: scheduler budget uses per-method draft slots and per-GPU defaults", "[facts][specval]") {
  Json f = vllm_plan();
  f["spec"]["method"] = "dflash";
  f["spec"]["num_speculative_tokens"] = 16;
  f["serve"]["max_num_batched_tokens"] = 4096;
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["draft_slots"] == 16);
  CHECK(f["specval"]["max_num_seqs"] == 1024);  // H200: >= 70 GiB, not A100
  CHECK(f["specval"]["scheduler_defaults"] == "seqs");
  CHECK(f["specval"]["scheduled_budget"] == 4096 - 16 * 1024);
  f["spec"]["method"] = "eagle3";
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["draft_slots"] == 0);
  f["spec"]["parallel_drafting"] = true;  // P-EAGLE
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["draft_slots"] == 15);
}

TEST_CASE("specval: sequence parallelism, async scheduling, ngram window, triton tiles", "[facts][specval]") {
  Json f = vllm_plan();
  f["serve"]["tp"] = 4;
  f["serve"]["compilation_config"] = Json::parse(R"({"pass_config": {"enable_sp": true}})");
  f["spec"]["num_speculative_tokens"] = 2;
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["sp_enabled"] == true);
  CHECK(f["specval"]["sp_divisible"] == false);
  CHECK(f["specval"]["sp_lcm"] == 12);
  CHECK(f["triton"]["verify_rows"] == 12);
  CHECK(f["triton"]["verify_rows_pow2"] == false);
  CHECK(f["triton"]["next_n_pow2"] == false);
  f["spec"]["num_speculative_tokens"] = 3;
  specprobe::testing::derive_plan(f);
  CHECK(f["specval"]["sp_divisible"] == true);
  CHECK(f["triton"]["verify_rows_pow2"] == true);

  Json n = vllm_plan();
  n["spec"]["method"] = "ngram";
  n["spec"]["prompt_lookup_min"] = 6;
  specprobe::testing::derive_plan(n);
  CHECK(n["specval"]["prompt_lookup_max"] == 6);
  CHECK(n["specval"]["prompt_lookup_ok"] == true);
  CHECK(n["specval"]["async_ok"] == false);
  n["spec"]["prompt_lookup_max"] = 4;
  specprobe::testing::derive_plan(n);
  CHECK(n["specval"]["prompt_lookup_ok"] == false);
}

TEST_CASE("specval is absent without vLLM speculative decoding", "[facts][specval]") {
  Json f = vllm_plan();
  f["spec"]["enabled"] = false;
  specprobe::testing::derive_plan(f);
  CHECK_FALSE(f.contains("specval"));
}

TEST_CASE("sglang: topk, page size after backend adjustments, backends, spec v2", "[facts][sglang]") {
  Json f = vllm_plan();
  f["engine"]["name"] = "sglang";
  f["spec"] = Json::parse(R"({"enabled": true, "method": "eagle", "topk": 4, "num_draft_tokens": 8})");
  f["attention"]["requested"] = "triton";
  f["serve"]["block_size"] = 16;
  f["env"]["SGLANG_ENABLE_SPEC_V2"] = "True";
  specprobe::testing::derive_plan(f);
  CHECK(f["sglang"]["topk"] == 4);
  CHECK(f["sglang"]["page_size"] == 16);
  CHECK(f["sglang"]["paged_topk_ok"] == false);
  CHECK(f["sglang"]["spec_v2"] == true);
  CHECK(f["sglang"]["backends"] == Json::array({"triton"}));
  CHECK_FALSE(f.contains("specval"));

  // Built-in MTP with auto parameters: topk 1; a DSA model forces page size 64.
  Json m = f;
  m["spec"] = Json::parse(R"({"enabled": true, "method": "mtp"})");
  m["serve"].erase("block_size");
  m["attention"].erase("requested");
  m["model"]["dsa"]["present"] = true;
  m["model"]["mla"] = true;
  specprobe::testing::derive_plan(m);
  CHECK(m["sglang"]["topk"] == 1);
  CHECK(m["sglang"]["topk_source"] == "auto-mtp");
  CHECK(m["sglang"]["page_size"] == 64);

  // topk 1: draft tokens are num_steps + 1.
  Json c = f;
  c["spec"] = Json::parse(R"({"enabled": true, "method": "eagle", "topk": 1, "num_steps": 2})");
  specprobe::testing::derive_plan(c);
  CHECK(c["triton"]["num_draft_tokens"] == 3);
  CHECK(c["triton"]["num_draft_tokens_pow2"] == false);
}

TEST_CASE("dsa.shape: indexer heads per DeepGEMM line and arch, FP4 cache", "[facts][dsa]") {
  Json f = Json::parse(R"({"engine": {"name": "vllm"}, "gpu": {"declared": "H200"},
    "model": {"model_type": "deepseek_v4", "mla": true, "num_attention_heads": 64, "num_kv_heads": 1, "head_dim": 512,
              "dsa": {"present": true, "index_n_heads": 16, "index_head_dim": 128}, "mtp_depth": 1},
    "spec": {"enabled": true, "method": "mtp", "num_speculative_tokens": 1},
    "lib": {"deep_gemm": {"version": "2.6.1+54e2261"}},
    "serve": {"tp": 1, "kv_cache_dtype": "auto"}})");
  specprobe::testing::derive_plan(f);
  CHECK(f["dsa"]["shape"]["heads_ok"] == false);
  CHECK(f["dsa"]["shape"]["heads_accepted"] == Json::array({32, 64}));
  CHECK(f["dsa"]["shape"]["fp4_cache_ok"] == true);
  f["lib"]["deep_gemm"]["version"] = "2.5.0+a6b593d";
  specprobe::testing::derive_plan(f);
  CHECK(f["dsa"]["shape"]["heads_ok"] == true);
  f["lib"]["deep_gemm"]["version"] = "2.5.0";  // main or nv_dev: they disagree on 16 heads
  specprobe::testing::derive_plan(f);
  CHECK(f["dsa"]["shape"]["heads_ok"].is_null());
  f["serve"]["attention_config"] = Json::parse(R"({"use_fp4_indexer_cache": true})");
  specprobe::testing::derive_plan(f);
  CHECK(f["dsa"]["shape"]["fp4_cache_ok"] == false);
}
