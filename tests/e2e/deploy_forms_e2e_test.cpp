// Real deploy forms through the binary, each a defect once found in public deploy files: a
// container's image entrypoint, an unset shell variable, a YAML that sets no model checked with
// --model, compose / Kubernetes / a pasted log giving real facts,
// repeatable options before FILE, stdin and several files.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "run_binary.hpp"

using nlohmann::json;
using specprobe::test::one_line;
using specprobe::test::run_specprobe;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;

using specprobe::test::kExampleCheckpoints;

using specprobe::test::write_file;

namespace {

const std::string kOffline = " --gpu H100 --probes off --no-matrix ";

json json_of(const specprobe::test::RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(!r.out.empty());
  return json::parse(r.out);
}

// How many rules were evaluated (not skipped) in report J.
int evaluated(const json& j) {
  int n = 0;
  for (const auto& r : j["results"])
    if (r.value("state", "") != "skip") ++n;
  return n;
}

}  // namespace

TEST_CASE("deploy forms: docker run with the image's entrypoint and a positional model is read",
          "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string f = write_file(d, "run.sh",
                                   "docker run --gpus all -v /data:/models vllm/vllm-openai:v0.10.2 /models/M \\\n"
                                   "  --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
                                   "\"prompt_lookup_max\": 4}' --tensor-parallel-size 2\n");
  auto r = run_specprobe("check" + kOffline + "--format json " + shell_quote(f));
  INFO(r.err);
  CHECK(r.err.find("no serve command found") == std::string::npos);
  CHECK(r.exit_code != 2);
  CHECK(r.exit_code != 3);
  const json j = json_of(r);
  CHECK(j["facts"]["model"]["id"] == "/models/M");
  CHECK(j["facts"]["spec"]["method"] == "ngram");
  CHECK(j["facts"]["serve"]["tp"] == 2);
  CHECK(j["facts"]["deploy"]["gpus"] == "all");
  CHECK(j["facts"]["deploy"]["engine_version"] == "0.10.2");
  CHECK(j["facts"]["input"]["form"] == "docker-run");
}

TEST_CASE("deploy forms: an unset variable in `--tp-size $TP` is an unknown fact, not exit 2", "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string f = write_file(d, "launch.sh", "python -m sglang.launch_server --model-path m --tp-size $TP\n");
  auto r = run_specprobe("check" + kOffline + "--format json " + shell_quote(f), d);
  INFO(r.err);
  CHECK(r.exit_code != 2);
  CHECK(r.exit_code != 3);
  const json j = json_of(r);
  CHECK(j["facts"]["serve"]["tp"].is_null());
  CHECK(j["facts"]["deploy"]["unresolved"] == json::array({"TP"}));
  // --env gives it a value.
  auto v = run_specprobe("check" + kOffline + "--format json --env TP=4 " + shell_quote(f), d);
  CHECK(json_of(v)["facts"]["serve"]["tp"] == 4);
}

TEST_CASE(
    "deploy forms: `--speculative-algorithm $ALGO` left unset is an unknown plan naming spec.enabled, no internal "
    "error",
    "[e2e][deploy_forms]") {
  // Found by the pipeline fuzzer: the unresolved value nulls spec.enabled, which derive_spec read
  // with a typed default (exit 3).
  const std::string d = temp_dir();
  const std::string f = write_file(d, "launch.sh",
                                   "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
                                   "--speculative-algorithm $ALGO --speculative-num-steps 3\n");
  auto r = run_specprobe("check" + kOffline + "--model " + shell_quote(kExampleCheckpoints + "/gqa16-mtp") +
                             " --format json " + shell_quote(f),
                         d);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  const json j = json_of(r);
  CHECK(j["verdict"] == "unknown");
  CHECK(j["facts"]["spec"]["enabled"].is_null());
  CHECK(j["facts"]["spec"]["k"].is_null());
  bool named = false;
  for (const auto& m : j["missing"]) named |= m["fact"] == "spec.enabled";
  CHECK(named);
  // --env gives it a value: MTP with 3 steps, k = 3.
  auto v = run_specprobe("check" + kOffline + "--model " + shell_quote(kExampleCheckpoints + "/gqa16-mtp") +
                             " --format json --env ALGO=NEXTN " + shell_quote(f),
                         d);
  INFO(v.out << v.err);
  CHECK(v.exit_code != 3);
  CHECK(json_of(v)["facts"]["spec"]["k"] == 3);
}

TEST_CASE("deploy forms: a YAML that sets no model, checked with --model DIR, is no internal error",
          "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string f = write_file(d, "serve.yaml", "a: 1\n");
  auto r = run_specprobe("check" + kOffline + "--model " + shell_quote(kExampleCheckpoints + "/deepseek-v4-flash") +
                         " " + shell_quote(f));
  INFO(r.out << r.err);
  CHECK(r.exit_code != 3);
  CHECK(r.err.find("internal") == std::string::npos);
}

TEST_CASE("deploy forms: compose, Kubernetes and a pasted log give real facts, not every rule skipped",
          "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string compose =
      write_file(d, "compose.yaml",
                 "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    command: [\"org/m\", "
                 "\"--tensor-parallel-size\", \"2\", \"--speculative-config\", "
                 "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 3}']\n");
  const std::string k8s =
      write_file(d, "deploy.yaml",
                 "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
                 "        command: [vllm, serve, org/m, --tensor-parallel-size, '2']\n"
                 "        resources: {limits: {nvidia.com/gpu: 2}}\n");
  const std::string log = write_file(d, "server.log",
                                     "INFO 06-01 10:00:00 [utils.py:253] non-default args: {'model': 'org/m', "
                                     "'tensor_parallel_size': 2, 'speculative_config': {'method': 'ngram', "
                                     "'num_speculative_tokens': 3, 'prompt_lookup_max': 3}}\n");
  for (const std::string& f : {compose, k8s, log}) {
    auto r = run_specprobe("check" + kOffline + "--format json " + shell_quote(f));
    INFO(f << "\n" << r.err);
    CHECK(r.exit_code != 2);
    CHECK(r.exit_code != 3);
    const json j = json_of(r);
    CHECK(j["facts"]["model"]["id"] == "org/m");
    CHECK(j["facts"]["serve"]["tp"] == 2);
    CHECK(evaluated(j) > 0);
  }
}

