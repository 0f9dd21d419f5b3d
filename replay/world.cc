#include "replay/world.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "replay/operator_tuning.h"
#include "decision/capacity_buffer.h"
#include "decision/claim_gpus.h"
#include "decision/slowdown.h"
#include "codec/node_topology.h"
#include "decision/node_topology.h"
#include "kube/node_affinity.h"
#include "topology/catalog.h"
#include "topology/set_quality.h"

namespace topofit::sim {
namespace {

constexpr int64_t kMebibyteMilli = int64_t{1024} * 1024 * 1000;  // ResourceList holds thousandths of a byte

// How fast a gang's members exchange data per GPU when they are not in one NVLink domain: over the
// scale-out network, 400 Gb/s per GPU (one ConnectX-7 or -8 NIC per GPU, as in DGX H100/B200 and GB200
// compute trays). Inside a domain they talk over NVLink at the node's own per-GPU bandwidth.
constexpr int64_t kScaleOutMbpsPerGpu = 50'000;

// The most fake pods an adaptive buffer can hold per shape (its planner's budget bounds them further).
constexpr int kAdaptiveBufferPool = 64;

// The domain label's value for the `index`-th domain of a group: a clique id of its own.
std::string DomainName(const NodeGroupSpec& spec, int index) { return absl::StrCat(spec.name, ".", index); }

// cluster-autoscaler's pod annotation: "false" keeps its scale-down from evicting the pod.
constexpr absl::string_view kSafeToEvictAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict";

// "key=value:Effect" or "key:Effect", as `kubectl taint` takes them.
absl::StatusOr<kube::Taint> ParseTaint(absl::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat("taint \"", text, "\": want key=value:Effect or key:Effect"));
  }
  kube::Taint taint;
  taint.effect = kube::ParseTaintEffect(text.substr(colon + 1));
  if (taint.effect == kube::TaintEffect::kUnknown || taint.effect == kube::TaintEffect::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("taint \"", text, "\": effect must be NoSchedule, PreferNoSchedule or NoExecute"));
  }
  const absl::string_view key_value = text.substr(0, colon);
  const size_t equals = key_value.find('=');
  taint.key = std::string(key_value.substr(0, equals));
  if (equals != absl::string_view::npos) taint.value = std::string(key_value.substr(equals + 1));
  return taint;
}

absl::StatusOr<GroupState> BuildGroup(const NodeGroupSpec& spec, decision::TopologySource& resolver) {
  GroupState group;
  group.spec = spec;
  kube::Node& node = group.template_node;
  for (const std::string& text : spec.taints) {
    absl::StatusOr<kube::Taint> taint = ParseTaint(text);
    if (!taint.ok()) return absl::InvalidArgumentError(absl::StrCat("node group ", spec.name, ": ", taint.status().message()));
    node.spec.taints.push_back(*std::move(taint));
  }
  node.metadata.name = absl::StrCat("template-", spec.name);
  node.metadata.labels["kubernetes.io/os"] = "linux";
  if (!spec.shape.empty()) node.metadata.labels[std::string(topology::kInstanceTypeLabel)] = spec.shape;
  node.metadata.annotations["topofit.io/price-per-node-hour"] = absl::StrCat(spec.price_per_hour);
  if (spec.nodes_per_domain > 0) {
    // As CA copies a template from a real node: that node's domain, and how many nodes a domain holds.
    node.metadata.labels[spec.domain_label] = DomainName(spec, 0);
    node.metadata.annotations[std::string(kube::kNodesPerDomainAnnotation)] = absl::StrCat(spec.nodes_per_domain);
  }
  node.status.allocatable[kube::kResourceCpu] = spec.cpu_milli;
  node.status.allocatable[kube::kResourceMemory] = spec.memory_mib * kMebibyteMilli;
  if (spec.gpus > 0) {
    std::string product = spec.gpu_product;
    if (product.empty()) {
      // The label GFD would publish: the product of the shape the instance type names.
      absl::StatusOr<topology::LabelledTopology> shape = topology::TopologyFromLabels(node.metadata.labels, spec.gpus);
      if (!shape.ok()) return shape.status();
      product = shape->topology.gpu(topology::GpuId{0}).product;
    }
    node.metadata.labels[std::string(topology::kGpuProductLabel)] = product;
    node.metadata.labels[std::string(topology::kGpuCountLabel)] = absl::StrCat(spec.gpus);
    node.status.allocatable[kube::kResourceNvidiaGpu] = int64_t{spec.gpus} * 1000;
    absl::StatusOr<decision::NodeTopology> resolved = resolver.Resolve(node);
    if (!resolved.ok()) return resolved.status();
    if (resolved->topology->gpu_count() != spec.gpus) {
      return absl::InvalidArgumentError(absl::StrCat("node group ", spec.name, ": shape ", spec.shape, " has ",
                                                     resolved->topology->gpu_count(), " GPUs, not ", spec.gpus));
    }
    group.topology = resolved->topology;
    group.topology_origin = resolved->origin;
    group.gpus = spec.gpus;
  }
  return group;
}

