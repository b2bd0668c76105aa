// Stack probes without GPU or libraries: fake "python" scripts that print a valid result, garbage,
// hang, die by a signal or check their environment; result validation; facts; the DSA derivation
// preferring a stack probe's answer; the real adapters under this machine's python3 (skip).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../support/fixture_plan.hpp"
#include "facts/derive.hpp"
#include "inputs/versions/python_env.hpp"
#include "probes/stack_probes.hpp"

using namespace specprobe;
using namespace specprobe::probes;
namespace fs = std::filesystem;

namespace {

// A throw-away directory with an executable fake interpreter.
struct FakePython {
  std::string dir;
  std::string path;
  explicit FakePython(const std::string& body) {
    std::string t = (fs::temp_directory_path() / "specprobe-fakepy-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()));
    dir = t;
    path = dir + "/python";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
  }
  ~FakePython() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

StackProbeOptions opts_for(const FakePython& py, double timeout = 5) {
  StackProbeOptions o;
  o.python = py.path;
  o.timeout_s = timeout;
  o.cache_dir = py.dir + "/stack-cache";  // never the user's ~/.cache
  return o;
}

Json dg_spec(std::vector<int> ns = {1, 3}) {
  return {{"probe", "stack_deep_gemm"},
          {"library", "deep_gemm"},
          {"params", {{"next_n", ns}, {"heads", 64}, {"head_dim", 128}, {"block_kv", 64}}}};
}

const char* kAssert =
    "Assertion error (csrc/apis/../jit_kernels/impls/sm90_fp8_mqa_logits.hpp:363): next_n == 1 or next_n == 2";

Json dg_result(const std::string& status3) {
  Json c1 = {{"name", "next_n=1"}, {"key", "next_n.1"}, {"status", "pass"}, {"params", {{"next_n", 1}}}};
  Json c3 = {{"name", "next_n=3"},
             {"key", "next_n.3"},
             {"status", status3},
             {"params", {{"next_n", 3}}},
             {"error_text", status3 == "fail" ? Json(kAssert) : Json()}};
  return {{"schema", "specprobe-stack/1"},
          {"adapter", "stack_deep_gemm"},
          {"library", "deep_gemm"},
          {"version", "2.6.1"},
          {"status", status3},
          {"reason", status3 == "fail" ? "DeepGEMM rejects next_n 3" : ""},
          {"error_text", status3 == "fail" ? Json(kAssert) : Json()},
          {"device", {{"name", "NVIDIA H200"}, {"sm", 90}}},
          {"cases", {c1, c3}}};
}

// Prints the protocol lines around JSON (single-quoted for sh).
std::string stack_prints(const Json& j) {
  return "echo '@@specprobe begin 0'; echo '@@specprobe result " + j.dump() + "'";
}

}  // namespace

TEST_CASE("a valid failing result keeps the library's assertion text and becomes facts", "[probes][stack]") {
  FakePython py(stack_prints(dg_result("fail")));
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "fail");
  CHECK(r["source"] == "adapter");
  CHECK(r["error_text"] == kAssert);
  Json f = stack_facts_patch({r}, py.path);
  CHECK(f["stack"]["deep_gemm"]["next_n"]["3"]["status"] == "fail");
  CHECK(f["stack"]["deep_gemm"]["next_n"]["3"]["error_text"] == kAssert);
  CHECK(f["stack"]["deep_gemm"]["next_n"]["1"]["status"] == "pass");
  CHECK(f["stack"]["deep_gemm"]["device_sm"] == 90);
  CHECK(f["stack"]["deep_gemm"]["version"] == "2.6.1");
  CHECK(f["stack"]["ran"] == true);
  CHECK(f["stack"]["errors"].is_null());
}

TEST_CASE("a valid passing result passes", "[probes][stack]") {
  FakePython py(stack_prints(dg_result("pass")));
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "pass");
}

TEST_CASE("garbage on stdout is an error, never trusted", "[probes][stack]") {
  FakePython py("echo 'Traceback (most recent call last):'; echo '{\"status\": \"pass\"}'");
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "error");
  CHECK(r["reason"].get<std::string>().find("not trusted") != std::string::npos);
  Json f = stack_facts_patch({r}, py.path);
  CHECK(f["stack"]["deep_gemm"]["status"] == "error");
  CHECK(f["stack"]["errors"].get<std::string>().find("deep_gemm") != std::string::npos);
}

