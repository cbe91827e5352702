//===- Backends.h - the backends this build has ---------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_BACKENDS_H
#define PARTITION_RUNTIME_BACKENDS_H

#include "partition/runtime/Device.h"

#include <memory>
#include <string>
#include <vector>

namespace partition::runtime {

/// Backends compiled into this build ("cpu", and "cuda" when built with the
/// CUDA toolkit), whether or not a device is present.
std::vector<std::string> compiledBackends();

/// Backends with a usable device now: "cpu" always; "cuda" when a GPU and a
/// driver are present.
std::vector<std::string> availableBackends();

/// Creates device `ordinal` of backend `kind`. For "cpu", `ordinal` is
/// ignored and the device's kernels use one BLAS thread (ranks are threads).
/// Unavailable when the backend is not compiled in or has no such device.
StatusOr<std::unique_ptr<Device>> createDevice(const std::string &kind,
                                               int ordinal = 0);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_BACKENDS_H
