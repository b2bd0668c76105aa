// The Hub protocol, the header fetch and the snapshot cache (see hub.hpp).
#include "resolve/hub.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "common/ascii.hpp"
#include "common/clock.hpp"
#include "common/excerpt.hpp"
#include "common/json.hpp"
#include "inputs/checkpoint/checkpoint.hpp"
#include "resolve/hub_answers.hpp"

namespace fs = std::filesystem;

namespace specprobe::resolve {

const std::vector<std::string>& hub_metadata_files() {
  // config.json and what the engines' config stage reads beside it: generation defaults,
  // ModelOpt / AutoGPTQ / AutoAWQ quantization files, Mistral's params.json, tokenizer and
  // processor configs (not the tokenizer's vocabulary), sentence-transformers and LoRA configs,
  // DeepSeek-V4's inference_config.json.
  static const std::vector<std::string> kFiles = {"config.json",
                                                  "generation_config.json",
                                                  "hf_quant_config.json",
                                                  "quantize_config.json",
                                                  "quant_config.json",
                                                  "quantization_config.json",
                                                  "params.json",
                                                  "tokenizer_config.json",
                                                  "special_tokens_map.json",
                                                  "preprocessor_config.json",
                                                  "processor_config.json",
                                                  "chat_template.json",
                                                  "sentence_bert_config.json",
                                                  "modules.json",
                                                  "adapter_config.json",
                                                  "inference_config.json"};
  return kFiles;
}

namespace {

constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kManifest = kRemoteManifest;
constexpr const char* kHeadersDir = kRemoteHeadersDir;
constexpr uint64_t kMaxMetadataFile = 8u << 20;  // any metadata file
constexpr uint64_t kMaxIndexFile = 64u << 20;    // a 92k-tensor index is ~8 MB
constexpr uint64_t kMaxApiAnswer = 64u << 20;    // the revision's file list
constexpr uint64_t kMaxHeader = 100'000'000;     // safetensors' MAX_HEADER_SIZE (tensor.rs)
constexpr size_t kMaxShards = 10'000;

bool write_file(const fs::path& p, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::optional<std::string> read_small(const fs::path& p, uint64_t max) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  const auto size = fs::file_size(p, ec);
  if (ec || size > max) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  std::string s(static_cast<size_t>(size), '\0');
  in.read(s.data(), static_cast<std::streamsize>(size));
  if (!in) return std::nullopt;
  return s;
}

std::string escape_revision(const std::string& rev) { return "rev-" + url_escape(rev, false); }

}  // namespace

Hub::Hub(HubSettings settings, HttpLoader loader) : settings_(std::move(settings)), loader_(std::move(loader)) {}

std::string Hub::repo_cache_dir(const std::string& repo) const {
  // Keyed by repo and commit, not by endpoint: a commit names the same files on the Hub and on a
  // mirror, and offline mode answers whichever endpoint fetched it (the manifest says which).
  if (settings_.cache_dir.empty()) return {};
  return (fs::path(settings_.cache_dir) / repo).string();
}

Expected<std::shared_ptr<HttpClient>> Hub::http() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (http_) return http_;
  if (http_error_) return *http_error_;
  auto h = loader_();
  if (!h) {
    http_error_ = h.error();
    return h.error();
  }
  http_ = *h;
  return http_;
}

