// Where and how specprobe asks the Hugging Face Hub, from the same environment variables the
// huggingface_hub client reads (its constants.py): HF_ENDPOINT, HF_TOKEN / HF_TOKEN_PATH / the
// token file under HF_HOME, HF_HUB_OFFLINE, and specprobe's own cache under XDG_CACHE_HOME.
// Proxies (HTTPS_PROXY, NO_PROXY) are libcurl's. The token's value is kept here and in the
// request headers only: nothing in this unit prints it, and describe() never holds it.
#pragma once
#include <functional>
#include <string>

namespace specprobe::resolve {

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // no trailing slash
  bool endpoint_from_env = false;                   // HF_ENDPOINT was set
  std::string token;                                // never printed
  std::string token_source;  // "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "the token file", ""
  bool offline = false;
  std::string offline_reason;  // "HF_HUB_OFFLINE=1", "--offline"
  std::string cache_dir;       // <XDG_CACHE_HOME or ~/.cache>/specprobe/hub; "" = no cache
  double timeout_s = 60;       // network time allowed per check (--network-timeout)
  int parallel = 16;           // transfers in flight at once
  // An endpoint that is not an http(s) URL: every Hub look-up fails with this text.
  std::string endpoint_problem;
};

// ENV looks a variable up ("" when unset). Reads the token file when no variable holds a token
// (a file of at most 4 KiB; its first line, trimmed).
HubSettings hub_settings_from_env(const std::function<std::string(const char*)>& env);

// The same over the process environment.
HubSettings hub_settings_from_process();

// A variable's value read as huggingface_hub reads its boolean switches ("1", "ON", "YES", "TRUE",
// any case).
bool env_true(const std::string& value);

}  // namespace specprobe::resolve
