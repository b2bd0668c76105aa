// The hostile-input corpus: malformed and adversarial serving configs, command lines, config.json
// files, checkpoints and rule files, each run through the built binary under a timeout and a
// memory bound (bounded_run.hpp). Every case must end in exit 0/1 (a finding or a note) or 2 (an
// input error) naming the file, never a signal, a timeout, an internal error (exit 3) or
// unbounded memory. Checkpoints are generated here in temp dirs, never kept as binary files.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "../e2e/run_binary.hpp"
#include "bounded_run.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using specprobe::hostile::BoundedResult;
using specprobe::hostile::run_bounded;
using specprobe::hostile::sanitized_build;

using specprobe::test::write_bytes;

namespace {

// Peak RSS allowed for one run. Sanitized builds carry shadow memory and quarantine.
long rss_cap_kib() { return sanitized_build() ? 1536L * 1024 : 768L * 1024; }

struct TempTree {
  fs::path path = specprobe::test::temp_dir();
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A shard: 8-byte little-endian LEN, HEADER, then a hole up to DATA bytes after the header.
void write_shard(const fs::path& p, uint64_t len, const std::string& header, uint64_t data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xFF);
  write_bytes(p, bytes + header);
  fs::resize_file(p, 8 + header.size() + data);
}
void write_shard(const fs::path& p, const std::string& header, uint64_t data) {
  write_shard(p, header.size(), header, data);
}

const std::string kLlamaConfig =
    R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32,
        "num_key_value_heads": 8, "hidden_size": 4096, "num_hidden_layers": 2, "torch_dtype": "bfloat16"})";
const std::string kGoodHeader =
    R"({"__metadata__":{"format":"pt"},"model.layers.0.self_attn.o_proj.weight":{"dtype":"BF16","shape":[8,8],"data_offsets":[0,128]}})";