namespace {

// A snapshot the cache holds for COMMIT, or nullopt (absent, incomplete, or lacking headers).
std::optional<HubSnapshot> cached_snapshot(const fs::path& repo_dir, const std::string& repo, const std::string& commit,
                                           bool with_headers) {
  if (repo_dir.empty() || !plausible_commit(commit)) return std::nullopt;
  const fs::path dir = repo_dir / "commits" / commit;
  auto text = read_small(dir / kManifest, kMaxIndexFile);
  if (!text) return std::nullopt;
  Json m = Json::parse(*text, nullptr, false);
  if (!m.is_object() || m.value("commit", std::string()) != commit || m.value("repo", std::string()) != repo ||
      !m.value("complete", false))
    return std::nullopt;
  if (with_headers && !m.value("with_headers", false)) return std::nullopt;
  HubSnapshot s;
  s.repo = repo;
  s.commit = commit;
  s.dir = dir.string();
  s.from_cache = true;
  s.with_headers = m.value("with_headers", false);
  s.fetched_at = m.value("fetched_at", std::string());
  s.endpoint_host = m.value("endpoint_host", std::string());
  if (m.contains("files") && m["files"].is_object()) s.files = m["files"].size();
  if (m.contains("shards") && m["shards"].is_object()) {
    s.shards = m["shards"].size();
    for (const auto& [_, v] : m["shards"].items()) s.header_bytes += v.value("header_bytes", uint64_t{0});
  }
  return s;
}

std::optional<std::string> cached_ref(const fs::path& repo_dir, const std::string& revision) {
  if (repo_dir.empty()) return std::nullopt;
  if (plausible_commit(revision) && revision.size() == 40) return revision;
  auto text = read_small(repo_dir / "refs" / escape_revision(revision), 256);
  if (!text) return std::nullopt;
  std::string c = *text;
  while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
  if (!plausible_commit(c)) return std::nullopt;
  return c;
}

}  // namespace

HubAnswer Hub::snapshot(const std::string& repo, const std::string& revision_in, bool with_headers,
                        Clock::time_point deadline, const std::function<void(const std::string&)>& progress) {
  const std::string revision = revision_in.empty() ? "main" : revision_in;
  const std::string key = repo + "@" + revision + (with_headers ? "+h" : "");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    if (!with_headers)
      if (auto it = memo_.find(key + "+h"); it != memo_.end()) return it->second;
  }
  HubAnswer a = fetch(repo, revision, with_headers, deadline, progress);
  // Network failures are not remembered (a later plan may have time left); the rest is.
  if (a.snapshot || (a.failure.kind != "timeout" && a.failure.kind != "network")) {
    HubAnswer remembered = a;
    if (remembered.snapshot) {
      remembered.snapshot->requests = 0;  // a later plan of this run costs nothing
      remembered.snapshot->bytes = 0;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    memo_[key] = std::move(remembered);
  }
  return a;
}

