#include "topology/gpu_set.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "topology/quoted.h"

namespace topofit::topology {

absl::StatusOr<GpuSet> GpuSet::FromIds(const std::vector<GpuId>& ids, int gpu_count) {
  GpuSet set;
  for (GpuId id : ids) {
    if (id.value < 0 || id.value >= gpu_count) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown GPU id ", id.value, ": this node has GPUs 0..", gpu_count - 1));
    }
    if (set.contains(id)) {
      return absl::InvalidArgumentError(absl::StrCat("GPU id ", id.value, " is listed twice"));
    }
    set = set.with(id);
  }
  return set;
}

std::vector<GpuId> GpuSet::ids() const {
  std::vector<GpuId> out;
  out.reserve(size());
  for (uint32_t rest = mask_; rest != 0; rest &= rest - 1) {
    out.push_back(GpuId{std::countr_zero(rest)});
  }
  return out;
}

std::string GpuSet::ToString() const {
  return absl::StrJoin(ids(), ",", [](std::string* out, GpuId id) { absl::StrAppend(out, id.value); });
}

absl::StatusOr<GpuSet> GpuSet::Parse(absl::string_view text, int gpu_count) {
  std::vector<GpuId> ids;
  if (absl::StripAsciiWhitespace(text).empty()) return GpuSet();
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    int value = 0;
    if (!absl::SimpleAtoi(part, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("not a GPU id: ", Quoted(part), " in ", Quoted(text)));
    }
    ids.push_back(GpuId{value});
  }
  return FromIds(ids, gpu_count);
}

}  // namespace topofit::topology
