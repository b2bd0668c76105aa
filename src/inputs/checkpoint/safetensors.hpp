// Safetensors shard headers: the 8-byte little-endian length and the JSON header, validated the
// way the reference reader (huggingface/safetensors tensor.rs read_metadata / Metadata::validate)
// does. Tensor data is never read. Files are opened read-only; nothing is ever written.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace specprobe::checkpoint {

inline constexpr uint64_t kMaxHeaderSize = 100'000'000;  // tensor.rs MAX_HEADER_SIZE

// Bits per element of a safetensors dtype string ("F8_E4M3" -> 8, "F4" -> 4), or nullopt when the
// string is not a dtype of the format.
std::optional<int> dtype_bits(std::string_view dtype);

// The dtypes of the format, numbered 0..kDtypeCount-1 (TensorInfo::dtype_id).
inline constexpr size_t kDtypeCount = 22;
std::string_view dtype_name(size_t id);

// One tensor entry of a parsed header. NAME views the owning ShardHeader's buffer (valid while
// that header lives; it moves with it); DTYPE views a static table. No per-tensor allocation.
struct TensorInfo {
  std::string_view name;
  std::string_view dtype;
  uint64_t begin = 0;  // data_offsets, relative to the byte buffer after the header
  uint64_t end = 0;
  uint32_t shape_offset = 0;  // first dimension in ShardHeader::dims
  uint32_t rank = 0;
  uint8_t dtype_id = 0;
};

// A validated header. Move-only: the tensors view its buffer.
struct ShardHeader {
  std::string path;
  uint64_t file_size = 0;
  uint64_t header_size = 0;                     // N
  std::vector<TensorInfo> tensors;              // in header order
  std::vector<uint64_t> dims;                   // every tensor's shape, concatenated
  std::map<std::string, std::string> metadata;  // __metadata__
  std::unique_ptr<char[]> text;                 // the header JSON, names unescaped in place

  std::span<const uint64_t> shape(const TensorInfo& t) const { return {dims.data() + t.shape_offset, t.rank}; }

  ShardHeader() = default;
  ShardHeader(ShardHeader&&) = default;
  ShardHeader& operator=(ShardHeader&&) = default;
  ShardHeader(const ShardHeader&) = delete;
  ShardHeader& operator=(const ShardHeader&) = delete;
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

// Reads PATH's first 8 + N bytes (open O_RDONLY, pread; no other bytes are touched). The buffer
// is N bytes, N <= kMaxHeaderSize and N <= the file size, checked before it is allocated.
HeaderResult read_safetensors_header(const std::string& path);

// The same for a shard that is not on disk: STUB holds its first bytes (the length and the
// header, as fetched from the Hub by resolve/hub.hpp) and FILE_SIZE is the shard's size there.
// The checks are the local reader's, against FILE_SIZE; PATH names the shard in the result.
HeaderResult read_safetensors_header_stub(const std::string& stub, uint64_t file_size, const std::string& path);

// A tensor to write.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Serializes a header the way the reference writer does (sorted by name, padded with spaces to a
// multiple of 8); used by tests and the benchmark to write real shards.
std::string write_safetensors_header(const std::vector<TensorSpec>& tensors,
                                     const std::map<std::string, std::string>& metadata = {});

}  // namespace specprobe::checkpoint
