// The Hub's answers, read: the revision's file list, Content-Range, the redirect and retry policy
// of one logical request, and what a final answer that is not a success means. Internal to
// resolve/ (hub.cpp); apart so that tests and the fuzz harness (tests/fuzz/fuzz_hub_answers.cpp)
// reach every answer a server could give. No I/O.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "resolve/http.hpp"
#include "resolve/hub.hpp"
#include "resolve/hub_settings.hpp"

namespace specprobe::resolve {

inline constexpr int kMaxHops = 5;     // redirects followed for one file
inline constexpr int kMaxRetries = 3;  // retries of a 5xx, a 429 or a dropped connection

// 127.x, localhost, [::1]: a token may go there over plain http.
bool is_loopback(const std::string& host);
// A commit id as the Hub writes it: 7 to 64 lower-case hex digits.
bool plausible_commit(const std::string& s);
// A repository-relative file name the cache may hold: no absolute path, no "..", no empty or
// hidden component, printable ASCII without backslashes, at most 512 bytes.
bool safe_relative(const std::string& name);
// The little-endian u64 at the start of B (B holds at least 8 bytes).
uint64_t le64(const std::string& b);
// "bytes A-B/TOTAL" -> TOTAL; nullopt for anything else ("*", no total, overflow).
std::optional<uint64_t> content_range_total(const std::string& v);

// One logical GET: follows redirects (at most kMaxHops, never back to a URL seen), retries a 5xx,
// a 429 (after Retry-After, up to 30 s), a dropped connection or a short body with backoff (0.5,
// 1, 2 s), and keeps the last answer in FINAL. The token goes only to URLs on the endpoint's own
// scheme, host and port, and only over https or to a loopback host.
struct FetchChain {
  const HubSettings* settings = nullptr;
  const UrlParts* endpoint = nullptr;
  HttpRequest request;  // the first request; its url follows the redirects
  int hops = 0;
  int retries = 0;
  std::set<std::string> seen;
  HttpResponse final;
  bool loop = false;  // stopped on a redirect loop (or more than kMaxHops)

  HttpRequest make(const std::string& url) const;
  // The next step after LAST (nullptr first); a step without a request = finished (see FINAL).
  HttpStep step(const HttpResponse* last);
};

// What a final answer that is not a success means for REPO (WHAT: the file or revision it was
// for, "" for the repository), in one line naming the repo, the cause and the fix. LOOP: the chain
// stopped on a redirect loop. Never quotes the token.
HubFailure classify(const HttpResponse& r, const std::string& repo, const std::string& what, const HubSettings& s,
                    bool loop);

struct RepoFile {
  std::string name;
  std::optional<uint64_t> size;  // lfs.size, else size (with ?blobs=true)
};

struct RevisionInfo {
  std::string commit;
  std::map<std::string, RepoFile> files;  // safe names only, at most 100,000
};

// The revision answer (GET /api/models/{repo}/revision/{rev}?blobs=true); nullopt with WHY when it
// is not a JSON object with a plausible sha.
std::optional<RevisionInfo> parse_revision(const std::string& body, std::string& why);

}  // namespace specprobe::resolve
