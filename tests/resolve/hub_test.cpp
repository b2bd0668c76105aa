// resolve/hub against the Hub stand-in (tests/support/hub_standin.py on 127.0.0.1): a checkpoint
// named by id read by Range requests gives the analysis its local directory gives, a repeat is
// answered from the cache with one request, offline mode uses no network, and every failure the
// issue lists (gated, private, 404, 5xx, 429, slow, truncated, a header length beyond the file, a
// redirect loop, an oversized answer, no server) is one line naming the repo, never a crash.
#include <catch2/catch.hpp>

#include <thread>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "checkpoint/fixture_writer.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "resolve/hub.hpp"
#include "resolve/resolver.hpp"
#include "support/hub_standin.hpp"

namespace fs = std::filesystem;
using namespace specprobe;
using namespace specprobe::resolve;
using specprobe::test::TempDir;
using specprobe::testing::HubStandin;
using specprobe::testing::write_standin_repo;

namespace {

const Json kVllm = {{"engine", {{"name", "vllm"}}}, {"lib", {{"vllm", {{"version", "0.24.0"}}}}}};

HubSettings settings_for(const HubStandin& hub, const fs::path& cache, double timeout_s = 20) {
  HubSettings s;
  s.endpoint = hub.endpoint();
  s.cache_dir = cache.string();
  s.timeout_s = timeout_s;
  return s;
}

Clock::time_point within(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The analysis facts that do not name where the files lie.
Json comparable(const CheckpointAnalysis& a) {
  Json f = a.facts;
  for (const char* k : {"path", "hf_cache", "hub"}) f["checkpoint"].erase(k);
  Json codes = Json::array();
  for (const auto& n : a.notes) codes.push_back(n.severity + ":" + n.code);
  f["note_codes"] = codes;
  f["summary"] = a.summary;
  return f;
}

// Sum of the shards' header sizes (8 + N each) under DIR.
uint64_t header_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".safetensors") continue;
    std::ifstream in(e.path(), std::ios::binary);
    unsigned char b[8] = {};
    in.read(reinterpret_cast<char*>(b), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | b[i];
    total += 8 + n;
  }
  return total;
}

struct Fixture {
  TempDir root{"hubroot"};
  TempDir cache{"hubcache"};
  TempDir ckpt{"hubckpt"};
  Fixture(const Json& control = nullptr, const std::string& repo = "canada/DeepSeek-V4-Flash-W4A16-FP8-MTP") {
    specprobe::test::write_dsv4(ckpt.path, true);
    write_standin_repo(root.path, repo, ckpt.path, control);
  }
};

}  // namespace

TEST_CASE("hub: the seed-004 checkpoint named by id is read by Range requests, headers only", "[resolve][hub]") {
  Fixture fx;
  HubStandin server(fx.root.path);
  REQUIRE(server.running());
  Hub hub(settings_for(server, fx.cache.path));
  const HubAnswer a = hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "", true, within(20));
  INFO(a.failure.message);
  REQUIRE(a.snapshot);
  CHECK_FALSE(a.snapshot->from_cache);
  CHECK(a.snapshot->shards == 2);
  CHECK(a.snapshot->commit.size() == 40);
  // The same analysis as the local directory: every fact, note code and group summary.
  const auto local = analyze_checkpoint(fx.ckpt.path.string(), kVllm);
  const auto remote = analyze_checkpoint(a.snapshot->dir, kVllm);
  REQUIRE(local);
  REQUIRE(remote);
  CHECK(comparable(*remote) == comparable(*local));
  CHECK(remote->facts["checkpoint"]["hub"]["repo"] == "canada/DeepSeek-V4-Flash-W4A16-FP8-MTP");
  CHECK(remote->facts["quant"]["mtp_unquantized_layers"].size() > 0);
  // No weights: the CDN served the headers' bytes and nothing more, with no violation.
  const Json st = server.stats();
  REQUIRE(st.is_object());
  CHECK(st["violations"].empty());
  const uint64_t cdn = st["body_bytes_by_kind"].value("cdn", uint64_t{0});
  CHECK(cdn == header_bytes(fx.ckpt.path));  // each shard's 8 + N bytes, not one more
  CHECK(a.snapshot->header_bytes == header_bytes(fx.ckpt.path));
}

