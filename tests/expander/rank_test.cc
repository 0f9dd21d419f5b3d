#include "expander/rank.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::expander {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

kube::Node Template(const std::string& group, const std::string& instance_type, int gpus) {
  return MakeNode().name("template-node-for-" + group).label("node.kubernetes.io/instance-type", instance_type).gpus(gpus);
}

kube::Pod NvPod(const std::string& name, int gpus, bool required) {
  kube::testing::PodBuilder pod = MakePod();
  pod.name(name).gpus(gpus).annotation("topofit.io/min-link", "NV");
  if (required) pod.annotation("topofit.io/topology-policy", "required");
  return pod;
}

RankInput Input(std::vector<GroupOption> options) {
  RankInput input;
  input.options = std::move(options);
  input.templates["p4d"] = Template("p4d", "p4d.24xlarge", 8);
  input.templates["p4de"] = Template("p4de", "p4de.24xlarge", 8);
  input.templates["g5"] = Template("g5", "g5.48xlarge", 8);
  input.templates["g4dn"] = Template("g4dn", "g4dn.12xlarge", 4);
  input.templates["cpu"] = MakeNode().name("template-node-for-cpu");
  return input;
}

const OptionVerdict& VerdictOf(const Ranking& r, const std::string& group) {
  for (const OptionVerdict& v : r.verdicts) {
    if (v.node_group_id == group) return v;
  }
  FAIL("no verdict for " << group);
  throw;
}

TEST_CASE("the PCIe group is never chosen for an NV-required multi-GPU pod", "[rank]") {
  for (int gpus : {2, 4, 8}) {
    const kube::Pod pod = NvPod("trainer", gpus, /*required=*/true);
    const Ranking r = RankOptions(Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "g5").strands);
    // PHB within a NUMA half for 2 and 4 GPUs, SYS for all 8
    CHECK_THAT(VerdictOf(r, "g5").reason, Catch::Contains(gpus == 8 ? "best reachable is SYS" : "best reachable is PHB"));
  }
}

TEST_CASE("preferences, quality, idle GPUs, then price decide", "[rank]") {
  SECTION("a preferred (not required) NV pod: both groups serve it, the NVLink one serves it well") {
    const kube::Pod pod = NvPod("p", 4, /*required=*/false);
    const Ranking r = RankOptions(Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "g5").quality_per_mille == 0);
    CHECK(VerdictOf(r, "p4d").quality_per_mille == 1000);
  }
  SECTION("fewest idle GPUs: a 4-GPU pod fills a g4dn.12xlarge, leaves 4 of a g5.48xlarge idle") {
    const kube::Pod pod = MakePod().name("p").gpus(4);
    const Ranking r = RankOptions(Input({{"g5", 1, {pod}}, {"g4dn", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"g4dn"});
    CHECK(VerdictOf(r, "g5").idle_gpus == 4);
    CHECK(VerdictOf(r, "g4dn").idle_gpus == 0);
  }
  SECTION("equal topology: the cheaper group wins; equal price too: both, for CA's next expander") {
    const kube::Pod pod = NvPod("p", 8, /*required=*/true);
    RankInput input = Input({{"p4d", 1, {pod}}, {"p4de", 1, {pod}}});
    CHECK(RankOptions(input).chosen == std::vector<std::string>{"p4d", "p4de"});
    input.price_per_node_hour = {{"p4d", 32.77}, {"p4de", 40.97}};
    CHECK(RankOptions(input).chosen == std::vector<std::string>{"p4d"});
    // the price may also come from the template annotation
    input.price_per_node_hour.clear();
    input.templates["p4de"].metadata.annotations[kPriceAnnotation] = "20.5";
    input.templates["p4d"].metadata.annotations[kPriceAnnotation] = "32.77";
    CHECK(RankOptions(input).chosen == std::vector<std::string>{"p4de"});
  }
  SECTION("a ledger preference satisfied outranks everything after it") {
    const kube::Pod waiting = MakePod().name("waiting").gpus(8);
    const kube::Pod other = MakePod().name("other").gpus(4);
    RankInput input = Input({{"g5", 1, {other}}, {"p4d", 1, {waiting}}});
    ledger::Preference preference;
    preference.pod_uid = "uid-waiting";
    preference.gpus = 8;
    input.preferences.push_back(preference);
    const Ranking r = RankOptions(input);
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "p4d").preferences_satisfied == 1);
  }
}

TEST_CASE("CPU-only options pass through; a stranding-only answer is a veto", "[rank]") {
  const kube::Pod cpu_pod = MakePod().name("web");
  const kube::Pod nv_pod = NvPod("trainer", 4, /*required=*/true);
  SECTION("pass through") {
    const Ranking r = RankOptions(Input({{"cpu", 2, {cpu_pod}}, {"p4d", 1, {nv_pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d", "cpu"});
    CHECK_FALSE(VerdictOf(r, "cpu").needs_gpus);
  }
  SECTION("every GPU option strands: veto") {
    const Ranking r = RankOptions(Input({{"g5", 1, {nv_pod}}, {"g4dn", 1, {nv_pod}}}));
    CHECK(r.chosen.empty());
    CHECK(r.veto);
  }
  SECTION("every GPU option strands, veto off: fail open") {
    const Ranking r = RankOptions(Input({{"g5", 1, {nv_pod}}, {"g4dn", 1, {nv_pod}}}), RankPolicy{false});
    CHECK(r.chosen == std::vector<std::string>{"g5", "g4dn"});
    CHECK_FALSE(r.veto);
  }
  SECTION("stranding GPU options are dropped, CPU-only ones kept") {
    const Ranking r = RankOptions(Input({{"g5", 1, {nv_pod}}, {"cpu", 1, {cpu_pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"cpu"});
    CHECK_FALSE(r.veto);
  }
  SECTION("an option without a template or with too few nodes strands") {
    const Ranking r = RankOptions(Input({{"unknown", 1, {nv_pod}}, {"p4d", 1, {nv_pod, nv_pod, nv_pod}}}));
    CHECK(VerdictOf(r, "unknown").strands);
    CHECK_THAT(VerdictOf(r, "p4d").reason, Catch::Contains("would not be placed"));
    CHECK(r.veto);
  }
}

TEST_CASE("pods are packed first-fit decreasing over the new nodes", "[rank]") {
  // 8 + 4 + 2 + 1 + 1 GPUs on two p4d nodes: 8 fills the first; 4, 2, 1, 1 share the second.
  const Ranking r = RankOptions(Input({{"p4d", 2, {MakePod().name("a").gpus(1), MakePod().name("b").gpus(4),
                                                   MakePod().name("c").gpus(8), MakePod().name("d").gpus(2),
                                                   MakePod().name("e").gpus(1)}}}));
  REQUIRE(r.chosen == std::vector<std::string>{"p4d"});
  CHECK(VerdictOf(r, "p4d").idle_gpus == 0);
}

}  // namespace
}  // namespace topofit::expander
