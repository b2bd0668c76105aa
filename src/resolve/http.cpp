// libcurl loaded at run time and driven through its multi interface (see http.hpp).
#define CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_DEPRECATION
#define CURL_NO_OLDIES
#include "resolve/http.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "build_info.hpp"
#include "common/ascii.hpp"

namespace specprobe::resolve {

// The libcurl functions used, resolved by name. curl.h supplies the types and constants only.
struct HttpClient::Api {
  void* handle = nullptr;
  std::string library;
  std::string version;
  CURLcode (*global_init)(long) = nullptr;
  curl_version_info_data* (*version_info)(CURLversion) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  CURLM* (*multi_init)() = nullptr;
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...) = nullptr;
  CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_perform)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_wait)(CURLM*, curl_waitfd*, unsigned, int, int*) = nullptr;
  CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_cleanup)(CURLM*) = nullptr;

  ~Api() {
    if (handle) dlclose(handle);
  }
};

namespace {

template <class F>
bool bind(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

std::once_flag g_global_init;

// One transfer in flight: its job's index, the request, the easy handle and what came back.
struct Transfer {
  size_t job = 0;
  HttpRequest request;
  HttpResponse response;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string range_text;
  char error[CURL_ERROR_SIZE] = {};
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->response.body.size() + bytes > t->request.max_body) {
    t->response.too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->response.body.append(data, bytes);
  return bytes;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  std::string_view line(data, bytes);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();  // a new response (an interim 1xx came first)
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return bytes;
  std::string name = ascii_lower(std::string(line.substr(0, colon)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  if (t->response.headers.size() < 256 && value.size() < 16384) t->response.headers[name] = std::string(value);
  return bytes;
}

long remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return std::max<long>(1, static_cast<long>(left));
}

}  // namespace

HttpClient::HttpClient(std::unique_ptr<Api> api) : api_(std::move(api)) {}
HttpClient::~HttpClient() = default;

Expected<std::shared_ptr<HttpClient>> HttpClient::load() {
  auto api = std::make_unique<Api>();
  for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"}) {
    api->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (api->handle) {
      api->library = name;
      break;
    }
  }
  if (!api->handle)
    return environment_error(
        "libcurl is not installed (libcurl.so.4): the Hugging Face Hub cannot be asked; install libcurl4 (Debian, "
        "Ubuntu) or libcurl (RHEL, Fedora), or pass --model DIR / --offline");
  Api& a = *api;
  const bool all =
      bind(a.handle, "curl_global_init", a.global_init) && bind(a.handle, "curl_version_info", a.version_info) &&
      bind(a.handle, "curl_easy_init", a.easy_init) && bind(a.handle, "curl_easy_setopt", a.easy_setopt) &&
      bind(a.handle, "curl_easy_getinfo", a.easy_getinfo) && bind(a.handle, "curl_easy_cleanup", a.easy_cleanup) &&
      bind(a.handle, "curl_easy_strerror", a.easy_strerror) && bind(a.handle, "curl_slist_append", a.slist_append) &&
      bind(a.handle, "curl_slist_free_all", a.slist_free_all) && bind(a.handle, "curl_multi_init", a.multi_init) &&
      bind(a.handle, "curl_multi_setopt", a.multi_setopt) &&
      bind(a.handle, "curl_multi_add_handle", a.multi_add_handle) &&
      bind(a.handle, "curl_multi_remove_handle", a.multi_remove_handle) &&
      bind(a.handle, "curl_multi_perform", a.multi_perform) && bind(a.handle, "curl_multi_wait", a.multi_wait) &&
      bind(a.handle, "curl_multi_info_read", a.multi_info_read) &&
      bind(a.handle, "curl_multi_cleanup", a.multi_cleanup);
  if (!all)
    return environment_error(
        fmt::format("{} lacks functions specprobe needs (libcurl 7.64 or newer): install a newer "
                    "libcurl, or pass --model DIR / --offline",
                    a.library));
  const curl_version_info_data* info = a.version_info(CURLVERSION_NOW);
  // 7.64 (Debian 10): multi_wait, PIPEWAIT, REDIRECT_URL without following, HTTP/2 over TLS.
  if (!info || info->version_num < 0x074000)
    return environment_error(fmt::format("{} is version {}; specprobe needs libcurl 7.64 or newer to ask the Hub",
                                         a.library, info && info->version ? info->version : "unknown"));
  a.version = info->version ? info->version : "?";
  CURLcode init = CURLE_OK;
  std::call_once(g_global_init, [&] { init = a.global_init(CURL_GLOBAL_DEFAULT); });
  if (init != CURLE_OK) return environment_error(fmt::format("{}: curl_global_init failed", a.library));
  return std::shared_ptr<HttpClient>(new HttpClient(std::move(api)));
}

std::string HttpClient::describe() const { return api_->library + " " + api_->version; }

HttpTotals HttpClient::run(std::vector<HttpJob>& jobs, int parallel, Clock::time_point deadline,
                           const std::function<void(size_t, size_t)>& progress) {
  const Api& a = *api_;
  HttpTotals totals;
  parallel = std::clamp(parallel, 1, 64);
  CURLM* multi = a.multi_init();
  if (!multi) {
    HttpResponse fail;
    fail.transport_error = "libcurl could not start (curl_multi_init)";
    for (auto& job : jobs)
      for (HttpStep s = job(nullptr); s.request; s = job(&fail)) {
      }
    return totals;
  }
  a.multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(parallel));
  a.multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));

  // Steps waiting for a free slot (due at a time point; a retry's backoff puts it in the future).
  struct Pending {
    size_t job;
    HttpRequest request;
    Clock::time_point due;
  };
  std::deque<Pending> pending;
  const std::string user_agent = std::string("specprobe/") + kToolVersion;
  std::vector<std::unique_ptr<Transfer>> active;
  size_t done = 0;

  // A job's next step after RESP (nullptr: its first step): queue it, or count the job as done.
  auto advance = [&](size_t job, const HttpResponse* resp) {
    HttpStep step = jobs[job](resp);
    while (step.request) {
      const auto due = Clock::now() + std::chrono::milliseconds(static_cast<long>(std::max(0.0, step.delay_s) * 1000));
      if (due < deadline) {
        pending.push_back({job, std::move(*step.request), due});
        return;
      }
      HttpResponse late;
      late.timed_out = true;
      late.transport_error = "the network deadline (--network-timeout) passed before the request could be retried";
      step = jobs[job](&late);
    }
    ++done;
    if (progress) progress(done, jobs.size());
  };

  auto start = [&](Pending p) {
    auto t = std::make_unique<Transfer>();
    t->job = p.job;
    t->request = std::move(p.request);
    CURL* e = a.easy_init();
    if (!e) {
      t->response.transport_error = "libcurl could not start a transfer (curl_easy_init)";
      advance(t->job, &t->response);
      return;
    }
    t->easy = e;
    a.easy_setopt(e, CURLOPT_URL, t->request.url.c_str());
    a.easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(t.get()));
    a.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    a.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    a.easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    a.easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    a.easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    a.easy_setopt(e, CURLOPT_USERAGENT, user_agent.c_str());
    a.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(10000, remaining_ms(deadline)));
    a.easy_setopt(e, CURLOPT_TIMEOUT_MS, remaining_ms(deadline));
    a.easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    a.easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
    a.easy_setopt(e, CURLOPT_WRITEDATA, static_cast<void*>(t.get()));
    a.easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
    a.easy_setopt(e, CURLOPT_HEADERDATA, static_cast<void*>(t.get()));
    if (t->request.head) a.easy_setopt(e, CURLOPT_NOBODY, 1L);
    if (t->request.range) {
      t->range_text = fmt::format("{}-{}", t->request.range->first, t->request.range->second);
      a.easy_setopt(e, CURLOPT_RANGE, t->range_text.c_str());
    }
    for (const auto& h : t->request.headers) t->headers = a.slist_append(t->headers, h.c_str());
    if (t->headers) a.easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    ++totals.requests;
    a.multi_add_handle(multi, e);
    active.push_back(std::move(t));
  };

  auto finish = [&](Transfer* t, CURLcode code) {
    long status = 0;
    a.easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    HttpResponse& r = t->response;
    r.status = status;
    char* redirect = nullptr;
    if (a.easy_getinfo(t->easy, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK && redirect) r.location = redirect;
    if (code != CURLE_OK) {
      r.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      r.truncated = code == CURLE_PARTIAL_FILE;
      r.dns_failed = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY;
      r.connect_failed = code == CURLE_COULDNT_CONNECT;
      const std::string detail = t->error[0] ? std::string(t->error) : std::string(a.easy_strerror(code));
      r.transport_error = r.too_large   ? fmt::format("the answer is larger than {} bytes", t->request.max_body)
                          : r.timed_out ? "timed out (" + detail + ")"
                                        : detail;
    }
    totals.body_bytes += r.body.size();
    a.multi_remove_handle(multi, t->easy);
    a.easy_cleanup(t->easy);
    t->easy = nullptr;
    if (t->headers) a.slist_free_all(t->headers);
    t->headers = nullptr;
  };

  for (size_t j = 0; j < jobs.size(); ++j) advance(j, nullptr);
  while (!pending.empty() || !active.empty()) {
    const auto now = Clock::now();
    // Start what is due while there is room.
    for (auto it = pending.begin(); it != pending.end() && static_cast<int>(active.size()) < parallel;) {
      if (it->due <= now) {
        Pending p = std::move(*it);
        it = pending.erase(it);
        start(std::move(p));
      } else {
        ++it;
      }
    }
    if (active.empty()) {
      // Only delayed steps are left: sleep until the first is due (they are all before the deadline).
      auto next = deadline;
      for (const auto& p : pending) next = std::min(next, p.due);
      std::this_thread::sleep_until(std::min(next, now + std::chrono::milliseconds(200)));
      continue;
    }
    int running = 0;
    a.multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = a.multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = std::find_if(active.begin(), active.end(), [&](const auto& t) { return t->easy == msg->easy_handle; });
      if (it == active.end()) continue;
      std::unique_ptr<Transfer> t = std::move(*it);
      active.erase(it);
      finish(t.get(), msg->data.result);
      advance(t->job, &t->response);
    }
    if (!active.empty()) {
      int fds = 0;
      a.multi_wait(multi, nullptr, 0, 50, &fds);
    }
  }
  a.multi_cleanup(multi);
  return totals;
}

