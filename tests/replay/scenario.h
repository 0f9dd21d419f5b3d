#pragma once

// Small hand-made workloads for the simulator's tests: node groups of catalog shapes and pods written
// out one by one, so every expected figure can be worked out by hand.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "replay/workload.h"

namespace topofit::sim::testing {

inline NodeGroupSpec Group(std::string name, std::string shape, int gpus, double price, int max_size,
                           int initial_size = 0) {
  NodeGroupSpec group;
  group.name = std::move(name);
  group.shape = std::move(shape);
  group.gpus = gpus;
  group.cpu_milli = 96000;
  group.memory_mib = 768 * 1024;
  group.min_size = 0;
  group.max_size = max_size;
  group.initial_size = initial_size;
  group.price_per_hour = price;
  group.provision_delay_min = 5 * kMinute;
  group.provision_delay_max = 5 * kMinute;
  return group;
}

inline PodSpec Pod(std::string name, SimTime arrival, SimTime duration, int gpus) {
  PodSpec pod;
  pod.name = std::move(name);
  pod.arrival = arrival;
  pod.duration = duration;
  pod.gpus = gpus;
  pod.cpu_milli = 4000;
  pod.memory_mib = 16 * 1024;
  return pod;
}

// A pod that needs an NVLink set: `topofit.io/min-link: NV`, policy required.
inline PodSpec NvPod(std::string name, SimTime arrival, SimTime duration, int gpus, double comm_fraction = 0.3) {
  PodSpec pod = Pod(std::move(name), arrival, duration, gpus);
  pod.min_link = "NV";
  pod.topology_policy = "required";
  pod.comm_fraction = comm_fraction;
  return pod;
}

// GB200 NVL72 compute trays (4 GPUs each) whose NVLink domains hold `nodes_per_domain` of them.
inline NodeGroupSpec RackGroup(std::string name, int nodes_per_domain, int max_size, int initial_size = 0) {
  NodeGroupSpec group = Group(std::move(name), "gb200-nvl72-node", 4, 4 * 10.0, max_size, initial_size);
  group.nodes_per_domain = nodes_per_domain;
  return group;
}

// The `members` pods of gang `name`, each of `gpus` GPUs, that require one NVLink domain; arriving at
// `arrival` and running `duration` once all run.
inline std::vector<PodSpec> DomainGang(const std::string& name, int members, int gpus, SimTime arrival,
                                       SimTime duration, double comm_fraction = 0.2) {
  std::vector<PodSpec> pods;
  for (int i = 0; i < members; ++i) {
    PodSpec pod = Pod(absl::StrCat(name, "-", i), arrival, duration, gpus);
    pod.gang = name;
    pod.gang_size = members;
    pod.gang_topology = "domain";
    pod.comm_fraction = comm_fraction;
    pods.push_back(std::move(pod));
  }
  return pods;
}

}  // namespace topofit::sim::testing
