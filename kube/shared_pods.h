#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "kube/objects.h"

namespace topofit::kube {

// A list of pods whose entries may be one object: cluster-autoscaler sends the same pending pods in every
// option of a BestOptions request, so the expander decodes each distinct pod once and every option that
// carries it points to that copy. Reads like a const std::vector<Pod> (size, index, range-for) and is
// built from a brace list of pods (each copied once) or from shared pods. Entries never change.
class SharedPods {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Pod;
    using difference_type = std::ptrdiff_t;
    using pointer = const Pod*;
    using reference = const Pod&;

    const_iterator() = default;
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(it_++); }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;

   private:
    friend class SharedPods;
    using Base = std::vector<std::shared_ptr<const Pod>>::const_iterator;
    explicit const_iterator(Base it) : it_(it) {}
    Base it_;
  };

  SharedPods() = default;
  SharedPods(std::initializer_list<Pod> pods) {
    pods_.reserve(pods.size());
    for (const Pod& pod : pods) pods_.push_back(std::make_shared<const Pod>(pod));
  }

  void reserve(size_t n) { pods_.reserve(n); }
  void push_back(std::shared_ptr<const Pod> pod) { pods_.push_back(std::move(pod)); }

  size_t size() const { return pods_.size(); }
  bool empty() const { return pods_.empty(); }
  const Pod& operator[](size_t i) const { return *pods_[i]; }
  const_iterator begin() const { return const_iterator(pods_.begin()); }
  const_iterator end() const { return const_iterator(pods_.end()); }

 private:
  std::vector<std::shared_ptr<const Pod>> pods_;  // never null
};

}  // namespace topofit::kube
