#pragma once

// The hand-written AdmissionReview fixtures in tests/data/admission/, for the codec, the webhook and the
// command's tests (each defines TOPOFIT_TEST_DATA_DIR).

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace topofit::webhook::testing {

inline std::string AdmissionFixture(const std::string& name) {
  std::ifstream in(std::string(TOPOFIT_TEST_DATA_DIR) + "/admission/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace topofit::webhook::testing