kube::Pod Prototype(const PodSpec& spec) {
  kube::Pod pod;
  pod.metadata.namespace_name = "default";
  pod.spec.scheduler_name = "topofit";
  pod.spec.priority = spec.priority;
  kube::Container container;
  container.name = "main";
  container.resources.requests[kube::kResourceCpu] = spec.cpu_milli;
  container.resources.requests[kube::kResourceMemory] = spec.memory_mib * kMebibyteMilli;
  if (spec.gpus > 0) {
    container.resources.requests[kube::kResourceNvidiaGpu] = int64_t{spec.gpus} * 1000;
    container.resources.limits[kube::kResourceNvidiaGpu] = int64_t{spec.gpus} * 1000;
    // The ExtendedResourceToleration admission plugin gives every pod that requests an extended resource
    // a toleration for a taint keyed by it, so tainted GPU nodes take GPU pods and keep the rest off.
    kube::Toleration toleration;
    toleration.key = kube::kResourceNvidiaGpu;
    toleration.op = kube::TolerationOperator::kExists;
    toleration.effect = kube::TaintEffect::kNoSchedule;
    pod.spec.tolerations.push_back(std::move(toleration));
  }
  pod.spec.containers.push_back(std::move(container));
  if (!spec.gpu_products.empty()) {
    kube::NodeSelectorTerm term;
    term.match_expressions.push_back(
        {std::string(topology::kGpuProductLabel), kube::NodeSelectorOperator::kIn, spec.gpu_products});
    pod.spec.required_node_affinity = kube::NodeSelector{{std::move(term)}};
  }
  auto annotate = [&](absl::string_view key, const std::string& value) {
    if (!value.empty()) pod.metadata.annotations[std::string(key)] = value;
  };
  annotate(kube::kMinLinkAnnotation, spec.min_link);
  annotate(kube::kMinBandwidthAnnotation, spec.min_bandwidth);
  annotate(kube::kTopologyPolicyAnnotation, spec.topology_policy);
  if (spec.expected_runtime > 0) {
    annotate(kube::kExpectedRuntimeAnnotation, absl::FormatDuration(absl::Milliseconds(spec.expected_runtime)));
  }
  if (!spec.safe_to_evict) annotate(kSafeToEvictAnnotation, "false");
  if (!spec.gang.empty()) {
    annotate(kube::kGangAnnotation, spec.gang);
    annotate(kube::kGangSizeAnnotation, absl::StrCat(spec.gang_size));
    annotate(spec.gang_topology_required ? kube::kGangRequiredTopologyAnnotation
                                         : kube::kGangPreferredTopologyAnnotation,
             spec.gang_topology);
  }
  return pod;
}

// Everything a scheduling decision reads of a pod, as a map key.
std::string ClassKey(const PodSpec& spec) {
  return absl::StrCat(spec.gpus, "|", spec.cpu_milli, "|", spec.memory_mib, "|", spec.priority, "|",
                      absl::StrJoin(spec.gpu_products, ","), "|", spec.min_link, "|", spec.min_bandwidth, "|",
                      spec.topology_policy, "|", spec.expected_runtime, "|", spec.safe_to_evict, "|", spec.gang, "|",
                      spec.gang_size, "|", spec.gang_topology, "|", spec.gang_topology_required);
}

}  // namespace

