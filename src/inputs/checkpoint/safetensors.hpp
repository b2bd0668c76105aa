// Safetensors shard headers: the 8-byte little-endian length and the JSON header, validated the
// way the reference reader (huggingface/safetensors tensor.rs read_metadata / Metadata::validate)
// does. Tensor data is never read. Files are opened read-only; nothing is ever written.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace specprobe::checkpoint {

inline constexpr uint64_t kMaxHeaderSize = 100'000'000;  // tensor.rs MAX_HEADER_SIZE

// Bits per element of a safetensors dtype string ("F8_E4M3" -> 8, "F4" -> 4), or nullopt when the
// string is not a dtype of the format.
std::optional<int> dtype_bits(std::string_view dtype);

struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the byte buffer after the header
  uint64_t end = 0;
};

struct ShardHeader {
  std::string path;
  uint64_t file_size = 0;
  uint64_t header_size = 0;  // N
  std::vector<TensorInfo> tensors;  // in header order
  std::map<std::string, std::string> metadata;  // __metadata__
};

// Why a shard is invalid: a stable code plus a message naming the tensor where it applies.
// Codes: header_too_small, header_too_large, invalid_header_length, invalid_utf8, invalid_json,
// not_object, invalid_metadata, invalid_tensor_info, unknown_dtype, duplicate_tensor,
// invalid_offset, misaligned_slice, tensor_invalid_info, validation_overflow,
// incomplete_buffer, read_failed.
struct ShardError {
  std::string code;
  std::string message;
};

// Parses and validates a header held in memory. FILE_SIZE is the whole shard's size.
// Returns the header or the first violation found.
struct HeaderResult {
  std::optional<ShardHeader> header;
  ShardError error;
};
HeaderResult parse_safetensors_header(std::string_view header_json, uint64_t header_size, uint64_t file_size);

// Reads PATH's first 8 + N bytes (open O_RDONLY, pread; no other bytes are touched).
HeaderResult read_safetensors_header(const std::string& path);

// Serializes a header the way the reference writer does (sorted by name, padded with spaces to a
// multiple of 8); used by tests and the benchmark to write real shards.
std::string write_safetensors_header(const std::vector<TensorInfo>& tensors,
                                     const std::map<std::string, std::string>& metadata = {});

}  // namespace specprobe::checkpoint
