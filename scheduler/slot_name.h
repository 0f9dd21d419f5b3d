#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace topofit::scheduler {

// A hash table key holding a node's name in the table's own slot, up to kInline bytes (longer names, a DNS
// subdomain may have 253, on the heap). Why: a NodeNames request looks up thousands of names, and with
// std::string keys each lookup compared against characters in a heap block of their own, one more cache
// miss per node that prefetching the slot does not cover (perf: the largest cost of the lookups).
class SlotName {
 public:
  static constexpr size_t kInline = 52;

  explicit SlotName(absl::string_view name) : size_(static_cast<uint32_t>(name.size())) {
    char* into = inline_;
    if (name.size() > kInline) {
      heap_ = std::make_unique<char[]>(name.size());
      into = heap_.get();
    }
    if (!name.empty()) std::memcpy(into, name.data(), name.size());
  }
  // Copied when the table grows (its slots hold a const key).
  SlotName(const SlotName& other) : SlotName(other.view()) {}
  SlotName(SlotName&& other) noexcept : size_(other.size_), heap_(std::move(other.heap_)) {
    std::memcpy(inline_, other.inline_, sizeof(inline_));
  }
  SlotName& operator=(const SlotName& other) { return *this = SlotName(other); }
  SlotName& operator=(SlotName&& other) noexcept {
    size_ = other.size_;
    heap_ = std::move(other.heap_);
    std::memcpy(inline_, other.inline_, sizeof(inline_));
    return *this;
  }

  absl::string_view view() const { return {heap_ != nullptr ? heap_.get() : inline_, size_}; }

 private:
  uint32_t size_;
  char inline_[kInline] = {};
  std::unique_ptr<char[]> heap_;
};

// Hash and equality that let a table keyed by SlotName be searched with a string_view.
struct SlotNameHash {
  using is_transparent = void;
  size_t operator()(absl::string_view name) const { return absl::Hash<absl::string_view>{}(name); }
  size_t operator()(const SlotName& name) const { return (*this)(name.view()); }
};
struct SlotNameEq {
  using is_transparent = void;
  static absl::string_view View(absl::string_view name) { return name; }
  static absl::string_view View(const SlotName& name) { return name.view(); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a) == View(b);
  }
};

}  // namespace topofit::scheduler
