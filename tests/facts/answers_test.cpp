// Answer records (src/facts/answers.hpp): which plan facts a record answers for, what a cell of
// another shape drops, and the derived probe.errors_at_plan.
#include <catch2/catch.hpp>

#include "facts/answers.hpp"

using namespace specprobe;

namespace {

Json probe_result(const std::string& status) { return {{"probe", "mla_verify"}, {"status", status}}; }

}  // namespace

TEST_CASE("answers: a record applies where its facts hold, a missing boolean reading false", "[facts][answers]") {
  Json f = {{"spec", {{"k", 3}}}, {"kv", {{"fp8", true}}}};
  append_answer(f, probe_result("pass"), "MLA verify attention at k=3 (fp8 KV)", "probe.mla_verify.k.3",
                {{"spec.k", 3}, {"kv.fp8", true}});
  append_answer(f, probe_result("error"), "MLA verify attention at k=4 (fp8 KV)", "probe.mla_verify.k.4",
                {{"spec.k", 4}, {"kv.fp8", true}});
  append_answer(f, probe_result("fail"), "MLA verify attention at k=3 (bf16 KV)", "probe.mla_verify.k.3",
                {{"spec.k", 3}, {"kv.fp8", false}});
  auto applying = applicable_answers(f);
  REQUIRE(applying.size() == 1);
  CHECK(answer_phrase(*applying[0]) == "MLA verify attention at k=3 (fp8 KV) pass");
  f["kv"].erase("fp8");  // unknown reads as false: the bf16 record applies
  applying = applicable_answers(f);
  REQUIRE(applying.size() == 1);
  CHECK((*applying[0])["status"] == "fail");
  Json says = {{"where", Json::object()}, {"says", "DeepGEMM 2.6.1 refused next_n=3 on H200"}, {"status", "fail"}};
  CHECK(answer_applies(says, f));
  CHECK(answer_phrase(says) == "DeepGEMM 2.6.1 refused next_n=3 on H200");
  CHECK_FALSE(answer_applies(Json::array(), f));
}

TEST_CASE("answers: a cell of another shape drops the plan-shape-only records and their facts", "[facts][answers]") {
  Json f = {{"probe", {{"spec_verify", {{"status", "fail"}}}, {"mla_verify", {{"k", {{"3", {{"status", "pass"}}}}}}}}}};
  append_answer(f, {{"probe", "spec_verify"}, {"status", "fail"}}, "spec-verify attention", "probe.spec_verify",
                Json::object(), true);
  append_answer(f, probe_result("pass"), "MLA verify attention at k=3 (bf16 KV)", "probe.mla_verify.k.3",
                {{"spec.k", 3}});
  drop_plan_shape_answers(f);
  CHECK_FALSE(f["probe"].contains("spec_verify"));
  CHECK(f["probe"]["mla_verify"]["k"].contains("3"));
  REQUIRE(f["probe"]["answers"].size() == 1);
  CHECK(f["probe"]["answers"][0]["facts"] == "probe.mla_verify.k.3");
}

TEST_CASE("answers: probe.errors_at_plan lists the applicable records that errored", "[facts][answers]") {
  Json none = {{"spec", {{"k", 2}}}};
  derive_answers(none);
  CHECK(find_fact(none, "probe.errors_at_plan") == nullptr);  // no probe ran: not written
  Json f = {{"spec", {{"k", 2}}}};
  append_answer(f, probe_result("error"), "MLA verify attention at k=2 (bf16 KV)", "probe.mla_verify.k.2",
                {{"spec.k", 2}});
  append_answer(f, probe_result("error"), "MLA verify attention at k=5 (bf16 KV)", "probe.mla_verify.k.5",
                {{"spec.k", 5}});
  append_answer(f, probe_result("pass"), "MLA verify attention at k=2 (bf16 KV)", "probe.mla_verify.k.2",
                {{"spec.k", 2}});
  derive_answers(f);
  CHECK(f["probe"]["errors_at_plan"] == Json::array({"probe.mla_verify.k.2"}));
}
