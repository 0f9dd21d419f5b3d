#pragma once

// Wait or place now (issue 13). A multi-GPU pod that prefers a topology and for which a scale-up is
// already coming (the expander chose a group whose new nodes give it that topology, and the new capacity
// is held for it) may find, before those nodes are up, a node it fits by count only on a poorer set — a
// pod finished there. Stock kube-scheduler places it there at once: it then runs slower for as long as it
// runs, and the node grown for it comes up to nobody (idle until scale-down removes it, 10 minutes later).
// topofit instead weighs the two:
//
//   wait    = the expected rest of the boot: max(0, expected_boot - time since the scale-up)
//   penalty = (stretch - 1) x expected runtime, stretch = decision::Stretch(best set the coming nodes give,
//             the set here, AssumedCommFraction): the run time lost on the poorer set
//
// and refuses the poorer node while wait < penalty, never longer than max_wait after the scale-up (then
// the capacity is late — CA gives a node up at 15 minutes — and the pod takes what there is). A pod that
// does not say how long it runs (kube::kExpectedRuntimeAnnotation) is taken to run as long as it is left
// (a service replica): any bounded wait pays for a slowdown that lasts. A set that meets the pod's ask,
// a pod that asks for nothing, or one that requires its topology (it never takes a poorer set) never waits
// here.

#include <cstdint>

#include "absl/time/time.h"
#include "decision/pod_demand.h"

namespace topofit::decision {

struct CapacityWaitPolicy {
  // How long a scale-up takes to give a Ready node, as the operator observes it (instance launch, boot,
  // driver and GPU Feature Discovery labels).
  absl::Duration expected_boot = absl::Minutes(5);
  // The longest a pod waits after its scale-up; zero turns waiting off.
  absl::Duration max_wait = absl::Minutes(10);
};

// Whether the pod should wait for the capacity coming for it rather than take a set of `set_mbps` now,
// `since_scale_up` after the expander chose the group whose nodes give `coming_mbps` for its size.
bool WaitForComingCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t coming_mbps,
                           absl::Duration since_scale_up, const CapacityWaitPolicy& policy);

// Wait for capacity still to be asked for. The same pod, with no scale-up coming for it, may refuse the
// poorer set and have capacity that gives its ask requested (a ProvisioningRequest, and a preference the
// expander ranks groups by) when a node shape the cluster has gives, empty, a set of `obtainable_mbps`
// that meets its ask, and
//
//   expected_boot < (stretch - 1) x expected runtime    (the whole boot: nothing is asked for yet)
//
// for `since_first_refusal` < max_wait. Only a pod that says how long it runs (kExpectedRuntimeAnnotation)
// asks: for one that does not, waiting for a node nobody has asked for yet was measured to cost 2- and
// 4-GPU pods +150..+194% p95 on openb and to gain no slowdown (bench/RESULTS.md, session 10).
bool AskForCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t obtainable_mbps,
                    absl::Duration since_first_refusal, const CapacityWaitPolicy& policy);

}  // namespace topofit::decision
