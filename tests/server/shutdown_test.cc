#include "server/shutdown.h"

#include <catch2/catch.hpp>

#include <signal.h>

namespace topofit::server {
namespace {

TEST_CASE("WaitForShutdownSignal returns after SIGTERM and calls back with it", "[shutdown]") {
  REQUIRE(BlockShutdownSignals().ok());
  // raise() targets this thread, where the signal is blocked: it stays pending until sigwait takes it,
  // whatever other threads of the test process do.
  REQUIRE(::raise(SIGTERM) == 0);
  int got = 0;
  REQUIRE(WaitForShutdownSignal([&](int signal) { got = signal; }).ok());
  CHECK(got == SIGTERM);

  REQUIRE(::raise(SIGINT) == 0);
  REQUIRE(WaitForShutdownSignal([&](int signal) { got = signal; }).ok());
  CHECK(got == SIGINT);
}

}  // namespace
}  // namespace topofit::server
