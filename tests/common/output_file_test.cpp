// Checked, atomic output (common/output_file.hpp): a report file is replaced whole or not at all,
// every failed write is an io error naming the destination, and no temporary file is left.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../e2e/run_binary.hpp"
#include "common/json.hpp"
#include "common/output_file.hpp"

using namespace specprobe;
namespace fs = std::filesystem;

namespace {

// The directory's entries other than NAME.
std::vector<std::string> others(const std::string& dir, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != name) out.push_back(e.path().filename().string());
  return out;
}

// A JSON document of about BYTES bytes whose "version" is V.
std::string big_json(int v, size_t bytes) {
  Json j = {{"version", v}, {"results", Json::array()}};
  for (size_t n = 0; n < bytes / 230 + 1; ++n)
    j["results"].push_back({{"id", "SP3020"}, {"message", std::string(200, 'a' + v % 26)}});
  return j.dump(2) + "\n";
}

}  // namespace

TEST_CASE("write_file_atomic writes the content and leaves no temporary file", "[common][output]") {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/report.json";
  REQUIRE(write_file_atomic(path, "{\"a\": 1}\n"));
  CHECK(test::file_text(path) == "{\"a\": 1}\n");
  CHECK(others(dir, "report.json").empty());
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  const mode_t mask = umask(022);
  umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));  // as a plain create, not mkstemp's 0600
  // An existing file keeps its mode; a relative name lands in the working directory's file.
  chmod(path.c_str(), 0640);
  REQUIRE(write_file_atomic(path, "two\n"));
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(test::file_text(path) == "two\n");
}

TEST_CASE("AtomicFileWriter: written in pieces, rewritten in place, renamed at commit, removed without it",
          "[common][output]") {
  // Issue 49: a many-file JSON report is written as its entries come, and its exit code patched.
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/report.json";
  REQUIRE(write_file_atomic(path, "old\n"));
  {
    auto w = AtomicFileWriter::open(path);
    REQUIRE(w);
    REQUIRE((*w)->rewritable());
    REQUIRE((*w)->write("{\"exit_code\": 0, "));
    REQUIRE((*w)->write("\"reports\": []}\n"));
    CHECK((*w)->written() == 32);
    CHECK(test::file_text(path) == "old\n");  // nothing replaced before commit
    REQUIRE((*w)->write_at(14, "1"));
    REQUIRE((*w)->commit());
  }
  CHECK(test::file_text(path) == "{\"exit_code\": 1, \"reports\": []}\n");
  CHECK(others(dir, "report.json").empty());
  {
    auto w = AtomicFileWriter::open(path);
    REQUIRE(w);
    REQUIRE((*w)->write("half"));
  }  // dropped without commit: the temporary file goes, the target stays
  CHECK(test::file_text(path) == "{\"exit_code\": 1, \"reports\": []}\n");
  CHECK(others(dir, "report.json").empty());
  // A target written in place (a device) cannot be rewritten.
  auto dev = AtomicFileWriter::open("/dev/null");
  REQUIRE(dev);
  CHECK_FALSE((*dev)->rewritable());
  REQUIRE((*dev)->write("x"));
  auto again = (*dev)->write_at(0, "y");
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == ErrorKind::io);
  CHECK(again.error().message.find("/dev/null") != std::string::npos);
  REQUIRE((*dev)->commit());
  // A directory that does not exist: an io error naming the file.
  auto missing = AtomicFileWriter::open(dir + "/no/such/report.json");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("no/such/report.json") != std::string::npos);
}

TEST_CASE("write_file_atomic renames only after the whole content is written - a failure keeps the old file",
          "[common][output]") {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/report.json";
  std::ofstream(path) << "old report\n";
  const std::string content = big_json(1, 1 << 20);
  std::string seen_tmp;
  auto st = write_file_atomic(path, content, [&](const std::string& tmp) -> Status {
    seen_tmp = tmp;
    CHECK(test::file_text(path) == "old report\n");  // the target is untouched while the new one is written
    CHECK(test::file_text(tmp) == content);          // and the temporary file holds all of it
    return io_error("injected failure after the write");
  });
  REQUIRE_FALSE(st);
  CHECK(st.error().kind == ErrorKind::io);
  CHECK(st.error().message == "injected failure after the write");
  CHECK(fs::path(seen_tmp).parent_path() == fs::path(dir));  // same directory: rename is atomic
  CHECK(fs::path(seen_tmp).filename().string().rfind(".report.json.tmp.", 0) == 0);
  CHECK(test::file_text(path) == "old report\n");
  CHECK(others(dir, "report.json").empty());
}

TEST_CASE("a reader polling the report file never sees half a report", "[common][output]") {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/report.json";
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad{0};
  std::thread reader([&] {
    while (!done) {
      std::ifstream f(path, std::ios::binary);
      if (!f) {
        std::this_thread::yield();
        continue;
      }
      std::stringstream ss;
      ss << f.rdbuf();
      ++reads;
      if (Json::parse(ss.str(), nullptr, false).is_discarded()) ++bad;
    }
  });
  for (int v = 0; v < 20; ++v) REQUIRE(write_file_atomic(path, big_json(v, 2 << 20)));
  done = true;
  reader.join();
  INFO(reads << " reads");
  CHECK(reads > 0);
  CHECK(bad == 0);
  CHECK(Json::parse(test::file_text(path))["version"] == 19);
  CHECK(others(dir, "report.json").empty());
}

TEST_CASE("write_file_atomic follows a symbolic link and keeps it", "[common][output]") {
  const std::string dir = test::temp_dir();
  fs::create_directories(dir + "/real");
  std::ofstream(dir + "/real/r.json") << "old\n";
  fs::create_symlink("real/r.json", dir + "/link.json");
  REQUIRE(write_file_atomic(dir + "/link.json", "new\n"));
  CHECK(fs::is_symlink(dir + "/link.json"));
  CHECK(test::file_text(dir + "/real/r.json") == "new\n");
  CHECK(others(dir + "/real", "r.json").empty());
}

TEST_CASE("failed writes are io errors naming the destination", "[common][output]") {
  auto full = write_file_atomic("/dev/full", "x");  // a device: written in place, and full
  REQUIRE_FALSE(full);
  CHECK(full.error().kind == ErrorKind::io);
  CHECK(full.error().message.find("/dev/full") != std::string::npos);
  CHECK(full.error().message.find(std::strerror(ENOSPC)) != std::string::npos);

  auto missing = write_file_atomic("/nonexistent-dir/r.json", "x");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ErrorKind::io);
  CHECK(missing.error().message.find("/nonexistent-dir/r.json") != std::string::npos);

  auto append = append_file("/dev/full", "x");
  REQUIRE_FALSE(append);
  CHECK(append.error().message.find("/dev/full") != std::string::npos);

  std::FILE* fp = std::fopen("/dev/full", "w");
  REQUIRE(fp);
  auto stream = write_stream(fp, std::string(100000, 'x'));
  std::fclose(fp);
  REQUIRE_FALSE(stream);
  CHECK(stream.error().kind == ErrorKind::io);

  const std::string dir = test::temp_dir();
  const std::string log = dir + "/summary.md";
  REQUIRE(append_file(log, "one\n"));
  REQUIRE(append_file(log, "two\n"));
  CHECK(test::file_text(log) == "one\ntwo\n");
}