// The common expectations; WHAT names the case in failure messages, NAMED must appear in stdout
// or stderr (the offending file, or its directory).
void expect_contained(const BoundedResult& r, const std::string& what, const std::string& named,
                      std::set<int> allowed = {0, 1, 2, 4}) {
  INFO(what << ": exit " << r.exit_code << " signal " << r.signal << (r.timed_out ? " TIMED OUT in " + r.stalled : "")
            << " rss " << r.max_rss_kib << " KiB (inherited " << r.inherited_rss_kib
            << ")\nstderr: " << r.err.substr(0, 2000) << "\nstdout: " << r.out.substr(0, 2000));
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(allowed.count(r.exit_code) == 1);
  CHECK(r.rss_below(rss_cap_kib()));
  CHECK(r.err.find("AddressSanitizer") == std::string::npos);
  CHECK(r.err.find("runtime error:") == std::string::npos);  // UBSan
  if (!named.empty()) CHECK((r.out + r.err).find(named) != std::string::npos);
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// A thread that keeps a FIFO fed (or just opened) until stopped; unblocks itself on stop.
class FifoWriter {
 public:
  FifoWriter(const fs::path& p, std::string chunk) : path_(p) {
    ::signal(SIGPIPE, SIG_IGN);  // the reader (specprobe) closes first; write then fails with EPIPE
    REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
    thread_ = std::thread([this, chunk = std::move(chunk)] {
      while (!stop_) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {  // no reader yet
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        ::fcntl(fd, F_SETFL, 0);
        while (!stop_ && !chunk.empty() && ::write(fd, chunk.data(), chunk.size()) > 0) {
        }
        ::close(fd);
      }
    });
  }
  ~FifoWriter() {
    stop_ = true;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // unblocks a pending write
    thread_.join();
    if (fd >= 0) ::close(fd);
  }

 private:
  fs::path path_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::vector<std::string> check_config(const fs::path& file) { return {"check", file.string(), "--gpu", "H100"}; }
std::vector<std::string> check_model(const fs::path& dir, const std::string& format = "text") {
  return {"check", "--model", dir.string(), "--gpu", "H100", "--format", format, "--", "vllm", "serve", "m"};
}

}  // namespace

TEST_CASE("hostile: serving configs give exit 2 naming the file, or a finding", "[hostile]") {
  TempTree t;
  struct Case {
    std::string name;
    std::string content;
    std::set<int> allowed;
  };
  const std::set<int> input_error{2}, any{0, 1, 2, 4};
  const std::vector<Case> cases = {
      {"nested-json.json", repeat("[", 200000) + repeat("]", 200000), input_error},
      {"nested-json-obj.json", repeat("{\"a\":", 100000) + "1" + repeat("}", 100000), input_error},
      {"nested-spec.json",
       "{\"model\":\"m\",\"speculative_config\":" + repeat("{\"a\":", 50000) + "1" + repeat("}", 50000) + "}",
       input_error},
      {"nested-flow.yaml", "model: m\nspeculative-config: " + repeat("[", 100000) + "\n", input_error},
      {"nested-block.yaml",
       [] {
         std::string s;
         for (int i = 0; i < 3000; ++i) s += std::string(static_cast<size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
         return s;
       }(),
       input_error},
      {"nested-inner-json.yaml", "model: m\nspeculative-config: '" + repeat("[", 100000) + "'\n", input_error},
      {"laughs.yaml",
       [] {
         std::string s = "model: m\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
         for (int i = 1; i < 12; ++i) {
           s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
           for (int j = 0; j < 10; ++j) s += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
           s += "]\n";
         }
         return s + "speculative-config: *a11\n";
       }(),
       input_error},
      {"huge-int.yaml", "model: m\ntensor-parallel-size: 99999999999999999999999999999999\n", input_error},
      {"huge-float.yaml", "model: m\ntensor-parallel-size: 1e400\n", input_error},
      {"int64-k.yaml", "model: m\nspeculative-config: {method: ngram, num_speculative_tokens: 9223372036854775807}\n",
       any},
      {"int64-tp.json",
       "{\"model\":\"m\",\"tensor_parallel_size\":9223372036854775807,\"max_model_len\":-9223372036854775808}", any},
      {"huge-k.json", "{\"model\":\"m\",\"speculative_config\":{\"method\":\"mtp\",\"num_speculative_tokens\":1e308}}",
       input_error},
      {"nan-k.json", "{\"model\":\"m\",\"speculative_config\":{\"method\":\"mtp\",\"num_speculative_tokens\":NaN}}",
       input_error},
      {"human-int.yaml", "model: m\nmax-model-len: 99999999999999999999K\nmax-num-seqs: 1e999\n", any},
      {"dup-keys.yaml", "model: m\ntensor-parallel-size: 2\ntensor-parallel-size: 4\n", any},
      {"dup-keys.json", "{\"model\":\"m\",\"tensor_parallel_size\":2,\"tensor-parallel-size\":4}", any},
      {"dup-inner.yaml", "model: m\nspeculative-config: '{\"method\":\"mtp\",\"method\":\"eagle\"}'\n", any},
      {"nul.yaml", std::string("model: m\0\n", 10), input_error},
      {"latin1.yaml", "model: caf\xe9\n", input_error},
      {"overlong-utf8.yaml", "model: \xc0\xaf\n", input_error},
      {"surrogate-utf8.json", "{\"model\": \"\xed\xa0\x80\"}", input_error},
      {"escaped-surrogate.json", "{\"model\": \"\\ud800\"}", any},
      {"long-line.yaml", "model: " + std::string(8u << 20, 'm') + "\n", any},
      {"many-keys.yaml",
       [] {
         std::string s = "model: m\n";
         for (int i = 0; i < 200000; ++i) s += "x" + std::to_string(i) + ": 1\n";
         return s;
       }(),
       any},
      {"too-large.yaml", "model: m\n#" + std::string(17u << 20, 'x') + "\n", input_error},
      {"tags.yaml", "model: !!binary aGVsbG8=\ntensor-parallel-size: !!python/object:os.system 1\n", any},
      {"merge.yaml", "base: &b {tensor-parallel-size: 2}\n<<: *b\nmodel: m\n", any},
  };
  for (const Case& c : cases) {
    const fs::path p = t.path / c.name;
    write_bytes(p, c.content);
    expect_contained(run_bounded(check_config(p)), c.name, c.name, c.allowed);
  }
}

TEST_CASE("hostile: deploy scripts and command lines", "[hostile]") {
  TempTree t;
  const std::set<int> input_error{2}, any{0, 1, 2, 4};
  struct Case {
    std::string name;
    std::string content;
    std::set<int> allowed;
  };
  std::string doubling = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 64; ++i) doubling += "A=$A$A\n";
  doubling += "vllm serve m --served-model-name \"$A\"\n";
  std::string braces = "B=${B}${B}\n";
  const std::vector<Case> cases = {
      {"doubling.sh", doubling, any},
      {"continuations.sh", "vllm serve m" + repeat(" \\\n", 200000) + " --tensor-parallel-size 2\n", any},
      {"unterminated.sh", "vllm serve m --speculative-config '{\"method\": \"mtp\"\n", input_error},
      {"unterminated-dq.sh", "vllm serve m \"" + repeat("\\\"", 100000) + "\n", input_error},
      {"many-args.sh", "vllm serve m" + repeat(" --enable-prefix-caching", 200000) + "\n", any},
      {"many-commands.sh", repeat("vllm serve m; ", 100000) + "\n", any},
      {"self-config.sh", "vllm serve m --config self-config.sh\n", any},
      {"devzero-config.sh", "vllm serve m --config /dev/zero\n", any},
      {"nested-spec.sh", "vllm serve m --speculative-config '" + repeat("{\"a\":", 50000) + "'\n", input_error},
      {"dotted.sh", "vllm serve m --speculative-config" + repeat(".a", 100000) + "=1\n", any},
      {"sglang-huge.sh",
       "python -m sglang.launch_server --model-path m --speculative-num-steps 99999999999999999999 "
       "--speculative-num-draft-tokens -9223372036854775808\n",
       any},
      {"sglang-int64.sh",
       "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-num-steps "
       "9223372036854775807 --tp 9223372036854775807\n",
       any},
      {"vllm-int64.sh",
       "vllm serve m -tp 9223372036854775807 --speculative-config "
       "'{\"method\":\"ngram\",\"num_speculative_tokens\":9223372036854775807}' --max-num-seqs 9223372036854775807 "
       "--max-num-batched-tokens 9223372036854775807\n",
       any},
      {"env-bomb.sh", repeat("export VLLM_X=1\n", 100000) + "vllm serve m\n", any},
      {"heredoc.sh", "cat <<EOF\n" + std::string(100000, '(') + "\nEOF\nvllm serve m\n", any},
      {"braces.sh", repeat(braces, 1000) + "vllm serve m\n", any},
  };
  for (const Case& c : cases) {
    const fs::path p = t.path / c.name;
    write_bytes(p, c.content);
    expect_contained(run_bounded(check_config(p), t.path.string()), c.name, c.name, c.allowed);
  }
  // The same through argv after `check --`.
  std::vector<std::string> argv = {"check", "--gpu", "H100", "--", "vllm", "serve", "m"};
  for (int i = 0; i < 20000; ++i) argv.push_back("--enable-prefix-caching");
  expect_contained(run_bounded(argv), "20000 argv words", "");
  argv = {"check", "--gpu", "H100", "--", "vllm", "serve", "m", "--speculative-config", repeat("[", 100000)};
  expect_contained(run_bounded(argv), "nested argv JSON", "<command line>", {2});
  argv = {"check", "--gpu", "H100", "--", "vllm", "serve", "caf\xe9\xff", "--served-model-name", "\xc0\x80"};
  expect_contained(run_bounded(argv), "non-UTF-8 argv", "");
  argv.insert(argv.begin() + 3, {"--format", "json"});
  expect_contained(run_bounded(argv), "non-UTF-8 argv, JSON report", "");
}

TEST_CASE("hostile: config files that are FIFOs, devices or change size", "[hostile]") {
  TempTree t;
  {
    const fs::path fifo = t.path / "endless.yaml";
    FifoWriter w(fifo, "model: m\n# " + std::string(65536, 'x') + "\n");
    expect_contained(run_bounded(check_config(fifo)), "endless FIFO config", "endless.yaml", {2});
  }
  expect_contained(run_bounded(check_config("/dev/zero")), "/dev/zero config", "/dev/zero", {2});
  fs::create_directories(t.path / "dir.yaml");
  expect_contained(run_bounded(check_config(t.path / "dir.yaml")), "a directory as config", "dir.yaml", {2});
  fs::create_symlink("loop-b.yaml", t.path / "loop-a.yaml");
  fs::create_symlink("loop-a.yaml", t.path / "loop-b.yaml");
  expect_contained(run_bounded(check_config(t.path / "loop-a.yaml")), "symlink loop config", "loop-a.yaml", {2});
  // A config rewritten with different sizes while specprobe reads it.
  const fs::path churn = t.path / "churn.yaml";
  write_bytes(churn, "model: m\n");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (size_t i = 0; !stop; ++i) {
      std::ofstream out(churn, std::ios::trunc);
      out << "model: m\ntensor-parallel-size: 2\n" << std::string((i * 7919) % (1u << 20), '#');
    }
  });
  for (int i = 0; i < 5; ++i) expect_contained(run_bounded(check_config(churn)), "config changing size", "churn.yaml");
  stop = true;
  writer.join();
}

