// A model repository's metadata from the Hugging Face Hub, with the public API the huggingface_hub
// client uses: the revision's file list (GET {endpoint}/api/models/{repo}/revision/{rev}?blobs=true),
// the small files the engines read at config time (GET {endpoint}/{repo}/resolve/{commit}/{file}),
// and each safetensors shard's header by HTTP Range requests (the 8-byte length, then the header;
// never a byte of weights: every answer is capped at what the header needs). Transfers run in
// parallel; redirects are followed here, and the token goes to the endpoint's own host only, never
// to a redirect target on another host (the Hub sends large files to a CDN).
//
// What is fetched is kept in a cache under HubSettings::cache_dir, keyed by repo and the commit the
// revision resolved to: a repeated look-up costs one revision request (none offline).
// Writes nothing anywhere else: never into the user's Hugging Face cache or a checkpoint.
//
// A snapshot directory holds the fetched files under their own names, the shard headers under
// .specprobe-headers/<shard> (the first 8 + N bytes of each shard), and .specprobe-snapshot.json,
// which inputs/checkpoint reads to analyse the headers as it analyses a local checkpoint.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "resolve/http.hpp"
#include "resolve/hub_settings.hpp"

namespace specprobe::resolve {

// Why a repository could not be read: a stable kind and one line naming the repo, the cause and
// the fix (never the token).
struct HubFailure {
  // offline, not-found, revision-not-found, gated, forbidden, rate-limited, server-error,
  // network, timeout, invalid-answer, no-libcurl, bad-endpoint, cache-unwritable
  std::string kind;
  std::string message;
};

struct HubSnapshot {
  std::string repo, revision, commit;
  std::string dir;            // the snapshot directory in specprobe's cache
  std::string endpoint_host;  // where it came from ("huggingface.co")
  bool from_cache = false;    // nothing but (at most) the revision request went over the network
  bool offline = false;       // answered from the cache with no network at all
  bool with_headers = false;  // the shard headers were fetched
  std::string fetched_at;     // when the snapshot was fetched (ISO 8601, UTC)
  size_t files = 0;           // metadata files held
  size_t shards = 0;          // shard headers held
  uint64_t header_bytes = 0;  // bytes of those headers
  // This look-up's traffic.
  size_t requests = 0;
  uint64_t bytes = 0;
};

struct HubAnswer {
  std::optional<HubSnapshot> snapshot;
  HubFailure failure;              // when there is no snapshot
  std::vector<std::string> notes;  // e.g. "the Hub could not be reached; answered from the cache"
};

// The metadata files fetched from a repository's root when it has them (what vLLM's and SGLang's
// config stage and specprobe's readers open), besides the safetensors index and shard headers.
const std::vector<std::string>& hub_metadata_files();

class Hub {
 public:
  using HttpLoader = std::function<Expected<std::shared_ptr<HttpClient>>()>;
  explicit Hub(HubSettings settings, HttpLoader loader = &HttpClient::load);

  // REPO ("org/name") at REVISION ("main" when empty). WITH_HEADERS: the safetensors index and
  // shard headers too (a tokenizer needs only the small files). Repeated calls in one process are
  // answered from memory. PROGRESS (may be empty) receives one line as headers arrive.
  HubAnswer snapshot(const std::string& repo, const std::string& revision, bool with_headers,
                     Clock::time_point deadline, const std::function<void(const std::string&)>& progress = {});

  const HubSettings& settings() const { return settings_; }

  // Where REPO's cache lives: <cache>/<org>/<name> (refs/<revision>, commits/<commit>/).
  std::string repo_cache_dir(const std::string& repo) const;

 private:
  HubAnswer fetch(const std::string& repo, const std::string& revision, bool with_headers, Clock::time_point deadline,
                  const std::function<void(const std::string&)>& progress);
  Expected<std::shared_ptr<HttpClient>> http();

  HubSettings settings_;
  HttpLoader loader_;
  std::mutex mutex_;
  std::shared_ptr<HttpClient> http_;
  std::optional<Error> http_error_;
  std::map<std::string, HubAnswer> memo_;
};

}  // namespace specprobe::resolve
