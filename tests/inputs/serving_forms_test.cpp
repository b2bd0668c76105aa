// Deploy forms around a serve command (issue 35): shell variables and their defaults, unresolved
// values, functions / eval / sh -c, several servers in one file, docker / podman run, compose,
// Kubernetes, Dockerfile, start-up logs, benchmark matrices, engine versions, shell traps.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "e2e/run_binary.hpp"
#include "inputs/serving.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

using specprobe::test::write_file;

namespace {

ReadOptions clean(std::map<std::string, std::string> env = {}) {
  ReadOptions o;
  o.process_environment = false;
  o.env = std::move(env);
  return o;
}

ServingFile read(const std::string& text, const std::string& name = "deploy.sh", ReadOptions o = clean()) {
  auto r = read_serving_text(text, name, o);
  INFO(name << ": " << (r ? std::string() : r.error().str()));
  REQUIRE(r.has_value());
  return std::move(r).value();
}

ParsedServing one(const std::string& text, const std::string& name = "deploy.sh", ReadOptions o = clean()) {
  ServingFile f = read(text, name, std::move(o));
  REQUIRE(f.plans.size() == 1);
  return std::move(f.plans.front());
}

Json form_fact(const ParsedServing& p, const std::string& name) {
  const Json* v = find_fact(p.facts, name);
  return v ? *v : Json("<absent>");
}

bool note(const ParsedServing& p, const std::string& part) {
  for (const auto& n : p.notes)
    if (n.message.find(part) != std::string::npos) return true;
  return false;
}

std::string line_col(const ParsedServing& p, const std::string& name) {
  auto it = p.locations.find(name);
  return it == p.locations.end() ? "<none>" : std::to_string(it->second.line) + ":" + std::to_string(it->second.column);
}

std::string forms_temp_dir() {
  std::string t = (fs::temp_directory_path() / "specprobe-forms-XXXXXX").string();
  REQUIRE(mkdtemp(t.data()));
  return t;
}

}  // namespace

TEST_CASE("an unset variable makes its fact unknown, never an input error", "[inputs][forms][shell]") {
  // Regression: `--tp-size $TP` exited 2 "tp-size must be an integer, got '$TP'".
  const ParsedServing p = one("python -m sglang.launch_server --model-path m --tp-size $TP\n");
  CHECK(form_fact(p, "serve.tp").is_null());
  CHECK(p.unresolved.at("serve.tp") == std::vector<std::string>{"TP"});
  CHECK(note(p, "$TP has no value here"));
  CHECK(note(p, "--env TP=VALUE"));
  CHECK(form_fact(p, "deploy.unresolved") == Json::array({"TP"}));
  CHECK(form_fact(p, "model.id") == "m");
  // --env gives it a value; so does the environment specprobe runs in.
  CHECK(form_fact(one("python -m sglang.launch_server --model-path m --tp-size $TP\n", "d.sh", clean({{"TP", "4"}})),
                  "serve.tp") == 4);
  ::setenv("SPECPROBE_TEST_TP", "2", 1);
  ReadOptions with_env;
  CHECK(form_fact(one("vllm serve m -tp $SPECPROBE_TEST_TP\n", "d.sh", with_env), "serve.tp") == 2);
  ::unsetenv("SPECPROBE_TEST_TP");
  // vLLM: the positional model, a JSON value with a spliced variable, an unknown --config.
  const ParsedServing v =
      one("vllm serve $MODEL --speculative-config '{\"model\": \"'\"$DRAFT\"'\", \"num_speculative_tokens\": 3, "
          "\"method\": \"eagle3\"}' "
          "--config $CFG --kv-cache-dtype ${KV}\n");
  CHECK(form_fact(v, "model.id").is_null());
  CHECK(form_fact(v, "spec.num_speculative_tokens") == 3);
  CHECK(form_fact(v, "spec.method") == "eagle3");
  CHECK(form_fact(v, "spec.draft_model").is_null());
  CHECK(form_fact(v, "serve.kv_cache_dtype").is_null());
  CHECK(note(v, "$CFG has no value here"));
}

TEST_CASE("an unread --config leaves every option it may set unknown, not vLLM's default", "[inputs][forms][shell]") {
  // vllm-project/recipes' launch scripts pick the YAML in an `if` on nvidia-smi output:
  // `vllm serve M --config ${YAML_CONFIG} --tensor-parallel-size 1`.
  const ParsedServing p = one("vllm serve org/m --config ${YAML_CONFIG} --tensor-parallel-size 1\n");
  CHECK(form_fact(p, "serve.tp") == 1);  // the command line's own value stays
  CHECK(form_fact(p, "serve.kv_cache_dtype").is_null());
  CHECK(form_fact(p, "serve.enforce_eager").is_null());
  CHECK(form_fact(p, "spec.enabled").is_null());  // the file may hold a speculative config
  CHECK(form_fact(p, "model.id") == "org/m");
  CHECK(form_fact(p, "deploy.unresolved") == Json::array({"YAML_CONFIG"}));
  CHECK(p.unresolved.at("serve.kv_cache_dtype") == std::vector<std::string>{"YAML_CONFIG"});
  CHECK(note(p, "$YAML_CONFIG has no value here"));
  CHECK(note(p, "more unknown; pass --env YAML_CONFIG=VALUE"));
  // A speculative config on the command line decides that part; a missing file is unknown too.
  const ParsedServing q =
      one("vllm serve org/m --config missing.yaml --speculative-config '{\"method\": \"ngram\", "
          "\"num_speculative_tokens\": 3}'\n");
  CHECK(form_fact(q, "spec.enabled") == true);
  CHECK(form_fact(q, "serve.kv_cache_dtype").is_null());
  CHECK(note(q, "--config missing.yaml cannot be read here; the options it may set are unknown"));
  // Without --config nothing changes: vLLM's defaults.
  const ParsedServing r = one("vllm serve org/m\n");
  CHECK(form_fact(r, "serve.kv_cache_dtype") == "auto");
  CHECK(form_fact(r, "spec.enabled") == false);
}

