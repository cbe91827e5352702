//===- CpuKernels.h - the CPU backend's compute kernels ---------*- C++ -*-===//
//
// Private to the CPU backend: CpuDevice owns one instance and hands it out
// through Device::kernels().
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CPU_CPUKERNELS_H
#define PARTITION_RUNTIME_CPU_CPUKERNELS_H

#include "partition/runtime/Kernels.h"

#include <memory>

namespace partition::runtime::cpu {

/// Creates the CPU kernels: every plan::OpKind on contiguous row-major tensors
/// in host memory, run at once on the calling thread (the stream argument of
/// Kernels::run is not consulted). GEMMs go to OpenBLAS, whose thread count
/// the device sets. The object holds no mutable state, so ranks running as
/// threads may share one.
std::unique_ptr<Kernels> createCpuKernels();

} // namespace partition::runtime::cpu

#endif // PARTITION_RUNTIME_CPU_CPUKERNELS_H