TEST_CASE("hub: a repeat is one revision request, and offline mode asks nothing", "[resolve][hub]") {
  Fixture fx;
  HubStandin server(fx.root.path);
  REQUIRE(server.running());
  {
    Hub hub(settings_for(server, fx.cache.path));
    REQUIRE(hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20)).snapshot);
  }
  server.reset();
  {
    Hub hub(settings_for(server, fx.cache.path));  // a new process: no memory of the first
    const HubAnswer a = hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20));
    REQUIRE(a.snapshot);
    CHECK(a.snapshot->from_cache);
    CHECK(a.snapshot->requests == 1);
    CHECK(server.stats()["requests"] == 1);
    CHECK(server.stats()["by_kind"].value("api", 0) == 1);
    // Asked again in the same process: from memory, no request at all.
    REQUIRE(hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20)).snapshot);
    CHECK(server.stats()["requests"] == 1);
  }
  server.reset();
  {
    HubSettings s = settings_for(server, fx.cache.path);
    s.offline = true;
    s.offline_reason = "HF_HUB_OFFLINE=1";
    Hub hub(s);
    const HubAnswer a = hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20));
    REQUIRE(a.snapshot);
    CHECK(a.snapshot->offline);
    const HubAnswer b = hub.snapshot("canada/other", "main", true, within(20));
    CHECK_FALSE(b.snapshot);
    CHECK(b.failure.kind == "offline");
    CHECK(b.failure.message.find("offline (HF_HUB_OFFLINE=1)") != std::string::npos);
    CHECK(server.stats()["requests"] == 0);
  }
}

TEST_CASE("hub: checks fetching one repository into one cache at once each read a whole snapshot", "[resolve][hub]") {
  // Several checks at once on one cache (`check -j` in processes of its own, a CI matrix): a run
  // that finds the snapshot written by another meanwhile keeps that one (the other may be reading
  // it) instead of replacing it under its feet.
  Fixture fx;
  HubStandin server(fx.root.path);
  REQUIRE(server.running());
  const auto local = analyze_checkpoint(fx.ckpt.path.string(), kVllm);
  REQUIRE(local);
  for (int round = 0; round < 3; ++round) {
    TempDir cache{"hubcache-race"};
    constexpr int kRuns = 6;
    std::vector<std::string> failures(kRuns);
    std::vector<std::thread> runs;
    for (int r = 0; r < kRuns; ++r)
      runs.emplace_back([&, r] {
        Hub hub(settings_for(server, cache.path));  // each its own process: no shared memory
        const HubAnswer a = hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(30));
        if (!a.snapshot) {
          failures[r] = "no snapshot: " + a.failure.message;
          return;
        }
        for (int read = 0; read < 5; ++read) {
          const auto remote = analyze_checkpoint(a.snapshot->dir, kVllm);
          if (!remote || comparable(*remote) != comparable(*local)) {
            failures[r] = "the snapshot at " + a.snapshot->dir + " changed while it was read";
            return;
          }
        }
      });
    for (auto& t : runs) t.join();
    for (const auto& f : failures) CHECK(f == "");
  }
}

TEST_CASE("hub: the server unreachable falls back to the cache with a note, else fails in one line", "[resolve][hub]") {
  Fixture fx;
  std::string endpoint;
  {
    HubStandin server(fx.root.path);
    REQUIRE(server.running());
    endpoint = server.endpoint();
    Hub hub(settings_for(server, fx.cache.path));
    REQUIRE(hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20)).snapshot);
  }  // stopped: nothing listens on its port now
  HubSettings s;
  s.endpoint = endpoint;
  s.cache_dir = fx.cache.path.string();
  Hub hub(s);
  const auto t0 = Clock::now();
  const HubAnswer a = hub.snapshot("canada/DeepSeek-V4-Flash-W4A16-FP8-MTP", "main", true, within(20));
  REQUIRE(a.snapshot);
  REQUIRE(a.notes.size() == 1);
  CHECK(a.notes[0].find("cannot reach 127.0.0.1") != std::string::npos);
  CHECK(a.notes[0].find("answered from specprobe's cache") != std::string::npos);
  const HubAnswer b = hub.snapshot("canada/never-fetched", "main", true, within(20));
  CHECK_FALSE(b.snapshot);
  CHECK(b.failure.kind == "network");
  CHECK(b.failure.message.find("'canada/never-fetched'") != std::string::npos);
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 15);  // retries are bounded
}

