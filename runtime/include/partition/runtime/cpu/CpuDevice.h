//===- CpuDevice.h - the host CPU as a device -------------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_CPU_CPUDEVICE_H
#define PARTITION_RUNTIME_CPU_CPUDEVICE_H

#include "partition/runtime/Device.h"

#include <memory>

namespace partition::runtime::cpu {

/// The host as a device: 64-byte aligned host memory, streams that run work
/// when it is enqueued, and the CPU kernels (OpenBLAS with `blasThreads`
/// threads for GEMMs; 1 when ranks are threads of one process).
std::unique_ptr<Device> createCpuDevice(int blasThreads = 1);

} // namespace partition::runtime::cpu

#endif // PARTITION_RUNTIME_CPU_CPUDEVICE_H