TEST_CASE("hostile: config.json values", "[hostile]") {
  TempTree t;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nan-everywhere", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": NaN,
         "num_key_value_heads": Infinity, "hidden_size": -Infinity, "head_dim": NaN, "rope_theta": NaN})"},
      {"zero-heads", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 0,
         "num_key_value_heads": 0, "hidden_size": 4096, "num_hidden_layers": 0})"},
      {"negative-heads", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": -1,
         "num_key_value_heads": -8, "hidden_size": -9223372036854775808})"},
      {"int64-extremes", R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
         "num_attention_heads": 9223372036854775807, "num_key_value_heads": 9223372036854775807,
         "kv_lora_rank": 9223372036854775807, "qk_rope_head_dim": 9223372036854775807,
         "num_nextn_predict_layers": 9223372036854775807, "max_position_embeddings": 18446744073709551615})"},
      {"huge-numbers", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
         "num_attention_heads": 1e400, "hidden_size": 123456789012345678901234567890})"},
      {"wrong-types", R"({"architectures": "LlamaForCausalLM", "model_type": ["llama"], "num_attention_heads": "32",
         "text_config": [], "quantization_config": "fp8"})"},
      {"dup-keys", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "model_type": "deepseek_v3",
         "num_attention_heads": 32, "num_attention_heads": 0})"},
      {"deep", repeat("{\"a\":", 100000) + "1" + repeat("}", 100000)},
      {"deep-array", "{\"architectures\":" + repeat("[", 200000) + repeat("]", 200000) + "}"},
      {"not-object", "[1, 2, 3]"},
      {"binary", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)},
      {"bad-quant", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32,
         "quantization_config": {"quant_method": "compressed-tensors", "ignore": [1, null, {"re": 2}, "re:(((((a*)*)*)*)*$", "re:(.*)*X", "re:(.|.)*X", "re:["],
         "config_groups": {"g": {"targets": ["re:(a|a)*$", 7], "weights": {"num_bits": 1e300, "type": [], "strategy": {}}}},
         "weight_block_size": [0, -1, 1e300]}})"},
      {"bad-modelopt", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
         "quantization_config": {"quant_method": "modelopt", "quant_algo": null, "exclude_modules": ["[", "**", "*[!]", "*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*X"]}})"},
  };
  for (const auto& [name, content] : cases) {
    const fs::path d = t.path / name;
    write_bytes(d / "config.json", content);
    // A tiny valid shard so the quantization matching runs.
    write_shard(d / "model.safetensors", kGoodHeader, 128);
    expect_contained(run_bounded(check_model(d)), name, name);
  }
  // config.json too large, a FIFO, a device, a symlink loop.
  const fs::path big = t.path / "big";
  write_bytes(big / "config.json", "{\"a\": \"");
  fs::resize_file(big / "config.json", 200u << 20);  // sparse
  expect_contained(run_bounded(check_model(big)), "200 MiB config.json", "config.json", {2});
  const fs::path fifo = t.path / "fifo";
  fs::create_directories(fifo);
  REQUIRE(::mkfifo((fifo / "config.json").c_str(), 0600) == 0);
  expect_contained(run_bounded(check_model(fifo)), "FIFO config.json", "config.json", {2});
  const fs::path dev = t.path / "dev";
  fs::create_directories(dev);
  fs::create_symlink("/dev/zero", dev / "config.json");
  expect_contained(run_bounded(check_model(dev)), "config.json -> /dev/zero", "config.json", {2});
  const fs::path loop = t.path / "loop";
  fs::create_directories(loop);
  fs::create_symlink("config.json", loop / "config.json");
  expect_contained(run_bounded(check_model(loop)), "config.json symlink loop", "config.json", {2});
  const fs::path hfq = t.path / "hfq-fifo";
  write_bytes(hfq / "config.json", kLlamaConfig);
  REQUIRE(::mkfifo((hfq / "hf_quant_config.json").c_str(), 0600) == 0);
  expect_contained(run_bounded(check_model(hfq)), "FIFO hf_quant_config.json", "hfq-fifo");
}