TEST_CASE("parameter expansion: defaults, assignment, required, nested, arrays, arithmetic", "[inputs][forms][shell]") {
  const ParsedServing p = one(R"(: "${CTX:=90000}"
TP=${TP_SIZE:-4}
MODEL=${MODEL:-${BASE:-org}/name}
args=(--max-num-seqs 8 "--served-model-name" "a b")
dp=2
vllm serve "$MODEL" --tensor-parallel-size $TP --max-model-len "${CTX}" "${args[@]}" -dp $((dp * 2)) -pp ${PP:?set PP}
)");
  CHECK(form_fact(p, "model.id") == "org/name");
  CHECK(form_fact(p, "serve.tp") == 4);
  CHECK(form_fact(p, "serve.max_model_len") == 90000);
  CHECK(form_fact(p, "serve.max_num_seqs") == 8);
  CHECK(form_fact(p, "serve.dp") == 4);
  CHECK(note(p, "required"));
  CHECK(form_fact(p, "serve.pp").is_null());          // ${PP:?...} unset: unknown, never an input error
  CHECK(line_col(p, "serve.max_num_seqs") == "4:7");  // where the array element was written
  // ${VAR:+word} only when set; field splitting of an unquoted value holding several options.
  const ParsedServing q =
      one("EXTRA='--tensor-parallel-size 2 --enforce-eager'\nvllm serve m $EXTRA ${REV:+--revision $REV}\n");
  CHECK(form_fact(q, "serve.tp") == 2);
  CHECK(form_fact(q, "serve.enforce_eager") == true);
  // An option specprobe does not model keeps its value as written, and the variable is named.
  const ParsedServing u = one("vllm serve m --some-new-option $UNSET_X\n");
  CHECK(note(u, "$UNSET_X has no value here"));
}

