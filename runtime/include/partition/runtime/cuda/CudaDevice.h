//===- CudaDevice.h - an NVIDIA GPU as a device -----------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_CUDA_CUDADEVICE_H
#define PARTITION_RUNTIME_CUDA_CUDADEVICE_H

#include "partition/runtime/Device.h"

#include <memory>

namespace partition::runtime::cuda {

/// Number of usable GPUs; 0 when there is no driver or device (any error at
/// discovery counts as "no GPU").
int cudaDeviceCount();

/// GPU `ordinal`: cudaMalloc'd buffers, CUDA streams and events, cuBLAS(Lt)
/// GEMMs and CUDA kernels. Unavailable when there is no such GPU.
StatusOr<std::unique_ptr<Device>> createCudaDevice(int ordinal);

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDADEVICE_H
