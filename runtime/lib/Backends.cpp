//===- Backends.cpp - choosing a backend ----------------------------------===//

#include "partition/runtime/Backends.h"
#include "partition/runtime/cpu/CpuDevice.h"
#ifdef PARTITION_HAVE_CUDA
#include "partition/runtime/cuda/CudaDevice.h"
#endif

using namespace partition::runtime;

std::vector<std::string> partition::runtime::compiledBackends() {
#ifdef PARTITION_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::vector<std::string> partition::runtime::availableBackends() {
  std::vector<std::string> result = {"cpu"};
#ifdef PARTITION_HAVE_CUDA
  if (cuda::cudaDeviceCount() > 0)
    result.push_back("cuda");
#endif
  return result;
}

StatusOr<std::unique_ptr<Device>>
partition::runtime::createDevice(const std::string &kind, int ordinal) {
  if (kind == "cpu")
    return cpu::createCpuDevice(/*blasThreads=*/1);
#ifdef PARTITION_HAVE_CUDA
  if (kind == "cuda")
    return cuda::createCudaDevice(ordinal);
#endif
  return PARTITION_ERROR(Unavailable, "backend \"", kind,
                         "\" is not compiled into this build");
}