TEST_CASE("if, case, loops and functions are read like a careful human reads them", "[inputs][forms][shell]") {
  // A known condition picks its branch.
  CHECK(form_fact(one("DTYPE=FP8\nif [ \"$DTYPE\" = \"FP8\" ]; then\n  KV=fp8\nelse\n  KV=auto\nfi\nvllm serve m "
                      "--kv-cache-dtype $KV\n"),
                  "serve.kv_cache_dtype") == "fp8");
  // An unknown one with different values: unresolved, named after the variable.
  const ParsedServing u =
      one("CC=$(nvidia-smi --query-gpu=compute_cap)\nif [ \"$CC\" = \"10.0\" ]; then D=FP4; else D=FP8; fi\n"
          "vllm serve org/m-$D --tensor-parallel-size 1\n");
  CHECK(form_fact(u, "model.id").is_null());
  CHECK(u.unresolved.at("model.id") == std::vector<std::string>{"D"});
  CHECK(note(u, "assigned differently in the branches"));
  // Conditions joined by || and && are decided as the shell runs them, when every test that runs
  // is over known values (the compose file of cwortman-amd/coder appends options this way).
  const char* appended =
      "FMT=auto\nMODEL=org/m\nARGS=\"--model-path $MODEL --tp-size 1\"\n"
      "if [ \"$FMT\" = \"gguf\" ] || [[ \"$MODEL\" == *.gguf ]]; then\n  ARGS=\"$ARGS --load-format gguf\"\nfi\n"
      "if [ -n \"$MODEL\" ] && [ \"$FMT\" = \"auto\" ]; then\n  ARGS=\"$ARGS --kv-cache-dtype fp8\"\nfi\n"
      "python3 -m sglang.launch_server $ARGS\n";
  const ParsedServing a = one(appended);
  CHECK(form_fact(a, "model.id") == "org/m");
  CHECK(form_fact(a, "serve.kv_cache_dtype") == "fp8");
  CHECK(a.unresolved.empty());
  // One test that cannot be decided and runs: the branches stay unknown.
  const ParsedServing b =
      one("M=$(cat /m)\nA=\"--model-path x\"\nif [ -z \"$M\" ] || [ \"$M\" = y ]; then A=\"$A --tp-size 2\"; fi\n"
          "python3 -m sglang.launch_server $A\n");
  CHECK(form_fact(b, "model.id") == "<absent>");  // $A is unknown: its options are not read
  CHECK(note(b, "${A} has no value here"));
  // A test skipped by && short-circuit need not be decidable.
  CHECK(
      form_fact(one("M=$(cat /m)\nA=\"--model-path x\"\nif [ 1 = 2 ] && [ \"$M\" = y ]; then A=\"$A --tp-size 2\"; fi\n"
                    "python3 -m sglang.launch_server $A\n"),
                "model.id") == "x");
  // Functions with arguments, eval of a command string, sh -c / bash -lc strings.
  CHECK(form_fact(one("launch() {\n  local tp=$2\n  vllm serve \"$1\" --tensor-parallel-size $tp\n}\nlaunch org/m 8\n"),
                  "serve.tp") == 8);
  CHECK(form_fact(one("cmd=\"vllm serve org/m --tensor-parallel-size 2\"\neval \"$cmd\" &\n"), "serve.tp") == 2);
  CHECK(form_fact(one("bash -lc \"ulimit -n 65536; vllm serve org/m --tensor-parallel-size 2\"\n"), "serve.tp") == 2);
  // A while/case argument loop keeps the defaults.
  CHECK(form_fact(one("tp=1\nwhile [ $# -gt 0 ]; do\n  case $1 in\n    --tp) tp=$2; shift 2;;\n  esac\ndone\n"
                      "python3 -m sglang.launch_server --model-path m --tp-size=$tp\n"),
                  "serve.tp") == 1);
  // A loop over literal items: one server each; read with IFS from a here-string.
  const ServingFile loop = read(
      "CONFIGS=(\"a|2\" \"b|4\")\nfor c in \"${CONFIGS[@]}\"; do\n"
      "  IFS='|' read -r NAME TP <<< \"$c\"\n  vllm serve org/$NAME --tensor-parallel-size $TP &\ndone\n");
  REQUIRE(loop.plans.size() == 2);
  CHECK(form_fact(loop.plans[1], "model.id") == "org/b");
  CHECK(form_fact(loop.plans[1], "serve.tp") == 4);
  // More names than fields: the rest are empty, as in bash (three names for "a|2" read past the
  // line's end and threw out_of_range: the pipeline fuzzer's find on an H200, 2026-11-26).
  const ServingFile short_line = read(
      "IFS='|' read -r NAME TP EXTRA MORE <<< \"a|2\"\n"
      "vllm serve org/$NAME --tensor-parallel-size $TP\n");
  REQUIRE(short_line.plans.size() == 1);
  CHECK(form_fact(short_line.plans[0], "serve.tp") == 2);
  // Command substitutions are never run.
  const ParsedServing s =
      one("TP=$(touch /tmp/specprobe-must-not-exist; nproc)\nvllm serve m --tensor-parallel-size $TP\n");
  CHECK(!fs::exists("/tmp/specprobe-must-not-exist"));
  CHECK(note(s, "command substitution"));
  // An unconditional exit ends the script.
  CHECK(read("echo blocked\nexit 78\nvllm serve m\n").plans.empty());
}

TEST_CASE("another CLI's serve subcommand in an image named after vLLM is not vLLM", "[inputs][forms][docker]") {
  // kylin7226's compose file: a locally built vllm-omni image runs `vllm-omni serve MODEL`; it was
  // read as arguments to `vllm serve` (model "vllm-omni"). A vLLM image given options still is.
  const ServingFile omni = read(
      "services:\n  o:\n    image: rocm_gfx1151_vllm-omni:v0.20.0rc1\n    command: [vllm-omni, serve, "
      "Qwen/Qwen3-Omni]\n",
      "compose.yaml");
  CHECK(omni.plans.empty());
  const ServingFile v = read(
      "services:\n  v:\n    image: rocm_gfx1151_vllm:v0.20.1\n    command: [Qwen/Qwen3-8B, --tensor-parallel-size, "
      "\"2\"]\n",
      "compose.yaml");
  REQUIRE(v.plans.size() == 1);
  CHECK(form_fact(v.plans[0], "model.id") == "Qwen/Qwen3-8B");
  CHECK(form_fact(v.plans[0], "serve.tp") == 2);
}

TEST_CASE("one file, several servers: each is read", "[inputs][forms]") {
  const ServingFile f =
      read("vllm serve a --tensor-parallel-size 2 &\nsleep 5\npython3 -m sglang.launch_server --model-path b --tp 4\n");
  REQUIRE(f.plans.size() == 2);
  CHECK(form_fact(f.plans[0], "engine.name") == "vllm");
  CHECK(form_fact(f.plans[1], "engine.name") == "sglang");
  CHECK(form_fact(f.plans[1], "serve.tp") == 4);
  CHECK(f.plans[1].server == "line 3");
  CHECK(form_fact(f.plans[1], "deploy.server") == "line 3");
}

