// The CLI surface: every exit code, malformed inputs (exit 2 naming the file and place), the JSON
// report against its schema, the informational subcommands.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/json.hpp"
#include "gpu/cuda_session.hpp"
#include "probes/probe_common.hpp"
#include "run_binary.hpp"

using nlohmann::json;
using specprobe::test::run_specprobe;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;

using specprobe::test::kExampleCheckpoints;
using specprobe::test::kExampleSeeds;

using specprobe::test::write_file;

namespace {

// Runs ARGS; the exit code must be CODE and TEXT must appear in stdout (exit 0) or stderr.
void check_run(const std::string& args, int code, const std::string& text) {
  auto r = run_specprobe(args);
  INFO(args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK((code == 0 ? r.out : r.err).find(text) != std::string::npos);
}

}  // namespace

TEST_CASE("exit 0: a clean plan", "[e2e][cli]") {
  auto r = run_specprobe("check --gpu H100 --model " + kExampleCheckpoints +
                         "/llama-3.1-8b -- vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("verdict: supported") != std::string::npos);
}

TEST_CASE("exit 4: a plan that cannot be decided is unknown, says what is missing, and is never a pass", "[e2e][cli]") {
  // The same plan without the model's metadata: "supported" would claim rules were evaluated that
  // could not be (issue 36). Every format says unknown and why; -q still shows it.
  const std::string cmd = " -- vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1";
  const std::string plan = "check --gpu H100";
  auto r = run_specprobe(plan + cmd);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("verdict: unknown") != std::string::npos);
  // Why the model was not read (the tests run offline) and how to supply it.
  CHECK(specprobe::test::one_line(r.out).find(
            "model.architecture (needed by the plan): model 'meta-llama/Llama-3.1-8B-Instruct': offline "
            "(HF_HUB_OFFLINE=1)") != std::string::npos);
  CHECK(specprobe::test::one_line(r.out).find("or pass --model DIR") != std::string::npos);
  auto q = run_specprobe(plan + " -q" + cmd);
  CHECK(q.exit_code == 4);
  CHECK(q.out.find("could not decide without:") != std::string::npos);
  auto j = run_specprobe(plan + " --format json" + cmd);
  const json doc = json::parse(j.out);
  CHECK(doc["verdict"] == "unknown");
  REQUIRE(doc["missing"].size() >= 1);
  CHECK(doc["missing"][0]["fact"] == "model.architecture");
  CHECK(run_specprobe(plan + " --unknown-ok" + cmd).exit_code == 0);
  CHECK(run_specprobe(plan + " --exit-zero" + cmd).exit_code == 0);
  // A declared-GPU fallback is an assumption shown in every mode, -q and JSON included.
  auto fb = run_specprobe("check --format json --unknown-ok -- vllm serve m");
  const json fj = json::parse(fb.out);
  if (fj["facts"]["gpu"]["source"] == "declared") {
    bool listed = false;
    for (const auto& a : fj["assumptions"])
      listed |= a.get<std::string>().find("no GPU was visible") != std::string::npos;
    CHECK(listed);
    CHECK(run_specprobe("check -q --unknown-ok -- vllm serve m").out.find("no GPU was visible") != std::string::npos);
  }
}

TEST_CASE("exit 1: an error finding - --fail-on moves the threshold", "[e2e][cli]") {
  const std::string args = "check turboquant-ngram.yaml --model " + kExampleCheckpoints + "/llama-3.1-8b --gpu RTX5090";
  CHECK(run_specprobe(args, kExampleSeeds).exit_code == 1);
  CHECK(run_specprobe(args + " --fail-on none", kExampleSeeds).exit_code == 0);
  const std::string warn_only =
      "check dsv4-mtp.yaml --model " + kExampleCheckpoints + "/deepseek-v4-flash --gpu H200 --lib vllm=0.25.1";
  CHECK(run_specprobe(warn_only, kExampleSeeds).exit_code == 0);
  CHECK(run_specprobe(warn_only + " --fail-on warning", kExampleSeeds).exit_code == 1);
  CHECK(run_specprobe(warn_only + " --fail-on info", kExampleSeeds).exit_code == 1);
}

TEST_CASE("exit 2: usage errors, including CLI11's own", "[e2e][cli]") {
  CHECK(run_specprobe("").exit_code == 2);
  CHECK(run_specprobe("check").exit_code == 2);
  CHECK(run_specprobe("check --no-such-flag x.yaml").exit_code == 2);
  CHECK(run_specprobe("check --format xml x.yaml").exit_code == 2);
  CHECK(run_specprobe("frobnicate").exit_code == 2);
  auto gpu = run_specprobe("check --gpu Z9000 -- vllm serve m");
  CHECK(gpu.exit_code == 2);
  CHECK(gpu.err.find("unknown GPU") != std::string::npos);
  auto lib = run_specprobe("check --lib vllm -- vllm serve m");
  CHECK(lib.exit_code == 2);
  CHECK(run_specprobe("check --lib nosuchlib=1.0 -- vllm serve m").exit_code == 2);
  CHECK(run_specprobe("check --lib vllm=not.a.version! -- vllm serve m").exit_code == 2);
  auto ex = run_specprobe("explain SP3OO1");
  CHECK(ex.exit_code == 2);
  CHECK(ex.err.find("did you mean SP3001") != std::string::npos);
  // The test-only probes are not the product's: neither accepted nor named in the help.
  check_run("probe --probe test_fault,test_hang --timeout 3", 2,
            "unknown probe 'test_fault' (mqa_logits, spec_verify, graph_replay, mla_verify, all)");
  check_run("probe --help", 0, "mqa_logits, spec_verify, graph_replay, mla_verify, all");
  CHECK(run_specprobe("probe --help").out.find("test_") == std::string::npos);
  CHECK(run_specprobe("--help").exit_code == 0);
  CHECK(run_specprobe("--version").exit_code == 0);
  // probe sizes and timeouts: 0, negatives, NaN and inf are typing errors, never "the default"
  // or a timeout that kills every probe at once (checked before any GPU is looked for).
  for (const char* bad : {"--batch 0", "--batch -1", "--context 0", "--heads-kv 0", "--tiles-per-cta 0", "--splits -3",
                          "--timeout -1", "--timeout nan", "--timeout inf", "--timeout 0",
                          "--stack --stack-timeout nan", "--next-n 8 --context 4", "--batch 65536 --context 4194304"}) {
    auto r = run_specprobe(std::string("probe ") + bad);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.err.empty());
  }
  CHECK(run_specprobe("check --gpu H100 --stack-timeout -5 -- vllm serve m").exit_code == 2);
}

