//===- Device.h - devices, buffers, streams and events ----------*- C++ -*-===//
//
// The backend-neutral view of one accelerator (or the host CPU). A Device
// allocates Buffers and creates Streams; work enqueued on one Stream runs in
// order, and Events order Streams against each other. On the CPU a Stream runs
// work at once when it is enqueued.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_DEVICE_H
#define PARTITION_RUNTIME_DEVICE_H

#include "partition/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace partition::runtime {

class Kernels;

/// Device memory. Freed when the Buffer is destroyed.
class Buffer {
public:
  virtual ~Buffer() = default;
  virtual void *data() = 0;
  virtual size_t size() const = 0;
};

/// An ordered queue of work on a device.
class Stream {
public:
  virtual ~Stream() = default;
  /// Blocks the host until all work enqueued so far has finished.
  virtual Status synchronize() = 0;
  /// The backend's handle (a cudaStream_t), or nullptr on the CPU.
  virtual void *native() { return nullptr; }
};

/// A point in a stream's work that other streams (or the host) can wait for.
class Event {
public:
  virtual ~Event() = default;
  /// Marks the current end of `stream`'s work.
  virtual Status record(Stream &stream) = 0;
  /// Makes `stream` wait, without blocking the host, for the recorded point.
  virtual Status waitOn(Stream &stream) = 0;
  /// Blocks the host until the recorded point is reached.
  virtual Status synchronize() = 0;
};

/// One device.
class Device {
public:
  virtual ~Device() = default;
  /// e.g. "cpu" or "cuda:0 (NVIDIA H200)".
  virtual std::string name() const = 0;
  /// True when the host can read and write device memory directly.
  virtual bool isHost() const = 0;
  virtual StatusOr<std::unique_ptr<Buffer>> allocate(size_t bytes) = 0;
  virtual StatusOr<std::unique_ptr<Stream>> createStream() = 0;
  virtual StatusOr<std::unique_ptr<Event>> createEvent() = 0;
  /// Copies between host and device memory, ordered on `stream`.
  virtual Status copyToDevice(void *deviceDst, const void *hostSrc,
                              size_t bytes, Stream &stream) = 0;
  virtual Status copyToHost(void *hostDst, const void *deviceSrc, size_t bytes,
                            Stream &stream) = 0;
  /// Copies within device memory, ordered on `stream`.
  virtual Status copy(void *dst, const void *src, size_t bytes,
                      Stream &stream) = 0;
  /// Bytes currently allocated through this device, and the most ever.
  virtual size_t allocatedBytes() const = 0;
  virtual size_t peakAllocatedBytes() const = 0;
  /// The device's memory in bytes (for a CPU, the machine's), or 0 where
  /// unknown.
  virtual size_t memoryCapacity() const { return 0; }
  /// The kernels that run on this device.
  virtual Kernels &kernels() = 0;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_DEVICE_H
