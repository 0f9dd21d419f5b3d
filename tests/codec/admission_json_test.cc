#include "codec/admission_json.h"

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/escaping.h"
#include "tests/webhook/admission_fixtures.h"

namespace topofit::codec {
namespace {

std::string Fixture(const std::string& name) { return webhook::testing::AdmissionFixture(name); }

TEST_CASE("ParseAdmissionReview reads what the webhook needs of a pod's CREATE", "[admission_json]") {
  const absl::StatusOr<AdmissionRequest> request = ParseAdmissionReview(Fixture("required-pod.json"));
  REQUIRE(request.ok());
  CHECK(request->uid == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(request->group.empty());
  CHECK(request->version == "v1");
  CHECK(request->kind == "Pod");
  CHECK(request->operation == "CREATE");
  CHECK(request->namespace_name == "ml");
  CHECK(request->name.empty());  // generateName only: the API server names the pod after admission
  CHECK_FALSE(request->dry_run);
  CHECK(request->object["metadata"]["generateName"] == "trainer-");

  const absl::StatusOr<AdmissionRequest> dry = ParseAdmissionReview(Fixture("required-pod-with-affinity.json"));
  REQUIRE(dry.ok());
  CHECK(dry->dry_run);
  CHECK(dry->name == "trainer-0");
}

TEST_CASE("ParseAdmissionReview refuses what is not an AdmissionReview v1 request, naming why", "[admission_json]") {
  struct Row {
    const char* name;
    std::string body;
    const char* message;
  };
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const Row rows[] = {
      {"malformed JSON", Fixture("malformed.json"), "malformed JSON"},
      {"nested deeper than the bound", deep, "nested deeper than 64"},
      {"not an object", "[]", "want a JSON object"},
      {"admission.k8s.io/v1beta1", Fixture("wrong-api-version.json"), "apiVersion: want admission.k8s.io/v1"},
      {"another kind", Fixture("wrong-kind.json"), "kind: want AdmissionReview"},
      {"no uid", Fixture("missing-uid.json"), "request.uid: missing"},
      {"no request", R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})", "request: want an object"},
      {"a uid that is not a string",
       R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 7}})",
       "request.uid: want a string"},
      {"an object that is not one",
       R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "1", "operation": "CREATE",
           "kind": {"version": "v1", "kind": "Pod"}, "object": "pod"}})",
       "request.object: want a JSON object"},
      {"a request without its object's kind",
       R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "1", "operation": "CREATE"}})",
       "request.kind: want an object"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      const absl::StatusOr<AdmissionRequest> request = ParseAdmissionReview(row.body);
      REQUIRE_FALSE(request.ok());
      CHECK(request.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(request.status().message()), Catch::Contains(row.message));
    }
  }
}

TEST_CASE("AdmissionReviewToJson: allowed, the patch base64 JSON Patch, warnings, nothing else", "[admission_json]") {
  AdmissionResponse response;
  response.uid = "u-1";
  SECTION("without a patch: no patchType either") {
    const nlohmann::json review = nlohmann::json::parse(AdmissionReviewToJson(response));
    CHECK(review == nlohmann::json::parse(
                        R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u-1", "allowed": true}})"));
  }
  SECTION("with a patch and a warning") {
    response.patch = nlohmann::json::parse(R"([{"op": "add", "path": "/metadata/annotations/a~1b", "value": "x"}])");
    response.warnings = {"topofit: a warning"};
    const nlohmann::json review = nlohmann::json::parse(AdmissionReviewToJson(response));
    CHECK(review["response"]["patchType"] == "JSONPatch");
    CHECK(review["response"]["warnings"] == nlohmann::json::array({"topofit: a warning"}));
    std::string patch;
    REQUIRE(absl::Base64Unescape(review["response"]["patch"].get<std::string>(), &patch));
    CHECK(nlohmann::json::parse(patch) == *response.patch);
  }
}

TEST_CASE("JsonPointerToken escapes ~ then / as RFC 6901 says", "[admission_json]") {
  CHECK(JsonPointerToken("topofit.io/topology-affinity") == "topofit.io~1topology-affinity");
  CHECK(JsonPointerToken("team/a~b") == "team~1a~0b");
  CHECK(JsonPointerToken("~1") == "~01");  // not "~1" read back as "/"
  CHECK(JsonPointerToken("plain") == "plain");
}

}  // namespace
}  // namespace topofit::codec