TEST_CASE("exit 2: malformed input names the file and place", "[e2e][cli][malformed]") {
  const std::string d = temp_dir();
  struct Case {
    const char* name;
    std::string content;
    const char* expect_in_message;  // besides the file name
  };
  const Case cases[] = {
      {"bad.yaml", "model: x\nspeculative-config: {method: mtp\n", ":"},
      {"badjson-in-yaml.yaml", "model: x\nspeculative-config: '{\"method\": \"mtp\", num_speculative_tokens: 2}'\n",
       ":2"},
      {"negative-k.yaml", "model: x\nspeculative-config: {method: mtp, num_speculative_tokens: -1}\n", ":2"},
      {"fraction-k.json",
       "{\"model\": \"x\", \"speculative_config\": {\"method\": \"mtp\", \"num_speculative_tokens\": 1.5}}", ":1"},
      {"string-k.yaml", "model: x\nspeculative-config: {method: mtp, num_speculative_tokens: two}\n", ":2"},
      {"bad.json", "{\"model\": \"x\", \"kv_cache_dtype\": }", ":1"},
      {"unterminated.sh", "vllm serve m --speculative-config '{\"method\": \"mtp\"\n", ":1"},
      {"empty.yaml", "", "empty"},
      {"list.yaml", "- model: x\n- tensor-parallel-size: 2\n", ":1"},
      {"spec-list.yaml", "model: x\nspeculative-config: [mtp, 2]\n", ":2"},
      {"garbage.bin",
       std::string("\x7f"
                   "ELF\x02\x01\x01\0\0\0\xff\xfe\x00\x01",
                   14),
       ""},
      // A well-formed file that starts no server is not malformed: a report with verdict unknown
      // (exit 4), tested in tests/e2e/deploy_forms_e2e_test.cpp.
  };
  for (const auto& c : cases) {
    const std::string p = write_file(d, c.name, c.content);
    auto r = run_specprobe("check " + shell_quote(p) + " --gpu H100");
    INFO(c.name << " -> exit " << r.exit_code << " stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.name) != std::string::npos);
    CHECK(r.err.find(c.expect_in_message) != std::string::npos);
    CHECK(r.out.empty());
  }
  check_run("check /nonexistent/serve.yaml", 2, "/nonexistent/serve.yaml");
  check_run("check --model /nonexistent/ckpt --gpu H100 -- vllm serve m", 2, "/nonexistent/ckpt");
}

TEST_CASE("exit 3: environment errors", "[e2e][cli]") {
  // A report that cannot be written is the I/O code, 5 (it was 3 before it existed).
  auto out = run_specprobe("check --gpu H100 --output /nonexistent-dir/report.json -- vllm serve m");
  CHECK(out.exit_code == 5);
  // `gpu` on a machine without a GPU or driver: a clear message and exit 3; with one: exit 0.
  auto gpu = run_specprobe("gpu --format json");
  if (gpu.exit_code == 0) {
    CHECK(json::parse(gpu.out)["gpus"].size() > 0);
  } else {
    CHECK(gpu.exit_code == 3);
    CHECK_FALSE(gpu.err.empty());
    CHECK(json::parse(gpu.out)["problem"].is_string());
  }
}

TEST_CASE("no GPU: check falls back to a declared GPU and says so", "[e2e][cli]") {
  auto r = run_specprobe("check --format json --unknown-ok -- vllm serve m");
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  if (j["facts"]["gpu"]["source"] == "declared") {
    CHECK(j["facts"]["gpu"]["fallback"] == true);
    bool said = false;
    for (const auto& n : j["notes"]) said |= n["message"].get<std::string>().find("declared") != std::string::npos;
    CHECK(said);
  }
}

TEST_CASE("JSON reports validate against docs/schema/report-1.json", "[e2e][cli][schema]") {
  const std::string d = temp_dir();
  const std::vector<std::string> runs = {
      "check dsv4-mtp.yaml --model " + kExampleCheckpoints + "/deepseek-v4-flash --gpu H200 --lib vllm=0.25.1",
      "check gb10-flashinfer-gqa16.json --model " + kExampleCheckpoints + "/gqa16-mtp --gpu GB10",
      "check turboquant-ngram.sh --gpu RTX5090",
      "check dsv4-mtp.yaml --gpu H200 --no-matrix",  // no --model: verdict unknown (exit 4)
  };
  std::string files;
  int i = 0;
  for (const auto& args : runs) {
    const std::string out = d + "/report" + std::to_string(i++) + ".json";
    auto r = run_specprobe(args + " --format json --output " + shell_quote(out), kExampleSeeds);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4));
    files += " " + shell_quote(out);
  }
  const std::string cmd = "/usr/bin/python3 " +
                          shell_quote(std::string(SPECPROBE_SOURCE_DIR) + "/tests/tools/validate_schema.py") + " " +
                          shell_quote(std::string(SPECPROBE_SOURCE_DIR) + "/docs/schema/report-1.json") + files;
  CHECK(std::system(cmd.c_str()) == 0);
  // Several files, compact (argv given once) and whole, with --fail-on risk: reports-1.json.
  std::string many;
  for (const std::string results : {"failing", "all"}) {
    const std::string out = d + "/many-" + results + ".json";
    auto r =
        run_specprobe("check dsv4-mtp.yaml turboquant-ngram.sh --gpu H200 --fail-on risk --format json --results " +
                          results + " --output " + shell_quote(out),
                      kExampleSeeds);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4));
    many += " " + shell_quote(out);
  }
  const std::string cmd_many =
      "/usr/bin/python3 " + shell_quote(std::string(SPECPROBE_SOURCE_DIR) + "/tests/tools/validate_schema.py") + " " +
      shell_quote(std::string(SPECPROBE_SOURCE_DIR) + "/docs/schema/reports-1.json") + many;
  CHECK(std::system(cmd_many.c_str()) == 0);
}