TEST_CASE("an unparseable result line is an error", "[probes][stack]") {
  FakePython py("echo '@@specprobe begin 0'; echo '@@specprobe result {\"schema\": '");
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "error");
  CHECK(r["reason"].get<std::string>().find("unreadable") != std::string::npos);
}

TEST_CASE("an adapter killed by a signal is an error with the signal and stderr", "[probes][stack]") {
  FakePython py("echo '@@specprobe begin 0'; echo 'Fatal Python error: Segmentation fault' >&2; kill -SEGV $$");
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "error");
  CHECK(r["signal"] == "SIGSEGV");
  CHECK(r["reason"].get<std::string>().find("SIGSEGV") != std::string::npos);
  CHECK(r["stderr_tail"].get<std::string>().find("Segmentation fault") != std::string::npos);
}

// Whether process `pid` has ended: no such process, or a zombie nobody has reaped yet (in a
// container the reaper may be slow). SIGKILL takes effect asynchronously, so look for up to 5 s.
static bool process_ended(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') return true;
    usleep(10000);
  }
  return false;
}

static pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

TEST_CASE("a hanging adapter is killed at the timeout and reported as an error", "[probes][stack]") {
  // The adapter starts a child that would outlive it by ten minutes and holds its stdout: the
  // runner has to kill the whole process group, not wait for the pipe to close.
  FakePython py(
      "echo $$ > \"$(dirname \"$0\")/adapter.pid\"; sleep 600 & echo $! > \"$(dirname \"$0\")/child.pid\"; "
      "echo '@@specprobe begin 0'; wait");
  Json r = run_stack_probe(dg_spec(), opts_for(py, 0.5));
  const pid_t adapter = read_pid(py.dir + "/adapter.pid"), child = read_pid(py.dir + "/child.pid");
  REQUIRE(adapter > 0);
  REQUIRE(child > 0);
  CHECK(process_ended(adapter));
  CHECK(process_ended(child));
  CHECK(r["status"] == "error");
  CHECK(r.contains("timeout_s"));
  const std::string why = r["reason"];
  CHECK(why.find("the deep_gemm adapter timed out after 0.5 s and was killed") == 0);
  CHECK(why.find("--stack-timeout 600") != std::string::npos);
  CHECK(why.find("not trusted") != std::string::npos);
}

TEST_CASE("a timeout names the adapter's last phase (phase file, else stderr markers)", "[probes][stack]") {
  // The file is what specprobe trusts first: JIT output can push the stderr marker out of the tail.
  FakePython py(R"(echo '@@specprobe begin 0'
echo '@@specprobe phase import flashinfer' >&2; printf 'import flashinfer' > "$SPECPROBE_STACK_PHASE_FILE"
echo '@@specprobe phase jit-compile prefill' >&2; printf 'jit-compile prefill' > "$SPECPROBE_STACK_PHASE_FILE"
i=0; while [ $i -lt 40 ]; do echo "[INFO] flashinfer.jit: compiling batch_prefill_with_kv_cache_dtype_q_bf16 $i" >&2; i=$((i+1)); done
sleep 30)");
  Json spec = {{"probe", "stack_flashinfer"}, {"library", "flashinfer"}, {"params", {{"q_len", 3}}}};
  Json r = run_stack_probe(spec, opts_for(py, 1));
  REQUIRE(r["status"] == "error");
  CHECK(r["phase"] == "jit-compile prefill");
  const std::string why = r["reason"];
  CHECK(why.find("the flashinfer adapter timed out after 1 s in phase 'jit-compile prefill' and was killed") == 0);
  CHECK(why.find("--stack-timeout 600") != std::string::npos);
  Json f = stack_facts_patch({r}, py.path);
  CHECK(f["stack"]["errors"].get<std::string>().find("in phase 'jit-compile prefill'") != std::string::npos);

  // Without the file: the last marker on stderr.
  Json runner = {{"status", "crash"},
                 {"reason", "no result within 900 s: the probe hung and its process was killed"},
                 {"timeout_s", 900},
                 {"stderr_tail", "@@specprobe phase import flashinfer\n@@specprobe phase run decode\nlog\n"}};
  Json v = validate_stack_result(runner, spec);
  CHECK(v["reason"].get<std::string>().find("timed out after 900 s in phase 'run decode'") != std::string::npos);
  CHECK(v["reason"].get<std::string>().find("--stack-timeout 1800") != std::string::npos);
  // A phase from an untrusted child is cleaned before it is repeated.
  runner["phase"] = std::string("x\x01y") + std::string(300, 'z');
  v = validate_stack_result(runner, spec);
  CHECK(v["phase"].get<std::string>().size() <= 103);
  CHECK(v["phase"].get<std::string>().rfind("x?y", 0) == 0);
  // A death by signal names the phase too.
  Json died = {{"status", "crash"},
               {"reason", "the probe process died with SIGSEGV"},
               {"signal", "SIGSEGV"},
               {"phase", "run prefill"}};
  CHECK(validate_stack_result(died, spec)["reason"].get<std::string>().find(
            "failed in phase 'run prefill': the probe process died with SIGSEGV") != std::string::npos);
}

