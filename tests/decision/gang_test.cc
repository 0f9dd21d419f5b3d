#include "decision/gang.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;
using kube::testing::PodBuilder;

// Keys written as users write them, not through topofit's constants, so a misspelt constant fails here.
TEST_CASE("GangOf reads each source's identity and count", "[gang]") {
  struct Row {
    const char* name;
    PodBuilder pod;
    GangSource source;
    const char* key;
    std::optional<int> min_count;
  };
  const Row rows[] = {
      {"1.36 schedulingGroup: the count lives in the PodGroup", MakePod().namespaceName("ml").schedulingGroup("train"),
       GangSource::kPodGroup, "ml/train", std::nullopt},
      {"1.36 schedulingGroup with topofit's size", MakePod().schedulingGroup("train").annotation("topofit.io/gang-size", "16"),
       GangSource::kPodGroup, "default/train", 16},
      {"1.35 workloadRef with a replica key", MakePod().namespaceName("ml").workloadRef("job", "workers", "r2"),
       GangSource::kWorkload, "ml/job/workers/r2", std::nullopt},
      {"1.35 workloadRef without a replica key", MakePod().workloadRef("job", "workers"), GangSource::kWorkload,
       "default/job/workers", std::nullopt},
      {"Kueue pod group",
       MakePod().label("kueue.x-k8s.io/pod-group-name", "g1").annotation("kueue.x-k8s.io/pod-group-total-count", "8"),
       GangSource::kKueuePodGroup, "default/g1", 8},
      {"Kueue pod group without its count falls back to topofit's size",
       MakePod().label("kueue.x-k8s.io/pod-group-name", "g1").annotation("topofit.io/gang-size", "4"),
       GangSource::kKueuePodGroup, "default/g1", 4},
      {"Kueue's own count wins over topofit's size",
       MakePod()
           .label("kueue.x-k8s.io/pod-group-name", "g1")
           .annotation("kueue.x-k8s.io/pod-group-total-count", "8")
           .annotation("topofit.io/gang-size", "4"),
       GangSource::kKueuePodGroup, "default/g1", 8},
      {"LeaderWorkerSet group: set name and group key",
       MakePod()
           .label("leaderworkerset.sigs.k8s.io/name", "vllm")
           .label("leaderworkerset.sigs.k8s.io/group-key", "0f3a9c")
           .annotation("leaderworkerset.sigs.k8s.io/size", "4"),
       GangSource::kLeaderWorkerSet, "default/vllm/0f3a9c", 4},
      {"LeaderWorkerSet group without the set's name",
       MakePod().label("leaderworkerset.sigs.k8s.io/group-key", "0f3a9c"), GangSource::kLeaderWorkerSet,
       "default/0f3a9c", std::nullopt},
      {"topofit's annotation",
       MakePod().namespaceName("ml").annotation("topofit.io/gang", "ep").annotation("topofit.io/gang-size", "32"),
       GangSource::kTopofit, "ml/ep", 32},
      {"JobSet opted in with a size",
       MakePod()
           .label("jobset.sigs.k8s.io/jobset-name", "pretrain")
           .label("jobset.sigs.k8s.io/replicatedjob-name", "workers")
           .label("batch.kubernetes.io/job-name", "pretrain-workers-0")
           .annotation("topofit.io/gang-size", "18"),
       GangSource::kJobSet, "default/pretrain", 18},
      {"JobSet after a restart is a gang of its own",
       MakePod()
           .label("jobset.sigs.k8s.io/jobset-name", "pretrain")
           .label("jobset.sigs.k8s.io/restart-attempt", "2")
           .annotation("topofit.io/gang-size", "18"),
       GangSource::kJobSet, "default/pretrain/2", 18},
      {"Job opted in with a size",
       MakePod().label("batch.kubernetes.io/job-name", "sweep").annotation("topofit.io/gang-size", "4"),
       GangSource::kJob, "default/sweep", 4},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<std::optional<Gang>> gang = GangOf(row.pod);
      REQUIRE_OK(gang);
      REQUIRE(gang->has_value());
      CHECK(GangSourceName((*gang)->source) == GangSourceName(row.source));
      CHECK((*gang)->key == row.key);
      CHECK((*gang)->min_count == row.min_count);
    }
  }
}