TEST_CASE("rules list and explain work offline", "[e2e][cli]") {
  auto list = run_specprobe("rules list");
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("SP3xxx compatibility") != std::string::npos);
  CHECK(list.out.find("SP3001") != std::string::npos);
  auto lj = run_specprobe("rules list --format json");
  CHECK(json::parse(lj.out).size() >= 6);
  auto ex = run_specprobe("explain sp3001");
  CHECK(ex.exit_code == 0);
  CHECK(ex.out.find("## Fix") != std::string::npos);
}

TEST_CASE("a probe child killed while generating inputs reports a host phase, not a hung kernel", "[e2e][cli]") {
  // 512 requests of 16384 tokens: ~1.1 GB of KV bytes to draw one by one, far more than 0.2 s
  // of host work on any machine; the child marks "generate inputs" first, so the runner's
  // timeout names that phase and asks for a longer --timeout (exit 3: could not determine).
  auto r = run_specprobe("probe --probe mqa_logits --next-n 1 --batch 512 --context 16384 --timeout 0.2 --format json");
  const specprobe::Json j = specprobe::Json::parse(r.out, nullptr, false);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 1);
  INFO(j.dump());
  if (j[0]["status"] == "skip" && j[0]["reason"] == specprobe::kNoKernelsReason) {
    WARN("built without probe kernels: the probe skips before it generates inputs");  // the sanitizer build
    return;
  }
  CHECK(r.exit_code == 3);
  CHECK(j[0]["status"] == "error");
  CHECK(j[0].value("phase", "") == "generate inputs");
  CHECK(j[0].value("reason", "").find("longer --timeout") != std::string::npos);
}

