#include "codec/json_string.h"

#include <random>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace topofit::codec {
namespace {

std::string Dumped(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Appended(const std::string& s) {
  std::string out = "prefix";
  AppendJsonString(out, s);
  return out.substr(6);
}

TEST_CASE("every byte value at every place in a word is written as nlohmann writes it", "[json_string]") {
  // The plain check looks at eight bytes at a time: a byte that needs escaping must be caught in any lane
  // of the word and in the tail after the last whole word.
  for (size_t length = 1; length <= 19; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string s(length, 'a');
        s[at] = static_cast<char>(byte);
        INFO("length " << length << ", byte " << byte << " at " << at);
        REQUIRE(Appended(s) == Dumped(s));
      }
    }
  }
}

TEST_CASE("names and reasons are copied as they are, empty strings too", "[json_string]") {
  CHECK(Appended("") == "\"\"");
  const std::string reason =
      "topofit: needs links of NV or better, best reachable is SYS even when empty (catalog:dgx1-v100)";
  CHECK(Appended(reason) == "\"" + reason + "\"");
  CHECK(Appended("ip-10-16-0-1.us-west-2.compute.internal~") == "\"ip-10-16-0-1.us-west-2.compute.internal~\"");
}

TEST_CASE("random strings, with bytes near the plain range's edges, match nlohmann", "[json_string]") {
  std::mt19937 random(7);
  const std::string edges = std::string("\x1f\x20\x21\x22\x5b\x5c\x5d\x7e\x7f\x80\xff\x00", 12);
  for (int i = 0; i < 20000; ++i) {
    const size_t length = random() % 40;
    std::string s;
    for (size_t j = 0; j < length; ++j) {
      s += random() % 4 == 0 ? edges[random() % edges.size()] : static_cast<char>('a' + random() % 26);
    }
    REQUIRE(Appended(s) == Dumped(s));
  }
}

}  // namespace
}  // namespace topofit::codec
