// The Hub settings from the environment (see hub_settings.hpp).
#include "resolve/hub_settings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/ascii.hpp"
#include "resolve/http.hpp"

namespace fs = std::filesystem;

namespace specprobe::resolve {
namespace {

// The first line of PATH, trimmed; "" when it is not a regular file of at most 4 KiB.
std::string read_token_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return {};
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= 4096) {
    text.resize(static_cast<size_t>(st.st_size));
    const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  ::close(fd);
  if (const size_t nl = text.find_first_of("\r\n"); nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.erase(0, 1);
  return text;
}

}  // namespace

bool env_true(const std::string& value) {
  const std::string v = ascii_upper(value);
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

HubSettings hub_settings_from_env(const std::function<std::string(const char*)>& env) {
  HubSettings s;
  std::string endpoint = env("HF_ENDPOINT");
  if (!endpoint.empty()) {
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    s.endpoint = endpoint;
    s.endpoint_from_env = true;
    const auto parts = parse_url(endpoint);
    if (!parts)
      s.endpoint_problem = "HF_ENDPOINT is not an http:// or https:// URL (without user name or password)";
    else if (parts->path != "/" && !parts->path.empty() && parts->path.find_first_of("?#") != std::string::npos)
      s.endpoint_problem = "HF_ENDPOINT holds a query or fragment";
  }
  // huggingface_hub: HF_HUB_OFFLINE (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE in older releases).
  for (const char* name : {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"})
    if (env_true(env(name))) {
      s.offline = true;
      s.offline_reason = std::string(name) + "=" + env(name);
      break;
    }
  // The token: HF_TOKEN, the legacy HUGGING_FACE_HUB_TOKEN, then the file HF_TOKEN_PATH names,
  // else HF_HOME/token (HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface).
  if (!env_true(env("HF_HUB_DISABLE_IMPLICIT_TOKEN"))) {
    if (!env("HF_TOKEN").empty()) {
      s.token = env("HF_TOKEN");
      s.token_source = "HF_TOKEN";
    } else if (!env("HUGGING_FACE_HUB_TOKEN").empty()) {
      s.token = env("HUGGING_FACE_HUB_TOKEN");
      s.token_source = "HUGGING_FACE_HUB_TOKEN";
    } else {
      std::string path = env("HF_TOKEN_PATH");
      std::string source = "HF_TOKEN_PATH";
      if (path.empty()) {
        source = "the token file";
        if (!env("HF_HOME").empty())
          path = (fs::path(env("HF_HOME")) / "token").string();
        else if (!env("XDG_CACHE_HOME").empty())
          path = (fs::path(env("XDG_CACHE_HOME")) / "huggingface" / "token").string();
        else if (!env("HOME").empty())
          path = (fs::path(env("HOME")) / ".cache" / "huggingface" / "token").string();
      }
      if (!path.empty()) {
        s.token = read_token_file(path);
        if (!s.token.empty()) s.token_source = source;
      }
    }
  }
  // A token with a line break or a control character would forge a header: not used.
  for (char c : s.token)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      s.token.clear();
      s.token_source.clear();
      break;
    }
  if (!env("XDG_CACHE_HOME").empty())
    s.cache_dir = (fs::path(env("XDG_CACHE_HOME")) / "specprobe" / "hub").string();
  else if (!env("HOME").empty())
    s.cache_dir = (fs::path(env("HOME")) / ".cache" / "specprobe" / "hub").string();
  return s;
}

HubSettings hub_settings_from_process() {
  return hub_settings_from_env([](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  });
}

}  // namespace specprobe::resolve