TEST_CASE("rules list with a relative --rules-dir - data tables below it are not rules", "[e2e][cli]") {
  // `--rules-dir rules` from the repository root once failed ("file name must start with its id")
  // because the file names were taken relative to the directory's empty parent; rules/data/**
  // (version and option tables) must be skipped at any depth.
  const std::string src = SPECPROBE_SOURCE_DIR;
  for (const char* dir : {"rules", "rules/", "./rules"}) {
    auto r = run_specprobe(std::string("rules list --format json --rules-dir ") + dir, src);
    INFO(dir << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"SP3001\"") != std::string::npos);
  }
}

namespace {

// A document of several reports without what differs from run to run of the same files: the
// durations and the command line.
json without_run_details(json doc) {
  for (auto& rep : doc["reports"]) {
    rep["invocation"].erase("duration_ms");
    rep["invocation"].erase("argv");
  }
  doc.erase("invocation");
  return doc;
}

}  // namespace

TEST_CASE("several files on several threads: -j gives the reports and errors of -j 1, in file order", "[e2e][cli]") {
  // Issue 49 item 2: parallel checks across cores share the catalog and checkpoint reads.
  const std::string dir = temp_dir();
  write_file(dir, "unknown.yaml",
             "model: some-org/never-seen-model\nspeculative-config: {\"method\": \"ngram\", "
             "\"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}\n");
  std::string files;
  for (int i = 0; i < 3; ++i)
    files += kExampleSeeds + "/turboquant-ngram.yaml " + kExampleSeeds + "/dsv4-mtp.yaml " + dir + "/unknown.yaml " +
             dir + "/missing-" + std::to_string(i) + ".yaml ";
  const std::string common =
      "check --gpu H200 --lib vllm=0.25.1 --model-dir meta-llama/Llama-3.1-8B-Instruct=" + kExampleCheckpoints +
      "/llama-3.1-8b --model-dir deepseek-ai/DeepSeek-V4-Flash=" + kExampleCheckpoints +
      "/deepseek-v4-flash --format json --results all ";
  const auto strip = without_run_details;  // -j 1 / -j 4
  auto one = run_specprobe(common + "-j 1 " + files);
  auto four = run_specprobe(common + "-j 4 " + files);
  INFO(one.err << "\n" << four.err);
  CHECK(one.exit_code == four.exit_code);
  CHECK(one.err == four.err);  // the missing files' errors, in the same order
  CHECK(one.err.find("missing-0.yaml") < one.err.find("missing-2.yaml"));
  const json a = strip(json::parse(one.out)), b = strip(json::parse(four.out));
  REQUIRE(a["reports"].size() == 9);
  CHECK(a == b);
}