HubAnswer Hub::fetch(const std::string& repo, const std::string& revision, bool with_headers,
                     Clock::time_point deadline, const std::function<void(const std::string&)>& progress) {
  HubAnswer answer;
  const fs::path repo_dir = repo_cache_dir(repo);
  const auto endpoint = parse_url(settings_.endpoint);
  const std::string host = endpoint ? endpoint->host : settings_.endpoint;

  // Offline: the cache or nothing.
  if (settings_.offline) {
    if (auto commit = cached_ref(repo_dir, revision))
      if (auto snap = cached_snapshot(repo_dir, repo, *commit, with_headers)) {
        snap->revision = revision;
        snap->offline = true;
        answer.snapshot = snap;
        return answer;
      }
    answer.failure = {"offline",
                      fmt::format("'{}': offline ({}) and not in specprobe's cache", repo, settings_.offline_reason)};
    return answer;
  }
  if (!settings_.endpoint_problem.empty() || !endpoint) {
    answer.failure = {"bad-endpoint", fmt::format("'{}': {} ('{}')", repo,
                                                  settings_.endpoint_problem.empty() ? "the Hub endpoint is not a URL"
                                                                                     : settings_.endpoint_problem,
                                                  excerpt(settings_.endpoint, 64))};
    return answer;
  }
  // A commit named in full that the cache holds needs no request at all.
  if (revision.size() == 40 && plausible_commit(revision))
    if (auto snap = cached_snapshot(repo_dir, repo, revision, with_headers)) {
      snap->revision = revision;
      answer.snapshot = snap;
      return answer;
    }
  auto client = http();
  // Without libcurl or the network, a snapshot in the cache still answers (with a note).
  auto from_cache_after = [&](const HubFailure& why) {
    if (auto commit = cached_ref(repo_dir, revision))
      if (auto snap = cached_snapshot(repo_dir, repo, *commit, with_headers)) {
        snap->revision = revision;
        answer.snapshot = snap;
        answer.notes.push_back(
            fmt::format("{}; answered from specprobe's cache (fetched {})", why.message, snap->fetched_at));
        return true;
      }
    answer.failure = why;
    return false;
  };
  if (!client) {
    from_cache_after({"no-libcurl", fmt::format("'{}': {}", repo, client.error().message)});
    return answer;
  }
  HttpClient& net = **client;
  size_t requests = 0;
  uint64_t bytes = 0;

  // 1. The revision: its commit and file list.
  const std::string base = settings_.endpoint;
  FetchChain rev_chain;
  rev_chain.settings = &settings_;
  rev_chain.endpoint = &*endpoint;
  rev_chain.request.url =
      fmt::format("{}/api/models/{}/revision/{}?blobs=true", base, repo, url_escape(revision, false));
  rev_chain.request.max_body = kMaxApiAnswer;
  {
    std::vector<HttpJob> jobs{[&](const HttpResponse* r) { return rev_chain.step(r); }};
    const HttpTotals t = net.run(jobs, 1, deadline);
    requests += t.requests;
    bytes += t.body_bytes;
  }
  if (!rev_chain.final.ok()) {
    const HubFailure f = classify(rev_chain.final, repo, revision == "main" ? "" : "revision " + excerpt(revision),
                                  settings_, rev_chain.loop);
    // A network-level failure falls back to the cache; an answer from the Hub (404, gated) does not.
    if (f.kind == "network" || f.kind == "timeout" || f.kind == "server-error" || f.kind == "rate-limited")
      from_cache_after(f);
    else
      answer.failure = f;
    return answer;
  }
  std::string why;
  auto info = parse_revision(rev_chain.final.body, why);
  if (!info) {
    answer.failure = {"invalid-answer", fmt::format("'{}': {} at {}", repo, why, host)};
    return answer;
  }
  if (auto snap = cached_snapshot(repo_dir, repo, info->commit, with_headers)) {
    snap->revision = revision;
    snap->requests = requests;
    snap->bytes = bytes;
    answer.snapshot = snap;
    // Keep the ref current (a moved branch points at another commit now).
    write_file(repo_dir / "refs" / escape_revision(revision), info->commit + "\n");
    return answer;
  }

  // 2. The metadata files and the index, in parallel.
  std::vector<std::string> wanted;
  for (const auto& f : hub_metadata_files())
    if (info->files.count(f)) wanted.push_back(f);
  const bool has_index = with_headers && info->files.count(kIndexFile);
  if (has_index) wanted.push_back(kIndexFile);
  auto file_url = [&](const std::string& name) {
    return fmt::format("{}/{}/resolve/{}/{}", base, repo, info->commit, url_escape(name, true));
  };
  std::vector<FetchChain> file_chains(wanted.size());
  std::vector<HttpJob> jobs;
  for (size_t i = 0; i < wanted.size(); ++i) {
    FetchChain& c = file_chains[i];
    c.settings = &settings_;
    c.endpoint = &*endpoint;
    c.request.url = file_url(wanted[i]);
    c.request.max_body = wanted[i] == kIndexFile ? kMaxIndexFile : kMaxMetadataFile;
    jobs.push_back([&c](const HttpResponse* r) { return c.step(r); });
  }
  {
    const HttpTotals t = net.run(jobs, settings_.parallel, deadline);
    requests += t.requests;
    bytes += t.body_bytes;
  }
  std::map<std::string, std::string> fetched;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const HttpResponse& r = file_chains[i].final;
    if (!r.ok()) {
      const HubFailure f = classify(r, repo, wanted[i], settings_, file_chains[i].loop);
      if (f.kind == "network" || f.kind == "timeout" || f.kind == "server-error" || f.kind == "rate-limited")
        from_cache_after(f);
      else
        answer.failure = f;
      return answer;
    }
    fetched[wanted[i]] = r.body;
  }

  // 3. The shards: the index's, else every .safetensors file at the root.
  struct ShardJob {
    std::string name;
    std::optional<uint64_t> size;
    uint64_t first = 8;  // bytes surely in the header (8 + N): the first range never reaches the data
    FetchChain chain;
    int phase = 0;  // 0 first range, 1 the rest of the header
    std::string bytes;
    uint64_t total = 0;
    std::string problem;  // why the header could not be fetched (kept as a note; the analysis reports the shard)
  };
  std::vector<ShardJob> shards;
  std::vector<std::string> absent;
  if (with_headers) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> names;  // shard -> (tensors, name bytes)
    if (has_index) {
      Json idx = Json::parse(fetched[kIndexFile], nullptr, false);
      if (idx.is_object() && idx.contains("weight_map") && idx["weight_map"].is_object())
        for (const auto& [tensor, file] : idx["weight_map"].items())
          if (file.is_string()) {
            auto& n = names[file.get<std::string>()];
            ++n.first;
            n.second += tensor.size();
          }
    } else {
      for (const auto& [name, f] : info->files)
        if (name.find('/') == std::string::npos && name.size() > 12 && name.rfind(".safetensors") == name.size() - 12)
          names[name] = {0, 0};
    }
    for (const auto& [name, n] : names) {
      if (!safe_relative(name)) continue;  // the analysis reports the index entry
      if (!info->files.count(name)) {
        absent.push_back(name);
        continue;
      }
      if (shards.size() >= kMaxShards) break;
      ShardJob s;
      s.name = name;
      s.size = info->files[name].size;
      // No header is shorter than its entries written without spaces: `"NAME":{"dtype":"I8","shape":[],
      // "data_offsets":[0,0]}` is the name and 47 bytes, plus a comma between entries. A first range of
      // 8 + 2 + sum(name + 46) is inside the header (when the index tells the truth) and usually most of
      // it; the rest comes in a second range. No byte of tensor data is asked for.
      if (n.first) s.first = 8 + 2 + n.second + 46 * n.first;
      shards.push_back(std::move(s));
    }
  }
  size_t shards_done = 0;
  std::atomic<bool> announced{false};
  if (!shards.empty()) {
    std::vector<HttpJob> hjobs;
    for (ShardJob& s : shards) {
      s.chain.settings = &settings_;
      s.chain.endpoint = &*endpoint;
      s.chain.request.url = file_url(s.name);
      uint64_t first = std::min<uint64_t>(s.first, kMaxHeader + 8);
      if (s.size && *s.size > 0) first = std::min(first, *s.size);
      s.chain.request.range = std::pair<uint64_t, uint64_t>{0, first - 1};
      s.chain.request.max_body = first;
      hjobs.push_back([&s](const HttpResponse* r) -> HttpStep {
        HttpStep st = s.chain.step(r);
        if (st.request) return st;
        const HttpResponse& fin = s.chain.final;
        if (!fin.ok()) {
          s.problem = fin.transport_error.empty() ? fmt::format("HTTP {}", fin.status) : fin.transport_error;
          if (s.chain.loop) s.problem = "redirect loop";
          return {};
        }
        if (s.phase == 0) {
          s.bytes = fin.body;
          if (auto t = content_range_total(fin.header("content-range")))
            s.total = *t;
          else if (s.size)
            s.total = *s.size;
          else if (fin.status == 200)
            s.total = fin.body.size();
          if (s.size && s.total != *s.size) s.total = *s.size;  // the file list is the authority
          if (s.bytes.size() < 8) return {};                    // the analysis says header_too_small
          const uint64_t n = le64(s.bytes);
          if (n > kMaxHeader || 8 + n > s.total || 8 + n <= s.bytes.size()) {
            if (8 + n <= s.bytes.size()) s.bytes.resize(8 + n);
            return {};  // complete, or invalid: the analysis reads the first 8 bytes and says which
          }
          // The rest of the header, from the URL that answered (a signed CDN URL saves a hop).
          s.phase = 1;
          const uint64_t from = s.bytes.size();
          HttpRequest next = s.chain.make(s.chain.request.url);
          next.range = std::pair<uint64_t, uint64_t>{from, 8 + n - 1};
          next.max_body = 8 + n - from;
          s.chain.request.range = next.range;
          s.chain.request.max_body = next.max_body;
          s.chain.hops = 0;
          s.chain.retries = 0;
          s.chain.seen.clear();
          s.chain.seen.insert(next.url);
          return {next, 0};
        }
        s.bytes += fin.body;
        return {};
      });
    }
    auto on_progress = [&](size_t done, size_t total) {
      shards_done = done;
      if (!progress) return;
      announced = true;
      progress(fmt::format("reading the safetensors headers of {} from {}: {}/{}", repo, host, done, total));
    };
    const HttpTotals t = net.run(hjobs, settings_.parallel, deadline, on_progress);
    requests += t.requests;
    bytes += t.body_bytes;
    if (announced && progress) progress("");
    // A shard whose header could not be fetched for a network reason leaves the checkpoint
    // unreadable as a whole: no partial snapshot is cached or analysed.
    for (const ShardJob& s : shards)
      if (!s.problem.empty()) {
        HttpResponse r = s.chain.final;
        const HubFailure f = classify(r, repo, s.name, settings_, s.chain.loop);
        if (f.kind == "network" || f.kind == "timeout" || f.kind == "server-error" || f.kind == "rate-limited")
          from_cache_after(f);
        else
          answer.failure = f;
        if (!answer.snapshot && answer.failure.kind.empty()) answer.failure = f;
        return answer;
      }
  }
  (void)shards_done;

  // 4. The snapshot, written to a private directory and renamed into place.
  HubSnapshot snap;
  snap.repo = repo;
  snap.revision = revision;
  snap.commit = info->commit;
  snap.endpoint_host = host;
  snap.with_headers = with_headers;
  snap.fetched_at = utc_now_iso();
  snap.requests = requests;
  snap.bytes = bytes;
  Json manifest = {{"schema", "specprobe-hub-snapshot/1"},
                   {"repo", repo},
                   {"commit", info->commit},
                   {"revision", revision},
                   {"endpoint_host", host},
                   {"fetched_at", snap.fetched_at},
                   {"with_headers", with_headers},
                   {"complete", true}};
  Json files = Json::object(), shard_json = Json::object();
  for (const auto& [name, body] : fetched) files[name] = {{"size", body.size()}};
  for (const ShardJob& s : shards) {
    shard_json[s.name] = {
        {"size", s.total}, {"header", std::string(kHeadersDir) + "/" + s.name}, {"header_bytes", s.bytes.size()}};
    snap.header_bytes += s.bytes.size();
  }
  manifest["files"] = files;
  manifest["shards"] = shard_json;
  manifest["absent"] = absent;
  snap.files = fetched.size();
  snap.shards = shards.size();
  if (repo_dir.empty()) {
    answer.failure = {"cache-unwritable", fmt::format("'{}': no cache directory (set XDG_CACHE_HOME or HOME)", repo)};
    return answer;
  }
  std::error_code ec;
  fs::create_directories(repo_dir / "commits", ec);
  static std::atomic<unsigned> counter{0};
  const fs::path tmp =
      repo_dir / "commits" / fmt::format(".tmp-{}-{}-{}", ::getpid(), counter++, std::random_device{}());
  bool ok = !ec;
  for (const auto& [name, body] : fetched) ok = ok && write_file(tmp / name, body);
  for (const ShardJob& s : shards) ok = ok && write_file(tmp / kHeadersDir / s.name, s.bytes);
  ok = ok && write_file(tmp / kManifest, manifest.dump(1));
  const fs::path dest = repo_dir / "commits" / info->commit;
  if (ok) {
    // Into place in one step: renaming a directory onto one that exists fails, so a snapshot
    // another run put there meanwhile (several checks at once on one cache) is never moved while
    // that run may be reading it. Only one that lacks what this one has (the headers, or one left
    // incomplete) is moved aside and replaced; one as good stays and ours is dropped.
    fs::rename(tmp, dest, ec);
    if (ec && !cached_snapshot(repo_dir, repo, info->commit, with_headers)) {
      const fs::path old = repo_dir / "commits" / fmt::format(".old-{}-{}", ::getpid(), counter++);
      std::error_code moved;
      fs::rename(dest, old, moved);
      fs::rename(tmp, dest, ec);
      fs::remove_all(old, moved);
    }
    ok = !ec || fs::exists(dest / kManifest);
  }
  fs::remove_all(tmp, ec);
  if (!ok) {
    answer.failure = {"cache-unwritable",
                      fmt::format("'{}': cannot write specprobe's cache at {}", repo, repo_dir.string())};
    return answer;
  }
  write_file(repo_dir / "refs" / escape_revision(revision), info->commit + "\n");
  snap.dir = dest.string();
  answer.snapshot = snap;
  return answer;
}

}  // namespace specprobe::resolve
