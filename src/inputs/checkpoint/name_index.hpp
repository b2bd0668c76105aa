// A flat open-addressing hash map from a name (std::string_view, not owned) to a uint32_t. The
// checkpoint reader keys ~90k tensor names this way: the names stay in the shard header buffers,
// so a table costs one array instead of a node and a string copy per entry (building and freeing
// those dominated the scan of a DeepSeek-size checkpoint). Callers keep the viewed bytes alive.
#pragma once
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace specprobe::checkpoint {

class NameIndex {
 public:
  explicit NameIndex(size_t expected = 0) { rehash(capacity_for(expected)); }

  // The value stored under KEY and whether it was inserted now (VALUE) or was already there.
  std::pair<uint32_t*, bool> insert(std::string_view key, uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    const size_t h = std::hash<std::string_view>{}(key);
    const uint32_t tag = tag_of(h);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.tag == 0) {
        s = {key.data(), key.size(), tag, value};
        ++size_;
        return {&s.value, true};
      }
      if (s.tag == tag && s.view() == key) return {&s.value, false};
    }
  }

  // The value stored under KEY, or nullptr.
  uint32_t* find(std::string_view key) {
    const size_t h = std::hash<std::string_view>{}(key);
    const uint32_t tag = tag_of(h);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.tag == 0) return nullptr;
      if (s.tag == tag && s.view() == key) return &s.value;
    }
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    const char* data = nullptr;
    size_t len = 0;
    uint32_t tag = 0;  // 0: empty; else high hash bits with the low bit set
    uint32_t value = 0;
    std::string_view view() const { return {data, len}; }
  };
  static uint32_t tag_of(size_t h) { return static_cast<uint32_t>(h >> 32) | 1u; }
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c * 3 < n * 4 + 4) c *= 2;
    return c;
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (const Slot& s : old)
      if (s.tag != 0)
        for (size_t i = std::hash<std::string_view>{}(s.view()) & mask_;; i = (i + 1) & mask_)
          if (slots_[i].tag == 0) {
            slots_[i] = s;
            break;
          }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace specprobe::checkpoint
