// The deploy-script shell (src/inputs/shell/) on its own: which commands a script reaches, with
// which words and environment, and where a value it cannot know stays unresolved. The readers
// built on it are tested through whole deploy files in tests/inputs/serving_forms_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "inputs/shell/script.hpp"

using namespace specprobe;
using namespace specprobe::serving;

namespace {

struct Reached {
  std::vector<std::string> words;
  std::map<std::string, std::string> env;
  std::vector<std::string> heredocs;
  int depth = 0;
};

std::vector<Reached> walk(const std::string& script, ShellOptions options = {},
                          std::vector<ReaderNote>* notes = nullptr) {
  std::vector<Reached> out;
  ShellReader reader(
      script,
      [](size_t off) {
        return SourceLocation{"deploy.sh", 1, static_cast<int>(off) + 1};
      },
      std::move(options));
  const Status st = reader.run([&](const ShellCommand& c) -> Status {
    Reached r;
    for (const auto& w : c.words)
      if (w.kind == ShellWord::word) r.words.push_back(show_unresolved(w.text));
    for (const auto& [k, v] : c.env) r.env[k] = show_unresolved(v.value);
    for (const auto& h : c.heredocs) r.heredocs.push_back(h.text);
    r.depth = c.depth;
    if (!r.words.empty() && (r.words[0] == "[" || r.words[0] == "[[")) return Ok{};  // a test, reached too
    out.push_back(std::move(r));
    return Ok{};
  });
  REQUIRE(st.has_value());
  if (notes) *notes = reader.notes();
  return out;
}

std::vector<std::string> words(const std::string& joined) {
  std::vector<std::string> out;
  std::istringstream in(joined);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("shell: variables, defaults and quoting reach the command's words", "[inputs][shell]") {
  const auto cmds = walk(
      "MODEL=/models/llama\n"
      "TP=${TP:-4}\n"
      "ARGS=\"--max-model-len 8192\"\n"
      "vllm serve \"$MODEL\" --tensor-parallel-size $TP $ARGS\n");
  REQUIRE(cmds.size() == 1);
  CHECK(cmds[0].words == words("vllm serve /models/llama --tensor-parallel-size 4 --max-model-len 8192"));
}

TEST_CASE("shell: a value it cannot know stays unresolved, never guessed", "[inputs][shell]") {
  const auto cmds = walk("N=$(nvidia-smi -L | wc -l)\nvllm serve m --tensor-parallel-size $N --port $PORT\n");
  REQUIRE(cmds.size() == 1);
  REQUIRE(cmds[0].words.size() == 7);
  CHECK(cmds[0].words[4] == "${N}");
  CHECK(cmds[0].words[6] == "${PORT}");
}

TEST_CASE("shell: a known if condition picks its branch, an unknown one reads both", "[inputs][shell]") {
  SECTION("known") {
    const auto cmds =
        walk("GPU=h200\nif [ \"$GPU\" = h200 ]; then K=3; else K=1; fi\nsglang serve --speculative-num-steps $K\n");
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0].words.back() == "3");
  }
  SECTION("unknown: both branches' commands are reached, the differing variable is unresolved") {
    const auto cmds =
        walk("if [ -f /etc/big ]; then K=3; vllm serve a; else K=1; vllm serve b; fi\nvllm serve c -tp $K\n");
    std::vector<std::string> firsts;
    for (const auto& c : cmds) firsts.push_back(c.words.size() > 2 ? c.words[2] : c.words.back());
    CHECK(std::count(firsts.begin(), firsts.end(), "a") == 1);
    CHECK(std::count(firsts.begin(), firsts.end(), "b") == 1);
    REQUIRE(cmds.back().words.size() == 5);
    CHECK(cmds.back().words[4] == "${K}");
  }
}

TEST_CASE("shell: functions run where called, with their arguments", "[inputs][shell]") {
  const auto cmds = walk("serve() { local tp=$1; vllm serve m -tp \"$tp\"; }\nserve 8\nserve 2\n");
  REQUIRE(cmds.size() == 2);
  CHECK(cmds[0].words == words("vllm serve m -tp 8"));
  CHECK(cmds[1].words == words("vllm serve m -tp 2"));
}

