#include "decision/price_ratio.h"

namespace topofit::decision {

double PodWorthPerHour(double cpu_cores, double memory_gib, int gpus, double gpu_hour) {
  return cpu_cores * kCpuCoreHourWorth + memory_gib * kMemoryGibHourWorth + gpus * gpu_hour;
}

double PriceRatio(double nodes_price, double pods_worth) {
  const double stabiliser = PodWorthPerHour(0.5, 500.0 / 1024, 0, 0);
  return (nodes_price + stabiliser) / (pods_worth + stabiliser);
}

}  // namespace topofit::decision