TEST_CASE("hub: gated and private repositories, and the token", "[resolve][hub]") {
  TempDir root("hubroot"), cache("hubcache"), ckpt("hubckpt");
  specprobe::test::write_dsv4(ckpt.path, false);
  write_standin_repo(root.path, "meta-llama/gated", ckpt.path, {{"gated", true}});
  write_standin_repo(root.path, "corp/private", ckpt.path, {{"private", true}});
  const std::string token = "hf_TESTtokenVALUEabcdefghijklmnopqrstu";
  HubStandin server(root.path, {token});
  REQUIRE(server.running());
  SECTION("no token") {
    Hub hub(settings_for(server, cache.path));
    const HubAnswer g = hub.snapshot("meta-llama/gated", "", true, within(20));
    REQUIRE_FALSE(g.snapshot);
    CHECK(g.failure.kind == "gated");
    CHECK(g.failure.message.find("gated: accept the licence on the Hub") != std::string::npos);
    CHECK(g.failure.message.find("set HF_TOKEN") != std::string::npos);
    const HubAnswer p = hub.snapshot("corp/private", "", true, within(20));
    REQUIRE_FALSE(p.snapshot);
    CHECK(p.failure.kind == "not-found");
    CHECK(p.failure.message.find("or it is private: set HF_TOKEN") != std::string::npos);
  }
  SECTION("a valid token is sent to the endpoint, never to the CDN host") {
    HubSettings s = settings_for(server, cache.path);
    s.token = token;
    s.token_source = "HF_TOKEN";
    Hub hub(s);
    REQUIRE(hub.snapshot("meta-llama/gated", "", true, within(20)).snapshot);
    REQUIRE(hub.snapshot("corp/private", "", true, within(20)).snapshot);
    const Json st = server.stats();
    CHECK(st["violations"].empty());  // no token_to_cdn, no whole_file, no weights_range
    CHECK(st["authorized_requests"].get<int>() > 0);
    CHECK(st["by_kind"].value("cdn", 0) > 0);
    CHECK(server.log_text().find(token) == std::string::npos);
  }
  SECTION("a token without access") {
    HubSettings s = settings_for(server, cache.path);
    s.token = "hf_otherTOKENwithoutACCESS0123456789";
    s.token_source = "HF_TOKEN";
    Hub hub(s);
    const HubAnswer g = hub.snapshot("meta-llama/gated", "", true, within(20));
    REQUIRE_FALSE(g.snapshot);
    CHECK(g.failure.kind == "gated");
    CHECK(g.failure.message.find("the token (HF_TOKEN) has no access") != std::string::npos);
    CHECK(g.failure.message.find(s.token) == std::string::npos);
  }
}

