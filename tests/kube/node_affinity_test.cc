#include "kube/node_affinity.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::kube {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::MakeTerm;
using testing::Requirement;
using Op = NodeSelectorOperator;

TEST_CASE("MatchesNodeSelector follows upstream's node affinity", "[node_affinity]") {
  // One node for every row: a named GPU node in zone a with 8 GPUs.
  const Node node = MakeNode()
                        .name("gpu-1")
                        .label("zone", "a")
                        .label("nvidia.com/gpu.count", "8")
                        .label("nvidia.com/gpu.product", "H100");
  struct Row {
    const char* name;
    Pod pod;
    bool matches;
  };
  const Row rows[] = {
      {"no constraints", MakePod(), true},
      {"nodeSelector equal", MakePod().nodeSelector("zone", "a"), true},
      {"nodeSelector different value", MakePod().nodeSelector("zone", "b"), false},
      {"nodeSelector missing label", MakePod().nodeSelector("rack", "r1"), false},
      {"nodeSelector and affinity both needed",
       MakePod().nodeSelector("zone", "a").requiredTerm(MakeTerm().expression(Requirement("zone", Op::kIn, {"b"}))),
       false},
      {"In", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kIn, {"b", "a"}))), true},
      {"In without the label", MakePod().requiredTerm(MakeTerm().expression(Requirement("rack", Op::kIn, {"r1"}))),
       false},
      {"NotIn", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kNotIn, {"a"}))), false},
      {"NotIn without the label holds",
       MakePod().requiredTerm(MakeTerm().expression(Requirement("rack", Op::kNotIn, {"r1"}))), true},
      {"Exists", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kExists))), true},
      {"DoesNotExist", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kDoesNotExist))), false},
      {"Gt integer compare",  // 8 > 4
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.count", Op::kGt, {"4"}))), true},
      {"Gt is strict",  // 8 > 8 fails
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.count", Op::kGt, {"8"}))), false},
      {"Lt integer compare, not text",  // 8 < 10 (as text "8" > "10")
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.count", Op::kLt, {"10"}))), true},
      {"Gt on a non-integer label",
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.product", Op::kGt, {"1"}))), false},
      {"Gt without the label", MakePod().requiredTerm(MakeTerm().expression(Requirement("rack", Op::kGt, {"1"}))),
       false},
      {"AND within a term",
       MakePod().requiredTerm(MakeTerm()
                                  .expression(Requirement("zone", Op::kIn, {"a"}))
                                  .expression(Requirement("nvidia.com/gpu.product", Op::kIn, {"A100"}))),
       false},
      {"OR over terms",
       MakePod()
           .requiredTerm(MakeTerm().expression(Requirement("zone", Op::kIn, {"b"})))
           .requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.product", Op::kIn, {"H100"}))),
       true},
      {"matchFields metadata.name In",
       MakePod().requiredTerm(MakeTerm().field(Requirement("metadata.name", Op::kIn, {"gpu-1"}))), true},
      {"matchFields metadata.name NotIn",
       MakePod().requiredTerm(MakeTerm().field(Requirement("metadata.name", Op::kNotIn, {"gpu-1"}))), false},
      {"matchFields ANDed with matchExpressions",
       MakePod().requiredTerm(MakeTerm()
                                  .expression(Requirement("zone", Op::kIn, {"a"}))
                                  .field(Requirement("metadata.name", Op::kIn, {"gpu-2"}))),
       false},
      // Malformed requirements make their whole term match nothing, even beside one that matches.
      {"unknown operator", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kUnknown, {"a"}))),
       false},
      {"unknown operator fails its term only",
       MakePod()
           .requiredTerm(MakeTerm().expression(Requirement("zone", Op::kUnknown, {"a"})))
           .requiredTerm(MakeTerm().expression(Requirement("zone", Op::kIn, {"a"}))),
       true},
      {"In without values", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kIn, {}))), false},
      {"Exists with values", MakePod().requiredTerm(MakeTerm().expression(Requirement("zone", Op::kExists, {"a"}))),
       false},
      {"Gt with a non-integer bound",
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.count", Op::kGt, {"4.5"}))), false},
      {"Gt with two bounds",
       MakePod().requiredTerm(MakeTerm().expression(Requirement("nvidia.com/gpu.count", Op::kGt, {"1", "2"}))),
       false},
      {"matchFields with two values",
       MakePod().requiredTerm(MakeTerm().field(Requirement("metadata.name", Op::kIn, {"gpu-1", "gpu-2"}))), false},
      {"matchFields with Exists",
       MakePod().requiredTerm(MakeTerm().field(Requirement("metadata.name", Op::kExists))), false},
      {"empty term matches nothing", MakePod().requiredTerm(MakeTerm()), false},
      {"required affinity without terms matches nothing", MakePod().emptyRequiredAffinity(), false},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK(MatchesNodeSelector(row.pod, node) == row.matches); }
  }
}

