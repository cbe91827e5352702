//===- NcclCommunicator.h - collectives over NCCL ---------------*- C++ -*-===//
//
// One process per GPU. Each group's NCCL unique id is published by the
// group's first rank through the rendezvous Store and read by the others.
// Collectives run on a communication stream of their own, ordered with events
// after the work already enqueued on the caller's stream and before the work
// enqueued after them, so the host never waits and communication overlaps
// with compute on other streams.
//
// Failure handling: communicators are non-blocking (NCCL's `blocking = 0`).
// Every call that NCCL leaves in progress is polled with a deadline, and a
// watchdog thread follows each enqueued operation until its completion event
// fires. When NCCL reports an asynchronous error or an operation outlives the
// deadline, every communicator of the factory is aborted (ncclCommAbort), the
// device records the error so that its next Stream/Event::synchronize returns
// it, and every later call on those communicators returns Aborted.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define PARTITION_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "partition/runtime/Communicator.h"
#include "partition/runtime/Device.h"

#include <chrono>
#include <memory>
#include <string>

namespace partition::runtime::cuda {

/// Settings of an NCCL communicator factory.
struct NcclOptions {
  /// How long communicator creation, an enqueue NCCL leaves in progress, and
  /// each enqueued operation may take before everything is aborted. An
  /// operation's deadline counts from its enqueue, so it covers the work
  /// queued before it on the caller's stream too.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  /// How long a rank waits for its group's unique id in the Store.
  std::chrono::milliseconds rendezvousTimeout{std::chrono::minutes(5)};
  /// Prefix of the Store keys this factory writes ("<prefix>/<key>").
  std::string keyPrefix = "partition/nccl";
};

/// Makes NCCL communicators for rank `worldRank` of `worldSize` on `device`,
/// which must be a CUDA device (createCudaDevice). `store` and `device` must
/// outlive the factory and every communicator it creates.
StatusOr<std::unique_ptr<CommunicatorFactory>>
createNcclCommunicatorFactory(Store &store, int worldRank, int worldSize,
                              Device &device, NcclOptions options = {});

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
