#include "webhook/admission.h"

#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/escaping.h"
#include "codec/kube_json.h"
#include "codec/node_topology.h"
#include "tests/kube/builders.h"
#include "tests/webhook/admission_fixtures.h"

namespace topofit::webhook {
namespace {

using Json = nlohmann::json;
using kube::testing::MakeNode;

Json Fixture(const std::string& name) { return Json::parse(testing::AdmissionFixture(name)); }

codec::AdmissionRequest Request(const Json& review) {
  absl::StatusOr<codec::AdmissionRequest> request = codec::ParseAdmissionReview(review.dump());
  REQUIRE(request.ok());
  return *std::move(request);
}

// The groups the expander published: a p4d (NVSwitch), a g5 (PCIe) and a CPU group, as CA's templates, the
// GPU groups in zone us-east-1a.
kube::NodeTemplates Templates() {
  return kube::SharedTemplates({
      {"p4d", MakeNode().name("template-node-for-p4d").label("node.kubernetes.io/instance-type", "p4d.24xlarge")
                  .label("topology.kubernetes.io/zone", "us-east-1a").gpus(8)},
      {"g5", MakeNode().name("template-node-for-g5").label("node.kubernetes.io/instance-type", "g5.48xlarge")
                 .label("topology.kubernetes.io/zone", "us-east-1a").gpus(8)},
      {"m5", MakeNode().name("template-node-for-m5").label("node.kubernetes.io/instance-type", "m5.8xlarge")},
  });
}

struct Reviewed {
  Admission admission;
  Json patched;  // the object with the patch applied (json::patch, RFC 6902), or as it was without one
};

Reviewed Review(const Json& review, const kube::NodeTemplates& templates = Templates()) {
  codec::TopologyResolver topologies;
  const codec::AdmissionRequest request = Request(review);
  Reviewed out{Admit(request, templates, topologies), request.object};
  CHECK(out.admission.response.uid == request.uid);
  if (out.admission.response.patch) out.patched = request.object.patch(*out.admission.response.patch);
  return out;
}

kube::Pod Decoded(const Json& object) {
  absl::StatusOr<kube::Pod> pod = codec::PodFromJson(object);
  REQUIRE(pod.ok());
  return *std::move(pod);
}

// The required terms, one string each: "key In [values]; ..." per term, matchFields after "|".
std::vector<std::string> RequiredTerms(const kube::Pod& pod) {
  std::vector<std::string> out;
  if (!pod.spec.required_node_affinity) return out;
  const auto text = [](const std::vector<kube::NodeSelectorRequirement>& requirements) {
    std::string s;
    for (const kube::NodeSelectorRequirement& r : requirements) {
      if (!s.empty()) s += "; ";
      s += r.key + "=" + (r.values.empty() ? "" : r.values[0]);
    }
    return s;
  };
  for (const kube::NodeSelectorTerm& term : pod.spec.required_node_affinity->terms) {
    out.push_back(text(term.match_expressions) + (term.match_fields.empty() ? "" : " | " + text(term.match_fields)));
  }
  return out;
}

TEST_CASE("A pod requiring 8 NVLink GPUs is confined to the p4d group, as the fixture's response says", "[webhook]") {
  const Reviewed reviewed = Review(Fixture("required-pod.json"));
  CHECK(reviewed.admission.outcome == Outcome::kPatched);
  CHECK(reviewed.admission.response.warnings.empty());
  const Json expected = Fixture("required-pod-response.json");
  REQUIRE(reviewed.admission.response.patch.has_value());
  CHECK(*reviewed.admission.response.patch == expected["response"]["patch"]);

  // On the wire: the fixture's response, its patch base64-encoded.
  const Json wire = Json::parse(codec::AdmissionReviewToJson(reviewed.admission.response));
  std::string patch;
  REQUIRE(absl::Base64Unescape(wire["response"]["patch"].get<std::string>(), &patch));
  Json decoded_wire = wire;
  decoded_wire["response"]["patch"] = Json::parse(patch);
  CHECK(decoded_wire == expected);

  const kube::Pod pod = Decoded(reviewed.patched);
  CHECK(RequiredTerms(pod) == std::vector<std::string>{"node.kubernetes.io/instance-type=p4d.24xlarge"});
  CHECK(pod.metadata.annotations.at("topofit.io/topology-affinity") == "written");
  CHECK(pod.metadata.annotations.at("topofit.io/min-link") == "NV");  // the others kept

  SECTION("called again for the patched pod (reinvocation), it changes nothing") {
    Json again = Fixture("required-pod.json");
    again["request"]["object"] = reviewed.patched;
    const Reviewed second = Review(again);
    CHECK(second.admission.outcome == Outcome::kAlreadyWritten);
    CHECK_FALSE(second.admission.response.patch.has_value());
  }
}

TEST_CASE("The patch ANDs each of the pod's own required terms with the groups', keeping what it does not read",
          "[webhook]") {
  // The fixture's pod: 4 GPUs on NVLink, two own terms (zone a, which the groups are in; zone b with a
  // matchFields), preferred node affinity and pod anti-affinity. Only the p4d gives 4 NVLink GPUs: 2 own
  // terms x 1 group = 2 terms, the second matching no node today, kept as the pod wrote it.
  const Json fixture = Fixture("required-pod-with-affinity.json");
  const std::string required = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";
  struct Row {
    const char* name;
    std::function<void(Json& pod)> edit;
    std::string path;  // of the affinity's operation: the first level the pod lacks
    std::vector<std::string> terms;
  };
  const std::string p4d = "node.kubernetes.io/instance-type=p4d.24xlarge";
  const Row rows[] = {
      {"required terms present: they are replaced", [](Json&) {}, required + "/nodeSelectorTerms",
       {"topology.kubernetes.io/zone=us-east-1a; " + p4d,
        "topology.kubernetes.io/zone=us-east-1b; " + p4d + " | metadata.name=bad-node"}},
      {"nodeAffinity with preferred terms only",
       [](Json& pod) { pod["spec"]["affinity"]["nodeAffinity"].erase("requiredDuringSchedulingIgnoredDuringExecution"); },
       required, {p4d}},
      {"required affinity null (Go's nil)",
       [](Json& pod) { pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = nullptr; },
       required, {p4d}},
      {"affinity without nodeAffinity", [](Json& pod) { pod["spec"]["affinity"].erase("nodeAffinity"); },
       "/spec/affinity/nodeAffinity", {p4d}},
      {"no affinity at all", [](Json& pod) { pod["spec"].erase("affinity"); }, "/spec/affinity", {p4d}},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      Json review = fixture;
      row.edit(review["request"]["object"]);
      const Reviewed reviewed = Review(review);
      REQUIRE(reviewed.admission.outcome == Outcome::kPatched);
      const Json& patch = *reviewed.admission.response.patch;
      REQUIRE(patch.size() == 2);
      CHECK(patch[0]["op"] == "add");
      CHECK(patch[0]["path"] == row.path);
      CHECK(patch[1]["path"] == "/metadata/annotations/topofit.io~1topology-affinity");
      const kube::Pod pod = Decoded(reviewed.patched);
      CHECK(RequiredTerms(pod) == row.terms);
      // What the webhook does not touch is as it was.
      const Json& before = review["request"]["object"];
      CHECK(reviewed.patched["metadata"]["annotations"]["team/a~b"] == "kept");
      CHECK(reviewed.patched["spec"]["affinity"].value("podAntiAffinity", Json()) ==
            before["spec"].value("affinity", Json::object()).value("podAntiAffinity", Json()));
      CHECK(reviewed.patched["spec"]["affinity"]["nodeAffinity"].value("preferredDuringSchedulingIgnoredDuringExecution", Json()) ==
            before["spec"].value("affinity", Json::object()).value("nodeAffinity", Json::object()).value(
                "preferredDuringSchedulingIgnoredDuringExecution", Json()));
      CHECK(reviewed.patched["spec"]["containers"] == before["spec"]["containers"]);
    }
  }
}

TEST_CASE("Pods the webhook leaves as they are, with a warning where their author can act", "[webhook]") {
  const Json required = Fixture("required-pod.json");
  struct Row {
    const char* name;
    std::function<void(Json& review)> edit;
    kube::NodeTemplates templates;
    Outcome outcome;
    const char* warning;  // "" for none
  };
  const Row rows[] = {
      {"a topology only preferred", [](Json& r) { r = Fixture("preferred-pod.json"); }, Templates(),
       Outcome::kNotRequired, ""},
      {"no GPUs",
       [](Json& r) { r["request"]["object"]["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu"); },
       Templates(), Outcome::kNotRequired, ""},
      {"an UPDATE", [](Json& r) { r["request"]["operation"] = "UPDATE"; }, Templates(), Outcome::kNotPodCreate, ""},
      {"not a pod", [](Json& r) { r["request"]["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}}; },
       Templates(), Outcome::kNotPodCreate, ""},
      {"no template known yet", [](Json&) {}, {}, Outcome::kNoTemplates,
       "topofit: no node group known yet, no node affinity written for 8 GPUs, min-link NV"},
      {"no group gives the bandwidth",
       [](Json& r) { r["request"]["object"]["metadata"]["annotations"]["topofit.io/min-bandwidth"] = "100TB/s"; },
       Templates(), Outcome::kNoGroup, "no node group this pod may use gives 8 GPUs, min-link NV, min-bandwidth"},
      {"its node selector excludes the only group that gives it",
       [](Json& r) { r["request"]["object"]["spec"]["nodeSelector"] = {{"node.kubernetes.io/instance-type", "g5.48xlarge"}}; },
       Templates(), Outcome::kNoGroup, "no node group this pod may use gives 8 GPUs, min-link NV"},
      {"an annotation that does not parse",
       [](Json& r) { r["request"]["object"]["metadata"]["annotations"]["topofit.io/min-link"] = "FAST"; }, Templates(),
       Outcome::kUnreadable, "topofit.io/min-link"},
      {"a pod the decoder refuses",
       [](Json& r) { r["request"]["object"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "eight"; },
       Templates(), Outcome::kUnreadable, "pod not read"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      Json review = required;
      row.edit(review);
      const Reviewed reviewed = Review(review, row.templates);
      CHECK(reviewed.admission.outcome == row.outcome);
      CHECK_FALSE(reviewed.admission.response.patch.has_value());
      if (std::string(row.warning).empty()) {
        CHECK(reviewed.admission.response.warnings.empty());
      } else {
        REQUIRE(reviewed.admission.response.warnings.size() == 1);
        CHECK_THAT(reviewed.admission.response.warnings[0], Catch::Contains(row.warning));
      }
    }
  }
}

}  // namespace
}  // namespace topofit::webhook