TEST_CASE("deploy forms: repeatable options never swallow FILE - stdin and several files", "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string f = write_file(d, "serve.yaml", "model: org/m\ntensor_parallel_size: 2\n");
  for (const std::string& opts :
       std::vector<std::string>{"--lib vllm=0.11.0", "--lib vllm=0.11.0 --lib torch=2.8.0", "--ignore SP1001",
                                "--site-packages " + shell_quote(d), "--env TP=2"}) {
    auto r = run_specprobe("check" + kOffline + opts + " " + shell_quote(f));
    INFO(opts << "\n" << r.err);
    CHECK(r.exit_code != 2);
    CHECK(r.out.find("serve.yaml") != std::string::npos);
  }
  // `-` reads stdin.
  auto s = run_specprobe("check" + kOffline + "--format json - < " + shell_quote(f));
  INFO(s.err);
  CHECK(json_of(s)["facts"]["serve"]["tp"] == 2);
  // Several files: one report each; the exit code is the worst.
  const std::string bad = write_file(d, "bad.yaml", "model: [unclosed\n");
  auto m = run_specprobe("check" + kOffline + "--format json " + shell_quote(f) + " " + shell_quote(f));
  CHECK(json_of(m)["reports"].size() == 2);
  auto w = run_specprobe("check" + kOffline + shell_quote(f) + " " + shell_quote(bad));
  CHECK(w.exit_code == 2);
  CHECK(w.err.find("bad.yaml") != std::string::npos);
}

TEST_CASE("deploy forms: servers of one file that differ only in place share one matrix - others get their own",
          "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string spec =
      " --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'";
  const std::string f = write_file(d, "servers.sh",
                                   "vllm serve m" + spec +
                                       " &\n"
                                       "vllm serve m" +
                                       spec +
                                       " &\n"
                                       "vllm serve m" +
                                       spec + " --kv-cache-dtype fp8 --attention-backend FLEX_ATTENTION &\n");
  auto r = run_specprobe("check --gpu H100 --probes off --unknown-ok --format json --model " +
                         shell_quote(kExampleCheckpoints + "/llama-3.1-8b") + " " + shell_quote(f));
  const json j = json_of(r);
  REQUIRE(j["reports"].size() == 3);
  const json& a = j["reports"][0];
  const json& b = j["reports"][1];
  const json& c = j["reports"][2];
  CHECK(a["facts"]["deploy"]["server"] != b["facts"]["deploy"]["server"]);
  CHECK(a["matrix"] == b["matrix"]);
  CHECK(a["matrix"]["cells"].size() > 0);
  // The third server asks for FlexAttention with an FP8 cache (SP3005 fails it): its own summary.
  CHECK(a["facts"]["kv"]["dtype"] != c["facts"]["kv"]["dtype"]);
  CHECK(a["matrix"] != c["matrix"]);
  CHECK_FALSE(a["matrix"]["working_k"].empty());
  CHECK(c["matrix"]["working_k"].empty());
}

TEST_CASE(
    "deploy forms: a well-formed file that starts no server is a report with verdict unknown (exit 4) in every format",
    "[e2e][deploy_forms]") {
  const std::string d = temp_dir();
  const std::string compose = write_file(d, "compose.yaml",
                                         "services:\n  web:\n    image: nginx:1.25\n"
                                         "    command: [\"nginx\", \"-g\", \"daemon off;\"]\n");
  const std::string script = write_file(d, "client.sh", "#!/bin/sh\ncurl -s http://localhost:8000/v1/models\n");
  for (const std::string& f : {compose, script}) {
    INFO(f);
    auto text = run_specprobe("check" + kOffline + shell_quote(f));
    INFO(text.out << text.err);
    CHECK(text.exit_code == 4);
    CHECK(text.out.find("unknown") != std::string::npos);
    CHECK(one_line(text.out).find("no vLLM or SGLang server is started") != std::string::npos);
    CHECK(text.out.find("verdict: supported") == std::string::npos);

    auto js = run_specprobe("check" + kOffline + "--format json " + shell_quote(f));
    CHECK(js.exit_code == 4);
    const json j = json_of(js);
    CHECK(j["verdict"] == "unknown");
    REQUIRE(j["missing"].is_array());
    REQUIRE(j["missing"].size() == 1);
    CHECK(j["missing"][0]["fact"] == "serving.server");
    CHECK(evaluated(j) == 0);

    auto sarif = run_specprobe("check" + kOffline + "--format sarif " + shell_quote(f));
    CHECK(sarif.exit_code == 4);
    CHECK_NOTHROW(json::parse(sarif.out));

    // --unknown-ok accepts it, as it accepts any undecided plan.
    CHECK(run_specprobe("check" + kOffline + "--unknown-ok " + shell_quote(f)).exit_code == 0);
  }
  // With a file that does start a server, the worst exit code wins and both sections are printed.
  const std::string serve = write_file(d, "serve.sh", "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1\n");
  auto both = run_specprobe("check" + kOffline + "--format json " + shell_quote(compose) + " " + shell_quote(serve));
  CHECK(both.exit_code == 4);
}
