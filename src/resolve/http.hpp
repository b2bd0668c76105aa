// HTTP(S) transfers for the resolver, over the system's libcurl loaded at run time (dlopen; never
// linked), the way gpu/ loads the CUDA driver: one binary runs with and without libcurl, and a
// machine without it gets a clear "install libcurl4" line instead of a missing-library error at
// start. libcurl brings what a hand-written client would not: TLS with the system CA store and
// verification on, HTTP/2 multiplexing, proxies from HTTPS_PROXY / NO_PROXY, Range requests.
//
// Redirects are never followed here: the caller sees each 3xx with its absolute Location and
// decides whether to go on and which headers (a token) the next host may see. Bodies are capped
// (max_body); a transfer past its cap, a timeout or a short body is a failed transfer with its
// cause, never a crash or an unbounded read. No GPU, no files.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace specprobe::resolve {

using Clock = std::chrono::steady_clock;

struct HttpRequest {
  std::string url;
  bool head = false;
  // Bytes FIRST..LAST inclusive ("Range: bytes=FIRST-LAST"), or the whole body.
  std::optional<std::pair<uint64_t, uint64_t>> range;
  std::vector<std::string> headers;  // "Name: value"
  uint64_t max_body = 16u << 20;     // a longer body fails the transfer (too_large)
};

struct HttpResponse {
  long status = 0;                             // 0: no HTTP answer (see transport_error)
  std::map<std::string, std::string> headers;  // lower-case names; the last value of a repeated one
  std::string body;
  std::string location;         // a 3xx's Location, made absolute against the request's URL
  std::string transport_error;  // why no complete answer came ("" when one did)
  bool timed_out = false;
  bool too_large = false;  // the body went past max_body
  bool truncated = false;  // the connection closed before Content-Length bytes came
  bool dns_failed = false;
  bool connect_failed = false;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool ok() const { return transport_error.empty() && status >= 200 && status < 300; }
};

// What a job asks for next: a request (now, or after DELAY), or nothing (the job is done).
struct HttpStep {
  std::optional<HttpRequest> request;
  double delay_s = 0;
};

// A job is a chain of requests (a redirect, a retry, a second Range): given the answer to its
// last request (nullptr on the first call) it returns the next step.
using HttpJob = std::function<HttpStep(const HttpResponse* last)>;

struct HttpTotals {
  size_t requests = 0;
  uint64_t body_bytes = 0;  // response bodies received
};

class HttpClient {
 public:
  // Loads libcurl (libcurl.so.4, libcurl-gnutls.so.4). Environment error naming what to install
  // when it is absent or too old.
  static Expected<std::shared_ptr<HttpClient>> load();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Runs JOBS with at most PARALLEL transfers in flight. A transfer still running at DEADLINE is
  // stopped and answered as timed out; a job asking for a delay past DEADLINE gets a timed-out
  // answer instead. PROGRESS (may be empty) is called with (jobs done, jobs in all) as jobs end.
  // Thread-safe: concurrent calls use separate transfer sets.
  HttpTotals run(std::vector<HttpJob>& jobs, int parallel, Clock::time_point deadline,
                 const std::function<void(size_t, size_t)>& progress = {});

  // The library loaded and its version ("libcurl.so.4 8.5.0").
  std::string describe() const;

  struct Api;

 private:
  explicit HttpClient(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

// Parts of an absolute http(s) URL. Lower-cased scheme and host; PORT is the explicit or the
// scheme's default port. nullopt for anything else.
struct UrlParts {
  std::string scheme, host, path;  // path includes the query
  int port = 0;
};
std::optional<UrlParts> parse_url(const std::string& url);

// "a/b c" -> "a%2Fb%20c" when SLASH is false; unreserved characters (and '/' when SLASH) stay.
std::string url_escape(const std::string& s, bool keep_slash);

}  // namespace specprobe::resolve