TEST_CASE("MatchesAnyTerm: terms ORed, by the same rules, none matching nothing", "[node_affinity]") {
  const Node node = MakeNode().name("gpu-1").label("zone", "a");
  const NodeSelectorTerm in_a = MakeTerm().expression(Requirement("zone", Op::kIn, {"a"})).build();
  const NodeSelectorTerm in_b = MakeTerm().expression(Requirement("zone", Op::kIn, {"b"})).build();
  CHECK(MatchesAnyTerm({in_b, in_a}, node));
  CHECK_FALSE(MatchesAnyTerm({in_b}, node));
  CHECK_FALSE(MatchesAnyTerm({}, node));
}

TEST_CASE("matchFields are skipped for a node without a name, as upstream does", "[node_affinity]") {
  const Pod pod = MakePod().requiredTerm(MakeTerm().field(Requirement("metadata.name", Op::kIn, {"gpu-1"})));
  CHECK(MatchesNodeSelector(pod, MakeNode().name("gpu-2")) == false);
  CHECK(MatchesNodeSelector(pod, MakeNode()) == true);
}

TEST_CASE("ToleratesTaints checks NoSchedule and NoExecute taints", "[node_affinity]") {
  using Effect = TaintEffect;
  using TolOp = TolerationOperator;
  struct Row {
    const char* name;
    Pod pod;
    Node node;
    bool tolerates;
  };
  const Row rows[] = {
      {"no taints", MakePod(), MakeNode(), true},
      {"untolerated NoSchedule", MakePod(), MakeNode().taint("gpu", "true", Effect::kNoSchedule), false},
      {"untolerated NoExecute", MakePod(), MakeNode().taint("gpu", "true", Effect::kNoExecute), false},
      {"PreferNoSchedule never blocks", MakePod(), MakeNode().taint("gpu", "true", Effect::kPreferNoSchedule), true},
      {"unknown effect never blocks", MakePod(), MakeNode().taint("gpu", "true", Effect::kUnknown), true},
      {"Equal with the same value", MakePod().toleration("gpu", TolOp::kEqual, "true", Effect::kNoSchedule),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule), true},
      {"Equal with another value", MakePod().toleration("gpu", TolOp::kEqual, "false", Effect::kNoSchedule),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule), false},
      {"Exists ignores the value", MakePod().toleration("gpu", TolOp::kExists, "", Effect::kNoSchedule),
       MakeNode().taint("gpu", "anything", Effect::kNoSchedule), true},
      {"other key", MakePod().toleration("tpu", TolOp::kExists, "", Effect::kNoSchedule),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule), false},
      {"other effect", MakePod().toleration("gpu", TolOp::kExists, "", Effect::kNoExecute),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule), false},
      {"empty effect tolerates every effect", MakePod().toleration("gpu", TolOp::kExists, "", Effect::kNone),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule).taint("gpu", "true", Effect::kNoExecute), true},
      {"empty key with Exists tolerates everything", MakePod().toleration("", TolOp::kExists, "", Effect::kNone),
       MakeNode().taint("a", "1", Effect::kNoSchedule).taint("b", "2", Effect::kNoExecute), true},
      {"empty key with Equal compares values only",  // upstream checks the key only when it is set
       MakePod().toleration("", TolOp::kEqual, "1", Effect::kNone), MakeNode().taint("a", "1", Effect::kNoSchedule),
       true},
      {"unknown operator tolerates nothing", MakePod().toleration("gpu", TolOp::kUnknown, "true", Effect::kNone),
       MakeNode().taint("gpu", "true", Effect::kNoSchedule), false},
      {"every taint must be tolerated", MakePod().toleration("a", TolOp::kExists, "", Effect::kNone),
       MakeNode().taint("a", "1", Effect::kNoSchedule).taint("b", "2", Effect::kNoSchedule), false},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK(ToleratesTaints(row.pod, row.node) == row.tolerates); }
  }
}

TEST_CASE("FindUntoleratedTaint names the blocking taint", "[node_affinity]") {
  const Pod pod = MakePod().toleration("a", TolerationOperator::kExists, "", TaintEffect::kNone);
  const Node node = MakeNode()
                        .taint("a", "1", TaintEffect::kNoSchedule)
                        .taint("soft", "1", TaintEffect::kPreferNoSchedule)
                        .taint("b", "2", TaintEffect::kNoExecute);
  const Taint* taint = FindUntoleratedTaint(pod, node);
  REQUIRE(taint != nullptr);
  CHECK(taint->key == "b");
}

}  // namespace
}  // namespace topofit::kube
