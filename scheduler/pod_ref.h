#pragma once

#include <string>

#include "absl/strings/str_cat.h"

namespace topofit::scheduler {

// A pod as the extender's verbs name it: uid, namespace and name.
struct PodRef {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string key() const { return absl::StrCat(namespace_name, "/", name); }
};

}  // namespace topofit::scheduler
