// No file content in messages (issue 39 item 4, SECURITY.md "What messages quote"): a config under
// review can point specprobe at any local file (`model:`, a deploy script's `--config`, links in
// a checkpoint), and what specprobe prints goes to CI logs, SARIF, JUnit and annotations a pull
// request's author can read. A secret-bearing file reached that way must not show up anywhere;
// a file the user named shows at most a 32-character excerpt. Also the excerpt helper itself.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../e2e/run_binary.hpp"
#include "common/excerpt.hpp"

namespace fs = std::filesystem;
using specprobe::test::run_specprobe;
using specprobe::test::shell_quote;
using specprobe::test::temp_dir;

using specprobe::test::file_text;
using specprobe::test::write_bytes;

namespace {

// 37 characters like a Hugging Face token; its parts are looked for separately.
const std::string kToken = "hf_PIPEsecretXq7Wz9Kp2Lm4Nv6Bc8Df0Gh";
const std::vector<std::string> kTokenParts = {"PIPEsecret", "Xq7Wz9Kp", "2Lm4Nv6B", "c8Df0Gh"};
// The file: a JSON object cut after the token's line (the raw newline ends nlohmann's string
// token, which it quoted whole as "last read").
const std::string kSecretFile = "{\"hf_token\": \"" + kToken + "\n\"x\": 1}\n";

const std::string kLlamaConfigJson =
    std::string(SPECPROBE_SOURCE_DIR) + "/docs/examples/checkpoints/llama-3.1-8b/config.json";

// Everything one run writes: stdout (text), stderr, and the JSON, SARIF, JUnit, GitHub command
// and job summary outputs.
struct Outputs {
  int exit_code = -1;
  std::string all;
  std::string messages;  // all but the JSON report, whose facts hold a named config's values whole
};
Outputs check_everything(const fs::path& dir, const std::string& args) {
  const fs::path summary = dir / "summary.md";
  ::setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  auto r = run_specprobe(
      args + " --gpu H100 --no-matrix --unknown-ok --json out.json --sarif out.sarif --junit out.xml --github",
      dir.string());
  ::unsetenv("GITHUB_STEP_SUMMARY");
  Outputs o;
  o.exit_code = r.exit_code;
  o.all = r.out + "\n" + r.err;
  o.messages = o.all;
  for (const char* f : {"out.sarif", "out.xml", "summary.md"})
    if (fs::exists(dir / f)) o.messages += "\n" + file_text(dir / f);
  for (const char* f : {"out.json", "out.sarif", "out.xml", "summary.md"})
    if (fs::exists(dir / f)) o.all += "\n" + file_text(dir / f);
  for (const char* f : {"out.json", "out.sarif", "out.xml", "summary.md"}) fs::remove(dir / f);
  return o;
}

void no_secret(const Outputs& o, const std::string& what, bool named = false) {
  INFO(what << ": exit " << o.exit_code << "\n" << o.all.substr(0, 4000));
  CHECK((o.exit_code == 0 || o.exit_code == 1 || o.exit_code == 2));
  // A file the user named: messages quote at most an excerpt (the JSON report's facts hold its
  // values as given, SECURITY.md). A file the user did not name: nothing of it anywhere, not even
  // an excerpt.
  CHECK(o.messages.find(kToken) == std::string::npos);
  if (!named) CHECK(o.all.find(kToken) == std::string::npos);
  if (!named)
    for (const auto& part : kTokenParts) CHECK(o.all.find(part) == std::string::npos);
}

}  // namespace