absl::StatusOr<std::vector<GroupState>> BuildGroups(const std::vector<NodeGroupSpec>& specs) {
  std::vector<GroupState> groups;
  codec::TopologyResolver resolver;
  for (const NodeGroupSpec& spec : specs) {
    absl::StatusOr<GroupState> group = BuildGroup(spec, resolver);
    if (!group.ok()) return group.status();
    groups.push_back(*std::move(group));
  }
  return groups;
}

World::World(const Workload& workload, const Policy& policy, uint64_t seed)
    : workload_(workload), policy_(policy), draws_(seed) {}

absl::StatusOr<std::unique_ptr<World>> World::Create(const Workload& workload, const Policy& policy, uint64_t seed) {
  std::unique_ptr<World> world(new World(workload, policy, seed));
  absl::StatusOr<std::vector<GroupState>> groups = BuildGroups(workload.groups);
  if (!groups.ok()) return groups.status();
  world->groups_ = *std::move(groups);
  for (const GroupState& group : world->groups_) world->group_templates_.emplace(group.spec.name, kube::SharedTemplate(group.template_node));
  std::map<std::string, int> class_of;
  std::map<std::string, int> gang_of;
  world->pods_.resize(workload.pods.size());
  for (size_t i = 0; i < workload.pods.size(); ++i) {
    const PodSpec& spec = workload.pods[i];
    auto [it, added] = class_of.try_emplace(ClassKey(spec), static_cast<int>(world->classes_.size()));
    if (added) {
      PodClass klass;
      klass.gpus = spec.gpus;
      klass.cpu_milli = spec.cpu_milli;
      klass.memory_mib = spec.memory_mib;
      klass.priority = spec.priority;
      klass.prototype = Prototype(spec);
      absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(klass.prototype);
      if (!demand.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("pod ", spec.name, ": ", demand.status().message()));
      }
      klass.demand = *demand;
      // The slowdown's reference is the pod's own: the best of the groups its spec allows, before any
      // operator affinity, so that every world measures a pod against the same best set.
      for (const GroupState& group : world->groups_) {
        const bool allowed = kube::MatchesNodeSelector(klass.prototype, group.template_node) &&
                             kube::ToleratesTaints(klass.prototype, group.template_node);
        if (allowed && klass.gpus >= 2 && group.gpus >= klass.gpus) {
          klass.best_mbps = std::max(klass.best_mbps, group.topology->quality().BestBandwidth(klass.gpus));
        }
        if (allowed && klass.gpus > 0 && CanGiveTopology(group, decision::EnforcedRequest(klass.demand))) {
          const double per_gpu_hour = group.spec.price_per_hour / group.gpus;
          if (klass.cheapest_gpu_hour == 0 || per_gpu_hour < klass.cheapest_gpu_hour) {
            klass.cheapest_gpu_hour = per_gpu_hour;
          }
        }
      }
      if (policy.operator_affinity && klass.gpus > 0 && klass.demand.constraints_required()) {
        if (std::optional<kube::NodeSelector> affinity =
                OperatorAffinity(klass.prototype, klass.demand.request, world->groups_)) {
          klass.prototype.spec.required_node_affinity = *std::move(affinity);
        }
      }
      if (policy.operator_preferred_affinity && klass.demand.asks_for_topology() &&
          !klass.demand.constraints_required()) {
        klass.prototype.spec.preferred_node_affinity =
            OperatorPreferredAffinity(klass.prototype, klass.demand.request, world->groups_);
      }
      for (const GroupState& group : world->groups_) {
        klass.group_allowed.push_back(kube::MatchesNodeSelector(klass.prototype, group.template_node) &&
                                      kube::ToleratesTaints(klass.prototype, group.template_node));
        int64_t weight = 0;
        for (const kube::PreferredSchedulingTerm& term : klass.prototype.spec.preferred_node_affinity) {
          if (kube::MatchesAnyTerm({term.preference}, group.template_node)) weight += term.weight;
        }
        klass.group_preference.push_back(weight);
      }
      world->classes_.push_back(std::move(klass));
    }
    world->pods_[i].spec = static_cast<int>(i);
    world->pods_[i].klass = it->second;
    world->pods_[i].remaining_ideal = spec.duration;
    if (!spec.gang.empty()) {
      auto [gang, first] = gang_of.try_emplace(spec.gang, static_cast<int>(world->gangs_.size()));
      if (first) world->gangs_.emplace_back().name = spec.gang;
      SimGang& g = world->gangs_[gang->second];
      if (!first && world->pods_[g.members.front()].klass != it->second) {
        return absl::InvalidArgumentError(absl::StrCat("pod ", spec.name, ": its gang ", spec.gang,
                                                       "'s members differ (they share one pod template)"));
      }
      g.members.push_back(static_cast<int>(i));
      world->pods_[i].gang = gang->second;
    }
  }
  for (const SimGang& g : world->gangs_) {
    const PodSpec& first = workload.pods[world->pods_[g.members.front()].spec];
    if (static_cast<int>(g.members.size()) != first.gang_size) {
      return absl::InvalidArgumentError(absl::StrCat("gang ", g.name, ": ", g.members.size(), " pods, size ",
                                                     first.gang_size, " (a replayed gang starts with all its pods)"));
    }
  }
  world->AddBuffers();
  for (size_t g = 0; g < world->groups_.size(); ++g) {
    for (int n = 0; n < world->groups_[g].spec.initial_size; ++n) {
      world->MarkReady(world->AddNode(static_cast<int>(g), -1));
    }
  }
  world->RecordTimeline();
  return world;
}

