// The contract with the kubelet: the project's protos decode every upstream-encoded fixture to exactly its
// JSON and encode it back to the same bytes, and what the agent sends is byte for byte what the upstream
// protos encode for the same message.

#include "agent/device_plugin_wire.h"

#include <catch2/catch.hpp>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "proto/podresources_v1.pb.h"
#include "tests/agent/kubelet_fixtures.h"
#include "tests/kube/status_matchers.h"

namespace topofit::agent {
namespace {

using testing::FixtureUuids;
using testing::HaveKubeletFixtures;
using testing::KubeletFixtureDir;
using testing::ReadFixture;

// "deviceplugin.AllocateRequest" -> v1beta1.AllocateRequest, "podresources.List..." -> v1.List...
std::string MessageTypeOf(absl::string_view stem) {
  if (absl::ConsumePrefix(&stem, "deviceplugin.")) return absl::StrCat("v1beta1.", stem);
  if (absl::ConsumePrefix(&stem, "podresources.")) return absl::StrCat("v1.", stem);
  return "";
}

std::unique_ptr<google::protobuf::Message> NewMessage(const std::string& type) {
  // Both generated files are linked (each is referenced below), so their descriptors are in the pool.
  const google::protobuf::Descriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(type);
  if (descriptor == nullptr) return nullptr;
  return std::unique_ptr<google::protobuf::Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(descriptor)->New());
}

nlohmann::json ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string text;
  REQUIRE(google::protobuf::util::MessageToJsonString(message, &text, options).ok());
  return nlohmann::json::parse(text);
}

std::string Encode(const google::protobuf::Message& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.SetSerializationDeterministic(true);
  REQUIRE(message.SerializeToCodedStream(&out));
  out.Trim();
  return bytes;
}

TEST_CASE("every kubelet fixture decodes to exactly its JSON and encodes back to its bytes", "[agent][contract]") {
  if (!HaveKubeletFixtures()) return;
  // Referenced so that the linker keeps both generated files.
  (void)v1beta1::RegisterRequest::descriptor();
  (void)v1::ListPodResourcesResponse::descriptor();
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KubeletFixtureDir())) {
    if (entry.path().extension() != ".bin") continue;
    const std::string stem = entry.path().stem().string();
    SECTION(stem) {
      const std::string type = MessageTypeOf(stem);
      INFO(stem << " -> " << type);
      std::unique_ptr<google::protobuf::Message> message = NewMessage(type);
      REQUIRE(message != nullptr);
      const std::string bytes = ReadFixture(stem + ".bin");
      REQUIRE(message->ParseFromString(bytes));
      // Nothing the project's proto does not know (a wrong field number would land here).
      CHECK(message->GetReflection()->GetUnknownFields(*message).empty());
      CHECK(ToJson(*message) == nlohmann::json::parse(ReadFixture(stem + ".json")));

      std::unique_ptr<google::protobuf::Message> from_json = NewMessage(type);
      google::protobuf::util::JsonParseOptions strict;
      REQUIRE(google::protobuf::util::JsonStringToMessage(ReadFixture(stem + ".json"), from_json.get(), strict).ok());
      CHECK(Encode(*from_json) == bytes);
    }
    ++checked;
  }
  CHECK(checked == 11);
}

TEST_CASE("what the agent sends encodes as the upstream protos do", "[agent][contract]") {
  if (!HaveKubeletFixtures()) return;
  const std::vector<std::string> uuids = FixtureUuids();
  REQUIRE(uuids.size() == 8);

  SECTION("RegisterRequest") {
    CHECK(Encode(RegisterRequestFor("topofit-gpu.sock", "nvidia.com/gpu")) ==
          ReadFixture("deviceplugin.RegisterRequest.bin"));
  }
  SECTION("DevicePluginOptions") {
    CHECK(Encode(PluginOptions()) == ReadFixture("deviceplugin.DevicePluginOptions.bin"));
  }
  SECTION("ListAndWatchResponse: UUIDs, NUMA nodes 0 and 1, GPU 6 unhealthy") {
    DeviceSnapshot snapshot;
    snapshot.version = 1;
    for (int i = 0; i < 8; ++i) {
      snapshot.devices.push_back({uuids[i], topology::GpuId{i}, i < 4 ? 0 : 1, i != 6});
    }
    CHECK(Encode(ListAndWatchResponseOf(snapshot)) == ReadFixture("deviceplugin.ListAndWatchResponse.bin"));
  }
  SECTION("AllocateResponse: envvar, cdi-annotations and cdi-cri together, for the first container") {
    v1beta1::AllocateResponse fixture;
    REQUIRE(fixture.ParseFromString(ReadFixture("deviceplugin.AllocateResponse.bin")));
    absl::StatusOr<DeviceListStrategies> all = ParseDeviceListStrategies("envvar,cdi-annotations,cdi-cri");
    REQUIRE_OK(all);
    v1beta1::AllocateResponse ours;
    *ours.add_container_responses() = ContainerAllocateResponseFor(*all, {uuids[2], uuids[3]}, 0);
    CHECK(Encode(ours) == Encode(fixture));
  }
  SECTION("PreferredAllocationRequest: read as the kubelet sent it") {
    v1beta1::PreferredAllocationRequest fixture;
    REQUIRE(fixture.ParseFromString(ReadFixture("deviceplugin.PreferredAllocationRequest.bin")));
    const ContainerRequest first = ContainerRequestOf(fixture.container_requests(0));
    CHECK(first.available == std::vector<std::string>{uuids[0], uuids[2], uuids[3], uuids[4], uuids[5], uuids[7]});
    CHECK(first.must_include == std::vector<std::string>{uuids[3]});
    CHECK(first.size == 2);
  }
}

TEST_CASE("device list strategies: NVIDIA's names, one or more", "[agent]") {
  absl::StatusOr<DeviceListStrategies> envvar = ParseDeviceListStrategies("envvar");
  REQUIRE_OK(envvar);
  CHECK(envvar->envvar);
  CHECK_FALSE(envvar->cdi_cri);
  const v1beta1::ContainerAllocateResponse only_env = ContainerAllocateResponseFor(*envvar, {"GPU-a", "GPU-b"}, 0);
  CHECK(only_env.envs().at("NVIDIA_VISIBLE_DEVICES") == "GPU-a,GPU-b");
  CHECK(only_env.annotations().empty());
  CHECK(only_env.cdi_devices().empty());

  absl::StatusOr<DeviceListStrategies> cri = ParseDeviceListStrategies("cdi-cri");
  REQUIRE_OK(cri);
  const v1beta1::ContainerAllocateResponse cdi = ContainerAllocateResponseFor(*cri, {"GPU-a"}, 0);
  CHECK(cdi.envs().empty());
  REQUIRE(cdi.cdi_devices_size() == 1);
  CHECK(cdi.cdi_devices(0).name() == "nvidia.com/gpu=GPU-a");

  CHECK_STATUS(ParseDeviceListStrategies("volume-mounts"), absl::StatusCode::kInvalidArgument, "volume-mounts");
  CHECK_STATUS(ParseDeviceListStrategies(""), absl::StatusCode::kInvalidArgument, "no device list strategy");
}

}  // namespace
}  // namespace topofit::agent
