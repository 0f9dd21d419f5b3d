#include "kubeclient/ledger_annotations.h"

#include <catch2/catch.hpp>

#include "kube/topofit_annotations.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"

namespace topofit::kubeclient {
namespace {

const std::string kPreferenceKey(kube::kPlacementPreferenceAnnotation);
const std::string kIntentKey(kube::kScaleUpIntentAnnotation);

using kube::testing::MakePod;

// Sub-second times, as absl::Now() gives them: an entry read back must be the entry written.
const absl::Time kFirstSeen = absl::FromUnixMillis(1'800'000'000'123);
const absl::Time kLastSeen = absl::FromUnixMicros(1'800'000'030'456'789);

TEST_CASE("Ledger annotations: what is written is read back", "[api-ledger]") {
  const PreferenceAnnotation preference{{"n1", "n2"}, kFirstSeen, kLastSeen};
  const std::string preference_json = PreferenceAnnotationJson(preference);
  CHECK(preference_json == R"({"firstSeen":"2027-01-15T08:00:00.123Z","lastSeen":"2027-01-15T08:00:30.456789Z",)"
                           R"("refusedNodes":["n1","n2"]})");
  absl::StatusOr<PreferenceAnnotation> preference_back = ParsePreferenceAnnotation(preference_json);
  REQUIRE_OK(preference_back);
  CHECK(*preference_back == preference);

  IntentAnnotation intent{"p4d-group", 2, {{"node.kubernetes.io/instance-type", "p4d.24xlarge"}}, kLastSeen,
                          std::nullopt};
  const std::string intent_json = IntentAnnotationJson(intent);
  CHECK(intent_json == R"({"nodeCount":2,"nodeGroup":"p4d-group",)"
                       R"("nodeLabels":{"node.kubernetes.io/instance-type":"p4d.24xlarge"},)"
                       R"("recorded":"2027-01-15T08:00:30.456789Z"})");
  absl::StatusOr<IntentAnnotation> intent_back = ParseIntentAnnotation(intent_json);
  REQUIRE_OK(intent_back);
  CHECK(*intent_back == intent);
  // A pod the new capacity is held for carries its GPUs.
  intent.held_gpus = 8;
  CHECK_THAT(IntentAnnotationJson(intent), Catch::Contains(R"("heldGpus":8)"));
  intent_back = ParseIntentAnnotation(IntentAnnotationJson(intent));
  REQUIRE_OK(intent_back);
  CHECK(*intent_back == intent);
}

TEST_CASE("Ledger annotations: a bad annotation is an error naming what is wrong", "[api-ledger]") {
  struct Row {
    const char* name;
    const char* text;
    const char* error;
  };
  const Row preferences[] = {
      {"not JSON", "{", "annotation: malformed JSON"},
      {"not an object", "[]", "not a JSON object"},
      {"no firstSeen", R"({"lastSeen":"2027-01-15T08:00:00Z"})", "firstSeen"},
      {"time not RFC 3339", R"({"firstSeen":"yesterday","lastSeen":"2027-01-15T08:00:00Z"})", "firstSeen"},
      {"refused nodes not strings", R"({"refusedNodes":[1],"firstSeen":"2027-01-15T08:00:00Z",)"
                                    R"("lastSeen":"2027-01-15T08:00:00Z"})", "refusedNodes"},
  };
  for (const Row& row : preferences) {
    INFO(row.name);
    CHECK_STATUS(ParsePreferenceAnnotation(row.text), absl::StatusCode::kInvalidArgument, row.error);
  }
  const Row intents[] = {
      {"no node group", R"({"nodeCount":1,"recorded":"2027-01-15T08:00:00Z"})", "nodeGroup"},
      {"negative count", R"({"nodeGroup":"g","nodeCount":-1,"recorded":"2027-01-15T08:00:00Z"})", "nodeCount"},
      {"fractional count", R"({"nodeGroup":"g","nodeCount":1.5,"recorded":"2027-01-15T08:00:00Z"})", "nodeCount"},
      {"labels not an object", R"({"nodeGroup":"g","nodeCount":1,"nodeLabels":[],"recorded":"2027-01-15T08:00:00Z"})",
       "nodeLabels"},
      {"no time", R"({"nodeGroup":"g","nodeCount":1})", "recorded"},
      {"held GPUs not a count", R"({"nodeGroup":"g","nodeCount":1,"recorded":"2027-01-15T08:00:00Z","heldGpus":"8"})",
       "heldGpus"},
  };
  for (const Row& row : intents) {
    INFO(row.name);
    CHECK_STATUS(ParseIntentAnnotation(row.text), absl::StatusCode::kInvalidArgument, row.error);
  }
  // Valid in every field read, with 100,000 nested arrays beside them: refused before it is parsed (the
  // pod's own parse bounded the annotation as a string, not as JSON).
  const std::string deep = topofit::testing::WithRawMember(
      {{"firstSeen", "2027-01-15T08:00:00Z"}, {"lastSeen", "2027-01-15T08:00:00Z"}}, "x",
      topofit::testing::NestedArrays(100'000));
  CHECK_STATUS(ParsePreferenceAnnotation(deep), absl::StatusCode::kInvalidArgument,
               "annotation: JSON nested deeper than 64 levels");
}

TEST_CASE("Ledger annotations: a pod's preference is re-derived from its spec", "[api-ledger]") {
  kube::Pod pod = MakePod()
                      .name("trainer")
                      .gpus(4)
                      .annotation("topofit.io/min-link", "NV")
                      .annotation("topofit.io/topology-policy", "required")
                      .nodeSelector("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
  absl::StatusOr<std::optional<decision::Preference>> none = PreferenceOfPod(pod);
  REQUIRE_OK(none);
  CHECK_FALSE(none->has_value());

  pod.metadata.annotations[kPreferenceKey] =
      PreferenceAnnotationJson(PreferenceAnnotation{{"n1"}, kFirstSeen, kLastSeen});
  absl::StatusOr<std::optional<decision::Preference>> preference = PreferenceOfPod(pod);
  REQUIRE_OK(preference);
  REQUIRE(preference->has_value());
  const decision::Preference& p = **preference;
  CHECK(p.pod_uid == "uid-trainer");
  CHECK(p.pod_key == "default/trainer");
  CHECK(p.gpus == 4);
  CHECK(p.min_link == topology::LinkClass::kNvLink);
  CHECK(p.node_selector == kube::StringMap{{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}});
  CHECK(p.refused_nodes == std::vector<std::string>{"n1"});
  CHECK(p.first_seen == kFirstSeen);
  CHECK(p.last_seen == kLastSeen);

  SECTION("an invalid annotation, or an invalid demand, is an error") {
    pod.metadata.annotations[kPreferenceKey] = "{not json";
    CHECK_STATUS(PreferenceOfPod(pod), absl::StatusCode::kInvalidArgument, "topofit.io/placement-preference");
    pod.metadata.annotations[kPreferenceKey] =
        PreferenceAnnotationJson(PreferenceAnnotation{{}, kFirstSeen, kLastSeen});
    pod.metadata.annotations["topofit.io/min-link"] = "fast";
    CHECK_STATUS(PreferenceOfPod(pod), absl::StatusCode::kInvalidArgument, "topofit.io/min-link");
  }
  SECTION("an intent annotation") {
    CHECK_FALSE(IntentOfPod(pod)->has_value());
    pod.metadata.annotations[kIntentKey] = R"({"nodeGroup":"g","nodeCount":1,"recorded":"x"})";
    CHECK_STATUS(IntentOfPod(pod), absl::StatusCode::kInvalidArgument, "topofit.io/scale-up-intent: recorded");
  }
}

}  // namespace
}  // namespace topofit::kubeclient