TEST_CASE("run_stack_specs runs what the interpreter says it is (a shim resolves to sys.executable)",
          "[probes][stack][python]") {
  FakePython real(stack_prints(dg_result("pass")));
  // The shim answers the inspect call (-I) for REAL and would print garbage for the adapter.
  FakePython shim(R"(if [ "$1" = "-I" ]; then
echo '@@specprobe begin 0'
echo '@@specprobe result {"specprobe_python": 1, "executable": ")" +
                  real.path + R"(", "prefix": "/p", "version": "3.12.3", "site_packages": [")" + real.dir + R"("]}'
else echo 'garbage from the shim'; fi)");
  Json spec = dg_spec();
  StackRun run = run_stack_specs({spec}, opts_for(shim));
  REQUIRE(run.results.size() == 1);
  CHECK(run.results[0]["status"] == "pass");
  CHECK(run.results[0]["python"] == real.path);
  CHECK(run.facts_patch["stack"]["python"] == real.path);

  StackProbeOptions as_given = opts_for(shim);
  as_given.ask_interpreter = false;
  CHECK(run_stack_specs({spec}, as_given).results[0]["status"] == "error");

  // An interpreter that cannot be asked is run as given, with a note.
  FakePython plain(stack_prints(dg_result("pass")));
  run = run_stack_specs({spec}, opts_for(plain));
  CHECK(run.results[0]["status"] == "pass");
  CHECK(run.results[0]["python_note"].get<std::string>().find(plain.path + ": asking the interpreter") == 0);
}

TEST_CASE("results that break the schema are errors", "[probes][stack]") {
  const Json spec = dg_spec();
  auto reason_of = [&](Json raw) {
    Json r = validate_stack_result(raw, spec);
    CHECK(r["status"] == "error");
    return r["reason"].get<std::string>();
  };
  Json ok = dg_result("fail");
  CHECK(validate_stack_result(ok, spec)["status"] == "fail");
  Json j = ok;
  j["schema"] = "specprobe-stack/0";
  CHECK(reason_of(j).find("schema") != std::string::npos);
  j = ok;
  j["adapter"] = "stack_triton";
  CHECK(reason_of(j).find("adapter") != std::string::npos);
  j = ok;
  j["status"] = "maybe";
  CHECK(reason_of(j).find("status") != std::string::npos);
  j = ok;
  j["status"] = "pass";  // a failing case under an overall pass
  CHECK(reason_of(j).find("pass") != std::string::npos);
  j = ok;
  j["cases"][1]["key"] = "next_n.4";  // key does not match next_n
  CHECK(reason_of(j).find("key") != std::string::npos);
  j = ok;
  j["cases"].erase(1);  // next_n=3 was asked for and not answered
  j["status"] = "pass";
  CHECK(reason_of(j).find("next_n=3") != std::string::npos);
  j = ok;
  j["error_text"] = 42;
  CHECK(reason_of(j).find("error_text") != std::string::npos);
  j = ok;
  j["device"] = {{"name", "x"}};
  CHECK(reason_of(j).find("device") != std::string::npos);
  CHECK(validate_stack_result(Json::array(), spec)["status"] == "error");
}

TEST_CASE("a library that is not installed is a skip with the reason", "[probes][stack]") {
  Json skip = {{"schema", "specprobe-stack/1"},
               {"adapter", "stack_deep_gemm"},
               {"library", "deep_gemm"},
               {"version", nullptr},
               {"status", "skip"},
               {"reason", "deep_gemm is not installed in this Python (/venv)"},
               {"error_text", nullptr},
               {"device", nullptr},
               {"cases", Json::array()}};
  FakePython py(stack_prints(skip));
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  CHECK(r["status"] == "skip");
  CHECK(r["reason"].get<std::string>().find("not installed") != std::string::npos);
}