TEST_CASE("GangOf: pods of no gang, and JobSet and Job pods that do not opt in", "[gang]") {
  struct Row {
    const char* name;
    PodBuilder pod;
  };
  const Row rows[] = {
      {"a plain pod", MakePod().gpus(1)},
      {"a JobSet pod without a size", MakePod().label("jobset.sigs.k8s.io/jobset-name", "pretrain")},
      {"a Job pod without a size", MakePod().label("batch.kubernetes.io/job-name", "sweep")},
      {"empty labels name no gang", MakePod().label("kueue.x-k8s.io/pod-group-name", "")
                                        .label("leaderworkerset.sigs.k8s.io/group-key", "")},
      {"an empty schedulingGroup names no gang", MakePod().schedulingGroup("")},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<std::optional<Gang>> gang = GangOf(row.pod);
      REQUIRE_OK(gang);
      CHECK_FALSE(gang->has_value());
    }
  }
}

TEST_CASE("GangOf takes the first source in precedence order", "[gang]") {
  // Every source at once; removing the winner each time exposes the next.
  PodBuilder pod = MakePod()
                       .schedulingGroup("pg")
                       .workloadRef("wl", "workers")
                       .label("kueue.x-k8s.io/pod-group-name", "kq")
                       .label("leaderworkerset.sigs.k8s.io/group-key", "lws")
                       .annotation("topofit.io/gang", "tf")
                       .annotation("topofit.io/gang-size", "2")
                       .label("jobset.sigs.k8s.io/jobset-name", "js")
                       .label("batch.kubernetes.io/job-name", "job");
  auto key_of = [](const kube::Pod& p) {
    absl::StatusOr<std::optional<Gang>> gang = GangOf(p);
    REQUIRE_OK(gang);
    REQUIRE(gang->has_value());
    return (*gang)->key;
  };
  kube::Pod p = pod.build();
  CHECK(key_of(p) == "default/pg");
  p.spec.scheduling_group.reset();
  CHECK(key_of(p) == "default/wl/workers");
  p.spec.workload_ref.reset();
  CHECK(key_of(p) == "default/kq");
  p.metadata.labels.erase("kueue.x-k8s.io/pod-group-name");
  CHECK(key_of(p) == "default/lws");
  p.metadata.labels.erase("leaderworkerset.sigs.k8s.io/group-key");
  CHECK(key_of(p) == "default/tf");
  p.metadata.annotations.erase("topofit.io/gang");
  CHECK(key_of(p) == "default/js");
  p.metadata.labels.erase("jobset.sigs.k8s.io/jobset-name");
  CHECK(key_of(p) == "default/job");
}

TEST_CASE("GangOf keys are namespaced", "[gang]") {
  auto gang_in = [](const char* ns) {
    absl::StatusOr<std::optional<Gang>> gang =
        GangOf(MakePod().namespaceName(ns).label("kueue.x-k8s.io/pod-group-name", "g").build());
    REQUIRE_OK(gang);
    REQUIRE(gang->has_value());
    return **gang;
  };
  CHECK(gang_in("team-a").key == "team-a/g");
  CHECK_FALSE(gang_in("team-a") == gang_in("team-b"));
  CHECK(gang_in("team-a") == gang_in("team-a"));
}

