// Child-process runner for end-to-end tests.
#include "run_binary.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace specprobe::test {

std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  auto key = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || key(o) == key(kv);
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& content) {
  const std::string p = dir + "/" + name;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
  return p;
}

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "specprobe-test-XXXXXX").string();
  char* d = mkdtemp(tmpl.data());
  return d ? std::string(d) : std::string();
}

RunResult run_specprobe(const std::string& args, const std::string& dir) { return run_specprobe_env({}, args, dir); }

RunResult run_specprobe_env(const std::vector<std::string>& env, const std::string& args, const std::string& dir) {
  static int counter = 0;
  const std::string errfile = temp_dir() + "/stderr" + std::to_string(counter++);
  std::string cmd;
  if (!dir.empty()) cmd = "cd " + shell_quote(dir) + " && ";
  std::string vars = "env";  // unsets first: env reads options only before the first assignment
  for (const auto& e : env)
    if (e.rfind('-', 0) == 0) vars += " -u " + shell_quote(e.substr(1));
  for (const auto& e : env)
    if (e.rfind('-', 0) != 0) vars += " " + shell_quote(e);
  cmd += vars + " NO_COLOR=1 " + shell_quote(SPECPROBE_BINARY) + " " + args + " 2>" + shell_quote(errfile);
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = file_text(errfile);
  return r;
}

}  // namespace specprobe::test