TEST_CASE("the adapter runs from a private dir with a clean environment, removed afterwards", "[probes][stack]") {
  // The fake python reports its argv and environment inside a valid skip result.
  FakePython py(R"(script="$3"; test -f "$script" || { echo "no script $script" >&2; exit 3; }
test -f "$(dirname "$script")/stack_common.py" || { echo "no stack_common.py beside $script" >&2; exit 3; }
echo "$script" > "$(dirname "$0")/script_path"
echo '@@specprobe begin 0'
printf '@@specprobe result {"schema":"specprobe-stack/1","adapter":"stack_deep_gemm","library":"deep_gemm","status":"skip","cases":[],"reason":"HOME=%s TMPDIR=%s NOUSER=%s SECRET=%s ARGS=%s %s %s"}\n' "$HOME" "$TMPDIR" "$PYTHONNOUSERSITE" "$SPECPROBE_TEST_SECRET" "$1" "$2" "$4")");
  setenv("SPECPROBE_TEST_SECRET", "leaked", 1);
  Json r = run_stack_probe(dg_spec(), opts_for(py));
  unsetenv("SPECPROBE_TEST_SECRET");
  REQUIRE(r["status"] == "skip");
  const std::string why = r["reason"];
  std::string script;
  std::ifstream(py.dir + "/script_path") >> script;
  const std::string priv = fs::path(script).parent_path().string();
  CHECK(why.find("HOME=" + priv + " ") != std::string::npos);
  CHECK(why.find("TMPDIR=" + priv + "/tmp") != std::string::npos);
  CHECK(why.find("NOUSER=1") != std::string::npos);
  CHECK(why.find("SECRET= ") != std::string::npos);
  CHECK(why.find("ARGS=-s -B --specs") != std::string::npos);
  CHECK(fs::path(script).filename() == "stack_deep_gemm.py");
  CHECK_FALSE(fs::exists(priv));
}

TEST_CASE("the libraries' JIT caches persist across runs - --no-cache makes a cold private one", "[probes][stack]") {
  // The fake adapter reports DG_JIT_CACHE_DIR and whether an earlier run left a "kernel" there,
  // then leaves one (what DeepGEMM's JIT does on a first call).
  FakePython py(R"(d="$DG_JIT_CACHE_DIR"; seen=no; test -f "$d/kernel.so" && seen=yes
mkdir -p "$d" && echo built > "$d/kernel.so"
echo '@@specprobe begin 0'
printf '@@specprobe result {"schema":"specprobe-stack/1","adapter":"stack_deep_gemm","library":"deep_gemm","status":"skip","cases":[],"reason":"DIR=%s SEEN=%s"}\n' "$d" "$seen")");
  StackProbeOptions o = opts_for(py);
  const Json first = run_stack_probe(dg_spec(), o);
  const Json second = run_stack_probe(dg_spec(), o);
  INFO(first.dump() << "\n" << second.dump());
  REQUIRE(first["cache_dir"].is_string());
  const std::string root = first["cache_dir"];
  CHECK(root.rfind(py.dir + "/stack-cache/deep_gemm-", 0) == 0);
  CHECK(first["reason"] == "DIR=" + root + "/deep_gemm SEEN=no");
  CHECK(second["reason"] == "DIR=" + root + "/deep_gemm SEEN=yes");  // the second run finds the first's build
  CHECK(fs::exists(root + "/deep_gemm/kernel.so"));
  // Another library under the same interpreter gets its own directory.
  CHECK(stack_cache_root(o, py.path, "triton") != stack_cache_root(o, py.path, "deep_gemm"));

  o.use_cache = false;
  const Json cold = run_stack_probe(dg_spec(), o);
  CHECK(cold["cache_dir"].is_null());
  const std::string reason = cold["reason"];
  CHECK(reason.find("SEEN=no") != std::string::npos);
  CHECK(reason.find(root) == std::string::npos);  // a private cache, removed with the run
  const std::string cold_dir = reason.substr(4, reason.find(" SEEN") - 4);
  CHECK_FALSE(fs::exists(cold_dir));
}