TEST_CASE("GangOf rejects malformed counts, naming the annotation and value", "[gang]") {
  struct Row {
    const char* name;
    PodBuilder pod;
    const char* message;
  };
  auto kueue = [](const char* count) {
    return MakePod().label("kueue.x-k8s.io/pod-group-name", "g").annotation("kueue.x-k8s.io/pod-group-total-count",
                                                                            count);
  };
  auto sized = [](const char* size) {
    return MakePod().annotation("topofit.io/gang", "g").annotation("topofit.io/gang-size", size);
  };
  const Row rows[] = {
      {"not a number", kueue("eight"), "annotation kueue.x-k8s.io/pod-group-total-count=\"eight\": expected a whole"},
      {"zero", sized("0"), "annotation topofit.io/gang-size=\"0\": expected a whole number from 1 to 100000"},
      {"negative", sized("-4"), "topofit.io/gang-size=\"-4\""},
      {"a sign", sized("+4"), "topofit.io/gang-size=\"+4\""},
      {"spaces", sized(" 4"), "topofit.io/gang-size=\" 4\""},
      {"a fraction", sized("1.5"), "topofit.io/gang-size=\"1.5\""},
      {"absurd", sized("100001"), "topofit.io/gang-size=\"100001\""},
      {"beyond int", sized("99999999999"), "topofit.io/gang-size=\"99999999999\""},
      {"LWS size", MakePod().label("leaderworkerset.sigs.k8s.io/group-key", "k").annotation(
                       "leaderworkerset.sigs.k8s.io/size", "x"),
       "leaderworkerset.sigs.k8s.io/size=\"x\""},
      {"a malformed size even where the source has its own count",
       kueue("8").annotation("topofit.io/gang-size", "lots"), "topofit.io/gang-size=\"lots\""},
      {"topofit's gang without a size", MakePod().annotation("topofit.io/gang", "g"),
       "annotation topofit.io/gang=\"g\": needs topofit.io/gang-size"},
      {"topofit's gang with an empty name", MakePod().annotation("topofit.io/gang", "").annotation("topofit.io/gang-size", "2"),
       "topofit.io/gang=\"\": expected the gang's name"},
      {"a size that names no gang", MakePod().annotation("topofit.io/gang-size", "4"),
       "topofit.io/gang-size=\"4\": names no gang"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK_STATUS(GangOf(row.pod), absl::StatusCode::kInvalidArgument, row.message); }
  }
  SECTION("the largest count is accepted") {
    absl::StatusOr<std::optional<Gang>> gang = GangOf(sized("100000"));
    REQUIRE_OK(gang);
    CHECK((*gang)->min_count == 100000);
  }
}

TEST_CASE("GangTopologyOf maps each source's label key to a level", "[gang]") {
  const NvlinkDomainLabels domains = NvlinkDomainLabels::Default();
  struct Row {
    const char* name;
    const char* annotation;
    const char* value;
    bool required;
    std::optional<GangLevel> level;
  };
  const Row rows[] = {
      {"KAI required clique", "kai.scheduler/topology-required-placement", "nvidia.com/gpu.clique", true,
       GangLevel::kDomain},
      {"KAI preferred hostname", "kai.scheduler/topology-preferred-placement", "kubernetes.io/hostname", false,
       GangLevel::kNode},
      {"Kueue required UltraServer", "kueue.x-k8s.io/podset-required-topology", "topology.k8s.aws/ultraserver-id",
       true, GangLevel::kDomain},
      {"Kueue preferred clique", "kueue.x-k8s.io/podset-preferred-topology", "nvidia.com/gpu.clique", false,
       GangLevel::kDomain},
      {"topofit required domain", "topofit.io/gang-required-topology", "domain", true, GangLevel::kDomain},
      {"topofit preferred node", "topofit.io/gang-preferred-topology", "node", false, GangLevel::kNode},
      {"topofit takes label keys too", "topofit.io/gang-required-topology", "nvidia.com/gpu.clique", true,
       GangLevel::kDomain},
      {"a rack label is not understood", "kai.scheduler/topology-required-placement", "topology.kubernetes.io/rack",
       true, std::nullopt},
      {"KAI does not take topofit's words", "kai.scheduler/topology-required-placement", "domain", true, std::nullopt},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<std::optional<GangTopology>> topology =
          GangTopologyOf(MakePod().annotation(row.annotation, row.value), domains);
      REQUIRE_OK(topology);
      REQUIRE(topology->has_value());
      const std::optional<GangTopologyConstraint>& constraint =
          row.required ? (*topology)->required : (*topology)->preferred;
      CHECK_FALSE((row.required ? (*topology)->preferred : (*topology)->required).has_value());
      REQUIRE(constraint.has_value());
      CHECK(constraint->annotation == row.annotation);
      CHECK(constraint->value == row.value);
      CHECK(constraint->level == row.level);
      if (row.level) {
        CHECK(constraint->not_understood.empty());
      } else {
        CHECK_THAT(constraint->not_understood, Catch::Contains(std::string(row.value) + " is neither") &&
                                                   Catch::Contains("kubernetes.io/hostname") &&
                                                   Catch::Contains("nvidia.com/gpu.clique"));
      }
    }
  }
}

