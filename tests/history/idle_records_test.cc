#include "history/idle_records.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "tests/history/memory_recorder.h"

namespace topofit::history {
namespace {

NodeIdleGpus Idle(const std::string& node, uint32_t free_mask, IdleReason reason) {
  NodeIdleGpus idle{node, "group", topology::GpuSet::FromMask(free_mask), {}};
  idle.counts[static_cast<size_t>(reason)] = idle.free.size();
  return idle;
}

TEST_CASE("an idle record per node whose idle GPUs changed since its last record", "[history][idle]") {
  testing::MemoryRecorder recorder;
  IdleRecords records;
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  // a: 4 free with nothing running; b: first seen with nothing free (nothing to tell).
  records.RecordChanges(t0, {Idle("a", 0x0f, IdleReason::kAwaitingScaleDown), Idle("b", 0, IdleReason::kNoDemand)},
                        recorder);
  // Unchanged: nothing. Then a's reason changes and b frees 2 GPUs.
  records.RecordChanges(t0 + absl::Seconds(15),
                        {Idle("a", 0x0f, IdleReason::kAwaitingScaleDown), Idle("b", 0, IdleReason::kNoDemand)}, recorder);
  records.RecordChanges(t0 + absl::Seconds(30),
                        {Idle("a", 0x0f, IdleReason::kFragmented), Idle("b", 0x30, IdleReason::kNoDemand)}, recorder);
  // a's GPUs all taken: recorded, with nothing free.
  records.RecordChanges(t0 + absl::Seconds(45), {Idle("a", 0, IdleReason::kNoDemand)}, recorder);

  std::vector<std::string> told;
  for (const Record& r : recorder.records()) {
    CHECK(r.kind == Kind::kIdle);
    told.push_back(absl::StrCat(absl::ToInt64Seconds(r.time - t0), "s ", r.node, " ", r.gpus));
  }
  CHECK(told == std::vector<std::string>{"0s a 4", "30s a 4", "30s b 2", "45s a 0"});
}

}  // namespace
}  // namespace topofit::history