TEST_CASE("the child environment is an allow-list plus private dirs", "[probes][stack]") {
  auto env = stack_child_env("/p", {"PATH=/venv/bin:/usr/bin", "HOME=/root", "AWS_SECRET_ACCESS_KEY=x",
                                    "PYTHONPATH=/evil", "CUDA_VISIBLE_DEVICES=1", "LD_PRELOAD=/usr/lib/libstdc++.so.6",
                                    "MY_VAR=1", "SPECPROBE_STACK_PASS_ENV=MY_VAR,HOME"});
  auto has = [&](const std::string& e) { return std::find(env.begin(), env.end(), e) != env.end(); };
  CHECK(has("PATH=/venv/bin:/usr/bin"));
  CHECK(has("CUDA_VISIBLE_DEVICES=1"));
  CHECK(has("LD_PRELOAD=/usr/lib/libstdc++.so.6"));
  CHECK(has("MY_VAR=1"));
  CHECK(has("HOME=/p"));  // never the user's, even when listed
  CHECK_FALSE(has("HOME=/root"));
  CHECK(has("PYTHONNOUSERSITE=1"));
  CHECK(has("TRITON_CACHE_DIR=/p/cache/triton"));
  for (const auto& e : env) {
    CHECK(e.rfind("AWS_", 0) != 0);
    CHECK(e.rfind("PYTHONPATH=", 0) != 0);
  }
  CHECK(has("PATH=/usr/local/bin:/usr/bin:/bin") == false);
  auto bare = stack_child_env("/p", {});
  CHECK(std::find(bare.begin(), bare.end(), "PATH=/usr/local/bin:/usr/bin:/bin") != bare.end());
  // A persistent cache root replaces the private caches, and only those.
  auto cached = stack_child_env("/p", {}, "/c/deep_gemm-1");
  auto has_c = [&](const std::string& e) { return std::find(cached.begin(), cached.end(), e) != cached.end(); };
  CHECK(has_c("DG_JIT_CACHE_DIR=/c/deep_gemm-1/deep_gemm"));
  CHECK(has_c("TRITON_CACHE_DIR=/c/deep_gemm-1/triton"));
  CHECK(has_c("XDG_CACHE_HOME=/c/deep_gemm-1"));
  CHECK(has_c("HOME=/p"));
  CHECK(has_c("TMPDIR=/p/tmp"));
}

TEST_CASE("a missing interpreter is an error per library, not a crash", "[probes][stack]") {
  StackProbeOptions o;
  o.python = "/nonexistent/bin/python";
  Json r = run_stack_probe(dg_spec(), o);
  CHECK(r["status"] == "error");
  CHECK(r["reason"].get<std::string>().find("not an executable Python") != std::string::npos);
  o.python = "specprobe-no-such-python";
  CHECK(run_stack_probe(dg_spec(), o)["status"] == "error");
  CHECK_FALSE(specprobe::resolve_python("specprobe-no-such-python"));
  CHECK(specprobe::resolve_python("sh"));
}

