// Helpers shared by the libFuzzer harnesses: a private scratch directory per process (for the
// readers whose entry point takes a path), whole-file writes and splitting an input into sections.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

// The entry point: libFuzzer's, or (SPECPROBE_FUZZ_REPLAY, tests/hostile/fuzz_replay_test.cpp)
// a named function so that the Catch2 suite replays the seeds and every past crash without
// libFuzzer, in every build (release, ASan+UBSan).
#ifdef SPECPROBE_FUZZ_REPLAY
#define SPECPROBE_FUZZ_ENTRY(name) int name(const uint8_t* data, size_t size)
#define SPECPROBE_FUZZ_FAIL(why) throw std::logic_error(why)
#else
#define SPECPROBE_FUZZ_ENTRY(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
#define SPECPROBE_FUZZ_FAIL(why) ::specprobe::fuzz::fail(why)
#endif

namespace specprobe::fuzz {

// A harness property that does not hold: says which, then traps (libFuzzer saves the input).
[[noreturn]] inline void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz property violated: %s\n", why.c_str());
  __builtin_trap();
}

// Created once, removed at exit; lives under $TMPDIR, else /dev/shm where it is a writable
// directory, else /tmp. The file-reading harnesses write every input: on a disk file system each
// O_TRUNC rewrite makes ext4 flush the file at close (block I/O per input, 2-3x slower); tmpfs
// keeps it in memory.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::string base = t && *t ? t : ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string tmpl = base + "/specprobe-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    static struct Remover {
      std::string d;
      ~Remover() {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    } remover{tmpl};
    return tmpl;
  }();
  return dir;
}

// Replaces PATH's contents with BYTES (truncating); then, when SIZE > BYTES.size(), extends the
// file with a hole to SIZE bytes.
inline void write_file(const std::string& path, std::string_view bytes, uint64_t size = 0) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  if (size > bytes.size() && ::ftruncate(fd, static_cast<off_t>(size)) != 0) std::abort();
  ::close(fd);
}

// The end of the data region a safetensors HEADER (JSON text) describes: the largest
// data_offsets end, capped at 1 GiB (written as a hole: no disk, no tmpfs memory).
inline uint64_t shard_data_end(std::string_view header) {
  const nlohmann::json j = nlohmann::json::parse(header, nullptr, false);
  uint64_t end = 0;
  if (!j.is_object()) return 0;
  for (const auto& [name, info] : j.items()) {
    if (!info.is_object()) continue;
    auto it = info.find("data_offsets");
    if (it == info.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned()) continue;
    end = std::max(end, (*it)[1].get<uint64_t>());
  }
  return std::min<uint64_t>(end, uint64_t{1} << 30);
}

// A shard at PATH: the 8-byte little-endian length of HEADER, HEADER, then a sparse data region
// that fits it (shard_data_end).
inline void write_shard(const std::string& path, std::string_view header) {
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  bytes.append(header);
  write_file(path, bytes, bytes.size() + shard_data_end(header));
}

// Splits TEXT on lines that read exactly "----" (the separator line is dropped).
inline std::vector<std::string_view> split_sections(std::string_view text, size_t max_sections) {
  std::vector<std::string_view> out;
  constexpr std::string_view kSep = "\n----\n";
  while (out.size() + 1 < max_sections) {
    const size_t at = text.find(kSep);
    if (at == std::string_view::npos) break;
    out.push_back(text.substr(0, at));
    text.remove_prefix(at + kSep.size());
  }
  out.push_back(text);
  return out;
}

}  // namespace specprobe::fuzz
