// Reading the Hub's answers (see hub_answers.hpp).
#include "resolve/hub_answers.hpp"

#include <algorithm>

#include "common/ascii.hpp"
#include "common/excerpt.hpp"
#include "common/json.hpp"

namespace specprobe::resolve {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

bool plausible_commit(const std::string& s) {
  return s.size() >= 7 && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_ascii_digit(c) || (c >= 'a' && c <= 'f'); });
}

// A repository-relative file name the cache may hold: no absolute path, no "..", no empty or
// hidden component, printable ASCII, bounded.
bool safe_relative(const std::string& name) {
  if (name.empty() || name.size() > 512 || name.front() == '/') return false;
  for (unsigned char c : name)
    if (c < 0x20 || c >= 0x7F || c == '\\') return false;
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(begin, end - begin);
    if (part.empty() || part[0] == '.') return false;
    begin = end + 1;
  }
  return true;
}

uint64_t le64(const std::string& b) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return n;
}

// "bytes A-B/TOTAL" -> TOTAL.
std::optional<uint64_t> content_range_total(const std::string& v) {
  const size_t slash = v.rfind('/');
  if (slash == std::string::npos || slash + 1 >= v.size()) return std::nullopt;
  uint64_t n = 0;
  for (size_t i = slash + 1; i < v.size(); ++i) {
    if (!is_ascii_digit(v[i]) || n > (UINT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(v[i] - '0');
  }
  return n;
}

HttpRequest FetchChain::make(const std::string& url) const {
  HttpRequest r = request;
  r.url = url;
  r.headers.clear();
  if (!settings->token.empty() && endpoint) {
    const auto u = parse_url(url);
    if (u && u->scheme == endpoint->scheme && u->host == endpoint->host && u->port == endpoint->port &&
        (u->scheme == "https" || is_loopback(u->host)))
      r.headers.push_back("Authorization: Bearer " + settings->token);
  }
  return r;
}

HttpStep FetchChain::step(const HttpResponse* last) {
  if (!last) {
    seen.insert(request.url);
    return {make(request.url), 0};
  }
  if (last->transport_error.empty() && last->status >= 300 && last->status < 400 && !last->location.empty()) {
    if (++hops > kMaxHops || !seen.insert(last->location).second) {
      final = *last;
      loop = true;
      return {};
    }
    request.url = last->location;
    return {make(last->location), 0};
  }
  const bool retry_status = last->transport_error.empty() && (last->status >= 500 || last->status == 429);
  // A timeout is the check's deadline (every transfer runs until then): no retry.
  // A refused connection is retried once (a server restarting), not three times.
  const bool retry_transport = !last->transport_error.empty() && !last->too_large && !last->dns_failed &&
                               !last->timed_out && !(last->connect_failed && retries >= 1);
  if ((retry_status || retry_transport) && retries < kMaxRetries) {
    double delay = 0.5 * (1 << retries);
    if (last->status == 429) {
      const std::string ra = last->header("retry-after");
      if (!ra.empty() && ra.size() < 6 && std::all_of(ra.begin(), ra.end(), [](char c) { return is_ascii_digit(c); }))
        delay = std::stod(ra);
      if (delay > 30) {  // longer than a check should wait
        final = *last;
        return {};
      }
    }
    ++retries;
    return {make(request.url), delay};
  }
  final = *last;
  return {};
}

HubFailure classify(const HttpResponse& r, const std::string& repo, const std::string& what, const HubSettings& s,
                    bool loop) {
  const std::string code = r.header("x-error-code");
  const std::string where = what.empty() ? fmt::format("'{}'", repo) : fmt::format("'{}' ({})", repo, what);
  const std::string host = parse_url(s.endpoint) ? parse_url(s.endpoint)->host : s.endpoint;
  if (loop) return {"invalid-answer", fmt::format("{}: the Hub at {} redirects in a loop", where, host)};
  if (r.too_large)
    return {"invalid-answer", fmt::format("{}: the answer from {} is larger than specprobe reads ({}); the server may "
                                          "ignore Range requests",
                                          where, host, r.transport_error)};
  if (r.truncated)
    return {"network", fmt::format("{}: the connection to {} closed before the answer was complete", where, host)};
  if (r.timed_out)
    return {"timeout", fmt::format("{}: no answer from {} within the network deadline (--network-timeout {:g} s)",
                                   where, host, s.timeout_s)};
  if (r.dns_failed)
    return {"network", fmt::format("{}: cannot resolve the Hub's host {} (no network or DNS?)", where, host)};
  if (!r.transport_error.empty())
    return {"network", fmt::format("{}: cannot reach {} ({})", where, host, excerpt(r.transport_error, 120))};
  if (code == "GatedRepo" || (r.status == 403 && code.empty() && s.token.empty()))
    return {
        "gated",
        s.token.empty()
            ? fmt::format("{}: gated: accept the licence on the Hub ({}/{}) and set HF_TOKEN", where, s.endpoint, repo)
            : fmt::format("{}: gated, and the token ({}) has no access: accept the licence on the Hub ({}/{}) "
                          "with that account",
                          where, s.token_source, s.endpoint, repo)};
  if (code == "RevisionNotFound")
    return {"revision-not-found", fmt::format("{}: no such revision on {} (check --revision)", where, host)};
  if (code == "EntryNotFound") return {"not-found", fmt::format("{}: the file is not in the repository", where)};
  if (r.status == 401 || code == "RepoNotFound" || r.status == 404)
    return {"not-found",
            s.token.empty()
                ? fmt::format("{}: no such model on {} (or it is private: set HF_TOKEN)", where, host)
                : fmt::format("{}: no such model on {}, or the token ({}) cannot see it", where, host, s.token_source)};
  if (r.status == 403)
    return {"forbidden", fmt::format("{}: {} refuses access (HTTP 403{}); check the token's permissions", where, host,
                                     code.empty() ? "" : ", " + code)};
  if (r.status == 429)
    return {
        "rate-limited",
        fmt::format("{}: rate limited by {} (HTTP 429{}); retry later or set HF_TOKEN for a higher limit", where, host,
                    r.header("retry-after").empty() ? "" : ", Retry-After " + excerpt(r.header("retry-after"), 12))};
  if (r.status >= 500)
    return {"server-error", fmt::format("{}: {} answered HTTP {} after {} attempts; retry later", where, host, r.status,
                                        kMaxRetries + 1)};
  return {"invalid-answer", fmt::format("{}: unexpected answer from {} (HTTP {})", where, host, r.status)};
}

std::optional<RevisionInfo> parse_revision(const std::string& body, std::string& why) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    why = "the revision answer is not a JSON object";
    return std::nullopt;
  }
  RevisionInfo info;
  if (!j.contains("sha") || !j["sha"].is_string() || !plausible_commit(j["sha"].get<std::string>())) {
    why = "the revision answer has no commit (sha)";
    return std::nullopt;
  }
  info.commit = j["sha"].get<std::string>();
  if (j.contains("siblings") && j["siblings"].is_array()) {
    for (const Json& s : j["siblings"]) {
      if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
      RepoFile f;
      f.name = s["rfilename"].get<std::string>();
      if (!safe_relative(f.name)) continue;
      if (s.contains("lfs") && s["lfs"].is_object() && s["lfs"].value("size", Json()).is_number_unsigned())
        f.size = s["lfs"]["size"].get<uint64_t>();
      else if (s.value("size", Json()).is_number_unsigned())
        f.size = s["size"].get<uint64_t>();
      info.files[f.name] = f;
      if (info.files.size() > 100'000) break;
    }
  }
  return info;
}

}  // namespace specprobe::resolve
