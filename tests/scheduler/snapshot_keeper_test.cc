#include "scheduler/snapshot_keeper.h"

#include <catch2/catch.hpp>

#include "scheduler/slot_name.h"

namespace topofit::scheduler {
namespace {

std::shared_ptr<const decision::NodeGpuSnapshot> Snapshot(const std::string& node) {
  auto snapshot = std::make_shared<decision::NodeGpuSnapshot>();
  snapshot->node = node;
  return snapshot;
}

// Retires `snapshot` and says whether it is still alive.
bool AliveAfterRetire(SnapshotKeeper& keeper, std::shared_ptr<const decision::NodeGpuSnapshot> snapshot) {
  std::weak_ptr<const decision::NodeGpuSnapshot> watch = snapshot;
  keeper.Retire(std::move(snapshot));
  return !watch.expired();
}

TEST_CASE("a retired snapshot goes at once when no reader holds a pin", "[snapshot_keeper]") {
  SnapshotKeeper keeper;
  CHECK_FALSE(AliveAfterRetire(keeper, Snapshot("a")));
  { auto pin = keeper.Pin(); }
  CHECK_FALSE(AliveAfterRetire(keeper, Snapshot("b")));
  keeper.Retire(nullptr);  // nothing to keep
}

TEST_CASE("a pin keeps every snapshot retired after it was taken, and only those", "[snapshot_keeper]") {
  SnapshotKeeper keeper;
  auto first = Snapshot("first"), second = Snapshot("second");
  std::weak_ptr<const decision::NodeGpuSnapshot> first_watch = first, second_watch = second;

  std::shared_ptr<const void> early = keeper.Pin();
  CHECK(AliveAfterRetire(keeper, std::move(first)));
  std::shared_ptr<const void> late = keeper.Pin();  // taken after `first` was retired: could not read it
  CHECK(AliveAfterRetire(keeper, std::move(second)));

  early.reset();
  CHECK(first_watch.expired());
  CHECK_FALSE(second_watch.expired());  // `late` could have read it
  late.reset();
  CHECK(second_watch.expired());

  CHECK_FALSE(AliveAfterRetire(keeper, Snapshot("third")));  // nothing pinned any more
}

TEST_CASE("a pin released before an older one keeps what the older could read", "[snapshot_keeper]") {
  SnapshotKeeper keeper;
  auto snapshot = Snapshot("a");
  std::weak_ptr<const decision::NodeGpuSnapshot> watch = snapshot;
  std::shared_ptr<const void> early = keeper.Pin();
  std::shared_ptr<const void> late = keeper.Pin();
  CHECK(AliveAfterRetire(keeper, std::move(snapshot)));
  late.reset();
  CHECK_FALSE(watch.expired());
  early.reset();
  CHECK(watch.expired());
}

TEST_CASE("a pin held across many retirements is released without deep recursion", "[snapshot_keeper]") {
  SnapshotKeeper keeper;
  std::shared_ptr<const void> pin = keeper.Pin();
  auto last = Snapshot("last");
  std::weak_ptr<const decision::NodeGpuSnapshot> watch = last;
  for (int i = 0; i < 200'000; ++i) keeper.Retire(Snapshot("n"));  // one generation each
  keeper.Retire(std::move(last));
  CHECK_FALSE(watch.expired());
  pin.reset();  // unlinks 200,001 generations; a recursive destructor would overflow the stack
  CHECK(watch.expired());
}

TEST_CASE("slot names compare and hash as the names they hold, short or long", "[snapshot_keeper]") {
  const std::string short_name = "ip-10-0-0-1.ec2.internal";
  const std::string long_name(253, 'n');  // the longest DNS subdomain, beyond the inline bytes
  for (const std::string& name : {short_name, long_name, std::string()}) {
    SlotName key(name);
    CHECK(key.view() == name);
    SlotName copy(key);
    SlotName moved(std::move(key));
    CHECK(copy.view() == name);
    CHECK(moved.view() == name);
    CHECK(SlotNameEq{}(moved, absl::string_view(name)));
    CHECK(SlotNameHash{}(moved) == SlotNameHash{}(absl::string_view(name)));
    copy = SlotName("other");
    CHECK(copy.view() == "other");
  }
  CHECK_FALSE(SlotNameEq{}(SlotName(long_name), absl::string_view(long_name).substr(1)));
}

}  // namespace
}  // namespace topofit::scheduler
