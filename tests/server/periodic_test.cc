#include "server/periodic.h"

#include <atomic>
#include <memory>

#include <catch2/catch.hpp>

#include "tests/kubeclient/eventually.h"

namespace topofit::server {
namespace {

using kubeclient::testing::Eventually;

TEST_CASE("Periodic runs its task at once, again every period, and never after it goes", "[periodic]") {
  std::atomic<int> runs{0};
  auto periodic = std::make_unique<Periodic>(absl::Milliseconds(1), [&runs] { ++runs; });
  CHECK(Eventually([&] { return runs.load() >= 3; }));
  periodic.reset();  // joins the thread
  const int after = runs.load();
  absl::SleepFor(absl::Milliseconds(20));
  CHECK(runs.load() == after);
}

TEST_CASE("Periodic's destructor does not wait out a long period", "[periodic]") {
  std::atomic<int> runs{0};
  {
    Periodic periodic(absl::Hours(1), [&runs] { ++runs; });
    CHECK(Eventually([&] { return runs.load() == 1; }));
  }  // the thread sleeps for an hour unless woken: a hang here fails the test by its timeout
  CHECK(runs.load() == 1);
}

}  // namespace
}  // namespace topofit::server
