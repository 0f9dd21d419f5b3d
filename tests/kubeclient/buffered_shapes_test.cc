#include "kubeclient/buffered_shapes.h"

#include <catch2/catch.hpp>

#include "kubeclient/capacity_buffers.h"
#include "tests/topology/test_topologies.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using topology::testing::Set;

// A 4-GPU inference replica that prefers NVLink, as the API server returns it.
json Replica() {
  return json::parse(R"({
    "metadata": {"name": "llm-70b-7f9c", "namespace": "serving", "uid": "uid-1",
                 "annotations": {"topofit.io/min-link": "NV"}},
    "spec": {"containers": [{"name": "vllm", "image": "vllm:1",
                             "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
    "status": {"phase": "Running"}
  })");
}

const decision::HeadroomShape kQuad{.gpus = 4, .min_link = "NV", .min_bandwidth = "", .topology_policy = "", .family = ""};

// The buffer of the quad shape as topofit's headroom controller writes it, with the status CA writes.
json QuadBuffer(int spec_replicas, std::optional<int> status_replicas) {
  json buffer = CapacityBufferObject(kQuad, "headroom", "v1beta1", spec_replicas);
  if (status_replicas) {
    buffer["status"] = {{"podTemplateRef", {{"name", HeadroomObjectName(kQuad)}}}, {"replicas", *status_replicas}};
  }
  return buffer;
}

const topology::Topology& Dgx1() {
  static const topology::Topology topology =
      topology::testing::MakeTopology(topology::testing::kDgx1V100Rows, "Tesla V100-SXM2-16GB");
  return topology;
}

// The GPUs the buffers keep whole on an empty DGX-1V (two NVLink quads).
int KeptOnEmptyDgx(const BufferedShapes& shapes) { return shapes.Warm()->KeptGpus(Dgx1(), Set({0, 1, 2, 3, 4, 5, 6, 7})); }

TEST_CASE("A CapacityBuffer is read for its template and replicas, CA's status first", "[buffered_shapes]") {
  std::optional<BufferedShapes::Buffer> buffer;
  REQUIRE(BufferedShapes::ReadBuffer(QuadBuffer(3, std::nullopt), buffer));
  REQUIRE(buffer);
  CHECK(buffer->template_name == HeadroomObjectName(kQuad));
  CHECK(buffer->replicas == 3);
  REQUIRE(BufferedShapes::ReadBuffer(QuadBuffer(3, 1), buffer));
  CHECK(buffer->replicas == 1);  // what CA worked out (limits, percentage) wins
  REQUIRE(BufferedShapes::ReadBuffer(QuadBuffer(3, 0), buffer));
  CHECK_FALSE(buffer);

  json other = QuadBuffer(3, std::nullopt);
  other["spec"]["provisioningStrategy"] = "example.com/standby";
  REQUIRE(BufferedShapes::ReadBuffer(other, buffer));
  CHECK_FALSE(buffer);  // not active capacity: no free GPUs are kept for it
  // Sized by a scalableRef that CA has not resolved into a template yet.
  json scalable = QuadBuffer(3, std::nullopt);
  scalable["spec"].erase("podTemplateRef");
  scalable["spec"]["scalableRef"] = {{"apiGroup", "apps"}, {"kind", "Deployment"}, {"name", "llm"}};
  REQUIRE(BufferedShapes::ReadBuffer(scalable, buffer));
  CHECK_FALSE(buffer);
  scalable["status"] = {{"podTemplateRef", {{"name", "capacitybuffer-llm"}}}, {"replicas", 2}};
  REQUIRE(BufferedShapes::ReadBuffer(scalable, buffer));
  REQUIRE(buffer);
  CHECK(buffer->template_name == "capacitybuffer-llm");

  CHECK_FALSE(BufferedShapes::ReadBuffer(json::parse(R"({"metadata": {"name": "x"}})"), buffer));
  CHECK_FALSE(BufferedShapes::ReadBuffer(json::parse(R"([1, 2])"), buffer));
}

TEST_CASE("A PodTemplate is read for what its pods ask of GPUs", "[buffered_shapes]") {
  std::optional<decision::GpuDemand> demand;
  REQUIRE(BufferedShapes::ReadTemplate(HeadroomPodTemplate(kQuad, "headroom", Replica()), demand));
  REQUIRE(demand);
  CHECK(demand->request.gpus == 4);
  CHECK(demand->asks_for_topology());
  json cpu_only = HeadroomPodTemplate(kQuad, "headroom", Replica());
  cpu_only["template"]["spec"]["containers"][0]["resources"] = json::object();
  REQUIRE(BufferedShapes::ReadTemplate(cpu_only, demand));
  CHECK_FALSE(demand);
  CHECK_FALSE(BufferedShapes::ReadTemplate(json::parse(R"({"template": {}})"), demand));
}

TEST_CASE("Buffers and templates watched join into the warm capacity prioritize keeps", "[buffered_shapes]") {
  BufferedShapes shapes;
  ListWatcher::Sink buffers = shapes.BufferSink();
  ListWatcher::Sink templates = shapes.TemplateSink();
  CHECK(shapes.Warm()->empty());

  // A buffer whose template is not known yet keeps nothing.
  CHECK(buffers.on_list_page({QuadBuffer(1, std::nullopt), json::parse(R"({"metadata": {"name": "bad"}})")}, true) == 1);
  buffers.on_sync();
  CHECK(shapes.Warm()->empty());
  CHECK(templates.on_list_page({HeadroomPodTemplate(kQuad, "headroom", Replica())}, true) == 0);
  templates.on_sync();
  CHECK(KeptOnEmptyDgx(shapes) == 4);

  // CA resizes it; then the buffer goes.
  REQUIRE(buffers.on_event(WatchEventType::kModified, QuadBuffer(1, 2)));
  CHECK(KeptOnEmptyDgx(shapes) == 8);
  REQUIRE(buffers.on_event(WatchEventType::kDeleted, QuadBuffer(1, 2)));
  CHECK(shapes.Warm()->empty());
  CHECK_FALSE(buffers.on_event(WatchEventType::kAdded, json::parse("7")));

  // A relist replaces what the watch held: the template went while the watch was down.
  REQUIRE(buffers.on_event(WatchEventType::kAdded, QuadBuffer(2, std::nullopt)));
  CHECK(KeptOnEmptyDgx(shapes) == 8);
  templates.on_list_page({}, true);
  templates.on_sync();
  CHECK(shapes.Warm()->empty());
  // A buffer in another namespace does not read this namespace's template.
  json elsewhere = QuadBuffer(2, std::nullopt);
  elsewhere["metadata"]["namespace"] = "other";
  templates.on_event(WatchEventType::kAdded, HeadroomPodTemplate(kQuad, "headroom", Replica()));
  buffers.on_list_page({elsewhere}, true);
  buffers.on_sync();
  CHECK(shapes.Warm()->empty());
}

}  // namespace
}  // namespace topofit::kubeclient