TEST_CASE("docker / podman / nerdctl run: image entrypoint, GPUs, env, version from the tag",
          "[inputs][forms][docker]") {
  const ParsedServing p =
      one("docker run --gpus all --ipc=host -e VLLM_ATTENTION_BACKEND=FLASHINFER -v /m:/m -p 8000:8000 \\\n"
          "  vllm/vllm-openai:v0.20.0-x86_64-cu130 org/model --tensor-parallel-size 4\n");
  CHECK(form_fact(p, "input.form") == "docker-run");
  CHECK(form_fact(p, "model.id") == "org/model");
  CHECK(form_fact(p, "serve.tp") == 4);
  CHECK(form_fact(p, "deploy.gpus") == "all");
  CHECK(form_fact(p, "deploy.image") == "vllm/vllm-openai:v0.20.0-x86_64-cu130");
  CHECK(form_fact(p, "deploy.engine_version") == "0.20.0");
  CHECK(form_fact(p, "deploy.engine_version_source") == "image tag vllm/vllm-openai:v0.20.0-x86_64-cu130");
  CHECK(form_fact(p, "attention.requested") == "FLASHINFER");
  CHECK(note(p, "vLLM 0.20.0 from the image tag"));
  // An older tag with --model (the api_server entrypoint), a quoted device list.
  const ParsedServing old = one("docker run --gpus '\"device=0,1\"' vllm/vllm-openai:v0.6.6.post1 --model org/m\n");
  CHECK(form_fact(old, "deploy.gpus") == 2);
  CHECK(form_fact(old, "deploy.engine_version") == "0.6.6.post1");
  CHECK(form_fact(old, "model.id") == "org/m");
  CHECK(!note(old, "deprecated"));
  // The command given after the image; podman CDI devices; nightly / latest tags name no version.
  const ParsedServing sg =
      one("podman run -d --device nvidia.com/gpu=all lmsysorg/sglang:latest \\\n"
          "  python3 -m sglang.launch_server --model-path org/m --tp 2\n");
  CHECK(form_fact(sg, "engine.name") == "sglang");
  CHECK(form_fact(sg, "deploy.gpus") == "all");
  CHECK(form_fact(sg, "deploy.engine_version") == "<absent>");
  CHECK(note(sg, "image tag 'latest'"));
  CHECK(form_fact(one("nerdctl run vllm/vllm-openai:nightly-0123abcd m\n"), "deploy.engine_version") == "<absent>");
  CHECK(form_fact(one("docker run lmsysorg/sglang:v0.4.9.post6-cu126 python3 -m sglang.launch_server --model-path m\n"),
                  "deploy.engine_version") == "0.4.9.post6");
  // Interactive or entrypoint-only containers start no server.
  CHECK(read("docker run -it --entrypoint /bin/bash vllm/vllm-openai:deploy\n").plans.empty());
  CHECK(read("docker run -it --rm vllm/vllm-openai-rocm:v0.15.1\n").plans.empty());
}

TEST_CASE("docker run --env-file is read when it sits next to the deploy file", "[inputs][forms][docker]") {
  const std::string d = forms_temp_dir();
  write_file(d, "vllm.env", "VLLM_ATTENTION_BACKEND=TRITON_ATTN\n# comment\n");
  const std::string script =
      write_file(d, "run.sh", "docker run --env-file vllm.env --env-file missing.env vllm/vllm-openai:v0.11.0 m\n");
  auto f = read_serving_plans(script, clean());
  REQUIRE(f);
  REQUIRE(f->plans.size() == 1);
  CHECK(form_fact(f->plans[0], "attention.requested") == "TRITON_ATTN");
  CHECK(note(f->plans[0], "missing.env is not next to the deploy file"));
}

TEST_CASE("engine versions from pip lines and pins next to the file", "[inputs][forms][version]") {
  CHECK(form_fact(one("pip install 'vllm==0.10.1'\nvllm serve m\n"), "deploy.engine_version") == "0.10.1");
  CHECK(form_fact(one("uv pip install \"sglang[all]==0.4.6.post1\"\npython -m sglang.launch_server --model-path m\n"),
                  "deploy.engine_version") == "0.4.6.post1");
  const std::string d = forms_temp_dir();
  write_file(d, "requirements.txt",
             "# pins\nvllm==0.11.0\nflashinfer-python==0.4.1 ; sys_platform == 'linux'\nrequests>=2\n");
  write_file(d, "uv.lock", "[[package]]\nname = \"deep-gemm\"\nversion = \"2.5.0\"\n");
  auto f = read_serving_plans(write_file(d, "serve.sh", "vllm serve m\n"), clean());
  REQUIRE(f);
  const ParsedServing& p = f->plans.at(0);
  CHECK(form_fact(p, "deploy.engine_version") == "0.11.0");
  CHECK(form_fact(p, "deploy.engine_version_source") == "requirements.txt: vllm==0.11.0");
  CHECK(form_fact(p, "deploy.lib_pins")["flashinfer"]["version"] == "0.4.1");
  CHECK(form_fact(p, "deploy.lib_pins")["deep_gemm"]["version"] == "2.5.0");
}

