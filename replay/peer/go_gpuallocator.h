#pragma once

// A RE-IMPLEMENTATION, for benchmarks only, of NVIDIA go-gpuallocator's BestEffortPolicy: the GPU-set
// heuristic that NVIDIA's Kubernetes device plugin runs in GetPreferredAllocation. It is not NVIDIA's code:
// it was written from the algorithm as go-gpuallocator documents and implements it
// (github.com/NVIDIA/go-gpuallocator: gpuallocator/besteffort_policy.go, gpuallocator/device.go,
// internal/links/device.go) so that topofit's allocator can be compared with it on the same topologies.
// The servers never link it (target `topofit_peer_gpuallocator`); the bench replay uses it as the baseline
// world's device plugin.
//
// The policy, as reproduced here:
//  1. Pair score: a PCIe term from the NVML common ancestor of the two GPUs (cross-CPU 10, same CPU 20,
//     host bridge 30, multiple switches 40, single switch 50, same board 60) plus 100 per NVLink between
//     them, counted by matching each NVLink's remote PCI address against the peer GPU. Its score table
//     stops at twelve links: a pair with 13..18 direct links gets no NVLink points.
//  2. It pads the free GPUs (ascending index) with empty slots to a multiple of k and enumerates every
//     partition of them into blocks of k, each block holding either all the padding or none. A
//     partition's score is the sum over its blocks of the sum of their pair scores; the first partition
//     with the highest score wins.
//  3. From that partition it returns the first block with the highest score. With no required GPUs
//     (what is modelled here) that may be the padded block, which holds fewer than k GPUs: e.g. free
//     {a,b,c,d,e}, k = 3, with d-e an NVLink pair outscoring every full triple (the bug open pull request
//     NVIDIA/go-gpuallocator#80 fixes; upstream's Allocator then panics on the empty slot).
//
// How topofit's model maps onto its inputs:
//  - PIX -> single switch (50), PXB -> multiple switches (40), PHB -> host bridge (30),
//    NODE -> same CPU (20), SYS -> cross CPU (10).
//  - NV# not through a switch -> 100 x # (0 beyond 12), plus a PCIe term: `nvidia-smi topo -m` prints NV#
//    instead of the PCIe level underneath, so the model does not keep it; the peer gets cross CPU (10)
//    when both GPUs' NUMA nodes are known and differ, same CPU (20) otherwise.
//  - NV# through an NVSwitch -> the PCIe term only. NVML reports the NVSwitch as the remote end of such a
//    link, never the peer GPU, so go-gpuallocator sees no NVLink at all on NVSwitch systems (its
//    GetNVLink carries "TODO: Handle NVSwitch semantics").
//  - The free GPUs are passed in ascending index order (what go-gpuallocator's own Allocator does; the
//    device plugin passes kubelet's order, which can change which of equally scored sets wins).
//
// The enumeration is the policy's, in its order, so ties break as they do there. Timings here are a lower
// bound for the peer: the bookkeeping is C++ (bitmasks, running sums, no allocation), and the blocks the
// policy builds only to reject (those holding part of the padding) are never built; the Go code visits
// them all, e.g. C(29,14) = 77.6 million for 15 of 16 free GPUs.

#include "topology/gpu_set.h"
#include "topology/ids.h"
#include "topology/topology.h"

namespace topofit::bench {

// The peer's score for a pair of distinct GPUs of `topology` (0 for a == b).
int PeerPairScore(const topology::Topology& topology, topology::GpuId a, topology::GpuId b);

// The set the peer picks for `k` GPUs out of `free`, with no GPUs required. Empty when k <= 0 or fewer
// than k GPUs are free. Holds fewer than k GPUs when the peer returns the padded block (see above); a
// caller comparing quality must check the size.
topology::GpuSet PeerBestEffort(const topology::Topology& topology, topology::GpuSet free, int k);

}  // namespace topofit::bench