std::optional<UrlParts> parse_url(const std::string& url) {
  UrlParts u;
  const size_t sep = url.find("://");
  if (sep == std::string::npos) return std::nullopt;
  u.scheme = ascii_lower(url.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https") return std::nullopt;
  const size_t host_begin = sep + 3;
  size_t host_end = url.find_first_of("/?#", host_begin);
  if (host_end == std::string::npos) host_end = url.size();
  std::string authority = url.substr(host_begin, host_end - host_begin);
  if (authority.find('@') != std::string::npos) return std::nullopt;  // no userinfo in an endpoint
  u.path = host_end < url.size() ? url.substr(host_end) : "/";
  u.port = u.scheme == "https" ? 443 : 80;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8080
    const size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    u.host = authority.substr(0, close + 1);
    authority = authority.substr(close + 1);
    if (!authority.empty() && authority.front() != ':') return std::nullopt;
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    authority = colon == std::string::npos ? "" : authority.substr(colon);
  }
  if (!authority.empty()) {
    const std::string digits = authority.substr(1);
    if (digits.empty() || digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), is_ascii_digit))
      return std::nullopt;
    u.port = std::stoi(digits);
    if (u.port < 1 || u.port > 65535) return std::nullopt;
  }
  u.host = ascii_lower(u.host);
  if (u.host.empty()) return std::nullopt;
  return u;
}

std::string url_escape(const std::string& s, bool keep_slash) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", static_cast<unsigned>(c));
  }
  return out;
}

}  // namespace specprobe::resolve
