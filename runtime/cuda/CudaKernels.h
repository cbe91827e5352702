//===- CudaKernels.h - the CUDA backend's Kernels ---------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_CUDA_CUDAKERNELS_H
#define PARTITION_RUNTIME_CUDA_CUDAKERNELS_H

#include "partition/runtime/Kernels.h"

#include <memory>

namespace partition::runtime::cuda {

class DeviceState;

/// The kernels of the GPU behind `state`, which must be current: every
/// plan::OpKind, with GEMMs through cuBLASLt. run() enqueues work and never
/// waits for the device; an index or label out of range is clamped on the
/// device and reported by the next synchronization of the device's streams
/// or events.
StatusOr<std::unique_ptr<Kernels>>
createCudaKernels(std::shared_ptr<DeviceState> state);

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDAKERNELS_H
