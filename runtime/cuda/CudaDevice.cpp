//===- CudaDevice.cpp - an NVIDIA GPU as a device -------------------------===//
//
// Buffers are cudaMalloc'd, streams are non-blocking cudaStream_t, events are
// cudaEvent_t without timing. Errors that kernels find (an index out of
// range) and errors that communicators find (an abort) are kept in the
// device state and reported by the next synchronization, so that run() never
// waits for the device.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/cuda/CudaDevice.h"
#include "CudaBackend.h"
#include "CudaKernels.h"

#include <cstring>
#include <limits>

using namespace partition::runtime;
using namespace partition::runtime::cuda;

//===----------------------------------------------------------------------===//
// DeviceState
//===----------------------------------------------------------------------===//

StatusOr<std::shared_ptr<DeviceState>> DeviceState::create(int ordinal) {
  std::shared_ptr<DeviceState> state(new DeviceState());
  state->ordinal_ = ordinal;
  cudaDeviceProp prop;
  PARTITION_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  state->name_ = detail::concat("cuda:", ordinal, " (", prop.name, ")");
  state->multiProcessorCount_ = prop.multiProcessorCount;

  // Kernels claim the error record (device memory) with an atomic and set
  // the flag, which lives in pinned host memory mapped into the device's
  // address space: the host reads it after a synchronization without a copy.
  void *record = nullptr;
  PARTITION_CUDA_CHECK(cudaMalloc(&record, sizeof(DeviceErrorRecord)));
  state->record_ = static_cast<DeviceErrorRecord *>(record);
  PARTITION_CUDA_CHECK(cudaMemset(record, 0, sizeof(DeviceErrorRecord)));
  void *flag = nullptr;
  PARTITION_CUDA_CHECK(cudaHostAlloc(
      &flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  state->hostFlag_ = static_cast<volatile int *>(flag);
  *state->hostFlag_ = 0;
  void *deviceFlag = nullptr;
  PARTITION_CUDA_CHECK(cudaHostGetDevicePointer(&deviceFlag, flag, 0));
  state->deviceFlag_ = static_cast<volatile int *>(deviceFlag);

  // A pool of our own for scratch memory, so that the release threshold does
  // not change the default pool other code in the process may use.
  cudaMemPoolProps props;
  std::memset(&props, 0, sizeof(props));
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ordinal;
  PARTITION_CUDA_CHECK(cudaMemPoolCreate(&state->scratchPool_, &props));
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  PARTITION_CUDA_CHECK(cudaMemPoolSetAttribute(
      state->scratchPool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  return state;
}

DeviceState::~DeviceState() {
  if (makeCurrent().isOk()) {
    if (scratchPool_)
      (void)cudaMemPoolDestroy(scratchPool_);
    if (record_)
      (void)cudaFree(record_);
    if (hostFlag_)
      (void)cudaFreeHost(const_cast<int *>(hostFlag_));
  }
}

Status DeviceState::makeCurrent() const {
  int current = -1;
  PARTITION_CUDA_CHECK(cudaGetDevice(&current));
  if (current != ordinal_)
    PARTITION_CUDA_CHECK(cudaSetDevice(ordinal_));
  return Status::ok();
}

void DeviceState::addAllocation(size_t bytes) {
  size_t now = allocated_.fetch_add(bytes) + bytes;
  size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void DeviceState::removeAllocation(size_t bytes) {
  allocated_.fetch_sub(bytes);
}

void DeviceState::reportAsyncError(const Status &status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stickyError_.isOk())
    stickyError_ = status;
}

Status DeviceState::takeErrors() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stickyError_.isOk())
      return stickyError_;
  }
  if (!*hostFlag_)
    return Status::ok();
  DeviceErrorRecord record;
  PARTITION_RETURN_IF_ERROR(makeCurrent());
  PARTITION_CUDA_CHECK(
      cudaMemcpy(&record, record_, sizeof(record), cudaMemcpyDeviceToHost));
  PARTITION_CUDA_CHECK(cudaMemset(record_, 0, sizeof(record)));
  *hostFlag_ = 0;
  switch (record.kind) {
  case kGatherIndexOutOfRange:
    return PARTITION_ERROR(InvalidArgument, "Gather: index ", record.value,
                           " at position ", record.position, " is outside [0, ",
                           record.limit, ") (found on ", name_,
                           ", which read the nearest valid index)");
  case kLabelOutOfRange:
    return PARTITION_ERROR(InvalidArgument, "SoftmaxCrossEntropy: label ",
                           record.value, " at position ", record.position,
                           " is outside [0, ", record.limit, ") (found on ",
                           name_, ", which read the nearest valid class)");
  case kScatterIndexOutOfRange:
    return PARTITION_ERROR(InvalidArgument, "ScatterAdd: index ", record.value,
                           " at position ", record.position, " is outside [0, ",
                           record.limit, ") (found on ", name_,
                           ", which skipped it)");
  case kExpertIndexOutOfRange:
    return PARTITION_ERROR(InvalidArgument, "routing: expert index ",
                           record.value, " at position ", record.position,
                           " is outside [0, ", record.limit, ") (found on ",
                           name_, ", which skipped the slot)");
  case kIntegerDivisionByZero:
    return PARTITION_ERROR(InvalidArgument,
                           "Div: integer division by zero: divisor at "
                           "position ",
                           record.position, " is 0 (found on ", name_,
                           ", which wrote 0)");
  default:
    return PARTITION_ERROR(Internal, "a kernel on ", name_,
                           " reported error kind ", record.kind);
  }
}

//===----------------------------------------------------------------------===//
// Buffers, streams and events
//===----------------------------------------------------------------------===//

namespace {

/// cudaMalloc'd memory, counted in the device's allocated bytes.
class CudaBuffer final : public Buffer {
public:
  CudaBuffer(std::shared_ptr<DeviceState> state, void *data, size_t size)
      : state_(std::move(state)), data_(data), size_(size) {
    state_->addAllocation(size_);
  }
  ~CudaBuffer() override {
    if (data_ && state_->makeCurrent().isOk())
      (void)cudaFree(data_);
    state_->removeAllocation(size_);
  }
  void *data() override { return data_; }
  size_t size() const override { return size_; }

private:
  std::shared_ptr<DeviceState> state_;
  void *data_;
  size_t size_;
};

} // namespace

CudaStream::~CudaStream() {
  if (state_->makeCurrent().isOk()) {
    if (workspace_) {
      // The workspace may still be in use by work on this stream.
      (void)cudaStreamSynchronize(stream_);
      (void)cudaFree(workspace_);
    }
    (void)cudaStreamDestroy(stream_);
  }
}

Status CudaStream::synchronize() {
  PARTITION_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return state_->takeErrors();
}

StatusOr<void *> CudaStream::workspace() {
  if (!workspace_) {
    PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
    PARTITION_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
  }
  return workspace_;
}

CudaEvent::~CudaEvent() {
  if (state_->makeCurrent().isOk())
    (void)cudaEventDestroy(event_);
}

Status CudaEvent::record(Stream &stream) {
  PARTITION_ASSIGN_OR_RETURN(CudaStream * cudaStream,
                             asCudaStream(stream, "Event::record"));
  PARTITION_CUDA_CHECK(cudaEventRecord(event_, cudaStream->get()));
  return Status::ok();
}

Status CudaEvent::waitOn(Stream &stream) {
  PARTITION_ASSIGN_OR_RETURN(CudaStream * cudaStream,
                             asCudaStream(stream, "Event::waitOn"));
  PARTITION_CUDA_CHECK(cudaStreamWaitEvent(cudaStream->get(), event_, 0));
  return Status::ok();
}

Status CudaEvent::synchronize() {
  PARTITION_CUDA_CHECK(cudaEventSynchronize(event_));
  return state_->takeErrors();
}

StatusOr<CudaStream *> cuda::asCudaStream(Stream &stream, const char *what) {
  auto *cudaStream = dynamic_cast<CudaStream *>(&stream);
  if (!cudaStream)
    return PARTITION_ERROR(InvalidArgument, what,
                           ": the stream is not a CUDA stream");
  return cudaStream;
}

//===----------------------------------------------------------------------===//
// CudaDevice
//===----------------------------------------------------------------------===//

namespace {

class CudaDevice final : public Device {
public:
  CudaDevice(std::shared_ptr<DeviceState> state,
             std::unique_ptr<Kernels> kernels)
      : state_(std::move(state)), kernels_(std::move(kernels)) {}
  ~CudaDevice() override {
    // Kernels hold library handles that are destroyed on this GPU.
    (void)state_->makeCurrent();
    kernels_.reset();
  }

  std::string name() const override { return state_->name(); }
  bool isHost() const override { return false; }

  StatusOr<std::unique_ptr<Buffer>> allocate(size_t bytes) override {
    void *data = nullptr;
    if (bytes > 0) {
      PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
      cudaError_t error = cudaMalloc(&data, bytes);
      if (error != cudaSuccess)
        return cudaErrorStatus(error, "cudaMalloc", __FILE__, __LINE__)
            .withContext(detail::concat("allocating ", bytes, " bytes on ",
                                        state_->name()));
    }
    return std::unique_ptr<Buffer>(new CudaBuffer(state_, data, bytes));
  }

  StatusOr<std::unique_ptr<Stream>> createStream() override {
    PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
    cudaStream_t stream = nullptr;
    PARTITION_CUDA_CHECK(
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return std::unique_ptr<Stream>(new CudaStream(state_, stream));
  }

  StatusOr<std::unique_ptr<Event>> createEvent() override {
    PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
    cudaEvent_t event = nullptr;
    PARTITION_CUDA_CHECK(
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return std::unique_ptr<Event>(new CudaEvent(state_, event));
  }

  Status copyToDevice(void *deviceDst, const void *hostSrc, size_t bytes,
                      Stream &stream) override {
    return copyAsync(deviceDst, hostSrc, bytes, cudaMemcpyHostToDevice, stream,
                     "copyToDevice");
  }
  Status copyToHost(void *hostDst, const void *deviceSrc, size_t bytes,
                    Stream &stream) override {
    return copyAsync(hostDst, deviceSrc, bytes, cudaMemcpyDeviceToHost, stream,
                     "copyToHost");
  }
  Status copy(void *dst, const void *src, size_t bytes,
              Stream &stream) override {
    return copyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream, "copy");
  }

  size_t allocatedBytes() const override { return state_->allocatedBytes(); }
  size_t memoryCapacity() const override {
    size_t free = 0, total = 0;
    if (!state_->makeCurrent().isOk() ||
        cudaMemGetInfo(&free, &total) != cudaSuccess)
      return 0;
    return total;
  }
  size_t peakAllocatedBytes() const override {
    return state_->peakAllocatedBytes();
  }
  Kernels &kernels() override { return *kernels_; }

  const std::shared_ptr<DeviceState> &state() const { return state_; }

private:
  Status copyAsync(void *dst, const void *src, size_t bytes,
                   cudaMemcpyKind kind, Stream &stream, const char *what) {
    if (bytes == 0)
      return Status::ok();
    if (!dst || !src)
      return PARTITION_ERROR(InvalidArgument, what, ": null pointer for ",
                             bytes, " bytes");
    PARTITION_ASSIGN_OR_RETURN(CudaStream * cudaStream,
                               asCudaStream(stream, what));
    PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
    PARTITION_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, kind, cudaStream->get()));
    return Status::ok();
  }

  std::shared_ptr<DeviceState> state_;
  std::unique_ptr<Kernels> kernels_;
};

} // namespace

std::shared_ptr<DeviceState> cuda::cudaDeviceState(Device &device) {
  auto *cudaDevice = dynamic_cast<CudaDevice *>(&device);
  return cudaDevice ? cudaDevice->state() : nullptr;
}

int cuda::cudaDeviceCount() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    // No driver, no device, a driver older than the runtime: all "no GPU".
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

StatusOr<std::unique_ptr<Device>> cuda::createCudaDevice(int ordinal) {
  int count = cudaDeviceCount();
  if (ordinal < 0 || ordinal >= count)
    return PARTITION_ERROR(Unavailable, "no CUDA device ", ordinal, " (", count,
                           " usable CUDA device", count == 1 ? "" : "s", ")");
  PARTITION_CUDA_CHECK(cudaSetDevice(ordinal));
  PARTITION_ASSIGN_OR_RETURN(std::shared_ptr<DeviceState> state,
                             DeviceState::create(ordinal));
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels,
                             createCudaKernels(state));
  return std::unique_ptr<Device>(
      new CudaDevice(std::move(state), std::move(kernels)));
}