TEST_CASE("pins next to the file: a directory's listing is kept while it is unchanged, and read again after",
          "[inputs][forms][version]") {
  // Issue 49: a many-file run lists each directory once; a requirements file added, changed or
  // removed between two reads in one process is seen (the listing follows the directory's
  // modification time; the files' text is read every time).
  const std::string d = forms_temp_dir() + "/pins-listed-once";
  std::filesystem::create_directories(d);
  const std::string serve = write_file(d, "serve.sh", "vllm serve m\n");
  auto version = [&] {
    auto f = read_serving_plans(serve, clean());
    REQUIRE(f);
    return form_fact(f->plans.at(0), "deploy.engine_version").get<std::string>();
  };
  CHECK(version() == "<absent>");
  CHECK(version() == "<absent>");
  // An entry added a moment later (a coarse clock could give the directory the same time).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_file(d, "requirements-serve.txt", "vllm==0.12.0\n");
  CHECK(version() == "0.12.0");
  write_file(d, "requirements-serve.txt", "vllm==0.13.0\n");  // the same entry, new text
  CHECK(version() == "0.13.0");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::filesystem::remove(std::filesystem::path(d) / "requirements-serve.txt");
  CHECK(version() == "<absent>");
}

TEST_CASE("docker compose: services, list and string commands, env, $$, GPUs", "[inputs][forms][compose]") {
  const ServingFile f = read(R"(x-env: &env
  HF_HOME: /hf
services:
  vllm:
    image: vllm/vllm-openai:${TAG:-v0.25.0}
    environment:
      VLLM_ATTENTION_BACKEND: FLASH_ATTN
    command:
      - ${MODEL:-org/a}
      - --tensor-parallel-size
      - "2"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 2
              capabilities: [gpu]
  sglang:
    image: lmsysorg/sglang:v0.5.3
    entrypoint: ["/bin/bash", "-c"]
    environment:
      - MODEL_PATH=${MP:-org/b}
    command:
      - |
        ARGS="--model-path $${MODEL_PATH} --tp 4"
        exec python3 -m sglang.launch_server $$ARGS
    deploy:
      resources:
        reservations:
          devices:
            - capabilities: [gpu]
              device_ids: ['0', '1', '2', '3']
  ui:
    image: ghcr.io/open-webui/open-webui:main
)",
                             "compose.yaml");
  REQUIRE(f.plans.size() == 2);
  const ParsedServing& a = f.plans[0];
  CHECK(form_fact(a, "input.form") == "compose");
  CHECK(a.server == "service vllm");
  CHECK(form_fact(a, "model.id") == "org/a");
  CHECK(form_fact(a, "serve.tp") == 2);
  CHECK(form_fact(a, "deploy.gpus") == 2);
  CHECK(form_fact(a, "deploy.engine_version") == "0.25.0");
  CHECK(form_fact(a, "attention.requested") == "FLASH_ATTN");
  CHECK(line_col(a, "serve.tp") == "10:9");  // the list item holding the flag
  const ParsedServing& b = f.plans[1];
  CHECK(form_fact(b, "engine.name") == "sglang");
  CHECK(form_fact(b, "model.id") == "org/b");
  CHECK(form_fact(b, "serve.tp") == 4);
  CHECK(form_fact(b, "deploy.gpus") == 4);
  CHECK(line_col(b, "serve.tp") == "26:43");  // inside the block scalar, through $${...}
  // A vLLM image with no command: the server's model is unknown, and says so.
  const ParsedServing none = one("services:\n  v:\n    image: vllm/vllm-openai:v0.11.0\n", "c.yaml");
  CHECK(form_fact(none, "model.id") == "<absent>");
  CHECK(note(none, "runs `vllm serve`"));
}

TEST_CASE("Kubernetes: containers anywhere, $(VAR), GPU limits, several documents", "[inputs][forms][k8s]") {
  const ServingFile f = read(R"y(apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  leaderWorkerTemplate:
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: vllm/vllm-openai:v0.8.5
            env:
              - name: MODEL_ID
                value: org/m
              - name: TOKEN
                valueFrom: {secretKeyRef: {name: s, key: k}}
            command:
              - sh
              - -c
              - "bash multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE);
                python3 -m vllm.entrypoints.openai.api_server --model $(MODEL_ID) --tensor-parallel-size 8 --pipeline-parallel-size 2"
            resources:
              limits:
                nvidia.com/gpu: "8"
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: vllm/vllm-openai:v0.8.5
            command: [sh, -c, "bash multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sg}
spec:
  template:
    spec:
      initContainers:
        - name: fetch
          image: busybox
          command: [sh, -c, "echo"]
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.18
          args: [python3, -m, sglang.launch_server, --model-path, $(MODEL_PATH), --tp, "2"]
          resources: {limits: {amd.com/gpu: 2}}
)y",
                             "k8s.yaml");
  REQUIRE(f.plans.size() == 2);
  const ParsedServing& l = f.plans[0];
  CHECK(form_fact(l, "input.form") == "kubernetes");
  CHECK(l.server == "LeaderWorkerSet vllm leader container leader");
  CHECK(form_fact(l, "model.id") == "org/m");
  CHECK(form_fact(l, "serve.tp") == 8);
  CHECK(form_fact(l, "serve.pp") == 2);
  CHECK(form_fact(l, "deploy.gpus") == 8);
  CHECK(form_fact(l, "deploy.engine_version") == "0.8.5");
  CHECK(line_col(l, "serve.pp") == "25:108");  // the flag, on the second line of the block scalar
  const ParsedServing& s = f.plans[1];
  CHECK(form_fact(s, "model.id").is_null());
  CHECK(s.unresolved.at("model.id") == std::vector<std::string>{"MODEL_PATH"});
  CHECK(form_fact(s, "deploy.gpus") == 2);
  CHECK(form_fact(s, "deploy.engine_version") == "0.5.18");
}

