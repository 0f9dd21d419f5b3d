#pragma once

// cluster-autoscaler's price expander, the rule an operator tuning CA for cost picks (expander/price):
// an option is judged by what its nodes cost per hour against what the pods it serves are worth per hour,
// (nodes' price + s) / (pods' worth + s), lower better. Pods are worth their requests at on-demand
// per-resource rates (CA's GCE pricing model, the one with pod prices), s the worth of a 500m, 500 MiB pod,
// so that an option serving almost nothing is not picked for its low price alone. One rule for topofit's
// expander, which uses it for options whose pods need no GPU, and for the bench's model of the stock
// expander.

namespace topofit::decision {

inline constexpr double kCpuCoreHourWorth = 0.033174;  // per core
inline constexpr double kMemoryGibHourWorth = 0.004446;

// What a pod requesting these is worth per hour; GPUs at `gpu_hour` each.
double PodWorthPerHour(double cpu_cores, double memory_gib, int gpus, double gpu_hour);

// (nodes_price + s) / (pods_worth + s).
double PriceRatio(double nodes_price, double pods_worth);

}  // namespace topofit::decision
