// The Hugging Face Hub stand-in (hub_standin.py) as a test fixture: started on 127.0.0.1 for the
// lifetime of the object, serving the repositories under ROOT (<org>/<name>/ directories; see
// README_hub_standin.md), stopped by the destructor. Tests point HF_ENDPOINT at endpoint().
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe::testing {

class HubStandin {
 public:
  // TOKENS: the tokens the stand-in accepts (gated and private repositories).
  explicit HubStandin(const std::filesystem::path& root, const std::vector<std::string>& tokens = {});
  ~HubStandin();
  HubStandin(const HubStandin&) = delete;
  HubStandin& operator=(const HubStandin&) = delete;

  bool running() const { return port_ > 0; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // GET /_standin/stats: requests, by_kind, bytes_sent, violations, ... (null when it fails).
  Json stats() const;
  // POST /_standin/reset: counters and fault counts back to zero.
  void reset() const;
  // The request log (one JSON object per line).
  std::string log_text() const;

 private:
  std::string request(const std::string& method, const std::string& path) const;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Writes a repository for the stand-in: ROOT/<org>/<name>/ with a copy of every file of SOURCE (a
// checkpoint directory, sparse shards kept sparse) and, when CONTROL is an object, .standin.json.
void write_standin_repo(const std::filesystem::path& root, const std::string& repo_id,
                        const std::filesystem::path& source, const Json& control = nullptr);

}  // namespace specprobe::testing