TEST_CASE("hostile: checkpoints (length bombs, offsets, index escapes, loops, FIFOs)", "[hostile]") {
  TempTree t;
  const fs::path d = t.path / "ck";
  write_bytes(d / "config.json", kLlamaConfig);
  const std::string tiny = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  write_shard(d / "bomb-max.safetensors", UINT64_MAX, tiny, 8);
  write_shard(d / "bomb-cap.safetensors", 100'000'001, tiny, 8);
  write_shard(d / "bomb-sign.safetensors", uint64_t{1} << 63, tiny, 8);
  write_shard(d / "bomb-past-end.safetensors", 1u << 20, tiny, 8);
  write_shard(d / "offset-max.safetensors",
              R"({"t":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,18446744073709551615]}})", 8);
  write_shard(d / "offset-wrap.safetensors",
              R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551608,0]}})", 8);
  write_shard(d / "shape-overflow.safetensors",
              R"({"t":{"dtype":"F64","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", 8);
  write_shard(d / "huge-number.safetensors",
              R"({"t":{"dtype":"F32","shape":[1e400],"data_offsets":[0,99999999999999999999999]}})", 8);
  write_shard(d / "deep.safetensors", "{\"t\":" + repeat("[", 500000) + repeat("]", 500000) + "}", 0);
  write_shard(d / "deep-meta.safetensors",
              "{\"__metadata__\":" + repeat("{\"a\":", 100000) + "1" + repeat("}", 100000) + "}", 0);
  write_shard(
      d / "dup.safetensors",
      R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"t":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
      16);
  write_shard(d / "bad-utf8-name.safetensors",
              "{\"\xff\xfe\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8);
  write_shard(d / "escaped-nul.safetensors", R"({"a\u0000b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  write_shard(
      d / "many-tensors.safetensors",
      [] {
        std::string h = "{";
        for (int i = 0; i < 100000; ++i)
          h += (i ? ",\"" : "\"") + std::to_string(i) + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" +
               std::to_string(i) + "," + std::to_string(i + 1) + "]}";
        return h + "}";
      }(),
      100000);
  write_shard(d / "good.safetensors", kGoodHeader, 128);
  // Non-UTF-8 file names, a FIFO, a device, loops, escapes.
  write_shard(d / "caf\xe9\xff.safetensors", tiny, 8);
  REQUIRE(::mkfifo((d / "fifo.safetensors").c_str(), 0600) == 0);
  fs::create_symlink("/dev/zero", d / "zero.safetensors");
  fs::create_symlink("loop-b.safetensors", d / "loop-a.safetensors");
  fs::create_symlink("loop-a.safetensors", d / "loop-b.safetensors");
  fs::create_symlink(".", d / "self");
  write_shard(t.path / "outside" / "secret.safetensors", kGoodHeader, 128);
  fs::create_symlink("../outside/secret.safetensors", d / "escape.safetensors");
  fs::create_directories(d / "dir.safetensors");
  // A shard truncated and regrown by another thread while the headers are read.
  const std::string churn_header = R"({"c":{"dtype":"F32","shape":[1024],"data_offsets":[0,4096]}})";
  write_shard(d / "churn.safetensors", churn_header, 4096);
  json wm = json::object();
  for (const char* f : {"bomb-max", "bomb-cap", "bomb-sign", "offset-max", "deep", "good", "fifo", "zero", "loop-a",
                        "escape", "dir", "churn"})
    wm[std::string("w.") + f] = std::string(f) + ".safetensors";
  wm["x1"] = "../outside/secret.safetensors";
  wm["x2"] = (t.path / "outside" / "secret.safetensors").string();
  wm["x3"] = "self/self/self/good.safetensors";
  wm["x4"] = "";
  wm["x5"] = ".";
  wm["x6"] = "sub/../../outside/secret.safetensors";
  wm["x7"] = std::string(5000, 'a') + ".safetensors";
  wm["x8"] = "/dev/zero";
  write_bytes(d / "model.safetensors.index.json",
              json{{"metadata", {{"total_size", 1e300}}}, {"weight_map", wm}}.dump());

  std::atomic<bool> stop{false};
  std::thread churner([&] {
    for (uint64_t i = 0; !stop; ++i) {
      std::error_code ec;
      fs::resize_file(d / "churn.safetensors", (i % 3) * (8 + churn_header.size() + 4096) / 2, ec);
      std::this_thread::yield();
    }
  });
  const auto text = run_bounded(check_model(d));
  const auto js = run_bounded(check_model(d, "json"));
  stop = true;
  churner.join();
  expect_contained(text, "hostile checkpoint (text)", "ck");
  expect_contained(js, "hostile checkpoint (JSON)", "ck");
  if (js.exit_code == 0 || js.exit_code == 1) {
    const json report = json::parse(js.out, nullptr, false);
    CHECK_FALSE(report.is_discarded());
  }
  // The entries that point outside the tree are reported by name (a finding, never followed).
  CHECK(text.out.find("secret") != std::string::npos);

  // Index variants, one per directory: deep, huge, duplicate keys, FIFO, device, not an object.
  const std::vector<std::pair<std::string, std::string>> indexes = {
      {"deep", "{\"weight_map\":" + repeat("{\"a\":", 200000) + "1" + repeat("}", 200000) + "}"},
      {"deep-array", "{\"weight_map\":{\"a\":" + repeat("[", 500000) + repeat("]", 500000) + "}}"},
      {"dup", R"({"weight_map":{"t":"good.safetensors","t":"../outside/secret.safetensors"},"weight_map":{}})"},
      {"huge-number", R"({"metadata":{"total_size":1e99999},"weight_map":{"t":"good.safetensors"}})"},
      {"neg-size", R"({"metadata":{"total_size":-18446744073709551616},"weight_map":{"t":"good.safetensors"}})"},
      {"not-object", R"(["good.safetensors"])"},
      {"weight-map-list", R"({"weight_map":["good.safetensors"]})"},
      {"values", R"({"weight_map":{"a":null,"b":[],"c":{},"d":1e400,"e":"\u0000.safetensors","f":"\ud800"}})"},
      {"bad-utf8", "{\"weight_map\":{\"\xff\":\"\xfe.safetensors\"}}"},
  };
  for (const auto& [name, content] : indexes) {
    const fs::path di = t.path / ("index-" + name);
    write_bytes(di / "config.json", kLlamaConfig);
    write_shard(di / "good.safetensors", kGoodHeader, 128);
    write_bytes(di / "model.safetensors.index.json", content);
    expect_contained(run_bounded(check_model(di)), "index " + name, "index-" + name);
    expect_contained(run_bounded(check_model(di, "json")), "index " + name + " (JSON)", "index-" + name);
  }
  for (const std::string kind : {"fifo", "zero", "loop", "dir", "big"}) {
    const fs::path di = t.path / ("index-" + kind);
    write_bytes(di / "config.json", kLlamaConfig);
    write_shard(di / "good.safetensors", kGoodHeader, 128);
    const fs::path ip = di / "model.safetensors.index.json";
    if (kind == "fifo") REQUIRE(::mkfifo(ip.c_str(), 0600) == 0);
    if (kind == "zero") fs::create_symlink("/dev/zero", ip);
    if (kind == "loop") fs::create_symlink(ip.filename(), ip);
    if (kind == "dir") fs::create_directories(ip);
    if (kind == "big") {
      write_bytes(ip, "{\"weight_map\":{\"a\":\"");
      fs::resize_file(ip, 1u << 30);  // sparse
    }
    expect_contained(run_bounded(check_model(di)), "index " + kind, "index-" + kind);
  }
  // Sixteen shards whose headers claim just under the 100 MB cap (sparse, all zero bytes): read
  // in parallel, memory must stay bounded.
  const fs::path many = t.path / "many-big-headers";
  write_bytes(many / "config.json", kLlamaConfig);
  for (int i = 0; i < 16; ++i) {
    const fs::path p = many / ("model-" + std::to_string(i) + ".safetensors");
    write_shard(p, 99'000'000, "{", 0);
    fs::resize_file(p, 8 + 99'000'000);
  }
  expect_contained(run_bounded(check_model(many)), "16 shards with 99 MB headers", "many-big-headers");
}

TEST_CASE("hostile: HF cache layouts", "[hostile]") {
  TempTree t;
  const fs::path repo = t.path / "models--org--name";
  fs::create_directories(repo / "snapshots");
  write_bytes(repo / "refs" / "main", "../../../../etc\n");
  fs::create_symlink("..", repo / "snapshots" / "up");
  fs::create_symlink("loop", repo / "snapshots" / "loop");
  expect_contained(run_bounded(check_model(repo)), "HF cache with refs/main escaping, loops", "models--org--name");
  const fs::path repo2 = t.path / "models--org--big-ref";
  fs::create_directories(repo2 / "snapshots" / "abc");
  write_bytes(repo2 / "snapshots" / "abc" / "config.json", kLlamaConfig);
  write_bytes(repo2 / "refs" / "main", "abc");
  fs::resize_file(repo2 / "refs" / "main", 1u << 30);  // a 1 GiB line, sparse
  expect_contained(run_bounded(check_model(repo2)), "HF cache with a 1 GiB refs/main", "models--org--big-ref");
}

TEST_CASE("hostile: rule directories", "[hostile]") {
  TempTree t;
  const std::vector<std::pair<std::string, std::string>> rules = {
      {"SP1901-types.yaml",
       "id: SP1901\nslug: s\ntitle: t\ndescription: 5\nseverity: error\nstage: config\ncertainty: "
       "deterministic\ncategory: []\n"
       "location: {}\nskip_reason: 1\nwhen: true\nmessage: m\nremediation: r\ndeprecated: maybe\n"},
      {"SP1902-placeholder.yaml",
       "id: SP1902\nslug: s\ntitle: t\nseverity: error\nstage: config\ncertainty: deterministic\nwhen: true\n"
       "message: \"{" +
           std::string(200000, 'a') + "}\"\nremediation: r\n"},
      {"SP1903-deep.yaml",
       "id: SP1903\nslug: s\ntitle: t\nseverity: error\nstage: config\ncertainty: deterministic\nmessage: "
       "m\nremediation: r\nwhen: " +
           repeat("{\"!\": [", 20000) + "1" + repeat("]}", 20000) + "\n"},
      {"SP1904-laughs.yaml",
       [] {
         std::string s =
             "id: SP1904\nslug: s\ntitle: t\nseverity: error\nstage: config\ncertainty: deterministic\nmessage: "
             "m\nremediation: r\n"
             "references: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
         for (int i = 1; i < 10; ++i) {
           s += "versions: &a" + std::to_string(i) + " [";
           for (int j = 0; j < 10; ++j) s += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
           s += "]\n";
         }
         return s + "when: true\n";
       }()},
      {"SP1905-binary.yaml", std::string("id: SP1905\0\xff\xfe", 14)},
  };
  for (const auto& [name, content] : rules) {
    const fs::path dir = t.path / name.substr(0, 6) / "rules" / "1xxx";
    write_bytes(dir / name, content);
    const auto r = run_bounded({"rules", "list", "--rules-dir", (t.path / name.substr(0, 6) / "rules").string()});
    expect_contained(r, name, "", {0, 2});
  }
}

TEST_CASE("hostile: specprobe check --model leaves the checkpoint tree untouched", "[hostile][readonly]") {
  // tests/checkpoint covers analyze_checkpoint; this runs the whole binary (every stage, every
  // report format) and also watches directories, permissions and the tree's root.
  TempTree t;
  const fs::path d = t.path / "ck";
  write_bytes(d / "config.json",
              R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 32,
      "num_key_value_heads": 8, "hidden_size": 4096, "num_hidden_layers": 1,
      "quantization_config": {"quant_method": "fp8", "ignored_layers": ["lm_head"]}})");
  write_bytes(d / "hf_quant_config.json", R"({"quantization": {"quant_algo": "FP8"}})");
  write_shard(d / "model-00001-of-00002.safetensors", kGoodHeader, 128);
  write_shard(d / "model-00002-of-00002.safetensors",
              R"({"lm_head.weight":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})", 32);
  write_shard(d / "broken.safetensors", 1u << 30, "{", 0);
  write_bytes(d / "model.safetensors.index.json",
              R"({"weight_map":{"model.layers.0.self_attn.o_proj.weight":"model-00001-of-00002.safetensors",
                  "lm_head.weight":"model-00002-of-00002.safetensors","missing":"model-00003-of-00002.safetensors"}})");
  fs::create_directories(d / "sub");
  write_bytes(d / "sub" / "tokenizer.json", "{}");
  fs::create_symlink("model-00001-of-00002.safetensors", d / "link.safetensors");

  // lstat of every entry: inode, links, mode, size, mtime and ctime (ctime moves on any metadata
  // change: chmod, rename, link count, a write), keyed by path so new or removed entries differ.
  using Entry = std::tuple<ino_t, nlink_t, mode_t, off_t, long, long, long, long>;
  auto snapshot = [&] {
    std::map<std::string, Entry> out;
    auto add = [&](const fs::path& p) {
      struct stat st {};
      REQUIRE(::lstat(p.c_str(), &st) == 0);
      out[p.string()] = {st.st_ino,         st.st_nlink,        st.st_mode,        st.st_size,
                         st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
    };
    add(d);
    for (auto it = fs::recursive_directory_iterator(d); it != fs::recursive_directory_iterator(); ++it) add(it->path());
    return out;
  };
  const auto before = snapshot();
  for (const char* format : {"text", "json"}) {
    const auto r = run_bounded(check_model(d, format), t.path.string());
    expect_contained(r, std::string("read-only check, ") + format, "");
  }
  const auto r = run_bounded({"check", "--model", d.string(), "--gpu", "H100", "--", "vllm", "serve", d.string(),
                              "--speculative-config",
                              R"({"method":"eagle3","model":")" + d.string() + R"(","num_speculative_tokens":3})"});
  expect_contained(r, "read-only check with the draft in the tree", "");
  // from inside the tree (nothing may land in the working directory either), every output
  // format written outside it
  const auto r2 = run_bounded({"check", "--model", ".", "--gpu", "H100", "--sarif", (t.path / "o.sarif").string(),
                               "--junit", (t.path / "o.xml").string(), "--", "vllm", "serve", "."},
                              d.string());
  expect_contained(r2, "read-only check run inside the tree", "");
  CHECK(snapshot() == before);
}

// The runner itself: a child that blocks (a FIFO nobody writes blocks open(2), as it does for
// cat) is killed at its deadline, and the report says where it was, so that a timeout in CI can
// be told apart: stuck before exec, or blocked inside specprobe.
TEST_CASE("bounded runner: a blocked child is killed at its deadline and reported where it stalled", "[hostile]") {
  TempTree t;
  const fs::path fifo = t.path / "nobody-writes.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const BoundedResult r = run_bounded(check_config(fifo), {}, 5);
  INFO(r.stalled);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(r.stalled.find(fs::path(SPECPROBE_BINARY).filename().string()) != std::string::npos);
  CHECK(r.stalled.find("never reached exec") == std::string::npos);
  CHECK(r.stalled.find(", state ") !=
        std::string::npos);  // S and wait_for_partner here; not asserted, a loaded machine may still be starting it
}