TEST_CASE(
    "several files, one JSON output: each file's reports rendered as it finishes give the document kept reports give",
    "[e2e][cli]") {
  // Issue 49: with one JSON output a many-file run renders each file's reports on its thread and
  // frees them; with another output next to it (here JUnit) the reports are kept to the end. The
  // JSON is the same document either way, and several files give the document of several reports
  // even when only one of them was read.
  const std::string dir = temp_dir();
  const std::string files = kExampleSeeds + "/turboquant-ngram.yaml " + kExampleSeeds + "/dsv4-mtp.yaml " +
                            kExampleSeeds + "/turboquant-ngram.yaml";
  const std::string common =
      "check --gpu H200 --lib vllm=0.25.1 --model-dir meta-llama/Llama-3.1-8B-Instruct=" + kExampleCheckpoints +
      "/llama-3.1-8b --model-dir deepseek-ai/DeepSeek-V4-Flash=" + kExampleCheckpoints +
      "/deepseek-v4-flash --format json ";
  const auto strip = without_run_details;  // --junit FILE
  for (const std::string results : {"", "--results all "}) {
    auto ahead = run_specprobe(common + results + files);
    auto kept = run_specprobe(common + results + "--junit " + dir + "/junit.xml " + files);
    INFO(results << ahead.err << kept.err);
    CHECK(ahead.exit_code == kept.exit_code);
    const json a = json::parse(ahead.out), k = json::parse(kept.out);
    REQUIRE(a["reports"].size() == 3);
    CHECK(a["exit_code"] == k["exit_code"]);
    CHECK(strip(a) == strip(k));
  }
  // To a file: written as the entries come, with the document's exit code (1: a file fails) put in
  // its place at the end; a file that cannot be written is exit 5, and nothing is left behind.
  const std::string failing = kExampleSeeds + "/turboquant-ngram.yaml " + kExampleSeeds + "/dsv4-mtp.yaml";
  auto to_stdout =
      run_specprobe("check --gpu RTX5090 --model-dir meta-llama/Llama-3.1-8B-Instruct=" + kExampleCheckpoints +
                    "/llama-3.1-8b --format json " + failing);
  auto to_file =
      run_specprobe("check --gpu RTX5090 --model-dir meta-llama/Llama-3.1-8B-Instruct=" + kExampleCheckpoints +
                    "/llama-3.1-8b --format json -o " + dir + "/out.json " + failing);
  INFO(to_file.err);
  CHECK(to_stdout.exit_code == 1);
  CHECK(to_file.exit_code == 1);
  const json streamed = json::parse(specprobe::test::file_text(dir + "/out.json"));
  CHECK(streamed["exit_code"] == 1);
  CHECK(strip(streamed) == strip(json::parse(to_stdout.out)));
  auto unwritable = run_specprobe(common + "-o " + dir + "/no/such/dir/out.json " + files);
  CHECK(unwritable.exit_code == 5);
  CHECK(unwritable.err.find("no/such/dir/out.json") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/no/such/dir"));

  auto lone = run_specprobe(common + kExampleSeeds + "/dsv4-mtp.yaml " + dir + "/missing.yaml");
  INFO(lone.err);
  CHECK(lone.exit_code == 2);
  CHECK(lone.err.find("missing.yaml") != std::string::npos);
  const json doc = json::parse(lone.out);
  REQUIRE(doc["reports"].size() == 1);
  CHECK(doc["reports"][0]["results_listed"] == "failing");
}

TEST_CASE("several files: a failing file's exit 1 outranks another's unknown 4, and the JSON lists failing results",
          "[e2e][cli]") {
  // Issue 51 item 5: one file specprobe cannot decide must not hide another that fails. Issue 49:
  // several files give a compact JSON report (results not passed or not applicable), whole counts.
  const std::string dir = temp_dir();
  write_file(dir, "unknown.yaml",
             "model: some-org/never-seen-model\nspeculative-config: {\"method\": \"ngram\", "
             "\"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}\n");
  const std::string fails = kExampleSeeds + "/turboquant-ngram.yaml";
  const std::string common =
      "check --gpu RTX5090 --model-dir meta-llama/Llama-3.1-8B-Instruct=" + kExampleCheckpoints + "/llama-3.1-8b ";
  CHECK(run_specprobe(common + dir + "/unknown.yaml").exit_code == 4);
  CHECK(run_specprobe(common + fails).exit_code == 1);
  for (const std::string order : {dir + "/unknown.yaml " + fails, fails + " " + dir + "/unknown.yaml"}) {
    auto r = run_specprobe(common + "--format json " + order);
    INFO(order << "\n" << r.err);
    CHECK(r.exit_code == 1);
    const json doc = json::parse(r.out);
    CHECK(doc["exit_code"] == 1);
    REQUIRE(doc["reports"].size() == 2);
    CHECK(doc["invocation"]["argv"].size() > 4);  // the command line once, not in each report
    for (const auto& rep : doc["reports"]) {
      CHECK(rep["invocation"]["argv"].empty());
      CHECK(rep["results_listed"] == "failing");
      int listed_fail = 0;
      for (const auto& res : rep["results"]) {
        CHECK(res["status"] != "pass");
        CHECK(res["status"] != "skip");
        listed_fail += res["status"] == "fail" ? 1 : 0;
      }
      CHECK(listed_fail == rep["summary"]["fail"].get<int>());
      CHECK(rep["summary"]["pass"].get<int>() + rep["summary"]["skip"].get<int>() > 0);
    }
    // --results all lists every result; one file lists every result by default.
    auto all = json::parse(run_specprobe(common + "--format json --results all " + order).out);
    CHECK_FALSE(all.contains("invocation"));
    for (const auto& rep : all["reports"]) {
      CHECK(rep["results_listed"] == "all");
      CHECK_FALSE(rep["invocation"]["argv"].empty());
      const auto& s = rep["summary"];
      CHECK(rep["results"].size() == static_cast<size_t>(s["pass"].get<int>() + s["fail"].get<int>() +
                                                         s["skip"].get<int>() + s["error"].get<int>()));
    }
  }
  auto one = json::parse(run_specprobe(common + "--format json " + fails).out);
  CHECK(one["results_listed"] == "all");
  auto one_failing = json::parse(run_specprobe(common + "--format json --results failing " + fails).out);
  CHECK(one_failing["results_listed"] == "failing");
  CHECK(one_failing["results"].size() < one["results"].size());
}