TEST_CASE("kubectl apply with a here-document and KServe's Hugging Face runtime", "[inputs][forms][k8s]") {
  const ParsedServing p =
      one("cat <<EOF | kubectl apply -f -\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"
          "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.9.2\n"
          "        args: [--model, org/m, --tensor-parallel-size, '2']\nEOF\n");
  CHECK(form_fact(p, "serve.tp") == 2);
  CHECK(line_col(p, "serve.tp") == "11:32");  // the flag in the here-document
  const ParsedServing k =
      one("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: h}\nspec:\n"
          "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n"
          "      args: [--model_name=x, --model_id=org/m]\n      resources: {limits: {nvidia.com/gpu: '1'}}\n",
          "isvc.yaml");
  CHECK(form_fact(k, "engine.name") == "vllm");
  CHECK(form_fact(k, "model.id") == "org/m");
  CHECK(form_fact(k, "deploy.gpus") == 1);
}

TEST_CASE("invalid deploy YAML is an input error naming the file and place", "[inputs][forms][k8s]") {
  auto r = read_serving_text(
      "apiVersion: v1\nkind: Pod\n<<<<<<< HEAD\nspec: {a: 1}\n=======\nspec: {a: 2}\n>>>>>>> x\n", "pod.yaml", clean());
  REQUIRE(!r);
  CHECK(r.error().where.file == "pod.yaml");
  CHECK(r.error().where.line > 0);
  CHECK(r.error().message.find("merge-conflict") != std::string::npos);
}

TEST_CASE("a Dockerfile's ENTRYPOINT / CMD", "[inputs][forms][dockerfile]") {
  const ParsedServing p =
      one("FROM vllm/vllm-openai:v0.10.1\nENV VLLM_ATTENTION_BACKEND=FLASHINFER\n"
          "ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server \\\n    --model ${MODEL_NAME:-org/m} \\\n"
          "    ${REVISION:+--revision \"$REVISION\"}\n",
          "Dockerfile");
  CHECK(form_fact(p, "input.form") == "dockerfile");
  CHECK(form_fact(p, "model.id") == "org/m");
  CHECK(form_fact(p, "deploy.engine_version") == "0.10.1");
  CHECK(form_fact(p, "attention.requested") == "FLASHINFER");
  CHECK(form_fact(one("FROM lmsysorg/sglang:v0.5.2\nCMD [\"python3\", \"-m\", \"sglang.launch_server\", "
                      "\"--model-path\", \"m\", \"--tp\", \"2\"]\n",
                      "app.dockerfile"),
                  "serve.tp") == 2);
}

