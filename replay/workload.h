#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace topofit::sim {

// Simulated time in milliseconds since the start of the replay. Integer so that a run is exactly
// reproducible for a seed.
using SimTime = int64_t;
inline constexpr SimTime kSecond = 1000;
inline constexpr SimTime kMinute = 60 * kSecond;
inline constexpr SimTime kHour = 60 * kMinute;
inline constexpr SimTime kDay = 24 * kHour;

// One pod of a workload, as the replay submits it.
struct PodSpec {
  std::string name;
  SimTime arrival = 0;   // when the pod is created (queued for scheduling)
  // How long the pod runs once started, on the best GPU set of its size the node could give. The
  // slowdown model (slowdown.h) stretches it for a poorer set.
  SimTime duration = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;  // whole GPUs requested (nvidia.com/gpu); 0 for a pod without GPUs
  // The GPU products the pod may run on (node selector on nvidia.com/gpu.product, values as the node
  // groups label them); empty: any.
  std::vector<std::string> gpu_products;
  // topofit.io annotations (README.md, "Pod annotations"); empty strings when absent.
  std::string min_link;            // e.g. "NV"
  std::string min_bandwidth;       // e.g. "200GB/s"
  std::string topology_policy;     // "required" or "preferred"
  int priority = 0;
  // Share of the pod's running time spent in GPU-to-GPU collectives, 0..1: what a poor GPU set slows down
  // (slowdown.h). 0 for single-GPU pods.
  double comm_fraction = 0;
  std::string kind;  // free-form class for the report, e.g. "training", "inference", "trace"
  // A service replica runs until it is scaled down, however fast its GPUs are: a poorer set costs it
  // throughput (counted in the report's slowdown GPU-hours), not run time. A batch pod (false) runs longer.
  bool runs_until_deleted = false;
  // What the pod says of its run time (topofit.io/expected-runtime) when > 0; 0: it says nothing.
  SimTime expected_runtime = 0;
  // cluster-autoscaler.kubernetes.io/safe-to-evict: false keeps CA's scale-down from draining its node.
  bool safe_to_evict = true;
  // The gang the pod belongs to (topofit.io/gang and topofit.io/gang-size; docs/gangs.md): its members
  // share every other field and arrive together, and its run makes progress only while every member runs
  // (a distributed job waits for all its ranks). Empty: no gang.
  std::string gang;
  int gang_size = 0;
  // What the gang's members must share (topofit.io/gang-required-topology or -preferred-topology):
  // "domain" or "node" with `gang_topology_required`; empty: nothing. A gang spread over several NVLink
  // domains runs its collectives over the network between them, `comm_fraction` of its time (gang.h).
  std::string gang_topology;
  bool gang_topology_required = true;
};

// A cluster-autoscaler node group: identical nodes of one catalog shape.
// Its nodes' topology comes from the labels a real node of it would carry, through the same
// topology::TopologyFromLabels the extender and the expander use: `node.kubernetes.io/instance-type` =
// `shape` when set, `nvidia.com/gpu.product` = `gpu_product`, `nvidia.com/gpu.count` = `gpus` (an unknown
// board falls back to PCIe-only, as in a real cluster).
struct NodeGroupSpec {
  std::string name;
  std::string shape;            // a topology catalog shape or alias (topology/catalog.h); may be empty
  std::string gpu_product;      // the nvidia.com/gpu.product label; empty: the shape's
  int gpus = 0;                 // GPUs per node (0: a node group without GPUs)
  // Taints its nodes carry, as `kubectl taint` writes them: "key=value:Effect" or "key:Effect".
  std::vector<std::string> taints;
  int64_t cpu_milli = 0;        // allocatable per node
  int64_t memory_mib = 0;       // allocatable per node
  int min_size = 0;
  int max_size = 0;
  int initial_size = 0;         // nodes Ready at time 0
  double price_per_hour = 0;    // per node, in dollars
  // From the scale-up request to Ready with allocatable GPUs: uniform in [min, max].
  SimTime provision_delay_min = 3 * kMinute;
  SimTime provision_delay_max = 10 * kMinute;
  // Share of requested nodes that never become Ready (a launch failure or a capacity stockout): CA deletes
  // them after its max node provision time and backs the group off.
  double provision_failure_rate = 0;
  // Nodes per multi-node NVLink domain (a GB200 NVL72 rack: 18); 0: its nodes form none. A node takes the
  // lowest slot free in its group, and slot / nodes_per_domain is its domain, named by `domain_label`
  // ("<group>.<domain>", as a clique id) on the node and announced on the template with
  // topofit.io/nodes-per-domain: the hardware is fixed, so a new node fills the emptiest place a removed
  // one left first.
  int nodes_per_domain = 0;
  std::string domain_label = "nvidia.com/gpu.clique";
};

// What a replay runs: the cluster's node groups and the pods, sorted by arrival (then name).
struct Workload {
  std::string name;         // e.g. "openb:openb_pod_list_default.csv" or "synthetic:agentic"
  std::string description;  // the assumptions that turned the source into this, for the report
  std::vector<NodeGroupSpec> groups;
  std::vector<PodSpec> pods;
  // Where measuring begins (summary.h, MeasuringWindow): 0, or the end of a lead-in (workloads/lead_in.h)
  // during which the cluster came to run what it was running when the trace begins.
  SimTime measure_from = 0;
};

}  // namespace topofit::sim
