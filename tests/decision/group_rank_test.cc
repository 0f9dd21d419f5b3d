#include "decision/group_rank.h"

#include <algorithm>
#include <array>
#include <random>

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "kube/topofit_annotations.h"
#include "tests/decision/claim_builders.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

// RankOptions with templates resolved as the expander resolves them (annotation, else catalog).
Ranking Rank(const RankInput& input, const RankPolicy& policy = {}) {
  codec::TopologyResolver topologies;
  return RankOptions(input, topologies, policy);
}

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
  input.templates["p4d"] = kube::SharedTemplate(Template("p4d", "p4d.24xlarge", 8));
  input.templates["p4de"] = kube::SharedTemplate(Template("p4de", "p4de.24xlarge", 8));
  input.templates["g5"] = kube::SharedTemplate(Template("g5", "g5.48xlarge", 8));
  input.templates["g4dn"] = kube::SharedTemplate(Template("g4dn", "g4dn.12xlarge", 4));
  input.templates["cpu"] = kube::SharedTemplate(MakeNode().name("template-node-for-cpu"));
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
    const Ranking r = Rank(Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "g5").strands);
    // PHB within a NUMA half for 2 and 4 GPUs, SYS for all 8
    CHECK_THAT(VerdictOf(r, "g5").reason, Catch::Contains(gpus == 8 ? "best reachable is SYS" : "best reachable is PHB"));
  }
}

// Under DRA the pod requests no nvidia.com/gpu: CA's request says nothing of its GPUs but its claim does.
TEST_CASE("a claim pod is ranked by its claim's GPUs when the claims are read, as a CPU pod when not",
          "[rank][dra]") {
  const testing::Claims claims =
      testing::Claims().Add(testing::Claim("trainer-0-gpus", {testing::Gpus("gpus", 4)}));
  kube::Pod pod = testing::PodNaming({testing::Named("gpus", "trainer-0-gpus")});
  pod.metadata.annotations["topofit.io/min-link"] = "NV";
  pod.metadata.annotations["topofit.io/topology-policy"] = "required";
  RankInput input = Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}});

  const Ranking blind = Rank(input);
  CHECK_FALSE(VerdictOf(blind, "g5").needs_gpus);
  CHECK_FALSE(VerdictOf(blind, "g5").strands);

  const ClaimSource source = claims.Source();
  input.claims = &source;
  const Ranking r = Rank(input);
  CHECK(r.chosen == std::vector<std::string>{"p4d"});
  CHECK(VerdictOf(r, "g5").strands);
  CHECK(VerdictOf(r, "p4d").placed_pods == 1);
  CHECK(VerdictOf(r, "p4d").idle_gpus == 4);
}