TEST_CASE("hub: answers that are not files", "[resolve][hub]") {
  TempDir root("hubroot"), cache("hubcache"), ckpt("hubckpt");
  specprobe::test::write_dsv4(ckpt.path, false);
  write_standin_repo(root.path, "org/ok", ckpt.path);
  write_standin_repo(root.path, "org/flaky", ckpt.path,
                     {{"faults", {{{"path", "config.json"}, {"status", 503}, {"times", 2}}}}});
  write_standin_repo(root.path, "org/down", ckpt.path,
                     {{"faults", {{{"path", "api"}, {"status", 500}, {"times", 100}}}}});
  write_standin_repo(root.path, "org/limited", ckpt.path,
                     {{"faults", {{{"path", "api"}, {"status", 429}, {"retry_after", 1}, {"times", 1}}}}});
  write_standin_repo(root.path, "org/slow", ckpt.path, {{"faults", {{{"path", "config.json"}, {"delay_s", 30}}}}});
  write_standin_repo(root.path, "org/cut", ckpt.path, {{"faults", {{{"path", "config.json"}, {"truncate", 10}}}}});
  write_standin_repo(root.path, "org/loop", ckpt.path,
                     {{"faults", {{{"path", "*.safetensors"}, {"redirect_loop", true}}}}});
  write_standin_repo(root.path, "org/huge", ckpt.path,
                     {{"faults", {{{"path", "config.json"}, {"oversized", 200000000}}}}});
  write_standin_repo(root.path, "org/badlen", ckpt.path,
                     {{"faults", {{{"path", "model-00001-of-00002.safetensors"}, {"header_len", 99999999999LL}}}}});
  HubStandin server(root.path);
  REQUIRE(server.running());
  Hub hub(settings_for(server, cache.path, 20));

  const HubAnswer missing = hub.snapshot("org/absent", "", true, within(20));
  CHECK(missing.failure.kind == "not-found");
  CHECK(missing.failure.message.find("no such model on 127.0.0.1") != std::string::npos);
  const HubAnswer rev = hub.snapshot("org/ok", "v9", true, within(20));
  CHECK(rev.failure.kind == "revision-not-found");

  CHECK(hub.snapshot("org/flaky", "", true, within(20)).snapshot);  // two 503s, then the file
  const HubAnswer down = hub.snapshot("org/down", "", true, within(20));
  CHECK(down.failure.kind == "server-error");
  CHECK(down.failure.message.find("HTTP 500 after 4 attempts") != std::string::npos);
  const auto t0 = Clock::now();
  CHECK(hub.snapshot("org/limited", "", true, within(20)).snapshot);  // waits Retry-After
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() >= 0.9);

  const auto t1 = Clock::now();
  const HubAnswer slow = hub.snapshot("org/slow", "", true, within(1.5));
  CHECK(slow.failure.kind == "timeout");
  CHECK(slow.failure.message.find("--network-timeout") != std::string::npos);
  CHECK(std::chrono::duration<double>(Clock::now() - t1).count() < 5);

  const HubAnswer cut = hub.snapshot("org/cut", "", true, within(20));
  CHECK(cut.failure.kind == "network");
  CHECK(cut.failure.message.find("closed before the answer was complete") != std::string::npos);
  const HubAnswer loop = hub.snapshot("org/loop", "", true, within(20));
  CHECK(loop.failure.kind == "invalid-answer");
  CHECK(loop.failure.message.find("redirects in a loop") != std::string::npos);
  const HubAnswer huge = hub.snapshot("org/huge", "", true, within(20));
  CHECK(huge.failure.kind == "invalid-answer");
  CHECK(huge.failure.message.find("larger than specprobe reads") != std::string::npos);

  // A header length beyond the file: the shard is invalid exactly as the same shard on disk is.
  const HubAnswer bad = hub.snapshot("org/badlen", "", true, within(20));
  REQUIRE(bad.snapshot);
  const auto remote = analyze_checkpoint(bad.snapshot->dir, kVllm);
  REQUIRE(remote);
  bool found = false;
  for (const auto& p : remote->facts["checkpoint"]["problems"])
    found |= p["code"] == "header_too_large" || p["code"] == "invalid_header_length";
  CHECK(found);
  // Whatever happened, nothing was fetched beyond headers.
  CHECK(server.stats()["violations"].empty());
}

TEST_CASE("resolver: the order --model, --model-dir, local path, HF cache, Hub", "[resolve]") {
  Fixture fx(nullptr, "org/model");
  HubStandin server(fx.root.path);
  REQUIRE(server.running());
  TempDir home("home");
  ::setenv("HF_HUB_CACHE", (home.path / "hf").string().c_str(), 1);
  auto hub = std::make_shared<Hub>(settings_for(server, fx.cache.path));
  const Resolver resolver(hub);
  ResolveOptions o;
  ModelRef ref{"model", "org/model", "", "", true};
  CHECK(resolver.resolve(ref, o, within(20)).origin == "hub");
  o.model_dirs["org/model"] = fx.ckpt.path.string();
  CHECK(resolver.resolve(ref, o, within(20)).origin == "--model-dir");
  o.model_flag = fx.ckpt.path.string();
  CHECK(resolver.resolve(ref, o, within(20)).origin == "--model");
  // A draft never takes --model.
  ModelRef draft{"draft", "org/draft", "", "", true};
  ResolveOptions none;
  none.model_flag = fx.ckpt.path.string();
  const Resolution d = resolver.resolve(draft, none, within(20));
  CHECK_FALSE(d.resolved());
  CHECK(d.failure.find("draft model 'org/draft'") != std::string::npos);
  CHECK(d.failure.find("pass --model-dir org/draft=DIR") != std::string::npos);
  // The user's HF cache comes before the Hub.
  const fs::path snap = home.path / "hf" / "models--org--model" / "snapshots" / "abc";
  fs::create_directories(snap);
  fs::copy_file(fx.ckpt.path / "config.json", snap / "config.json");
  CHECK(resolver.resolve(ref, ResolveOptions{}, within(20)).origin == "hf-cache");
  ::unsetenv("HF_HUB_CACHE");
  // --no-resolve: not the Hub.
  ResolveOptions no;
  no.no_resolve = true;
  const Resolution n = resolver.resolve(ModelRef{"model", "org/other", "", "", true}, no, within(20));
  CHECK(n.failure_kind == "no-resolve");
}
