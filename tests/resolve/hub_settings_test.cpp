// Where the Hub settings come from (resolve/hub_settings.hpp), token redaction in every excerpt
// (common/excerpt.hpp), the Hub's answers read one by one (resolve/hub_answers.hpp), and the GPU a
// deploy file's node selector names (gpu/gpu_info.hpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "checkpoint/fixture_writer.hpp"
#include "common/excerpt.hpp"
#include "gpu/gpu_info.hpp"
#include "resolve/hub_answers.hpp"
#include "resolve/hub_settings.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::resolve;

namespace {

HubSettings from(const std::map<std::string, std::string>& vars) {
  return hub_settings_from_env([&](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  });
}

}  // namespace

TEST_CASE("hub settings: endpoint, offline switch, cache and token as huggingface_hub reads them", "[resolve]") {
  const HubSettings d = from({{"HOME", "/home/u"}});
  CHECK(d.endpoint == "https://huggingface.co");
  CHECK_FALSE(d.offline);
  CHECK(d.cache_dir == "/home/u/.cache/specprobe/hub");
  CHECK(d.token.empty());

  const HubSettings m =
      from({{"HF_ENDPOINT", "https://hf-mirror.example/"}, {"XDG_CACHE_HOME", "/c"}, {"HF_HUB_OFFLINE", "yes"}});
  CHECK(m.endpoint == "https://hf-mirror.example");
  CHECK(m.endpoint_from_env);
  CHECK(m.endpoint_problem.empty());
  CHECK(m.offline);
  CHECK(m.offline_reason == "HF_HUB_OFFLINE=yes");
  CHECK(m.cache_dir == "/c/specprobe/hub");
  CHECK_FALSE(from({{"HF_HUB_OFFLINE", "0"}}).offline);
  CHECK(from({{"TRANSFORMERS_OFFLINE", "1"}}).offline);
  CHECK_FALSE(from({{"HF_ENDPOINT", "ftp://x"}}).endpoint_problem.empty());
  CHECK_FALSE(from({{"HF_ENDPOINT", "https://user:pw@x"}}).endpoint_problem.empty());

  specprobe::test::TempDir dir("token");
  std::ofstream(dir.path / "token") << "  hf_fromFILEabcdefghij  \nsecond line\n";
  std::ofstream(dir.path / "other") << "hf_fromPATHabcdefghij";
  CHECK(from({{"HF_HOME", dir.path.string()}}).token == "hf_fromFILEabcdefghij");
  CHECK(from({{"HF_HOME", dir.path.string()}}).token_source == "the token file");
  CHECK(from({{"HF_TOKEN_PATH", (dir.path / "other").string()}}).token == "hf_fromPATHabcdefghij");
  CHECK(from({{"HF_TOKEN", "hf_env"}, {"HF_HOME", dir.path.string()}}).token == "hf_env");
  CHECK(from({{"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}}).token_source == "HUGGING_FACE_HUB_TOKEN");
  CHECK(from({{"HF_TOKEN", "hf_env"}, {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}}).token.empty());
  CHECK(from({{"HF_TOKEN", "hf_a\r\nX-Evil: 1"}}).token.empty());  // would forge a header
}

TEST_CASE("excerpts never show more than a few characters of a token", "[resolve][secrets]") {
  CHECK(redact_secrets("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123") == "HF_TOKEN=hf_ab***");
  CHECK(redact_secrets("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload") == "Authorization: Bearer ey***");
  CHECK(redact_secrets("key sk-proj-ABCDEFGHIJKLMNOP and ghp_0123456789abcdefghij") == "key sk-pr*** and ghp_01***");
  CHECK(redact_secrets("AKIAABCDEFGHIJKLMNOP") == "AKIAAB***");
  CHECK(redact_secrets("github_pat_11ABCDEFG_0123456789") == "github_pat_11***");
  // Not tokens: short, inside a word, or a key name.
  CHECK(redact_secrets("hf_short and shelf_abcdefghijkl") == "hf_short and shelf_abcdefghijkl");
  CHECK(redact_secrets("hf_overrides hf_token_path sk-learn-intelex") == "hf_overrides hf_token_path sk-learn-intelex");
  CHECK_FALSE(has_secret("model: meta-llama/Llama-3.1-8B-Instruct"));
  // excerpt() and excerpt_name() redact before they cut (a JSON parse error's "last read" token).
  CHECK(excerpt("\"hf_abcdefghijklmnopqrstuvwxyz0123456789\"") == "\"hf_ab***\"");
  CHECK(excerpt_name("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx hf_abcdefghijklmnopqrstuvwxyz0123456789").find("mnop") ==
        std::string::npos);
  const std::string long_text =
      std::string(20, 'a') + " hf_abcdefghijklmnopqrstuvwxyz0123456789" + std::string(5000, 'b');
  CHECK(excerpt(long_text).find("cdefgh") == std::string::npos);
}

TEST_CASE("hub answers: revision list, Content-Range, the redirect and retry policy", "[resolve]") {
  std::string why;
  auto info = parse_revision(
      R"({"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":"config.json","size":10},
          {"rfilename":"m.safetensors","size":134,"lfs":{"size":5000000000}},{"rfilename":"../x"},{"rfilename":".git/y"},
          {"rfilename":"a\\b"},{"rfilename":"sub/ok.json"}]})",
      why);
  REQUIRE(info);
  CHECK(info->files.size() == 3);
  CHECK(info->files["m.safetensors"].size == 5000000000ULL);  // the LFS size, not the pointer's
  CHECK_FALSE(parse_revision(R"({"sha":"not hex"})", why));
  CHECK_FALSE(parse_revision("<html>", why));
  CHECK(content_range_total("bytes 0-99/12345") == 12345u);
  CHECK_FALSE(content_range_total("bytes */12x"));
  CHECK_FALSE(content_range_total("bytes 0-1/99999999999999999999999"));

  HubSettings s;
  s.endpoint = "https://hub.example";
  s.token = "hf_policyTOKEN0123456789";
  s.token_source = "HF_TOKEN";
  const auto ep = parse_url(s.endpoint);
  FetchChain c;
  c.settings = &s;
  c.endpoint = &*ep;
  c.request.url = "https://hub.example/o/n/resolve/main/m.safetensors";
  HttpStep step = c.step(nullptr);
  REQUIRE(step.request);
  CHECK(step.request->headers == std::vector<std::string>{"Authorization: Bearer " + s.token});
  HttpResponse redirect;
  redirect.status = 302;
  redirect.location = "https://cdn.example/blob?sig=1";
  step = c.step(&redirect);
  REQUIRE(step.request);
  CHECK(step.request->headers.empty());  // no token to the CDN
  HttpResponse busy;
  busy.status = 503;
  for (int i = 0; i < kMaxRetries; ++i) {
    step = c.step(&busy);
    REQUIRE(step.request);
    CHECK(step.delay_s > 0);
  }
  CHECK_FALSE(c.step(&busy).request);  // bounded
  const HubFailure f = classify(c.final, "o/n", "m.safetensors", s, c.loop);
  CHECK(f.kind == "server-error");
  CHECK(f.message.find(s.token) == std::string::npos);
  // Plain http to a host that is not loopback never gets the token.
  HubSettings plain = s;
  plain.endpoint = "http://mirror.example";
  const auto pep = parse_url(plain.endpoint);
  FetchChain p;
  p.settings = &plain;
  p.endpoint = &*pep;
  p.request.url = "http://mirror.example/api/models/o/n/revision/main";
  CHECK(p.step(nullptr).request->headers.empty());
}

TEST_CASE("the GPU a deploy file's node selector names", "[resolve][gpu]") {
  CHECK(gpu_name_from_label("NVIDIA-H100-80GB-HBM3") == "NVIDIA H100 80GB HBM3");
  CHECK(gpu_name_from_label("nvidia-h100-80gb") == "NVIDIA H100 80GB HBM3");
  CHECK(gpu_name_from_label("NVIDIA-A100-SXM4-80GB") == "NVIDIA A100-SXM4-80GB");
  CHECK(gpu_name_from_label("nvidia-tesla-a100") == "NVIDIA A100-PCIE-40GB");
  CHECK(gpu_name_from_label("nvidia-h200-141gb") == "NVIDIA H200");
  CHECK(gpu_name_from_label("Tesla-T4") == "Tesla T4");
  CHECK(gpu_name_from_label("nvidia-l4") == "NVIDIA L4");
  CHECK(gpu_name_from_label("NVIDIA-L40S") == "NVIDIA L40S");
  CHECK(gpu_name_from_label("NVIDIA-GeForce-RTX-4090") == "NVIDIA GeForce RTX 4090");
  CHECK(gpu_name_from_label("NVIDIA-B200") == "NVIDIA B200");
  CHECK(gpu_name_from_label("AMD_Instinct_MI300X_OAM") == "AMD Instinct MI300X");
  CHECK_FALSE(gpu_name_from_label("NVIDIA-A1000"));
  CHECK_FALSE(gpu_name_from_label("cpu-only"));
}

TEST_CASE("a declared GPU keeps the memory size its name states", "[gpu]") {
  for (const char* name : {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", "a100 sxm4 40gb"}) {
    auto g = specprobe::declared_gpu(name);
    INFO(name);
    REQUIRE(g.has_value());
    CHECK(g->name == "NVIDIA A100-SXM4-40GB");
    CHECK(g->memory_bytes == 42298834944);
  }
  for (const char* name : {"NVIDIA A100-SXM4-80GB", "A100 80GB PCIe", "a100"})
    CHECK(specprobe::declared_gpu(name)->name == "NVIDIA A100-SXM4-80GB");
  CHECK(specprobe::declared_gpu("NVIDIA A100-PCIE-40GB")->name == "NVIDIA A100-PCIE-40GB");
}
