//===- CpuDevice.cpp - the host CPU as a device ---------------------------===//
//
// Buffers are 64-byte aligned host memory (a cache line, and the widest
// vector load), streams run work when it is enqueued so synchronization has
// nothing to wait for, events are complete as soon as they are recorded, and
// copies are memcpy.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/cpu/CpuDevice.h"
#include "CpuKernels.h"

#include <cblas.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace partition::runtime;

namespace {

/// Alignment of every host buffer.
constexpr size_t kAlignment = 64;

/// Bytes allocated through one device. Shared with its buffers, so a buffer
/// that outlives its device still updates valid counters.
struct AllocationCounters {
  std::atomic<size_t> current{0};
  std::atomic<size_t> peak{0};

  void add(size_t bytes) {
    size_t now = current.fetch_add(bytes) + bytes;
    size_t seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
  }
  void remove(size_t bytes) { current.fetch_sub(bytes); }
};

/// Aligned host memory, counted in its device's allocated bytes.
class CpuBuffer final : public Buffer {
public:
  CpuBuffer(std::shared_ptr<AllocationCounters> counters, void *data,
            size_t size)
      : counters(std::move(counters)), data_(data), size_(size) {
    this->counters->add(size_);
  }
  ~CpuBuffer() override {
    std::free(data_);
    counters->remove(size_);
  }
  void *data() override { return data_; }
  size_t size() const override { return size_; }

private:
  std::shared_ptr<AllocationCounters> counters;
  void *data_;
  size_t size_;
};

/// Work runs when it is enqueued, so there is never anything to wait for.
class CpuStream final : public Stream {
public:
  Status synchronize() override { return Status::ok(); }
};

/// Every recorded point has already been reached.
class CpuEvent final : public Event {
public:
  Status record(Stream &) override { return Status::ok(); }
  Status waitOn(Stream &) override { return Status::ok(); }
  Status synchronize() override { return Status::ok(); }
};

class CpuDevice final : public Device {
public:
  CpuDevice()
      : counters(std::make_shared<AllocationCounters>()),
        kernels_(cpu::createCpuKernels()) {}

  std::string name() const override { return "cpu"; }
  bool isHost() const override { return true; }

  StatusOr<std::unique_ptr<Buffer>> allocate(size_t bytes) override {
    // aligned_alloc needs a multiple of the alignment; a zero-byte buffer
    // still gets a distinct, valid pointer.
    if (bytes > SIZE_MAX - kAlignment)
      return PARTITION_ERROR(ResourceExhausted, "cannot allocate ", bytes,
                             " bytes of host memory");
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void *data = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
    if (!data)
      return PARTITION_ERROR(ResourceExhausted, "cannot allocate ", bytes,
                             " bytes of host memory (", allocatedBytes(),
                             " bytes allocated so far)");
    return std::unique_ptr<Buffer>(
        std::make_unique<CpuBuffer>(counters, data, bytes));
  }

  StatusOr<std::unique_ptr<Stream>> createStream() override {
    return std::unique_ptr<Stream>(std::make_unique<CpuStream>());
  }
  StatusOr<std::unique_ptr<Event>> createEvent() override {
    return std::unique_ptr<Event>(std::make_unique<CpuEvent>());
  }

  Status copyToDevice(void *deviceDst, const void *hostSrc, size_t bytes,
                      Stream &) override {
    return copyBytes("copyToDevice", deviceDst, hostSrc, bytes);
  }
  Status copyToHost(void *hostDst, const void *deviceSrc, size_t bytes,
                    Stream &) override {
    return copyBytes("copyToHost", hostDst, deviceSrc, bytes);
  }
  Status copy(void *dst, const void *src, size_t bytes, Stream &) override {
    return copyBytes("copy", dst, src, bytes);
  }

  size_t allocatedBytes() const override { return counters->current.load(); }
  size_t peakAllocatedBytes() const override { return counters->peak.load(); }
  size_t memoryCapacity() const override {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? size_t(pages) * size_t(size) : 0;
  }
  Kernels &kernels() override { return *kernels_; }

private:
  /// memmove, since host and "device" memory are one address space and a
  /// caller may pass overlapping ranges.
  static Status copyBytes(const char *what, void *dst, const void *src,
                          size_t bytes) {
    if (bytes == 0)
      return Status::ok();
    if (!dst || !src)
      return PARTITION_ERROR(InvalidArgument, what, " of ", bytes,
                             " bytes with a null ",
                             dst ? "source" : "destination");
    std::memmove(dst, src, bytes);
    return Status::ok();
  }

  std::shared_ptr<AllocationCounters> counters;
  std::unique_ptr<Kernels> kernels_;
};

} // namespace

std::unique_ptr<Device>
partition::runtime::cpu::createCpuDevice(int blasThreads) {
  // OpenBLAS's thread count is process-wide: when ranks are threads each
  // asks for one, so that N ranks do not start N * cores BLAS threads.
  openblas_set_num_threads(blasThreads > 0 ? blasThreads : 1);
  return std::make_unique<CpuDevice>();
}