TEST_CASE("no file content: a secret file reached through the config shows nowhere", "[pipeline][security]") {
  const fs::path t = temp_dir();
  const fs::path secret = t / "home/.config/tokens.json";
  write_bytes(secret, kSecretFile);
  write_bytes(t / "home/secretdir/config.json", kSecretFile);
  const fs::path repo = t / "repo";
  fs::create_directories(repo);

  SECTION("model: the secret file, outside the config's directory: named, not read") {
    write_bytes(repo / "serve.yaml", "model: " + secret.string() + "\ntensor-parallel-size: 1\n");
    auto o = check_everything(repo, "check serve.yaml");
    no_secret(o, "model: file outside");
    CHECK(o.exit_code == 0);
    CHECK(o.all.find("lies outside the directory of serve.yaml: not read") != std::string::npos);
    CHECK(o.all.find("tokens.json") != std::string::npos);  // reported by name
  }
  SECTION("model: a directory outside, whose config.json is the secret") {
    write_bytes(repo / "serve.json", "{\"model\": \"" + (t / "home/secretdir").string() + "\"}");
    no_secret(check_everything(repo, "check serve.json"), "model: dir outside");
  }
  SECTION("model: a relative path that climbs out") {
    write_bytes(repo / "serve.yaml", "model: ../home/secretdir\n");
    no_secret(check_everything(repo, "check serve.yaml"), "model: ../");
  }
  SECTION("model: a link inside the tree to the directory outside") {
    fs::create_directory_symlink(t / "home/secretdir", repo / "ckpt");
    write_bytes(repo / "serve.yaml", "model: ./ckpt\n");
    no_secret(check_everything(repo, "check serve.yaml"), "model: link to dir outside");
  }
  SECTION("model: a checkpoint in the tree whose metadata files are links to the secret") {
    fs::create_directories(repo / "ckpt");
    fs::create_symlink(secret, repo / "ckpt/config.json");
    write_bytes(repo / "serve.yaml", "model: ./ckpt\n");
    no_secret(check_everything(repo, "check serve.yaml"), "config.json link out");
    fs::remove(repo / "ckpt/config.json");
    fs::copy_file(kLlamaConfigJson, repo / "ckpt/config.json");
    fs::create_symlink(secret, repo / "ckpt/hf_quant_config.json");
    fs::create_symlink(secret, repo / "ckpt/model.safetensors.index.json");
    auto o = check_everything(repo, "check serve.yaml");
    no_secret(o, "hf_quant_config.json and index links out");
    CHECK(o.exit_code <= 1);
    CHECK(o.all.find("is a link out of the checkpoint's directory tree; not read") != std::string::npos);
    CHECK(o.all.find("the index resolves outside the checkpoint tree; not read") != std::string::npos);
  }
  SECTION("a deploy script's --config: outside, and a link out") {
    write_bytes(repo / "serve.sh", "vllm serve m --config " + secret.string() + " --tensor-parallel-size 2\n");
    auto o = check_everything(repo, "check serve.sh");
    no_secret(o, "--config outside");
    CHECK(o.all.find("lies outside the directory of serve.sh: not read") != std::string::npos);
    fs::create_symlink(secret, repo / "opts.json");
    write_bytes(repo / "serve2.sh", "vllm serve m --config opts.json\n");
    no_secret(check_everything(repo, "check serve2.sh"), "--config link out");
  }
  SECTION("a docker run --env-file outside, a compose .env link and a requirements.txt link: not read") {
    write_bytes(t / "home/secret.env", "MODEL=" + kToken + "\n");
    write_bytes(repo / "run.sh", "docker run --gpus all --env-file " + (t / "home/secret.env").string() +
                                     " vllm/vllm-openai:v0.10.0 --model $MODEL --tensor-parallel-size 2\n");
    no_secret(check_everything(repo, "check run.sh"), "--env-file outside");
    fs::create_symlink(t / "home/secret.env", repo / ".env");
    fs::create_symlink(t / "home/secret.env", repo / "requirements.txt");
    write_bytes(repo / "compose.yaml",
                "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    command: --model ${MODEL} "
                "--tensor-parallel-size 2\n");
    no_secret(check_everything(repo, "check compose.yaml"), ".env and requirements.txt links out");
  }
  SECTION(".specprobe.yaml next to the config: a link to the secret is refused, not read") {
    write_bytes(repo / "serve.yaml", "model: m\n");
    fs::create_symlink(secret, repo / ".specprobe.yaml");
    auto o = check_everything(repo, "check serve.yaml");
    no_secret(o, ".specprobe.yaml link out");
    CHECK(o.exit_code == 2);
    CHECK(o.all.find("the settings file is a link out of its directory; not read") != std::string::npos);
  }
  SECTION("--model naming the directory: at most an excerpt") {
    write_bytes(repo / "serve.yaml", "model: m\n");
    auto o = check_everything(repo, "check serve.yaml --model " + shell_quote((t / "home/secretdir").string()));
    no_secret(o, "--model named", true);
    CHECK(o.exit_code == 2);
    CHECK(o.all.find("last read: '") != std::string::npos);
  }
  SECTION("the config itself: a value, an unknown option and a broken speculative-config are excerpts") {
    write_bytes(repo / "serve.yaml",
                "model: m\nmy-token: " + kToken + "\nspeculative-config: '{\"method\": \"" + kToken + "\n'\n");
    no_secret(check_everything(repo, "check serve.yaml"), "config values", true);
    write_bytes(repo / "serve2.yaml", "model: m\nsome-option: " + kToken + kToken + "\n");
    auto o = check_everything(repo, "check serve2.yaml");
    no_secret(o, "unknown option", true);
    CHECK(o.messages.find("some-option is not a vLLM option") != std::string::npos);
  }
  SECTION("a deploy script: an option line after a missing backslash is named by an excerpt") {
    // The note about the continuation quoted the line's first word whole (the pipeline fuzzer's
    // find, tests/fuzz/regressions/pipeline/continuation-note-quoting-stod.txt).
    write_bytes(repo / "serve.sh", "vllm serve m --tensor-parallel-size 2\n  --hf-token=" + kToken + "\n");
    auto o = check_everything(repo, "check serve.sh");
    no_secret(o, "continuation note", true);
    CHECK(o.messages.find("this line starts with the option --hf-token=") != std::string::npos);
  }
}