TEST_CASE("GangTopologyOf: the configured domain labels decide what a domain is", "[gang]") {
  absl::StatusOr<NvlinkDomainLabels> racks = NvlinkDomainLabels::Create({"example.com/nvl-rack"});
  REQUIRE_OK(racks);
  const kube::Pod pod = MakePod().annotation("kueue.x-k8s.io/podset-required-topology", "example.com/nvl-rack");
  absl::StatusOr<std::optional<GangTopology>> configured = GangTopologyOf(pod, *racks);
  REQUIRE_OK(configured);
  CHECK((*configured)->required->level == GangLevel::kDomain);
  absl::StatusOr<std::optional<GangTopology>> by_default = GangTopologyOf(pod, NvlinkDomainLabels::Default());
  REQUIRE_OK(by_default);
  CHECK_FALSE((*by_default)->required->level.has_value());
}

TEST_CASE("GangTopologyOf takes the first source that says anything, with both of its constraints", "[gang]") {
  const NvlinkDomainLabels domains = NvlinkDomainLabels::Default();
  PodBuilder pod = MakePod()
                       .annotation("topofit.io/gang-preferred-topology", "node")
                       .annotation("kueue.x-k8s.io/podset-required-topology", "nvidia.com/gpu.clique")
                       .annotation("kai.scheduler/topology-required-placement", "nvidia.com/gpu.clique")
                       .annotation("kai.scheduler/topology-preferred-placement", "kubernetes.io/hostname");
  kube::Pod p = pod.build();
  auto topology_of = [&](const kube::Pod& q) {
    absl::StatusOr<std::optional<GangTopology>> t = GangTopologyOf(q, domains);
    REQUIRE_OK(t);
    REQUIRE(t->has_value());
    return **t;
  };
  // topofit's own wins, and Kueue's required is not merged into it.
  GangTopology t = topology_of(p);
  CHECK_FALSE(t.required.has_value());
  CHECK(t.preferred->annotation == "topofit.io/gang-preferred-topology");
  p.metadata.annotations.erase("topofit.io/gang-preferred-topology");
  t = topology_of(p);
  CHECK(t.required->annotation == "kueue.x-k8s.io/podset-required-topology");
  CHECK_FALSE(t.preferred.has_value());
  p.metadata.annotations.erase("kueue.x-k8s.io/podset-required-topology");
  // KAI: a required domain and a tighter preferred node, both kept.
  t = topology_of(p);
  CHECK(t.required->level == GangLevel::kDomain);
  CHECK(t.preferred->level == GangLevel::kNode);
}

TEST_CASE("GangTopologyOf: none said, and empty values", "[gang]") {
  const NvlinkDomainLabels domains = NvlinkDomainLabels::Default();
  absl::StatusOr<std::optional<GangTopology>> none = GangTopologyOf(MakePod(), domains);
  REQUIRE_OK(none);
  CHECK_FALSE(none->has_value());
  CHECK_STATUS(GangTopologyOf(MakePod().annotation("kueue.x-k8s.io/podset-required-topology", ""), domains),
               absl::StatusCode::kInvalidArgument,
               "annotation kueue.x-k8s.io/podset-required-topology=\"\": expected a node label key");
  CHECK_STATUS(GangTopologyOf(MakePod().annotation("topofit.io/gang-preferred-topology", ""), domains),
               absl::StatusCode::kInvalidArgument, "expected domain, node or a node label key");
}

TEST_CASE("GangIdOf names the source and the key", "[gang]") {
  CHECK(GangIdOf(Gang{.source = GangSource::kKueuePodGroup, .key = "ml/train", .min_count = 16}) == "kueue:ml/train");
}

}  // namespace
}  // namespace topofit::decision
