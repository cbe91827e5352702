//===- CudaBackend.h - the CUDA backend's internal classes ------*- C++ -*-===//
//
// Private to runtime/cuda: the device state shared by a CudaDevice and the
// buffers, streams and events it hands out, and the stream and event classes
// the kernels and the NCCL communicator look into.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_CUDABACKEND_H
#define PARTITION_RUNTIME_CUDA_CUDABACKEND_H

#include "partition/runtime/Device.h"
#include "partition/runtime/cuda/CudaStatus.h"

#include "CudaKernelLaunch.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace partition::runtime::cuda {

/// Stream-ordered scratch memory from the device's pool, freed (in stream
/// order) when it goes out of scope.
class Scratch {
public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  ~Scratch() {
    if (data_)
      (void)cudaFreeAsync(data_, stream_);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  Status allocate(size_t bytes, cudaMemPool_t pool) {
    PARTITION_CUDA_CHECK(cudaMallocFromPoolAsync(&data_, bytes, pool, stream_));
    return Status::ok();
  }
  void *data() const { return data_; }

private:
  cudaStream_t stream_;
  void *data_ = nullptr;
};

/// State of one GPU shared by its CudaDevice and everything the device hands
/// out, so that a buffer or stream that outlives the device stays valid.
class DeviceState {
public:
  /// Creates the state of GPU `ordinal`, which must be current.
  static StatusOr<std::shared_ptr<DeviceState>> create(int ordinal);
  ~DeviceState();

  /// The CUDA device number.
  int ordinal() const { return ordinal_; }
  /// "cuda:<ordinal> (<device name>)".
  const std::string &name() const { return name_; }
  /// Streaming multiprocessors, which size the kernels' grids.
  int multiProcessorCount() const { return multiProcessorCount_; }
  /// Makes this GPU current for the calling thread.
  Status makeCurrent() const;

  /// Counts `bytes` allocated through the device (and the peak).
  void addAllocation(size_t bytes);
  /// Counts `bytes` freed.
  void removeAllocation(size_t bytes);
  /// Bytes allocated now, and the most ever.
  size_t allocatedBytes() const { return allocated_.load(); }
  size_t peakAllocatedBytes() const { return peak_.load(); }

  /// Where kernels report errors found in the data.
  ErrorSink errorSink() const { return {record_, deviceFlag_}; }
  /// Stream-ordered pool for the kernels' scratch memory (attention scores,
  /// per-row losses); kept between steps rather than returned to the driver.
  cudaMemPool_t scratchPool() const { return scratchPool_; }

  /// Records an error found asynchronously (an aborted communicator). It is
  /// sticky: every later synchronization on this device reports it.
  void reportAsyncError(const Status &status);
  /// The errors found since the last call: the sticky error if any, else an
  /// InvalidArgument naming the first index, label or divisor a kernel found
  /// wrong (cleared once reported), else OK. Call after a stream or event
  /// synchronization: the kernels that report have finished by then.
  Status takeErrors();

private:
  DeviceState() = default;

  int ordinal_ = 0;
  std::string name_;
  int multiProcessorCount_ = 1;
  std::atomic<size_t> allocated_{0};
  std::atomic<size_t> peak_{0};
  DeviceErrorRecord *record_ = nullptr;
  volatile int *hostFlag_ = nullptr;
  volatile int *deviceFlag_ = nullptr;
  cudaMemPool_t scratchPool_ = nullptr;
  std::mutex mutex_;
  Status stickyError_;
};

/// A cudaStream_t (non-blocking with respect to the legacy default stream).
class CudaStream final : public Stream {
public:
  /// Takes ownership of `stream`, a stream of the GPU behind `state`.
  CudaStream(std::shared_ptr<DeviceState> state, cudaStream_t stream)
      : state_(std::move(state)), stream_(stream) {}
  ~CudaStream() override;

  /// Waits for the stream, then reports the device's asynchronous errors.
  Status synchronize() override;
  /// The cudaStream_t.
  void *native() override { return stream_; }

  /// The cudaStream_t, typed.
  cudaStream_t get() const { return stream_; }
  /// The GPU the stream belongs to.
  DeviceState &state() const { return *state_; }
  /// The cuBLASLt workspace of this stream (kWorkspaceBytes), allocated at
  /// first use. One per stream, so GEMMs on different streams never share it.
  StatusOr<void *> workspace();
  static constexpr size_t kWorkspaceBytes = 32u << 20;

private:
  std::shared_ptr<DeviceState> state_;
  cudaStream_t stream_;
  void *workspace_ = nullptr;
};

/// A cudaEvent_t without timing.
class CudaEvent final : public Event {
public:
  /// Takes ownership of `event`, an event of the GPU behind `state`.
  CudaEvent(std::shared_ptr<DeviceState> state, cudaEvent_t event)
      : state_(std::move(state)), event_(event) {}
  ~CudaEvent() override;

  /// cudaEventRecord on `stream` (a CUDA stream).
  Status record(Stream &stream) override;
  /// cudaStreamWaitEvent: `stream` waits without blocking the host.
  Status waitOn(Stream &stream) override;
  /// Waits for the event, then reports the device's asynchronous errors.
  Status synchronize() override;

private:
  std::shared_ptr<DeviceState> state_;
  cudaEvent_t event_;
};

/// The CUDA stream behind `stream`, or an error naming `what` when `stream`
/// is not a stream of a GPU of this backend.
StatusOr<CudaStream *> asCudaStream(Stream &stream, const char *what);

/// The state of `device` when it is a CUDA device, else null.
std::shared_ptr<DeviceState> cudaDeviceState(Device &device);

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDABACKEND_H