TEST_CASE("start-up logs: non-default args, Namespace, ServerArgs, cut lines", "[inputs][forms][log]") {
  const ServingFile f = read(
      "(APIServer pid=6539) INFO 04-18 20:22:57 [utils.py:299] \xE2\x96\x88 \xE2\x96\x80\xE2\x96\x84\xE2\x96\x80 "
      "\xE2\x96\x88 version 0.19.0\n"
      "(APIServer pid=6539) INFO 04-18 20:22:57 [utils.py:233] non-default args: {'model_tag': 'org/m', "
      "'tensor_parallel_size': 2, "
      "'speculative_config': {'method': 'eagle3', 'model': 'org/d', 'num_speculative_tokens': 3}, 'hf_overrides': "
      "{'a': [1, None, True]}}\n"
      "(Worker pid=1) INFO 04-18 20:22:58 [utils.py:233] non-default args: {'model': 'org/n', 'kv_cache_dtype': 'fp8'} "
      "[repeated 7x across cluster]\n",
      "serve.log");
  REQUIRE(f.plans.size() == 2);
  const ParsedServing& a = f.plans[0];
  CHECK(form_fact(a, "input.form") == "vllm-log");
  CHECK(form_fact(a, "model.id") == "org/m");
  CHECK(form_fact(a, "serve.tp") == 2);
  CHECK(form_fact(a, "spec.method") == "eagle3");
  CHECK(form_fact(a, "spec.num_speculative_tokens") == 3);
  CHECK(form_fact(a, "deploy.engine_version") == "0.19.0");
  CHECK(form_fact(f.plans[1], "serve.kv_cache_dtype") == "fp8");
  // The old Namespace with enum reprs and a line wrapped inside a token; cut short.
  const ParsedServing n =
      one("python -m vllm.entrypoints.openai.api_server --model x --tensor_parallel_size 2\n"
          "INFO 03-29 08:49:38 [api_server.py:981] vLLM API server version 0.8.2\n"
          "INFO 03-29 08:49:38 [api_server.py:982] args: Namespace(host='0.0.0.0', model='y', config_format=<ConfigF\n"
          "ormat.AUTO: 'auto'>, dtype='bfloat16', kv_cache_dtype='auto', ma",
          "issue.log");
  CHECK(form_fact(n, "model.id") == "y");  // the log wins
  CHECK(form_fact(n, "serve.tp") == 2);    // the command fills in what was cut
  CHECK(form_fact(n, "serve.dtype") == "bfloat16");
  CHECK(form_fact(n, "deploy.engine_version") == "0.8.2");
  CHECK(note(n, "cut short after 'kv_cache_dtype'"));
  // The same line with no command: what the cut hides is unknown, not the engine's default (a
  // log cut before tensor_parallel_size is no TP-1 server); what it shows keeps its value.
  const ParsedServing cut =
      one("INFO 03-29 08:49:38 [api_server.py:982] args: Namespace(host='0.0.0.0', model='y', "
          "dtype='bfloat16', kv_cache_dtype='auto', ma",
          "cut.log");
  CHECK(form_fact(cut, "serve.dtype") == "bfloat16");
  CHECK(form_fact(cut, "serve.kv_cache_dtype") == "auto");
  CHECK(form_fact(cut, "serve.tp").is_null());
  CHECK(form_fact(cut, "serve.pp").is_null());
  CHECK(form_fact(cut, "serve.enforce_eager").is_null());
  CHECK(note(cut, "unknown, not the engine's defaults: "));
  // A log whose first line starts with '[' (a prompt with a date) is a log, not broken JSON.
  const ParsedServing prompt =
      one("[25 Jun 05:21 PM] ~/deploy/vllm \xE2\x9D\xAF CUDA_VISIBLE_DEVICES=4 ./run-openai-server.sh\n"
          "(APIServer pid=3380144) INFO 06-25 17:21:29 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
          "'model': 'Qwen/Qwen3-8B', 'max_model_len': 40960}\n",
          "prompt.log");
  CHECK(form_fact(prompt, "input.form") == "vllm-log");
  CHECK(form_fact(prompt, "model.id") == "Qwen/Qwen3-8B");
  CHECK(form_fact(prompt, "serve.max_model_len") == 40960);
  // A log with no arguments line: the serve command pasted with it is the plan, with the log's
  // version; with no command either, no server (not a made-up SGLang fragment).
  const ParsedServing pasted =
      one("vllm serve org/m --max-model-len 4096\n"
          "INFO 03-29 08:49:38 [api_server.py:981] vLLM API server version 0.8.2\n"
          "INFO 03-29 08:49:56 [gpu_model_runner.py:4820] Model loading took 7.12 GiB memory\n",
          "pasted.log");
  CHECK(form_fact(pasted, "engine.name") == "vllm");
  CHECK(form_fact(pasted, "model.id") == "org/m");
  CHECK(form_fact(pasted, "serve.max_model_len") == 4096);
  CHECK(form_fact(pasted, "deploy.engine_version") == "0.8.2");
  CHECK(read("INFO 03-29 08:49:56 [gpu_model_runner.py:4820] Model loading took 7.12 GiB\nhello\n", "plain.log")
            .plans.empty());
  // SGLang's ServerArgs.
  const ParsedServing s =
      one("server_args=ServerArgs(model_path='org/q', tp_size=4, speculative_algorithm='EAGLE', "
          "speculative_num_steps=3, attention_backend=None, disable_cuda_graph=False)\n",
          "sglang.log");
  CHECK(form_fact(s, "engine.name") == "sglang");
  CHECK(form_fact(s, "serve.tp") == 4);
  CHECK(form_fact(s, "spec.method") == "eagle");
  CHECK(form_fact(s, "spec.num_steps") == 3);
  CHECK(form_fact(s, "attention.requested").is_null());
}

TEST_CASE("vLLM benchmark matrices: one server per test, defaults merged", "[inputs][forms][json]") {
  const ServingFile f = read(R"({"defaults": {"server_parameters": {"model": "org/m", "tensor_parallel_size": 1},
  "server_environment_variables": {"VLLM_ROCM_USE_AITER": 1}},
 "tests": [{"test_name": "a", "server_parameters": {"tensor_parallel_size": 2, "tensor_parallel_size": 4}},
           {"test_name": "b", "server_parameters": {"enforce_eager": ""}}]})",
                             "serving-tests.json");
  REQUIRE(f.plans.size() == 2);
  CHECK(form_fact(f.plans[0], "serve.tp") == 4);  // the later duplicate, as Python's json
  CHECK(note(f.plans[0], "appears twice"));
  CHECK(form_fact(f.plans[1], "serve.tp") == 1);
  CHECK(form_fact(f.plans[1], "serve.enforce_eager") == true);
  CHECK(f.plans[1].server == "test b");
}

TEST_CASE("vLLM benchmark matrices: defaults and test_name of another type are not read", "[inputs][forms][json]") {
  // Found by the pipeline property test: a number as "defaults" made nlohmann's value() throw
  // (type_error.306), a non-string "test_name" get<std::string>() (type_error.302); both ended as
  // "cannot read serving configuration: [json.exception...]".
  const ServingFile f = read(R"({"defaults": -1,
 "tests": [{"test_name": 9223372036854775808, "server_parameters": {"model": "org/m", "tensor_parallel_size": 2}},
           {"test_name": {"a": 1}, "server_parameters": {"model": "org/m"}}, {"test_name": null}]})",
                             "serving-tests.json");
  REQUIRE(f.plans.size() == 3);
  CHECK(form_fact(f.plans[0], "serve.tp") == 2);
  CHECK(f.plans[0].server == "test 0");
  CHECK(f.plans[1].server == "test 1");
  CHECK(f.plans[2].server == "test 2");
}