namespace {
// The pod's spec.resourceClaims entry for its GPUs under GpuApi::kDra.
constexpr char kClaimEntry[] = "gpus";
}  // namespace

void World::AddBuffers() {
  buffer_of_class_.assign(classes_.size(), -1);
  const Headroom& headroom = policy_.headroom;
  if (headroom.sizing == Headroom::Sizing::kNone) return;
  std::map<decision::HeadroomShape, int> buffer_of_shape;
  // By index: the fake pods are added to pods_ as it goes.
  for (int id = 0; id < workload_pods(); ++id) {
    const int klass = pods_[id].klass;
    const PodSpec& pod = workload_.pods[pods_[id].spec];
    if (pod.gpus == 0 || !pod.gang.empty() || buffer_of_class_[klass] >= 0) continue;
    // Static buffers are an operator's, for the pods known to come in bursts; the planner learns which
    // shapes need one.
    if (headroom.sizing == Headroom::Sizing::kStatic && pod.kind != "inference") continue;
    // The shape as the pod's author wrote it, before any affinity an operator's tuning adds.
    const std::optional<decision::HeadroomShape> shape = decision::HeadroomShapeOf(Prototype(pod));
    if (!shape) continue;
    auto [it, added] = buffer_of_shape.try_emplace(*shape, static_cast<int>(buffers_.size()));
    buffer_of_class_[klass] = it->second;
    if (!added) continue;
    SimBuffer& buffer = buffers_.emplace_back();
    buffer.shape = *shape;
    buffer.klass = klass;
    const int pool = headroom.sizing == Headroom::Sizing::kStatic ? headroom.replicas : kAdaptiveBufferPool;
    for (int i = 0; i < pool; ++i) {
      PodSpec fake = pod;
      fake.name = absl::StrCat("capacity-buffer-", shape->Name(), "-", i);
      fake.arrival = 0;
      fake.duration = 0;
      buffer.pods.push_back(static_cast<int>(pods_.size()));
      SimPod& sim = pods_.emplace_back();
      sim.spec = static_cast<int>(workload_.pods.size() + buffer_specs_.size());
      sim.klass = klass;
      buffer_specs_.push_back(std::move(fake));
    }
    if (headroom.sizing == Headroom::Sizing::kStatic) buffer.replicas = pool;
  }
}

bool World::SetBufferReplicas(int buffer, int replicas) {
  SimBuffer& b = buffers_[buffer];
  const int bounded = std::clamp(replicas, 0, static_cast<int>(b.pods.size()));
  return std::exchange(b.replicas, bounded) != bounded;
}

std::vector<int> World::ActiveBufferPods() const {
  std::vector<int> pods;
  for (const SimBuffer& buffer : buffers_) pods.insert(pods.end(), buffer.pods.begin(), buffer.pods.begin() + buffer.replicas);
  return pods;
}