TEST_CASE("shell: exported variables and VAR=x prefixes are the command's environment", "[inputs][shell]") {
  const auto cmds =
      walk("export VLLM_ATTENTION_BACKEND=FLASHINFER\nUNSET_HERE=1\nCUDA_VISIBLE_DEVICES=0,1 vllm serve m\n");
  REQUIRE(cmds.size() == 1);
  CHECK(cmds[0].env.at("VLLM_ATTENTION_BACKEND") == "FLASHINFER");
  CHECK(cmds[0].env.at("CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(cmds[0].env.count("UNSET_HERE") == 0);  // assigned, not exported
}

TEST_CASE("shell: --env and the starting environment resolve values but are not the server's environment",
          "[inputs][shell]") {
  ShellOptions o;
  o.vars["MODEL"] = ShellValue{"/m", {}, true, "--env"};
  const auto cmds = walk("vllm serve $MODEL\n", o);
  REQUIRE(cmds.size() == 1);
  CHECK(cmds[0].words == words("vllm serve /m"));
  CHECK(cmds[0].env.count("MODEL") == 0);
}

TEST_CASE("shell: sh -c strings and eval are read as scripts, one level deeper", "[inputs][shell]") {
  const auto cmds = walk("TP=2\nbash -lc \"vllm serve m -tp $TP\"\neval 'sglang serve --tp 4'\n");
  REQUIRE(cmds.size() >= 2);
  bool saw_vllm = false, saw_sglang = false;
  for (const auto& c : cmds) {
    if (!c.words.empty() && c.words[0] == "vllm") {
      saw_vllm = true;
      CHECK(c.words == words("vllm serve m -tp 2"));
      CHECK(c.depth == 1);
    }
    if (!c.words.empty() && c.words[0] == "sglang") {
      saw_sglang = true;
      CHECK(c.depth == 1);
    }
  }
  CHECK(saw_vllm);
  CHECK(saw_sglang);
}

TEST_CASE("shell: a here-document is handed to its command, expanded unless quoted", "[inputs][shell]") {
  const auto cmds = walk("K=3\ncat > spec.json <<EOF\n{\"k\": $K}\nEOF\ncat <<'RAW'\n$K\nRAW\n");
  REQUIRE(cmds.size() == 2);
  REQUIRE(cmds[0].heredocs.size() == 1);
  CHECK(cmds[0].heredocs[0] == "{\"k\": 3}\n");
  REQUIRE(cmds[1].heredocs.size() == 1);
  CHECK(cmds[1].heredocs[0] == "$K\n");
}

TEST_CASE("shell: a construct left open at the end is closed there with a note, not an error", "[inputs][shell]") {
  std::vector<ReaderNote> notes;
  const auto cmds = walk("if [ -n \"$X\" ]; then\n  vllm serve m\n", {}, &notes);
  REQUIRE(cmds.size() == 1);
  CHECK(cmds[0].words == words("vllm serve m"));
  CHECK_FALSE(notes.empty());
}

TEST_CASE("shell: expand_command_text expands one command line without running a script", "[inputs][shell]") {
  ShellVars vars;
  vars["TP"] = ShellValue{"4", {}, false, "container"};
  std::vector<ReaderNote> notes;
  const std::string text = "vllm serve m --tensor-parallel-size ${TP} --max-num-seqs ${SEQS:-64}";
  const auto got = expand_command_text(
      text,
      [](size_t o) {
        return SourceLocation{"compose.yaml", 3, static_cast<int>(o)};
      },
      vars, notes);
  REQUIRE(got.has_value());
  std::vector<std::string> ws;
  for (const auto& w : *got) ws.push_back(w.text);
  CHECK(ws == words("vllm serve m --tensor-parallel-size 4 --max-num-seqs 64"));
}