TEST_CASE("shell constructs that change a serve command's meaning are warned about", "[inputs][forms][traps]") {
  CHECK(note(one("vllm serve <MODEL> --tensor-parallel-size 2\n"), "<MODEL> looks like a placeholder"));
  CHECK(form_fact(one("vllm serve <MODEL> --tensor-parallel-size 2\n"), "serve.tp") == 2);
  CHECK(form_fact(one("vllm serve <MODEL> --tensor-parallel-size 2\n"), "model.id").is_null());
  CHECK(note(one("vllm serve m \xE2\x80\x94tensor-parallel-size 2\n"), "typographic dash"));
  CHECK(note(one("vllm serve m --trust-remote-code--enforce-eager\n"), "glued together"));
  CHECK(
      note(one("python3 -m sglang.launch_server --model-path m --host [0.0.0.0](http://0.0.0.0/)\n"), "markdown link"));
  CHECK(note(one("$ vllm serve m\n"), "shell prompt"));
  CHECK(note(one("(venv) me@box:~$ vllm serve m\n"), "shell prompt"));
  CHECK(note(one("vllm serve m \\\n  --tensor-parallel-size 2 \\\n\ndocker logs x\n"), "next line is blank"));
  CHECK(note(one("vllm serve m \\\n  --max-model-len 4096 \\\n# --enforce-eager \\\n"), "comment ends the command"));
  // Option lines after a comment cut or a missing backslash: joined, with a warning.
  const ParsedServing j =
      one("vllm serve m \\\n  --max-model-len 4096 \\ # trailing note\n  --tensor-parallel-size 8\n");
  CHECK(form_fact(j, "serve.tp") == 8);
  CHECK(note(j, "a shell runs it as a separate command"));
}

TEST_CASE("a file that starts no server says why, without an error", "[inputs][forms]") {
  const ServingFile f = read("docker run -it --entrypoint /bin/bash vllm/vllm-openai:deploy\n");
  CHECK(f.plans.empty());
  auto r = read_serving_text("echo hello\n", "x.sh", clean());
  REQUIRE(r);
  CHECK(r->plans.empty());
  // read_serving_file keeps its contract: the first server, or an error.
  const std::string d = forms_temp_dir();
  auto e = read_serving_file(write_file(d, "none.sh", "echo hello\n"), clean());
  REQUIRE(!e);
  CHECK(e.error().message.find("no serve command found") != std::string::npos);
}

TEST_CASE("an option given many times is one note with the count at the value that wins", "[inputs][forms]") {
  std::string many = "vllm serve m";
  for (int i = 0; i < 5000; ++i) many += " --enable-prefix-caching";
  many += " -tp 2 --tensor-parallel-size 4\n";
  const ParsedServing v = one(many);
  size_t repeat_notes = 0;
  for (const auto& n : v.notes) {
    if (n.message.find(" times; the last value wins") == std::string::npos) continue;
    ++repeat_notes;
    if (n.message.find("enable-prefix-caching") != std::string::npos) {
      CHECK(n.message == "enable-prefix-caching is given 5000 times; the last value wins");
      CHECK(n.where.column == 13 + 24 * 4999 + 1);  // the 5000th flag
    } else {
      CHECK(n.message == "tensor-parallel-size is given 2 times; the last value wins");
    }
  }
  CHECK(repeat_notes == 2);
  CHECK(form_fact(v, "serve.tp") == Json(4));

  const ParsedServing s = one("python -m sglang.launch_server --model-path m --tp 2 --tp 8 --tp 4\n");
  CHECK(note(s, "--tp-size is given 3 times; the last value wins"));
  CHECK(form_fact(s, "serve.tp") == Json(4));
}

TEST_CASE("a YAML stream is read document by document: markers, locations, and no loop on a malformed one",
          "[inputs][forms][k8s]") {
  // Three documents, `...` closing the second: the third's container is found, at its own line.
  const ServingFile f = read(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: v1
kind: Service
metadata: {name: s}
...
--- # the deployment
apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        command: [vllm, serve, org/m, --tensor-parallel-size, '2']
)",
                             "deploy.yaml");
  REQUIRE(f.plans.size() == 1);
  CHECK(form_fact(f.plans[0], "serve.tp") == 2);
  CHECK(line_col(f.plans[0], "serve.tp").rfind("19:", 0) == 0);
  // yaml-cpp's LoadAll looped on this stream, allocating until the machine ran out of memory
  // (the pipeline fuzzer's find); read per document it is a file that starts no server.
  auto r = read_serving_text("{\n  },\napiVersion:tensor_parallel_size: 8", "bad.yaml", clean());
  if (r)
    CHECK(r->plans.empty());
  else
    CHECK(r.error().kind == ErrorKind::input);
}