kube::Pod World::PodObject(int pod) const {
  kube::Pod object = klass(pod).prototype;
  object.metadata.name = spec(pod).name;
  object.metadata.uid = PodUid(pod);
  if (IsBufferPod(pod)) object.metadata.annotations[decision::kCaPodTypeAnnotation] = decision::kCapacityBufferFakePod;
  if (policy_.gpu_api == GpuApi::kDra && klass(pod).gpus > 0) {
    // Its GPUs come from a claim made from a template of `count` GPUs; CA and topofit's expander see a pod
    // that asks for no nvidia.com/gpu.
    for (auto* containers : {&object.spec.containers, &object.spec.init_containers}) {
      for (kube::Container& container : *containers) {
        container.resources.requests.erase(kube::kResourceNvidiaGpu);
        container.resources.limits.erase(kube::kResourceNvidiaGpu);
      }
    }
    kube::PodResourceClaim claim;
    claim.name = kClaimEntry;
    claim.resource_claim_template_name = absl::StrCat("gpus-", klass(pod).gpus);
    object.spec.resource_claims.push_back(std::move(claim));
    // The claim the resource claim controller made from the template when the pod was created.
    kube::PodResourceClaimStatus made;
    made.name = kClaimEntry;
    made.resource_claim_name = ClaimName(pod);
    object.status.resource_claim_statuses.push_back(std::move(made));
  }
  return object;
}

std::string World::ClaimName(int pod) const { return absl::StrCat(spec(pod).name, "-", kClaimEntry); }

kube::ResourceClaim World::ClaimObject(int pod) const {
  const kube::Pod& prototype = klass(pod).prototype;
  kube::ResourceClaim claim;
  claim.metadata.namespace_name = prototype.metadata.namespace_name;
  claim.metadata.name = ClaimName(pod);
  claim.metadata.uid = absl::StrCat("claim-", spec(pod).name);
  kube::DeviceRequest request;
  request.name = kClaimEntry;
  request.device_class_name = decision::kNvidiaGpuDriver;
  request.count = klass(pod).gpus;
  claim.requests.push_back(std::move(request));
  return claim;
}

std::string World::PodUid(int pod) const { return absl::StrCat("uid-", spec(pod).name); }

bool World::FitsByCount(int klass, int group, const FreeCapacity& free) const {
  const PodClass& c = classes_[klass];
  return c.group_allowed[group] && free.gpus >= c.gpus && free.cpu_milli >= c.cpu_milli &&
         free.memory_mib >= c.memory_mib;
}

FreeCapacity World::FreeOf(const SimNode& node) const {
  const NodeGroupSpec& spec = groups_[node.group].spec;
  return FreeCapacity{node.free_gpus(), spec.cpu_milli - node.cpu_used, spec.memory_mib - node.memory_used};
}

FreeCapacity World::EmptyOf(int group) const {
  const GroupState& g = groups_[group];
  return FreeCapacity{g.gpus, g.spec.cpu_milli, g.spec.memory_mib};
}

void World::Take(FreeCapacity& free, int klass) const {
  const PodClass& c = classes_[klass];
  free.gpus -= c.gpus;
  free.cpu_milli -= c.cpu_milli;
  free.memory_mib -= c.memory_mib;
}

void World::AdvanceTo(SimTime t) {
  if (t <= now_) return;
  const double elapsed = static_cast<double>(t - now_);
  provisioned_gpu_ms_ += elapsed * provisioned_gpus_;
  allocated_gpu_ms_ += elapsed * allocated_gpus_;
  cost_dollars_ += elapsed * price_per_ms_;
  now_ = t;
}

void World::RecordTimeline() {
  TimelinePoint point{now_, provisioned_gpus_, allocated_gpus_, static_cast<int>(pending_.size()),
                      static_cast<int>(live_nodes_.size()), price_per_ms_ * static_cast<double>(kHour),
                      partial_gang_gpus_};
  if (!timeline_.empty() && timeline_.back().at == now_) {
    timeline_.back() = point;
  } else {
    timeline_.push_back(point);
  }
}