TEST_CASE("the plan implies DeepGEMM for a DSA model and skips FlashInfer/Triton for MLA", "[probes][stack]") {
  Json facts = {{"spec", {{"next_n", 3}}},
                {"model", {{"mla", true}, {"dsa", {{"index_n_heads", 64}, {"index_head_dim", 128}}}}},
                {"gpu", {{"arch_family", "sm90"}}}};
  auto specs = stack_probe_specs(facts, {});
  REQUIRE(specs.size() == 4);  // the table's order: deep_gemm, flashinfer, triton, torch
  CHECK(specs[0]["library"] == "deep_gemm");
  CHECK(specs[3]["library"] == "torch");
  // Every next_n of the what-if sweep (k = 0..8), so each k's cell has the library's own answer.
  CHECK(specs[0]["params"]["next_n"] == Json({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  CHECK(specs[0]["params"]["heads"] == 64);
  Json deep = facts;
  deep["spec"]["next_n"] = 12;  // a plan beyond the sweep adds its own next_n
  CHECK(stack_probe_specs(deep, {})[0]["params"]["next_n"] == Json({1, 2, 3, 4, 5, 6, 7, 8, 9, 12}));
  StackProbeOptions asked;
  asked.next_n = {1, 3};
  CHECK(stack_probe_specs(facts, asked)[0]["params"]["next_n"] == Json({1, 3}));
  CHECK(specs[1]["skip_reason"].get<std::string>().find("MLA") != std::string::npos);
  CHECK(specs[2]["skip_reason"].get<std::string>().find("MLA") != std::string::npos);
  Json r = run_stack_probe(specs[1], {});
  CHECK(r["status"] == "skip");

  Json gqa = {{"spec", {{"next_n", 3}}},
              {"model",
               {{"mla", false}, {"num_attention_heads", 32}, {"num_kv_heads", 8}, {"head_dim", 128}, {"gqa_ratio", 4}}},
              {"attention", {{"selected", "FLASHINFER"}}},
              {"kv", {{"fp8", true}}},
              {"serve", {{"block_size", 16}}}};
  specs = stack_probe_specs(gqa, {});
  REQUIRE(specs.size() == 4);
  CHECK(specs[0].contains("skip_reason"));
  CHECK(specs[1]["params"]["q_len"] == 3);
  CHECK(specs[1]["params"]["q_heads"] == 32);
  CHECK(specs[1]["params"]["kv_dtype"] == "fp8");
  CHECK(specs[2]["skip_reason"].get<std::string>().find("not Triton") != std::string::npos);
  StackProbeOptions only;
  only.libraries = {"triton"};
  specs = stack_probe_specs(gqa, only);
  REQUIRE(specs.size() == 1);
  CHECK(specs[0]["params"]["gqa"] == 4);
  CHECK(specs[0]["params"]["k"] == 2);
}

TEST_CASE("the PyTorch probe asks for the GPU the plan evaluates: queried, declared or none", "[probes][stack]") {
  StackProbeOptions only;
  only.libraries = {"torch"};
  Json queried = {{"gpu", {{"source", "driver"}, {"name", "NVIDIA H200"}, {"sm", 90}, {"vendor", "nvidia"}}},
                  {"driver", {{"version", 13000}}}};
  auto specs = stack_probe_specs(queried, only);
  REQUIRE(specs.size() == 1);
  CHECK(specs[0]["params"]["run"] == true);  // the plan's GPU is this machine's: torch must see it
  CHECK(specs[0]["params"]["gpu_sm"] == 90);
  CHECK(specs[0]["params"]["driver_cuda"] == 13000);

  Json declared = queried;
  declared["gpu"]["source"] = "declared";
  specs = stack_probe_specs(declared, only);
  CHECK(specs[0]["params"]["run"] == false);
  CHECK_FALSE(specs[0]["params"].contains("driver_cuda"));  // this machine's driver is not the deployment's

  Json amd = {
      {"gpu", {{"source", "declared"}, {"name", "AMD Instinct MI300X"}, {"vendor", "amd"}, {"arch", "gfx942"}}}};
  specs = stack_probe_specs(amd, only);
  CHECK(specs[0]["params"]["gpu_arch"] == "gfx942");
  CHECK(specs[0]["params"]["gpu_sm"].is_null());

  Json fallback = {{"gpu", {{"source", "declared"}, {"fallback", true}, {"sm", 90}}}};
  specs = stack_probe_specs(fallback, only);
  CHECK(specs[0]["skip_reason"].get<std::string>().find("give --gpu") != std::string::npos);
}

TEST_CASE("the DSA derivation prefers the stack probe and says so", "[probes][stack][derive]") {
  Json base = {
      {"engine", {{"name", "vllm"}}},
      {"model", {{"mla", true}, {"dsa", {{"present", true}, {"index_n_heads", 64}, {"index_head_dim", 128}}}}},
      {"gpu", {{"declared", "H200"}}},
      {"spec", {{"enabled", true}, {"method", "mtp"}, {"num_speculative_tokens", 2}}},
      {"lib", {{"vllm", {{"version", "0.21.1rc1.dev202+g3424fba5"}}}, {"deep_gemm", {{"version", "2.6.1+54e2261"}}}}}};
  Json f = base;
  specprobe::testing::derive_plan(f);
  CHECK(f["dsa"]["indexer_mode"] == "blocked");
  CHECK(f["dsa"]["decided_by"] == "version-knowledge");

  Json passed = base;
  passed["stack"] = {
      {"deep_gemm", {{"device_sm", 90}, {"version", "2.6.1"}, {"next_n", {{"3", {{"status", "pass"}}}}}}}};
  specprobe::testing::derive_plan(passed);
  CHECK(passed["dsa"]["indexer_mode"] == "native");
  CHECK(passed["dsa"]["decided_by"] == "stack-probe");
  CHECK(passed["dsa"]["version_knowledge_mode"] == "blocked");

  Json failed = base;
  failed["lib"]["deep_gemm"]["version"] = "2.6.1+unknownhash";
  failed["stack"] = {
      {"deep_gemm", {{"device_sm", 90}, {"next_n", {{"3", {{"status", "fail"}, {"error_text", kAssert}}}}}}}};
  specprobe::testing::derive_plan(failed);
  CHECK(failed["dsa"]["indexer_mode"] == "blocked");
  CHECK(failed["dsa"]["decided_by"] == "stack-probe");
  CHECK(failed["dsa"]["stack_probe"]["error_text"] == kAssert);

  Json errored = base;  // an error does not decide
  errored["stack"] = {{"deep_gemm", {{"device_sm", 90}, {"next_n", {{"3", {{"status", "error"}}}}}}}};
  specprobe::testing::derive_plan(errored);
  CHECK(errored["dsa"]["decided_by"] == "version-knowledge");

  Json other_gpu = passed;  // probed an sm_90 but the plan is evaluated for a B200
  other_gpu["gpu"] = {{"declared", "B200"}};
  specprobe::testing::derive_plan(other_gpu);
  CHECK(other_gpu["dsa"]["decided_by"] == "version-knowledge");
}

TEST_CASE("the real adapters under this machine's python3 validate (skip without torch/GPU)", "[probes][stack]") {
  auto py = specprobe::resolve_python("python3");
  if (!py) {
    WARN("no python3 on PATH; adapters not exercised");
    return;
  }
  StackProbeOptions o;
  o.python = *py;
  o.timeout_s = 120;
  o.adapter_dir = std::string(SPECPROBE_SOURCE_DIR) + "/probes";
  const std::vector<Json> specs = {
      dg_spec(),
      {{"probe", "stack_flashinfer"},
       {"library", "flashinfer"},
       {"params", {{"q_heads", 8}, {"kv_heads", 2}, {"head_dim", 128}, {"q_len", 3}}}},
      {{"probe", "stack_triton"}, {"library", "triton"}, {"params", {{"k", 2}, {"gqa", 4}, {"head_dim", 128}}}}};
  for (const auto& s : specs) {
    Json r = run_stack_probe(s, o);
    INFO(r.dump());
    CHECK(r.value("source", "") == "adapter");  // printed a valid specprobe-stack/1 result
    CHECK(r["status"] != "fail");               // no library here to refuse anything
  }
}

TEST_CASE("the real adapters import stack_common from their own dir under python -I", "[probes][stack][python]") {
  auto py = specprobe::resolve_python("python3");
  if (!py) {
    WARN("no python3 on PATH; adapters not exercised");
    return;
  }
  std::string t = (fs::temp_directory_path() / "specprobe-adapters-XXXXXX").string();
  REQUIRE(mkdtemp(t.data()));
  const fs::path src = fs::path(SPECPROBE_SOURCE_DIR) / "probes";
  for (const char* f : {"stack_common.py", "stack_deep_gemm.py", "stack_flashinfer.py", "stack_triton.py"})
    fs::copy_file(src / f, fs::path(t) / f);
  for (const char* lib : {"deep_gemm", "flashinfer", "triton"}) {
    // -I leaves the script's directory off sys.path and ignores PYTHON* variables; cwd elsewhere.
    const std::string cmd = "cd / && env -i PATH=\"$PATH\" HOME=\"$HOME\" " + *py + " -I -B " + t + "/stack_" + lib +
                            ".py --specs '[{\"params\": {}}]' 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      pclose(p);
    }
    INFO(lib << ": " << out);
    const size_t at = out.find("@@specprobe result ");
    REQUIRE(at != std::string::npos);
    const std::string line = out.substr(at + 19, out.find('\n', at) - at - 19);
    const Json raw = Json::parse(line);
    Json spec = {{"probe", std::string("stack_") + lib}, {"library", lib}, {"params", Json::object()}};
    CHECK(validate_stack_result(raw, spec).value("source", "") == "adapter");
    CHECK(out.find("@@specprobe phase import " + std::string(lib)) != std::string::npos);
  }
  fs::remove_all(t);
}

TEST_CASE("a stack answer is cached per library build and GPU - a changed build or GPU or --no-cache asks again",
          "[probes][stack][cache]") {
  // The fake adapter counts its runs and fails next_n=3 with DeepGEMM's assertion.
  FakePython py("echo run >> \"$(dirname \"$0\")/runs\"\n" + stack_prints(dg_result("fail")));
  auto runs = [&] {
    std::ifstream in(py.dir + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  const std::string sp = py.dir + "/site-packages";
  auto install = [&](const std::string& dist, const std::string& record) {
    fs::create_directories(sp + "/" + dist);
    std::ofstream(sp + "/" + dist + "/RECORD") << record;
  };
  install("deep_gemm-2.6.1.dist-info", "deep_gemm/__init__.py,sha256=aaa,10\n");
  install("torch-2.9.0.dist-info", "torch/__init__.py,sha256=bbb,10\n");
  StackProbeOptions o = opts_for(py);
  o.site_packages = {sp};
  o.machine = "NVIDIA H200|sm90|fnv1a64:0123|0000:01:00.0|driver 580|1 GPUs";

  const Json first = run_stack_probe(dg_spec(), o);
  CHECK(first["status"] == "fail");
  CHECK(first["cached"] == false);
  CHECK(runs() == 1);
  const Json second = run_stack_probe(dg_spec(), o);
  INFO(second.dump());
  CHECK(second["status"] == "fail");
  CHECK(second["cached"] == true);
  CHECK(second["error_text"] == kAssert);  // the library's own words, as measured
  CHECK(runs() == 1);
  CHECK(*find_fact(stack_facts_patch({second}, py.path), "stack.deep_gemm.cached") == true);
  CHECK(*find_fact(stack_facts_patch({first}, py.path), "stack.deep_gemm.cached") == false);

  // Another spec (other next_n) is another answer.
  (void)run_stack_probe(dg_spec({1, 2}), o);
  CHECK(runs() == 2);
  // Another GPU or driver.
  StackProbeOptions other_gpu = o;
  other_gpu.machine = "NVIDIA H100 80GB HBM3|sm90|fnv1a64:4567|0000:02:00.0|driver 580|1 GPUs";
  CHECK(run_stack_probe(dg_spec(), other_gpu)["cached"] == false);
  CHECK(runs() == 3);
  // --no-cache neither reads nor trusts the entry.
  StackProbeOptions no_cache = o;
  no_cache.use_cache = false;
  CHECK(run_stack_probe(dg_spec(), no_cache)["cached"] == false);
  CHECK(runs() == 4);
  // An upgraded library (its RECORD changes) or torch.
  install("deep_gemm-2.6.1.dist-info", "deep_gemm/__init__.py,sha256=ccc,10\n");
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == true);
  CHECK(runs() == 5);
  install("torch-2.9.0.dist-info", "torch/__init__.py,sha256=ddd,10\n");
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  CHECK(runs() == 6);
  // A corrupt entry is a miss and is replaced.
  for (const auto& e : fs::recursive_directory_iterator(py.dir + "/stack-cache/answers"))
    if (e.is_regular_file()) std::ofstream(e.path()) << "{not json";
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == true);
  CHECK(runs() == 7);
  // Never cached: no GPU queried, or an editable install (its code is outside the RECORD).
  StackProbeOptions no_machine = o;
  no_machine.machine.clear();
  (void)run_stack_probe(dg_spec(), no_machine);
  (void)run_stack_probe(dg_spec(), no_machine);
  CHECK(runs() == 9);
  std::ofstream(sp + "/deep_gemm-2.6.1.dist-info/direct_url.json")
      << R"({"url": "file:///src/DeepGEMM", "dir_info": {"editable": true}})";
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  CHECK(runs() == 11);
}

TEST_CASE("a skip or an error is never cached", "[probes][stack][cache]") {
  FakePython py(R"(echo run >> "$(dirname "$0")/runs"
echo '@@specprobe begin 0'
echo '@@specprobe result {"schema":"specprobe-stack/1","adapter":"stack_deep_gemm","library":"deep_gemm","status":"skip","cases":[],"reason":"no GPU visible to torch"}')");
  const std::string sp = py.dir + "/site-packages";
  fs::create_directories(sp + "/deep_gemm-2.6.1.dist-info");
  std::ofstream(sp + "/deep_gemm-2.6.1.dist-info/RECORD") << "deep_gemm/__init__.py,,\n";
  StackProbeOptions o = opts_for(py);
  o.site_packages = {sp};
  o.machine = "NVIDIA H200|sm90";
  CHECK(run_stack_probe(dg_spec(), o)["status"] == "skip");
  CHECK(run_stack_probe(dg_spec(), o)["cached"] == false);
  std::ifstream in(py.dir + "/runs");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  CHECK(n == 2);
  CHECK_FALSE(fs::exists(py.dir + "/stack-cache/answers"));
}
