// The Hub stand-in fixture (see hub_standin.hpp).
#include "support/hub_standin.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace specprobe::testing {
namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

HubStandin::HubStandin(const fs::path& root, const std::vector<std::string>& tokens) {
  std::random_device rd;
  dir_ = fs::temp_directory_path() / ("specprobe-standin-" + std::to_string(rd()) + std::to_string(rd()));
  fs::create_directories(dir_);
  const std::string script = std::string(SPECPROBE_SOURCE_DIR) + "/tests/support/hub_standin.py";
  std::vector<std::string> args = {"python3",     script,
                                   "--root",      root.string(),
                                   "--port-file", (dir_ / "port").string(),
                                   "--log",       (dir_ / "log.jsonl").string()};
  for (const auto& t : tokens) {
    args.push_back("--token");
    args.push_back(t);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    execvp("python3", argv.data());
    _exit(127);
  }
  for (int i = 0; i < 400 && pid_ > 0; ++i) {  // up to 20 s on a loaded machine
    std::error_code ec;
    if (fs::exists(dir_ / "port", ec)) {
      port_ = std::atoi(read_all(dir_ / "port").c_str());
      if (port_ > 0) break;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

HubStandin::~HubStandin() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, WNOHANG);
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string HubStandin::request(const std::string& method, const std::string& path) const {
  if (port_ <= 0) return {};
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[8192];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : out.substr(body + 4);
}

Json HubStandin::stats() const {
  Json j = Json::parse(request("GET", "/_standin/stats"), nullptr, false);
  return j.is_discarded() ? Json(nullptr) : j;
}

void HubStandin::reset() const { request("POST", "/_standin/reset"); }

std::string HubStandin::log_text() const { return read_all(dir_ / "log.jsonl"); }

void write_standin_repo(const fs::path& root, const std::string& repo_id, const fs::path& source, const Json& control) {
  const fs::path repo = root / repo_id;
  fs::create_directories(repo);
  // Links, not copies: a sparse shard of hundreds of GB stays a link.
  for (auto it = fs::recursive_directory_iterator(source); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), source);
    if (it->is_directory()) {
      fs::create_directories(repo / rel);
    } else if (it->is_regular_file()) {
      std::error_code ec;
      fs::create_symlink(fs::absolute(it->path()), repo / rel, ec);
    }
  }
  if (control.is_object()) std::ofstream(repo / ".standin.json") << control.dump();
}

}  // namespace specprobe::testing