int World::AddNode(int group, int scale_up) {
  GroupState& g = groups_[group];
  SimNode node;
  node.id = static_cast<int>(nodes_.size());
  node.group = group;
  node.requested = now_;
  node.ready_at = -1;
  node.scale_up = scale_up;
  node.ordinal = g.requested++;
  node.gpus.node = absl::StrCat(g.spec.name, "-", node.id);
  node.gpus.topology = g.topology;
  node.gpus.topology_origin = g.topology_origin;
  node.slot = static_cast<int>(std::find(g.slot_taken.begin(), g.slot_taken.end(), false) - g.slot_taken.begin());
  if (node.slot == static_cast<int>(g.slot_taken.size())) g.slot_taken.push_back(false);
  g.slot_taken[node.slot] = true;
  kube::StringMap labels = g.template_node.metadata.labels;
  if (g.spec.nodes_per_domain > 0) {
    const std::string domain = DomainName(g.spec, node.slot / g.spec.nodes_per_domain);
    labels[g.spec.domain_label] = domain;
    node.domain = decision::NvlinkDomain{g.spec.domain_label, topology::DomainId{domain}};
  }
  // Registered now, with its group's labels: what tells the extender which scale-up brought it.
  node.gpus.origin = std::make_shared<const decision::NodeOrigin>(decision::NodeOrigin{std::move(labels), now_ / kSecond});
  nodes_.push_back(std::move(node));
  ++g.target;
  ++provisioning_count_;
  provisioned_gpus_ += g.gpus;
  price_per_ms_ += g.spec.price_per_hour / static_cast<double>(kHour);
  live_nodes_.insert(nodes_.back().id);
  peak_nodes_ = std::max(peak_nodes_, static_cast<int>(live_nodes_.size()));
  RecordTimeline();
  return nodes_.back().id;
}

void World::MarkReady(int node) {
  nodes_[node].state = NodeState::kReady;
  nodes_[node].ready_at = now_;
  --provisioning_count_;
  ready_nodes_.push_back(node);
}

void World::RemoveNode(int node) {
  SimNode& n = nodes_[node];
  GroupState& g = groups_[n.group];
  if (n.state == NodeState::kProvisioning) --provisioning_count_;
  if (n.state == NodeState::kReady) ready_nodes_.erase(std::find(ready_nodes_.begin(), ready_nodes_.end(), node));
  n.state = NodeState::kRemoved;
  n.removed_at = now_;
  g.slot_taken[n.slot] = false;
  --g.target;
  provisioned_gpus_ -= g.gpus;
  price_per_ms_ -= g.spec.price_per_hour / static_cast<double>(kHour);
  live_nodes_.erase(node);
  RecordTimeline();
}

double World::TimeStretch(int pod) const { return spec(pod).runs_until_deleted ? 1.0 : pods_[pod].stretch; }

void World::ScheduleFinish(SimPod& p) {
  p.finish = now_ + static_cast<SimTime>(static_cast<double>(p.remaining_ideal) * TimeStretch(&p - pods_.data()));
}

std::vector<int> World::StartPod(int pod, int node, topology::GpuSet gpus) {
  SimPod& p = pods_[pod];
  SimNode& n = nodes_[node];
  const PodClass& c = classes_[p.klass];
  p.phase = PodPhase::kRunning;
  p.unschedulable = p.refused_for_topology = false;
  p.node = node;
  p.gpus = gpus;
  const int64_t set_mbps = gpus.size() > 1 ? n.gpus.topology->quality().Of(gpus).bandwidth_mbps : 0;
  p.stretch = gpus.size() > 1 ? decision::Stretch(c.best_mbps, set_mbps, spec(pod).comm_fraction) : 1;
  if (p.first_start < 0) {
    p.first_start = now_;
    p.best_topology = gpus.size() > 1 && set_mbps >= c.best_mbps;
  }
  n.cpu_used += c.cpu_milli;
  n.memory_used += c.memory_mib;
  n.gpus.ours = n.gpus.ours | gpus;
  n.pods.push_back(pod);
  if (n.scale_up >= 0 && (n.scale_up == p.scale_up || scale_ups_[n.scale_up].for_buffer) && n.first_served < 0) {
    n.first_served = now_;
  }
  if (n.first_pod < 0) n.first_pod = now_;
  allocated_gpus_ += gpus.size();
  pending_.erase(pod);
  ++running_count_;
  std::vector<int> began;
  if (p.gang < 0) {
    ScheduleFinish(p);
    began.push_back(pod);
  } else {
    SimGang& gang = gangs_[p.gang];
    p.finish = -1;  // no progress until every member runs
    partial_gang_gpus_ += gpus.size();
    if (++gang.running == static_cast<int>(gang.members.size())) {
      BeginGangRun(gang);
      began = gang.members;
    }
  }
  RecordTimeline();
  return began;
}