TEST_CASE("ledger preferences first, then cost per useful GPU: topology, idle GPUs and price in one figure", "[rank]") {
  SECTION("a preferred (not required) NV pod: both groups serve it, the NVLink one serves it well") {
    const kube::Pod pod = NvPod("p", 4, /*required=*/false);
    const Ranking r = Rank(Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "g5").quality_per_mille == 0);
    CHECK(VerdictOf(r, "p4d").quality_per_mille == 1000);
  }
  SECTION("fewest idle GPUs: a 4-GPU pod fills a g4dn.12xlarge, leaves 4 of a g5.48xlarge idle") {
    const kube::Pod pod = MakePod().name("p").gpus(4);
    const Ranking r = Rank(Input({{"g5", 1, {pod}}, {"g4dn", 1, {pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"g4dn"});
    CHECK(VerdictOf(r, "g5").idle_gpus == 4);
    CHECK(VerdictOf(r, "g4dn").idle_gpus == 0);
  }
  SECTION("equal topology: the cheaper group wins; equal price too: both, for CA's next expander") {
    const kube::Pod pod = NvPod("p", 8, /*required=*/true);
    RankInput input = Input({{"p4d", 1, {pod}}, {"p4de", 1, {pod}}});
    CHECK(Rank(input).chosen == std::vector<std::string>{"p4d", "p4de"});
    input.price_per_node_hour = {{"p4d", 32.77}, {"p4de", 40.97}};
    CHECK(Rank(input).chosen == std::vector<std::string>{"p4d"});
    // the price may also come from the template annotation
    input.price_per_node_hour.clear();
    for (const auto& [group, price] : {std::pair{"p4de", "20.5"}, std::pair{"p4d", "32.77"}}) {
      kube::Node priced = *input.templates.at(group);
      priced.metadata.annotations[kPriceAnnotation] = price;
      input.templates[group] = kube::SharedTemplate(std::move(priced));
    }
    CHECK(Rank(input).chosen == std::vector<std::string>{"p4de"});
  }
  SECTION("a ledger preference satisfied outranks everything after it") {
    const kube::Pod waiting = MakePod().name("waiting").gpus(8);
    const kube::Pod other = MakePod().name("other").gpus(4);
    RankInput input = Input({{"g5", 1, {other}}, {"p4d", 1, {waiting}}});
    Preference preference;
    preference.pod_uid = "uid-waiting";
    preference.gpus = 8;
    input.preferences.push_back(preference);
    const Ranking r = Rank(input);
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK(VerdictOf(r, "p4d").preferences_satisfied == 1);

    // CA's pod for topofit's ProvisioningRequest stands for the waiting pod: the same preference.
    const kube::Pod from_request = MakePod().name("topofit-waiting-0-0").uid("ml/topofit-waiting-0-0").gpus(8)
                                       .annotation(std::string(kube::kStandsForPodUidAnnotation), "uid-waiting");
    input.options[1].pods = {from_request};
    CHECK(VerdictOf(Rank(input), "p4d").preferences_satisfied == 1);
  }
}

TEST_CASE("CPU-only options pass through, a stranding-only answer is a veto", "[rank]") {
  const kube::Pod cpu_pod = MakePod().name("web");
  const kube::Pod nv_pod = NvPod("trainer", 4, /*required=*/true);
  SECTION("pass through") {
    const Ranking r = Rank(Input({{"cpu", 2, {cpu_pod}}, {"p4d", 1, {nv_pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d", "cpu"});
    CHECK_FALSE(VerdictOf(r, "cpu").needs_gpus);
  }
  SECTION("GPUs bought for CPU-only pods idle: a group without GPUs is all that goes on when there is one") {
    RankInput input = Input({{"cpu", 2, {cpu_pod}}, {"g4dn", 1, {cpu_pod}}, {"cpu2", 3, {cpu_pod}}});
    input.templates["cpu2"] = kube::SharedTemplate(MakeNode().name("template-node-for-cpu2"));
    const Ranking r = Rank(input);
    CHECK(r.chosen == std::vector<std::string>{"cpu", "cpu2"});  // CA's chain picks among them
    CHECK(VerdictOf(r, "g4dn").provisioned_gpus == 4);
    CHECK_THAT(VerdictOf(r, "g4dn").reason, Catch::Contains("an option buying none exists"));
  }
  SECTION("GPU groups only: the CPU-only pods go to the cheapest, by price, else by GPUs bought") {
    RankInput input = Input({{"g5", 1, {cpu_pod}}, {"g4dn", 2, {cpu_pod}}});
    input.price_per_node_hour = {{"g5", 16.29}, {"g4dn", 3.91}};
    CHECK(Rank(input).chosen == std::vector<std::string>{"g4dn"});  // $7.82 (8 GPUs) against $16.29 (8)
    input.price_per_node_hour["g4dn"] = 9.0;
    CHECK(Rank(input).chosen == std::vector<std::string>{"g5"});  // $16.29 against $18.00
    input.price_per_node_hour.erase("g5");  // a price unknown: GPUs bought, 8 and 8, tie for CA's chain
    CHECK(Rank(input).chosen == std::vector<std::string>{"g5", "g4dn"});
    input.options[1].node_count = 1;
    CHECK(Rank(input).chosen == std::vector<std::string>{"g4dn"});  // 4 GPUs against 8
    // With GPU options in the call, the best of them still comes first.
    input.options.push_back({"p4d", 1, {nv_pod}});
    CHECK(Rank(input).chosen == std::vector<std::string>{"p4d", "g4dn"});
  }
  // CA's price expander's ratio (price_ratio.h), not the total price: a g5 at $16.29 serving twelve 8-core,
  // 32 GiB pods (worth 12 x (8 x 0.033174 + 32 x 0.004446) = $4.89/h: ratio (16.29 + s) / (4.89 + s) = 3.2,
  // s = $0.019) beats a g4dn at $3.91 serving one (worth $0.41: ratio 9.1). By total price the g4dn won,
  // and the twelve pods' next scale-ups bought more small GPU nodes.
  SECTION("GPU groups only: what the option's pods are worth counts, as in CA's price expander") {
    const kube::Pod big = MakePod().name("batch").podRequest("cpu", "8").podRequest("memory", "32Gi");
    RankInput input = Input({{"g5", 1, {}}, {"g4dn", 1, {big}}});
    for (int i = 0; i < 12; ++i) input.options[0].pods.push_back(std::make_shared<const kube::Pod>(big));
    input.price_per_node_hour = {{"g5", 16.29}, {"g4dn", 3.91}};
    const Ranking r = Rank(input);
    CHECK(r.chosen == std::vector<std::string>{"g5"});
    CHECK(VerdictOf(r, "g5").pods_worth == Approx(12 * (8 * 0.033174 + 32 * 0.004446)));
    CHECK_THAT(VerdictOf(r, "g4dn").reason, Catch::Contains("another option costs less for what it serves"));
    input.options[0].pods = {big, big};  // two pods: $0.81 against the g4dn's $0.41 for 4x the price
    CHECK(Rank(input).chosen == std::vector<std::string>{"g4dn"});
  }
  SECTION("every GPU option strands: veto") {
    const Ranking r = Rank(Input({{"g5", 1, {nv_pod}}, {"g4dn", 1, {nv_pod}}}));
    CHECK(r.chosen.empty());
    CHECK(r.veto);
  }
  SECTION("every GPU option strands, veto off: fail open") {
    const Ranking r = Rank(Input({{"g5", 1, {nv_pod}}, {"g4dn", 1, {nv_pod}}}), RankPolicy{.veto_when_all_strand = false, .capacity_wait = {}});
    CHECK(r.chosen == std::vector<std::string>{"g5", "g4dn"});
    CHECK_FALSE(r.veto);
  }
  SECTION("stranding GPU options are dropped, CPU-only ones kept") {
    const Ranking r = Rank(Input({{"g5", 1, {nv_pod}}, {"cpu", 1, {cpu_pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"cpu"});
    CHECK_FALSE(r.veto);
  }
  SECTION("a pod no option can serve does not veto the options that serve the rest") {
    const kube::Pod impossible = MakePod()
                                     .name("impossible")
                                     .gpus(4)
                                     .annotation("topofit.io/min-bandwidth", "100000GB/s")
                                     .annotation("topofit.io/topology-policy", "required");
    const Ranking r =
        Rank(Input({{"g5", 2, {impossible, nv_pod}}, {"p4d", 2, {impossible, nv_pod}}}));
    CHECK(r.chosen == std::vector<std::string>{"p4d"});
    CHECK_FALSE(r.veto);
    CHECK(VerdictOf(r, "p4d").strands);  // still reported: the new nodes will not take it
    CHECK(VerdictOf(r, "p4d").unplaced_pods == std::vector<std::string>{"default/impossible"});
    CHECK(VerdictOf(r, "p4d").placed_pods == 1);
    CHECK(VerdictOf(r, "g5").placed_pods == 0);  // takes no pod at all: never chosen
  }
  SECTION("an option without a template or with too few nodes strands") {
    const Ranking r = Rank(Input({{"unknown", 1, {nv_pod}}, {"p4d", 1, {nv_pod, nv_pod, nv_pod}}}));
    CHECK(VerdictOf(r, "unknown").strands);
    CHECK_THAT(VerdictOf(r, "p4d").reason, Catch::Contains("would not be placed"));
    CHECK(r.veto);
  }
}

// The four realistic templates side by side, each option carrying the same one pod, at AWS on-demand
// prices (USD per node-hour): p4d.24xlarge 32.77 and p5.48xlarge 98.32 (NVSwitch, 8 GPUs),
// g5.48xlarge 16.29 (8 A10G, PCIe: PHB within a NUMA half, SYS across), g4dn.12xlarge 3.91 (4 T4, PCIe,
// all pairs PHB); plus a CPU-only option. Rank key, in order: preferences (none here), then the price over
// the useful GPUs: the pod's GPUs, divided by its set's expected stretch when it asks for a topology
// (comm_fraction 0.2 against the best set of its size among the options, p5's).
TEST_CASE("realistic templates and pods of 1 to 8 GPUs with and without min-link NV", "[rank]") {
  enum class Nv { kNone, kPreferred, kRequired };
  struct Row {
    const char* name;
    int gpus;
    Nv nv;
    std::vector<std::string> stranding;  // GPU options dropped
    const char* chosen;                  // the one GPU group returned (then "cpu", passed through)
  };
  const Row rows[] = {
      // 1 GPU asks no topology (no pair of GPUs to link): price per GPU used, g4dn's 3.91 the lowest.
      {"1 GPU", 1, Nv::kNone, {}, "g4dn"},
      {"1 GPU, NV preferred", 1, Nv::kPreferred, {}, "g4dn"},
      {"1 GPU, NV required", 1, Nv::kRequired, {}, "g4dn"},
      // No topology asked: g4dn 3.91 / 2 against p4d's 32.77 / 2 and g5's 16.29 / 2.
      {"2 GPUs", 2, Nv::kNone, {}, "g4dn"},
      // NV asked: g5's and g4dn's PHB pairs run collectives far slower than p5's NV18 pair, stretching the
      // pod so much that even g4dn's 3.91 buys less useful work than p4d's 32.77 (its NV12 pair barely
      // slower than p5's); p5's 98.32 is three times p4d's for a pair barely faster.
      {"2 GPUs, NV preferred", 2, Nv::kPreferred, {}, "p4d"},
      {"2 GPUs, NV required", 2, Nv::kRequired, {"g5", "g4dn"}, "p4d"},
      // No topology asked: g4dn's 3.91 for 4 GPUs.
      {"4 GPUs", 4, Nv::kNone, {}, "g4dn"},
      {"4 GPUs, NV preferred", 4, Nv::kPreferred, {}, "p4d"},
      // The PCIe groups strand: g5's best 4 are PHB, g4dn's 4 are PHB.
      {"4 GPUs, NV required", 4, Nv::kRequired, {"g5", "g4dn"}, "p4d"},
      // g4dn has only 4 GPUs. No topology asked: price, g5 16.29 the lowest.
      {"8 GPUs", 8, Nv::kNone, {"g4dn"}, "g5"},
      // g5's 8 reach only SYS: its collectives stretch the pod past what its lower price saves; p4d.
      {"8 GPUs, NV preferred", 8, Nv::kPreferred, {"g4dn"}, "p4d"},
      {"8 GPUs, NV required", 8, Nv::kRequired, {"g5", "g4dn"}, "p4d"},
  };
  const std::vector<std::string> gpu_groups = {"p4d", "p5", "g5", "g4dn"};
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      kube::testing::PodBuilder builder = MakePod();
      builder.name("trainer").gpus(row.gpus);
      if (row.nv != Nv::kNone) builder.annotation("topofit.io/min-link", "NV");
      if (row.nv == Nv::kRequired) builder.annotation("topofit.io/topology-policy", "required");
      const kube::Pod pod = builder;
      RankInput input;
      for (const std::string& group : gpu_groups) input.options.push_back({group, 1, {pod}});
      input.options.push_back({"cpu", 1, {MakePod().name("web")}});
      input.templates["p4d"] = kube::SharedTemplate(Template("p4d", "p4d.24xlarge", 8));
      input.templates["p5"] = kube::SharedTemplate(Template("p5", "p5.48xlarge", 8));
      input.templates["g5"] = kube::SharedTemplate(Template("g5", "g5.48xlarge", 8));
      input.templates["g4dn"] = kube::SharedTemplate(Template("g4dn", "g4dn.12xlarge", 4));
      input.templates["cpu"] = kube::SharedTemplate(MakeNode().name("template-node-for-cpu"));
      input.price_per_node_hour = {{"p4d", 32.77}, {"p5", 98.32}, {"g5", 16.29}, {"g4dn", 3.91}, {"cpu", 4.61}};

      const Ranking r = Rank(input);
      CHECK(r.chosen == std::vector<std::string>{row.chosen, "cpu"});
      CHECK_FALSE(VerdictOf(r, "cpu").needs_gpus);
      for (const std::string& group : gpu_groups) {
        INFO(group << ": " << VerdictOf(r, group).reason);
        CHECK(VerdictOf(r, group).needs_gpus);
        const bool strands =
            std::find(row.stranding.begin(), row.stranding.end(), group) != row.stranding.end();
        CHECK(VerdictOf(r, group).strands == strands);
      }
      if (row.nv == Nv::kRequired && row.gpus >= 2) {
        CHECK_THAT(VerdictOf(r, "g5").reason, Catch::Contains("needs links of NV or better"));
      }

      // Price weighs against the topology: make p5 the cheaper and it is chosen.
      if (std::string(row.chosen) == "p4d") {
        input.price_per_node_hour["p5"] = 30.0;
        CHECK(Rank(input).chosen == std::vector<std::string>{"p5", "cpu"});
      }
    }
  }
}

// Issue 13: a pod that only prefers NVLink goes where its useful GPU-hour is cheapest — NVLink while it
// is worth its price, PCIe once NVLink costs more than the slowdown it saves, in the bill and in the wait
// for the result (slowdown.h: UsefulShare) — while one that requires NVLink never leaves it, whatever the
// price.
TEST_CASE("a preferred topology is weighed against price, a required one is not", "[rank]") {
  for (const bool required : {false, true}) {
    DYNAMIC_SECTION((required ? "required" : "preferred")) {
      kube::testing::PodBuilder builder = MakePod();
      builder.name("trainer").gpus(8).annotation("topofit.io/min-link", "NV");
      if (required) builder.annotation("topofit.io/topology-policy", "required");
      const kube::Pod pod = builder;
      RankInput input;
      input.options = {{"p4d", 1, {pod}}, {"g5", 1, {pod}}};
      input.templates["p4d"] = kube::SharedTemplate(Template("p4d", "p4d.24xlarge", 8));
      input.templates["g5"] = kube::SharedTemplate(Template("g5", "g5.48xlarge", 8));
      // At list prices NVLink is worth it, and at ten times its price still: g5's set across the sockets
      // stretches the job almost seven times, so the p4d finishes it that much sooner for a bill three
      // times g5's.
      input.price_per_node_hour = {{"p4d", 32.77}, {"g5", 16.29}};
      CHECK(Rank(input).chosen == std::vector<std::string>{"p4d"});
      input.price_per_node_hour["p4d"] = 327.7;
      CHECK(Rank(input).chosen == std::vector<std::string>{"p4d"});
      // At a hundred times its price it is not, for a pod that merely prefers it.
      input.price_per_node_hour["p4d"] = 3277;
      const Ranking r = Rank(input);
      CHECK(r.chosen == std::vector<std::string>{required ? "p4d" : "g5"});
      // The figures behind it: the same 8 GPUs, g5's discounted by the square of its SYS set's stretch.
      CHECK(VerdictOf(r, "p4d").useful_gpus == Approx(8));
      if (!required) CHECK(VerdictOf(r, "g5").useful_gpus < 8.0 / (6 * 6));
    }
  }
}

// A pod that asks for capacity giving its preferred set (capacity_ask.h) records that set in its
// preference: a group that takes the pod only on a poorer set does not satisfy it, however cheap.
TEST_CASE("a preference for a preferred set is satisfied only by a group whose new nodes give it", "[rank]") {
  const kube::Pod trainer = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/expected-runtime", "10h");
  RankInput input = Input({{"g5", 1, {trainer}}, {"p4d", 1, {trainer}}});
  input.price_per_node_hour = {{"p4d", 327.7}, {"g5", 16.29}};  // NVLink at ten times its price
  const Preference asked = PreferenceFor(trainer, *DemandOf(trainer), {"g5-old"}, PreferredSet::kAsked);
  REQUIRE(asked.min_link == topology::LinkClass::kNvLink);
  input.preferences = {asked};
  Ranking r = Rank(input);
  CHECK(r.chosen == std::vector<std::string>{"p4d"});
  CHECK(VerdictOf(r, "p4d").preferences_satisfied == 1);
  CHECK(VerdictOf(r, "g5").preferences_satisfied == 0);
  // A pod that says nothing of its run time, refused for lack of GPUs, only records its enforced request:
  // any group satisfies it, and price weighs against the slowdown as for any pod that prefers NVLink.
  const kube::Pod silent = MakePod().name("silent").gpus(4).annotation("topofit.io/min-link", "NV");
  input = Input({{"g5", 1, {silent}}, {"p4d", 1, {silent}}});
  input.price_per_node_hour = {{"p4d", 327.7}, {"g5", 16.29}};
  input.preferences = {PreferenceFor(silent, *DemandOf(silent), {"g5-old"})};
  r = Rank(input);
  CHECK(VerdictOf(r, "g5").preferences_satisfied == 1);
  CHECK(r.chosen == std::vector<std::string>{"g5"});
}

// The extender's asking rule, applied to the new nodes: a pod that says its run time refuses a poorer set
// while the capacity giving its ask is worth a boot, so growing the cheap group for it would strand it.
TEST_CASE("a pod that says its run time is ranked by the extender's asking rule", "[rank][capacity_ask]") {
  const auto trainer = [](const char* runtime) -> kube::Pod {
    return MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV")
        .annotation("topofit.io/expected-runtime", runtime);
  };
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  const auto rank = [&](const kube::Pod& pod, std::vector<Preference> preferences = {}) {
    RankInput input = Input({{"g5", 1, {pod}}, {"p4d", 1, {pod}}});
    input.price_per_node_hour = {{"p4d", 327.7}, {"g5", 16.29}};  // NVLink at ten times its price
    input.preferences = std::move(preferences);
    input.now = now;
    return Rank(input);
  };
  // Ten hours at 1.5x and more outweigh a 5-minute boot: the g5's new node would be refused.
  Ranking r = rank(trainer("10h"));
  CHECK(r.chosen == std::vector<std::string>{"p4d"});
  CHECK(VerdictOf(r, "g5").strands);
  CHECK_THAT(VerdictOf(r, "g5").reason,
             Catch::Contains("the node gives a poorer set than capacity the pod asked for") &&
                 Catch::Contains("as node group p4d gives"));
  // A minute of work is not worth the boot: price against slowdown, as for any pod that prefers NVLink.
  CHECK(rank(trainer("1m")).chosen == std::vector<std::string>{"g5"});
  // Refused 11 minutes ago, past --max-topology-wait: the extender takes the g5 now, so may the expander.
  Preference refused = PreferenceFor(trainer("10h"), *DemandOf(trainer("10h")), {"g5-old"});
  refused.first_seen = now - absl::Minutes(11);
  CHECK(rank(trainer("10h"), {refused}).chosen == std::vector<std::string>{"g5"});
  // p4d not offered (at its maximum size, say), but CA sent its template as it sends every group's: the
  // extender knows the group and would refuse the g5's node all the same, so growing it would strand it.
  RankInput p4d_not_offered = Input({{"g5", 1, {trainer("10h")}}});
  p4d_not_offered.now = now;
  Ranking not_offered = Rank(p4d_not_offered);
  CHECK(not_offered.chosen.empty());
  CHECK(not_offered.veto);
  CHECK(VerdictOf(not_offered, "g5").strands);
  // No group of the cluster gives NVLink: nothing to ask for, the g5 takes it.
  RankInput pcie_only = p4d_not_offered;
  pcie_only.templates.erase("p4d");
  pcie_only.templates.erase("p4de");
  CHECK(Rank(pcie_only).chosen == std::vector<std::string>{"g5"});
}

TEST_CASE("pods are packed first-fit decreasing over the new nodes", "[rank]") {
  // 8 + 4 + 2 + 1 + 1 GPUs on two p4d nodes: 8 fills the first; 4, 2, 1, 1 share the second.
  const Ranking r = Rank(Input({{"p4d", 2, {MakePod().name("a").gpus(1), MakePod().name("b").gpus(4),
                                                   MakePod().name("c").gpus(8), MakePod().name("d").gpus(2),
                                                   MakePod().name("e").gpus(1)}}}));
  REQUIRE(r.chosen == std::vector<std::string>{"p4d"});
  CHECK(VerdictOf(r, "p4d").idle_gpus == 0);
}

// The placement RankOptions simulates, judged the slow way: first-fit decreasing, each pod judged by
// FilterNode on every node in order until one fits.
struct Placement {
  int placed = 0;
  std::vector<std::string> unplaced;
  int64_t placed_gpus = 0;
};
Placement JudgedOnEveryNode(std::vector<kube::Pod> pods, const std::shared_ptr<const topology::Topology>& topology,
                            int node_count) {
  const auto gpus = [](const kube::Pod& pod) { return DemandOf(pod)->request.gpus; };
  std::stable_sort(pods.begin(), pods.end(), [&](const kube::Pod& a, const kube::Pod& b) { return gpus(a) > gpus(b); });
  std::vector<NodeGpuSnapshot> nodes(static_cast<size_t>(node_count));
  for (NodeGpuSnapshot& node : nodes) node.topology = topology;
  Placement placement;
  for (const kube::Pod& pod : pods) {
    const GpuDemand demand = *DemandOf(pod);
    bool placed = false;
    for (NodeGpuSnapshot& node : nodes) {
      const NodeVerdict v = FilterNode(demand, node);
      if (!v.fits) continue;
      node.ours = node.ours | v.chosen->gpus;
      placed = true;
      break;
    }
    if (placed) {
      ++placement.placed;
      placement.placed_gpus += demand.request.gpus;
    } else {
      placement.unplaced.push_back(absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name));
    }
  }
  return placement;
}

TEST_CASE("the simulated placement is first-fit decreasing judged on every node, for random options", "[rank]") {
  // Simulate judges a pod once per distinct free set of the nodes and once for all the fresh ones; on a
  // cube-mesh (DGX-1) node whether a set fits an NV requirement depends on which GPUs are free, so pods
  // refused on one partly filled node and taken by another, and pods no node takes, both occur.
  std::mt19937 random(11);
  const kube::Node template_node = Template("p3", "p3.16xlarge", 8);
  codec::TopologyResolver topologies;
  const absl::StatusOr<NodeTopology> topology = topologies.Resolve(template_node);
  REQUIRE(topology.ok());
  int refused_somewhere = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<kube::Pod> pods;
    const int count = 1 + static_cast<int>(random() % 24);
    for (int i = 0; i < count; ++i) {
      const int gpus = std::array{1, 2, 2, 3, 4, 4, 5, 8}[random() % 8];
      const std::string name = absl::StrCat("pod-", trial, "-", i);
      switch (random() % 3) {
        case 0: pods.push_back(MakePod().name(name).gpus(gpus)); break;
        case 1: pods.push_back(NvPod(name, gpus, /*required=*/true)); break;
        default: pods.push_back(NvPod(name, gpus, /*required=*/false)); break;
      }
    }
    const int node_count = 1 + static_cast<int>(random() % 6);
    RankInput input;
    input.templates["p3"] = kube::SharedTemplate(template_node);
    kube::SharedPods shared;
    for (const kube::Pod& pod : pods) shared.push_back(std::make_shared<const kube::Pod>(pod));
    input.options.push_back({"p3", node_count, shared});
    RankPolicy fail_open;
    fail_open.veto_when_all_strand = false;
    const Ranking ranking = Rank(input, fail_open);
    const OptionVerdict& verdict = VerdictOf(ranking, "p3");
    const Placement expected = JudgedOnEveryNode(pods, topology->topology, node_count);
    INFO("trial " << trial);
    CHECK(verdict.placed_pods == expected.placed);
    CHECK(verdict.unplaced_pods == expected.unplaced);
    if (!verdict.strands) CHECK(verdict.provisioned_gpus - verdict.idle_gpus == expected.placed_gpus);
    if (!expected.unplaced.empty()) ++refused_somewhere;
  }
  CHECK(refused_somewhere > 20);  // the cases the shortcut is for did occur
}

}  // namespace
}  // namespace topofit::decision

namespace topofit::decision {
namespace {

TEST_CASE("LostOn names the first of the ranking's criteria an option falls behind on", "[group_rank]") {
  OptionVerdict best;
  best.node_group_id = "best";
  best.needs_gpus = true;
  best.preferences_satisfied = 2;
  best.provisioned_gpus = 8;
  best.useful_gpus = 8;
  best.placed_pods = 2;
  best.price = 30;
  struct Row {
    const char* name;
    OptionVerdict loser;
    bool by_price;
    RankCriterion expected;
  };
  auto with = [&](auto change) {
    OptionVerdict v = best;
    v.node_group_id = "other";
    change(v);
    return v;
  };
  const std::vector<Row> rows = {
      {"fewer preferences, though cheaper", with([](OptionVerdict& v) { v.preferences_satisfied = 1; v.price = 1; }),
       true, RankCriterion::kPreferences},
      {"dearer for the same useful GPUs", with([](OptionVerdict& v) { v.price = 31; }), true,
       RankCriterion::kCostPerUsefulGpu},
      {"the same price for slower sets", with([](OptionVerdict& v) { v.useful_gpus = 6; }), true,
       RankCriterion::kCostPerUsefulGpu},
      {"more GPUs for the same work, prices unknown", with([](OptionVerdict& v) { v.provisioned_gpus = 16; v.price = 0; }),
       false, RankCriterion::kCostPerUsefulGpu},
      {"as cheap, fewer pods placed", with([](OptionVerdict& v) { v.placed_pods = 1; }), true,
       RankCriterion::kPodsPlaced},
      {"tied", with([](OptionVerdict&) {}), true, RankCriterion::kNone},
      {"more preferences, though dearer: it did not lose",
       with([](OptionVerdict& v) { v.preferences_satisfied = 3; v.price = 99; }), true, RankCriterion::kNone},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(LostOn(row.loser, best, row.by_price) == row.expected);
  }
}

}  // namespace
}  // namespace topofit::decision