TEST_CASE("excerpt: at most 32 characters, control and invisible characters escaped", "[pipeline][security]") {
  using specprobe::excerpt;
  CHECK(excerpt("fp8") == "fp8");
  CHECK(excerpt(std::string(32, 'a')) == std::string(32, 'a'));
  CHECK(excerpt(std::string(40, 'a')) == std::string(32, 'a') + "...");
  CHECK(excerpt("a\nb\r\t\x01\x7F") == "a\\nb\\r\\t\\x01\\x7F");
  CHECK(excerpt("x\xFFy") == "x\\xFFy");  // not UTF-8
  CHECK(excerpt("a\xE2\x80\xAE"
                "b") == "a\\u{202E}b");             // right-to-left override
  CHECK(excerpt("\xEF\xBB\xBFz") == "\\u{FEFF}z");  // BOM / zero-width no-break space
  CHECK(excerpt(std::string(31, 'a') + "\xC3\xA9" + "bc") == std::string(31, 'a') + "\xC3\xA9...");  // whole characters
  CHECK(excerpt("abcdef", 3) == "abc...");
  CHECK(excerpt(specprobe::Json(std::string(10000, 'x'))) == std::string(32, 'x') + "...");
  CHECK(excerpt(specprobe::Json::parse(R"({"a": [1, 2]})")) == R"({"a":[1,2]})");
  CHECK(excerpt(specprobe::Json(uint64_t{1} << 63)) == "9223372036854775808");

  using specprobe::excerpt_name;
  CHECK(excerpt_name("model.layers.0.mlp.weight") == "model.layers.0.mlp.weight");
  const std::string name = "model.layers.61.self_attn.kv_a_proj_with_mqa.weight_scale_inv";
  CHECK(excerpt_name(name) == "model.layers.61....weight_scale_inv");
  CHECK(excerpt_name(std::string(40, 'n') + "\n") == std::string(16, 'n') + "..." + std::string(15, 'n') + "\\n");
}

TEST_CASE("excerpt: nlohmann's last-read token is cut or dropped", "[pipeline][security]") {
  using specprobe::json_error_reason;
  try {
    (void)specprobe::Json::parse("{\"hf_token\": \"" + kToken + "\n");
    FAIL("parsed");
  } catch (const specprobe::Json::parse_error& e) {
    const std::string full = e.what();
    REQUIRE(full.find(kToken) != std::string::npos);  // what nlohmann says
    const std::string cut = json_error_reason(e);
    CHECK(cut.find(kToken) == std::string::npos);
    CHECK(cut.rfind("syntax error while parsing value - invalid string", 0) == 0);
    // Token-like text is cut to its prefix and two characters (issue 47: the excerpt used to quote 28
    // characters of it).
    CHECK(cut.find("; last read: '\"hf_PI***<U+000A>'") != std::string::npos);
    CHECK(cut.find(kToken.substr(5, 6)) == std::string::npos);
    const std::string dropped = json_error_reason(e, false);
    CHECK(dropped.find("last read") == std::string::npos);
    CHECK(dropped.find("hf_") == std::string::npos);
  }
  try {
    (void)specprobe::Json::parse("{\"a\" 1}");
    FAIL("parsed");
  } catch (const specprobe::Json::parse_error& e) {
    // A parser error (not the lexer's) carries no "last read": the reason stays as it is.
    CHECK(json_error_reason(e) ==
          "syntax error while parsing object separator - unexpected number literal; expected ':'");
    CHECK(json_error_reason(e, false) == json_error_reason(e));
  }
  try {
    (void)specprobe::Json::parse("{\"a\": tru}");
    FAIL("parsed");
  } catch (const specprobe::Json::parse_error& e) {
    CHECK(json_error_reason(e) == "syntax error while parsing value - invalid literal; last read: '\"a\": tru}'");
    CHECK(json_error_reason(e, false) == "syntax error while parsing value - invalid literal");
  }
}