void World::BeginGangRun(SimGang& gang) {
  std::set<int> nodes;
  std::set<std::optional<decision::NvlinkDomain>> domains;
  double slowest = 1;
  for (int member : gang.members) {
    const SimPod& m = pods_[member];
    nodes.insert(m.node);
    domains.insert(nodes_[m.node].domain);
    slowest = std::max(slowest, TimeStretch(member));
    partial_gang_gpus_ -= m.gpus.size();
  }
  // Members on several nodes outside one domain run their collectives over the scale-out network.
  const bool scaled_out = nodes.size() > 1 && (domains.size() > 1 || !domains.begin()->has_value());
  if (scaled_out) {
    const SimPod& first = pods_[gang.members.front()];
    const topology::Topology& node_topology = *nodes_[first.node].gpus.topology;
    if (node_topology.gpu_count() >= 2) {
      slowest = std::max(slowest, decision::Stretch(node_topology.quality().BestBandwidth(2), kScaleOutMbpsPerGpu,
                                                    spec(gang.members.front()).comm_fraction));
    }
  }
  gang.started = now_;
  if (gang.first_started < 0) {
    gang.first_started = now_;
    const std::string& level = spec(gang.members.front()).gang_topology;
    gang.split = (level == "node" && nodes.size() > 1) || (level == "domain" && scaled_out);
  }
  for (int member : gang.members) {
    SimPod& m = pods_[member];
    m.stretch = slowest;  // a replica's run time ignores it (TimeStretch), its slowdown GPU-hours do not
    ScheduleFinish(m);
  }
}

int World::CreateRequest(ProvisioningRequest request) {
  const int index = static_cast<int>(provisioning_requests_.size());
  for (int pod : request.pods) pods_[pod].provisioning_request = index;
  provisioning_requests_.push_back(std::move(request));
  open_requests_.insert(index);
  return index;
}

void World::DeleteRequest(int request) {
  const ProvisioningRequest& r = provisioning_requests_[request];
  for (int pod : r.pods) {
    if (pods_[pod].provisioning_request == request) pods_[pod].provisioning_request = -1;
  }
  open_requests_.erase(request);
}

void World::SetPending(int pod) {
  pods_[pod].phase = PodPhase::kPending;
  pending_.insert(pod);
  RecordTimeline();
}

namespace {
void Release(SimNode& node, const PodClass& klass, int pod, topology::GpuSet gpus) {
  node.cpu_used -= klass.cpu_milli;
  node.memory_used -= klass.memory_mib;
  node.gpus.ours = node.gpus.ours.without(gpus);
  node.pods.erase(std::find(node.pods.begin(), node.pods.end(), pod));
}
}  // namespace

void World::FinishPod(int pod) {
  SimPod& p = pods_[pod];
  Release(nodes_[p.node], classes_[p.klass], pod, p.gpus);
  allocated_gpus_ -= p.gpus.size();
  if (p.gang >= 0) --gangs_[p.gang].running;
  p.phase = PodPhase::kDone;
  p.remaining_ideal = 0;
  --running_count_;
  RecordTimeline();
}

void World::EvictPod(int pod) {
  SimPod& p = pods_[pod];
  Release(nodes_[p.node], classes_[p.klass], pod, p.gpus);
  allocated_gpus_ -= p.gpus.size();
  ++p.evictions;
  auto stop = [&](SimPod& member) {
    member.remaining_ideal = std::max<int64_t>(
        0, static_cast<int64_t>(static_cast<double>(member.finish - now_) / TimeStretch(&member - pods_.data())));
    member.finish = -1;
    ++member.epoch;  // its finish event is stale
  };
  if (p.gang < 0) {
    stop(p);
  } else {
    SimGang& gang = gangs_[p.gang];
    if (gang.started >= 0) {
      // The run stops: every member waits for this one again, holding its GPUs.
      for (int member : gang.members) {
        SimPod& m = pods_[member];
        if (m.phase != PodPhase::kRunning) continue;
        stop(m);
        partial_gang_gpus_ += m.gpus.size();
      }
      gang.started = -1;
    }
    partial_gang_gpus_ -= p.gpus.size();
    --gang.running;
  }
  p.node = -1;
  p.gpus = topology::GpuSet();
  --running_count_;
  SetPending(pod);
}

}  // namespace topofit::sim
