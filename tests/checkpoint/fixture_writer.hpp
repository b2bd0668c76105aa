// Writes small but real safetensors checkpoints for the checkpoint tests and the benchmark:
// headers as the reference writer lays them out, data regions left sparse (ftruncate).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "inputs/checkpoint/safetensors.hpp"

namespace specprobe::test {

struct T {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};

// Bytes of one tensor (sub-byte dtypes rounded as the format requires whole bytes).
inline uint64_t tensor_bytes(const T& t) {
  uint64_t n = 1;
  for (uint64_t d : t.shape) n *= d;
  return n * static_cast<uint64_t>(*checkpoint::dtype_bits(t.dtype)) / 8;
}

// Writes PATH as a valid shard holding TENSORS; the data region is a hole.
inline void write_shard(const std::filesystem::path& path, const std::vector<T>& tensors) {
  std::vector<checkpoint::TensorSpec> infos;
  uint64_t off = 0;
  for (const T& t : tensors) {
    const uint64_t n = tensor_bytes(t);
    infos.push_back({t.name, t.dtype, t.shape, off, off + n});
    off += n;
  }
  const std::string header = checkpoint::write_safetensors_header(infos, {{"format", "pt"}});
  std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << header;
  }
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd >= 0) {
    (void)!::ftruncate(fd, static_cast<off_t>(header.size() + off));
    ::close(fd);
  }
}

// Writes raw bytes: an 8-byte little-endian LEN followed by HEADER, then PAD zero bytes.
inline void write_raw_shard(const std::filesystem::path& path, uint64_t len, const std::string& header, uint64_t pad) {
  std::filesystem::create_directories(path.parent_path());
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xFF);
  out += header;
  out += std::string(pad, '\0');
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
}

inline void write_text(const std::filesystem::path& path, const std::string& s) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << s;
}

// model.safetensors.index.json for SHARDS (file -> tensors).
inline void write_index(const std::filesystem::path& dir, const std::vector<std::pair<std::string, std::vector<T>>>& shards) {
  Json wm = Json::object();
  uint64_t total = 0;
  for (const auto& [file, ts] : shards)
    for (const T& t : ts) {
      wm[t.name] = file;
      total += tensor_bytes(t);
    }
  write_text(dir / "model.safetensors.index.json", Json{{"metadata", {{"total_size", total}}}, {"weight_map", wm}}.dump(2));
}

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "ckpt") {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("specprobe-" + tag + "-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace specprobe::test
